//! Orchestration: everything that runs scenarios and decides. One `lockstorm scenario`
//! invocation (run every seed, check each history, decide) is here; the analysis over
//! a folder of scenarios is in [`analysis`]; a grid of parameter values in [`sweep`]
//! (its axes in [`crate::scenario::axis`]); splitting a run over machines in [`shard`] and putting it
//! back together in [`merge`]; local threads in [`pool`]. What a run decided is an
//! [`Outcome`] ([`crate::outcome`]), which `report/` renders without running anything.
//!
//! The scenario's backend picks the driver. On the simulator, seeds run on `--jobs`
//! threads ([`pool`]), each in its own deterministic simulation, judged event by event
//! as it goes ([`judge_seed`]): only their findings are kept, and the seed whose report
//! is written (the first with a finding, else the first seed) is simulated once more
//! for its history, which the determinism makes identical (a single seed keeps its
//! history from the first run). Given a file, that history streams there as it is made
//! ([`stream_seed`]), so a long run needs memory for the checker's records, not for
//! its events; otherwise it is kept in memory ([`run_seed`]). Both paths give the same
//! findings and report. On real Redis seeds run one after another
//! (each starts its own nodes, and streams its history to the report folder as it
//! goes) and the reported seed's history is kept, since a real run cannot be replayed.
//!
//! A stop requested of lockstorm ([`crate::shutdown`]) ends the run early: seeds not
//! started are skipped, the seed in progress stops where it is, and the [`Outcome`] is
//! partial (`partial` says why). A violation found before the stop is still one.

pub mod analysis;
pub mod bench;
mod evidence;
pub mod matrix;
pub mod merge;
pub mod peer;
pub mod pool;
pub mod shard;
pub mod sim_bench;
pub mod sweep;

pub use evidence::{save, SaveError};

pub use crate::outcome::{History, Outcome, SeedResult, Verdict};
/// Sweep axes live with the scenario keys they vary; kept here under their old path.
pub use crate::scenario::axis;

use crate::checker::{self, Checker, Findings, Malformed};
use crate::history::Event;
use crate::lifecycle::RunOutput;
use crate::real::{RealError, RealOptions};
use crate::scenario::{Backend, Expect, Scenario};
use crate::sim;
use crate::sink::{JsonlFile, Sink};
use std::path::Path;
use std::time::Instant;

/// Runs one seed with its history in memory: simulate, then check.
/// `progress(now_us, duration_us)` follows virtual time.
pub fn run_seed(
    scenario: &Scenario,
    seed: u64,
    progress: &mut dyn FnMut(u64, u64),
) -> (SeedResult, RunOutput, Findings) {
    let started = Instant::now();
    let output = sim::run_with_progress(scenario, seed, progress);
    judge(seed, output, started)
}

/// Runs one seed and judges each event as the simulator makes it, keeping none: only
/// the result is wanted. The nodes' `node` lines stay on: what a fault touched (the keys
/// a crash took down, the expiries a clock moved) is judged from them, so a seed judged
/// here and the same seed reported in full get the same verdict.
pub fn judge_seed(scenario: &Scenario, seed: u64) -> SeedResult {
    let started = Instant::now();
    let mut judge = Judge::default();
    let output = sim::run_into(scenario, seed, &mut judge, &mut |_, _| {});
    let findings = judge.finish(seed);
    result(seed, &output, &findings, started)
}

/// Runs one seed, writing its history to `path` as it is made and judging each event
/// as it goes: no event is kept in memory. The same result, findings and
/// history (in the file) as [`run_seed`]. Returns how many events the history has.
pub fn stream_seed(
    scenario: &Scenario,
    seed: u64,
    path: &Path,
    progress: &mut dyn FnMut(u64, u64),
) -> std::io::Result<(SeedResult, RunOutput, Findings, usize)> {
    let started = Instant::now();
    let mut sink = Streamed {
        file: JsonlFile::create(path)?,
        judge: Judge::default(),
    };
    let output = sim::run_into(scenario, seed, &mut sink, progress);
    let Streamed { file, judge } = sink;
    file.finish()?;
    let events = judge.events;
    let findings = judge.finish(seed);
    Ok((
        result(seed, &output, &findings, started),
        output,
        findings,
        events,
    ))
}

/// The checker as a sink: each event is judged as it is made, and none is kept.
#[derive(Default)]
struct Judge {
    checker: Checker,
    events: usize,
    malformed: Option<Malformed>,
}

impl Judge {
    fn push_ref(&mut self, event: &Event) {
        self.events += 1;
        if self.malformed.is_none() {
            if let Err(e) = self.checker.observe(event) {
                self.malformed = Some(e);
            }
        }
    }

    /// The findings; a malformed history is the driver's bug, not the input's.
    fn finish(self, seed: u64) -> Findings {
        if let Some(e) = self.malformed {
            panic!("seed {seed}: the driver wrote a malformed history: {e}");
        }
        self.checker.finish()
    }
}

impl Sink for Judge {
    fn push(&mut self, event: Event) {
        self.push_ref(&event);
    }
}

/// A history going to its file and to the checker at once.
struct Streamed {
    file: JsonlFile,
    judge: Judge,
}

impl Sink for Streamed {
    fn push(&mut self, event: Event) {
        self.judge.push_ref(&event);
        self.file.push(event);
    }
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
    let mut judge = Judge::default();
    for e in &output.history {
        judge.push_ref(e);
    }
    let findings = judge.finish(seed);
    (result(seed, &output, &findings, started), output, findings)
}

/// What one seed's findings say, with the driver's work; `started` is when the run began.
fn result(seed: u64, output: &RunOutput, findings: &Findings, started: Instant) -> SeedResult {
    // A seed cut short never got to the faults planned after the stop.
    let plan = (!output.stopped).then_some(&output.plan[..]);
    let (verdict, not_exercised) = Verdict::judge(findings, plan);
    SeedResult {
        seed,
        verdict,
        not_exercised,
        safe: findings.is_safe(),
        live: findings.is_live(),
        violations: findings.violations.len(),
        liveness_findings: findings.liveness.len(),
        resource_violations: findings.resource_violations.len() + findings.fence_regressions.len(),
        stats: findings.stats.clone(),
        sim: output.stats,
        sim_secs: started.elapsed().as_secs_f64(),
        partial: output.stopped,
        touched: crate::outcome::touched_lines(&findings.exercise),
    }
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
        // The simulator's model of a Sentinel deployment or a cluster (a master, a replica
        // and a timed failover), or one line on what it leaves out: never a plain node
        // instead.
        Backend::Sim if scenario.deployment().is_some() => {
            let modeled = scenario
                .deployment_on_simulator()
                .map_err(|why| match scenario.cluster {
                    Some(_) => RealError::Cluster(why),
                    None => RealError::Sentinel(why),
                })?;
            run_sim(&modeled, seeds, jobs, real.history_path.as_deref(), progress)
        }
        Backend::Docker if scenario.sentinel.is_some() => Err(RealError::Sentinel(
            "[sentinel] runs local redis-server processes: use backend = \"redis\"".into(),
        )),
        Backend::Docker if scenario.cluster.is_some() => Err(RealError::Cluster(
            "[cluster] runs local redis-server processes: use backend = \"redis\"".into(),
        )),
        Backend::Sim => run_sim(scenario, seeds, jobs, real.history_path.as_deref(), progress),
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
    // A real run cannot be replayed: the first seed of each rank is kept (a finding, not
    // exercised, the rest), and [`reported_seed`] picks among them at the end.
    let mut kept: [Option<(u64, RunOutput, Findings)>; 3] = [None, None, None];
    let mut partial = None;
    for (i, &seed) in seeds.iter().enumerate() {
        if crate::shutdown::requested().is_some() {
            partial = Some(stop_reason(i, seeds.len()));
            break;
        }
        let (result, output, findings) = run_seed_real(scenario, seed, options)?;
        let slot = &mut kept[result.report_rank() as usize];
        if slot.is_none() {
            *slot = Some((seed, output, findings));
        }
        let stopped = result.partial;
        results.push(result);
        if stopped {
            partial = Some(stop_reason(i, seeds.len()));
            break;
        }
        progress((i + 1) as f64 / seeds.len() as f64);
    }
    let wanted = (!results.is_empty()).then(|| reported_seed(&results, scenario.min_exercised));
    let reported = kept
        .into_iter()
        .flatten()
        .find(|(seed, _, _)| Some(*seed) == wanted);
    let (seed, output, findings) = reported.unwrap_or_else(|| nothing_run(seeds[0]));
    let history = History::Memory(output.history);
    let mut outcome = decide(scenario, results, seed, history, output.plan, findings, partial);
    outcome.worker_logs = output.worker_logs;
    outcome.node_logs = output.node_logs;
    Ok(outcome)
}

/// Runs `seeds` on the simulator, on `jobs` threads. A stop request ends it early:
/// the seeds that finished decide, and no history is reported (there is no time to
/// simulate the reported seed again). Given `history_path`, the reported seed's
/// history streams there as it is made and is not kept in memory.
fn run_sim(
    scenario: &Scenario,
    seeds: &[u64],
    jobs: usize,
    history_path: Option<&Path>,
    progress: &(dyn Fn(f64) + Sync),
) -> Result<Outcome, RealError> {
    if let [seed] = seeds {
        // One seed: its first run is the report's, no need to simulate it twice.
        let mut follow_time = |now_us: u64, total_us: u64| progress(now_us as f64 / total_us.max(1) as f64);
        let (result, history, findings, plan) =
            reported_run(scenario, *seed, history_path, &mut follow_time)?;
        let partial = result.partial.then(|| stop_reason(0, 1));
        return Ok(decide(
            scenario,
            vec![result],
            *seed,
            history,
            plan,
            findings,
            partial,
        ));
    }
    let seeds_run = sim_seeds(scenario, seeds, jobs, progress);
    if seeds_run.len() < seeds.len() {
        let partial = Some(stop_reason(seeds_run.len(), seeds.len()));
        let reported = if seeds_run.is_empty() {
            seeds[0]
        } else {
            reported_seed(&seeds_run, scenario.min_exercised)
        };
        let (_, output, findings) = nothing_run(reported);
        let history = History::Memory(output.history);
        return Ok(decide(
            scenario,
            seeds_run,
            reported,
            history,
            output.plan,
            findings,
            partial,
        ));
    }
    let reported = reported_seed(&seeds_run, scenario.min_exercised);
    let (_, history, findings, plan) = reported_run(scenario, reported, history_path, &mut |_, _| {})?;
    Ok(decide(
        scenario, seeds_run, reported, history, plan, findings, None,
    ))
}

/// The reported seed's run: its history streamed to `path`, or in memory.
fn reported_run(
    scenario: &Scenario,
    seed: u64,
    path: Option<&Path>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<(SeedResult, History, Findings, Vec<crate::fault::PlannedFault>), RealError> {
    match path {
        None => {
            let (result, output, findings) = run_seed(scenario, seed, progress);
            Ok((result, History::Memory(output.history), findings, output.plan))
        }
        Some(path) => {
            let (result, output, findings, events) = stream_seed(scenario, seed, path, progress)
                .map_err(|e| RealError::Io(format!("cannot write {}", path.display()), e))?;
            let history = History::File {
                path: path.to_path_buf(),
                events,
            };
            Ok((result, history, findings, output.plan))
        }
    }
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
            let result = judge_seed(scenario, seed);
            (!result.partial).then_some(result)
        },
        |finished| progress(finished as f64 / seeds.len() as f64),
    )
    .into_iter()
    .flatten()
    .collect()
}

/// The seed a run reports in full: the first with a finding (unsafe, not live, or a
/// stale write); else, when the run reads not exercised, the first seed not exercised
/// (its report shows what its faults missed); else the first exercised seed (a safe
/// run's report shows what a safe seed rests on). Each is the first of its rank
/// ([`SeedResult::report_rank`]), which is what a real run keeps as it goes.
pub fn reported_seed(results: &[SeedResult], min_share: f64) -> u64 {
    let first = |rank: u8| results.iter().find(|r| r.report_rank() == rank);
    let idle = crate::outcome::run_verdict(results, min_share) == Some(Verdict::NotExercised);
    first(2)
        .or(if idle { first(1) } else { first(0) })
        .or(first(1))
        .unwrap_or(&results[0])
        .seed
}

/// The outcome of simulated seeds whose results are known: the reported seed is
/// simulated again for its history (only findings were kept per seed; the
/// determinism makes the rerun give the same history), and the verdict decided.
pub fn reported_outcome(scenario: &Scenario, results: Vec<SeedResult>, reported: u64) -> Outcome {
    let (_, output, findings) = run_seed(scenario, reported, &mut |_, _| {});
    let history = History::Memory(output.history);
    decide(scenario, results, reported, history, output.plan, findings, None)
}

/// The verdict over every seed, with the reported seed's evidence.
fn decide(
    scenario: &Scenario,
    seeds_run: Vec<SeedResult>,
    reported: u64,
    history: History,
    plan: Vec<crate::fault::PlannedFault>,
    findings: Findings,
    partial: Option<String>,
) -> Outcome {
    let safe = seeds_run.iter().all(|r| r.safe);
    let live = seeds_run.iter().all(|r| r.live);
    let availability_ok = scenario
        .min_availability
        .is_none_or(|min| seeds_run.iter().all(|r| r.stats.availability >= min));
    // A run that proved nothing is neither of the verdicts a scenario can expect.
    let verdict = crate::outcome::run_verdict(&seeds_run, scenario.min_exercised);
    let verdict_ok = match scenario.expect {
        Expect::Safe => verdict == Some(Verdict::Safe),
        Expect::Unsafe => verdict == Some(Verdict::Unsafe),
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
    let not_exercised = crate::outcome::not_exercised_reason(&seeds_run, scenario.min_exercised);
    Outcome {
        not_exercised,
        min_exercised: scenario.min_exercised,
        seeds: seeds_run,
        reported_seed: reported,
        history,
        findings,
        plan,
        worker_logs: None,
        node_logs: Vec::new(),
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
        node_logs: Vec::new(),
        stopped: true,
    };
    let findings = checker::check(&[]).expect("an empty history is well formed");
    (seed, output, findings)
}
