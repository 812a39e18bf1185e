//! Starvation: how long clients wait for a lock, per mode, and writers starved by readers.
//!
//! A wait runs from a client's first acquire invocation for a (lock, mode) to the
//! acquisition that ends it; failed acquisitions in between (the client retries the same
//! lock and mode) do not end it. Waits still open when the history ends count up to the
//! end of their last failed attempt (the client stops wanting at the heal). Per mode:
//! p50, p99 and max.
//!
//! The starvation finding (a liveness finding): a writer waited longer than the
//! history's `writer_wait_bound_us` while readers kept the lock busy, i.e. read holds of
//! that lock covered at least half of the wait.

use super::stats::{percentile, WaitStats};
use super::{Hold, LivenessFinding};
use crate::algorithm::Mode;
use std::collections::BTreeMap;

/// One wait, finished or not.
#[derive(Clone, Debug)]
struct Wait {
    client: usize,
    lock: String,
    mode: Mode,
    since_us: u64,
    until_us: u64,
    acquired: bool,
}

#[derive(Default)]
pub struct Waits {
    /// Per client: lock, mode, first invocation, end of the last failed attempt.
    open: BTreeMap<usize, (String, Mode, u64, u64)>,
    done: Vec<Wait>,
}

impl Waits {
    /// A workload acquire invocation.
    pub fn invoke(&mut self, client: usize, lock: &str, mode: Mode, t_us: u64) {
        match self.open.get(&client) {
            Some((l, m, _, _)) if l == lock && *m == mode => {}
            _ => {
                if let Some((lock, mode, since_us, last_us)) = self.open.remove(&client) {
                    // The client gave up on that lock and wants another: the wait ends
                    // unanswered with its last attempt.
                    self.done.push(Wait {
                        client,
                        lock,
                        mode,
                        since_us,
                        until_us: last_us,
                        acquired: false,
                    });
                }
                self.open.insert(client, (lock.to_string(), mode, t_us, t_us));
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
            self.done.push(Wait {
                client,
                lock,
                mode,
                since_us,
                until_us: t_us,
                acquired: true,
            });
        }
    }

    /// Per-mode statistics and starvation findings; `holds` sorted by lock and start.
    pub fn finish(
        mut self,
        bound_us: Option<u64>,
        holds: &[Hold],
    ) -> (BTreeMap<Mode, WaitStats>, Vec<LivenessFinding>) {
        let mut unfinished = 0;
        for (client, (lock, mode, since_us, last_us)) in std::mem::take(&mut self.open) {
            unfinished += 1;
            self.done.push(Wait {
                client,
                lock,
                mode,
                since_us,
                until_us: last_us,
                acquired: false,
            });
        }
        let first_unfinished = self.done.len() - unfinished;
        let mut per_mode: BTreeMap<Mode, (WaitStats, Vec<u64>)> = BTreeMap::new();
        for (i, w) in self.done.iter().enumerate() {
            let (s, v) = per_mode.entry(w.mode).or_default();
            if w.acquired {
                s.acquired += 1;
                v.push(w.until_us - w.since_us);
            } else if i >= first_unfinished {
                s.unfinished += 1;
            }
            s.max_us = s.max_us.max(w.until_us - w.since_us);
        }
        let stats = per_mode
            .into_iter()
            .map(|(mode, (mut s, mut v))| {
                v.sort_unstable();
                s.p50_us = percentile(&v, 50.0);
                s.p99_us = percentile(&v, 99.0);
                (mode, s)
            })
            .collect();

        let mut findings = Vec::new();
        if let Some(bound_us) = bound_us {
            let busy = read_busy(holds);
            for w in &self.done {
                let waited_us = w.until_us - w.since_us;
                if w.mode != Mode::Write || waited_us <= bound_us {
                    continue;
                }
                let covered = busy
                    .get(w.lock.as_str())
                    .map_or(0, |iv| covered_us(iv, w.since_us, w.until_us));
                let share = covered as f64 / waited_us as f64;
                if share >= 0.5 {
                    findings.push(LivenessFinding::WriterStarvation {
                        lock: w.lock.clone(),
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
