//! The largest numbers lockstorm takes from any input, and why: no scenario file and no
//! history may make it allocate or compute without bound.
//!
//! Scenarios are checked against these when they are resolved (in `scenario`),
//! histories when the checker reads them (in `checker`), before anything is sized
//! by a number from the input. A report has a row per node and client and a shaded span
//! per fault, the checker keeps per-node state for every failed acquisition, and every
//! fault is two history lines: these bounds keep each of those in the range a person can
//! read and a laptop can hold.

/// Nodes of a run: Redlock deployments use 3 to 9; 64 leaves room for experiments.
pub const MAX_NODES: usize = 64;

/// Clients of a run (each is a row of the report and a link to every node).
pub const MAX_CLIENTS: usize = 10_000;

/// Lock names of a run (`clients.locks`): each is a name in the history's dense table and
/// a row of the checker's state; a million keeps a run's tables under about 100 MB (100
/// million took 4.6 GB). A history read by `check` or `report` is held to it too; the
/// checker keeps about 1.1 KB per lock that was held (the last holds each overlap check
/// needs, per client the hold a late write may name): `check` of 300 MB naming 750,000
/// locks peaked at 857 MB (1.3 GB before the sweep gave back what an idle lock held).
pub const MAX_LOCKS: i64 = 1_000_000;

/// The largest scenario file: a scenario is a few kilobytes; 1 MiB holds thousands of
/// scripted faults. A larger file (a 64 MB list of 10^6 faults, /dev/zero) is refused
/// before it is parsed.
pub const MAX_SCENARIO_BYTES: u64 = 1 << 20;

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

/// The largest JSON file lockstorm reads back (a shard's summary.json, sweep.json or
/// matrix.json, a shard.json): a summary is about 2 KB per seed, so 256 MiB holds
/// 100,000 seeds; a file padded to a gigabyte is refused before it is read (it cost
/// 2.1 GB).
pub const MAX_JSON_BYTES: u64 = 256 << 20;

/// The text of the regular file at `path`, if it holds at most `limit` bytes of UTF-8:
/// a FIFO or a device (which could block or never end) and a larger file are refused
/// with an error that says so, before more than `limit` bytes are read.
pub fn read_bounded(path: &std::path::Path, limit: u64) -> std::io::Result<String> {
    use std::io::Read as _;
    let refuse = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let file = std::fs::File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(refuse("not a regular file".into()));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(refuse(format!(
            "larger than {}, the most lockstorm reads of it",
            size_words(limit)
        )));
    }
    String::from_utf8(bytes).map_err(|_| refuse("not UTF-8 text".into()))
}

/// A byte count as "1 MiB" or "256 KiB".
fn size_words(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

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
