//! How much history a scenario's run would write, checked before the run against the
//! limit in [`crate::limits`] so a run that would fill the disk is refused up front.

use super::{Backend, Scenario};
use crate::limits::{max_history_bytes, EVENT_BYTES};

/// About how many bytes of history a run of `scenario` writes: every client acquires
/// and releases (four events, six with resource writes) once per think, hold and two
/// message delays (at least a millisecond), and no more often than the locks can be
/// held one after another; the simulator's `node` lines add two per node. A 120 s run
/// of the defaults writes 2.3 MB without node lines; this says 5.
pub fn expected_history_bytes(scenario: &Scenario) -> u64 {
    let c = &scenario.clients;
    let hold_us = c.hold.mean_us(0).max(1.0);
    let cycle_us = (c.think.mean_us(0) + hold_us + 2.0 * scenario.network.latency.mean_us(0)).max(1_000.0);
    let cycles_per_us = (c.count as f64 / cycle_us).min(f64::from(c.locks.max(1)) / hold_us);
    let mut events_per_cycle = if c.resource_writes { 6.0 } else { 4.0 };
    if scenario.node_events && scenario.backend == Backend::Sim {
        // A `node` line per node for the key's set and for its delete (or expiry).
        events_per_cycle += 2.0 * scenario.nodes as f64;
    }
    let events = cycles_per_us * scenario.duration_us as f64 * events_per_cycle;
    (events * EVENT_BYTES as f64).min(u64::MAX as f64) as u64
}

/// Refuses a run whose expected history passes [`max_history_bytes`].
pub fn check_history_size(scenario: &Scenario) -> Result<(), String> {
    let (expected, limit) = (expected_history_bytes(scenario), max_history_bytes());
    if expected <= limit {
        return Ok(());
    }
    Err(format!(
        "{}: a run of {} s with {} clients would write about {} MB of history, over the limit of {} MB: shorten the run, or raise the limit with --max-history-mb",
        scenario.name,
        scenario.duration_us / 1_000_000,
        scenario.clients.count,
        expected >> 20,
        limit >> 20
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::MAX_PLANNED_FAULTS;

    #[test]
    fn a_history_that_would_fill_the_disk_is_refused_before_the_run() {
        let text = "duration = \"1000000000s\"\nnodes = 3\n";
        let huge = Scenario::parse(text, "s.toml", "s").unwrap();
        let e = check_history_size(&huge).unwrap_err();
        assert!(e.contains("--max-history-mb"), "{e}");
        // Every scenario the project ships fits.
        fn toml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
            for e in std::fs::read_dir(dir).unwrap().flatten() {
                let p = e.path();
                if p.is_dir() {
                    toml_files(&p, out);
                } else if p.extension().is_some_and(|x| x == "toml") {
                    out.push(p);
                }
            }
        }
        let mut files = Vec::new();
        toml_files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios"),
            &mut files,
        );
        assert!(files.len() > 10);
        for f in files {
            if let Ok(s) = Scenario::load(&f) {
                assert_eq!(check_history_size(&s), Ok(()), "{}", f.display());
            }
        }
    }

    #[test]
    fn a_day_at_partition_tomls_own_rate_is_in_the_fault_budget_and_a_1_us_interval_is_not() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/partition.toml");
        let text = std::fs::read_to_string(path).unwrap();
        assert!(text.contains("duration = \"10m\""));
        let day = text.replace("duration = \"10m\"", "duration = \"24h\"");
        let s = Scenario::parse(&day, "partition.toml", "p").unwrap();
        let planned = s.nemesis.expected_faults(s.duration_us)[0].1;
        assert!((172_000.0..173_000.0).contains(&planned), "{planned}");
        const { assert!(MAX_PLANNED_FAULTS > 300_000) };
        for absurd in ["1us", "10us"] {
            let text = format!("duration = \"10s\"\n[nemesis]\npartition = {{ interval = \"{absurd}\", duration = \"1ms\" }}\n");
            let e = Scenario::parse(&text, "t.toml", "t").unwrap_err().to_string();
            assert!(e.contains("bytes"), "{absurd}: {e}");
        }
    }
}
