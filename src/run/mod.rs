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
//! once more for its history, which the determinism makes identical. On real Redis
//! seeds run one after another (each starts its own nodes) and the reported seed's
//! history is kept, since a real run cannot be replayed.

pub mod analysis;
pub mod axis;
pub mod bench;
pub mod matrix;
pub mod merge;
mod outcome;
pub mod pool;
pub mod shard;
pub mod sweep;

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
    for (i, &seed) in seeds.iter().enumerate() {
        let (result, output, findings) = run_seed_real(scenario, seed, options)?;
        let finding = result.has_finding();
        if reported.is_none() || (finding && !results.iter().any(SeedResult::has_finding)) {
            reported = Some((seed, output, findings));
        }
        results.push(result);
        progress((i + 1) as f64 / seeds.len() as f64);
    }
    let (seed, output, findings) = reported.expect("at least one seed");
    Ok(decide(scenario, results, seed, output, findings))
}

/// Runs `seeds` on the simulator, on `jobs` threads.
fn run_sim(scenario: &Scenario, seeds: &[u64], jobs: usize, progress: &(dyn Fn(f64) + Sync)) -> Outcome {
    let seeds_run = sim_seeds(scenario, seeds, jobs, progress);
    let reported = reported_seed(&seeds_run);
    reported_outcome(scenario, seeds_run, reported)
}

/// The result of every seed, simulated on `jobs` threads, in seed order.
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
            let mut follow_time = |now_us: u64, total_us: u64| {
                if seeds.len() == 1 {
                    progress(now_us as f64 / total_us.max(1) as f64);
                }
            };
            run_seed(scenario, seed, &mut follow_time).0
        },
        |finished| progress(finished as f64 / seeds.len() as f64),
    )
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
    decide(scenario, results, reported, output, findings)
}

/// The verdict over every seed, with the reported seed's evidence.
fn decide(
    scenario: &Scenario,
    seeds_run: Vec<SeedResult>,
    reported: u64,
    output: RunOutput,
    findings: Findings,
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
    let as_expected = verdict_ok && (live || !scenario.expect_live) && availability_ok && resource_ok;
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
    }
}
