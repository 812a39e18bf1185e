//! timing.json: the wall-clock figures of a run (how long its seeds took and the
//! simulator's speed), kept apart from summary.json so that the summary depends only
//! on the seeds run: the same seeds give the same summary.json, byte for byte, whether
//! they ran in one process, on several threads, or as shards merged later.

use super::{io_err, ReportError};
use crate::outcome::SeedResult;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file name, next to summary.json.
pub const FILE: &str = "timing.json";

/// Work done and wall-clock seconds spent, summed over seeds (CPU-seconds when seeds
/// ran in parallel or on several machines).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub seeds: u64,
    /// Seconds the drivers ran, summed over seeds (the checker is not counted).
    pub run_secs: f64,
    /// Commands executed by nodes (each SET or unlock on one node).
    pub node_cmds: u64,
    /// Acquire and release calls by clients.
    pub lock_ops: u64,
    pub node_cmds_per_sec: f64,
    pub lock_ops_per_sec: f64,
}

impl Timing {
    pub fn of(seeds: &[SeedResult]) -> Timing {
        seeds.iter().fold(Timing::default(), |mut t, s| {
            t.seeds += 1;
            t.run_secs += s.sim_secs;
            t.node_cmds += s.sim.node_cmds;
            t.lock_ops += s.sim.lock_ops;
            t.with_rates()
        })
    }

    /// The timing of two sets of seeds together (merged shards).
    pub fn plus(&self, other: &Timing) -> Timing {
        Timing {
            seeds: self.seeds + other.seeds,
            run_secs: self.run_secs + other.run_secs,
            node_cmds: self.node_cmds + other.node_cmds,
            lock_ops: self.lock_ops + other.lock_ops,
            ..Timing::default()
        }
        .with_rates()
    }

    fn with_rates(mut self) -> Timing {
        let secs = self.run_secs.max(1e-9);
        self.node_cmds_per_sec = self.node_cmds as f64 / secs;
        self.lock_ops_per_sec = self.lock_ops as f64 / secs;
        self
    }
}

pub fn write(dir: &Path, timing: &Timing) -> Result<(), ReportError> {
    let path = dir.join(FILE);
    let text = serde_json::to_string_pretty(timing).expect("plain numbers serialize");
    std::fs::write(&path, text + "\n").map_err(io_err(&path))
}

/// The timing.json in `dir`, if there is a readable one.
pub fn read(dir: &Path) -> Option<Timing> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    serde_json::from_str(&text).ok()
}
