//! Every scenario in scenarios/ runs on the simulator and gets the verdict it expects.

use lockstorm::real::RealOptions;
use lockstorm::run;
use lockstorm::scenario::Scenario;
use std::path::PathBuf;

fn scenario_files() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("scenarios/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_scenario_meets_its_expectation() {
    let files = scenario_files();
    assert!(files.len() >= 4, "expected the core scenarios, found {files:?}");
    let mut failures = Vec::new();
    for file in &files {
        let scenario = Scenario::load(file).unwrap_or_else(|e| panic!("{e}"));
        let outcome =
            run::run(&scenario, &[scenario.seed], 1, &RealOptions::default(), &|_| {}).expect("runs");
        if !outcome.as_expected {
            failures.push(format!(
                "{}: expected {:?}, got safe={} live={} availability_ok={} (rerun: {})",
                file.display(),
                scenario.expect,
                outcome.safe,
                outcome.live,
                outcome.availability_ok,
                scenario.rerun_command(outcome.reported_seed)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_scenario_file_starts_with_a_comment_saying_what_it_shows() {
    for file in scenario_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.starts_with("# "),
            "{} does not start with a comment",
            file.display()
        );
    }
}

#[test]
fn a_minority_cut_off_keeps_acquisitions_succeeding() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/redlock-minority-down.toml");
    let scenario = Scenario::load(&file).unwrap();
    let outcome = run::run(&scenario, &[scenario.seed], 1, &RealOptions::default(), &|_| {}).expect("runs");
    let stats = &outcome.findings.stats;
    assert!(outcome.safe && outcome.live);
    assert!(stats.acquired > 1_000, "{stats:?}");
    assert!(stats.availability > 0.9, "{stats:?}");
}
