//! `--junit FILE`: the file validates against the JUnit schema CI systems read
//! (tests/junit.xsd, with `xmllint`), has a case per seed (or matrix cell), and its
//! failures are exactly the cases that keep the run from being as expected, each with
//! the verdict, the story's first lines and the rerun command.

use quick_junit::{NonSuccessKind, Report, TestCaseStatus};
use std::path::Path;
use std::process::{Command, Output};

fn lockstorm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("lockstorm runs")
}

/// Validates `file` against tests/junit.xsd with xmllint; without xmllint (libxml2-utils,
/// which ./test installs) says so and checks only what quick-junit's reader checks.
fn validate(file: &Path) {
    let schema = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/junit.xsd");
    let out = match Command::new("xmllint")
        .args(["--noout", "--schema"])
        .arg(&schema)
        .arg(file)
        .output()
    {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!("skipped the schema check: xmllint is not installed (apt-get install libxml2-utils)");
            return;
        }
        Err(e) => panic!("xmllint: {e}"),
    };
    assert!(
        out.status.success(),
        "{} does not validate: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The JUnit file, validated and read back.
fn junit(file: &Path) -> Report {
    validate(file);
    let text = std::fs::read_to_string(file).unwrap();
    Report::deserialize_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// Each case's name and, when it failed, its message and text (an error is no outcome
/// lockstorm writes).
fn cases(report: &Report) -> Vec<(String, Option<(String, String)>)> {
    report
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .map(|c| {
            let failure = match &c.status {
                TestCaseStatus::Success { .. } | TestCaseStatus::Skipped { .. } => None,
                TestCaseStatus::NonSuccess {
                    kind: NonSuccessKind::Failure,
                    message,
                    description,
                    ..
                } => Some((
                    message
                        .as_ref()
                        .map(|m| m.as_str().to_string())
                        .unwrap_or_default(),
                    description
                        .as_ref()
                        .map(|d| d.as_str().to_string())
                        .unwrap_or_default(),
                )),
                other => panic!("{}: unexpected status {other:?}", c.name.as_str()),
            };
            (c.name.as_str().to_string(), failure)
        })
        .collect()
}

const SMALL: &str = "duration = \"2s\"\nnodes = 3\n[clients]\ncount = 3\n";

/// Seed 002's single-instance lock released with a plain DEL while a paused client's key
/// expired: unsafe on every seed.
const RELEASE_DEL: &str = r#"
seed = 1
duration = "3s"
nodes = 1
[algorithm]
kind = "single"
ttl = "500ms"
release = "del"
[clients]
count = 3
locks = 1
[[faults]]
at = "1s"
kind = "pause"
client = 0
duration = "1.5s"
point = "after_acquire"
"#;

#[test]
fn a_multi_seed_run_as_expected_writes_a_passing_case_per_seed() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("small.toml"), SMALL).unwrap();
    let out = lockstorm(
        tmp.path(),
        &[
            "scenario",
            "small.toml",
            "--seeds",
            "3",
            "--junit",
            "ci/junit.xml",
            "-q",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = junit(&tmp.path().join("ci/junit.xml"));
    assert_eq!(report.test_suites.len(), 1);
    assert_eq!(report.test_suites[0].name.as_str(), "small");
    let names: Vec<String> = cases(&report)
        .into_iter()
        .map(|(n, f)| {
            assert!(f.is_none(), "{n} failed");
            n
        })
        .collect();
    assert_eq!(names, ["seed 1", "seed 2", "seed 3"]);
}

#[test]
fn an_unsafe_run_expected_safe_fails_each_unsafe_seed_with_its_story_and_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("del.toml"), RELEASE_DEL).unwrap();
    let out = lockstorm(
        tmp.path(),
        &[
            "scenario",
            "del.toml",
            "--seeds",
            "2",
            "--junit",
            "junit.xml",
            "-q",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = junit(&tmp.path().join("junit.xml"));
    assert_eq!(report.failures, 2, "both seeds are unsafe");
    for (name, failure) in cases(&report) {
        let (message, text) = failure.unwrap_or_else(|| panic!("{name} passed"));
        assert!(message.starts_with("unsafe, expected safe: "), "{message}");
        let seed = name.strip_prefix("seed ").unwrap();
        assert!(text.contains("finding: mutual exclusion violation"), "{text}");
        assert!(
            text.contains(&format!(
                "rerun: cargo run --release -- scenario del.toml --seed {seed}"
            )),
            "{text}"
        );
        if seed == "1" {
            // The reported seed tells its story, numbered steps first.
            assert!(text.contains("story:\n  1. t="), "{text}");
            assert!(text.contains("both held"), "{text}");
            // ... and names its anomaly: a release that deletes without its token.
            assert!(
                text.contains("finding: mutual exclusion violation (release without a token check)"),
                "{text}"
            );
        }
    }
}

#[test]
fn a_safe_run_expected_unsafe_fails_every_seed_that_found_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("small.toml"), SMALL).unwrap();
    let out = lockstorm(
        tmp.path(),
        &[
            "scenario",
            "small.toml",
            "--seeds",
            "2",
            "--set",
            "expect=unsafe",
            "--junit",
            "j.xml",
            "-q",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let report = junit(&tmp.path().join("j.xml"));
    let failed: Vec<String> = cases(&report)
        .into_iter()
        .map(|(_, f)| f.expect("every seed found nothing").0)
        .collect();
    assert_eq!(failed, ["safe, expected unsafe: no violation"; 2]);
}

#[test]
fn an_analysis_writes_a_suite_per_scenario_and_a_case_per_seed() {
    let tmp = tempfile::tempdir().unwrap();
    let scenarios = tmp.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    std::fs::write(scenarios.join("small.toml"), SMALL).unwrap();
    std::fs::write(
        scenarios.join("del.toml"),
        format!("expect = \"unsafe\"\n{RELEASE_DEL}"),
    )
    .unwrap();
    let out = lockstorm(
        tmp.path(),
        &[
            "analysis",
            "--scenarios",
            "scenarios",
            "--out",
            "analysis",
            "--seeds",
            "2",
            "--junit",
            "a.xml",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = junit(&tmp.path().join("a.xml"));
    let suites: Vec<(&str, usize)> = report
        .test_suites
        .iter()
        .map(|s| (s.name.as_str(), s.test_cases.len()))
        .collect();
    assert_eq!(suites, [("del", 2), ("small", 2)]);
    assert_eq!(report.failures, 0, "both scenarios are as expected");
}

/// One cell of a matrix that ran, as matrix.json holds it.
fn ran(fault: &str, unsafe_seeds: u64, departs: Option<&str>) -> serde_json::Value {
    serde_json::json!({
        "status": "ran", "seeds": 2, "seeds_asked": 2, "unsafe_seeds": unsafe_seeds,
        "not_exercised_seeds": 0, "rate": {"rate": 0.0, "low": 0.0, "high": 0.66},
        "violations": unsafe_seeds, "stale_seeds": 0, "stale_writes": 0, "resource_writes": 0,
        "stuck_seeds": 0, "availability": 1.0, "unknown": 0.0, "stalls": 0, "stall_seeds": 0,
        "stall_max_us": 0, "liveness": "none", "worker_errors": 0, "reported_seed": 1,
        "report": format!("lib/{fault}/index.html"),
        "rerun": format!("lockstorm scenario scenarios/matrix/multi/{fault}.toml --adapter lib --seed 1"),
        "rerun_all": "", "departs": departs,
    })
}

#[test]
fn the_library_matrix_has_a_case_per_cell_failing_where_it_departs_from_the_prediction() {
    let fault = |id: &str| serde_json::json!({"id": id, "title": id, "about": ""});
    let matrix: lockstorm::report::matrix::Matrix = serde_json::from_value(serde_json::json!({
        "seed": 1, "seeds": 2, "command": "lockstorm matrix",
        "faults": [fault("01-clean"), fault("02-partition"), fault("03-failover")],
        "adapters": [{
            "name": "lib", "runtime": "python", "kind": "multi", "command": "python3 lib.py",
            "promise": "", "cells": [
                ran("01-clean", 0, None),
                ran("02-partition", 1, Some("predicted safe, found unsafe on 1/2 seeds")),
                {"status": "not_applicable"},
            ],
        }],
    }))
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("matrix.xml");
    let suites = lockstorm::report::junit::matrix_suites(&matrix, tmp.path());
    lockstorm::report::junit::write(&file, "lockstorm matrix", suites).unwrap();
    let report = junit(&file);
    assert_eq!((report.tests, report.failures, report.skipped), (3, 1, 1));
    let failed: Vec<(String, Option<(String, String)>)> =
        cases(&report).into_iter().filter(|(_, f)| f.is_some()).collect();
    assert_eq!(failed.len(), 1);
    let (name, Some((message, text))) = &failed[0] else {
        unreachable!()
    };
    assert_eq!(name, "02-partition");
    assert_eq!(message, "unsafe: predicted safe, found unsafe on 1/2 seeds");
    assert!(
        text.contains(
            "rerun: lockstorm scenario scenarios/matrix/multi/02-partition.toml --adapter lib --seed 1"
        ),
        "{text}"
    );
}

#[test]
fn merged_shards_write_the_cases_of_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("del.toml"), RELEASE_DEL).unwrap();
    let run = |args: &[&str]| lockstorm(tmp.path(), args).status.code();
    let one = [
        "scenario", "del.toml", "--seeds", "4", "--out", "one", "--junit", "one.xml", "-q",
    ];
    assert_eq!(run(&one), Some(1));
    for shard in ["0/2", "1/2"] {
        let out = format!("s{}", &shard[..1]);
        let args = [
            "scenario", "del.toml", "--seeds", "4", "--shard", shard, "--out", &out, "-q",
        ];
        assert_eq!(run(&args), Some(1));
    }
    assert_eq!(
        run(&[
            "merge",
            "s0",
            "s1",
            "--out",
            "merged",
            "--junit",
            "merged.xml",
            "-q"
        ]),
        Some(1)
    );
    let strip = |report: Report| {
        let cases = cases(&report);
        cases
            .into_iter()
            .map(|(name, failure)| {
                (
                    name,
                    failure.map(|(m, text)| (m, text.replace("merged/", "one/"))),
                )
            })
            .collect::<Vec<_>>()
    };
    let one = strip(junit(&tmp.path().join("one.xml")));
    assert_eq!(one.len(), 4);
    assert_eq!(strip(junit(&tmp.path().join("merged.xml"))), one);
}
