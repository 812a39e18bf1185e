//! `lockstorm scenario FILE`: runs a scenario's seeds on its backend, checks every
//! history, writes the report folder and prints the verdict. The folder is prepared
//! first and holds a placeholder summary until the report is complete, so a run stopped
//! halfway (by a signal or a failed worker) still leaves its evidence and says why.

use super::verdict::{print_table, print_verdict};
use super::{default_out, jobs_or_all, progress_bar, write_junit};
use anyhow::{Context, Result};
use lockstorm::real::{RealError, RealOptions, WorkerFailure};
use lockstorm::report::folder::RunFolder;
use lockstorm::report::timing::{self, Timing};
use lockstorm::report::{junit, Rendered};
use lockstorm::run::shard::{seed_list, Kind, Shard, ShardFile, Source};
use lockstorm::run::{self, Outcome};
use lockstorm::scenario::{Backend, Override, Scenario};
use lockstorm::shutdown;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
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
    /// Print one line: the verdict and the report's folder.
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
    /// Also write the result as JUnit XML to FILE, a test case per seed, for CI systems
    /// to show (a case fails when its seed keeps the run from being as expected).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<bool> {
    let Args {
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
        junit: junit_file,
    } = a;
    let jobs = jobs_or_all(jobs);
    let file = file.as_path();
    let source = Source::read(file, &sets, backend)?;
    let mut scenario = source.scenario(&[])?;
    if let Some(name) = adapter {
        let list = adapter_list.as_path();
        let a = lockstorm::worker::adapters::select(lockstorm::worker::adapters::load(list)?, &[name], list)?;
        scenario.clients.attach_worker(a[0].spec());
        // A catalogue template's `expect` is the built-in lock's: the library's own
        // prediction for that fault decides instead.
        let in_catalogue = file.parent().and_then(Path::file_name) == Some(a[0].kind.folder().as_ref());
        let stem = file.file_stem().map(|s| s.to_string_lossy().into_owned());
        if let Some(p) = stem.and_then(|f| a[0].predicts.get(&f)).filter(|_| in_catalogue) {
            lockstorm::run::matrix::expect_prediction(&mut scenario, p);
            lockstorm::errln!(
                "lockstorm: {} predicts {} here ({}): that is the expected verdict",
                a[0].name,
                p.verdict.name(),
                p.why
            );
        }
    }
    if let Some(argv) = worker {
        let spec = lockstorm::worker::WorkerSpec::from_command_line(&argv).map_err(anyhow::Error::msg)?;
        scenario.clients.attach_worker(spec);
    }
    lockstorm::limits::set_max_history_bytes(max_history_mb << 20);
    lockstorm::scenario::check_history_size(&scenario).map_err(anyhow::Error::msg)?;
    let first = seed.unwrap_or(scenario.seed);
    let all = seed_list(first, seeds);
    let list = match shard {
        None => all,
        Some(s) => {
            s.check_fits(all.len(), "seeds").map_err(anyhow::Error::msg)?;
            s.select(&all)
        }
    };

    let bar = progress_bar(quiet, format!("{} seed(s) of {}", list.len(), scenario.name));
    let dir = out.unwrap_or_else(|| default_out(Path::new("reports").join(&scenario.name), shard));
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
    let result = run::run(&scenario, &list, jobs, &real, &|fraction| {
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

    // The shard's description first: summary.json, written last, vouches for a complete
    // folder (the report writes the logs before it).
    if let Some(shard) = shard {
        let written = ShardFile {
            format: run::shard::FORMAT,
            kind: Kind::Scenario,
            shard,
            source,
            first_seed: first,
            seeds,
            vary: Vec::new(),
            matrix: None,
        }
        .write(&dir);
        if let Err(e) = written {
            let _ = folder.fail(&format!("shard.json could not be written: {e}"));
            return Err(anyhow::Error::from(e)
                .context(format!("cannot write {}", dir.join(run::shard::FILE).display())));
        }
    }
    let rendered = match write_report(&dir, &scenario, &outcome, &Timing::of(&outcome.seeds)) {
        Ok(rendered) => rendered,
        Err(e) => {
            // The placeholder summary stays, saying why the run is partial.
            let _ = folder.fail(&format!("the report could not be written: {e:#}"));
            return Err(e);
        }
    };
    if let Some(sig) = shutdown::report_done() {
        // lockstorm exits with the signal's status, and the summary must not say
        // otherwise. A signal that stopped the run has said so already ("stopped by
        // SIGTERM after 3 of 50 seeds"); one that came after the run, as the summary was
        // written, is said here.
        if outcome.partial.is_none() {
            let _ = lockstorm::report::folder::mark_partial(
                &dir,
                &format!("stopped by {sig} as the report was written"),
            );
        }
    }
    folder.finish().with_context(cannot_write)?;
    if let Some(path) = &junit_file {
        let suite = junit::run_suite(&scenario, &outcome, rendered.stories.first(), &dir);
        write_junit(path, &scenario.name, vec![suite])?;
    }
    if !quiet {
        print_table(&scenario, &outcome);
    }
    print_verdict(&scenario, &outcome, &dir, quiet);
    if outcome.partial.is_some() && !quiet {
        // `report DIR` redraws from history.jsonl, which a multi-seed run stopped before
        // its reported seed's history was made does not have.
        if dir.join("history.jsonl").is_file() {
            out!(
                "  the verdict covers what ran before the stop; `lockstorm report {}` redraws the report",
                dir.display()
            );
        } else if outcome.seeds.is_empty() {
            out!("  no seed finished before the stop: summary.json is the whole report");
        } else {
            // The seeds that finished kept their results, not their histories; a stopped
            // run does not spend the time to simulate the reported one again.
            out!(
                "  the verdict covers the {} seeds that finished; a stopped run does not simulate seed {} again for its history: `{}` does (the simulator is deterministic)",
                outcome.seeds.len(),
                outcome.reported_seed,
                scenario.rerun_command(outcome.reported_seed)
            );
        }
    }
    Ok(outcome.as_expected)
}

/// Keeps what a run stopped by a worker recorded (its history and the workers' logs)
/// in `dir`, and returns the error to print.
fn keep_failed_run(folder: RunFolder, failure: &WorkerFailure) -> anyhow::Error {
    let dir = folder.dir().to_path_buf();
    // The history went to the folder as it was made; the logs join it.
    let kept = lockstorm::report::logs::write(
        &dir,
        failure.output.worker_logs.as_ref(),
        &failure.output.node_logs,
        lockstorm::report::logs::KEEP_BYTES,
    )
    .map_err(anyhow::Error::from)
    .and_then(|()| folder.fail(&failure.message).map_err(anyhow::Error::from));
    match kept {
        Ok(()) => anyhow::anyhow!(
            "{}; the history so far{} in {}",
            failure.message,
            if failure.output.worker_logs.is_some() {
                " and the worker logs are"
            } else {
                " is"
            },
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
pub(super) fn write_report(
    dir: &Path,
    scenario: &Scenario,
    outcome: &Outcome,
    timing: &Timing,
) -> Result<Rendered> {
    timing::write(dir, timing)
        .and_then(|()| lockstorm::report::write(dir, scenario, outcome))
        .with_context(|| format!("cannot write the report to {}", dir.display()))
}
