//! One scenario's result as the analysis reads it: what its index row states
//! (analysis.rs) and what its answer is derived from (answer.rs).

use super::narrative::Story;
use std::path::PathBuf;

/// One scenario's result in the analysis.
pub struct Case {
    pub name: String,
    pub file: PathBuf,
    /// The comment at the top of the scenario file: what it shows and its source.
    pub about: String,
    /// The whole expectation: "lock safe, resource unsafe" ([`Scenario::expectation`]).
    ///
    /// [`Scenario::expectation`]: crate::scenario::Scenario::expectation
    pub expect: String,
    /// The algorithm's kind, as scenario files name it (`redlock`, `single`, ...).
    pub algorithm: &'static str,
    /// How the scenario's algorithm departs from its seed's, on purpose: empty for the
    /// algorithm as specified ([`crate::algorithm::AlgorithmConfig::departures`]).
    pub departures: Vec<String>,
    /// The faults it injects, in words ([`crate::scenario::Scenario::fault_kinds`]).
    pub faults: Vec<String>,
    /// The rounds its fencing tokens are issued in, when clients take them.
    pub fence_rounds: Option<u8>,
    /// What the verdict rests on, over every seed.
    pub rests_on: crate::outcome::RestsOn,
    /// `unsafe`, `safe`, `not_exercised` or `unknown`, as summary.json says it.
    pub verdict: &'static str,
    /// Why the verdict is not exercised, when it is.
    pub not_exercised: Option<String>,
    pub live: bool,
    /// The guarded resource's verdict over all seeds ("no writes" when clients wrote none).
    pub resource: &'static str,
    /// Stale writes accepted by the guarded resource in the reported seed.
    pub stale_writes: usize,
    /// Fencing tokens smaller than an earlier hold's, in the reported seed.
    pub fence_regressions: usize,
    /// Liveness findings of the reported seed, counted by kind (e.g. "writer_starvation ×3").
    pub liveness: String,
    pub as_expected: bool,
    pub seeds: usize,
    pub unsafe_seeds: usize,
    /// Seeds with no violation that proved nothing (no hold met their faults, or too few
    /// acquisitions).
    pub not_exercised_seeds: usize,
    pub reported_seed: u64,
    pub violations: usize,
    /// Availability (time): the share of the workload's time a lock was held or could
    /// be acquired (what faults took away; contention does not count against it), in the
    /// reported seed.
    pub availability: f64,
    /// The reported seed's workload time, which `availability` is a share of.
    pub workload_us: u64,
    /// Acquire calls that succeeded, as a share of the reported seed's completed acquire
    /// calls (`acquires`): contention counts against it.
    pub acquire_success: f64,
    pub acquires: u64,
    pub latency_p99_us: u64,
    pub story: Option<Story>,
    /// The timeline to show: the report's first plot (around the first violation, else the
    /// first stale write, else the first fault), or the overview.
    pub timeline: String,
    pub rerun: String,
}
