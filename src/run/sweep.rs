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

use super::shard::{seed_list, Shard, Source};
use super::{judge_seed, pool, SeedResult};
pub use crate::outcome::sweep::{wilson, Cell, Rate, Sweep};
use crate::scenario::axis::Axis;
use crate::scenario::{Backend, Scenario, ScenarioError};

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
        provenance: None,
    };
    let command = sweep.command();
    let sweep = Sweep {
        provenance: Some(crate::report::provenance::Provenance::undated(command, false)),
        ..sweep
    };
    (sweep, results)
}

#[cfg(test)]
mod tests {
    use super::*;

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
