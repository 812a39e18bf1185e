//! The `lockstorm` command line. Arguments are parsed by clap, the work is done by the
//! library, and every error is printed as one line with its cause chain.
//!
//! Exit status: 0 when the verdict is as the scenario expects, 1 when it is not,
//! 2 for bad input or a broken environment; 128 + the signal's number (130 SIGINT,
//! 143 SIGTERM, 129 SIGHUP) when a signal stopped the run, whose partial report is kept.
//!
//! Library errors carry their cause in their own message rather than as a `source`, so
//! `{:#}` prints each cause once.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use lockstorm::checker;
use lockstorm::history;
use lockstorm::real::RealOptions;
use lockstorm::report::folder::RunFolder;
use lockstorm::run::{self, Outcome};
use lockstorm::scenario::{Backend, Scenario};
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
        /// Where to run: the simulator or real redis-server processes (default: the
        /// scenario's `backend`, else sim).
        #[arg(long, value_enum)]
        backend: Option<Backend>,
        /// Real backend: keep the nodes' temporary directories (configs, logs, AOFs).
        #[arg(long)]
        keep: bool,
    },
    /// Measure Redlock acquire and release on local redis-servers against one SET NX PX.
    Bench {
        /// How many local redis-server nodes Redlock runs on.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=64))]
        nodes: u64,
        /// Samples per series.
        #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
        iterations: u64,
    },
    /// Check a history (JSONL, from lockstorm or any client) against the lock model.
    Check {
        /// The history file, e.g. reports/partition/history.jsonl.
        history: PathBuf,
    },
    /// Re-render a report folder (plots, narrative.md, index.html) from its history.jsonl.
    Report {
        /// The folder holding history.jsonl, e.g. reports/partition.
        dir: PathBuf,
    },
    /// The reaper (started by lockstorm itself): cleans up after lockstorm if it is
    /// killed.
    #[command(name = "reaper", hide = true)]
    Reaper,
    /// Run every scenario and write the analysis (verdicts and evidence) with an index.
    Analysis {
        /// The folder of scenario files.
        #[arg(long, default_value = "scenarios")]
        scenarios: PathBuf,
        /// Where the analysis goes.
        #[arg(long, default_value = "reports/analysis")]
        out: PathBuf,
        /// Seeds per scenario, from each file's own seed.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000))]
        seeds: u64,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(
        cli.command,
        Command::Scenario { .. } | Command::Bench { .. } | Command::Analysis { .. }
    ) {
        // These start processes and temporary directories: a signal stops them
        // cleanly, and the reaper cleans up after a SIGKILL.
        if let Err(e) = shutdown::install() {
            eprintln!("lockstorm: warning: cannot handle signals ({e}); Ctrl-C would leave processes behind");
        }
        if let Ok(exe) = std::env::current_exe() {
            lockstorm::reaper::enable(&exe);
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
        } => scenario(&file, seed, seeds, out, quiet, backend, keep),
        Command::Check { history } => check(&history),
        Command::Bench { nodes, iterations } => bench(nodes as usize, iterations as usize),
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
    };
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

fn scenario(
    file: &Path,
    seed: Option<u64>,
    count: u64,
    out: Option<PathBuf>,
    quiet: bool,
    backend: Option<Backend>,
    keep: bool,
) -> Result<bool> {
    let mut scenario = Scenario::load(file)?;
    if let Some(b) = backend {
        scenario.backend = b;
    }
    let first = seed.unwrap_or(scenario.seed);
    let seeds: Vec<u64> = (0..count).map(|i| first.wrapping_add(i)).collect();

    // Drawn only on a terminal (indicatif hides it otherwise).
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(1_000)
    };
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {percent:>3}%  {elapsed}  eta {eta}  {msg}")
            .expect("valid template"),
    );
    bar.set_message(format!("{count} seed(s) of {}", scenario.name));
    let dir = out.unwrap_or_else(|| Path::new("reports").join(&scenario.name));
    let cannot_write = || format!("cannot write the report to {}", dir.display());
    let mut folder = RunFolder::prepare(&dir).with_context(cannot_write)?;
    folder
        .start(&lockstorm::report::placeholder_summary(&scenario, first))
        .with_context(cannot_write)?;
    let real = RealOptions {
        keep,
        // Real runs cannot be replayed: their history goes to disk as it is made.
        history_path: (scenario.backend == Backend::Redis).then(|| folder.history_path()),
    };
    let result = run::run(&scenario, &seeds, &real, &|fraction| {
        bar.set_position((fraction * 1_000.0) as u64)
    });
    shutdown::run_stopped();
    bar.finish_and_clear();
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(e) => {
            let _ = folder.fail(&format!("the run failed: {e}"));
            return Err(e.into());
        }
    };
    lockstorm::report::write(&dir, &scenario, &outcome).with_context(cannot_write)?;
    folder.finish().with_context(cannot_write)?;

    if !quiet {
        print_table(&scenario, &outcome);
    }
    print_verdict(&scenario, &outcome, &dir);
    if outcome.partial.is_some() {
        println!(
            "  the verdict covers what ran before the stop; `lockstorm report {}` redraws the report",
            dir.display()
        );
    }
    Ok(outcome.as_expected)
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
        println!(
            "{:>12} ({} more seeds, {unsafe_more} of them unsafe)",
            "...",
            more.len()
        );
    }
    let what = match scenario.backend {
        Backend::Sim => "simulated",
        Backend::Redis => "real Redis:",
    };
    println!(
        "{what} {:.0} node commands/s, {:.0} lock operations/s ({})",
        outcome.sim_ops_per_sec(),
        outcome.sim_lock_ops_per_sec(),
        scenario.name
    );
}

fn ms(us: u64) -> String {
    format!("{:.2}ms", us as f64 / 1e3)
}

fn print_verdict(scenario: &Scenario, outcome: &Outcome, dir: &Path) {
    let verdict = outcome.verdict();
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
            "  stale write: client {} wrote to {} at {} after its hold ended, while client {} held it (seed {})",
            v.client,
            v.lock,
            secs(v.write_us),
            v.holder.client,
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

fn check(path: &Path) -> Result<bool> {
    let events = history::read_jsonl(path)?;
    let findings = checker::check(&events).with_context(|| format!("{} is malformed", path.display()))?;
    println!("{}", serde_json::to_string_pretty(&findings)?);
    Ok(findings.is_safe() && findings.is_live() && findings.is_resource_safe())
}

fn report(dir: &Path) -> Result<bool> {
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
            "{:<32} {:<7} ({}/{} seeds unsafe, expected {}) {}",
            c.name,
            c.verdict,
            c.unsafe_seeds,
            c.seeds,
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
