//! What a sweep produced: each grid cell's rates over its seeds, and the [`Sweep`] that
//! holds them. `run::sweep` runs the cells and builds these; `report::sweep` writes them
//! as sweep.json, sweep.csv and a phase diagram; `run::merge` reassembles them from shards.

use super::SeedResult;
use crate::scenario::axis::Axis;
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};

/// The files a sweep's folder holds its cells in.
pub const JSON: &str = "sweep.json";
pub const CSV: &str = "sweep.csv";

/// A proportion with its 95% Wilson score interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Rate {
    pub rate: f64,
    pub low: f64,
    pub high: f64,
}

/// `hits` out of `n` with its 95% Wilson score interval (good near 0 and 1, where the
/// normal approximation claims certainty it does not have).
pub fn wilson(hits: u64, n: u64) -> Rate {
    if n == 0 {
        return Rate {
            rate: 0.0,
            low: 0.0,
            high: 1.0,
        };
    }
    const Z: f64 = 1.959_963_984_540_054;
    let (k, n) = (hits as f64, n as f64);
    let p = k / n;
    let z2 = Z * Z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = Z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    Rate {
        rate: p,
        low: (centre - half).max(0.0),
        high: (centre + half).min(1.0),
    }
}

/// One grid cell's results over its seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Position in the grid (the first axis outermost).
    pub index: usize,
    /// Each axis's value, as written into the scenario.
    pub values: Vec<String>,
    pub seeds: u64,
    /// Seeds with a mutual-exclusion violation.
    pub unsafe_seeds: u64,
    pub not_live_seeds: u64,
    /// Seeds where the guarded resource accepted a stale write (or a fencing token
    /// went backwards).
    pub stale_seeds: u64,
    pub violation: Rate,
    pub stale_write: Rate,
    /// Workload acquisitions, summed over seeds.
    pub acquires: u64,
    pub acquired: u64,
    /// `acquired / acquires`.
    pub availability: f64,
    /// The mean over seeds of each seed's p99 acquire latency.
    pub p99_acquire_us: u64,
    /// The first seed with a finding, and the command that reruns it.
    pub reported_seed: Option<u64>,
    pub rerun: Option<String>,
}

impl Cell {
    pub(crate) fn of(index: usize, values: Vec<String>, scenario: &Scenario, results: &[SeedResult]) -> Cell {
        let n = results.len() as u64;
        let count = |f: &dyn Fn(&SeedResult) -> bool| results.iter().filter(|r| f(r)).count() as u64;
        let unsafe_seeds = count(&|r| !r.safe);
        let stale_seeds = count(&|r| r.resource_violations > 0);
        let acquires: u64 = results.iter().map(|r| r.stats.acquires).sum();
        let acquired: u64 = results.iter().map(|r| r.stats.acquired).sum();
        let p99_sum: u64 = results.iter().map(|r| r.stats.latency_p99_us).sum();
        let reported_seed = results.iter().find(|r| r.has_finding()).map(|r| r.seed);
        Cell {
            index,
            values,
            seeds: n,
            unsafe_seeds,
            not_live_seeds: count(&|r| !r.live),
            stale_seeds,
            violation: wilson(unsafe_seeds, n),
            stale_write: wilson(stale_seeds, n),
            acquires,
            acquired,
            availability: if acquires == 0 {
                0.0
            } else {
                acquired as f64 / acquires as f64
            },
            p99_acquire_us: p99_sum / n.max(1),
            reported_seed,
            rerun: reported_seed.map(|s| scenario.rerun_command(s)),
        }
    }
}

/// A sweep's results: what sweep.json holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sweep {
    pub scenario: String,
    pub file: String,
    /// The `--set` overrides every cell shares.
    pub overrides: Vec<String>,
    pub axes: Vec<Axis>,
    pub first_seed: u64,
    /// Seeds per cell.
    pub seeds: u64,
    /// Whether clients write to the guarded resource (so stale writes can happen).
    pub resource_writes: bool,
    /// The cells run, in grid order (a shard's share, or all of them).
    pub cells: Vec<Cell>,
    /// What made it: lockstorm's version and commit and [`Sweep::command`]. Undated: the
    /// same sweep writes the same sweep.json however it ran (threads, shards merged), so
    /// its date is in timing.json. `None` in a sweep.json from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<crate::report::provenance::Provenance>,
}

impl Sweep {
    /// The command that runs the whole grid again, into reports/sweeps/<scenario>/ (add
    /// `--out DIR` for another folder): the file, each axis, the shared `--set`s and the
    /// seeds. Sweeps run on the simulator only, so it names no backend.
    pub fn command(&self) -> String {
        use crate::worker::shell_word;
        let mut c = format!("cargo run --release -- sweep {}", shell_word(&self.file));
        for a in &self.axes {
            c.push_str(&format!(" --vary {}", shell_word(&a.arg)));
        }
        for o in &self.overrides {
            c.push_str(&format!(" --set {}", shell_word(o)));
        }
        c.push_str(&format!(" --seed {} --seeds {}", self.first_seed, self.seeds));
        c
    }

    /// How many cells the whole grid has.
    pub fn grid_cells(&self) -> usize {
        self.axes.iter().map(|a| a.labels.len()).product()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweeps_command_runs_its_whole_grid_again() {
        let axis = |arg: &str| crate::scenario::axis::Axis::parse(arg).unwrap();
        let sweep = Sweep {
            scenario: "pause-vs-ttl".into(),
            file: "scenarios/sweeps/pause-vs-ttl.toml".into(),
            overrides: vec!["algorithm.fencing=true".into()],
            axes: vec![
                axis("faults.*.duration=100ms..3.1s:16"),
                axis("algorithm.ttl=250ms..2.5s:10"),
            ],
            first_seed: 1,
            seeds: 20,
            resource_writes: true,
            cells: Vec::new(),
            provenance: None,
        };
        assert_eq!(
            sweep.command(),
            "cargo run --release -- sweep scenarios/sweeps/pause-vs-ttl.toml \
             --vary 'faults.*.duration=100ms..3.1s:16' --vary algorithm.ttl=250ms..2.5s:10 \
             --set algorithm.fencing=true --seed 1 --seeds 20"
        );
    }

    #[test]
    fn wilson_intervals_match_published_values() {
        // 0 of 50: the rule of three says about 6%; Wilson gives [0, 0.0713].
        let r = wilson(0, 50);
        assert_eq!((r.rate, r.low), (0.0, 0.0));
        assert!((r.high - 0.0713).abs() < 1e-4, "{r:?}");
        // 5 of 10: [0.2366, 0.7634].
        let r = wilson(5, 10);
        assert!(
            (r.low - 0.2366).abs() < 1e-4 && (r.high - 0.7634).abs() < 1e-4,
            "{r:?}"
        );
        let r = wilson(50, 50);
        assert!((r.low - 0.9287).abs() < 1e-4 && r.high == 1.0, "{r:?}");
    }
}
