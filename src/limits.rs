//! The largest numbers lockstorm takes from any input, and why: no scenario file and no
//! history may make it allocate or compute without bound.
//!
//! Scenarios are checked against these when they are resolved ([`crate::scenario`]),
//! histories when the checker reads them ([`crate::checker`]), before anything is sized
//! by a number from the input. A report has a row per node and client and a shaded span
//! per fault, the checker keeps per-node state for every failed acquisition, and every
//! fault is two history lines: these bounds keep each of those in the range a person can
//! read and a laptop can hold.

/// Nodes of a run: Redlock deployments use 3 to 9; 64 leaves room for experiments.
pub const MAX_NODES: usize = 64;

/// Clients of a run (each is a row of the report and a link to every node).
pub const MAX_CLIENTS: usize = 10_000;

/// The longest time anything in a scenario or a history may take or say, in
/// microseconds: 10^15 us, about 31 years. Sums of a few such times still fit in a u64.
pub const MAX_TIME_US: u64 = 1_000_000_000_000_000;

/// What one planned fault costs a run, measured: `lockstorm scenario
/// scenarios/partition.toml --set duration=24h --set clients.count=1 --set
/// clients.locks=1 --set clients.think=1s`, whose nemesis plans 172,402 partitions,
/// peaked at 576 MB and took 4.5 s of CPU; with a nemesis of 500 s intervals (about 170
/// faults), the same run peaked at 29 MB and took 1.3 s. Per fault that is about 3,250
/// bytes (the plan, the checker's span, summary.json's fault plan and the report's
/// shading, with the copies each makes) and 19 us of CPU (22 s and 5 s of wall time on
/// a loaded 2-core machine: about 100 us).
pub const FAULT_BYTES: u64 = 3_300;
/// See [`FAULT_BYTES`].
pub const FAULT_NS: u64 = 20_000;

/// What the faults of one run may cost at most: 1 GiB (an eighth of a laptop's memory)
/// and 10 minutes of CPU. Memory binds first: about 325,000 faults.
pub const MAX_FAULT_BYTES: u64 = 1 << 30;
/// See [`MAX_FAULT_BYTES`].
pub const MAX_FAULT_NS: u64 = 600_000_000_000;

/// Faults a run may plan, scripted and random together: as many as fit in both costs
/// ([`MAX_FAULT_BYTES`] over [`FAULT_BYTES`], [`MAX_FAULT_NS`] over [`FAULT_NS`]). The
/// nemesis is refused when its intervals average out to more over the run, so a soak
/// at partition.toml's own rate (one fault every 0.5 s, 172,800 in 24 hours) runs, and
/// a 1 us interval over a few seconds does not.
pub const MAX_PLANNED_FAULTS: usize = min(MAX_FAULT_BYTES / FAULT_BYTES, MAX_FAULT_NS / FAULT_NS) as usize;

const fn min(a: u64, b: u64) -> u64 {
    if a < b {
        a
    } else {
        b
    }
}

/// The nemesis stops planning at this many faults, whatever its draws: an average at the
/// limit can still draw a few more by chance, never twice as many.
pub const MAX_DRAWN_FAULTS: usize = 2 * MAX_PLANNED_FAULTS;

/// The longest line of a history file, in bytes: an event is a few hundred bytes; a
/// longer line is refused before it is parsed (a 1 GB line would cost gigabytes).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The longest name, in bytes: a scenario's `name` (a folder under reports/) and every
/// lock name in a history.
pub const MAX_NAME_BYTES: usize = 255;

/// The largest history.jsonl a run writes unless told otherwise (`--max-history-mb`):
/// a run whose expected event rate would pass it is refused before it starts
/// ([`check_history_size`]), and the history of one that passes it anyway stops there,
/// the run failing with a message that says so ([`crate::sink::JsonlFile`]).
pub const DEFAULT_MAX_HISTORY_BYTES: u64 = 8 << 30;

/// What one history line takes on average, for the estimate (116 bytes in a run of
/// the defaults).
pub const EVENT_BYTES: u64 = 120;

static MAX_HISTORY_BYTES: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(DEFAULT_MAX_HISTORY_BYTES);

/// The history size limit in force (the binary sets it from `--max-history-mb`).
pub fn max_history_bytes() -> u64 {
    MAX_HISTORY_BYTES.load(std::sync::atomic::Ordering::Relaxed)
}

/// Sets the history size limit for the runs of this process.
pub fn set_max_history_bytes(bytes: u64) {
    MAX_HISTORY_BYTES.store(bytes, std::sync::atomic::Ordering::Relaxed);
}

/// About how many bytes of history a run of `scenario` writes: every client acquires
/// and releases (four events, six with resource writes) once per think, hold and two
/// message delays (at least a millisecond), and no more often than the locks can be
/// held one after another; the simulator's `node` lines add two per node. A 120 s run
/// of the defaults writes 2.3 MB without node lines; this says 5.
pub fn expected_history_bytes(scenario: &crate::scenario::Scenario) -> u64 {
    let c = &scenario.clients;
    let hold_us = c.hold.mean_us(0).max(1.0);
    let cycle_us = (c.think.mean_us(0) + hold_us + 2.0 * scenario.network.latency.mean_us(0)).max(1_000.0);
    let cycles_per_us = (c.count as f64 / cycle_us).min(f64::from(c.locks.max(1)) / hold_us);
    let mut events_per_cycle = if c.resource_writes { 6.0 } else { 4.0 };
    if scenario.node_events && scenario.backend == crate::scenario::Backend::Sim {
        // A `node` line per node for the key's set and for its delete (or expiry).
        events_per_cycle += 2.0 * scenario.nodes as f64;
    }
    let events = cycles_per_us * scenario.duration_us as f64 * events_per_cycle;
    (events * EVENT_BYTES as f64).min(u64::MAX as f64) as u64
}

/// Refuses a run whose expected history passes [`max_history_bytes`].
pub fn check_history_size(scenario: &crate::scenario::Scenario) -> Result<(), String> {
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

/// Checks a scenario name: one path component (it names the report folder), at most
/// [`MAX_NAME_BYTES`] bytes; the message says what is wrong.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "name is {} bytes long: at most {MAX_NAME_BYTES}",
            name.len()
        ));
    }
    let mut parts = std::path::Path::new(name).components();
    let single = matches!(
        (parts.next(), parts.next()),
        (Some(std::path::Component::Normal(_)), None)
    );
    if !single || name.contains('/') || name.contains('\0') {
        return Err(format!(
            "name = {name:?}: a name is one folder name under reports/ (no '/', '.' or '..')"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_history_that_would_fill_the_disk_is_refused_before_the_run() {
        let text = "duration = \"1000000000s\"\nnodes = 3\n";
        let huge = crate::scenario::Scenario::parse(text, "s.toml", "s").unwrap();
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
            if let Ok(s) = crate::scenario::Scenario::load(&f) {
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
        let s = crate::scenario::Scenario::parse(&day, "partition.toml", "p").unwrap();
        let planned = s.nemesis.expected_faults(s.duration_us)[0].1;
        assert!((172_000.0..173_000.0).contains(&planned), "{planned}");
        const { assert!(MAX_PLANNED_FAULTS > 300_000) };
        for absurd in ["1us", "10us"] {
            let text = format!("duration = \"10s\"\n[nemesis]\npartition = {{ interval = \"{absurd}\", duration = \"1ms\" }}\n");
            let e = crate::scenario::Scenario::parse(&text, "t.toml", "t")
                .unwrap_err()
                .to_string();
            assert!(e.contains("bytes"), "{absurd}: {e}");
        }
    }

    #[test]
    fn a_name_is_one_path_component() {
        for bad in ["../../../x", "/etc", "a/b", ".", "..", "", "x/", "a\0b"] {
            assert!(check_name(bad).is_err(), "{bad:?} passed");
        }
        assert!(check_name(&"n".repeat(MAX_NAME_BYTES + 1)).is_err());
        for good in ["partition", "redlock chaos", "a.b", "..x"] {
            assert_eq!(check_name(good), Ok(()), "{good:?}");
        }
    }
}
