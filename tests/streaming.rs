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
            lockstorm::report::rerender(&stream_dir, lockstorm::report::Keep::Whole).unwrap();
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

/// A committed report keeps of a long history the windows its stories cite: each line
/// the page and narrative cite is in the file at its own number, the rest is blank, the
/// meta line says so, the checker refuses the file, and the streamed and in-memory
/// paths cut alike.
#[test]
fn a_cited_history_is_cut_to_the_lines_its_pages_cite() {
    let root = tempfile::tempdir().unwrap();
    for name in [
        "client-clock-slow-during-hold",
        "fencing-pause-unfenced",
        "replica-failover",
    ] {
        let scenario = load(name);
        let memory_dir = root.path().join(format!("{name}-memory"));
        let stream_dir = root.path().join(format!("{name}-stream"));
        std::fs::create_dir_all(&stream_dir).unwrap();
        let in_memory = run(&scenario, &[scenario.seed], None);
        let streamed = run(
            &scenario,
            &[scenario.seed],
            Some(stream_dir.join("history.jsonl")),
        );
        let whole = {
            let mut text = Vec::new();
            let History::Memory(events) = &in_memory.history else {
                unreachable!()
            };
            lockstorm::history::write_jsonl(events, &mut text).unwrap();
            String::from_utf8(text).unwrap()
        };
        let keep = lockstorm::run::analysis::keep_cited(&in_memory);
        assert_eq!(keep, lockstorm::report::Keep::Cited, "{name} has findings");
        let rendered = lockstorm::report::write_with(
            &memory_dir,
            &scenario,
            &in_memory,
            keep,
            lockstorm::report::Plots::All,
            lockstorm::report::interactive::Budget::COMMITTED,
        )
        .unwrap();
        lockstorm::report::write_with(
            &stream_dir,
            &scenario,
            &streamed,
            keep,
            lockstorm::report::Plots::All,
            lockstorm::report::interactive::Budget::COMMITTED,
        )
        .unwrap();
        let cut = std::fs::read_to_string(memory_dir.join("history.jsonl")).unwrap();
        assert_eq!(
            cut,
            std::fs::read_to_string(stream_dir.join("history.jsonl")).unwrap(),
            "{name}"
        );
        let lockstorm::report::Kept::Cut { windows, lines } = &rendered.history else {
            panic!("{name}: {:?}", rendered.history);
        };
        let (whole, kept): (Vec<&str>, Vec<&str>) = (whole.lines().collect(), cut.lines().collect());
        assert_eq!(
            (kept.len(), whole.len()),
            (*lines, *lines),
            "{name}: every line keeps its number"
        );
        let (page, md) = (
            std::fs::read_to_string(memory_dir.join("index.html")).unwrap(),
            std::fs::read_to_string(memory_dir.join("narrative.md")).unwrap(),
        );
        let text = format!("{page}{md}");
        let cited: Vec<usize> = lockstorm::report::cited(&md, &page)
            .into_iter()
            .flatten()
            .collect();
        assert!(cited.len() > 3, "{name}: the pages cite lines: {cited:?}");
        for n in cited {
            assert!(n >= 1 && n <= *lines, "{name}: line {n} of {lines}");
            if n == 1 {
                continue; // the meta line, which gains `cut` (below)
            }
            assert_eq!(
                kept[n - 1],
                whole[n - 1],
                "{name}: cited line {n} is kept as it was"
            );
        }
        let blank = kept.iter().filter(|l| l.is_empty()).count();
        assert!(blank > 0, "{name}: a cut keeps less than the whole");
        for (i, (k, w)) in kept.iter().zip(&whole).enumerate().skip(1) {
            let inside = windows.iter().any(|r| r.contains(&(i + 1)));
            assert_eq!(*k, if inside { *w } else { "" }, "{name}: line {}", i + 1);
        }
        let meta: serde_json::Value = serde_json::from_str(kept[0]).unwrap();
        assert_eq!(meta["cut"]["lines"], *lines as u64, "{name}");
        assert!(
            kept[0].starts_with(&whole[0][..whole[0].len() - 1]),
            "{name}: the meta line gains cut at its end: {}",
            kept[0]
        );
        assert!(text.contains("cut to what this page cites"), "{name}");
        let err = lockstorm::checker::check(
            &lockstorm::history::read_jsonl(&memory_dir.join("history.jsonl")).unwrap(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("meta: cut"), "{name}: {err}");
    }
}
