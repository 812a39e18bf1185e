//! The analysis: every scenario of a folder run over a few seeds, each reported in full,
//! and one index that states the verdict and the evidence for each (rendered by
//! `crate::report::analysis`).
//!
//! `lockstorm analysis` regenerates reports/analysis/ from scenarios/. A simulated run's
//! history is kept whole when it is short ([`HISTORY_KEEP_QUIET_EVENTS`]); otherwise
//! cut to the windows its stories cite ([`Keep::Cited`]), or not kept when they cite
//! none, and the rerun command in the report writes it again, byte for byte, so the
//! committed folder stays small. A real run cannot be rerun byte for byte: its history is
//! always kept whole.

use super::pool;
use crate::report::analysis::{write_index, Case, Source};
use crate::report::folder::RunFolder;
use crate::report::{write_with, Keep, Rendered, ReportError};
use crate::scenario::{Scenario, ScenarioError};
use std::path::{Path, PathBuf};

/// A simulated history of at most this many events is kept whole: its page links to it
/// whatever it cites, and the rerun writes it again.
pub const HISTORY_KEEP_QUIET_EVENTS: usize = 2_000;

/// What the committed analysis keeps of this run's history.jsonl (see the module doc).
fn keep_history(scenario: &Scenario, outcome: &super::Outcome) -> Keep {
    if scenario.backend != crate::scenario::Backend::Sim || outcome.history.len() <= HISTORY_KEEP_QUIET_EVENTS
    {
        return Keep::Whole;
    }
    keep_cited(outcome)
}

/// The windows of its history that a report cites, when it has findings to cite: what
/// the library matrix keeps too.
pub fn keep_cited(outcome: &super::Outcome) -> Keep {
    match cites_history(outcome) {
        true => Keep::Cited,
        false => Keep::Nothing,
    }
}

/// Whether the report of `outcome` may cite its history's lines: a violation, a stale
/// write, a fencing regression or a liveness finding.
fn cites_history(outcome: &super::Outcome) -> bool {
    let f = &outcome.findings;
    !f.violations.is_empty()
        || !f.resource_violations.is_empty()
        || !f.fence_regressions.is_empty()
        || !f.liveness.is_empty()
}

#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    #[error("cannot list {path}: {error}")]
    List { path: String, error: std::io::Error },
    #[error("no scenario (*.toml) in {0}")]
    Empty(String),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Report(#[from] ReportError),
    /// A scenario with `backend = "redis"` could not run (its environment).
    #[error("{0}")]
    Real(String),
    #[error("stopped by {0} before every scenario ran")]
    Stopped(String),
}

/// The `#` comment lines a scenario file starts with, joined.
fn leading_comment(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| l.trim_start_matches('#').trim())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `lockstorm analysis`'s defaults: the scenario folder, the output folder and the seeds
/// per scenario (the regenerate command names only what differs from them).
pub const DEFAULT_SCENARIOS: &str = "scenarios";
pub const DEFAULT_OUT: &str = "reports/analysis";
pub const DEFAULT_SEEDS: u64 = 10;

/// Runs every `*.toml` in `scenarios` over `seeds` seeds (from each file's own seed),
/// writes each report into `out/<name>/` and the index into `out/`.
pub fn run_all(
    scenarios: &Path,
    out: &Path,
    seeds: u64,
    progress: &dyn Fn(&str),
) -> Result<Vec<Case>, AnalysisError> {
    run_all_with(scenarios, out, seeds, progress, &mut |_, _, _| {})
}

/// Like [`run_all`]; `each` sees every scenario's run once its report is written: the
/// scenario, its outcome and what the report rendered (for `--junit`).
pub fn run_all_with(
    scenarios: &Path,
    out: &Path,
    seeds: u64,
    progress: &dyn Fn(&str),
    each: &mut dyn FnMut(&Scenario, &super::Outcome, &Rendered),
) -> Result<Vec<Case>, AnalysisError> {
    let list_err = |error| AnalysisError::List {
        path: scenarios.display().to_string(),
        error,
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios)
        .map_err(list_err)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()
        .map_err(list_err)?;
    files.retain(|p| p.extension().is_some_and(|e| e == "toml"));
    files.sort();
    if files.is_empty() {
        return Err(AnalysisError::Empty(scenarios.display().to_string()));
    }
    // The folder is made ready (or refused) before anything runs: an earlier analysis's
    // index and scenario folders go, a file or folder of the same name that no manifest
    // vouches for is refused, the rest (a `real/` analysis with its own manifest) stays.
    let loaded: Vec<(PathBuf, Scenario)> = files
        .into_iter()
        .map(|file| {
            let scenario = Scenario::load(&file)?;
            Ok((file, scenario))
        })
        .collect::<Result<_, AnalysisError>>()?;
    let mut names: Vec<String> = vec!["README.md".into(), "index.html".into()];
    names.extend(loaded.iter().map(|(_, s)| format!("{}/", s.name)));
    let root = RunFolder::prepare_shared(out, &names)?;
    let mut cases = Vec::new();
    let mut real = false;
    for (file, scenario) in loaded {
        if let Some(sig) = crate::shutdown::requested() {
            return Err(AnalysisError::Stopped(sig.to_string()));
        }
        real |= scenario.backend != crate::scenario::Backend::Sim;
        progress(&scenario.name);
        let list: Vec<u64> = (0..seeds).map(|i| scenario.seed.wrapping_add(i)).collect();
        let outcome = super::run(
            &scenario,
            &list,
            pool::all_cores(),
            &crate::real::RealOptions::default(),
            &|_| {},
        )
        .map_err(|e| AnalysisError::Real(e.to_string()))?;
        let dir = out.join(&scenario.name);
        let keep = keep_history(&scenario, &outcome);
        let folder = RunFolder::prepare(&dir)?;
        let rendered = write_with(
            &dir,
            &scenario,
            &outcome,
            keep,
            crate::report::Plots::All,
            crate::report::interactive::Budget::COMMITTED,
        )?;
        folder.finish()?;
        each(&scenario, &outcome, &rendered);
        let stats = &outcome.findings.stats;
        cases.push(Case {
            name: scenario.name.clone(),
            about: leading_comment(&file),
            file,
            expect: scenario.expectation(),
            algorithm: scenario.algorithm.kind.name(),
            departures: scenario.algorithm.departures(scenario.nodes),
            faults: scenario.fault_kinds(),
            fence_rounds: scenario
                .algorithm
                .fencing
                .then_some(scenario.algorithm.fence_rounds),
            rests_on: outcome.rests_on(),
            verdict: outcome.verdict(),
            not_exercised: outcome.not_exercised.clone(),
            live: outcome.live,
            resource: if outcome.findings.resource.writes == 0 {
                "no writes"
            } else if outcome.resource_safe {
                "safe"
            } else {
                "unsafe"
            },
            stale_writes: outcome.findings.resource_violations.len(),
            fence_regressions: outcome.findings.fence_regressions.len(),
            liveness: liveness_kinds(&outcome.findings.liveness),
            as_expected: outcome.as_expected,
            seeds: outcome.seeds.len(),
            unsafe_seeds: outcome.seeds.iter().filter(|s| !s.safe).count(),
            not_exercised_seeds: outcome
                .seeds
                .iter()
                .filter(|s| s.verdict == super::Verdict::NotExercised)
                .count(),
            reported_seed: outcome.reported_seed,
            violations: outcome.findings.violations.len(),
            availability: 1.0 - stats.unavailable_share,
            workload_us: rendered.availability["workload_us"].as_u64().unwrap_or(0),
            acquire_success: stats.availability,
            acquires: stats.acquires,
            latency_p99_us: stats.latency_p99_us,
            story: rendered.stories.into_iter().next(),
            timeline: rendered
                .plots
                .first()
                .map_or_else(|| "timeline".into(), |p| p.stem.clone()),
            rerun: scenario.rerun_command(outcome.reported_seed),
        });
    }
    let mut command = String::from("cargo run --release -- analysis");
    if scenarios != Path::new(DEFAULT_SCENARIOS) {
        command.push_str(&format!(" --scenarios {}", scenarios.display()));
    }
    if out != Path::new(DEFAULT_OUT) {
        command.push_str(&format!(" --out {}", out.display()));
    }
    if seeds != DEFAULT_SEEDS {
        command.push_str(&format!(" --seeds {seeds}"));
    }
    let source = Source {
        folder: format!("{}/", scenarios.display()),
        command,
        real,
    };
    write_index(out, &cases, seeds, &source)?;
    root.finish()?;
    Ok(cases)
}

/// "kind ×n" for each kind of liveness finding, or "none".
pub(crate) fn liveness_kinds(findings: &[crate::checker::LivenessFinding]) -> String {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for f in findings {
        *counts.entry(f.kind()).or_default() += 1;
    }
    if counts.is_empty() {
        return "none".into();
    }
    counts
        .iter()
        .map(|(k, n)| format!("{k} ×{n}"))
        .collect::<Vec<_>>()
        .join(", ")
}
