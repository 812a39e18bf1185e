//! `lockstorm explore FILE`: explores every schedule of faults within a small scope,
//! prints the shortest counterexample and writes a scenario that reproduces it.

use super::styled_bar;
use anyhow::Result;
use lockstorm::explore;
use lockstorm::scenario::Scenario;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
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
    /// Threads expanding worlds (default: every core). The answer is the same with any
    /// number: the shortest counterexample, first in action order.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
    threads: Option<u64>,
    /// Where the reproduction scenario and its report go (default:
    /// reports/<name>-explored).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print one line: the result and the report's folder.
    #[arg(long, short)]
    quiet: bool,
}

impl Args {
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

fn parse_dur(text: &str) -> Result<u64, String> {
    lockstorm::scenario::Dur::parse(text).map(|d| d.us())
}

pub fn run(a: Args) -> Result<bool> {
    let scenario = Scenario::load(&a.file)?;
    let limits = explore::Limits {
        states: a.max_states,
        time: a.time.map(std::time::Duration::from_secs),
        threads: a.threads.map(|n| n as usize),
    };
    let bar = styled_bar(a.quiet, a.max_states, "{spinner} {pos} states  {msg}  {elapsed}");
    let done = explore::explore(&scenario, &a.overrides(), &limits, &|p| {
        bar.set_position(p.states);
        bar.set_message(format!("depth {}, {} waiting", p.depth, p.frontier));
    })
    .map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    bar.finish_and_clear();
    if !a.quiet {
        out!("scope: {}", done.scope.describe());
    }
    let Some(cx) = &done.counterexample else {
        out!("{}: {}", scenario.name, done.headline());
        return Ok(done.agrees_with(&scenario));
    };
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| Path::new("reports").join(&cx.reproduction.name));
    if a.quiet {
        explore::write_reproduction(&done, cx, &dir)?;
        out!(
            "{}: {}; report in {}",
            scenario.name,
            done.headline(),
            dir.display()
        );
        return Ok(done.agrees_with(&scenario));
    }
    out!("{}: {}", scenario.name, done.headline());
    out!("\n{}", cx.numbered_story());
    let written = explore::write_reproduction(&done, cx, &dir)?;
    let how = if cx.reproduced {
        "reproduced"
    } else {
        "NOT reproduced"
    };
    out!("  reproduction: {} ({how} on the simulator)", written.display());
    out!("  report: {}", dir.join("index.html").display());
    Ok(done.agrees_with(&scenario))
}
