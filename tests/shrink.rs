//! Shrinking: every unsafe scenario in scenarios/ shrinks to a story of at most twelve
//! steps that still reproduces, and the command line takes a report folder or a file.

mod common;

use lockstorm::scenario::{Expect, Scenario};
use lockstorm::shrink::{self, Budget, Kind};
use std::path::{Path, PathBuf};

/// Every scenario file under `dir`, subfolders included (other scenarios keep coming).
fn scenario_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("scenarios/ exists") {
        let path = entry.expect("readable entry").path();
        if path.is_dir() {
            out.extend(scenario_files(&path));
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The story bound of issue 14: a shrunk violation reads in at most this many steps.
const MAX_STORY_STEPS: usize = 12;

#[test]
fn every_unsafe_scenario_shrinks_to_a_short_story_that_reproduces() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    // Bounded so the test stays quick whatever scenarios are added; the shrinks of the
    // scenarios here take 20 to 80 runs.
    let budget = Budget {
        runs: 400,
        time: None,
    };
    let mut checked = 0;
    let mut failures = Vec::new();
    for file in scenario_files(&root) {
        let original = Scenario::load(&file).unwrap_or_else(|e| panic!("{e}"));
        if original.expect != Expect::Unsafe {
            continue;
        }
        let name = file.display();
        if original.deployment_on_simulator().is_err() {
            // Refused in one line: the simulator's model of Sentinel leaves it out.
            let Err(err) = shrink::shrink(&original, original.seed, None, &budget, &|_| {}) else {
                panic!("{name}: a [sentinel] scenario shrinks on a simulator that does not model it");
            };
            assert!(err.to_string().contains("[sentinel]"), "{err}");
            continue;
        }
        checked += 1;
        let shrunk = match shrink::shrink(&original, original.seed, None, &budget, &|_| {}) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        if shrunk.kind != Kind::MutualExclusion {
            failures.push(format!("{name}: shrunk a {}, not the violation", shrunk.kind));
        }
        match shrunk.story_after {
            Some(n) if n <= MAX_STORY_STEPS => {}
            other => failures.push(format!("{name}: story of {other:?} steps")),
        }
        let before = shrunk.story_before.expect("an unsafe run has a story");
        assert!(shrunk.story_after.unwrap_or(0) <= before.max(MAX_STORY_STEPS));
        // The file it writes parses back and its run shows the violation again.
        let text = shrunk.scenario.to_toml(&shrunk.comment(&original));
        let back = Scenario::parse(&text, "shrunk.toml", "shrunk").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let (result, _, _) = lockstorm::run::run_seed(&back, shrunk.seed, &mut |_, _| {});
        if result.safe {
            failures.push(format!("{name}: the shrunk scenario does not reproduce\n{text}"));
        }
    }
    assert!(checked >= 6, "expected the unsafe scenarios, found {checked}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

const BROKEN: &str = "# a quorum of 1 out of 3\nduration = \"5s\"\nnodes = 3\nexpect = \"unsafe\"\n[algorithm]\nquorum = 1\n[clients]\ncount = 4\n";

#[test]
fn a_report_folder_shrinks_into_a_folder_beside_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("broken.toml"), BROKEN).unwrap();
    let run = common::lockstorm(tmp.path(), &["scenario", "broken.toml"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(run.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.contains("shrink: cargo run --release -- shrink broken.toml --seed 1"),
        "{stdout}"
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("reports/broken/summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        summary["shrink"],
        "cargo run --release -- shrink broken.toml --seed 1"
    );
    let html = std::fs::read_to_string(tmp.path().join("reports/broken/index.html")).unwrap();
    assert!(html.contains("shrink broken.toml --seed 1"));

    let out = common::lockstorm(tmp.path(), &["shrink", "reports/broken"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("shrunk to broken-shrunk (mutual exclusion violation)"),
        "{stdout}"
    );
    let dir = tmp.path().join("reports/broken-shrunk");
    let shrunk = Scenario::load(&dir.join("broken-shrunk.toml")).unwrap();
    assert!(shrunk.clients.count <= 4 && shrunk.expect == Expect::Unsafe);
    assert!(dir.join("index.html").exists() && dir.join("summary.json").exists());
    // The minimal scenario runs as it expects.
    common::runs_as_expected(tmp.path(), "reports/broken-shrunk/broken-shrunk.toml");
}

/// A run made unsafe by `--set` shrinks from its folder with that override applied again
/// (the file alone is safe: nothing to shrink).
#[test]
fn a_report_folder_shrinks_with_the_overrides_its_run_had() {
    let tmp = tempfile::tempdir().unwrap();
    let safe = "duration = \"5s\"\nnodes = 3\n[clients]\ncount = 4\n";
    std::fs::write(tmp.path().join("quorum.toml"), safe).unwrap();
    let run = common::lockstorm(
        tmp.path(),
        &[
            "scenario",
            "quorum.toml",
            "-q",
            "--set",
            "algorithm.quorum=1",
            "--set",
            "expect=\"unsafe\"",
        ],
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("reports/quorum/summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        summary["overrides"],
        serde_json::json!(["algorithm.quorum=1", "expect=unsafe"])
    );
    let out = common::lockstorm(tmp.path(), &["shrink", "reports/quorum", "-q"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let shrunk = Scenario::load(&tmp.path().join("reports/quorum-shrunk/quorum-shrunk.toml")).unwrap();
    assert_eq!(
        shrunk.algorithm.quorum, 1,
        "the override is in the shrunk scenario"
    );
}

#[test]
fn nothing_to_shrink_and_a_missing_file_are_one_line_errors() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("safe.toml"),
        "# safe\nduration = \"2s\"\nnodes = 3\n",
    )
    .unwrap();
    common::one_line_errors(
        tmp.path(),
        &[
            (&["shrink", "safe.toml"][..], "nothing to shrink"),
            (&["shrink", "missing.toml"][..], "missing.toml"),
            (
                &["shrink", "safe.toml", "--kind", "stale_write"][..],
                "shows no stale write",
            ),
        ],
    );
}

/// Issue 41: the shrink command a page prints runs as printed, with the run's `--set`s;
/// it takes `--backend sim` (what a real run's page prints) and refuses the others.
#[test]
fn the_printed_shrink_command_keeps_the_overrides_and_names_only_the_simulator() {
    let tmp = tempfile::tempdir().unwrap();
    // Safe as written (a quorum of 2), broken by the override.
    let safe = BROKEN.replace("quorum = 1", "quorum = 2");
    std::fs::write(tmp.path().join("b.toml"), safe).unwrap();
    let run = common::lockstorm(
        tmp.path(),
        &["scenario", "b.toml", "--set", "algorithm.quorum=1", "-q"],
    );
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("reports/b/summary.json")).unwrap()).unwrap();
    let shrink = summary["shrink"].as_str().unwrap();
    assert_eq!(
        shrink,
        "cargo run --release -- shrink b.toml --seed 1 --set algorithm.quorum=1"
    );
    let args: Vec<&str> = shrink
        .strip_prefix("cargo run --release -- ")
        .unwrap()
        .split(' ')
        .chain(["--backend", "sim", "--max-runs", "30", "-q"])
        .collect();
    let out = common::lockstorm(tmp.path(), &args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("(mutual exclusion violation)"), "{stdout}");
    common::one_line_errors(
        tmp.path(),
        &[
            (&["shrink", "b.toml", "--backend", "redis"][..], "simulator only"),
            (
                &["shrink", "reports/b", "--set", "algorithm.quorum=1"][..],
                "--set goes with a scenario file",
            ),
        ],
    );
}
