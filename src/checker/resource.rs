//! The guarded resource: stale writes that got through.
//!
//! Kleppmann's point about leases: a client can believe it holds a lock after its hold
//! has ended (it was paused, its write was delayed), and write to the resource while
//! another client holds the lock. The lock itself may be perfectly safe (no two holds
//! overlap); the resource is not. A *resource-level violation* is an accepted `write`
//! whose client's hold (the one with the write's token) had ended when the resource
//! applied it, while another client held the lock. Writes the resource rejected (a stale
//! fencing token) are not violations: that is fencing working. These findings are kept
//! apart from the lock-level violations of [`super::safety`].
//!
//! One sort and one sweep per lock: writes in time order against holds in start order,
//! keeping the two latest-ending holds of distinct clients started so far.
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

/// A stale write accepted while another client held the lock.
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
    /// The other client holding the lock at that moment.
    pub holder: Hold,
}

/// Writes the resource saw in the workload and probe phases.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ResourceStats {
    pub writes: u64,
    pub accepted: u64,
    /// Rejected for a stale fencing token.
    pub rejected: u64,
}

/// (client, lock, token): the hold a write claims to belong to.
type HoldKey<'a> = (usize, &'a str, &'a str);

/// Judges `writes` against `holds` (which [`super::safety::sweep`] has sorted by lock
/// and start).
pub fn judge(writes: &[Write], holds: &[Hold]) -> (Vec<ResourceViolation>, ResourceStats) {
    let stats = ResourceStats {
        writes: writes.len() as u64,
        accepted: writes.iter().filter(|w| w.accepted).count() as u64,
        rejected: writes.iter().filter(|w| !w.accepted).count() as u64,
    };
    // A hold may be split in segments by late extensions; all share the token.
    let mut own: BTreeMap<HoldKey, Vec<(u64, u64)>> = BTreeMap::new();
    for h in holds {
        if let Some(tok) = &h.token {
            own.entry((h.client, &h.lock, tok))
                .or_default()
                .push((h.start_us, h.end_us));
        }
    }
    let mut order: Vec<&Write> = writes.iter().filter(|w| w.accepted).collect();
    order.sort_by(|a, b| (&a.lock, a.t_us).cmp(&(&b.lock, b.t_us)));

    let mut out = Vec::new();
    let mut next = 0;
    let mut lock: Option<&str> = None;
    // The latest-ending hold so far, and the latest-ending one of another client.
    let (mut best, mut second): (Option<usize>, Option<usize>) = (None, None);
    for w in order {
        if lock != Some(w.lock.as_str()) {
            lock = Some(&w.lock);
            best = None;
            second = None;
            next = holds.partition_point(|h| h.lock.as_str() < w.lock.as_str());
        }
        while next < holds.len() && holds[next].lock == w.lock && holds[next].start_us <= w.t_us {
            (best, second) = push_top2(holds, best, second, next);
            next += 1;
        }
        let segments = own.get(&(w.client, w.lock.as_str(), w.token.as_str()));
        let live = segments.is_some_and(|s| s.iter().any(|&(a, b)| a <= w.t_us && w.t_us < b));
        if live {
            continue;
        }
        let other = [best, second]
            .into_iter()
            .flatten()
            .find(|&i| holds[i].client != w.client && holds[i].end_us > w.t_us);
        if let Some(i) = other {
            out.push(ResourceViolation {
                lock: w.lock.clone(),
                client: w.client,
                token: w.token.clone(),
                fence: w.fence,
                write_us: w.t_us,
                hold_end_us: segments.and_then(|s| s.iter().map(|&(_, b)| b).filter(|&b| b <= w.t_us).max()),
                holder: holds[i].clone(),
            });
        }
    }
    (out, stats)
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
