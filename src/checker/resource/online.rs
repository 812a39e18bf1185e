//! The resource judge online: what [`super::judge`] finds, from what is still open.
//!
//! A write is judged once time has passed it (every hold that can contain it has begun,
//! and whether it outlives the write is settled), against its client's latest hold of
//! the lock, the one whose token it names. Per client and lock only that hold is kept
//! (its first segment, for the report, and where its segments begin and end), and per
//! lock the accepted write of the latest-starting hold: memory follows the clients and
//! locks, not the length of the run.
//!
//! That covers every write of lockstorm's own clients, which write under the hold they
//! believe in. A write naming any other token (an earlier hold's, another client's, one
//! no hold has yet, none at all: possible in an external history) cannot be judged from
//! what is kept, so the judge gives up ([`Online::gave_up`]) and the caller judges the
//! history again from every hold with the batch judge, the reference this one is
//! compared with in the tests.

use super::{violation, Accepted, ResourceViolation};
use crate::checker::Hold;
use crate::history::compact::{LockId, Locks, Token};
use smallvec::SmallVec;
use std::collections::BTreeMap;

/// The latest hold of a client on a lock, with every segment it has had (a hold may be
/// split by late extensions or beliefs, and a library may take the same token again; the
/// batch judge treats all the segments with one token as one hold, and so does this).
struct Latest {
    token: Option<Token>,
    /// The first segment, whose start orders the writes and which a violation names.
    first: Hold,
    /// The segments that may still contain a write to come: the open one, and the one
    /// begun last (segments follow one another, so an earlier one ended before it).
    segments: SmallVec<[Segment; 2]>,
    /// The latest end of the segments no longer kept.
    before_us: Option<u64>,
}

struct Segment {
    /// The history line that began it (one hold per line).
    line: usize,
    start_us: u64,
    /// `None` while it is open: its end is then the open hold's, as it stands.
    end_us: Option<u64>,
}

/// The accepted write of the latest-starting hold of a lock so far.
struct Newest {
    /// That hold's first segment.
    hold: Hold,
    client: usize,
    write_us: u64,
}

/// A violation whose `holder` (the first segment of the overwritten write's hold) has
/// not ended yet: its end is not final.
struct Pending {
    violation: ResourceViolation,
    lock: LockId,
    /// The write's number, in the order of the history.
    seq: u64,
}

#[derive(Default)]
pub struct Online {
    latest: BTreeMap<(usize, LockId), Latest>,
    /// The latest holds replaced at the latest time (by another token of their client):
    /// a write of that time may still name one.
    replaced: Vec<((usize, LockId), Latest)>,
    /// The latest time seen.
    now_us: u64,
    newest: BTreeMap<LockId, Newest>,
    /// Accepted writes at the latest time seen, judged once time moves on.
    due: Vec<(u64, Accepted)>,
    pending: Vec<Pending>,
    /// With its lock and write's number: the batch judge's order is the lock's name,
    /// then the history's (its writes by time, stably).
    found: Vec<(LockId, u64, ResourceViolation)>,
    /// Accepted writes seen so far.
    writes: u64,
    late: u64,
    gave_up: bool,
}

impl Online {
    /// Before an event at `now_us`: judges the writes of earlier times. `holding` is the
    /// checker's open holds (their ends as they stand).
    pub(super) fn advance(&mut self, now_us: u64, holding: &BTreeMap<(usize, LockId), Hold>, locks: &Locks) {
        if now_us > self.now_us && !self.gave_up {
            self.judge_due(holding, locks);
            self.replaced.clear();
            self.now_us = now_us;
        }
    }

    pub(super) fn accepted(&mut self, w: Accepted) {
        if !self.gave_up {
            self.due.push((self.writes, w));
        }
        self.writes += 1;
    }

    pub(super) fn hold_started(&mut self, lock: LockId, hold: &Hold) {
        if self.gave_up {
            return;
        }
        let segment = Segment {
            line: hold.ok_line,
            start_us: hold.start_us,
            end_us: None,
        };
        let key = (hold.client, lock);
        match self.latest.get_mut(&key) {
            // Another segment of the same hold (or the same token taken again). The one
            // before it may still be open: a late extension begins the new segment first.
            Some(l) if l.token == hold.token => {
                let before = &mut l.before_us;
                l.segments.retain(|s| match s.end_us {
                    Some(end) => {
                        *before = (*before).max(Some(end));
                        false
                    }
                    None => true,
                });
                l.segments.push(segment);
            }
            _ => {
                let latest = Latest {
                    token: hold.token.clone(),
                    first: hold.clone(),
                    segments: smallvec::smallvec![segment],
                    before_us: None,
                };
                if let Some(old) = self.latest.insert(key, latest) {
                    self.replaced.push((key, old));
                }
            }
        }
    }

    /// `hold` is final: where it is a segment or a first segment kept here, its end now
    /// is too.
    pub(super) fn hold_ended(&mut self, lock: LockId, hold: &Hold) {
        if self.gave_up {
            return;
        }
        if let Some(l) = self.latest.get_mut(&(hold.client, lock)) {
            if let Some(s) = l.segments.iter_mut().find(|s| s.line == hold.ok_line) {
                s.end_us = Some(hold.end_us);
            }
            if l.first.ok_line == hold.ok_line {
                l.first = hold.clone();
            }
        }
        if let Some(n) = self.newest.get_mut(&lock) {
            if n.hold.ok_line == hold.ok_line {
                n.hold = hold.clone();
            }
        }
        let mut i = 0;
        while i < self.pending.len() {
            if self.pending[i].lock == lock && self.pending[i].violation.holder.ok_line == hold.ok_line {
                let Pending {
                    mut violation,
                    lock,
                    seq,
                } = self.pending.swap_remove(i);
                violation.holder = hold.clone();
                self.found.push((lock, seq, violation));
            } else {
                i += 1;
            }
        }
    }

    /// The writes at the latest time, judged as [`super::judge`] does (the same rules,
    /// from the latest hold instead of every hold).
    fn judge_due(&mut self, holding: &BTreeMap<(usize, LockId), Hold>, locks: &Locks) {
        for (seq, w) in std::mem::take(&mut self.due) {
            let key = (w.client, w.lock);
            // The latest hold of the writer with the write's token begun by then: its
            // latest hold, or one that another replaced at the write's very time.
            let names = |l: &&Latest| l.token.as_ref() == Some(&w.token);
            let replaced = self
                .replaced
                .iter()
                .rev()
                .filter(|(k, _)| *k == key)
                .map(|(_, l)| l);
            let Some(mine) = self.latest.get(&key).into_iter().chain(replaced).find(names) else {
                self.give_up();
                return;
            };
            // Each kept segment began at or before the write; its end is final, or is the
            // open hold's, which can no longer move to the write's time or before it.
            let open = holding.get(&key);
            let end = |s: &Segment| match s.end_us {
                Some(end) => end,
                None => {
                    open.filter(|h| h.ok_line == s.line)
                        .expect("an open segment is held")
                        .end_us
                }
            };
            let live = mine
                .segments
                .iter()
                .any(|s| s.start_us <= w.t_us && w.t_us < end(s));
            let start = mine.first.start_us;
            if !live {
                match self.newest.get(&w.lock) {
                    Some(n) if n.hold.start_us > start && n.client != w.client => {
                        let ended = mine
                            .segments
                            .iter()
                            .map(end)
                            .chain(mine.before_us)
                            .filter(|&b| b <= w.t_us)
                            .max();
                        let violation = violation(&w, locks, ended, &n.hold, Some(n.write_us));
                        if holding
                            .get(&(n.client, w.lock))
                            .is_some_and(|h| h.ok_line == n.hold.ok_line)
                        {
                            self.pending.push(Pending {
                                violation,
                                lock: w.lock,
                                seq,
                            });
                        } else {
                            self.found.push((w.lock, seq, violation));
                        }
                    }
                    _ => self.late += 1,
                }
            }
            if self.newest.get(&w.lock).is_none_or(|n| n.hold.start_us <= start) {
                let newest = Newest {
                    hold: mine.first.clone(),
                    client: w.client,
                    write_us: w.t_us,
                };
                self.newest.insert(w.lock, newest);
            }
        }
    }

    fn give_up(&mut self) {
        self.gave_up = true;
        self.due = Vec::new();
        self.pending = Vec::new();
        self.found = Vec::new();
        self.latest = BTreeMap::new();
        self.replaced = Vec::new();
        self.newest = BTreeMap::new();
    }

    /// A write named a hold this judge does not keep: only the batch judge, from every
    /// hold, can judge this history.
    pub fn gave_up(&self) -> bool {
        self.gave_up
    }

    /// After the last event, once every hold still open has ended: the violations in the
    /// batch judge's order (by lock name, then time) and the late writes; `None` if it
    /// gave up.
    pub(super) fn finish(mut self, locks: &Locks) -> Option<(Vec<ResourceViolation>, u64)> {
        // Every hold has ended: none is open any more.
        self.judge_due(&BTreeMap::new(), locks);
        if self.gave_up {
            return None;
        }
        assert!(
            self.pending.is_empty(),
            "every hold has ended, so every holder is final"
        );
        self.found
            .sort_by(|a, b| (locks.name(a.0), a.1).cmp(&(locks.name(b.0), b.1)));
        Some((self.found.into_iter().map(|(_, _, v)| v).collect(), self.late))
    }
}
