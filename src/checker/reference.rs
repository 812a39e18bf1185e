//! The batch judges the online ones replaced, kept as the tests' references: each
//! reads every hold of the run (sorted as [`super::safety::sort`] sorts them) or every
//! number, as the checker did before it judged online. [`super::differential_tests`]
//! compares the two on every shipped scenario and on random histories.

use super::stats::{percentile, Stats, WaitStats};
use super::waits::LongWait;
use super::{Hold, LivenessFinding};
use crate::algorithm::Mode;
use crate::history::compact::Locks;
use std::collections::BTreeMap;

/// The batch starvation judge: each long wait (in the order they ended) against the
/// union of the read holds of its lock.
pub fn starvation(
    long: &[LongWait],
    bound_us: Option<u64>,
    holds: &[Hold],
    locks: &Locks,
) -> Vec<LivenessFinding> {
    let mut findings = Vec::new();
    if let (Some(bound_us), false) = (bound_us, long.is_empty()) {
        let busy = read_busy(holds);
        for w in long {
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
    findings
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

/// The batch percentiles: latency from every latency, and each mode's waits from every
/// wait length, sorted; into a copy of `stats`.
pub fn percentiles(stats: &Stats, latencies_us: &[u64], waits_us: &BTreeMap<Mode, Vec<u64>>) -> Stats {
    let mut s = stats.clone();
    let mut v = latencies_us.to_vec();
    v.sort_unstable();
    s.latency_p50_us = percentile(&v, 50.0);
    s.latency_p99_us = percentile(&v, 99.0);
    s.latency_max_us = v.last().copied().unwrap_or(0);
    for (mode, w) in s.waits.iter_mut() {
        let mut v = waits_us.get(mode).cloned().unwrap_or_default();
        v.sort_unstable();
        *w = WaitStats {
            p50_us: percentile(&v, 50.0),
            p99_us: percentile(&v, 99.0),
            ..w.clone()
        };
    }
    s
}
