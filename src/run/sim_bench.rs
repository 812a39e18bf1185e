//! `lockstorm bench --sim`: how fast the simulator and the checker are. One scenario
//! (scenarios/partition.toml by default: Redlock on 5 nodes, 20 clients, random
//! partitions) is simulated on one thread with its history kept in memory, the history
//! is checked in memory, then written to a JSONL file and checked from there as
//! `lockstorm check` does (reading included, one pass, events not kept; lines parsed by
//! a worker per core, up to four), `rounds` times; the medians of each
//! series are reported side by side with the process's peak resident memory. Not a
//! timed test: numbers depend on the machine and its load.

use crate::checker;
use crate::history::{self, Event};
use crate::scenario::Scenario;
use std::time::Instant;

/// The medians of one bench run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SimBench {
    pub rounds: usize,
    /// History events per round (the same every round: the simulator is deterministic).
    pub events: u64,
    /// Lock operations (invocations) the clients made per round.
    pub lock_ops: u64,
    /// (a) Lock operations per wall second, simulating (history kept in memory).
    pub lock_ops_per_sec: f64,
    /// (b) History events checked per second, in memory.
    pub checked_per_sec: f64,
    /// (c) History events read from JSONL and checked per second, in one pass
    /// ([`checker::check_jsonl`], as `lockstorm check`).
    pub jsonl_checked_per_sec: f64,
    /// The workers that parsed the JSONL for (c) ([`history::line_workers`]; 0: the
    /// checking thread parsed it).
    pub jsonl_workers: usize,
    /// (d) The process's peak resident memory, bytes (VmHWM), after every round.
    pub peak_rss_bytes: Option<u64>,
    /// Size of the JSONL history, bytes.
    pub jsonl_bytes: u64,
}

/// Runs the bench on `scenario` with `seed`, `rounds` times.
pub fn run(scenario: &Scenario, seed: u64, rounds: usize) -> std::io::Result<SimBench> {
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("history.jsonl");
    let (mut sim, mut check, mut jsonl) = (Vec::new(), Vec::new(), Vec::new());
    let (mut events, mut lock_ops, mut jsonl_bytes) = (0, 0, 0);
    for _ in 0..rounds.max(1) {
        let started = Instant::now();
        let output = crate::sim::run(scenario, seed);
        sim.push(started.elapsed().as_secs_f64());
        let history: Vec<Event> = output.history;
        events = history.len() as u64;
        lock_ops = output.stats.lock_ops;

        let started = Instant::now();
        let findings = checker::check(&history).expect("the simulator writes well-formed histories");
        check.push(started.elapsed().as_secs_f64());
        std::hint::black_box(&findings);

        history::write_jsonl(&history, std::io::BufWriter::new(std::fs::File::create(&path)?))?;
        jsonl_bytes = std::fs::metadata(&path)?.len();
        drop(history);
        let started = Instant::now();
        let findings = checker::check_jsonl(&path)
            .map_err(std::io::Error::other)?
            .expect("the simulator writes well-formed histories");
        jsonl.push(started.elapsed().as_secs_f64());
        std::hint::black_box(&findings);
    }
    Ok(SimBench {
        rounds: sim.len(),
        events,
        lock_ops,
        lock_ops_per_sec: lock_ops as f64 / median(&mut sim).max(1e-9),
        checked_per_sec: events as f64 / median(&mut check).max(1e-9),
        jsonl_checked_per_sec: events as f64 / median(&mut jsonl).max(1e-9),
        jsonl_workers: history::line_workers(),
        peak_rss_bytes: peak_rss_bytes(),
        jsonl_bytes,
    })
}

/// The middle of `samples` (sorted in place; the upper one of an even count).
pub fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// The process's peak resident set (VmHWM in /proc/self/status), where there is one.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_bench_counts_the_run_it_measured() {
        let text = "duration = \"1s\"\nnodes = 3\n[clients]\ncount = 3\n";
        let scenario = Scenario::parse(text, "bench", "bench-sim").unwrap();
        let b = run(&scenario, 1, 1).unwrap();
        let output = crate::sim::run(&scenario, 1);
        assert_eq!(b.events, output.history.len() as u64);
        assert_eq!(b.lock_ops, output.stats.lock_ops);
        assert!(b.lock_ops > 0 && b.jsonl_bytes > 0);
        if cfg!(target_os = "linux") {
            assert!(b.peak_rss_bytes.is_some());
        }
    }
}
