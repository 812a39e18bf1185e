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
//! (a stale fencing token) are not violations: that is fencing working. A write names
//! the latest hold of its client on its lock with its token begun by then (the holds of
//! one client on one lock that follow one another with one token are one hold, in
//! segments); a write whose token names no hold begun by then (possible only in an
//! external history) is judged by the stricter rule: accepted while another client held
//! the lock. These findings are kept apart from the lock-level violations of
//! [`super::safety`].
//!
//! [`judge`] reads every hold: one sort and one sweep per lock, writes in time order,
//! keeping the accepted write of the latest-starting hold so far, and (for writes
//! without a hold) the two latest-ending holds of distinct clients started so far. A
//! checker that keeps no holds judges online instead ([`online`]), exactly as far as a
//! write names its client's latest hold of the lock, which every write of lockstorm's
//! own clients does.
//!
//! The fencing tokens themselves are checked too: a hold that starts after another hold
//! of the same lock has ended must carry a larger token ([`FenceRegression`] otherwise).
//! This tests the claim of `algorithm/fencing.rs` directly, independent of whether a
//! stale write happened to arrive at the wrong moment.

use super::Hold;
use crate::history::compact::{LockId, Locks, Token};
use crate::history::ResourceWrite as Write;
use serde::Serialize;
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap};

mod online;
pub use online::Online;

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

/// An accepted write: what [`judge`] needs of it.
struct Accepted {
    t_us: u64,
    fence: Option<u64>,
    token: Token,
    client: usize,
    lock: LockId,
}

/// The writes as they arrive: counted, and the accepted ones kept to judge at the end
/// from every hold ([`judge`]), or judged as they come ([`Writes::online`]).
#[derive(Default)]
pub struct Writes {
    stats: ResourceStats,
    accepted: Vec<Accepted>,
    online: Option<Online>,
}

impl Writes {
    /// Writes judged online ([`online`]), for a checker that keeps no holds.
    pub fn online() -> Self {
        Writes {
            online: Some(Online::default()),
            ..Writes::default()
        }
    }

    pub fn observe(&mut self, w: &Write, lock: LockId) {
        self.stats.writes += 1;
        if !w.accepted {
            self.stats.rejected += 1;
            return;
        }
        self.stats.accepted += 1;
        let accepted = Accepted {
            t_us: w.t_us,
            fence: w.fence,
            token: w.token.clone(),
            client: w.client,
            lock,
        };
        match &mut self.online {
            Some(online) => online.accepted(accepted),
            None => self.accepted.push(accepted),
        }
    }

    /// Before an event at `now_us` (the online judge judges the writes before it).
    pub fn advance(&mut self, now_us: u64, holding: &BTreeMap<(usize, LockId), Hold>, locks: &Locks) {
        if let Some(online) = &mut self.online {
            online.advance(now_us, holding, locks);
        }
    }

    pub fn hold_started(&mut self, lock: LockId, hold: &Hold) {
        if let Some(online) = &mut self.online {
            online.hold_started(lock, hold);
        }
    }

    pub fn hold_ended(&mut self, lock: LockId, hold: &Hold) {
        if let Some(online) = &mut self.online {
            online.hold_ended(lock, hold);
        }
    }

    /// Judges the writes, once every hold has ended: online, or else from `holds`.
    /// `None`: the online judge met a write it cannot judge ([`Online::gave_up`]), and
    /// only [`judge`] over every hold can.
    pub fn finish(self, holds: &[Hold], locks: &Locks) -> Option<(Vec<ResourceViolation>, ResourceStats)> {
        match self.online {
            None => Some(judge(self.stats, self.accepted, holds, locks)),
            Some(online) => {
                let mut stats = self.stats;
                let (found, late) = online.finish(locks)?;
                stats.late = late;
                Some((found, stats))
            }
        }
    }
}

/// The holds with a token, ordered by (lock, client, token), then as `holds` is; and
/// the hold each one is a segment of.
struct Owners<'h> {
    holds: &'h [Hold],
    order: Vec<u32>,
    /// Per hold, the first segment of the hold it is part of: the holds of one client
    /// on one lock, one after another with one token, are one hold in segments (split by
    /// late extensions or beliefs; or the library took the same token again).
    first: Vec<u32>,
}

impl<'h> Owners<'h> {
    fn new(holds: &'h [Hold]) -> Self {
        let index = |i: usize| u32::try_from(i).expect("fewer than 2^32 holds");
        let mut order: Vec<u32> = (0..holds.len())
            .filter(|&i| holds[i].token.is_some())
            .map(index)
            .collect();
        order.sort_unstable_by(|&a, &b| {
            let (x, y) = (&holds[a as usize], &holds[b as usize]);
            (&x.lock, x.client, &x.token, a).cmp(&(&y.lock, y.client, &y.token, b))
        });
        // Each client's holds of each lock in turn, as they began.
        let mut turns: Vec<u32> = (0..holds.len()).map(index).collect();
        turns.sort_unstable_by(|&a, &b| {
            let (x, y) = (&holds[a as usize], &holds[b as usize]);
            (&x.lock, x.client, a).cmp(&(&y.lock, y.client, b))
        });
        let mut first: Vec<u32> = (0..holds.len()).map(index).collect();
        for pair in turns.windows(2) {
            let (a, b) = (&holds[pair[0] as usize], &holds[pair[1] as usize]);
            if a.lock == b.lock && a.client == b.client && a.token.is_some() && a.token == b.token {
                first[pair[1] as usize] = first[pair[0] as usize];
            }
        }
        Owners { holds, order, first }
    }

    /// The segments (hold indices, ascending) of the hold a write of `client` on `lock`
    /// at `t_us` names with `token`: the latest begun by then with that token (empty if
    /// none had).
    fn of(&self, client: usize, lock: &str, token: &str, t_us: u64) -> &[u32] {
        let key = |i: &u32| {
            let h = &self.holds[*i as usize];
            (h.lock.as_str(), h.client, h.token.as_deref().unwrap_or_default())
        };
        let want = (lock, client, token);
        let start = self.order.partition_point(|i| key(i) < want);
        let len = self.order[start..].partition_point(|i| key(i).cmp(&want) == Ordering::Equal);
        let all = &self.order[start..start + len];
        let begun = all.partition_point(|&i| self.holds[i as usize].start_us <= t_us);
        let Some(latest) = begun.checked_sub(1) else {
            return &[];
        };
        let hold = self.first[all[latest] as usize];
        let from = all.partition_point(|&i| self.first[i as usize] < hold);
        let to = all.partition_point(|&i| self.first[i as usize] <= hold);
        &all[from..to]
    }
}

/// Judges the accepted writes against `holds` (which [`super::safety::sweep`] has
/// sorted by lock and start).
fn judge(
    mut stats: ResourceStats,
    mut order: Vec<Accepted>,
    holds: &[Hold],
    locks: &Locks,
) -> (Vec<ResourceViolation>, ResourceStats) {
    if order.is_empty() {
        // Nothing to judge: skip indexing every hold (millions in a long run).
        return (Vec::new(), stats);
    }
    let own = Owners::new(holds);
    // By lock, then time; stable, so writes at one time keep their order.
    order.sort_by(|a, b| (locks.name(a.lock), a.t_us).cmp(&(locks.name(b.lock), b.t_us)));

    let mut out = Vec::new();
    let mut next = 0;
    let mut lock: Option<LockId> = None;
    // The latest-ending hold so far, and the latest-ending one of another client.
    let (mut best, mut second): (Option<usize>, Option<usize>) = (None, None);
    // The accepted write of the latest-starting hold so far: (hold index, when).
    let mut newest: Option<(usize, u64)> = None;
    for w in &order {
        let name = locks.name(w.lock);
        if lock != Some(w.lock) {
            lock = Some(w.lock);
            best = None;
            second = None;
            newest = None;
            next = holds.partition_point(|h| h.lock < *name);
        }
        while next < holds.len() && holds[next].lock == *name && holds[next].start_us <= w.t_us {
            (best, second) = push_top2(holds, best, second, next);
            next += 1;
        }
        let mine = own.of(w.client, name, &w.token, w.t_us);
        if mine.is_empty() {
            // No hold had this token by then: stale if another client held the lock.
            let other = [best, second]
                .into_iter()
                .flatten()
                .find(|&i| holds[i].client != w.client && holds[i].end_us > w.t_us);
            match other {
                Some(i) => out.push(violation(w, locks, None, &holds[i], None)),
                None => stats.late += 1,
            }
            continue;
        }
        let segments = || mine.iter().map(|&i| &holds[i as usize]);
        let live = segments().any(|h| h.start_us <= w.t_us && w.t_us < h.end_us);
        let first = mine[0] as usize;
        let start = holds[first].start_us;
        if !live {
            match newest {
                Some((i, at)) if holds[i].start_us > start && holds[i].client != w.client => {
                    let ended = segments().map(|h| h.end_us).filter(|&b| b <= w.t_us).max();
                    out.push(violation(w, locks, ended, &holds[i], Some(at)));
                }
                _ => stats.late += 1,
            }
        }
        if newest.is_none_or(|(i, _)| holds[i].start_us <= start) {
            newest = Some((first, w.t_us));
        }
    }
    (out, stats)
}

fn violation(
    w: &Accepted,
    locks: &Locks,
    hold_end_us: Option<u64>,
    holder: &Hold,
    overwritten_us: Option<u64>,
) -> ResourceViolation {
    ResourceViolation {
        lock: locks.name(w.lock).to_string(),
        client: w.client,
        token: w.token.to_string(),
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
/// ended before they started; `holds` sorted by lock and start. The checker does the
/// same walk online ([`super::sweep`]); this batch one is its reference.
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
                        lock: lock.to_string(),
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
