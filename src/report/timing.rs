//! timing.json: the wall-clock figures of a run (how long its seeds took and the
//! simulator's speed), kept apart from summary.json so that the summary depends only
//! on the seeds run: the same seeds give the same summary.json, byte for byte, whether
//! they ran in one process, on several threads, or as shards merged later. The run's
//! date is here for the same reason ([`super::provenance`]).

use super::{io_err, ReportError};
use crate::outcome::SeedResult;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file name, next to summary.json.
pub const FILE: &str = "timing.json";

/// Work done and wall-clock seconds spent, summed over seeds (CPU-seconds when seeds
/// ran in parallel or on several machines).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// When the run was written (UTC, "2026-11-29T12:55:03Z"); of merged shards, the
    /// earliest shard's. `None` in a timing.json from before lockstorm recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_utc: Option<String>,
    pub seeds: u64,
    /// Seconds the drivers ran, summed over seeds (the checker is not counted).
    pub run_secs: f64,
    /// Commands executed by nodes (each SET or unlock on one node).
    pub node_cmds: u64,
    /// Acquire and release calls by clients.
    pub lock_ops: u64,
    pub node_cmds_per_sec: f64,
    pub lock_ops_per_sec: f64,
}

impl Timing {
    /// The figures of `seeds`, dated now.
    pub fn of(seeds: &[SeedResult]) -> Timing {
        let start = Timing {
            date_utc: Some(super::provenance::now_utc()),
            ..Timing::default()
        };
        seeds.iter().fold(start, |mut t, s| {
            t.seeds += 1;
            t.run_secs += s.sim_secs;
            t.node_cmds += s.sim.node_cmds;
            t.lock_ops += s.sim.lock_ops;
            t.with_rates()
        })
    }

    /// The timing of two sets of seeds together (merged shards).
    pub fn plus(&self, other: &Timing) -> Timing {
        // The ISO 8601 dates sort as text; either may be missing.
        let date_utc = match (&self.date_utc, &other.date_utc) {
            (Some(a), Some(b)) => Some(a.min(b).clone()),
            (a, b) => a.clone().or_else(|| b.clone()),
        };
        Timing {
            date_utc,
            seeds: self.seeds + other.seeds,
            run_secs: self.run_secs + other.run_secs,
            node_cmds: self.node_cmds + other.node_cmds,
            lock_ops: self.lock_ops + other.lock_ops,
            ..Timing::default()
        }
        .with_rates()
    }

    fn with_rates(mut self) -> Timing {
        let secs = self.run_secs.max(1e-9);
        self.node_cmds_per_sec = self.node_cmds as f64 / secs;
        self.lock_ops_per_sec = self.lock_ops as f64 / secs;
        self
    }
}

pub fn write(dir: &Path, timing: &Timing) -> Result<(), ReportError> {
    let path = dir.join(FILE);
    let text = serde_json::to_string_pretty(timing).expect("plain numbers serialize");
    std::fs::write(&path, text + "\n").map_err(io_err(&path))
}

/// The timing.json in `dir`, if there is a readable one.
pub fn read(dir: &Path) -> Option<Timing> {
    let text = std::fs::read_to_string(dir.join(FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

#[cfg(test)]
mod tests {
    use super::Timing;

    #[test]
    fn a_run_is_dated_and_merged_shards_keep_the_earliest_date() {
        let now = Timing::of(&[]);
        assert!(
            now.date_utc.as_deref().is_some_and(|d| d.ends_with('Z')),
            "{now:?}"
        );
        let at = |d: Option<&str>| Timing {
            date_utc: d.map(str::to_string),
            seeds: 1,
            ..Timing::default()
        };
        let a = at(Some("2026-11-29T12:55:03Z"));
        let b = at(Some("2026-11-28T23:00:00Z"));
        assert_eq!(a.plus(&b).date_utc.as_deref(), Some("2026-11-28T23:00:00Z"));
        assert_eq!(b.plus(&a).date_utc.as_deref(), Some("2026-11-28T23:00:00Z"));
        assert_eq!(at(None).plus(&a).date_utc, a.date_utc);
        assert_eq!(a.plus(&b).seeds, 2);
        // A timing.json from before the date was recorded still reads.
        let old: Timing = serde_json::from_str(
            r#"{"seeds":1,"run_secs":1.0,"node_cmds":0,"lock_ops":0,"node_cmds_per_sec":0.0,"lock_ops_per_sec":0.0}"#,
        )
        .unwrap();
        assert_eq!(old.date_utc, None);
    }
}
