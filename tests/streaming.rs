//! The two paths a simulated run's history can take give the same verdict and the same
//! report, byte for byte: kept in memory (then written and checked), or streamed to
//! history.jsonl as it is made and judged event by event, with the report reading the
//! file again (what `lockstorm scenario` does, so a long run needs flat memory).

use lockstorm::real::RealOptions;
use lockstorm::run::{self, History, Outcome};
use lockstorm::scenario::Scenario;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Scenarios whose reports quote the history in every way a report does: violation
/// stories (a clock that changes mid-hold, a failover), stale writes, read-write modes
/// and late extensions.
const SCENARIOS: [&str; 6] = [
    "client-clock-slow-during-hold",
    "replica-failover",
    "fencing-pause-unfenced",
    "rw-writer-starvation",
    "extension",
    "partition",
];

fn load(name: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(format!("{name}.toml"));
    Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Every file of a report folder by name, but timing.json (wall-clock figures) and
/// the folder's manifest (which only a folder made by `lockstorm` has).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n != "timing.json" && n != ".lockstorm-files")
        })
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

/// The files that are in one folder and not the other, or differ.
fn differing(a: &BTreeMap<String, Vec<u8>>, b: &BTreeMap<String, Vec<u8>>) -> Vec<String> {
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    names
        .into_iter()
        .filter(|n| a.get(*n) != b.get(*n))
        .cloned()
        .collect()
}

fn run(scenario: &Scenario, seeds: &[u64], history_path: Option<PathBuf>) -> Outcome {
    let options = RealOptions {
        history_path,
        ..RealOptions::default()
    };
    run::run(scenario, seeds, 2, &options, &|_| {}).expect("the simulator runs")
}

#[test]
fn a_streamed_history_gives_the_report_a_history_in_memory_gives() {
    let root = tempfile::tempdir().unwrap();
    for name in SCENARIOS {
        let scenario = load(name);
        for seeds in [vec![scenario.seed], (scenario.seed..scenario.seed + 3).collect()] {
            let context = format!("{name}, seeds {seeds:?}");
            let memory_dir = root.path().join(format!("{name}-{}-memory", seeds.len()));
            let stream_dir = root.path().join(format!("{name}-{}-stream", seeds.len()));
            std::fs::create_dir_all(&stream_dir).unwrap();

            let in_memory = run(&scenario, &seeds, None);
            let streamed = run(&scenario, &seeds, Some(stream_dir.join("history.jsonl")));
            let History::Memory(events) = &in_memory.history else {
                panic!("{context}: no file given, the history stays in memory");
            };
            let History::File { events: count, .. } = &streamed.history else {
                panic!("{context}: a file given, the history goes there");
            };
            assert_eq!(events.len(), *count, "{context}");
            assert_eq!(in_memory.verdict(), streamed.verdict(), "{context}");
            assert_eq!(in_memory.findings.holds, streamed.findings.holds, "{context}");
            assert_eq!(
                serde_json::to_string(&in_memory.findings).unwrap(),
                serde_json::to_string(&streamed.findings).unwrap(),
                "{context}"
            );

            lockstorm::report::write(&memory_dir, &scenario, &in_memory).unwrap();
            lockstorm::report::write(&stream_dir, &scenario, &streamed).unwrap();
            let memory = files(&memory_dir);
            assert_eq!(
                differing(&memory, &files(&stream_dir)),
                Vec::<String>::new(),
                "{context}"
            );
            // And `lockstorm report DIR`, which reads the file in one pass, draws it again.
            lockstorm::report::rerender(&stream_dir).unwrap();
            assert_eq!(
                differing(&memory, &files(&stream_dir)),
                Vec::<String>::new(),
                "{context}: the report redrawn from the file"
            );
        }
    }
}

#[test]
fn an_unwritable_history_file_is_an_error_not_a_panic() {
    let scenario = load("partition");
    let path = PathBuf::from("/nonexistent-dir/history.jsonl");
    let options = RealOptions {
        history_path: Some(path),
        ..RealOptions::default()
    };
    let Err(err) = run::run(&scenario, &[1], 1, &options, &|_| {}) else {
        panic!("a history that cannot be written is an error");
    };
    assert!(
        err.to_string().contains("/nonexistent-dir/history.jsonl"),
        "{err}"
    );
}
