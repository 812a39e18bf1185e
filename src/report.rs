//! The output folder of a run: summary.json and history.jsonl.
//!
//! The last step of the flow. summary.json holds the verdict per seed, the findings of
//! the reported seed, its fault plan and the command that reruns it.

use crate::checker::{LivenessFinding, Stats, Violation};
use crate::fault::PlannedFault;
use crate::run::{Outcome, SeedResult};
use crate::scenario::{Expect, Scenario};
use serde::Serialize;
use std::path::Path;

#[derive(Serialize)]
pub struct Summary<'a> {
    pub scenario: &'a str,
    pub file: Option<String>,
    /// Where the run ran: `sim` or `redis`.
    pub backend: crate::scenario::Backend,
    pub expect: Expect,
    pub expect_live: bool,
    pub verdict: &'static str,
    pub live: bool,
    pub as_expected: bool,
    pub min_availability: Option<f64>,
    pub seeds_run: Vec<u64>,
    pub seeds: &'a [SeedResult],
    pub reported_seed: u64,
    pub rerun: String,
    pub violations: &'a [Violation],
    pub liveness: &'a [LivenessFinding],
    pub stats: &'a Stats,
    pub fault_plan: &'a [PlannedFault],
    /// Simulated node commands per wall second (one SET or unlock on one node each).
    pub sim_ops_per_sec: f64,
    /// Simulated acquire and release calls per wall second.
    pub sim_lock_ops_per_sec: f64,
}

pub fn summary<'a>(scenario: &'a Scenario, outcome: &'a Outcome) -> Summary<'a> {
    Summary {
        scenario: &scenario.name,
        file: scenario.path.as_ref().map(|p| p.display().to_string()),
        backend: scenario.backend,
        expect: scenario.expect,
        expect_live: scenario.expect_live,
        verdict: if outcome.safe { "safe" } else { "unsafe" },
        live: outcome.live,
        as_expected: outcome.as_expected,
        min_availability: scenario.min_availability,
        seeds_run: outcome.seeds.iter().map(|s| s.seed).collect(),
        seeds: &outcome.seeds,
        reported_seed: outcome.reported_seed,
        rerun: scenario.rerun_command(outcome.reported_seed),
        violations: &outcome.findings.violations,
        liveness: &outcome.findings.liveness,
        stats: &outcome.findings.stats,
        fault_plan: &outcome.plan,
        sim_ops_per_sec: outcome.sim_ops_per_sec(),
        sim_lock_ops_per_sec: outcome.sim_lock_ops_per_sec(),
    }
}

/// Writes summary.json and history.jsonl into `dir`, creating it.
pub fn write(dir: &Path, scenario: &Scenario, outcome: &Outcome) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let file = std::fs::File::create(dir.join("summary.json"))?;
    serde_json::to_writer_pretty(std::io::BufWriter::new(file), &summary(scenario, outcome))?;
    let file = std::fs::File::create(dir.join("history.jsonl"))?;
    crate::history::write_jsonl(&outcome.history, std::io::BufWriter::new(file))
}
