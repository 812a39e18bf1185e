//! The output folder of a run: summary.json, history.jsonl, plots, the violation
//! narratives and index.html.
//!
//! The last step of the flow. summary.json holds the verdict per seed, the findings of
//! the reported seed, its fault plan and the command that reruns it. The rest is
//! rendered from the reported seed's history and its findings ([`render`]), which is
//! also how `lockstorm report DIR` redraws a folder from its history.jsonl
//! ([`rerender`]). [`view`] gathers what is shown, [`plots`] draws it, [`narrative`]
//! tells each violation ([`causes`]: which faults, [`why`]: in the lock's own terms) and
//! [`stale`] each stale write, [`html`] puts it on one page; [`analysis`] writes the index
//! of reports/analysis/; [`matrix`] the library matrix; [`sweep`] a sweep's CSV and phase
//! diagrams. Wall-clock figures go to timing.json ([`timing`]), so that summary.json
//! depends only on the seeds run. [`provenance`] says what made each page (lockstorm's
//! version and commit, the date, the redis-server, the command); [`logs`] keeps the
//! workers' and the redis-servers' logs beside the history, capped.

pub mod analysis;
pub mod anomaly;
pub mod answer;
pub mod banner;
pub mod case;
pub mod causes;
pub mod fence;
pub mod folder;
pub mod held;
pub mod html;
pub mod interactive;
pub mod junit;
pub mod lines;
pub mod logs;
pub mod matrix;
pub mod matrix_page;
pub mod narrative;
pub mod node_order;
pub mod plots;
pub mod provenance;
pub mod severity;
pub mod site;
pub mod stale;
pub mod sweep;
pub mod timing;
pub mod view;
pub mod waits;
pub mod why;
pub mod words;

use crate::checker::{
    self, Findings, LivenessFinding, Malformed, ResourceStats, ResourceViolation, Stats, Violation,
};
use crate::fault::PlannedFault;
use crate::history::{HistoryError, HistoryFile};
use crate::outcome::{History, Outcome, SeedResult};
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
    /// `unsafe`, `safe`, `not_exercised` (no violation, but the run proved nothing) or
    /// `unknown` (no seed finished); each seed has its own in `seeds`.
    pub verdict: &'static str,
    /// Why the verdict is not exercised: how many seeds, and the first one's reason.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_exercised: Option<&'a str>,
    /// How many seeds were exercised, of how many, and how many a safe verdict needs
    /// (the share `min_exercised` of them): the one rule of `crate::outcome`.
    pub exercised: crate::outcome::Exercised,
    pub min_exercised: f64,
    pub live: bool,
    pub as_expected: bool,
    /// The run stopped before it ended (a signal, an error): the verdict covers the
    /// history up to there, and `partial_reason` says why.
    pub partial: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_reason: Option<&'a str>,
    pub min_availability: Option<f64>,
    pub seeds_run: Vec<u64>,
    pub seeds: &'a [SeedResult],
    pub reported_seed: u64,
    pub rerun: String,
    /// The `--set` overrides the run applied to its scenario file, in order (what
    /// `shrink` of the report folder applies again).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    pub overrides: &'a [String],
    /// The command that runs every seed of the run again, when they were consecutive
    /// and more than one ([`Scenario::run_command`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The command that shrinks the reported seed to a minimal scenario, when it has a
    /// finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shrink: Option<String>,
    /// The reported seed's violations, the [`SUMMARY_VIOLATIONS`] longest of them: each
    /// list of findings is worst first ([`severity`]).
    pub violations: Vec<&'a Violation>,
    pub violations_total: usize,
    pub expect_resource: Option<Expect>,
    /// Whose expectation `expect` is: `scenario` (the file's) or `prediction` (a
    /// library's, in a matrix cell); pages say which.
    pub expect_by: &'static str,
    /// The guarded resource: "safe" unless a stale write got through on some seed.
    pub resource_verdict: &'static str,
    pub resource_violations: Vec<&'a ResourceViolation>,
    pub resource: &'a ResourceStats,
    pub fence_regressions: Vec<&'a crate::checker::resource::FenceRegression>,
    pub liveness: Vec<&'a LivenessFinding>,
    /// Liveness findings of the reported seed set aside because they overlap a stall of
    /// lockstorm's own driver (the real backend): not counted in `live`, listed so a
    /// reader knows they exist.
    pub liveness_set_aside: &'a [LivenessFinding],
    pub stats: &'a Stats,
    pub fault_plan: &'a [PlannedFault],
    /// The lock library the clients ran, when they were worker processes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<WorkerSummary<'a>>,
    /// The reported seed's faults and what each touched of the lock.
    pub exercise: &'a crate::checker::Exercise,
    /// What was tested: lockstorm, redis-server, the worker library.
    pub versions: Versions,
}

/// summary.json's `versions`, as Jepsen's store records what it tested.
#[derive(Serialize)]
pub struct Versions {
    pub lockstorm: &'static str,
    /// The commit lockstorm was built from ([`provenance::COMMIT`]): one binary writes
    /// the same, so the same seeds still give the same summary.json.
    pub commit: &'static str,
    /// When a real run's report was written (UTC). A real run is not replayed byte for
    /// byte, so its summary may carry the date; a simulated run's is in timing.json, so
    /// that the same seeds still write the same summary.json and page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date_utc: Option<String>,
    /// The local redis-server's `--version` (`null` on the simulator, in containers and
    /// for servers lockstorm did not start).
    pub redis_server: Option<String>,
    /// The worker library and its version, as its `hello_ok` named them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub library: Option<String>,
}

impl Versions {
    pub fn of(scenario: &Scenario, outcome: &Outcome) -> Versions {
        let local = scenario.backend == crate::scenario::Backend::Redis
            && matches!(scenario.targets, crate::scenario::Targets::Local);
        Versions {
            lockstorm: provenance::VERSION,
            commit: provenance::COMMIT,
            date_utc: (scenario.backend != crate::scenario::Backend::Sim).then(provenance::now_utc),
            redis_server: local.then(crate::real::server::version).flatten(),
            library: match library(outcome) {
                (Some(l), Some(v)) if !v.is_empty() => Some(format!("{l} {v}")),
                (Some(l), _) => Some(l.to_string()),
                _ => None,
            },
        }
    }
}

/// summary.json's `worker`: the command, how it was chosen, and the library and version
/// its `hello_ok` named (`null` when the run stopped before any worker answered).
#[derive(Serialize)]
pub struct WorkerSummary<'a> {
    pub command: &'a [String],
    pub origin: &'a crate::worker::WorkerOrigin,
    pub library: Option<&'a str>,
    pub version: Option<&'a str>,
}

/// The library and version the run's workers named.
fn library(outcome: &Outcome) -> (Option<&str>, Option<&str>) {
    match outcome.worker_logs.as_ref().and_then(|l| l.library.as_ref()) {
        Some((library, version)) => (Some(library), Some(version)),
        None => (None, None),
    }
}

pub fn summary<'a>(scenario: &'a Scenario, outcome: &'a Outcome) -> Summary<'a> {
    let worst = severity::Worst::of(&outcome.findings);
    Summary {
        scenario: &scenario.name,
        file: scenario.path.as_ref().map(|p| p.display().to_string()),
        backend: scenario.backend,
        expect: scenario.expect,
        expect_live: scenario.expect_live,
        verdict: outcome.verdict(),
        not_exercised: outcome.not_exercised.as_deref(),
        exercised: outcome.exercised(),
        min_exercised: outcome.min_exercised,
        live: outcome.live,
        as_expected: outcome.as_expected,
        partial: outcome.partial.is_some(),
        partial_reason: outcome.partial.as_deref(),
        min_availability: scenario.min_availability,
        seeds_run: outcome.seeds.iter().map(|s| s.seed).collect(),
        seeds: &outcome.seeds,
        reported_seed: outcome.reported_seed,
        rerun: scenario.rerun_command(outcome.reported_seed),
        overrides: &scenario.overrides,
        command: scenario.run_command(&outcome.seeds.iter().map(|s| s.seed).collect::<Vec<_>>()),
        shrink: has_finding(outcome)
            .then(|| scenario.shrink_command(outcome.reported_seed).ok())
            .flatten(),
        worker: scenario.clients.worker.as_ref().map(|w| WorkerSummary {
            command: &w.argv,
            origin: &w.origin,
            library: library(outcome).0,
            version: library(outcome).1,
        }),
        violations: first_violations(worst.violations),
        violations_total: outcome.findings.violations.len(),
        expect_resource: scenario.expect_resource,
        expect_by: scenario.expect_by.id(),
        resource_verdict: if outcome.resource_safe { "safe" } else { "unsafe" },
        resource_violations: worst.stale,
        resource: &outcome.findings.resource,
        fence_regressions: worst.regressions,
        liveness: worst.liveness,
        liveness_set_aside: &outcome.findings.liveness_set_aside,
        stats: &outcome.findings.stats,
        fault_plan: &outcome.plan,
        exercise: &outcome.findings.exercise,
        versions: Versions::of(scenario, outcome),
    }
}

/// Whether the reported seed has a finding worth shrinking.
fn has_finding(outcome: &Outcome) -> bool {
    let f = &outcome.findings;
    !f.is_safe() || !f.is_live() || !f.is_resource_safe()
}

/// summary.json lists at most this many violations (a long unsafe run has hundreds of
/// thousands); narrative.md and history.jsonl have the rest.
pub const SUMMARY_VIOLATIONS: usize = 1_000;

fn first_violations(mut worst: Vec<&Violation>) -> Vec<&Violation> {
    worst.truncate(SUMMARY_VIOLATIONS);
    worst
}

/// Why a report could not be written or re-rendered.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    #[error(transparent)]
    History(#[from] HistoryError),
    #[error("{path} is malformed: {error}")]
    Malformed { path: String, error: Malformed },
    #[error(transparent)]
    Plot(#[from] plots::PlotError),
    #[error("{path}: {message}")]
    Folder { path: String, message: String },
    /// A signal came after the run ended, while its report was written.
    #[error("stopped by {0} while the report was written; summary.json says the run is partial")]
    Stopped(String),
}

pub(crate) fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |error| ReportError::Io {
        path: path.display().to_string(),
        error,
    }
}

/// A plot written next to index.html.
#[derive(Clone, Debug)]
pub struct PlotInfo {
    /// File name without extension: `<stem>.svg`.
    pub stem: String,
    pub title: String,
    pub caption: String,
    pub width: u32,
}

/// What [`render`] wrote, for pages that link to it (the analysis).
pub struct Rendered {
    pub plots: Vec<PlotInfo>,
    pub stories: Vec<narrative::Story>,
    /// The stale writes' stories.
    pub stale: Vec<narrative::Story>,
    /// The stories of fencing tokens that did not grow, and of liveness findings.
    pub regressions: Vec<narrative::Story>,
    pub waits: Vec<narrative::Story>,
    /// summary.json's `availability_in_time` ([`availability_in_time`]).
    pub availability: serde_json::Value,
    /// What history.jsonl keeps.
    pub history: Kept,
}

/// summary.json's `availability_in_time` of the reported seed: where the workload's time
/// went (docs/availability.md). `available_share` is the share of the workload phase
/// during which a lock was held or could be acquired (no lock was free, wanted and
/// failing every attempt); `contended_share` the share during which some attempt failed
/// on a lock that was held (contention, shown apart, not counted against availability);
/// `calls_succeeded_share` is `stats.availability` under a name that says what it is.
pub fn availability_in_time(view: &view::RunView) -> serde_json::Value {
    let spent = view.time_spent();
    let workload_us = view.workload_end_us();
    let share = |us: u64| {
        if workload_us == 0 {
            0.0
        } else {
            us as f64 / workload_us as f64
        }
    };
    let (unavailable_us, contended_us) = (spent.unavailable_us(), spent.contended_us());
    serde_json::json!({
        "workload_us": workload_us,
        "available_share": 1.0 - share(unavailable_us),
        "unavailable_us": unavailable_us,
        "unavailable_share": share(unavailable_us),
        "contended_us": contended_us,
        "contended_share": share(contended_us),
        "calls_succeeded_share": view.findings.stats.availability,
    })
}

/// Adds each told finding's anomaly to summary.json: `anomaly` (`kind`, its `name`,
/// the evidence `lines`) on each violation and stale write that has a story, and
/// `anomalies`, how many findings of each kind.
pub fn add_anomalies(summary: &mut serde_json::Value, rendered: &Rendered) {
    let mut counts = std::collections::BTreeMap::<String, u64>::new();
    for (key, stories) in [
        ("violations", &rendered.stories),
        ("resource_violations", &rendered.stale),
    ] {
        for (i, story) in stories.iter().enumerate() {
            let Some(named) = &story.anomaly else {
                continue;
            };
            *counts.entry(named.kind.id()).or_default() += 1;
            if let Some(entry) = summary.get_mut(key).and_then(|v| v.get_mut(i)) {
                entry["anomaly"] = serde_json::json!({
                    "kind": named.kind,
                    "name": named.name(),
                    "lines": named.lines,
                });
            }
        }
    }
    if !counts.is_empty() {
        summary["anomalies"] = serde_json::json!(counts);
    }
}

/// How many violations narrative.md tells in full; the rest are listed on one line each.
const STORIES_IN_FULL: usize = 200;

/// Writes the whole report of a run into `dir`, creating it.
pub fn write(dir: &Path, scenario: &Scenario, outcome: &Outcome) -> Result<Rendered, ReportError> {
    write_with(
        dir,
        scenario,
        outcome,
        Keep::Whole,
        Plots::All,
        interactive::Budget::FULL,
    )
}

/// What a report keeps of its run's history.jsonl: the committed reports have a size
/// budget (tests/committed_reports.rs), and spend it on what their pages cite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    Whole,
    /// The windows the stories cite ([`crate::history::cut`]); the whole history when
    /// they cover it, none when they cite no line.
    Cited,
    /// None: the rerun command writes it again.
    Nothing,
}

/// What a report kept of its history, as its page says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kept {
    Whole,
    /// `windows` of the `lines` lines, at their own line numbers; the rest blank.
    Cut {
        windows: Vec<std::ops::RangeInclusive<usize>>,
        lines: usize,
    },
    Not,
}

impl Keep {
    /// What `self` keeps of a history of `lines` lines whose pages cite `cited`.
    fn resolve(self, lines: usize, cited: &[std::ops::RangeInclusive<usize>]) -> Kept {
        use crate::history::cut;
        match self {
            Keep::Whole => Kept::Whole,
            Keep::Nothing => Kept::Not,
            Keep::Cited => {
                let windows = cut::windows(cited, lines);
                match (windows.is_empty(), cut::kept_lines(&windows) + 1 >= lines) {
                    (true, _) => Kept::Not,
                    (false, true) => Kept::Whole,
                    (false, false) => Kept::Cut { windows, lines },
                }
            }
        }
    }
}

/// The history lines a run's narrative.md and index.html (`md`, `page`) cite, which a
/// cut history keeps ([`Keep::Cited`]): every citation in the page's text, as
/// [`lines::for_text`] reads it (not the interactive timeline's links, a browsing aid).
pub fn cited(md: &str, page: &str) -> Vec<std::ops::RangeInclusive<usize>> {
    let mut cited = crate::history::cut::cited_in(md);
    lines::for_text(page, |text| cited.extend(crate::history::cut::cited_in(text)));
    cited
}

/// Like [`write`], keeping of history.jsonl what `keep` says (a committed report keeps
/// what its stories cite, and the rerun command writes the rest again), its timeline
/// drawing what `budget` allows (the analysis and the library matrix, whose pages are
/// committed by the hundred: [`interactive::Budget::COMMITTED`]).
pub fn write_with(
    dir: &Path,
    scenario: &Scenario,
    outcome: &Outcome,
    keep_history: Keep,
    plots: Plots,
    budget: interactive::Budget,
) -> Result<Rendered, ReportError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    // The logs first: the page lists them. A report cut for the committed reports'
    // budget keeps less of each, and no server logs where it keeps no history (a cell
    // with no finding: its rerun command writes them again).
    let (log_bytes, nodes) = match keep_history {
        Keep::Whole => (logs::KEEP_BYTES, &outcome.node_logs[..]),
        Keep::Cited => (logs::KEEP_BYTES_COMMITTED, &outcome.node_logs[..]),
        Keep::Nothing => (logs::KEEP_BYTES_COMMITTED, &[][..]),
    };
    logs::write(dir, outcome.worker_logs.as_ref(), nodes, log_bytes)?;
    let mut summary = serde_json::to_value(summary(scenario, outcome)).map_err(|e| ReportError::Io {
        path: dir.join("summary.json").display().to_string(),
        error: e.into(),
    })?;
    let rendered = if outcome.partial.is_some() && outcome.history.is_empty() {
        // Stopped before the reported seed's history was made: the summary is all.
        Rendered {
            plots: Vec::new(),
            stories: Vec::new(),
            stale: Vec::new(),
            regressions: Vec::new(),
            waits: Vec::new(),
            availability: serde_json::Value::Null,
            history: Kept::Not,
        }
    } else {
        write_evidence(dir, &summary, outcome, keep_history, plots, budget)?
    };
    add_anomalies(&mut summary, &rendered);
    if !rendered.availability.is_null() {
        summary["availability_in_time"] = rendered.availability.clone();
    }
    // Last, and only once everything it vouches for is on disk: until then the folder
    // keeps the placeholder that says the run is partial.
    stopped_before_summary(&summary)?;
    write_json(&dir.join("summary.json"), &summary)?;
    Ok(rendered)
}

/// A signal that came after the run ended stops the report before its summary: the
/// placeholder (partial) stays, and lockstorm exits with the signal's status.
fn stopped_before_summary(summary: &serde_json::Value) -> Result<(), ReportError> {
    match crate::shutdown::requested() {
        Some(sig) if summary["partial"].as_bool() != Some(true) => Err(ReportError::Stopped(sig.name())),
        _ => Ok(()),
    }
}

/// The plots, narrative.md and index.html, then history.jsonl as much of it as
/// `keep_history` keeps of what they cite.
fn write_evidence(
    dir: &Path,
    summary: &serde_json::Value,
    outcome: &Outcome,
    keep_history: Keep,
    which: Plots,
    budget: interactive::Budget,
) -> Result<Rendered, ReportError> {
    let path = dir.join("history.jsonl");
    match &outcome.history {
        History::Memory(events) => {
            // Whole first, so a report stopped while it renders leaves the history; then
            // cut to what the pages cite, or removed.
            if keep_history != Keep::Nothing {
                keep_file(&path, &Kept::Whole, |out| {
                    crate::history::write_jsonl(events, std::io::BufWriter::new(out))
                })?;
            }
            let view = view::RunView::new(events, &outcome.findings);
            let rendered = render(dir, summary, &view, keep_history, which, budget)?;
            cut_file(&path, &path, &rendered.history)?;
            Ok(rendered)
        }
        History::File { path: from, .. } => {
            // Streamed as it was made: the events stay on disk, and the report reads
            // them once more, then quotes the file.
            let mut gather = view::Gather::default();
            let file = HistoryFile::scan(from, |i, e| gather.observe(i, &e))?;
            let view = gather.into_view(view::Lines::File(&file), &outcome.findings);
            let rendered = render(dir, summary, &view, keep_history, which, budget)?;
            if let Some(e) = file.error() {
                return Err(e.into());
            }
            match &rendered.history {
                // The file is the history already, or a copy of it.
                Kept::Whole if *from == path => {}
                Kept::Whole => {
                    std::fs::copy(from, &path).map_err(io_err(&path))?;
                }
                kept => cut_file(from, &path, kept)?,
            }
            Ok(rendered)
        }
    }
}

/// Writes at `path` what `kept` keeps of the history file `from` (which may be `path`),
/// a line at a time: the cut goes to a file beside it, which then replaces `path`; with
/// nothing kept, `path` is removed.
fn cut_file(from: &Path, path: &Path, kept: &Kept) -> Result<(), ReportError> {
    let (windows, lines) = match kept {
        Kept::Cut { windows, lines } => (windows, lines),
        Kept::Not => return keep_file(path, kept, |_| Ok(())),
        // Kept where it is: nothing to cut.
        Kept::Whole => return Ok(()),
    };
    let part = path.with_extension("jsonl.cut");
    let source = std::fs::File::open(from).map_err(io_err(from))?;
    keep_file(&part, kept, |out| {
        crate::history::cut::write(
            std::io::BufReader::new(source),
            *lines,
            windows,
            std::io::BufWriter::new(out),
        )
    })?;
    std::fs::rename(&part, path).map_err(io_err(path))
}

/// Writes history.jsonl at `path` with `write` when `kept` keeps some of it, else
/// removes what a previous report left there.
fn keep_file(
    path: &Path,
    kept: &Kept,
    write: impl FnOnce(std::fs::File) -> std::io::Result<()>,
) -> Result<(), ReportError> {
    if *kept == Kept::Not {
        return match std::fs::remove_file(path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(path)(e)),
            _ => Ok(()),
        };
    }
    let file = std::fs::File::create(path).map_err(io_err(path))?;
    write(file).map_err(io_err(path))
}

/// Writes `value` to `path` as JSON on one line, atomically ([`write_atomic`]). A
/// summary lists every fault and the holds it met: indented, a long run's summary is
/// twice the size, and the committed reports have a size budget (`jq .` indents it).
fn write_json(path: &Path, value: &serde_json::Value) -> Result<(), ReportError> {
    let mut text = serde_json::to_vec(value).map_err(|e| ReportError::Io {
        path: path.display().to_string(),
        error: e.into(),
    })?;
    text.push(b'\n');
    write_atomic(path, &text)
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`: a
/// reader sees the old file or the whole new one, never a half-written one (a full
/// disk leaves the old file as it was).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    use std::io::Write;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.flush()
    });
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_err(path)(e));
    }
    Ok(())
}

/// Re-renders `dir` from its history.jsonl: the checker runs again and the plots,
/// narrative.md and index.html are redrawn (what the last render drew is removed
/// first). A summary.json already there (with the verdict per seed) is kept; a history
/// from elsewhere gets one derived from it, and so does a run that was killed before it
/// wrote its summary (keeping the placeholder's word that it is partial). The figures are
/// the ones the folder had: a library matrix cell's holder timelines alone
/// ([`Plots::Timelines`]: timeline.svg and no latency-cdf.svg), else all. `keep` says
/// what history.jsonl keeps afterwards ([`Keep::Cited`]: `lockstorm report --cut`).
pub fn rerender(dir: &Path, keep: Keep) -> Result<Findings, ReportError> {
    let path = dir.join("history.jsonl");
    // One pass: the checker and the view take each event as it is read; the view then
    // quotes the file.
    let mut checker = checker::Checker::new();
    let mut malformed = None;
    let mut gather = view::Gather::default();
    let file = HistoryFile::scan(&path, |i, e| {
        if malformed.is_none() {
            if let Err(m) = checker.observe(&e) {
                malformed = Some(m);
            }
        }
        gather.observe(i, &e);
    })?;
    if let Some(error) = malformed {
        return Err(ReportError::Malformed {
            path: path.display().to_string(),
            error,
        });
    }
    let findings = checker.finish();
    let view = gather.into_view(view::Lines::File(&file), &findings);
    let meta = view.meta.as_ref();
    let summary_path = dir.join("summary.json");
    let summary = match std::fs::read_to_string(&summary_path) {
        Ok(text) => {
            let summary: serde_json::Value = serde_json::from_str(&text).map_err(|e| ReportError::Io {
                path: summary_path.display().to_string(),
                error: e.into(),
            })?;
            if summary.get("verdict").is_some() {
                summary
            } else {
                // The placeholder of a run that never finished: derive the rest.
                let mut derived = history_summary(meta, &findings);
                for key in [
                    "scenario",
                    "file",
                    "backend",
                    "rerun",
                    "partial",
                    "partial_reason",
                ] {
                    if let Some(v) = summary.get(key) {
                        derived[key] = v.clone();
                    }
                }
                write_json(&summary_path, &derived)?;
                derived
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let summary = history_summary(meta, &findings);
            write_json(&summary_path, &summary)?;
            summary
        }
        Err(e) => return Err(io_err(&summary_path)(e)),
    };
    let plots = match dir.join("timeline.svg").exists() && !dir.join("latency-cdf.svg").exists() {
        true => Plots::Timelines,
        false => Plots::All,
    };
    let others = folder::clear_renders(dir)?;
    let budget = match keep {
        Keep::Cited => interactive::Budget::COMMITTED,
        Keep::Whole | Keep::Nothing => interactive::Budget::FULL,
    };
    let rendered = render(dir, &summary, &view, keep, plots, budget)?;
    let mut summary = summary;
    // The reported seed's findings in the order the stories tell them (worst first),
    // which a summary from an older lockstorm (in time order) did not have.
    let worst = &view.worst;
    summary["violations"] = serde_json::json!(first_violations(worst.violations.clone()));
    for (key, list) in [
        ("resource_violations", serde_json::json!(worst.stale)),
        ("fence_regressions", serde_json::json!(worst.regressions)),
        ("liveness", serde_json::json!(worst.liveness)),
    ] {
        if summary.get(key).is_some() {
            summary[key] = list;
        }
    }
    add_anomalies(&mut summary, &rendered);
    summary["availability_in_time"] = rendered.availability.clone();
    // Written back whatever changed: a summary from an older lockstorm comes out in
    // today's form (one line, the anomalies named, availability in time).
    write_json(&summary_path, &summary)?;
    if let Some(e) = file.error() {
        return Err(e.into());
    }
    cut_file(&path, &path, &rendered.history)?;
    folder::write_manifest(dir, &others)?;
    Ok(findings)
}

/// The summary.json of a run in progress: it says the run is partial until the report
/// replaces it, so a run killed outright leaves a folder that says what it is.
pub fn placeholder_summary(scenario: &Scenario, first_seed: u64) -> serde_json::Value {
    serde_json::json!({
        "scenario": scenario.name,
        "file": scenario.path.as_ref().map(|p| p.display().to_string()),
        "backend": scenario.backend,
        "partial": true,
        "partial_reason": "the run did not finish: lockstorm was killed before it wrote its report",
        "reported_seed": first_seed,
        "rerun": scenario.rerun_command(first_seed),
    })
}

/// The summary of a lone history: its own verdict, no expectation, one seed. With no
/// plan at hand, only the faults the history records are judged for exercise.
fn history_summary(meta: Option<&crate::history::Meta>, findings: &Findings) -> serde_json::Value {
    let (verdict, not_exercised) = crate::outcome::Verdict::judge(findings, None);
    let worst = severity::Worst::of(findings);
    serde_json::json!({
        "scenario": meta.map_or("history", |m| m.scenario.as_str()),
        "verdict": verdict.as_str(),
        "not_exercised": not_exercised,
        "exercise": findings.exercise,
        "live": findings.is_live(),
        "reported_seed": meta.map(|m| m.seed),
        "violations": first_violations(worst.violations),
        "violations_total": findings.violations.len(),
        "liveness": worst.liveness,
        "stats": findings.stats,
    })
}

/// Which plots a report draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plots {
    /// Every plot.
    All,
    /// The holder timelines only: a library matrix cell, whose latency and
    /// availability the matrix states as figures (the committed matrix has a size
    /// budget, and a cell's page is one of a hundred and fifty).
    Timelines,
}

/// Draws the plots, tells the violations and writes narrative.md and index.html.
pub fn render(
    dir: &Path,
    summary: &serde_json::Value,
    view: &view::RunView,
    keep_history: Keep,
    which: Plots,
    budget: interactive::Budget,
) -> Result<Rendered, ReportError> {
    use plots::{
        availability::Availability, cdf::Cdf, operations::Operations, throughput::Throughput,
        timeline::Timeline, Figure,
    };
    let mut plots = Vec::new();
    let mut add = |fig: &dyn Fn(&Path, &str) -> Result<u32, plots::PlotError>,
                   stem: &str,
                   title: &str,
                   caption: String| {
        stopped_before_summary(summary)?;
        let width = fig(dir, stem)?;
        plots.push(PlotInfo {
            stem: stem.into(),
            title: title.into(),
            caption,
            width,
        });
        Ok::<(), ReportError>(())
    };
    fn save(fig: &impl Figure, dir: &Path, stem: &str) -> Result<u32, plots::PlotError> {
        plots::save(fig, dir, stem)?;
        Ok(fig.size().0)
    }
    if let Some(v) = view.violations().first() {
        add(
            &|d, s| save(&Timeline::around(view, v), d, s),
            "timeline-violation",
            "Holder timeline around the longest violation",
            format!(
                "The longest violation: clients {} and {} both hold {} (outlined in red) from t={} to t={}. {}; red band = two holders.",
                v.first.client,
                v.second.client,
                v.lock,
                narrative::secs(v.overlap_start_us),
                narrative::secs(v.overlap_end_us),
                rows_clause(view, &Timeline::around(view, v))
            ),
        )?;
    }
    if let Some(rv) = view.worst.stale.first() {
        add(
            &|d, s| save(&Timeline::around_write(view, rv), d, s),
            "timeline-stale-write",
            "Holder timeline around the worst stale write",
            format!(
                "The stale write that landed longest after its hold ended: client {} writes to {} at t={} (red cross), {}. {}.",
                rv.client,
                rv.lock,
                narrative::secs(rv.write_us),
                stale::against(rv),
                rows_clause(view, &Timeline::around_write(view, rv))
            ),
        )?;
    }
    let findings_shown = !view.violations().is_empty() || !view.worst.stale.is_empty();
    if let (false, Some(r)) = (findings_shown, view.worst.regressions.first()) {
        let zoom = || {
            Timeline::around_span(
                view,
                &r.lock,
                r.earlier.start_us,
                r.later.start_us,
                format!(
                    "Holder timeline: client {}'s token {} after client {}'s {} on {}",
                    r.later.client,
                    r.later.fence.unwrap_or(0),
                    r.earlier.client,
                    r.earlier.fence.unwrap_or(0),
                    r.lock
                ),
            )
        };
        add(
            &|d, s| save(&zoom(), d, s),
            "timeline-fence",
            "Holder timeline around the largest step back of a fencing token",
            format!(
                "The largest step back of a fencing token: {}. {}.",
                fence::sentence(r),
                rows_clause(view, &zoom())
            ),
        )?;
    } else if let (false, Some(l)) = (findings_shown, view.worst.liveness.first()) {
        let (lock, from, to) = waits::window(view, l);
        let zoom = || {
            Timeline::around_span(
                view,
                &lock,
                from,
                to,
                format!(
                    "Holder timeline around the longest wait: {}",
                    banner::liveness_sentence(l)
                ),
            )
        };
        add(
            &|d, s| save(&zoom(), d, s),
            "timeline-wait",
            "Holder timeline around the longest wait",
            format!(
                "The worst liveness finding: {}. {}.",
                banner::liveness_sentence(l),
                rows_clause(view, &zoom())
            ),
        )?;
    } else if let (false, Some(w)) = (findings_shown, view.faults.first()) {
        add(
            &|d, s| save(&Timeline::around_fault(view, w), d, s),
            "timeline-fault",
            "Holder timeline around the first fault",
            format!(
                "No finding. The first fault, #{} from t={}: {}. {}.",
                w.id,
                narrative::secs(w.start_us),
                words::fault_sentence(&w.fault, view.clients, view.deployment),
                rows_clause(view, &Timeline::around_fault(view, w))
            ),
        )?;
    }
    add(
        &|d, s| save(&Timeline::overview(view), d, s),
        "timeline",
        "Holder timeline, whole run",
        overview_caption(view),
    )?;
    let modes = view.modes();
    let all = which == Plots::All;
    if all {
        add(
        &|d, s| {
            let cdf = Cdf {
                title: "Acquire latency CDF per mode".into(),
                x_desc: "acquire latency, invoke to ok (ms, log scale)".into(),
                series: modes.iter().map(|m| (m.clone(), view.latencies_us(m))).collect(),
                censored: Vec::new(),
            };
            save(&cdf, d, s)
        },
        "latency-cdf",
        "Acquire latency CDF",
        "Share of successful workload acquisitions that took at most x ms, per mode (steps; n in the legend).".into(),
    )?;
        add(
            &|d, s| save(&Operations::new(view), d, s),
            "operations",
            "Every acquire over time",
            operations_caption(view),
        )?;
        add(
            &|d, s| save(&Throughput { view }, d, s),
            "throughput",
            "Throughput over time",
            throughput_caption(view),
        )?;
        add(
        &|d, s| save(&Availability { view }, d, s),
        "availability",
        "Availability over time",
        "Per time bucket, the share of the bucket during which a lock was held or could be acquired (blue: time counts against it only while some lock was free and wanted and every attempt at it failed) and, apart, the share during which some attempt failed because the lock was held (dashed grey: contention, which is not unavailability). Shaded: some fault active; red: violation window. Definitions: docs/availability.md.".into(),
    )?;
    }
    if all && view.is_read_write() {
        add(
            &|d, s| {
                let cdf = Cdf {
                    title: "Wait time CDF per mode (first attempt to acquisition)".into(),
                    x_desc: "wait time across retries (ms, log scale)".into(),
                    series: modes.iter().map(|m| (m.clone(), view.waits_us(m))).collect(),
                    censored: modes.iter().map(|m| view.waits_open(m)).collect(),
                };
                save(&cdf, d, s)
            },
            "wait-cdf",
            "Wait time per mode",
            "How long readers and writers waited for the lock, from the first attempt to the acquisition across failed attempts (steps; n in the legend). A client still waiting when the run ended is censored: it counts in n, so its mode's line stops below 100%. A long tail for one mode is starvation.".into(),
        )?;
    }

    let stories: Vec<narrative::Story> = view
        .violations()
        .iter()
        .take(STORIES_IN_FULL)
        .map(|v| narrative::explain(view, v))
        .collect();
    let stale: Vec<narrative::Story> = view
        .worst
        .stale
        .iter()
        .take(STORIES_IN_FULL)
        .map(|rv| stale::explain(view, rv))
        .collect();
    let regressions: Vec<narrative::Story> = view
        .worst
        .regressions
        .iter()
        .take(STORIES_IN_FULL)
        .map(|r| fence::explain(view, r))
        .collect();
    let waits: Vec<narrative::Story> = view
        .worst
        .liveness
        .iter()
        .take(STORIES_IN_FULL)
        .map(|l| waits::explain(view, l))
        .collect();
    // A report that keeps only the history lines it cites (a committed one) tells in
    // full what its page tells, the worst first, and the rest one line each: the rerun
    // command's report tells them all.
    let full = match keep_history {
        Keep::Cited => html::STORIES_ON_PAGE,
        Keep::Whole | Keep::Nothing => STORIES_IN_FULL,
    };
    let first = |s: &[narrative::Story]| s.len().min(full);
    let mut md = narrative_markdown(summary, view, &stories[..first(&stories)]);
    stale_markdown(&mut md, view, &stale[..first(&stale)]);
    findings_markdown(
        &mut md,
        ("Fencing tokens that did not grow", "Token that did not grow"),
        "A hold that began after another had ended got a token not above that hold's: the earlier holder's late writes would get through. The largest step back first.",
        &regressions[..first(&regressions)],
        view.worst.regressions.len(),
    );
    findings_markdown(
        &mut md,
        ("Liveness findings", "Liveness finding"),
        "A wait for a lock that went on too long. Those that never got the lock first, then the longest wait.",
        &waits[..first(&waits)],
        view.worst.liveness.len(),
    );
    let path = dir.join("narrative.md");
    std::fs::write(&path, &md).map_err(io_err(&path))?;
    // The banner names the anomaly of the finding it leads with: the first violation's,
    // else the first stale write's.
    let lead = if view.findings.violations.is_empty() {
        stale.first()
    } else {
        stories.first()
    };
    let anomaly = lead.and_then(|s| s.anomaly.as_ref()).map(|n| n.name());
    let told = html::Told {
        violations: &stories,
        stale: &stale,
        regressions: &regressions,
        waits: &waits,
    };
    let timing = dir.join(timing::FILE).is_file();
    let page = html::page(summary, view, &plots, &told, anomaly.as_deref(), timing, budget);
    // What history.jsonl keeps follows from what the pages cite.
    let history = keep_history.resolve(view.history.len(), &cited(&md, &page));
    // The lines the page names (its first citations, and every line its timeline links
    // to) quoted at its end, and each citation of one of them a link to it.
    let mut named: std::collections::BTreeSet<usize> =
        lines::cited(&page).into_iter().take(budget.quoted).collect();
    named.extend(lines::targets(&page));
    let (quoted_lines, quoted) = lines::section(view, &named);
    let mut page = lines::linked(&page, &quoted);
    page.push_str(&quoted_lines);
    page.push_str(&html::files(summary, &history, &logs::kept(dir), timing));
    let path = dir.join("index.html");
    std::fs::write(&path, page).map_err(io_err(&path))?;
    Ok(Rendered {
        plots,
        stories,
        stale,
        regressions,
        waits,
        history,
        availability: availability_in_time(view),
    })
}

/// What a zoomed timeline draws, from its rows to its node marks: only what falls in
/// its window, so the caption describes what is drawn.
fn rows_clause(view: &view::RunView, t: &plots::timeline::Timeline) -> String {
    let (from, to) = (t.from_us, t.to_us);
    let faults: Vec<&str> = view
        .faults
        .iter()
        .filter(|w| w.start_us < to && w.end_us.unwrap_or(view.end_us).max(w.start_us + 1) > from)
        .map(|w| w.fault.kind())
        .collect();
    let mut s = match &t.locks {
        plots::timeline::Locks::Only(lock) => {
            format!("Rows: nodes, then clients; bars are holds of {lock} (colour = mode)")
        }
        all => format!(
            "Rows: nodes, then clients; bars are holds (colour = mode){}",
            all.clause()
        ),
    };
    if faults.iter().any(|k| *k != "clock_jump") {
        s.push_str("; thin lanes under them are the faults that hit that row, one lane and colour per kind");
        if faults.contains(&"partition") {
            s.push_str(", a partition's labelled with whom it cut the row from");
        }
        if faults.contains(&"clock_rate") {
            s.push_str(", a clock-rate lane with the clock's rate (0.5× runs at half speed)");
        }
    }
    if faults.contains(&"clock_jump") {
        s.push_str("; a clock jump is a mark on the row whose clock jumped, labelled with the jump");
    }
    s.push_str(&marks_clause(view, &t.locks, from, to));
    s
}

/// What the timelines mark on node rows between `from_us` and `to_us` for the keys of
/// `locks`, as a clause (empty when nothing), so a caption describes what is drawn.
fn marks_clause(view: &view::RunView, locks: &plots::timeline::Locks, from_us: u64, to_us: u64) -> String {
    use view::NodeMark;
    let drawn = |m: &view::NodeEventMark| view.locks.get(m.lock as usize).is_none_or(|l| locks.draws(l));
    let has = |f: &dyn Fn(&NodeMark) -> bool| {
        view.node_marks
            .iter()
            .any(|m| m.t_us >= from_us && m.t_us < to_us && drawn(m) && f(&m.mark))
    };
    let mut said = Vec::new();
    if has(&|m| *m == NodeMark::Expired) {
        said.push("a dark red triangle where a key expired on that node (at the true time its clock reached the expiry)");
    }
    if has(&|m| *m == NodeMark::Lost) {
        said.push("a black cross where a node restarted without a key");
    }
    if has(&|m| matches!(m, NodeMark::Unreplicated { .. })) {
        said.push("a purple bar ending at a failover for the replica's lag (keys set in it never reached the replica)");
    }
    if has(&|m| *m == NodeMark::Replicated) {
        said.push("a green tick where the replica had the key at a failover");
    }
    if said.is_empty() {
        String::new()
    } else {
        format!("; on node rows, {}", said.join("; "))
    }
}

/// The whole-run timeline's caption: what it draws for this run.
fn overview_caption(view: &view::RunView) -> String {
    let mut s = String::from("The whole run. Holds closer than a pixel are merged into one bar");
    let locks = plots::timeline::Timeline::overview(view).locks;
    s.push_str(&locks.clause());
    if !view.violations().is_empty() {
        s.push_str("; red bands are violation windows");
    }
    if view.faults.iter().any(|w| w.fault.kind() != "clock_jump") {
        s.push_str("; each row has a lane per fault kind that hit it, coloured by kind");
    }
    if view.faults.iter().any(|w| w.fault.kind() == "clock_jump") {
        s.push_str("; clock jumps are marks on the row whose clock jumped");
    }
    if !view.worst.stale.is_empty() {
        s.push_str("; red crosses are stale writes");
    }
    if view.heal_drawn().is_some() {
        s.push_str("; the black line is the heal");
    }
    s.push_str(&marks_clause(view, &locks, 0, u64::MAX));
    s.push('.');
    s
}

/// The throughput plot's caption: its bucket, and what is shaded.
fn throughput_caption(view: &view::RunView) -> String {
    let (width, _) = plots::throughput::rates(view);
    format!(
        "Per {} ms bucket of the workload, how many acquires returned per second: ok, failed, and unknown (timed out), as Jepsen's rate plot draws them; n is each outcome's total.{}",
        width / 1_000,
        match view.heal_drawn() {
            Some(_) => " Shaded: each fault kind's periods; the black line is the heal. Where the ok line falls to zero under a fault while the others rise, the lock stopped granting.",
            None => " No fault ran.",
        }
    )
}

/// The operations plot's caption, saying when its points were binned.
fn operations_caption(view: &view::RunView) -> String {
    let ops = plots::operations::Operations::new(view);
    let mut s = format!(
        "Each of the {} workload acquires at its start time (x) and latency, invoke to return (y, log scale): filled circles ok, crosses failed, open triangles unknown (timed out; the SET may have been applied).{}",
        view.acquires.len(),
        match view.heal_drawn() {
            Some(_) => " Shaded: a fault of that kind active; the black line is the heal.",
            None => " No fault ran.",
        }
    );
    if let Some((drawn, total)) = ops.thinned() {
        s.push_str(&format!(
            " More than {} acquires: the points are binned on a grid over time and log latency and one point is drawn per outcome and cell ({drawn} of {total} drawn), so a dense cloud shows where acquires were, not how many.",
            plots::operations::MAX_POINTS
        ));
    }
    s
}

/// The stale writes' section of narrative.md, after the violations.
fn stale_markdown(md: &mut String, view: &view::RunView, stories: &[narrative::Story]) {
    use std::fmt::Write as _;
    let all = &view.worst.stale;
    if all.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "# Stale writes ({})

The guarded resource accepted a write from a client whose hold had ended, over the write of another client's later hold.
",
        all.len()
    );
    for (i, s) in stories.iter().enumerate() {
        let _ = writeln!(
            md,
            "## Stale write {}

{}",
            i + 1,
            s.markdown()
        );
    }
    if all.len() > stories.len() {
        let _ = writeln!(
            md,
            "## {} more stale writes
",
            all.len() - stories.len()
        );
        for rv in &all[stories.len()..] {
            let _ = writeln!(
                md,
                "- client {} wrote to {} at t={}, {}",
                rv.client,
                narrative::md(&rv.lock),
                narrative::secs(rv.write_us),
                narrative::md(&stale::against(rv))
            );
        }
    }
}

/// A section of narrative.md for findings told with a story each: fencing tokens that
/// did not grow, liveness findings (worst first; `total` of them).
fn findings_markdown(
    md: &mut String,
    (title, item): (&str, &str),
    intro: &str,
    stories: &[narrative::Story],
    total: usize,
) {
    use std::fmt::Write as _;
    if total == 0 {
        return;
    }
    let _ = writeln!(md, "# {title} ({total})\n\n{intro}\n");
    for (i, s) in stories.iter().enumerate() {
        let _ = writeln!(md, "## {item} {}\n\n{}", i + 1, s.markdown());
    }
    if total > stories.len() {
        let _ = writeln!(md, "{} more: see summary.json.\n", total - stories.len());
    }
}

fn narrative_markdown(
    summary: &serde_json::Value,
    view: &view::RunView,
    stories: &[narrative::Story],
) -> String {
    use std::fmt::Write as _;
    let vs = view.violations();
    let mut md = format!(
        "# Violations of {} (seed {})\n\n",
        narrative::md(summary["scenario"].as_str().unwrap_or("?")),
        summary["reported_seed"]
    );
    if vs.is_empty() {
        md.push_str("None: no two holds of the same lock overlapped in true time.\n");
    }
    for (i, s) in stories.iter().enumerate() {
        let _ = writeln!(md, "## Violation {}\n\n{}", i + 1, s.markdown());
    }
    if vs.len() > stories.len() {
        let _ = writeln!(
            md,
            "## {} more violations\n\nOne line each, the longest first; the report of the run's rerun command tells up to {STORIES_IN_FULL} in full.\n",
            vs.len() - stories.len()
        );
        for v in &vs[stories.len()..] {
            let _ = writeln!(
                md,
                "- clients {} and {} on {} from t={} to t={}",
                v.first.client,
                v.second.client,
                narrative::md(&v.lock),
                narrative::secs(v.overlap_start_us),
                narrative::secs(v.overlap_end_us)
            );
        }
    }
    md
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod finding_tests;

#[cfg(test)]
mod anomaly_tests;

#[cfg(test)]
mod library_story_tests;
