//! `cargo bench --bench jsonl`: how fast history lines are read, on lockstorm's own
//! lines (the history of scenarios/partition.toml, seed 1, simulated here), three ways:
//! the general `serde_json` path every line took before node lines got a flat struct
//! (`general`), [`history::parse_line`] as lockstorm reads them (flat structs read by
//! `serde_json`), and the same flat structs read by sonic-rs. All three give the same
//! events. Prints lines per second, the median of five rounds, in all and per kind of
//! line. Not a timed test: numbers depend on the machine and its load (count
//! instructions with `valgrind --tool=callgrind` for a figure that does not).

use lockstorm::history::{self, Event, LineReader};
use lockstorm::scenario::Scenario;
use std::path::Path;
use std::time::Instant;

/// sonic-rs reading the flat line structs.
struct Sonic;

impl LineReader for Sonic {
    fn read<'a, T: serde::Deserialize<'a>>(text: &'a str) -> Option<T> {
        sonic_rs::from_str(text).ok()
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Lines per second reading `lines` with `parse`, the median of five rounds.
fn rate(lines: &[&str], parse: fn(&str) -> Result<Event, serde_json::Error>) -> f64 {
    let times = (0..5)
        .map(|_| {
            let started = Instant::now();
            for line in lines {
                let event = parse(line).expect("lockstorm's own lines read");
                std::hint::black_box(&event);
            }
            started.elapsed().as_secs_f64()
        })
        .collect();
    lines.len() as f64 / median(times).max(1e-9)
}

fn main() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/partition.toml");
    let scenario = Scenario::load(&file).expect("scenarios/partition.toml loads");
    let events = lockstorm::sim::run(&scenario, 1).history;
    let mut text = Vec::new();
    history::write_jsonl(&events, &mut text).expect("writes to memory");
    let text = String::from_utf8(text).expect("JSONL is UTF-8");
    let all: Vec<&str> = text.lines().collect();
    let kind = |line: &&str| line.split('"').nth(3).unwrap_or("").to_string();
    let mut kinds: Vec<String> = all.iter().map(kind).collect();
    kinds.sort();
    kinds.dedup();
    println!(
        "{:<8} {:>8} {:>14} {:>14} {:>14}",
        "lines", "count", "general/s", "serde_json/s", "sonic-rs/s"
    );
    let row = |name: &str, lines: &[&str]| {
        let general = rate(lines, |l| serde_json::from_str::<Event>(l));
        let now = rate(lines, history::parse_line);
        let sonic = rate(lines, history::parse_line_with::<Sonic>);
        println!(
            "{name:<8} {:>8} {general:>14.0} {now:>14.0} {sonic:>14.0}",
            lines.len()
        );
    };
    row("all", &all);
    for k in &kinds {
        let lines: Vec<&str> = all.iter().copied().filter(|l| kind(l) == *k).collect();
        if lines.len() >= 100 {
            row(k, &lines);
        }
    }
    println!(
        "(partition.toml, seed 1: {} events, {:.1} MB of JSONL; general: serde_json's \
         internally tagged Event, as node lines were read before)",
        all.len(),
        text.len() as f64 / 1e6
    );
}
