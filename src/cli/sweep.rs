//! `lockstorm sweep FILE --vary KEY=SPEC`: runs a scenario over a grid of one or two
//! parameters on the simulator and writes sweep.json, sweep.csv and its phase diagrams.

use super::{default_out, jobs_or_all, ms, progress_bar};
use anyhow::{Context, Result};
use lockstorm::outcome::sweep::Sweep;
use lockstorm::report::timing::{self, Timing};
use lockstorm::run;
use lockstorm::run::shard::{Kind, Shard, ShardFile, Source};
use lockstorm::scenario::axis::Axis;
use lockstorm::scenario::Override;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The base scenario file (TOML).
    file: PathBuf,
    /// An axis: KEY=FROM..TO:N (N values, linear) or KEY=A,B,... (once or twice).
    #[arg(long, value_name = "KEY=SPEC", required = true, value_parser = Axis::parse)]
    vary: Vec<Axis>,
    /// Set a scenario key in every cell (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Override::parse)]
    sets: Vec<Override>,
    /// The first seed of every cell (default: the scenario's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Seeds per cell.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    seeds: u64,
    /// Output folder (default: reports/sweeps/<scenario name>/).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Run only every N-th grid cell from the I-th (I from 0), for `lockstorm merge`.
    #[arg(long, value_name = "I/N")]
    shard: Option<Shard>,
    /// Seeds run on this many threads (default: every core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    jobs: Option<u64>,
    /// Print only the last line.
    #[arg(long, short)]
    quiet: bool,
}

pub fn run(a: Args) -> Result<bool> {
    let Args {
        file,
        vary: axes,
        sets,
        seed,
        seeds,
        out,
        shard,
        jobs,
        quiet,
    } = a;
    let source = Source::read(&file, &sets, None)?;
    let vary: Vec<String> = axes.iter().map(|a| a.arg.clone()).collect();
    let plan = run::sweep::plan(source, axes, seed, seeds)?;
    let whole = shard.unwrap_or(Shard::WHOLE);
    whole
        .check_fits(plan.cells.len(), "grid cells")
        .map_err(anyhow::Error::msg)?;
    // The folder is made ready (or refused) before any cell runs.
    let dir = out.unwrap_or_else(|| default_out(Path::new("reports/sweeps").join(&plan.base.name), shard));
    let folder = lockstorm::report::sweep::folder(&dir)
        .with_context(|| format!("cannot write the sweep to {}", dir.display()))?;
    let bar = progress_bar(
        quiet,
        format!(
            "{} cells x {} seeds of {}",
            plan.cells.len(),
            plan.seeds,
            plan.base.name
        ),
    );
    let (sweep, results) = run::sweep::run(&plan, whole, jobs_or_all(jobs), &|fraction| {
        bar.set_position((fraction * 1_000.0) as u64)
    });
    bar.finish_and_clear();
    write_sweep(&dir, &sweep, &Timing::of(&results), quiet)?;
    if let Some(shard) = shard {
        ShardFile {
            format: run::shard::FORMAT,
            kind: Kind::Sweep,
            shard,
            source: plan.source,
            first_seed: plan.first_seed,
            seeds: plan.seeds,
            vary,
            matrix: None,
        }
        .write(&dir)
        .with_context(|| format!("cannot write {}", dir.join(run::shard::FILE).display()))?;
    }
    folder
        .finish()
        .with_context(|| format!("cannot write the sweep to {}", dir.display()))?;
    Ok(true)
}

/// Writes the sweep's folder and prints its cells (up to 60) and a closing line.
pub(super) fn write_sweep(dir: &Path, sweep: &Sweep, timing: &Timing, quiet: bool) -> Result<()> {
    let drawn = lockstorm::report::sweep::write(dir, sweep)
        .and_then(|d| timing::write(dir, timing).map(|_| d))
        .and_then(|d| lockstorm::report::site::refresh(dir).map(|_| d))
        .with_context(|| format!("cannot write the sweep to {}", dir.display()))?;
    const ROWS: usize = 60;
    if !quiet && sweep.cells.len() <= ROWS {
        let keys: Vec<&str> = sweep.axes.iter().map(|a| a.key.as_str()).collect();
        out!(
            "{:>28} {:>14} {:>14} {:>9} {:>10}",
            keys.join(" / "),
            "unsafe seeds",
            "stale seeds",
            "calls ok",
            "p99 acq"
        );
        for c in &sweep.cells {
            out!(
                "{:>28} {:>14} {:>14} {:>8.1}% {:>10}",
                c.values.join(" / "),
                format!("{}/{}", c.unsafe_seeds, c.seeds),
                format!("{}/{}", c.stale_seeds, c.seeds),
                c.availability * 100.0,
                ms(c.p99_acquire_us)
            );
        }
        out!("calls ok: acquire calls that succeeded, over the cell's seeds (contention counts against it)");
    }
    let unsafe_cells = sweep.cells.iter().filter(|c| c.unsafe_seeds > 0).count();
    let stale_cells = sweep.cells.iter().filter(|c| c.stale_seeds > 0).count();
    out!(
        "{}: {} cells x {} seeds, {unsafe_cells} cells with a violation, {stale_cells} with a stale write; {} and {}.svg in {}",
        sweep.scenario,
        sweep.cells.len(),
        sweep.seeds,
        lockstorm::report::sweep::CSV,
        drawn.join(".svg, "),
        dir.display()
    );
    Ok(())
}
