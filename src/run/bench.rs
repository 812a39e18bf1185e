//! `lockstorm bench --protocol`: what the worker protocol costs. The same real-Redis
//! workload (20 clients by default, each cycling acquire → release on its own lock with
//! no think or hold time, Redlock on 5 local nodes) runs in-process and through
//! `lockstorm worker` (one worker process per client), alternating in short rounds so
//! that load from the rest of the machine falls on both alike, and prints lock cycles
//! per second for each and their ratio. Not a timed test: numbers depend on the machine.

use crate::history::{Event, OpKind, Phase};
use crate::real::{RealError, RealOptions};
use crate::scenario::Scenario;
use crate::worker::{WorkerSpec, DEFAULT_DEADLINE_US};

/// One measured series.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Rate {
    pub name: String,
    pub cycles: u64,
    pub seconds: f64,
}

impl Rate {
    pub fn per_second(&self) -> f64 {
        self.cycles as f64 / self.seconds.max(1e-9)
    }
}

/// The workload: `clients` clients, as many locks, no think or hold time.
fn scenario(clients: usize, round_ms: u64) -> Scenario {
    let text = format!(
        "backend = \"redis\"\nduration = \"{round_ms}ms\"\nnodes = 5\n[algorithm]\nttl = \"10s\"\n\
         retry_count = 0\nrequest_timeout = \"1s\"\n[clients]\ncount = {clients}\nlocks = {clients}\n\
         think = \"0ms\"\nhold = \"0ms\"\n"
    );
    Scenario::parse(&text, "bench", "bench-protocol").expect("the bench scenario is valid")
}

/// Completed lock cycles (workload acquisitions that succeeded) in a history.
fn cycles(history: &[Event]) -> u64 {
    history
        .iter()
        .filter(|e| matches!(e, Event::Ok(op) if op.op == OpKind::Acquire && op.phase == Phase::Workload))
        .count() as u64
}

/// Runs `rounds` rounds of `round_ms` each per series, alternating; returns
/// (in-process, through the protocol).
pub fn run(clients: usize, rounds: usize, round_ms: u64) -> Result<[Rate; 2], RealError> {
    let direct = scenario(clients, round_ms);
    let mut through = direct.clone();
    through.clients.worker = Some(WorkerSpec {
        argv: vec!["lockstorm".into(), "worker".into()],
        faketime: false,
        deadline_us: DEFAULT_DEADLINE_US,
        origin: crate::worker::WorkerOrigin::File,
    });
    let mut rates = [
        Rate {
            name: format!("in-process, {clients} clients"),
            cycles: 0,
            seconds: 0.0,
        },
        Rate {
            name: format!("through `lockstorm worker`, {clients} clients"),
            cycles: 0,
            seconds: 0.0,
        },
    ];
    for round in 0..rounds {
        for (rate, s) in rates.iter_mut().zip([&direct, &through]) {
            let (_, output, _) = super::run_seed_real(s, round as u64 + 1, &RealOptions::default())?;
            rate.cycles += cycles(&output.history);
            rate.seconds += round_ms as f64 / 1e3;
        }
    }
    Ok(rates)
}
