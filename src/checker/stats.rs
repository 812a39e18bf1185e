//! Availability and latency of the workload phase's acquisitions; the availability
//! penalty is filled in from [`super::tolerance`].
//!
//! Latencies are kept as a count per distinct value ([`Counts`]), not one number per
//! acquisition: the percentiles come out as from the sorted list of every value, and the
//! memory grows with the distinct values, not with the run.

use crate::history::{Event, OpKind, Phase};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Stats {
    /// Acquire operations that completed in the workload phase.
    pub acquires: u64,
    pub acquired: u64,
    pub failed: u64,
    pub unknown: u64,
    pub releases: u64,
    /// Share of completed acquires that succeeded.
    pub availability: f64,
    /// Acquire latency (invoke to ok) of successful acquires.
    pub latency_p50_us: u64,
    pub latency_p99_us: u64,
    pub latency_max_us: u64,
    /// The availability penalty: time in the workload phase during which some lock was
    /// free and wanted but every attempt at it failed (see `tolerance`).
    pub unavailable_us: u64,
    /// `unavailable_us` as a share of the workload phase.
    pub unavailable_share: f64,
    /// Failed acquisitions the fault-tolerance rule judged (uncontended, client healthy).
    pub tolerance_checked: u64,
    /// Waits from first attempt to acquisition, per mode ([`super::waits`]).
    pub waits: std::collections::BTreeMap<crate::algorithm::Mode, WaitStats>,
    /// Stalls: workload acquires that took longer than the ttl while a fault was active
    /// (one still open when the history ended counts if it was open that long). An
    /// acquire that never finishes counts in no availability; it counts here.
    #[serde(default)]
    pub stalls: u64,
    /// The longest stall, invoke to end (or to the end of the history).
    #[serde(default)]
    pub stall_max_us: u64,
    /// Of the stalls, releases and extensions that blocked longer than the ttl while a
    /// fault was active (a worker's library retrying a node that is down): the lock is
    /// not usable by its holder then either.
    #[serde(default)]
    pub release_stalls: u64,
    /// Workload acquires (the probe's not counted) that overlapped an active fault, and
    /// those that succeeded: the availability during the faults, apart from the run's.
    #[serde(default)]
    pub fault_acquires: u64,
    #[serde(default)]
    pub fault_acquired: u64,
    /// The probe client's acquisitions (`meta.probe_client`), when the run has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeStats>,
}

/// The probe client's workload acquisitions, as the fault-tolerance rule saw them
/// ([`super::tolerance`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct ProbeStats {
    pub client: usize,
    /// Its completed acquisitions, and those that succeeded.
    pub acquires: u64,
    pub acquired: u64,
    /// Its acquisitions that overlapped an active fault.
    pub during_faults: u64,
    /// Its acquisitions the rule judged: the probe undisturbed, and a majority of nodes
    /// up, healthy and reachable from it for a ttl before and throughout.
    pub judged: u64,
    /// Of those, the ones that overlapped an active fault.
    pub judged_during_faults: u64,
    /// Judged acquisitions that failed: each is a fault-tolerance finding.
    pub judged_failed: u64,
}

impl Stats {
    /// The success share of the acquires that overlapped a fault; `None` when none did.
    pub fn availability_during_faults(&self) -> Option<f64> {
        (self.fault_acquires > 0).then(|| self.fault_acquired as f64 / self.fault_acquires as f64)
    }
}

impl ProbeStats {
    /// The probe's success share (0 when it completed none).
    pub fn availability(&self) -> f64 {
        if self.acquires == 0 {
            0.0
        } else {
            self.acquired as f64 / self.acquires as f64
        }
    }
}

impl Stats {
    /// The success share of the workload clients other than the probe: what
    /// contention (and the faults) left them.
    pub fn contended_availability(&self) -> f64 {
        let (probe_acquires, probe_acquired) =
            self.probe.as_ref().map_or((0, 0), |p| (p.acquires, p.acquired));
        let acquires = self.acquires.saturating_sub(probe_acquires);
        if acquires == 0 {
            0.0
        } else {
            self.acquired.saturating_sub(probe_acquired) as f64 / acquires as f64
        }
    }
}

/// The waits of one mode.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct WaitStats {
    /// Waits that ended in an acquisition.
    pub acquired: u64,
    /// Waits still open when the history ended.
    pub unfinished: u64,
    pub p50_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
}

/// Numbers counted per distinct value: what a sorted list of them answers
/// ([`percentile`], the largest), in memory that grows with the distinct values only.
#[derive(Clone, Debug, Default)]
pub struct Counts {
    /// How many numbers in all.
    len: u64,
    by_value: BTreeMap<u64, u64>,
}

impl Counts {
    pub fn push(&mut self, value: u64) {
        self.len += 1;
        *self.by_value.entry(value).or_default() += 1;
    }

    /// The nearest-rank percentile, as [`percentile`] of the sorted numbers (0 for none).
    pub fn percentile(&self, p: f64) -> u64 {
        if self.len == 0 {
            return 0;
        }
        let rank = ((p / 100.0) * self.len as f64).ceil() as u64;
        let rank = rank.clamp(1, self.len);
        let mut below = 0;
        for (&value, &n) in &self.by_value {
            below += n;
            if below >= rank {
                return value;
            }
        }
        unreachable!("the counts add up to len")
    }

    /// The largest number (0 for none).
    pub fn max(&self) -> u64 {
        self.by_value.last_key_value().map_or(0, |(&v, _)| v)
    }
}

#[derive(Default)]
pub struct Collector {
    stats: Stats,
    latencies_us: Counts,
    /// Every latency in order, for the batch reference of the tests.
    #[cfg(test)]
    pub(super) every_latency_us: Vec<u64>,
}

impl Collector {
    pub fn complete(&mut self, event: &Event, op: OpKind, phase: Phase, invoke_us: u64) {
        if phase != Phase::Workload {
            return;
        }
        let s = &mut self.stats;
        match (op, event) {
            (OpKind::Release, _) => s.releases += 1,
            (OpKind::Extend, _) => {}
            (OpKind::Acquire, Event::Ok(o)) => {
                s.acquired += 1;
                self.latencies_us.push(o.t_us - invoke_us);
                #[cfg(test)]
                self.every_latency_us.push(o.t_us - invoke_us);
            }
            (OpKind::Acquire, Event::Fail(_)) => s.failed += 1,
            (OpKind::Acquire, _) => s.unknown += 1,
        }
    }

    pub fn finish(mut self) -> Stats {
        let s = &mut self.stats;
        s.acquires = s.acquired + s.failed + s.unknown;
        s.availability = if s.acquires == 0 {
            0.0
        } else {
            s.acquired as f64 / s.acquires as f64
        };
        s.latency_p50_us = self.latencies_us.percentile(50.0);
        s.latency_p99_us = self.latencies_us.percentile(99.0);
        s.latency_max_us = self.latencies_us.max();
        self.stats
    }
}

/// Nearest-rank percentile of sorted values (0 for none).
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

#[cfg(test)]
mod tests {
    use super::{percentile, Counts};

    #[test]
    fn nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile(&v, 50.0), 50);
        assert_eq!(percentile(&v, 99.0), 99);
        assert_eq!(percentile(&[7], 99.0), 7);
        assert_eq!(percentile(&[], 50.0), 0);
    }

    proptest::proptest! {
        /// Counted per value, the numbers give what their sorted list gives.
        #[test]
        fn counts_answer_as_the_sorted_numbers(mut v in proptest::collection::vec(0..20u64, 0..300)) {
            let mut counts = Counts::default();
            for &x in &v {
                counts.push(x);
            }
            v.sort_unstable();
            for p in [0.0, 1.0, 33.3, 50.0, 90.0, 99.0, 99.9, 100.0] {
                proptest::prop_assert_eq!(counts.percentile(p), percentile(&v, p), "p{}", p);
            }
            proptest::prop_assert_eq!(counts.max(), v.last().copied().unwrap_or(0));
        }
    }
}
