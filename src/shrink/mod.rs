//! Shrinking: from a failing seed to the smallest scenario that still fails the same way.
//!
//! A violation found with twenty clients over ten minutes is true but unreadable. Shrink
//! reruns the simulator on smaller scenarios (delta debugging over the scenario, not the
//! history): the nemesis faults the seed drew become scripted faults, then each pass
//! ([`reduce`]) proposes strictly smaller candidates (a shorter run, fewer faults, fewer
//! clients, fewer nodes where the quorum allows, shorter faults, constant instead of
//! random times, earlier faults), and the first candidate whose run shows the same
//! [`Kind`] of finding, with no more lock operations (a constant think time of 0 is
//! simpler to state but spins) and no longer a story, replaces the scenario. Passes
//! repeat until none makes progress or the budget is spent. It sits beside `run/` in
//! the flow: it takes a scenario and a seed, runs seeds through
//! [`crate::run::run_seed`] and ends with a scenario and its report.
//!
//! Deterministic: candidates come in a fixed order, every run uses the same seed, and
//! the candidates of one batch run in parallel but the first in order that fails wins,
//! so the same input gives the same output. Only the time budget reads the wall clock;
//! when it stops a shrink early the result says so.

pub mod kind;
pub mod reduce;

pub use kind::Kind;

use crate::checker::Findings;
use crate::lifecycle::RunOutput;
use crate::report::narrative::Story;
use crate::scenario::{Backend, Expect, Scenario, ScenarioError, Targets};
use reduce::Candidate;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How much work a shrink may do.
#[derive(Clone, Debug)]
pub struct Budget {
    /// Simulator runs of candidates, at most.
    pub runs: usize,
    /// Wall-clock time, at most (the only nondeterministic stop).
    pub time: Option<Duration>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            runs: 2_000,
            time: None,
        }
    }
}

/// Where a shrink stands, for a progress display.
#[derive(Clone, Debug)]
pub struct Progress {
    pub runs: usize,
    pub kept: usize,
    /// The candidate being tried (or the step just kept).
    pub what: String,
}

/// The result: the smallest scenario found and how it got there.
pub struct Shrunk {
    /// The minimal scenario, with its expectations set to what its run shows.
    pub scenario: Scenario,
    pub seed: u64,
    pub kind: Kind,
    /// The steps that were kept, in order.
    pub kept: Vec<String>,
    /// Candidate runs made.
    pub runs: usize,
    /// Why it stopped before no candidate was left, if it did (a budget ran out).
    pub stopped: Option<String>,
    /// The story length (numbered steps of the first violation's narrative) of the
    /// original run and of the shrunk one; `None` for kinds without a story.
    pub story_before: Option<usize>,
    pub story_after: Option<usize>,
    /// Faults in the original run (scripted and drawn by the nemesis).
    pub faults_before: usize,
    /// The shrunk run's findings and history.
    pub findings: Findings,
    pub output: RunOutput,
}

#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("{path}: {message}")]
    Summary { path: String, message: String },
    #[error("seed {seed} of {scenario} shows no {what} on the simulator: nothing to shrink")]
    NothingToShrink {
        scenario: String,
        seed: u64,
        what: String,
    },
    #[error(transparent)]
    Save(#[from] crate::run::SaveError),
    /// The run's clients were a worker (a lock library), which the simulator cannot run.
    #[error(
        "{scenario}: its clients are the worker `{command}`: {}",
        crate::scenario::SHRINK_NO_WORKER
    )]
    Worker { scenario: String, command: String },
    /// A `[sentinel]` run whose faults the simulator's model of Sentinel leaves out (a
    /// split brain, min-replicas-to-write): `why` says which (docs/sentinel.md).
    #[error("{scenario}: its node is a Redis Sentinel deployment ([sentinel]): {why}")]
    Sentinel { scenario: String, why: String },
}

/// The scenario and seed a report folder names (summary.json's `file` and
/// `reported_seed`).
pub fn from_report(dir: &Path) -> Result<(Scenario, u64), ShrinkError> {
    let path = dir.join("summary.json");
    let err = |message: String| ShrinkError::Summary {
        path: path.display().to_string(),
        message,
    };
    let text = std::fs::read_to_string(&path).map_err(|e| err(format!("cannot read: {e}")))?;
    let summary: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| err(format!("not JSON: {e}")))?;
    let seed = summary["reported_seed"]
        .as_u64()
        .ok_or_else(|| err("no `reported_seed`".into()))?;
    if let Some(argv) = summary["worker"]["command"].as_array() {
        let words: Vec<&str> = argv.iter().filter_map(|w| w.as_str()).collect();
        return Err(ShrinkError::Worker {
            scenario: summary["scenario"].as_str().unwrap_or("the run").into(),
            command: words.join(" "),
        });
    }
    let file = summary["file"].as_str().ok_or_else(|| {
        err("names no scenario file (a history from elsewhere): shrink needs the scenario, run `lockstorm shrink SCENARIO --seed N`".into())
    })?;
    // The run's `--set` overrides, applied again: `overrides`, or in a summary from
    // before it had that list, the rerun command's.
    let sets: Vec<String> = match summary["overrides"].as_array() {
        Some(list) => list.iter().filter_map(|o| o.as_str().map(String::from)).collect(),
        None => {
            let words = crate::worker::shell_words(summary["rerun"].as_str().unwrap_or(""));
            words
                .windows(2)
                .filter(|w| w[0] == "--set")
                .map(|w| w[1].clone())
                .collect()
        }
    };
    let sets = sets
        .iter()
        .map(|o| crate::scenario::Override::parse(o))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(format!("an override of the run does not read: {e}")))?;
    let path = Path::new(file);
    let text = crate::scenario::read_text(path)?;
    Ok((Scenario::from_text(&text, path, &sets)?, seed))
}

/// The default output folder: `<name>-shrunk` beside the report, or under reports/.
pub fn default_out(report_dir: Option<&Path>, scenario: &Scenario) -> PathBuf {
    let name = format!("{}-shrunk", scenario.name);
    match report_dir.and_then(Path::parent) {
        Some(parent) => parent.join(name),
        None => Path::new("reports").join(name),
    }
}

/// The story of the run's first violation, as narrative.md tells it.
pub fn first_story(history: &[crate::history::Event], findings: &Findings) -> Option<Story> {
    let view = crate::report::view::RunView::new(history, findings);
    let v = view.violations().first()?;
    Some(crate::report::narrative::explain(&view, v))
}

/// A story's length: its numbered steps, the closing overlap counted.
pub fn story_len(story: &Story) -> usize {
    story.steps.len() + 1
}

/// What a run costs a reader: its lock operations and the length of its first story.
#[derive(Clone, Copy, Debug)]
struct Size {
    ops: u64,
    story: Option<usize>,
}

impl Size {
    fn of(output: &RunOutput, findings: &Findings) -> Size {
        Size {
            ops: output.stats.lock_ops,
            story: first_story(&output.history, findings).as_ref().map(story_len),
        }
    }

    /// No more operations, and no longer a story (a candidate may not trade a shorter
    /// scenario for a longer explanation).
    fn within(self, now: Size) -> bool {
        self.ops <= now.ops && self.story.unwrap_or(0) <= now.story.unwrap_or(usize::MAX)
    }
}

fn run(s: &Scenario, seed: u64) -> (RunOutput, Findings) {
    let (_, output, findings) = crate::run::run_seed(s, seed, &mut |_, _| {});
    (output, findings)
}

struct Search<'a> {
    kind: Kind,
    seed: u64,
    budget: &'a Budget,
    started: Instant,
    runs: usize,
    kept: Vec<String>,
    stopped: Option<String>,
    progress: &'a dyn Fn(&Progress),
}

impl Search<'_> {
    fn out_of_budget(&mut self) -> bool {
        if self.stopped.is_some() {
            return true;
        }
        if self.runs >= self.budget.runs {
            self.stopped = Some(format!("the budget of {} runs ran out", self.budget.runs));
        } else if let Some(t) = self.budget.time.filter(|&t| self.started.elapsed() >= t) {
            self.stopped = Some(format!(
                "the time budget of {} s ran out after {} runs",
                t.as_secs(),
                self.runs
            ));
        }
        self.stopped.is_some()
    }

    /// Runs the candidates in order, in parallel batches, and returns the first that
    /// shows the kind and is no larger than `now` (the first in order, whatever
    /// finished first), with its position, findings and size.
    fn first_failing(
        &mut self,
        candidates: Vec<Candidate>,
        now: Size,
    ) -> Option<(usize, Candidate, Findings, Size)> {
        let width = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut rest = candidates.into_iter().enumerate().peekable();
        while rest.peek().is_some() {
            if self.out_of_budget() {
                return None;
            }
            let take = width.min(self.budget.runs - self.runs);
            let batch: Vec<(usize, Candidate)> = rest.by_ref().take(take).collect();
            (self.progress)(&Progress {
                runs: self.runs,
                kept: self.kept.len(),
                what: batch[0].1.what.clone(),
            });
            let (seed, kind) = (self.seed, self.kind);
            let results: Vec<Option<(Findings, Size)>> = std::thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|(_, c)| {
                        scope.spawn(move || {
                            let (output, findings) = run(&c.scenario, seed);
                            let size = Size::of(&output, &findings);
                            (kind.shows(&findings) && size.within(now)).then_some((findings, size))
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().expect("a simulator run does not panic"))
                    .collect()
            });
            self.runs += batch.len();
            if let Some(((i, c), (f, size))) = batch
                .into_iter()
                .zip(results)
                .find_map(|(c, r)| r.map(|r| (c, r)))
            {
                return Some((i, c, f, size));
            }
        }
        None
    }
}

/// Shrinks `original` (run with `seed`) to the smallest scenario whose run shows the
/// same kind of finding: `kind` if given, else the most important one the run shows.
pub fn shrink(
    original: &Scenario,
    seed: u64,
    kind: Option<Kind>,
    budget: &Budget,
    progress: &dyn Fn(&Progress),
) -> Result<Shrunk, ShrinkError> {
    if let Some(w) = &original.clients.worker {
        return Err(ShrinkError::Worker {
            scenario: original.name.clone(),
            command: w.command_line(),
        });
    }
    // Shrinking reruns the scenario on the simulator, whatever it ran on; a Sentinel
    // deployment as the simulator models it (a master, a replica, a timed failover).
    let mut base = original
        .deployment_on_simulator()
        .map_err(|why| ShrinkError::Sentinel {
            scenario: original.name.clone(),
            why,
        })?;
    base.backend = Backend::Sim;
    base.targets = Targets::Local;
    let (output, findings) = run(&base, seed);
    let nothing = |what: String| ShrinkError::NothingToShrink {
        scenario: original.name.clone(),
        seed,
        what,
    };
    let kind = match kind {
        Some(k) if k.shows(&findings) => k,
        Some(k) => return Err(nothing(k.to_string())),
        None => Kind::first_in(&findings).ok_or_else(|| nothing("violation or liveness finding".into()))?,
    };
    let story_before = first_story(&output.history, &findings).as_ref().map(story_len);
    let faults_before = output.plan.len();

    let mut search = Search {
        kind,
        seed,
        budget,
        started: Instant::now(),
        runs: 1,
        kept: Vec::new(),
        stopped: None,
        progress,
    };
    let mut current = base.clone();
    let mut current_size = Size::of(&output, &findings);
    let mut current_findings = findings;
    if current.nemesis != crate::fault::Nemesis::default() {
        let scripted = reduce::materialize_nemesis(&current, seed);
        let (o, f) = run(&scripted, seed);
        let size = Size::of(&o, &f);
        search.runs += 1;
        if kind.shows(&f) {
            search.kept.push(format!(
                "the nemesis faults of seed {seed} scripted ({} faults)",
                scripted.faults.len()
            ));
            current = scripted;
            current_findings = f;
            current_size = size;
        }
    }

    type Pass = fn(&Scenario, Kind, &Findings) -> Vec<Candidate>;
    let passes: [Pass; 6] = [
        reduce::shorter,
        |s, _, _| reduce::fewer_clients(s),
        |s, _, _| reduce::fewer_nodes(s),
        |s, _, _| reduce::shorter_faults(s),
        |s, _, _| reduce::constant(s),
        |s, _, _| reduce::earlier_faults(s),
    ];
    loop {
        let mut progressed = false;
        for (i, pass) in passes.into_iter().enumerate() {
            // One sweep per round: after a success, go on from the same position (the
            // candidates before it failed; the next round tries them again).
            let mut skip = 0;
            while let Some((at, c, f, size)) = search.first_failing(
                pass(&current, kind, &current_findings)
                    .into_iter()
                    .skip(skip)
                    .collect(),
                current_size,
            ) {
                skip += at;
                search.kept.push(c.what);
                current = c.scenario;
                current_findings = f;
                current_size = size;
                progressed = true;
            }
            // Right after the run is cut: fewer faults, as delta debugging removes them
            // (a run of neighbours at a time; on success as many runs less one, else
            // twice as many, down to single faults).
            if i == 0 {
                let mut parts = 2;
                while !current.faults.is_empty() {
                    let n = current.faults.len();
                    let now = parts.min(n);
                    match search.first_failing(reduce::fewer_faults(&current, now), current_size) {
                        Some((_, c, f, size)) => {
                            search.kept.push(c.what);
                            current = c.scenario;
                            current_findings = f;
                            current_size = size;
                            progressed = true;
                            parts = now.saturating_sub(1).max(2);
                        }
                        None if now >= n => break,
                        None => parts = (now * 2).min(n),
                    }
                }
            }
        }
        if !progressed || search.stopped.is_some() {
            break;
        }
    }

    let (output, findings) = run(&current, seed);
    search.runs += 1;
    set_expectations(&mut current, &findings, kind);
    Ok(Shrunk {
        story_after: first_story(&output.history, &findings).as_ref().map(story_len),
        faults_before,
        scenario: current,
        seed,
        kind,
        kept: search.kept,
        runs: search.runs,
        stopped: search.stopped,
        story_before,
        findings,
        output,
    })
}

/// The shrunk scenario expects what its run shows, so rerunning it passes (exit 0).
fn set_expectations(s: &mut Scenario, findings: &Findings, kind: Kind) {
    s.expect = if findings.is_safe() {
        Expect::Safe
    } else {
        Expect::Unsafe
    };
    s.expect_live = findings.is_live();
    s.expect_resource = (matches!(kind, Kind::StaleWrite | Kind::FenceRegression)
        || s.expect_resource.is_some())
    .then_some(if findings.is_resource_safe() {
        Expect::Safe
    } else {
        Expect::Unsafe
    });
    s.min_availability = None;
}

impl Shrunk {
    /// What shrinking changed, one line each: the sizes, the story, the steps kept.
    pub fn summary(&self, original: &Scenario) -> Vec<String> {
        let s = &self.scenario;
        let span = crate::report::narrative::span;
        let mut lines = vec![format!(
            "clients {} → {}, nodes {} → {}, faults {} → {}, duration {} → {}",
            original.clients.count,
            s.clients.count,
            original.nodes,
            s.nodes,
            self.faults_before,
            s.faults.len(),
            span(original.duration_us),
            span(s.duration_us)
        )];
        if let (Some(a), Some(b)) = (self.story_before, self.story_after) {
            lines.push(format!("story of the first violation: {a} → {b} steps"));
        }
        lines.extend(self.steps().into_iter().map(|k| format!("kept: {k}")));
        lines
    }

    /// The story of the shrunk run's first violation.
    pub fn first_story(&self) -> Option<Story> {
        first_story(&self.output.history, &self.findings)
    }

    /// Writes the minimal scenario (`<dir>/<name>.toml`, named `<original>-shrunk`) and
    /// the report of its run into `dir`; returns the scenario as written (with its path)
    /// and the run's outcome.
    pub fn write(
        &self,
        dir: &Path,
        original: &Scenario,
    ) -> Result<(Scenario, crate::run::Outcome), ShrinkError> {
        let mut s = self.scenario.clone();
        s.name = format!("{}-shrunk", original.name.trim_end_matches("-shrunk"));
        Ok(crate::run::save(dir, &s, self.seed, &self.comment(original))?)
    }

    /// The comment the minimal scenario file starts with: where it came from and what
    /// shrinking did.
    pub fn comment(&self, original: &Scenario) -> String {
        let from = original
            .path
            .as_ref()
            .map_or_else(|| original.name.clone(), |p| p.display().to_string());
        let story = match (self.story_before, self.story_after) {
            (Some(a), Some(b)) => format!(" The story of the first violation: {a} steps before, {b} after."),
            _ => String::new(),
        };
        let mut text = format!(
            "Shrunk by `lockstorm shrink` from {from}, seed {}: the smallest scenario found whose run on the simulator still shows a {} ({} candidate runs).{story}",
            self.seed, self.kind, self.runs
        );
        if let Some(why) = &self.stopped {
            text.push_str(&format!(
                " Stopped early: {why}; a larger budget may shrink it further."
            ));
        }
        text.push_str("\n\nSteps kept:\n");
        for k in self.steps() {
            text.push_str(&format!("- {k}\n"));
        }
        text
    }

    /// The kept steps, consecutive changes of one thing merged (`duration: 30 s → 3 s`
    /// and `duration: 3 s → 1 s` read `duration: 30 s → 1 s`).
    pub fn steps(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for k in &self.kept {
            let merged = out.last_mut().and_then(|last| {
                let (subject, from) = last.split_once(": ").filter(|_| last.contains(" → "))?;
                let (next_subject, change) = k.split_once(": ")?;
                let (_, to) = change.split_once(" → ")?;
                let from = from.split_once(" → ")?.0;
                (subject == next_subject).then(|| format!("{subject}: {from} → {to}"))
            });
            match merged {
                Some(m) => *out.last_mut().expect("merged into it") = m,
                None => out.push(k.clone()),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNSAFE: &str = r#"
        name = "quorum-one"
        duration = "10s"
        nodes = 5
        [algorithm]
        quorum = 1
        ttl = "1s"
        [clients]
        count = 4
        [nemesis]
        partition = { interval = "2s", duration = "500ms" }
    "#;

    #[test]
    fn a_minority_quorum_shrinks_to_two_clients_and_stays_unsafe() {
        let s = Scenario::parse(UNSAFE, "t.toml", "t").unwrap();
        let budget = Budget::default();
        let a = shrink(&s, 3, None, &budget, &|_| {}).unwrap();
        assert_eq!(a.kind, Kind::MutualExclusion);
        assert!(a.scenario.clients.count <= 2, "{}", a.scenario.clients.count);
        assert!(a.scenario.duration_us < s.duration_us);
        assert!(a.stopped.is_none());
        assert_eq!(a.scenario.expect, Expect::Unsafe);
        assert!(a.story_after.unwrap() <= a.story_before.unwrap());
        // The same input gives the same output.
        let b = shrink(&s, 3, None, &budget, &|_| {}).unwrap();
        assert_eq!(a.scenario, b.scenario);
        assert_eq!(a.kept, b.kept);
        // And the written scenario reproduces it.
        let text = a.scenario.to_toml(&a.comment(&s));
        let back = Scenario::parse(&text, "s.toml", "s").unwrap();
        assert!(!crate::run::run_seed(&back, 3, &mut |_, _| {}).0.safe);
    }

    #[test]
    fn a_safe_run_has_nothing_to_shrink_and_a_run_budget_stops_it() {
        let safe = Scenario::parse("duration = \"2s\"\nnodes = 3\n", "t.toml", "t").unwrap();
        let e = shrink(&safe, 1, None, &Budget::default(), &|_| {}).err().unwrap();
        assert!(e.to_string().contains("nothing to shrink"), "{e}");
        let s = Scenario::parse(UNSAFE, "t.toml", "t").unwrap();
        let tight = Budget { runs: 4, time: None };
        let r = shrink(&s, 3, None, &tight, &|_| {}).unwrap();
        assert!(r.stopped.as_deref().unwrap().contains("4 runs"));
        assert!(r.comment(&s).contains("Stopped early"));
    }
}
