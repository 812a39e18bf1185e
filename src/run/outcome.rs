//! What a run decided: the result of each seed and the verdict over all of them, with
//! the reported seed's evidence. `report/` renders an [`Outcome`]; nothing here runs.

use crate::checker::{Findings, Stats};
use crate::history::Event;
use crate::lifecycle::RunStats;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The reported seed's history: in memory, or in the file it went to as it was made
/// (a simulated run given a file keeps none of its events in memory).
#[derive(Debug)]
pub enum History {
    Memory(Vec<Event>),
    File { path: PathBuf, events: usize },
}

impl History {
    /// How many events it has.
    pub fn len(&self) -> usize {
        match self {
            History::Memory(events) => events.len(),
            History::File { events, .. } => *events,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The outcome of one seed. Everything in it follows from the seed but `sim_secs`, a
/// wall-clock measurement, which is kept out of what is written (summary.json must be
/// byte-identical for the same seeds, however they were run).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeedResult {
    pub seed: u64,
    pub safe: bool,
    pub live: bool,
    pub violations: usize,
    pub liveness_findings: usize,
    /// Stale writes the guarded resource accepted over the write of a later hold, plus
    /// fencing tokens that did not grow.
    pub resource_violations: usize,
    pub stats: Stats,
    /// The driver's work: events, node commands, lock operations, virtual end time.
    pub sim: RunStats,
    /// Wall-clock seconds the run took (not the checker).
    #[serde(skip)]
    pub sim_secs: f64,
    /// The seed was cut short by a stop: its verdict covers the history up to there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
}

impl SeedResult {
    /// Whether this seed has something to report: a violation, a liveness finding or
    /// a stale write.
    pub fn has_finding(&self) -> bool {
        !self.safe || !self.live || self.resource_violations > 0
    }
}

/// The outcome of a whole invocation.
pub struct Outcome {
    pub seeds: Vec<SeedResult>,
    /// The seed the report describes, with its full history and findings.
    pub reported_seed: u64,
    pub history: History,
    pub findings: Findings,
    pub plan: Vec<crate::fault::PlannedFault>,
    /// The reported seed's worker logs, when the clients were worker processes.
    pub worker_logs: Option<crate::worker::process::WorkerLogs>,
    pub safe: bool,
    pub live: bool,
    /// No seed had a resource-level violation.
    pub resource_safe: bool,
    pub as_expected: bool,
    pub availability_ok: bool,
    /// Why the run did not finish (a signal), when it did not: the seeds that did not
    /// run are missing, and the reported seed's history may end early or be empty.
    pub partial: Option<String>,
}

impl Outcome {
    /// The verdict on mutual exclusion: `safe`, `unsafe`, or `unknown` when a stop came
    /// before any seed finished.
    pub fn verdict(&self) -> &'static str {
        match (self.safe, self.seeds.is_empty()) {
            (false, _) => "unsafe",
            (true, true) => "unknown",
            (true, false) => "safe",
        }
    }

    /// Simulated node commands per wall second over all seeds.
    pub fn sim_ops_per_sec(&self) -> f64 {
        let ops: u64 = self.seeds.iter().map(|s| s.sim.node_cmds).sum();
        let secs: f64 = self.seeds.iter().map(|s| s.sim_secs).sum();
        ops as f64 / secs.max(1e-9)
    }

    /// Simulated lock operations (acquire and release calls) per wall second.
    pub fn sim_lock_ops_per_sec(&self) -> f64 {
        let ops: u64 = self.seeds.iter().map(|s| s.sim.lock_ops).sum();
        let secs: f64 = self.seeds.iter().map(|s| s.sim_secs).sum();
        ops as f64 / secs.max(1e-9)
    }
}
