//! The `lockstorm` command line. Arguments are parsed by clap, the work is done by the
//! library, and every error is printed as one line with its cause chain.
//!
//! Exit status: 0 when the verdict is as the scenario expects, 1 when it is not (a run
//! that comes out not exercised is neither safe nor unsafe: never as expected),
//! 2 for bad input or a broken environment; 128 + the signal's number (130 SIGINT,
//! 143 SIGTERM, 129 SIGHUP) when a signal stopped the run, whose partial report is kept.
//!
//! Library errors carry their cause in their own message rather than as a `source`, so
//! `{:#}` prints each cause once.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use lockstorm::checker;
use lockstorm::explore;
use lockstorm::real::{RealError, RealOptions, WorkerFailure};
use lockstorm::report::folder::RunFolder;
use lockstorm::report::timing::{self, Timing};
use lockstorm::run::axis::Axis;
use lockstorm::run::merge::Merged;
use lockstorm::run::shard::{seed_list, Kind, Shard, ShardFile, Source};
use lockstorm::run::sweep::Sweep;
use lockstorm::run::{self, pool, Outcome};
use lockstorm::scenario::{Backend, Override, Scenario};
use lockstorm::shrink;
use lockstorm::shutdown;
use std::path::{Path, PathBuf};
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
    Scenario {
        /// The scenario file (TOML), e.g. scenarios/partition.toml.
        file: PathBuf,
        /// The first seed to run (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// How many consecutive seeds to run, starting at --seed.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        seeds: u64,
        /// Report folder (default: reports/<scenario name>/).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print only the verdict line.
        #[arg(long, short)]
        quiet: bool,
        /// Where to run: the simulator, real redis-server processes, or redis-servers
        /// in containers (default: the scenario's `backend`, else sim).
        #[arg(long, value_enum)]
        backend: Option<Backend>,
        /// Real backend: keep the nodes' temporary directories (configs, logs, AOFs).
        #[arg(long)]
        keep: bool,
        /// Run the clients as this adapter's worker (a name in adapters/adapters.toml).
        #[arg(long, conflicts_with = "worker")]
        adapter: Option<String>,
        /// With --adapter: the adapter list to find it in.
        #[arg(long, requires = "adapter", default_value = lockstorm::worker::adapters::DEFAULT_LIST)]
        adapter_list: PathBuf,
        /// Run the clients as this worker command, one shell-quoted string (e.g.
        /// "python3 my_worker.py"), without registering it in adapters.toml.
        #[arg(long, value_name = "ARGV")]
        worker: Option<String>,
        /// Set a scenario key before the file is parsed, e.g. `algorithm.ttl=500ms` or
        /// `faults.0.duration=3s` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Override::parse)]
        sets: Vec<Override>,
        /// Run only every N-th seed from the I-th (I from 0), for `lockstorm merge`.
        #[arg(long, value_name = "I/N")]
        shard: Option<Shard>,
        /// Simulated seeds run on this many threads (default: every core).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        jobs: Option<u64>,
        /// The largest history.jsonl the run may write, in MB: a run expected to write
        /// more is refused before it starts, one that writes more fails.
        #[arg(long, default_value_t = lockstorm::limits::DEFAULT_MAX_HISTORY_BYTES >> 20,
              value_parser = clap::value_parser!(u64).range(1..=1 << 40))]
        max_history_mb: u64,
    },
    /// Run every adapter (lock library) against every fault of the catalogue and write
    /// the library matrix (index.html, README.md, matrix.json).
    Matrix {
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
        /// Where the matrix goes.
        #[arg(long, default_value = "reports/libraries")]
        out: PathBuf,
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
        /// Seeds per cell.
        #[arg(long, default_value_t = lockstorm::run::matrix::DEFAULT_SEEDS, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        seeds: u64,
        /// Real runs at once (each starts its own redis-servers on ports of its own;
        /// default: every core).
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=256))]
        jobs: Option<u64>,
    },
    /// Run a scenario over a grid of one or two parameters and draw its phase diagram.
    Sweep {
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
    },
    /// Merge the output folders of every shard of a run (`--shard I/N`) into the
    /// report (or sweep) that the unsharded run writes.
    Merge {
        /// The shards' folders, in any order.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Where the merged report goes (default: where the unsharded run writes it).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Print only the verdict line.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Measure Redlock acquire and release on local redis-servers against one SET NX PX
    /// (or, with --protocol, the worker protocol; with --sim, the simulator and checker).
    Bench {
        /// How many local redis-server nodes Redlock runs on.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=64))]
        nodes: u64,
        /// Samples per series.
        #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
        iterations: u64,
        /// Instead: lock cycles per second through `lockstorm worker` next to the same
        /// workload in-process (what the worker protocol costs).
        #[arg(long)]
        protocol: bool,
        /// With --protocol: clients (each on its own lock).
        #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..=1_000))]
        clients: u64,
        /// With --protocol: alternating rounds per series, 3 s each. With --sim: rounds,
        /// of which the medians are printed.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
        rounds: u64,
        /// Instead: the simulator's and the checker's speed on one core, side by side:
        /// lock operations simulated per second, history events checked per second in
        /// memory and from JSONL (as `lockstorm check`), and peak memory.
        #[arg(long, conflicts_with = "protocol")]
        sim: bool,
        /// With --sim: the scenario simulated.
        #[arg(long, default_value = "scenarios/partition.toml", requires = "sim")]
        scenario: PathBuf,
        /// With --sim: the seed (default: the scenario's).
        #[arg(long, requires = "sim")]
        seed: Option<u64>,
        /// With --sim: set a scenario key, e.g. `duration=1h` (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Override::parse, requires = "sim")]
        sets: Vec<Override>,
    },
    /// Serve the worker protocol on stdin/stdout with lockstorm's own algorithms (what
    /// `[clients] worker = ["lockstorm", "worker"]` starts; see docs/worker-protocol.md).
    Worker,
    /// Check a history (JSONL, from lockstorm or any client) against the lock model.
    Check {
        /// The history file, e.g. reports/partition/history.jsonl.
        history: PathBuf,
    },
    /// Re-render a report folder (plots, narrative.md, index.html) from its history.jsonl,
    /// a sweep's folder (sweep.csv, diagrams) from its sweep.json, or the library matrix
    /// (README.md, index.html) from its matrix.json.
    Report {
        /// The folder holding history.jsonl, e.g. reports/partition.
        dir: PathBuf,
    },
    /// The reaper (started by lockstorm itself): cleans up after lockstorm if it is
    /// killed.
    #[command(name = "reaper", hide = true)]
    Reaper,
    /// Shrink a failing run to the smallest scenario that still fails the same way.
    Shrink(ShrinkArgs),
    /// Explore every schedule of faults within a small scope; print the shortest
    /// counterexample and write a scenario that reproduces it.
    Explore(ExploreArgs),
    /// Run every scenario and write the analysis (verdicts and evidence) with an index.
    Analysis {
        /// The folder of scenario files.
        #[arg(long, default_value = run::analysis::DEFAULT_SCENARIOS)]
        scenarios: PathBuf,
        /// Where the analysis goes.
        #[arg(long, default_value = run::analysis::DEFAULT_OUT)]
        out: PathBuf,
        /// Seeds per scenario, from each file's own seed.
        #[arg(long, default_value_t = run::analysis::DEFAULT_SEEDS, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        seeds: u64,
    },
    /// Remove the containers and volumes that lockstorm runs killed by SIGKILL left in
    /// Docker (found by their labels; runs still going are left alone).
    Clean {
        /// Remove everything lockstorm labelled, also of runs still going.
        #[arg(long)]
        all: bool,
    },
}

#[derive(clap::Args)]
struct ShrinkArgs {
    /// A report folder (its summary.json names the scenario and the seed) or a
    /// scenario file.
    input: PathBuf,
    /// With a scenario file: the seed to shrink (default: the file's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Where the minimal scenario and its report go (default: `<name>-shrunk`
    /// beside the report, or reports/<name>-shrunk).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The kind of finding to keep (default: the most important one the run shows).
    #[arg(long, value_enum)]
    kind: Option<shrink::Kind>,
    /// Candidate runs at most.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_runs: u64,
    /// Stop after this many seconds; the result then says it stopped early.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    time: Option<u64>,
    /// Print only the result line.
    #[arg(long, short)]
    quiet: bool,
}

#[derive(clap::Args)]
struct ExploreArgs {
    /// The scenario file: its algorithm, nodes and clients, and the fault kinds it
    /// uses set the scope.
    file: PathBuf,
    /// Clients (2 or 3; default: the scenario's, at most 3).
    #[arg(long)]
    clients: Option<usize>,
    /// Nodes (1 to 5; default: the scenario's, at most 5).
    #[arg(long)]
    nodes: Option<usize>,
    /// Tick length, e.g. "2.5s" (default: a quarter of the ttl).
    #[arg(long, value_parser = parse_dur)]
    tick: Option<u64>,
    /// Ticks explored (default: the scenario's duration, at most 16).
    #[arg(long)]
    ticks: Option<u32>,
    /// Crashes the adversary may inject (default: from the scenario, at most 2).
    #[arg(long)]
    crashes: Option<u8>,
    /// Client-node links it may cut.
    #[arg(long)]
    partitions: Option<u8>,
    /// Node or client pauses.
    #[arg(long)]
    pauses: Option<u8>,
    /// Forward jumps of a node's clock.
    #[arg(long)]
    clock_jumps: Option<u8>,
    /// Failovers to a replica (needs [replication]).
    #[arg(long)]
    failovers: Option<u8>,
    /// The seed of the clients' tokens and retry delays (default: the file's).
    #[arg(long)]
    seed: Option<u64>,
    /// Distinct states at most (each takes a few kilobytes while its level is open).
    #[arg(long, default_value_t = 2_000_000, value_parser = clap::value_parser!(u64).range(1..))]
    max_states: u64,
    /// Stop after this many seconds; the result then says what was covered.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    time: Option<u64>,
    /// Where the reproduction scenario and its report go (default:
    /// reports/<name>-explored).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print only the result line.
    #[arg(long, short)]
    quiet: bool,
}

impl ExploreArgs {
    fn overrides(&self) -> explore::Overrides {
        explore::Overrides {
            seed: self.seed,
            clients: self.clients,
            nodes: self.nodes,
            tick_us: self.tick,
            ticks: self.ticks,
            crashes: self.crashes,
            partitions: self.partitions,
            pauses: self.pauses,
            clock_jumps: self.clock_jumps,
            failovers: self.failovers,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Scenario { .. } | Command::Bench { .. } | Command::Analysis { .. } | Command::Matrix { .. }
    ) {
        // These start processes and temporary directories: a signal stops them
        // cleanly, and the reaper cleans up after a SIGKILL.
        if let Err(e) = shutdown::install() {
            eprintln!("lockstorm: warning: cannot handle signals ({e}); Ctrl-C would leave processes behind");
        }
        if let Ok(exe) = std::env::current_exe() {
            lockstorm::reaper::enable(&exe);
        }
        // What a worker starts and leaves behind is re-parented here, to be killed
        // and reaped.
        if let Err(e) = lockstorm::children::become_subreaper() {
            eprintln!("lockstorm: warning: cannot become the subreaper of its children ({e})");
        }
    }
    let result = match cli.command {
        Command::Scenario {
            file,
            seed,
            seeds,
            out,
            quiet,
            backend,
            keep,
            adapter,
            adapter_list,
            worker,
            sets,
            shard,
            jobs,
            max_history_mb,
        } => scenario(
            &file,
            &sets,
            Seeds {
                first: seed,
                count: seeds,
                shard,
                jobs: jobs_or_all(jobs),
            },
            out,
            quiet,
            RunWith {
                backend,
                keep,
                adapter,
                adapter_list,
                worker,
                max_history_bytes: max_history_mb << 20,
            },
        ),
        Command::Matrix {
            adapters,
            faults,
            list,
            catalogue,
            out,
            seed,
            worker,
            worker_kind,
            algorithm,
            seeds,
            jobs,
        } => (|| {
            let worker = match (worker, worker_kind) {
                (Some(argv), Some(kind)) => Some((
                    lockstorm::worker::WorkerSpec::from_command_line(&argv).map_err(anyhow::Error::msg)?,
                    kind,
                )),
                _ => None,
            };
            matrix(&lockstorm::run::matrix::MatrixOptions {
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
            })
        })(),
        Command::Sweep {
            file,
            vary,
            sets,
            seed,
            seeds,
            out,
            shard,
            jobs,
            quiet,
        } => sweep(
            &file,
            vary,
            &sets,
            Seeds {
                first: seed,
                count: seeds,
                shard,
                jobs: jobs_or_all(jobs),
            },
            out,
            quiet,
        ),
        Command::Merge { dirs, out, quiet } => merge(&dirs, out, quiet),
        Command::Check { history } => check(&history),
        Command::Worker => lockstorm::real::serve::serve().map(|()| true).map_err(Into::into),
        Command::Bench {
            sim: true,
            scenario,
            seed,
            sets,
            rounds,
            ..
        } => bench_sim(&scenario, seed, &sets, rounds as usize),
        Command::Bench {
            protocol: true,
            clients,
            rounds,
            ..
        } => bench_protocol(clients as usize, rounds as usize),
        Command::Bench {
            nodes, iterations, ..
        } => bench(nodes as usize, iterations as usize),
        Command::Report { dir } => report(&dir),
        Command::Reaper => {
            lockstorm::reaper::serve(std::io::stdin().lock());
            Ok(true)
        }
        Command::Analysis {
            scenarios,
            out,
            seeds,
        } => analysis(&scenarios, &out, seeds),
        Command::Clean { all } => clean(all),
        Command::Explore(args) => explore(&args),
        Command::Shrink(args) => shrink(&args),
    };
    lockstorm::children::kill_strays();
    lockstorm::reaper::stop();
    let code = match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("lockstorm: error: {e:#}");
            ExitCode::from(2)
        }
    };
    match shutdown::requested() {
        Some(sig) => ExitCode::from(sig.exit_code()),
        None => code,
    }
}

fn clean(all: bool) -> Result<bool> {
    println!("lockstorm clean: {}", lockstorm::real::clean(all)?);
    Ok(true)
}

/// How `scenario` runs a file: the command line's overrides.
struct RunWith {
    backend: Option<Backend>,
    keep: bool,
    adapter: Option<String>,
    adapter_list: PathBuf,
    worker: Option<String>,
    max_history_bytes: u64,
}

fn jobs_or_all(jobs: Option<u64>) -> usize {
    jobs.map_or_else(pool::all_cores, |j| j as usize)
}

/// Which seeds to run, and on how many threads.
struct Seeds {
    first: Option<u64>,
    count: u64,
    shard: Option<Shard>,
    jobs: usize,
}

/// A bar of the share of the work done, with `message`.
fn progress_bar(quiet: bool, message: String) -> ProgressBar {
    let bar = styled_bar(
        quiet,
        1_000,
        "{bar:40} {percent:>3}%  {elapsed}  eta {eta}  {msg}",
    );
    bar.set_message(message);
    bar
}

/// The default output folder, with the shard in its name.
fn default_out(base: PathBuf, shard: Option<Shard>) -> PathBuf {
    match shard {
        None => base,
        Some(s) => {
            let mut name = base.into_os_string();
            name.push(format!(".shard-{}-of-{}", s.index, s.count));
            name.into()
        }
    }
}

fn scenario(
    file: &Path,
    sets: &[Override],
    seeds: Seeds,
    out: Option<PathBuf>,
    quiet: bool,
    with: RunWith,
) -> Result<bool> {
    let RunWith {
        backend,
        keep,
        adapter,
        adapter_list,
        worker,
        max_history_bytes,
    } = with;
    let source = Source::read(file, sets, backend)?;
    let mut scenario = source.scenario(&[])?;
    if let Some(name) = adapter {
        let list = adapter_list.as_path();
        let a = lockstorm::worker::adapters::select(lockstorm::worker::adapters::load(list)?, &[name], list)?;
        scenario.clients.worker = Some(a[0].spec());
        // A catalogue template's `expect` is the built-in lock's: the library's own
        // prediction for that fault decides instead.
        let in_catalogue = file.parent().and_then(Path::file_name) == Some(a[0].kind.folder().as_ref());
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
        if let Some(p) = stem.and_then(|f| a[0].predicts.get(&f)).filter(|_| in_catalogue) {
            use lockstorm::worker::adapters::Predicted;
            scenario.expect = match p.verdict {
                Predicted::Unsafe => lockstorm::scenario::Expect::Unsafe,
                _ => lockstorm::scenario::Expect::Safe,
            };
            if p.verdict == Predicted::StaleWrite {
                scenario.expect_resource = Some(lockstorm::scenario::Expect::Unsafe);
            }
            eprintln!(
                "lockstorm: {} predicts {} here ({}): that is the expected verdict",
                a[0].name,
                p.verdict.name(),
                p.why
            );
        }
    }
    if let Some(argv) = worker {
        let spec = lockstorm::worker::WorkerSpec::from_command_line(&argv).map_err(anyhow::Error::msg)?;
        scenario.clients.worker = Some(spec);
    }
    lockstorm::limits::set_max_history_bytes(max_history_bytes);
    lockstorm::limits::check_history_size(&scenario).map_err(anyhow::Error::msg)?;
    let first = seeds.first.unwrap_or(scenario.seed);
    let all = seed_list(first, seeds.count);
    let list = match seeds.shard {
        None => all,
        Some(s) => {
            s.check_fits(all.len(), "seeds").map_err(anyhow::Error::msg)?;
            s.select(&all)
        }
    };

    let bar = progress_bar(quiet, format!("{} seed(s) of {}", list.len(), scenario.name));
    let dir = out.unwrap_or_else(|| default_out(Path::new("reports").join(&scenario.name), seeds.shard));
    let cannot_write = || format!("cannot write the report to {}", dir.display());
    let mut folder = RunFolder::prepare(&dir).with_context(cannot_write)?;
    folder
        .start(&lockstorm::report::placeholder_summary(&scenario, first))
        .with_context(cannot_write)?;
    let real = RealOptions {
        keep,
        // The reported history goes to disk as it is made: a real run cannot be
        // replayed, and a long simulated one need not fit in memory.
        history_path: Some(folder.history_path()),
    };
    let result = run::run(&scenario, &list, seeds.jobs, &real, &|fraction| {
        bar.set_position((fraction * 1_000.0) as u64)
    });
    shutdown::run_stopped();
    bar.finish_and_clear();
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(RealError::WorkerFailed(failure)) => return Err(keep_failed_run(folder, &failure)),
        Err(e) => {
            let _ = folder.fail(&format!("the run failed: {e}"));
            return Err(e.into());
        }
    };

    // The worker logs and the shard's description first: summary.json, written last,
    // vouches for a complete folder.
    if let Some(logs) = &outcome.worker_logs {
        if let Err(e) = logs.copy_to(&dir) {
            let _ = folder.fail(&format!("the worker logs could not be kept: {e}"));
            return Err(
                anyhow::Error::from(e).context(format!("cannot keep the worker logs in {}", dir.display()))
            );
        }
    }
    if let Some(shard) = seeds.shard {
        let written = ShardFile {
            format: run::shard::FORMAT,
            kind: Kind::Scenario,
            shard,
            source,
            first_seed: first,
            seeds: seeds.count,
            vary: Vec::new(),
        }
        .write(&dir);
        if let Err(e) = written {
            let _ = folder.fail(&format!("shard.json could not be written: {e}"));
            return Err(anyhow::Error::from(e)
                .context(format!("cannot write {}", dir.join(run::shard::FILE).display())));
        }
    }
    if let Err(e) = write_report(&dir, &scenario, &outcome, &Timing::of(&outcome.seeds)) {
        // The placeholder summary stays, saying why the run is partial.
        let _ = folder.fail(&format!("the report could not be written: {e:#}"));
        return Err(e);
    }
    if let Some(sig) = shutdown::report_done() {
        // The signal came as the summary was written: lockstorm exits with its status,
        // and the summary must not say otherwise.
        let _ = lockstorm::report::folder::mark_partial(
            &dir,
            &format!("stopped by {sig} as the report was written"),
        );
    }
    folder.finish().with_context(cannot_write)?;
    if !quiet {
        print_table(&scenario, &outcome);
    }
    print_verdict(&scenario, &outcome, &dir);
    if outcome.partial.is_some() {
        // `report DIR` redraws from history.jsonl, which a multi-seed run stopped before
        // its reported seed's history was made does not have.
        if dir.join("history.jsonl").is_file() {
            println!(
                "  the verdict covers what ran before the stop; `lockstorm report {}` redraws the report",
                dir.display()
            );
        } else {
            println!("  the verdict covers what ran before the stop; the reported seed recorded no history, so summary.json is the whole report");
        }
    }
    Ok(outcome.as_expected)
}

/// Keeps what a run stopped by a worker recorded (its history and the workers' logs)
/// in `dir`, and returns the error to print.
fn keep_failed_run(folder: RunFolder, failure: &WorkerFailure) -> anyhow::Error {
    let dir = folder.dir().to_path_buf();
    // The history went to the folder as it was made; the logs join it.
    let kept = match &failure.output.worker_logs {
        Some(logs) => logs.copy_to(&dir).map_err(anyhow::Error::from),
        None => Ok(()),
    }
    .and_then(|()| folder.fail(&failure.message).map_err(anyhow::Error::from));
    match kept {
        Ok(()) => anyhow::anyhow!(
            "{}; the history so far and the worker logs are in {}",
            failure.message,
            dir.display()
        ),
        Err(e) => anyhow::anyhow!(
            "{} (and its history could not be kept in {}: {e:#})",
            failure.message,
            dir.display()
        ),
    }
}

/// timing.json, then the report, whose summary.json comes last.
fn write_report(dir: &Path, scenario: &Scenario, outcome: &Outcome, timing: &Timing) -> Result<()> {
    timing::write(dir, timing)
        .and_then(|()| lockstorm::report::write(dir, scenario, outcome).map(|_| ()))
        .with_context(|| format!("cannot write the report to {}", dir.display()))
}

fn sweep(
    file: &Path,
    axes: Vec<Axis>,
    sets: &[Override],
    seeds: Seeds,
    out: Option<PathBuf>,
    quiet: bool,
) -> Result<bool> {
    let source = Source::read(file, sets, None)?;
    let vary: Vec<String> = axes.iter().map(|a| a.arg.clone()).collect();
    let plan = run::sweep::plan(source, axes, seeds.first, seeds.count)?;
    let shard = seeds.shard.unwrap_or(Shard::WHOLE);
    shard
        .check_fits(plan.cells.len(), "grid cells")
        .map_err(anyhow::Error::msg)?;
    let bar = progress_bar(
        quiet,
        format!(
            "{} cells x {} seeds of {}",
            plan.cells.len(),
            plan.seeds,
            plan.base.name
        ),
    );
    let (sweep, results) = run::sweep::run(&plan, shard, seeds.jobs, &|fraction| {
        bar.set_position((fraction * 1_000.0) as u64)
    });
    bar.finish_and_clear();
    let dir =
        out.unwrap_or_else(|| default_out(Path::new("reports/sweeps").join(&plan.base.name), seeds.shard));
    write_sweep(&dir, &sweep, &Timing::of(&results), quiet)?;
    if let Some(shard) = seeds.shard {
        ShardFile {
            format: run::shard::FORMAT,
            kind: Kind::Sweep,
            shard,
            source: plan.source,
            first_seed: plan.first_seed,
            seeds: plan.seeds,
            vary,
        }
        .write(&dir)
        .with_context(|| format!("cannot write {}", dir.join(run::shard::FILE).display()))?;
    }
    Ok(true)
}

fn write_sweep(dir: &Path, sweep: &Sweep, timing: &Timing, quiet: bool) -> Result<()> {
    let drawn = lockstorm::report::sweep::write(dir, sweep)
        .and_then(|d| timing::write(dir, timing).map(|_| d))
        .with_context(|| format!("cannot write the sweep to {}", dir.display()))?;
    const ROWS: usize = 60;
    if !quiet && sweep.cells.len() <= ROWS {
        let keys: Vec<&str> = sweep.axes.iter().map(|a| a.key.as_str()).collect();
        println!(
            "{:>28} {:>14} {:>14} {:>8} {:>10}",
            keys.join(" / "),
            "unsafe seeds",
            "stale seeds",
            "avail",
            "p99 acq"
        );
        for c in &sweep.cells {
            println!(
                "{:>28} {:>14} {:>14} {:>7.1}% {:>10}",
                c.values.join(" / "),
                format!("{}/{}", c.unsafe_seeds, c.seeds),
                format!("{}/{}", c.stale_seeds, c.seeds),
                c.availability * 100.0,
                ms(c.p99_acquire_us)
            );
        }
    }
    let unsafe_cells = sweep.cells.iter().filter(|c| c.unsafe_seeds > 0).count();
    let stale_cells = sweep.cells.iter().filter(|c| c.stale_seeds > 0).count();
    println!(
        "{}: {} cells x {} seeds, {unsafe_cells} cells with a violation, {stale_cells} with a stale write; {} and {}.png in {}",
        sweep.scenario,
        sweep.cells.len(),
        sweep.seeds,
        lockstorm::report::sweep::CSV,
        drawn.join(".png, "),
        dir.display()
    );
    Ok(())
}

fn merge(dirs: &[PathBuf], out: Option<PathBuf>, quiet: bool) -> Result<bool> {
    match run::merge::merge(dirs)? {
        Merged::Scenario {
            scenario,
            outcome,
            timing,
        } => {
            let dir = out.unwrap_or_else(|| Path::new("reports").join(&scenario.name));
            let cannot_write = || format!("cannot write the report to {}", dir.display());
            let folder = RunFolder::prepare(&dir).with_context(cannot_write)?;
            write_report(&dir, &scenario, &outcome, &timing)?;
            folder.finish().with_context(cannot_write)?;
            if !quiet {
                print_table(&scenario, &outcome);
            }
            print_verdict(&scenario, &outcome, &dir);
            Ok(outcome.as_expected)
        }
        Merged::Sweep { sweep, timing } => {
            let dir = out.unwrap_or_else(|| Path::new("reports/sweeps").join(&sweep.scenario));
            write_sweep(&dir, &sweep, &timing, quiet)?;
            Ok(true)
        }
    }
}

fn print_table(scenario: &Scenario, outcome: &Outcome) {
    println!(
        "{:>12} {:>9} {:>9} {:>7} {:>7} {:>10} {:>8} {:>11} {:>11}",
        "seed", "ops", "acquired", "failed", "unknown", "violations", "avail", "p50 acq", "p99 acq"
    );
    const ROWS: usize = 20;
    for r in outcome.seeds.iter().take(ROWS) {
        println!(
            "{:>12} {:>9} {:>9} {:>7} {:>7} {:>10} {:>7.1}% {:>11} {:>11}",
            r.seed,
            r.sim.lock_ops,
            r.stats.acquired,
            r.stats.failed,
            r.stats.unknown,
            r.violations,
            r.stats.availability * 100.0,
            ms(r.stats.latency_p50_us),
            ms(r.stats.latency_p99_us),
        );
    }
    if outcome.seeds.len() > ROWS {
        let more = &outcome.seeds[ROWS..];
        let unsafe_more = more.iter().filter(|r| !r.safe).count();
        let idle_more = more
            .iter()
            .filter(|r| r.verdict == run::Verdict::NotExercised)
            .count();
        println!(
            "{:>12} ({} more seeds, {unsafe_more} of them unsafe, {idle_more} not exercised)",
            "...",
            more.len()
        );
    }
    let what = match scenario.backend {
        Backend::Sim => "simulated",
        Backend::Redis => "real Redis:",
        Backend::Docker => "Redis in containers:",
    };
    // Only what was measured: worker clients talk to Redis themselves, so their node
    // commands are not counted (a zero would read as a stalled run).
    let node_cmds: u64 = outcome.seeds.iter().map(|s| s.sim.node_cmds).sum();
    let lock_ops: u64 = outcome.seeds.iter().map(|s| s.sim.lock_ops).sum();
    let mut rates = Vec::new();
    if node_cmds > 0 {
        rates.push(format!("{:.0} node commands/s", outcome.sim_ops_per_sec()));
    }
    if lock_ops > 0 {
        rates.push(format!("{:.0} lock operations/s", outcome.sim_lock_ops_per_sec()));
    }
    if !rates.is_empty() {
        println!("{what} {} ({})", rates.join(", "), scenario.name);
    }
}

fn ms(us: u64) -> String {
    format!("{:.2}ms", us as f64 / 1e3)
}

fn print_verdict(scenario: &Scenario, outcome: &Outcome, dir: &Path) {
    let verdict = outcome.run_verdict().map_or("unknown", |v| v.words());
    let expected = format!("{:?}", scenario.expect).to_lowercase();
    let live = if outcome.live { "live" } else { "NOT live" };
    let mark = match &outcome.partial {
        Some(why) => format!("PARTIAL, {why}"),
        None if outcome.as_expected => "as expected".into(),
        None => "NOT as expected".into(),
    };
    println!(
        "{}: {verdict}, {live} (expected {expected}) — {mark}; report in {}",
        scenario.name,
        dir.display()
    );
    if let Some(why) = &outcome.not_exercised {
        // Why a run with no violation proved nothing: never as expected.
        println!("  not exercised: {why}");
    }
    for v in outcome.findings.violations.iter().take(3) {
        println!(
            "  violation: clients {} and {} both held {} from {} to {} (seed {})",
            v.first.client,
            v.second.client,
            v.lock,
            secs(v.overlap_start_us),
            secs(v.overlap_end_us),
            outcome.reported_seed
        );
    }
    if scenario.expect_resource.is_some() || !outcome.resource_safe {
        let r = &outcome.findings.resource;
        println!(
            "  guarded resource: {} ({} writes, {} rejected by fencing)",
            if outcome.resource_safe { "safe" } else { "UNSAFE" },
            r.writes,
            r.rejected
        );
    }
    if !outcome.findings.fence_regressions.is_empty() {
        println!(
            "  fencing: {} tokens did not grow after an earlier hold ended (see summary.json)",
            outcome.findings.fence_regressions.len()
        );
    }
    for v in outcome.findings.resource_violations.iter().take(3) {
        println!(
            "  stale write: client {} wrote to {} at {} after its hold ended, {} (seed {})",
            v.client,
            v.lock,
            secs(v.write_us),
            lockstorm::report::stale::against(v),
            outcome.reported_seed
        );
    }
    for (mode, w) in &outcome.findings.stats.waits {
        println!(
            "  wait {:?}: p50 {} p99 {} max {} ({} acquired, {} unfinished)",
            mode,
            ms(w.p50_us),
            ms(w.p99_us),
            ms(w.max_us),
            w.acquired,
            w.unfinished
        );
    }
    const SHOWN: usize = 5;
    for l in outcome.findings.liveness.iter().take(SHOWN) {
        println!("  liveness: {}", serde_json::to_string(l).unwrap_or_default());
    }
    let stats = &outcome.findings.stats;
    if stats.unavailable_us > 0 {
        println!(
            "  availability penalty: {} ({:.1}% of the workload) with a lock free but out of reach (seed {})",
            secs(stats.unavailable_us),
            stats.unavailable_share * 100.0,
            outcome.reported_seed
        );
    }
    if outcome.findings.liveness.len() > SHOWN {
        println!(
            "  ... {} more liveness findings in summary.json",
            outcome.findings.liveness.len() - SHOWN
        );
    }
    if !outcome.availability_ok {
        println!(
            "  availability below the scenario's min_availability of {:.1}%",
            scenario.min_availability.unwrap_or(0.0) * 100.0
        );
    }
    if !outcome.safe || !outcome.live || !outcome.as_expected {
        println!("  rerun: {}", scenario.rerun_command(outcome.reported_seed));
    }
    let f = &outcome.findings;
    if !f.is_safe() || !f.is_live() || !f.is_resource_safe() {
        match scenario.shrink_command(outcome.reported_seed) {
            Some(command) => println!("  shrink: {command}"),
            None => println!("  shrink: none ({})", lockstorm::scenario::SHRINK_NO_WORKER),
        }
    }
}

/// A bar drawn only on a terminal and not with --quiet (indicatif hides it otherwise).
fn styled_bar(quiet: bool, len: u64, template: &str) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(len)
    };
    bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
    bar
}

fn shrink(a: &ShrinkArgs) -> Result<bool> {
    let (original, seed, report_dir) = if a.input.is_dir() {
        let (s, reported) = shrink::from_report(&a.input)?;
        (s, a.seed.unwrap_or(reported), Some(a.input.as_path()))
    } else {
        let s = Scenario::load(&a.input)?;
        let seed = a.seed.unwrap_or(s.seed);
        (s, seed, None)
    };
    let budget = shrink::Budget {
        runs: a.max_runs as usize,
        time: a.time.map(std::time::Duration::from_secs),
    };
    let bar = styled_bar(a.quiet, a.max_runs, "{spinner} {pos} runs, {msg}  {elapsed}");
    let shrunk = shrink::shrink(&original, seed, a.kind, &budget, &|p| {
        bar.set_position(p.runs as u64);
        bar.set_message(format!("{} kept; trying {}", p.kept, p.what));
    })?;
    bar.finish_and_clear();
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| shrink::default_out(report_dir, &original));
    let (written, outcome) = shrunk.write(&dir, &original)?;
    println!(
        "{} seed {seed}: shrunk to {} ({}) in {} runs",
        original.name, written.name, shrunk.kind, shrunk.runs
    );
    if !a.quiet {
        for line in shrunk.summary(&original) {
            println!("  {line}");
        }
        if let Some(story) = shrunk.first_story() {
            println!("\n{}", story.markdown());
        }
    }
    if let Some(why) = &shrunk.stopped {
        println!("  stopped early: {why}");
    }
    let file = written.path.as_ref().expect("written with a path");
    println!("  scenario: {}", file.display());
    println!("  report: {}", dir.join("index.html").display());
    println!("  rerun: {}", written.rerun_command(seed));
    Ok(outcome.as_expected)
}

fn parse_dur(text: &str) -> Result<u64, String> {
    lockstorm::scenario::Dur::parse(text).map(|d| d.us())
}

fn explore(a: &ExploreArgs) -> Result<bool> {
    let scenario = Scenario::load(&a.file)?;
    let limits = explore::Limits {
        states: a.max_states,
        time: a.time.map(std::time::Duration::from_secs),
    };
    let bar = styled_bar(a.quiet, a.max_states, "{spinner} {pos} states  {msg}  {elapsed}");
    let done = explore::explore(&scenario, &a.overrides(), &limits, &|p| {
        bar.set_position(p.states);
        bar.set_message(format!("depth {}, {} waiting", p.depth, p.frontier));
    })
    .map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    bar.finish_and_clear();
    if !a.quiet {
        println!("scope: {}", done.scope.describe());
    }
    println!("{}: {}", scenario.name, done.headline());
    let Some(cx) = &done.counterexample else {
        return Ok(done.agrees_with(&scenario));
    };
    if !a.quiet {
        println!("\n{}", cx.numbered_story());
    }
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(&cx.reproduction.name));
    let written = explore::write_reproduction(&done, cx, &dir)?;
    let how = if cx.reproduced {
        "reproduced"
    } else {
        "NOT reproduced"
    };
    println!("  reproduction: {} ({how} on the simulator)", written.display());
    println!("  report: {}", dir.join("index.html").display());
    Ok(done.agrees_with(&scenario))
}

fn secs(us: u64) -> String {
    format!("{:.3}s", us as f64 / 1e6)
}

fn bench(nodes: usize, iterations: usize) -> Result<bool> {
    let series = lockstorm::real::bench::run(nodes, iterations)?;
    let base = series[0].p50_us.max(1) as f64;
    println!(
        "{:<38} {:>8} {:>10} {:>10} {:>10}",
        "series", "samples", "p50", "p99", "p50 ratio"
    );
    for s in &series {
        println!(
            "{:<38} {:>8} {:>10} {:>10} {:>9.2}x",
            s.name,
            s.samples,
            ms(s.p50_us),
            ms(s.p99_us),
            s.p50_us as f64 / base
        );
    }
    println!("({nodes} local redis-server nodes; ratios are to the single SET NX PX p50)");
    Ok(true)
}

fn matrix(options: &lockstorm::run::matrix::MatrixOptions) -> Result<bool> {
    use lockstorm::report::matrix::Cell;
    let m = lockstorm::run::matrix::run_matrix(options, &|cell| eprintln!("{cell}"))?;
    let mut departed = 0;
    for a in &m.adapters {
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
        println!(
            "{:<24} {} of {} cells ran, {off} not as predicted",
            a.name,
            ran.len(),
            a.cells.len()
        );
    }
    println!(
        "matrix in {} ({} seeds per cell, {:.0} s)",
        options.out.join("README.md").display(),
        m.seeds,
        m.wall_secs
    );
    // The libraries' own predictions decide, not the built-in lock's `expect`.
    Ok(departed == 0)
}

fn bench_protocol(clients: usize, rounds: usize) -> Result<bool> {
    let [direct, through] = lockstorm::run::bench::run(clients, rounds, 3_000)?;
    println!("{:<44} {:>10} {:>12}", "series", "cycles", "cycles/s");
    for r in [&direct, &through] {
        println!("{:<44} {:>10} {:>12.0}", r.name, r.cycles, r.per_second());
    }
    println!(
        "through the protocol: {:.2}x the in-process rate (goal: at least 0.5x); Redlock on 5 local \
         redis-servers, {rounds} alternating rounds of 3 s each",
        through.per_second() / direct.per_second().max(1e-9)
    );
    Ok(true)
}

fn bench_sim(file: &Path, seed: Option<u64>, sets: &[Override], rounds: usize) -> Result<bool> {
    let text = lockstorm::scenario::read_text(file)?;
    let scenario = Scenario::from_text(&text, file, sets)?;
    let seed = seed.unwrap_or(scenario.seed);
    let b = lockstorm::run::sim_bench::run(&scenario, seed, rounds)?;
    let peak = b.peak_rss_bytes.map_or_else(
        || "unknown".into(),
        |b| format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
    );
    println!(
        "{:>16} {:>16} {:>16} {:>12}",
        "lock ops/s", "checked/s", "JSONL checked/s", "peak RSS"
    );
    println!(
        "{:>16.0} {:>16.0} {:>16.0} {:>12}",
        b.lock_ops_per_sec, b.checked_per_sec, b.jsonl_checked_per_sec, peak
    );
    println!(
        "({}, seed {seed}: {} lock ops, {} history events, {:.1} MB of JSONL; medians of {} rounds \
         on one thread)",
        file.display(),
        b.lock_ops,
        b.events,
        b.jsonl_bytes as f64 / 1e6,
        b.rounds
    );
    Ok(true)
}

fn check(path: &Path) -> Result<bool> {
    let findings = checker::check_jsonl(path)?.with_context(|| format!("{} is malformed", path.display()))?;
    let verdict = findings.is_safe() && findings.is_live() && findings.is_resource_safe();
    let text = serde_json::to_string_pretty(&findings)?;
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        // `check H | head`: the reader has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(verdict),
        written => written.map(|()| verdict).context("cannot write the findings"),
    }
}

fn report(dir: &Path) -> Result<bool> {
    /// The data file `name` in `dir`, parsed, if it is there.
    fn data<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Result<Option<T>> {
        let path = dir.join(name);
        if !path.exists() {
            return Ok(None);
        }
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let value =
            serde_json::from_str(&text).with_context(|| format!("{} is malformed", path.display()))?;
        Ok(Some(value))
    }
    if let Some(sweep) = data::<Sweep>(dir, lockstorm::report::sweep::JSON)? {
        let drawn = lockstorm::report::sweep::write(dir, &sweep)?;
        println!("{}: redrew sweep.csv and {}", dir.display(), drawn.join(", "));
        return Ok(true);
    }
    if let Some(matrix) = data::<lockstorm::report::matrix::Matrix>(dir, lockstorm::report::matrix::JSON)? {
        lockstorm::report::matrix::write(dir, &matrix)?;
        println!(
            "{}: rendered README.md and index.html from matrix.json",
            dir.display()
        );
        return Ok(true);
    }
    let findings = lockstorm::report::rerender(dir)?;
    println!(
        "{}: {} violation(s), {} liveness finding(s); report in {}",
        dir.display(),
        findings.violations.len(),
        findings.liveness.len(),
        dir.join("index.html").display()
    );
    Ok(true)
}

fn analysis(scenarios: &Path, out: &Path, seeds: u64) -> Result<bool> {
    let cases =
        lockstorm::run::analysis::run_all(scenarios, out, seeds, &|name| eprintln!("running {name}..."))?;
    for c in &cases {
        println!(
            "{:<32} {:<13} ({}/{} seeds unsafe, {} not exercised, expected {}) {}",
            c.name,
            c.verdict,
            c.unsafe_seeds,
            c.seeds,
            c.not_exercised_seeds,
            c.expect,
            if c.as_expected {
                "as expected"
            } else {
                "NOT as expected"
            }
        );
    }
    println!("analysis in {}", out.join("README.md").display());
    Ok(cases.iter().all(|c| c.as_expected))
}
