//! Orchestration: everything that runs scenarios and decides. One `lockstorm scenario`
//! invocation (run every seed, check each history, decide) is here; the analysis over
//! a folder of scenarios is in [`analysis`]; a grid of parameter values in [`sweep`]
//! (its axes in [`axis`]); splitting a run over machines in [`shard`] and putting it
//! back together in [`merge`]; local threads in [`pool`]. What a run decided is an
//! [`Outcome`] ([`outcome`]), which `report/` renders without running anything.
//!
//! The scenario's backend picks the driver. On the simulator, seeds run on `--jobs`
//! threads ([`pool`]), each in its own deterministic simulation; only their findings are kept, and the seed
//! whose report is written (the first with a finding, else the first seed) is simulated
//! once more for its history, which the determinism makes identical (a single seed
//! keeps its history from the first run). On real Redis seeds run one after another
//! (each starts its own nodes, and streams its history to the report folder as it
//! goes) and the reported seed's history is kept, since a real run cannot be replayed.
//!
//! A stop requested of lockstorm ([`crate::shutdown`]) ends the run early: seeds not
//! started are skipped, the seed in progress stops where it is, and the [`Outcome`] is
//! partial (`partial` says why). A violation found before the stop is still one.

pub mod analysis;
pub mod axis;
pub mod bench;
mod evidence;
pub mod matrix;
pub mod merge;
mod outcome;
pub mod pool;
pub mod shard;
pub mod sim_bench;
pub mod sweep;

pub use evidence::{save, SaveError};

pub use outcome::{Outcome, SeedResult};

use crate::checker::{self, Findings};
use crate::lifecycle::RunOutput;
use crate::real::{RealError, RealOptions};
use crate::scenario::{Backend, Expect, Scenario};
use crate::sim;
use std::time::Instant;

/// Runs one seed: simulate, then check. `progress(now_us, duration_us)` follows virtual time.
pub fn run_seed(
    scenario: &Scenario,
    seed: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> (SeedResult, RunOutput, Findings) {
    let started = Instant::now();
    let output = sim::run_with_progress(scenario, seed, progress);
    judge(seed, output, started)
}

/// Runs one seed against real Redis, then checks it.
pub fn run_seed_real(
    scenario: &Scenario,
    seed: u64,
    options: &RealOptions,
) -> Result<(SeedResult, RunOutput, Findings), RealError> {
    let started = Instant::now();
    let output = crate::real::run(scenario, seed, options)?;
    Ok(judge(seed, output, started))
}

fn judge(seed: u64, output: RunOutput, started: Instant) -> (SeedResult, RunOutput, Findings) {
    let partial = output.stopped;
    let sim_secs = started.elapsed().as_secs_f64();
    let findings = checker::check(&output.history).unwrap_or_else(|e| {
        panic!("seed {seed}: the driver wrote a malformed history: {e}");
    });
    let result = SeedResult {
        seed,
        safe: findings.is_safe(),
        live: findings.is_live(),
        violations: findings.violations.len(),
        liveness_findings: findings.liveness.len(),
        resource_violations: findings.resource_violations.len() + findings.fence_regressions.len(),
        stats: findings.stats.clone(),
        sim: output.stats,
        sim_secs,
        partial,
    };
    (result, output, findings)
}

/// Runs `seeds` on the scenario's backend, simulated seeds on `jobs` threads, calling
/// `progress(fraction)` with the share of work done: seeds finished, or for a single
/// simulated seed, virtual time. The outcome does not depend on `jobs`. Only the real
/// backend can fail (its environment); the simulator cannot.
pub fn run(
    scenario: &Scenario,
    seeds: &[u64],
    jobs: usize,
    real: &RealOptions,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Outcome, RealError> {
    match scenario.backend {
        Backend::Sim if scenario.clients.worker.is_some() => Err(RealError::WorkerOnSimulator),
        Backend::Sim => Ok(run_sim(scenario, seeds, jobs, progress)),
        Backend::Redis | Backend::Docker => run_real(scenario, seeds, real, progress),
    }
}

fn run_real(
    scenario: &Scenario,
    seeds: &[u64],
    options: &RealOptions,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Outcome, RealError> {
    let mut results = Vec::with_capacity(seeds.len());
    // Kept until a seed with a finding comes, whose evidence is reported instead.
    let mut reported = None;
    let mut partial = None;
    for (i, &seed) in seeds.iter().enumerate() {
        if crate::shutdown::requested().is_some() {
            partial = Some(stop_reason(i, seeds.len()));
            break;
        }
        let (result, output, findings) = run_seed_real(scenario, seed, options)?;
        let finding = result.has_finding();
        if reported.is_none() || (finding && !results.iter().any(SeedResult::has_finding)) {
            reported = Some((seed, output, findings));
        }
        let stopped = result.partial;
        results.push(result);
        if stopped {
            partial = Some(stop_reason(i, seeds.len()));
            break;
        }
        progress((i + 1) as f64 / seeds.len() as f64);
    }
    let (seed, output, findings) = reported.unwrap_or_else(|| nothing_run(seeds[0]));
    Ok(decide(scenario, results, seed, output, findings, partial))
}

/// Runs `seeds` on the simulator, on `jobs` threads. A stop request ends it early:
/// the seeds that finished decide, and no history is reported (there is no time to
/// simulate the reported seed again).
fn run_sim(scenario: &Scenario, seeds: &[u64], jobs: usize, progress: &(dyn Fn(f64) + Sync)) -> Outcome {
    if let [seed] = seeds {
        // One seed: its first run is the report's, no need to simulate it twice.
        let mut follow_time = |now_us: u64, total_us: u64| progress(now_us as f64 / total_us.max(1) as f64);
        let (result, output, findings) = run_seed(scenario, *seed, &mut follow_time);
        let partial = result.partial.then(|| stop_reason(0, 1));
        return decide(scenario, vec![result], *seed, output, findings, partial);
    }
    let seeds_run = sim_seeds(scenario, seeds, jobs, progress);
    if seeds_run.len() < seeds.len() {
        let partial = Some(stop_reason(seeds_run.len(), seeds.len()));
        let reported = seeds_run
            .iter()
            .find(|r| r.has_finding())
            .or(seeds_run.first())
            .map_or(seeds[0], |r| r.seed);
        let (_, output, findings) = nothing_run(reported);
        return decide(scenario, seeds_run, reported, output, findings, partial);
    }
    let reported = reported_seed(&seeds_run);
    reported_outcome(scenario, seeds_run, reported)
}

/// The result of every seed, simulated on `jobs` threads, in seed order; after a stop
/// request, of those that finished.
fn sim_seeds(
    scenario: &Scenario,
    seeds: &[u64],
    jobs: usize,
    progress: &(dyn Fn(f64) + Sync),
) -> Vec<SeedResult> {
    pool::map(
        seeds,
        jobs,
        |_, &seed| {
            if crate::shutdown::requested().is_some() {
                return None;
            }
            let (result, _, _) = run_seed(scenario, seed, &mut |_, _| {});
            (!result.partial).then_some(result)
        },
        |finished| progress(finished as f64 / seeds.len() as f64),
    )
    .into_iter()
    .flatten()
    .collect()
}

/// The seed a run reports in full: the first with a finding (unsafe, not live, or a
/// stale write), else the first seed.
pub fn reported_seed(results: &[SeedResult]) -> u64 {
    results
        .iter()
        .find(|r| r.has_finding())
        .unwrap_or(&results[0])
        .seed
}

/// The outcome of simulated seeds whose results are known: the reported seed is
/// simulated again for its history (only findings were kept per seed; the
/// determinism makes the rerun give the same history), and the verdict decided.
pub fn reported_outcome(scenario: &Scenario, results: Vec<SeedResult>, reported: u64) -> Outcome {
    let (_, output, findings) = run_seed(scenario, reported, &mut |_, _| {});
    decide(scenario, results, reported, output, findings, None)
}

/// The verdict over every seed, with the reported seed's evidence.
fn decide(
    scenario: &Scenario,
    seeds_run: Vec<SeedResult>,
    reported: u64,
    output: RunOutput,
    findings: Findings,
    partial: Option<String>,
) -> Outcome {
    let safe = seeds_run.iter().all(|r| r.safe);
    let live = seeds_run.iter().all(|r| r.live);
    let availability_ok = scenario
        .min_availability
        .is_none_or(|min| seeds_run.iter().all(|r| r.stats.availability >= min));
    let verdict_ok = match scenario.expect {
        Expect::Safe => safe,
        Expect::Unsafe => !safe,
    };
    let resource_safe = seeds_run.iter().all(|r| r.resource_violations == 0);
    let resource_ok = match scenario.expect_resource {
        None => true,
        Some(Expect::Safe) => resource_safe,
        Some(Expect::Unsafe) => !resource_safe,
    };
    // A partial run decides nothing it was expected to show.
    let as_expected =
        partial.is_none() && verdict_ok && (live || !scenario.expect_live) && availability_ok && resource_ok;
    Outcome {
        seeds: seeds_run,
        reported_seed: reported,
        history: output.history,
        findings,
        plan: output.plan,
        worker_logs: output.worker_logs,
        safe,
        live,
        resource_safe,
        as_expected,
        availability_ok,
        partial,
    }
}

/// Why a run is partial: the signal, and how far it got.
fn stop_reason(finished: usize, total: usize) -> String {
    let by = crate::shutdown::requested().map_or_else(|| "a stop request".to_string(), |s| s.to_string());
    if total == 1 {
        format!("stopped by {by} before the run ended")
    } else {
        format!("stopped by {by} after {finished} of {total} seeds")
    }
}

/// The evidence of a run that stopped before any seed produced any: an empty history.
fn nothing_run(seed: u64) -> (u64, RunOutput, Findings) {
    let output = RunOutput {
        history: Vec::new(),
        plan: Vec::new(),
        stats: Default::default(),
        worker_logs: None,
        stopped: true,
    };
    let findings = checker::check(&[]).expect("an empty history is well formed");
    (seed, output, findings)
}
