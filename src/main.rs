//! The `lockstorm` command line. Arguments are parsed by clap into one [`Command`] per
//! subcommand, each defined and run by its own file in `cli/`; the work is done by the
//! library, and every error is printed as one line with its cause chain.
//!
//! Exit status: 0 when the verdict is as the scenario expects, 1 when it is not (a run
//! that comes out not exercised is neither safe nor unsafe: never as expected),
//! 2 for bad input or a broken environment; 128 + the signal's number (130 SIGINT,
//! 143 SIGTERM, 129 SIGHUP) when a signal stopped the run, whose partial report is kept.
//!
//! Library errors carry their cause in their own message rather than as a `source`, so
//! `{:#}` prints each cause once.

mod cli;

use clap::{Parser, Subcommand};
use lockstorm::shutdown;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "lockstorm",
    version,
    about = "Finds out, with evidence, whether a Redis-based distributed lock is safe.",
    after_help = "Exit status: 0 verdict as expected, 1 verdict not as expected, 2 bad input or environment."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario on the simulator, check every history, write a report.
    Scenario(cli::scenario::Args),
    /// Run every adapter (lock library) against every fault of the catalogue and write
    /// the library matrix (index.html, README.md, matrix.json).
    Matrix(cli::matrix::Args),
    /// Run a scenario over a grid of one or two parameters and draw its phase diagram.
    Sweep(cli::sweep::Args),
    /// Merge the output folders of every shard of a run (`--shard I/N`) into the
    /// report (or sweep) that the unsharded run writes.
    Merge(cli::merge::Args),
    /// Measure Redlock acquire and release on local redis-servers against one SET NX PX
    /// (or, with --protocol, the worker protocol; with --sim, the simulator and checker).
    Bench(cli::bench::Args),
    /// Serve the worker protocol on stdin/stdout with lockstorm's own algorithms (what
    /// `[clients] worker = ["lockstorm", "worker"]` starts; see docs/worker-protocol.md).
    Worker,
    /// Check a history (JSONL, from lockstorm or any client) against the lock model.
    Check(cli::check::Args),
    /// Re-render a report folder (plots, narrative.md, index.html) from its history.jsonl,
    /// a sweep's folder (sweep.csv, diagrams) from its sweep.json, or the library matrix
    /// (README.md, index.html) from its matrix.json.
    Report(cli::report::Args),
    /// The reaper (started by lockstorm itself): cleans up after lockstorm if it is
    /// killed.
    #[command(name = "reaper", hide = true)]
    Reaper,
    /// Shrink a failing run to the smallest scenario that still fails the same way.
    Shrink(cli::shrink::Args),
    /// Explore every schedule of faults within a small scope; print the shortest
    /// counterexample and write a scenario that reproduces it.
    Explore(cli::explore::Args),
    /// Run every scenario and write the analysis (verdicts and evidence) with an index.
    Analysis(cli::analysis::Args),
    /// Remove the containers and volumes that lockstorm runs killed by SIGKILL left in
    /// Docker (found by their labels; runs still going are left alone).
    Clean(cli::clean::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Scenario(_) | Command::Bench(_) | Command::Analysis(_) | Command::Matrix(_)
    ) {
        // These start processes and temporary directories: a signal stops them
        // cleanly, and the reaper cleans up after a SIGKILL.
        if let Err(e) = shutdown::install() {
            lockstorm::errln!(
                "lockstorm: warning: cannot handle signals ({e}); Ctrl-C would leave processes behind"
            );
        }
        if let Ok(exe) = std::env::current_exe() {
            lockstorm::reaper::enable(&exe);
        }
        // What a worker starts and leaves behind is re-parented here, to be killed
        // and reaped.
        if let Err(e) = lockstorm::children::become_subreaper() {
            lockstorm::errln!("lockstorm: warning: cannot become the subreaper of its children ({e})");
        }
    }
    let result = match cli.command {
        Command::Scenario(args) => cli::scenario::run(args),
        Command::Matrix(args) => cli::matrix::run(args),
        Command::Sweep(args) => cli::sweep::run(args),
        Command::Merge(args) => cli::merge::run(args),
        Command::Bench(args) => cli::bench::run(args),
        Command::Check(args) => cli::check::run(args),
        Command::Report(args) => cli::report::run(args),
        Command::Shrink(args) => cli::shrink::run(args),
        Command::Explore(args) => cli::explore::run(args),
        Command::Analysis(args) => cli::analysis::run(args),
        Command::Clean(args) => cli::clean::run(args),
        // The library's own serve loops: nothing to parse or print.
        Command::Worker => lockstorm::real::serve::serve().map(|()| true).map_err(Into::into),
        Command::Reaper => {
            lockstorm::reaper::serve(std::io::stdin().lock());
            Ok(true)
        }
    };
    lockstorm::children::kill_strays();
    lockstorm::reaper::stop();
    let code = match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            lockstorm::errln!("lockstorm: error: {e:#}");
            ExitCode::from(2)
        }
    };
    match shutdown::requested() {
        Some(sig) => ExitCode::from(sig.exit_code()),
        None => code,
    }
}
