//! JUnit XML for CI gates (`--junit FILE`): GitHub, GitLab and Jenkins show a JUnit file
//! as test results, so a scenario that is not as expected shows as a failed test with
//! its story. Written with `quick-junit` (the serializer cargo-nextest uses).
//!
//! A run is one test suite, named after the scenario, with one test case per seed; a
//! library matrix is one suite per adapter with one case per fault column. The cases
//! fail exactly when the exit status says so (1): when a run is not as expected, the
//! seeds that show why fail (an unsafe seed where safe was expected, a seed with no
//! violation where one was expected, a seed not live, not exercised, with a stale write
//! or below the availability floor), and when no seed shows it (a run cut short) one
//! more case, `verdict`, fails with the reason. A failed case carries the verdict, the
//! kind of finding, the story's first lines and the command that reruns the seed.

use super::matrix::{Cell, Matrix};
use super::narrative::Story;
use super::words::secs;
use super::ReportError;
use crate::outcome::{Outcome, SeedResult, Verdict};
use crate::scenario::{Expect, Scenario};
use quick_junit::{NonSuccessKind, Report, TestCase, TestCaseStatus, TestSuite};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

/// How many lines of a story a failed case quotes.
pub const STORY_LINES: usize = 8;

/// Writes `suites` as one JUnit report named `name` to `path`.
pub fn write(path: &Path, name: &str, suites: Vec<TestSuite>) -> Result<(), ReportError> {
    let mut report = Report::new(name);
    report.add_test_suites(suites);
    let xml = report.to_string().map_err(|e| ReportError::Io {
        path: path.display().to_string(),
        error: std::io::Error::other(e.to_string()),
    })?;
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(super::io_err(parent))?;
    }
    super::write_atomic(path, xml.as_bytes())
}

/// The suite of one run: a case per seed that ran. `story` is the reported seed's
/// first story, `report` the run's folder.
pub fn run_suite(scenario: &Scenario, outcome: &Outcome, story: Option<&Story>, report: &Path) -> TestSuite {
    let mut suite = TestSuite::new(scenario.name.as_str());
    let expected = words(scenario.expect);
    let mut failed = 0;
    for seed in &outcome.seeds {
        let misses = if outcome.as_expected {
            Vec::new()
        } else {
            seed_misses(scenario, outcome, seed)
        };
        let mut case = match misses.first() {
            // A seed that proved nothing in a run that still had enough that did: not a
            // failure (the run's exit status is 0), shown as skipped with the reason.
            None if seed.verdict == Verdict::NotExercised => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(format!(
                    "not exercised: {}",
                    seed.not_exercised.as_deref().unwrap_or("no reason recorded")
                ));
                TestCase::new(format!("seed {}", seed.seed), status)
            }
            None => TestCase::new(format!("seed {}", seed.seed), TestCaseStatus::success()),
            Some(first) => {
                failed += 1;
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                status.set_message(format!("{}, expected {expected}: {first}", seed.verdict.words()));
                let story = story.filter(|_| seed.seed == outcome.reported_seed);
                status.set_type(finding_kind(seed, story));
                status.set_description(detail(scenario, outcome, seed, &misses, story, report));
                TestCase::new(format!("seed {}", seed.seed), status)
            }
        };
        case.set_classname(scenario.name.as_str());
        case.set_time(Duration::from_secs_f64(seed.sim_secs.max(0.0)));
        case.set_system_out(seed_line(seed));
        suite.add_test_case(case);
    }
    if !outcome.as_expected && failed == 0 {
        // No seed shows why (the run was cut short, or no seed ran): the run's own case.
        let why = outcome
            .partial
            .clone()
            .unwrap_or_else(|| "the run is not as expected".into());
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
        status.set_message(why.as_str());
        status.set_type("not as expected");
        status.set_description(format!(
            "verdict: {} (expected {expected})\n{why}\nrerun: {}\nreport: {}\n",
            outcome.verdict_words(),
            scenario.rerun_command(outcome.reported_seed),
            report.join("index.html").display()
        ));
        let mut case = TestCase::new("verdict", status);
        case.set_classname(scenario.name.as_str());
        suite.add_test_case(case);
    }
    suite
}

/// Why `seed` keeps its run from being as expected: one reason per check the run
/// failed that this seed fails too (empty: this seed is not to blame).
fn seed_misses(scenario: &Scenario, outcome: &Outcome, seed: &SeedResult) -> Vec<String> {
    let mut misses = Vec::new();
    let want = match scenario.expect {
        Expect::Safe => Verdict::Safe,
        Expect::Unsafe => Verdict::Unsafe,
    };
    if outcome.run_verdict() != Some(want) && seed.verdict != want {
        misses.push(match (&seed.verdict, &seed.not_exercised) {
            (Verdict::NotExercised, Some(why)) => format!("not exercised: {why}"),
            (Verdict::Unsafe, _) => format!("{} violation(s) of mutual exclusion", seed.violations),
            (Verdict::Safe, _) => "no violation".into(),
            (v, None) => v.words().to_string(),
        });
    }
    if scenario.expect_live && !outcome.live && !seed.live {
        misses.push(format!(
            "not live: {} liveness finding(s)",
            seed.liveness_findings
        ));
    }
    match scenario.expect_resource {
        Some(Expect::Safe) if !outcome.resource_safe && seed.resource_violations > 0 => misses.push(format!(
            "{} stale write(s) or fencing regression(s) on the guarded resource",
            seed.resource_violations
        )),
        Some(Expect::Unsafe) if outcome.resource_safe => {
            misses.push("no stale write reached the guarded resource, expected one".into())
        }
        _ => {}
    }
    if let Some(min) = scenario.min_availability.filter(|_| !outcome.availability_ok) {
        if seed.stats.availability < min {
            misses.push(format!(
                "acquire calls that succeeded {:.1}%, below the scenario's min_availability of {:.1}%",
                seed.stats.availability * 100.0,
                min * 100.0
            ));
        }
    }
    if misses.is_empty() && outcome.partial.is_none() && seed.partial {
        misses.push("the seed was cut short".into());
    }
    misses
}

/// What kind of finding a seed holds, for the failure's `type`: the judges that failed,
/// and the named anomaly of its story where the reported seed has one.
fn finding_kind(seed: &SeedResult, story: Option<&Story>) -> String {
    let mut kinds = Vec::new();
    if !seed.safe {
        kinds.push("mutual exclusion violation");
    }
    if seed.resource_violations > 0 {
        kinds.push("stale write");
    }
    if !seed.live {
        kinds.push("liveness");
    }
    if seed.verdict == Verdict::NotExercised {
        kinds.push("not exercised");
    }
    if kinds.is_empty() {
        kinds.push("not as expected");
    }
    let kinds = kinds.join(", ");
    match story.and_then(|s| s.anomaly.as_ref()) {
        Some(named) => format!("{kinds} ({})", named.name()),
        None => kinds,
    }
}

/// The failure's text: verdict, finding, story, rerun command, report.
fn detail(
    scenario: &Scenario,
    outcome: &Outcome,
    seed: &SeedResult,
    misses: &[String],
    story: Option<&Story>,
    report: &Path,
) -> String {
    let mut s = format!(
        "{} seed {}: {}, expected {}\n",
        scenario.name,
        seed.seed,
        seed.verdict.words(),
        words(scenario.expect)
    );
    for m in misses {
        let _ = writeln!(s, "  {m}");
    }
    let _ = writeln!(s, "finding: {}", finding_kind(seed, story));
    if seed.seed == outcome.reported_seed {
        if let Some(v) = outcome.findings.violations.first() {
            let _ = writeln!(
                s,
                "violation: clients {} and {} both held {} from {} to {}",
                v.first.client,
                v.second.client,
                v.lock,
                secs(v.overlap_start_us),
                secs(v.overlap_end_us)
            );
        }
        if let Some(v) = outcome.findings.resource_violations.first() {
            let _ = writeln!(
                s,
                "stale write: client {} wrote to {} at {} after its hold ended, {}",
                v.client,
                v.lock,
                secs(v.write_us),
                super::stale::against(v)
            );
        }
    }
    if let Some(story) = story {
        let _ = writeln!(s, "story:");
        for line in story_text(story).iter().take(STORY_LINES) {
            let _ = writeln!(s, "  {line}");
        }
    }
    let _ = writeln!(s, "rerun: {}", scenario.rerun_command(seed.seed));
    let _ = writeln!(s, "report: {}", report.join("index.html").display());
    s
}

/// A story as plain lines (no Markdown escapes: the XML writer escapes what it must):
/// the numbered steps, the overlap, and why.
fn story_text(story: &Story) -> Vec<String> {
    let mut lines: Vec<String> = story
        .steps
        .iter()
        .enumerate()
        .map(|(i, step)| format!("{}. t={} {}", i + 1, secs(step.t_us), step.text))
        .collect();
    lines.push(format!("{}. {}", story.steps.len() + 1, story.overlap));
    lines.push(format!("{} ({}.)", story.why, story.lines().replace('–', "-")));
    lines
}

/// A seed's figures, for the case's output.
fn seed_line(seed: &SeedResult) -> String {
    format!(
        "{}: {} violation(s), {} stale write(s), {} liveness finding(s); {} of {} acquisitions succeeded\n",
        seed.verdict.words(),
        seed.violations,
        seed.resource_violations,
        seed.liveness_findings,
        seed.stats.acquired,
        seed.stats.acquires
    )
}

/// `safe` or `unsafe`.
fn words(expect: Expect) -> &'static str {
    match expect {
        Expect::Safe => "safe",
        Expect::Unsafe => "unsafe",
    }
}

/// The matrix's suites: one per adapter, a case per fault column. A cell fails when its
/// finding departs from the library's prediction (what makes `lockstorm matrix` exit 1);
/// a cell that did not run is skipped, saying why. `out` is the matrix folder.
pub fn matrix_suites(m: &Matrix, out: &Path) -> Vec<TestSuite> {
    m.adapters
        .iter()
        .map(|a| {
            let mut suite = TestSuite::new(a.name.as_str());
            for (fault, cell) in m.faults.iter().zip(&a.cells) {
                let status = match cell {
                    Cell::Ran(r) => match &r.departs {
                        None => TestCaseStatus::success(),
                        Some(departs) => {
                            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
                            status.set_message(format!("{}: {departs}", r.verdict()));
                            status.set_type("not as predicted");
                            let report = out.join(&r.report);
                            let mut text = format!(
                                "{} under {}: {}\n{departs}\nliveness: {}\n",
                                a.name,
                                fault.id,
                                r.tally_text(),
                                r.liveness
                            );
                            let story = story_lines(&report.join("narrative.md"));
                            if !story.is_empty() {
                                let _ = writeln!(text, "story:");
                                for line in story {
                                    let _ = writeln!(text, "  {line}");
                                }
                            }
                            let _ = writeln!(text, "rerun: {}", r.rerun);
                            let _ = writeln!(text, "report: {}", report.join("index.html").display());
                            status.set_description(text);
                            status
                        }
                    },
                    Cell::NotApplicable => skipped("no template for this adapter's node layout, or a read-write one and a lock without read and write modes"),
                    Cell::OtherShard => skipped("run by another shard of this matrix"),
                    Cell::CannotRun { why } => skipped(&format!("cannot run: {why}")),
                    Cell::Refused { why, .. } => skipped(&format!("refused: {why}")),
                    Cell::Error { why, report, rerun } => {
                        let report = if report.is_empty() {
                            String::new()
                        } else {
                            format!("report {report}; ")
                        };
                        skipped(&format!(
                            "every seed ended in an error: {why} ({report}rerun: {rerun})"
                        ))
                    }
                };
                let mut case = TestCase::new(fault.id.as_str(), status);
                case.set_classname(a.name.as_str());
                if let Cell::Ran(r) = cell {
                    case.set_system_out(format!("{}\n", r.tally_text()));
                }
                suite.add_test_case(case);
            }
            suite
        })
        .collect()
}

fn skipped(why: &str) -> TestCaseStatus {
    let mut status = TestCaseStatus::skipped();
    status.set_message(why);
    status
}

/// The first story's numbered lines in a report's narrative.md (none if it has none).
fn story_lines(narrative: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(narrative) else {
        return Vec::new();
    };
    text.lines()
        .skip_while(|l| !l.starts_with("1. "))
        .take_while(|l| l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .take(STORY_LINES)
        .map(str::to_string)
        .collect()
}
