//! The batch judges the online ones replaced, kept as the tests' references: each
//! reads every number of the run, as the checker did before it judged online.
//! [`super::differential_tests`] compares the two on every shipped scenario and on
//! random histories.

use super::stats::{percentile, Stats, WaitStats};
use crate::algorithm::Mode;
use std::collections::BTreeMap;

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
