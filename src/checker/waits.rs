//! Starvation: how long clients wait for a lock, per mode, and writers starved by readers.
//!
//! A wait runs from a client's first acquire invocation for a (lock, mode) to the
//! acquisition that ends it; failed acquisitions in between (the client retries the same
//! lock and mode) do not end it. Waits still open when the history ends count up to the
//! end of their last failed attempt (the client stops wanting at the heal). Per mode:
//! p50, p99 and max, from the wait lengths counted per distinct value ([`Counts`]).
//!
//! The starvation finding (a liveness finding): a writer waited longer than the
//! history's `writer_wait_bound_us` while readers kept the lock busy, i.e. read holds of
//! that lock covered at least half of the wait.
//!
//! It is judged online, per lock, from the read holds as they end: their union is kept
//! as disjoint intervals. A writer's long wait that ends is judged at once, unless a
//! read hold that began before its end is still open (its end may still move): then it
//! waits for those to end. An interval of the union is forgotten once it ends before
//! every wait that may still be judged against it began: the writers' waits still open
//! or waiting on that lock, and any later wait (which begins now or later). So the
//! memory is the read holds open and the union over the open writers' waits.

use super::stats::{Counts, WaitStats};
use super::{Hold, LivenessFinding};
use crate::algorithm::Mode;
use crate::history::compact::{LockId, Locks};
use std::collections::{BTreeMap, BTreeSet};

/// How many intervals beyond twice those kept last time make the union forget again.
/// The tests forget at every chance, so that forgetting too much shows.
const FORGET_SLACK: usize = if cfg!(test) { 0 } else { 8 };

/// A writer's wait longer than the bound, to judge against the read holds of its lock.
#[derive(Clone, Debug)]
pub(super) struct LongWait {
    pub client: usize,
    pub lock: LockId,
    pub since_us: u64,
    pub until_us: u64,
    pub acquired: bool,
}

/// A read hold's place among its lock's: (start, client, line), unique per hold.
type Key = (u64, usize, usize);

fn key(h: &Hold) -> Key {
    (h.start_us, h.client, h.ok_line)
}

/// One lock's read holds, as far as a writer's wait may still be judged against them.
#[derive(Default)]
struct Reads {
    /// The read holds still open.
    open: BTreeSet<Key>,
    /// The union of the ended read holds (of positive length) not yet forgotten:
    /// disjoint intervals, start to end.
    busy: BTreeMap<u64, u64>,
    /// Long waits that ended while a read hold begun before their end was open, with
    /// their number in the order the waits ended.
    waiting: Vec<(u64, LongWait)>,
    /// How many intervals the last forgetting kept: the next one comes when there are
    /// twice as many (so it costs a constant per read hold).
    kept: usize,
}

impl Reads {
    /// Whether `w` can be judged: no read hold that began before its end is open.
    fn ready(&self, w: &LongWait) -> bool {
        self.open.first().is_none_or(|k| k.0 >= w.until_us)
    }

    /// Adds [start, end) to the union.
    fn add(&mut self, mut start: u64, mut end: u64) {
        if let Some((&s, &e)) = self.busy.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
                self.busy.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.busy.range(start..).next() {
            if s > end {
                break;
            }
            end = end.max(e);
            self.busy.remove(&s);
        }
        self.busy.insert(start, end);
    }

    /// How much of [from, to) the union covers.
    fn covered_us(&self, from: u64, to: u64) -> u64 {
        let before = self.busy.range(..from).next_back();
        let first = before
            .filter(|&(_, &e)| e > from)
            .map_or(0, |(_, &e)| e.min(to) - from);
        first
            + self
                .busy
                .range(from..to)
                .map(|(&s, &e)| e.min(to) - s)
                .sum::<u64>()
    }
}

/// The waits, folded into statistics as each ends, and the writers' long waits judged
/// against the read holds of their lock.
#[derive(Default)]
pub struct Waits {
    /// The history's `writer_wait_bound_us` (from its first line).
    bound_us: Option<u64>,
    /// Per client: lock, mode, first invocation, end of the last failed attempt.
    open: BTreeMap<usize, (LockId, Mode, u64, u64)>,
    /// Per mode: counts and maxima, and the lengths of the waits that ended acquired.
    per_mode: BTreeMap<Mode, (WaitStats, Counts)>,
    /// Per lock (by number), its read holds; only with a bound.
    reads: Vec<Reads>,
    /// Long waits so far: the number of the next.
    long: u64,
    /// Starvation found: the number of the long wait (the order they ended in), the
    /// wait, and the share of it readers kept the lock busy.
    found: Vec<(u64, LongWait, f64)>,
    /// Every long wait and every wait length, for the batch reference of the tests.
    #[cfg(test)]
    every_long: Vec<LongWait>,
    #[cfg(test)]
    pub(super) every_wait_us: BTreeMap<Mode, Vec<u64>>,
}

impl Waits {
    /// The starvation bound, from the history's meta line.
    pub fn set_bound(&mut self, bound_us: Option<u64>) {
        self.bound_us = bound_us;
    }

    /// A workload acquire invocation.
    pub fn invoke(&mut self, client: usize, lock: LockId, mode: Mode, t_us: u64) {
        match self.open.get(&client) {
            Some(&(l, m, _, _)) if l == lock && m == mode => {}
            _ => {
                if let Some((lock, mode, since_us, last_us)) = self.open.remove(&client) {
                    // The client gave up on that lock and wants another: the wait ends
                    // unanswered with its last attempt.
                    self.ended(client, lock, mode, since_us, last_us, false);
                }
                self.open.insert(client, (lock, mode, t_us, t_us));
            }
        }
    }

    /// A workload acquisition failed (or its outcome is unknown).
    pub fn failed(&mut self, client: usize, t_us: u64) {
        if let Some(open) = self.open.get_mut(&client) {
            open.3 = t_us;
        }
    }

    /// A workload acquisition succeeded.
    pub fn acquired(&mut self, client: usize, t_us: u64) {
        if let Some((lock, mode, since_us, _)) = self.open.remove(&client) {
            self.ended(client, lock, mode, since_us, t_us, true);
        }
    }

    /// A hold began (any phase): a read hold is open until it ends.
    pub fn hold_started(&mut self, lock: LockId, hold: &Hold) {
        if self.bound_us.is_some() && hold.mode == Mode::Read {
            self.reads(lock).open.insert(key(hold));
        }
    }

    /// A hold ended as `hold` says, at `now_us`: a read hold joins the union, and the
    /// long waits it held back are judged.
    pub fn hold_ended(&mut self, lock: LockId, hold: &Hold, now_us: u64) {
        if self.bound_us.is_none() || hold.mode != Mode::Read {
            return;
        }
        let reads = self.reads(lock);
        reads.open.remove(&key(hold));
        if hold.end_us > hold.start_us {
            reads.add(hold.start_us, hold.end_us);
        }
        if reads.waiting.iter().any(|(_, w)| reads.ready(w)) {
            let waiting = std::mem::take(&mut reads.waiting);
            for (n, w) in waiting {
                if self.reads(lock).ready(&w) {
                    self.judge(n, w);
                } else {
                    self.reads(lock).waiting.push((n, w));
                }
            }
        }
        if self.reads(lock).busy.len() > 2 * self.reads(lock).kept + FORGET_SLACK {
            self.forget(lock, now_us);
        }
    }

    fn reads(&mut self, lock: LockId) -> &mut Reads {
        let i = lock as usize;
        if self.reads.len() <= i {
            self.reads.resize_with(i + 1, Reads::default);
        }
        &mut self.reads[i]
    }

    /// Forgets the intervals of `lock`'s union that end before every wait that may
    /// still be judged against them begins.
    fn forget(&mut self, lock: LockId, now_us: u64) {
        let open_writers = self
            .open
            .values()
            .filter(|&&(l, m, _, _)| l == lock && m == Mode::Write)
            .map(|&(_, _, since_us, _)| since_us);
        let reads = &mut self.reads[lock as usize];
        let waiting = reads.waiting.iter().map(|(_, w)| w.since_us);
        let horizon_us = open_writers.chain(waiting).fold(now_us, u64::min);
        while let Some((&s, &e)) = reads.busy.first_key_value() {
            if e > horizon_us {
                break;
            }
            reads.busy.remove(&s);
        }
        reads.kept = reads.busy.len();
    }

    /// Counts one wait that ended (or that the history ended).
    fn ended(
        &mut self,
        client: usize,
        lock: LockId,
        mode: Mode,
        since_us: u64,
        until_us: u64,
        acquired: bool,
    ) {
        let waited_us = until_us - since_us;
        let (s, v) = self.per_mode.entry(mode).or_default();
        if acquired {
            s.acquired += 1;
            v.push(waited_us);
            #[cfg(test)]
            self.every_wait_us.entry(mode).or_default().push(waited_us);
        }
        s.max_us = s.max_us.max(waited_us);
        if mode == Mode::Write && self.bound_us.is_some_and(|b| waited_us > b) {
            let w = LongWait {
                client,
                lock,
                since_us,
                until_us,
                acquired,
            };
            #[cfg(test)]
            self.every_long.push(w.clone());
            let n = self.long;
            self.long += 1;
            if self.reads(lock).ready(&w) {
                self.judge(n, w);
            } else {
                self.reads(lock).waiting.push((n, w));
            }
        }
    }

    /// Judges a long wait whose read holds have all ended (as far as they cover it).
    fn judge(&mut self, n: u64, w: LongWait) {
        let waited_us = w.until_us - w.since_us;
        let covered = self.reads(w.lock).covered_us(w.since_us, w.until_us);
        let share = covered as f64 / waited_us as f64;
        if share >= 0.5 {
            self.found.push((n, w, share));
        }
    }

    /// Every long wait, in the order they end, with those [`Waits::finish`] will end:
    /// what the batch reference judges.
    #[cfg(test)]
    pub(super) fn every_long(&self) -> Vec<LongWait> {
        let mut long = self.every_long.clone();
        for (&client, &(lock, mode, since_us, until_us)) in &self.open {
            if mode == Mode::Write && self.bound_us.is_some_and(|b| until_us - since_us > b) {
                long.push(LongWait {
                    client,
                    lock,
                    since_us,
                    until_us,
                    acquired: false,
                });
            }
        }
        long
    }

    /// The starvation bound, for the batch reference.
    #[cfg(test)]
    pub(super) fn bound_us(&self) -> Option<u64> {
        self.bound_us
    }

    /// Per-mode statistics and starvation findings, in the order the waits ended; every
    /// hold has ended.
    pub fn finish(mut self, locks: &Locks) -> (BTreeMap<Mode, WaitStats>, Vec<LivenessFinding>) {
        for (client, (lock, mode, since_us, last_us)) in std::mem::take(&mut self.open) {
            self.ended(client, lock, mode, since_us, last_us, false);
            self.per_mode.entry(mode).or_default().0.unfinished += 1;
        }
        for lock in 0..self.reads.len() {
            let waiting = std::mem::take(&mut self.reads[lock].waiting);
            debug_assert!(self.reads[lock].open.is_empty(), "every hold has ended");
            for (n, w) in waiting {
                self.judge(n, w);
            }
        }
        let stats = std::mem::take(&mut self.per_mode)
            .into_iter()
            .map(|(mode, (mut s, v))| {
                s.p50_us = v.percentile(50.0);
                s.p99_us = v.percentile(99.0);
                (mode, s)
            })
            .collect();
        let Some(bound_us) = self.bound_us else {
            return (stats, Vec::new());
        };
        self.found.sort_by_key(|(n, _, _)| *n);
        let findings = self
            .found
            .into_iter()
            .map(|(_, w, share)| LivenessFinding::WriterStarvation {
                lock: locks.name(w.lock).to_string(),
                client: w.client,
                since_us: w.since_us,
                waited_us: w.until_us - w.since_us,
                bound_us,
                acquired: w.acquired,
                readers_busy_share: (share * 1000.0).round() / 1000.0,
            })
            .collect();
        (stats, findings)
    }
}
