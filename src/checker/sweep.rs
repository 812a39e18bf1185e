//! The safety sweep, online: the holds of each lock are swept as the history goes, in
//! the order [`super::safety::sweep`] sorts them into, and retired once swept.
//!
//! The batch sweep sorts every hold by (lock, start, client, line) and walks each
//! lock's holds keeping the latest-ending earlier writer and reader. Holds reach the
//! checker as they end, not in that order, so each lock has a *lane*: the holds still
//! open (their keys only: their end is not known yet) and the holds ended but not yet
//! swept. An ended hold is swept once no hold can come before it any more: its key is
//! below every open hold's of the lock, and its start lies before the current time
//! (every hold that starts later starts at that time or after). Once swept, a hold is
//! kept only if it is the latest-ending writer or reader so far, or a fenced hold still
//! running at the latest start swept (the fencing-token check of
//! [`super::resource::fence_regressions`] is the same walk). So the sweep keeps what is
//! open, plus the holds that ended while an earlier one stayed open.
//!
//! The violations come out per lock in the batch order; [`Sweep::finish`] lists the
//! locks in order of name, as the batch sort does, and names the faults of each
//! violation then, when every fault's span is known.

use super::resource::FenceRegression;
use super::safety::{violation, Violation};
use super::{FaultSpan, Hold};
use crate::algorithm::Mode;
use crate::history::compact::{LockId, Locks};
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeSet, BinaryHeap};

/// A hold's place in the batch sweep's order within its lock.
type Key = (u64, usize, usize);

fn key(h: &Hold) -> Key {
    (h.start_us, h.client, h.ok_line)
}

/// An ended hold waiting for its turn, ordered by its key.
struct Waiting(Hold);

impl PartialEq for Waiting {
    fn eq(&self, other: &Self) -> bool {
        key(&self.0) == key(&other.0)
    }
}
impl Eq for Waiting {}
impl PartialOrd for Waiting {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Waiting {
    fn cmp(&self, other: &Self) -> Ordering {
        key(&self.0).cmp(&key(&other.0))
    }
}

/// A fenced hold swept and maybe still running, ordered by (end, sweep order) as the
/// batch check's heap orders them.
struct Running {
    end_us: u64,
    seq: u64,
    hold: Hold,
}

impl PartialEq for Running {
    fn eq(&self, other: &Self) -> bool {
        (self.end_us, self.seq) == (other.end_us, other.seq)
    }
}
impl Eq for Running {}
impl PartialOrd for Running {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Running {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.end_us, self.seq).cmp(&(other.end_us, other.seq))
    }
}

/// One lock's sweep.
#[derive(Default)]
struct Lane {
    /// The keys of the lock's holds still open.
    open: BTreeSet<Key>,
    /// Ended holds not yet swept.
    waiting: BinaryHeap<Reverse<Waiting>>,
    /// The latest-ending writer (or exclusive) hold swept so far, and reader.
    writer: Option<Hold>,
    reader: Option<Hold>,
    /// Conflicting pairs found: (earlier, later), in the batch order.
    found: Vec<(Hold, Hold)>,
    /// Fenced holds swept, by end; the ended one with the largest fence.
    running: BinaryHeap<Reverse<Running>>,
    fence_top: Option<Hold>,
    swept: u64,
    regressions: Vec<(Hold, Hold)>,
}

impl Lane {
    /// Sweeps the waiting holds that no other can come before any more, at `now_us`.
    fn drain(&mut self, now_us: u64) {
        while let Some(Reverse(Waiting(h))) = self.waiting.peek() {
            let first_open = self.open.first();
            if h.start_us >= now_us || first_open.is_some_and(|k| *k < key(h)) {
                break;
            }
            let Some(Reverse(Waiting(h))) = self.waiting.pop() else {
                break;
            };
            self.sweep(h);
        }
    }

    /// The batch sweep's step for the next hold in order.
    fn sweep(&mut self, h: Hold) {
        self.fences(&h);
        let candidates = [
            self.writer.as_ref(),
            if h.mode != Mode::Read {
                self.reader.as_ref()
            } else {
                None
            },
        ];
        for q in candidates.into_iter().flatten() {
            if h.start_us < q.end_us && h.start_us < h.end_us {
                self.found.push((q.clone(), h.clone()));
            }
        }
        let slot = if h.mode == Mode::Read {
            &mut self.reader
        } else {
            &mut self.writer
        };
        if slot.as_ref().is_none_or(|p| h.end_us > p.end_us) {
            *slot = Some(h);
        }
    }

    /// The fencing-token check's step for the next hold in order.
    fn fences(&mut self, h: &Hold) {
        while let Some(Reverse(r)) = self.running.peek() {
            if r.end_us > h.start_us {
                break;
            }
            let Some(Reverse(r)) = self.running.pop() else {
                break;
            };
            if self.fence_top.as_ref().is_none_or(|t| r.hold.fence > t.fence) {
                self.fence_top = Some(r.hold);
            }
        }
        if let (Some(f), Some(t)) = (h.fence, &self.fence_top) {
            if t.fence.is_some_and(|g| f <= g) {
                self.regressions.push((t.clone(), h.clone()));
            }
        }
        if h.fence.is_some() {
            self.running.push(Reverse(Running {
                end_us: h.end_us,
                seq: self.swept,
                hold: h.clone(),
            }));
        }
        self.swept += 1;
    }
}

/// The online safety sweep of every lock.
#[derive(Default)]
pub(super) struct Sweep {
    /// Boxed: a history of many locks grows this table, and a lane is a few hundred
    /// bytes that a doubling table would hold twice.
    #[allow(clippy::vec_box)]
    lanes: Vec<Box<Lane>>,
}

/// Past this many locks, a lane gives back the memory of its open set and its waiting
/// heap whenever they empty (750,000 locks cost 1.3 GB with them kept); below it they
/// are kept, as a run's few locks reuse them for every hold.
const MANY_LOCKS: usize = 4_096;

impl Sweep {
    fn lane(&mut self, lock: LockId) -> &mut Lane {
        let i = lock as usize;
        if self.lanes.len() <= i {
            self.lanes.resize_with(i + 1, Box::default);
        }
        &mut self.lanes[i]
    }

    /// A hold of `lock` began (it is open: its end may still move).
    pub fn opened(&mut self, lock: LockId, hold: &Hold) {
        self.lane(lock).open.insert(key(hold));
    }

    /// An open hold of `lock` ended as `hold` says, at or before `now_us`.
    pub fn ended(&mut self, lock: LockId, hold: Hold, now_us: u64) {
        let many = self.lanes.len() > MANY_LOCKS;
        let lane = self.lane(lock);
        lane.open.remove(&key(&hold));
        lane.waiting.push(Reverse(Waiting(hold)));
        lane.drain(now_us);
        if many && lane.open.is_empty() && lane.waiting.is_empty() {
            lane.open = BTreeSet::new();
            lane.waiting = BinaryHeap::new();
        }
    }

    /// Sweeps what is left (every hold has ended) and names the findings: violations
    /// and fencing-token regressions, locks in order of name.
    pub fn finish(mut self, locks: &Locks, faults: &[FaultSpan]) -> (Vec<Violation>, Vec<FenceRegression>) {
        let (mut violations, mut regressions) = (Vec::new(), Vec::new());
        for (id, name) in locks.by_name() {
            let Some(lane) = self.lanes.get_mut(id as usize) else {
                continue;
            };
            debug_assert!(lane.open.is_empty(), "every hold has ended");
            lane.open.clear();
            lane.drain(u64::MAX);
            while let Some(Reverse(Waiting(h))) = lane.waiting.pop() {
                // Only a hold starting at `u64::MAX` is left: none can.
                lane.sweep(h);
            }
            violations.extend(lane.found.iter().map(|(q, h)| violation(q, h, faults)));
            regressions.extend(
                lane.regressions
                    .drain(..)
                    .map(|(earlier, later)| FenceRegression {
                        lock: name.to_string(),
                        earlier,
                        later,
                    }),
            );
        }
        (violations, regressions)
    }
}
