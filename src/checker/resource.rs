//! The guarded resource: stale writes that got through.
//!
//! Kleppmann's point about leases: a client can believe it holds a lock after its hold
//! has ended (it was paused, its write was delayed), and write to the resource after
//! another client took the lock and wrote. The lock itself may be perfectly safe (no two
//! holds overlap); the resource is not. The resource is modelled as storage the holders
//! write to (no reads), so what can go wrong is the order writes take effect in: a
//! *resource-level violation* is an accepted `write` that landed after its own hold had
//! ended and after the resource had already accepted a write of another client's later
//! hold (a later start), so the stale value overwrote a newer one. A late write that
//! lands before any later holder has written takes effect in hold order, as if its hold
//! had lasted a little longer: it is counted (`late`), not judged (fencing tokens do not
//! claim more, and a write-only resource cannot observe it; a read-modify-write resource
//! could, as a lost update, which lockstorm does not model). Writes the resource rejected
//! (a stale fencing token) are not violations: that is fencing working. A write whose
//! token names no hold at all (possible only in an external history) is judged by the
//! stricter rule: accepted while another client held the lock. These findings are kept
//! apart from the lock-level violations of [`super::safety`].
//!
//! One sort and one sweep per lock: writes in time order, keeping the accepted write of
//! the latest-starting hold so far, and (for writes without a hold) the two
//! latest-ending holds of distinct clients started so far.
//!
//! The fencing tokens themselves are checked too: a hold that starts after another hold
//! of the same lock has ended must carry a larger token ([`FenceRegression`] otherwise).
//! This tests the claim of `algorithm/fencing.rs` directly, independent of whether a
//! stale write happened to arrive at the wrong moment.

use super::Hold;
use crate::history::ResourceWrite as Write;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

/// A stale write that overwrote a newer one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResourceViolation {
    pub lock: String,
    pub client: usize,
    pub token: String,
    pub fence: Option<u64>,
    /// When the resource accepted the write.
    pub write_us: u64,
    /// When the writer's hold had ended (`None`: no hold with that token at all).
    pub hold_end_us: Option<u64>,
    /// The other client's later hold, whose write this one overwrote (for a write with
    /// no hold: the other client's hold running when it landed).
    pub holder: Hold,
    /// When the resource had accepted the overwritten write of `holder` (`None` for a
    /// write with no hold, judged by the stricter rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub overwritten_us: Option<u64>,
}

/// Writes the resource saw in the workload and probe phases.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ResourceStats {
    pub writes: u64,
    pub accepted: u64,
    /// Rejected for a stale fencing token.
    pub rejected: u64,
    /// Accepted after the writer's hold had ended, but before any later holder wrote:
    /// late, in hold order, no violation.
    pub late: u64,
}

/// (client, lock, token): the hold a write claims to belong to.
type HoldKey<'a> = (usize, &'a str, &'a str);

/// A hold's segments (a hold may be split by late extensions; all share the token) and
/// the index of its first.
struct Own {
    segments: Vec<(u64, u64)>,
    first: usize,
}

/// Judges `writes` against `holds` (which [`super::safety::sweep`] has sorted by lock
/// and start).
pub fn judge(writes: &[Write], holds: &[Hold]) -> (Vec<ResourceViolation>, ResourceStats) {
    let mut stats = ResourceStats {
        writes: writes.len() as u64,
        accepted: writes.iter().filter(|w| w.accepted).count() as u64,
        rejected: writes.iter().filter(|w| !w.accepted).count() as u64,
        late: 0,
    };
    let mut order: Vec<&Write> = writes.iter().filter(|w| w.accepted).collect();
    if order.is_empty() {
        // Nothing to judge: skip indexing every hold (millions in a long run).
        return (Vec::new(), stats);
    }
    let mut own: BTreeMap<HoldKey, Own> = BTreeMap::new();
    for (i, h) in holds.iter().enumerate() {
        if let Some(tok) = &h.token {
            own.entry((h.client, &h.lock, tok))
                .or_insert(Own {
                    segments: Vec::new(),
                    first: i,
                })
                .segments
                .push((h.start_us, h.end_us));
        }
    }
    order.sort_by(|a, b| (&a.lock, a.t_us).cmp(&(&b.lock, b.t_us)));

    let mut out = Vec::new();
    let mut next = 0;
    let mut lock: Option<&str> = None;
    // The latest-ending hold so far, and the latest-ending one of another client.
    let (mut best, mut second): (Option<usize>, Option<usize>) = (None, None);
    // The accepted write of the latest-starting hold so far: (hold index, when).
    let mut newest: Option<(usize, u64)> = None;
    for w in order {
        if lock != Some(w.lock.as_str()) {
            lock = Some(&w.lock);
            best = None;
            second = None;
            newest = None;
            next = holds.partition_point(|h| h.lock.as_str() < w.lock.as_str());
        }
        while next < holds.len() && holds[next].lock == w.lock && holds[next].start_us <= w.t_us {
            (best, second) = push_top2(holds, best, second, next);
            next += 1;
        }
        let Some(mine) = own.get(&(w.client, w.lock.as_str(), w.token.as_str())) else {
            // No hold has this token: stale if another client held the lock.
            let other = [best, second]
                .into_iter()
                .flatten()
                .find(|&i| holds[i].client != w.client && holds[i].end_us > w.t_us);
            match other {
                Some(i) => out.push(violation(w, None, &holds[i], None)),
                None => stats.late += 1,
            }
            continue;
        };
        let live = mine.segments.iter().any(|&(a, b)| a <= w.t_us && w.t_us < b);
        let start = holds[mine.first].start_us;
        if !live {
            match newest {
                Some((i, at)) if holds[i].start_us > start && holds[i].client != w.client => {
                    let ended = mine
                        .segments
                        .iter()
                        .map(|&(_, b)| b)
                        .filter(|&b| b <= w.t_us)
                        .max();
                    out.push(violation(w, ended, &holds[i], Some(at)));
                }
                _ => stats.late += 1,
            }
        }
        if newest.is_none_or(|(i, _)| holds[i].start_us <= start) {
            newest = Some((mine.first, w.t_us));
        }
    }
    (out, stats)
}

fn violation(
    w: &Write,
    hold_end_us: Option<u64>,
    holder: &Hold,
    overwritten_us: Option<u64>,
) -> ResourceViolation {
    ResourceViolation {
        lock: w.lock.clone(),
        client: w.client,
        token: w.token.clone(),
        fence: w.fence,
        write_us: w.t_us,
        hold_end_us,
        holder: holder.clone(),
        overwritten_us,
    }
}

/// Keeps the latest-ending hold and the latest-ending hold of a different client.
fn push_top2(
    holds: &[Hold],
    best: Option<usize>,
    second: Option<usize>,
    i: usize,
) -> (Option<usize>, Option<usize>) {
    let end = |j: Option<usize>| j.map_or(0, |j| holds[j].end_us);
    let h = &holds[i];
    match best {
        None => (Some(i), second),
        Some(b) if holds[b].client == h.client => (if h.end_us > end(best) { Some(i) } else { best }, second),
        Some(_) if h.end_us > end(best) => (Some(i), best),
        Some(_) => {
            let replace = second.is_none_or(|s| h.end_us > holds[s].end_us);
            (best, if replace { Some(i) } else { second })
        }
    }
}

/// A hold whose fencing token is not above that of an earlier, finished hold.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FenceRegression {
    pub lock: String,
    pub earlier: Hold,
    pub later: Hold,
}

/// Finds holds with a fencing token at or below one of a hold of the same lock that had
/// ended before they started; `holds` sorted by lock and start.
pub fn fence_regressions(holds: &[Hold]) -> Vec<FenceRegression> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < holds.len() {
        let lock = &holds[i].lock;
        let end = i + holds[i..].partition_point(|h| &h.lock == lock);
        // Holds started so far, by end time; and the ended one with the largest token.
        let mut running: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
        let mut top: Option<usize> = None;
        for j in i..end {
            let h = &holds[j];
            while let Some(&Reverse((e, k))) = running.peek() {
                if e > h.start_us {
                    break;
                }
                running.pop();
                if top.is_none_or(|t| holds[k].fence > holds[t].fence) {
                    top = Some(k);
                }
            }
            if let (Some(f), Some(t)) = (h.fence, top) {
                if holds[t].fence.is_some_and(|g| f <= g) {
                    out.push(FenceRegression {
                        lock: lock.clone(),
                        earlier: holds[t].clone(),
                        later: h.clone(),
                    });
                }
            }
            if h.fence.is_some() {
                running.push(Reverse((h.end_us, j)));
            }
        }
        i = end;
    }
    out
}
