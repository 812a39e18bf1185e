//! Sweeps: one scenario over a grid of one or two [`Axis`] values, each cell run over
//! the same seeds on the simulator, summarised per cell (violation rate with a Wilson
//! interval, stale-write rate, availability, p99 acquire latency). The result, a
//! [`Sweep`], is what `report::sweep` writes as sweep.json, sweep.csv and a phase
//! diagram, and what `merge` reassembles from shards (a shard runs every n-th cell).
//!
//! Every cell is the base file with the `--set` overrides and the cell's values applied
//! as overrides, so each is validated like any scenario before anything runs, and its
//! rerun command (`lockstorm scenario FILE --seed S --set ...`) reproduces its first
//! seed with a finding. Every cell uses the same seeds, so neighbouring cells differ by
//! their parameters, not by luck of the draw.

use super::axis::Axis;
use super::shard::{seed_list, Shard, Source};
use super::{judge_seed, pool, SeedResult};
use crate::scenario::{Backend, Scenario, ScenarioError};
use serde::{Deserialize, Serialize};

/// At most this many cells in a grid, and seed runs in a sweep.
pub const MAX_CELLS: usize = 10_000;
pub const MAX_RUNS: u64 = 10_000_000;

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error("{0}")]
    Invalid(String),
}

/// A sweep ready to run: the base scenario and every cell's resolved scenario.
pub struct Plan {
    pub source: Source,
    pub axes: Vec<Axis>,
    pub first_seed: u64,
    pub seeds: u64,
    pub base: Scenario,
    /// Per cell in grid order (the first axis outermost): its scenario.
    pub cells: Vec<Scenario>,
}

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
    fn of(index: usize, values: Vec<String>, scenario: &Scenario, results: &[SeedResult]) -> Cell {
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
}

impl Sweep {
    /// How many cells the whole grid has.
    pub fn grid_cells(&self) -> usize {
        self.axes.iter().map(|a| a.labels.len()).product()
    }
}

/// Resolves every cell of the grid; a bad value fails here, before anything runs.
pub fn plan(
    source: Source,
    axes: Vec<Axis>,
    first_seed: Option<u64>,
    seeds: u64,
) -> Result<Plan, SweepError> {
    if axes.is_empty() || axes.len() > 2 {
        return Err(SweepError::Invalid(format!(
            "a sweep has one or two --vary axes, not {}",
            axes.len()
        )));
    }
    let base = source.scenario(&[])?;
    if base.backend != Backend::Sim {
        return Err(SweepError::Invalid(format!(
            "{}: sweeps run on the simulator only (backend = \"redis\" would take hours of real time)",
            source.path.display()
        )));
    }
    let cells: usize = axes.iter().map(|a| a.labels.len()).product();
    if cells > MAX_CELLS || cells as u64 * seeds > MAX_RUNS {
        return Err(SweepError::Invalid(format!(
            "{cells} cells of {seeds} seeds is too large a sweep (at most {MAX_CELLS} cells and {MAX_RUNS} runs)"
        )));
    }
    let cells = (0..cells)
        .map(|i| {
            source.scenario(
                &cell_values(&axes, i)
                    .iter()
                    .map(|(a, v)| a.value(*v))
                    .collect::<Vec<_>>(),
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Plan {
        first_seed: first_seed.unwrap_or(base.seed),
        source,
        axes,
        seeds,
        base,
        cells,
    })
}

/// The axis and value index of each axis at grid position `index`.
fn cell_values(axes: &[Axis], index: usize) -> Vec<(&Axis, usize)> {
    let mut rest = index;
    let mut out: Vec<(&Axis, usize)> = axes
        .iter()
        .rev()
        .map(|a| {
            let v = rest % a.labels.len();
            rest /= a.labels.len();
            (a, v)
        })
        .collect();
    out.reverse();
    out
}

/// Runs this shard's cells, every seed of each, on `jobs` threads; `progress(fraction)`
/// follows the seed runs. Returns the sweep and every seed's result (for timing).
pub fn run(
    plan: &Plan,
    shard: Shard,
    jobs: usize,
    progress: &(dyn Fn(f64) + Sync),
) -> (Sweep, Vec<SeedResult>) {
    let cells: Vec<usize> = shard.select(&(0..plan.cells.len()).collect::<Vec<_>>());
    let seeds = seed_list(plan.first_seed, plan.seeds);
    let work: Vec<(usize, u64)> = cells
        .iter()
        .flat_map(|&c| seeds.iter().map(move |&s| (c, s)))
        .collect();
    let results = pool::map(
        &work,
        jobs,
        |_, &(cell, seed)| judge_seed(&plan.cells[cell], seed),
        |done| progress(done as f64 / work.len() as f64),
    );
    let per_cell = seeds.len().max(1);
    let cells = cells
        .iter()
        .zip(results.chunks(per_cell))
        .map(|(&c, chunk)| {
            let values = cell_values(&plan.axes, c)
                .iter()
                .map(|(a, v)| a.labels[*v].clone())
                .collect();
            Cell::of(c, values, &plan.cells[c], chunk)
        })
        .collect();
    let sweep = Sweep {
        scenario: plan.base.name.clone(),
        file: plan.source.path.display().to_string(),
        overrides: plan.source.overrides.clone(),
        axes: plan.axes.clone(),
        first_seed: plan.first_seed,
        seeds: plan.seeds,
        resource_writes: plan.cells.iter().any(|s| s.clients.resource_writes),
        cells,
    };
    (sweep, results)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn grid_positions_put_the_first_axis_outermost() {
        let a = Axis::parse("algorithm.ttl=1s,2s").unwrap();
        let b = Axis::parse("clients.count=1,2,3").unwrap();
        let axes = [a, b];
        let pos = |i| cell_values(&axes, i).iter().map(|(_, v)| *v).collect::<Vec<_>>();
        assert_eq!(pos(0), [0, 0]);
        assert_eq!(pos(2), [0, 2]);
        assert_eq!(pos(4), [1, 1]);
    }
}
