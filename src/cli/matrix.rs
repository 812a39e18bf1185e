//! `lockstorm matrix`: runs every adapter (lock library) against every fault of the
//! catalogue and writes the library matrix; prints a line per adapter. The libraries'
//! own predictions decide whether a cell is as expected, not the built-in lock's.

use super::{jobs_or_all, write_junit};
use anyhow::Result;
use lockstorm::report::junit;
use lockstorm::report::matrix::Cell;
use lockstorm::run::matrix::MatrixOptions;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Adapters to run, by name (default: every one in the list).
    #[arg(long, value_delimiter = ',')]
    adapters: Vec<String>,
    /// Faults to run, by template name (default: the whole catalogue).
    #[arg(long, value_delimiter = ',')]
    faults: Vec<String>,
    /// The adapter list.
    #[arg(long, default_value = lockstorm::worker::adapters::DEFAULT_LIST)]
    list: PathBuf,
    /// The fault catalogue (with multi/ and single/).
    #[arg(long, default_value = "scenarios/matrix")]
    catalogue: PathBuf,
    /// Where the matrix goes (default: reports/libraries, or for a catalogue
    /// scenarios/matrix-NAME reports/libraries-NAME; a shard's: that folder's name with
    /// .shard-I-of-N).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The first seed of every cell.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Instead of the list: run this worker command (one shell-quoted string, e.g.
    /// "python3 my_worker.py") on the catalogue of --worker-kind.
    #[arg(
        long,
        value_name = "ARGV",
        requires = "worker_kind",
        conflicts_with = "adapters"
    )]
    worker: Option<String>,
    /// With --worker: the node layout its lock takes (multi: several independent
    /// nodes, single: one instance).
    #[arg(long, value_enum, requires = "worker")]
    worker_kind: Option<lockstorm::worker::adapters::AdapterKind>,
    /// With --worker: the algorithm family of its lock (a [predictions.FAMILY] of
    /// --list, e.g. redlock or single), whose predictions its row is judged against.
    /// Without it the row predicts nothing and departs from nothing.
    #[arg(long, value_name = "FAMILY", requires = "worker")]
    algorithm: Option<String>,
    /// With --worker: its row's options line, the settings its adapter chooses where it
    /// does not keep the library's defaults (e.g. "blocking bound 1 s"), shown beside
    /// every cell as a listed adapter's `options` is.
    #[arg(long, value_name = "TEXT", requires = "worker", default_value = "")]
    worker_options: String,
    /// With --worker: its own predictions, a TOML file with a [predicts] table (per fault
    /// id, { verdict = "safe", "unsafe", "tolerant", "stale_write" or "not_exercised", why =
    /// "... (file.py:123)" }), over the family's of --algorithm, and optionally a
    /// [documents] table (per fault id, { says = VERDICT, quote = "the docs' words",
    /// source = "README.md, Caveats" }): the cells whose finding contradicts the library's
    /// documentation are marked.
    #[arg(long, value_name = "FILE", requires = "worker")]
    predicts: Option<PathBuf>,
    /// With --worker: its lock has read and write modes (its hello lists them), so it
    /// also runs the catalogue's read-write templates (20-26).
    #[arg(long, requires = "worker")]
    worker_read_write: bool,
    /// Seeds per cell.
    #[arg(long, default_value_t = lockstorm::run::matrix::DEFAULT_SEEDS, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    seeds: u64,
    /// Real runs at once (each starts its own redis-servers on ports of its own;
    /// default: every core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
    jobs: Option<u64>,
    /// Run only every N-th cell from the I-th (I from 0), on one of N machines; `lockstorm
    /// merge` puts the shards' folders together into the matrix one run writes.
    #[arg(long, value_name = "I/N")]
    shard: Option<lockstorm::run::shard::Shard>,
    /// Also write the matrix as JUnit XML to FILE, a test suite per adapter and a case per
    /// fault, for CI systems to show (a case fails when it departs from the prediction).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<bool> {
    let Args {
        adapters,
        faults,
        list,
        catalogue,
        out,
        seed,
        worker,
        worker_kind,
        algorithm,
        worker_options,
        predicts,
        worker_read_write,
        seeds,
        jobs,
        shard,
        junit: junit_file,
    } = a;
    let out =
        out.unwrap_or_else(|| super::default_out(lockstorm::run::matrix::default_out(&catalogue), shard));
    let worker = match (worker, worker_kind) {
        (Some(argv), Some(kind)) => Some((
            lockstorm::worker::WorkerSpec::from_command_line(&argv).map_err(anyhow::Error::msg)?,
            kind,
        )),
        _ => None,
    };
    let options = MatrixOptions {
        list,
        catalogue,
        out,
        adapters,
        faults,
        seed,
        seeds,
        jobs: jobs_or_all(jobs),
        worker,
        algorithm,
        worker_options,
        worker_read_write,
        predicts,
        shard,
    };
    let m = lockstorm::run::matrix::run_matrix(&options, &|cell| lockstorm::errln!("{cell}"))?;
    if let Some(path) = &junit_file {
        write_junit(path, "lockstorm matrix", junit::matrix_suites(&m, &options.out))?;
    }
    Ok(print_totals(&m, &options.out))
}

/// A line per adapter and where the matrix is; whether no cell departs from its
/// library's prediction and none ended in an error on every seed.
pub fn print_totals(m: &lockstorm::report::matrix::Matrix, out: &std::path::Path) -> bool {
    let mut departed = 0;
    let mut errored = 0;
    for a in &m.adapters {
        errored += a.cells.iter().filter(|c| matches!(c, Cell::Error { .. })).count();
        let ran: Vec<_> = a
            .cells
            .iter()
            .filter_map(|c| match c {
                Cell::Ran(r) => Some(r),
                _ => None,
            })
            .collect();
        let off = ran.iter().filter(|r| r.departs.is_some()).count();
        departed += off;
        let elsewhere = a.cells.iter().filter(|c| matches!(c, Cell::OtherShard)).count();
        out!(
            "{:<24} {} of {} cells ran{}, {off} not as predicted",
            a.name,
            ran.len(),
            a.cells.len(),
            if elsewhere > 0 {
                format!(" ({elsewhere} in other shards)")
            } else {
                String::new()
            }
        );
    }
    out!(
        "matrix in {} ({} seeds per cell, {:.0} s)",
        out.join("README.md").display(),
        m.seeds,
        m.wall_secs
    );
    if errored > 0 {
        out!("{errored} cell(s) ended in an error on every seed: nothing was judged there");
    }
    // The libraries' own predictions decide, not the built-in lock's `expect`; a cell
    // that judged nothing (every seed ended in an error) fails the gate too.
    departed == 0 && errored == 0
}
