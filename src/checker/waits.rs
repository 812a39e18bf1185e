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

use super::compact::{LockId, Locks};
use super::stats::{Counts, WaitStats};
use super::{Hold, LivenessFinding};
use crate::algorithm::Mode;
use std::collections::BTreeMap;

/// A writer's wait longer than the bound, to judge against the read holds at the end.
#[derive(Clone, Debug)]
struct LongWait {
    client: usize,
    lock: LockId,
    since_us: u64,
    until_us: u64,
    acquired: bool,
}

/// The waits, folded into statistics as each ends: only the writer waits that may be
/// starvation are kept whole.
#[derive(Default)]
pub struct Waits {
    /// The history's `writer_wait_bound_us` (from its first line).
    bound_us: Option<u64>,
    /// Per client: lock, mode, first invocation, end of the last failed attempt.
    open: BTreeMap<usize, (LockId, Mode, u64, u64)>,
    /// Per mode: counts and maxima, and the lengths of the waits that ended acquired.
    per_mode: BTreeMap<Mode, (WaitStats, Counts)>,
    /// Writer waits longer than the bound, in the order they ended.
    long: Vec<LongWait>,
    /// Every wait length, for the batch reference of the tests.
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
            self.long.push(LongWait {
                client,
                lock,
                since_us,
                until_us,
                acquired,
            });
        }
    }

    /// Per-mode statistics and starvation findings; `holds` sorted by lock and start.
    pub fn finish(
        mut self,
        holds: &[Hold],
        locks: &Locks,
    ) -> (BTreeMap<Mode, WaitStats>, Vec<LivenessFinding>) {
        for (client, (lock, mode, since_us, last_us)) in std::mem::take(&mut self.open) {
            self.ended(client, lock, mode, since_us, last_us, false);
            self.per_mode.entry(mode).or_default().0.unfinished += 1;
        }
        let stats = std::mem::take(&mut self.per_mode)
            .into_iter()
            .map(|(mode, (mut s, v))| {
                s.p50_us = v.percentile(50.0);
                s.p99_us = v.percentile(99.0);
                (mode, s)
            })
            .collect();

        let mut findings = Vec::new();
        if let (Some(bound_us), false) = (self.bound_us, self.long.is_empty()) {
            let busy = read_busy(holds);
            for w in &self.long {
                let waited_us = w.until_us - w.since_us;
                let lock = locks.name(w.lock);
                let covered = busy
                    .get(lock.as_str())
                    .map_or(0, |iv| covered_us(iv, w.since_us, w.until_us));
                let share = covered as f64 / waited_us as f64;
                if share >= 0.5 {
                    findings.push(LivenessFinding::WriterStarvation {
                        lock: lock.to_string(),
                        client: w.client,
                        since_us: w.since_us,
                        waited_us,
                        bound_us,
                        acquired: w.acquired,
                        readers_busy_share: (share * 1000.0).round() / 1000.0,
                    });
                }
            }
        }
        (stats, findings)
    }
}

/// Per lock, the union of read holds as sorted disjoint intervals.
fn read_busy(holds: &[Hold]) -> BTreeMap<&str, Vec<(u64, u64)>> {
    let mut out: BTreeMap<&str, Vec<(u64, u64)>> = BTreeMap::new();
    for h in holds
        .iter()
        .filter(|h| h.mode == Mode::Read && h.end_us > h.start_us)
    {
        let iv = out.entry(&h.lock).or_default();
        match iv.last_mut() {
            Some(last) if h.start_us <= last.1 => last.1 = last.1.max(h.end_us),
            _ => iv.push((h.start_us, h.end_us)),
        }
    }
    out
}

/// How much of [from, to) the sorted disjoint intervals cover.
fn covered_us(iv: &[(u64, u64)], from: u64, to: u64) -> u64 {
    let first = iv.partition_point(|&(_, end)| end <= from);
    iv[first..]
        .iter()
        .take_while(|&&(start, _)| start < to)
        .map(|&(start, end)| end.min(to) - start.max(from))
        .sum()
}
