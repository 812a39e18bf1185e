//! `lockstorm bench`: Redlock's acquire and release on local redis-servers against one
//! SET NX PX; with --protocol, what the worker protocol costs; with --sim, the
//! simulator's and the checker's speed; with --sim --peer, beside turmoil's and
//! Stateright's on the same workloads (the `peers/` crate, docs/peers.md).

use super::ms;
use anyhow::Result;
use lockstorm::run::peer;
use lockstorm::scenario::{Override, Scenario};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
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
    /// Instead: the simulator's and the checker's speed, side by side: lock operations
    /// simulated per second and history events checked per second in memory (each on
    /// one thread), history events checked per second from JSONL (as `lockstorm
    /// check`: lines parsed by a worker per core, up to four), and peak memory.
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
    /// With --sim: the scenario whose scope the explorer searches, on one thread.
    #[arg(long, default_value = "scenarios/node-clock-jump.toml", requires = "sim")]
    explore: PathBuf,
    /// With --sim: also build and run the peer models of `peers/` (turmoil on
    /// partition.toml's workload, Stateright on node-clock-jump.toml's explore scope)
    /// and print lockstorm's rates beside theirs with the ratios. Needs cargo (and
    /// crates.io the first time); see docs/peers.md.
    #[arg(long, requires = "sim")]
    peer: bool,
}

pub fn run(a: Args) -> Result<bool> {
    if a.sim {
        bench_sim(&a)
    } else if a.protocol {
        bench_protocol(a.clients as usize, a.rounds as usize)
    } else {
        bench(a.nodes as usize, a.iterations as usize)
    }
}

fn bench(nodes: usize, iterations: usize) -> Result<bool> {
    let series = lockstorm::real::bench::run(nodes, iterations)?;
    let base = series[0].p50_us.max(1) as f64;
    out!(
        "{:<38} {:>8} {:>10} {:>10} {:>10}",
        "series",
        "samples",
        "p50",
        "p99",
        "p50 ratio"
    );
    for s in &series {
        out!(
            "{:<38} {:>8} {:>10} {:>10} {:>9.2}x",
            s.name,
            s.samples,
            ms(s.p50_us),
            ms(s.p99_us),
            s.p50_us as f64 / base
        );
    }
    out!("({nodes} local redis-server nodes; ratios are to the single SET NX PX p50)");
    Ok(true)
}

fn bench_protocol(clients: usize, rounds: usize) -> Result<bool> {
    let [direct, through] = lockstorm::run::bench::run(clients, rounds, 3_000)?;
    out!("{:<44} {:>10} {:>12}", "series", "cycles", "cycles/s");
    for r in [&direct, &through] {
        out!("{:<44} {:>10} {:>12.0}", r.name, r.cycles, r.per_second());
    }
    out!(
        "through the protocol: {:.2}x the in-process rate (goal: at least 0.5x); Redlock on 5 local \
         redis-servers, {rounds} alternating rounds of 3 s each",
        through.per_second() / direct.per_second().max(1e-9)
    );
    Ok(true)
}

fn bench_sim(a: &Args) -> Result<bool> {
    let (file, explored, rounds) = (&a.scenario, &a.explore, a.rounds as usize);
    let text = lockstorm::scenario::read_text(file)?;
    let scenario = Scenario::from_text(&text, file, &a.sets)?;
    let seed = a.seed.unwrap_or(scenario.seed);
    let scope = lockstorm::explore::Scope::new(&Scenario::load(explored)?, &Default::default())
        .map_err(|e| anyhow::anyhow!("{}: {e}", explored.display()))?;
    // Built before anything is measured, so a build does not share the machine with it.
    let peers = if a.peer {
        Some(peer::plan(file, a.sets.len(), explored)?)
    } else {
        None
    };
    let b = lockstorm::run::sim_bench::run(&scenario, seed, rounds)?;
    let e = lockstorm::explore::bench::explore(&scope, rounds);
    let measured = match &peers {
        Some(p) => Some(peer::measure(p, rounds)?),
        None => None,
    };
    let peak = b.peak_rss_bytes.map_or_else(
        || "unknown".into(),
        |b| format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
    );
    out!(
        "{:>16} {:>16} {:>16} {:>12}",
        "lock ops/s",
        "checked/s",
        "JSONL checked/s",
        "peak RSS"
    );
    out!(
        "{:>16.0} {:>16.0} {:>16.0} {:>12}",
        b.lock_ops_per_sec,
        b.checked_per_sec,
        b.jsonl_checked_per_sec,
        peak
    );
    out!(
        "({}, seed {seed}: {} lock ops, {} history events, {:.1} MB of JSONL; medians of {} rounds \
         on one thread, the JSONL's lines parsed by {})",
        file.display(),
        b.lock_ops,
        b.events,
        b.jsonl_bytes as f64 / 1e6,
        b.rounds,
        match b.jsonl_workers {
            0 => "that thread".to_string(),
            1 => "1 worker".to_string(),
            n => format!("{n} workers"),
        }
    );
    out!(
        "explorer: {:.0} states/s ({} states, {} transitions, {}; {}, on one thread, median of {} rounds)",
        e.states_per_sec,
        e.states,
        e.transitions,
        e.answer,
        explored.display(),
        e.rounds
    );
    if let Some(m) = measured {
        let virtual_secs = scenario.duration_us as f64 / 1e6;
        print_peers(&m, &b, virtual_secs, e.states_per_sec);
    }
    Ok(true)
}

/// lockstorm's rates beside the peers', with what each peer counted.
fn print_peers(
    m: &peer::Measured,
    b: &lockstorm::run::sim_bench::SimBench,
    virtual_secs: f64,
    states_per_sec: f64,
) {
    out!();
    out!("{}", peer::header());
    let mut notes = Vec::new();
    match &m.turmoil {
        Ok(t) => {
            let c = peer::Comparison {
                what: "lock ops/s".into(),
                peer: t.peer.clone(),
                ours: b.lock_ops_per_sec,
                theirs: t.lock_ops_per_sec,
            };
            out!("{}", c.row());
            notes.push(format!(
                "lockstorm: {} lock ops in {virtual_secs:.0} virtual s, {:.0} per virtual s (its liveness phase included)",
                b.lock_ops,
                b.lock_ops as f64 / virtual_secs.max(1e-9)
            ));
            notes.push(peer::turmoil_counts(t));
        }
        Err(why) => notes.push(format!("turmoil: not compared ({why})")),
    }
    match &m.stateright {
        Ok(s) => {
            let c = peer::Comparison {
                what: "explorer states/s".into(),
                peer: s.peer.clone(),
                ours: states_per_sec,
                theirs: s.states_per_sec,
            };
            out!("{}", c.row());
            notes.push(peer::stateright_counts(s));
        }
        Err(why) => notes.push(format!("stateright: not compared ({why})")),
    }
    for n in notes {
        out!("({n})");
    }
    out!(
        "(peer binaries {}; see docs/peers.md for what each model covers)",
        m.how
    );
}
