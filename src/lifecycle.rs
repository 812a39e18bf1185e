//! The phases of a run, the same under both drivers.
//!
//! Workload (clients run, faults come and go) until the scenario's duration; then every
//! fault heals and each client finishes its current operation (draining); once all are
//! idle, client 0 probes every lock (the liveness phase the checker judges); when it is
//! idle again the run is done. A hard stop ends a run that never converges. What a
//! driver hands on when the run is over is a [`RunOutput`].

use crate::command::LockId;
use crate::scenario::Scenario;

/// At most this many locks are probed after the heal.
const MAX_PROBED_LOCKS: u32 = 1_000;

/// What a run produced.
pub struct RunOutput {
    /// The history, when the driver kept it in memory (empty when it went only to a
    /// sink of the caller's).
    pub history: Vec<crate::history::Event>,
    /// Every fault the run planned, scripted and random, in id order.
    pub plan: Vec<crate::fault::PlannedFault>,
    pub stats: RunStats,
    /// The workers' stderr logs, when the clients were worker processes.
    pub worker_logs: Option<crate::worker::process::WorkerLogs>,
    /// The run was cut short because lockstorm was asked to stop
    /// ([`crate::shutdown`]): the history ends where it stopped, operations still open.
    pub stopped: bool,
}

/// Work a driver did, for throughput figures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunStats {
    pub events: u64,
    /// Commands executed by nodes (each SET or unlock on one node).
    pub node_cmds: u64,
    /// Lock operations invoked by clients (acquires and releases).
    pub lock_ops: u64,
    /// Virtual time at which the run ended.
    pub end_us: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunPhase {
    Workload,
    Draining,
    Probing,
    Done,
}

#[derive(Debug)]
pub struct Lifecycle {
    phase: RunPhase,
    /// Clients that reported themselves idle since the heal.
    idle: usize,
    clients: usize,
    locks: u32,
}

impl Lifecycle {
    pub fn new(scenario: &Scenario) -> Self {
        Lifecycle {
            phase: RunPhase::Workload,
            idle: 0,
            clients: scenario.clients.total(),
            locks: scenario.clients.locks.min(MAX_PROBED_LOCKS),
        }
    }

    pub fn phase(&self) -> RunPhase {
        self.phase
    }

    pub fn is_done(&self) -> bool {
        self.phase == RunPhase::Done
    }

    /// The workload is over and every fault has healed: clients now drain.
    pub fn heal(&mut self) {
        self.phase = RunPhase::Draining;
    }

    /// A client went idle. When the last one of the drain does, returns the locks
    /// client 0 must probe now; when the probing client does, the run is done.
    pub fn client_idle(&mut self) -> Option<Vec<LockId>> {
        self.idle += 1;
        match self.phase {
            RunPhase::Draining if self.idle == self.clients => {
                self.phase = RunPhase::Probing;
                // Client 0 is busy again until its probes are over.
                self.idle -= 1;
                Some((0..self.locks).map(LockId).collect())
            }
            RunPhase::Probing => {
                self.phase = RunPhase::Done;
                None
            }
            _ => None,
        }
    }

    /// When a run that never converges is cut off: the drain of every client's last
    /// operation, then several liveness bounds for each probed lock.
    pub fn hard_stop_us(scenario: &Scenario) -> u64 {
        let a = &scenario.algorithm;
        let op_max_us = a.op_max_us(scenario.nodes);
        let locks = u64::from(scenario.clients.locks.min(MAX_PROBED_LOCKS));
        scenario.duration_us + 2 * op_max_us + locks * 2 * (a.liveness_bound_us(scenario.nodes) + op_max_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drain_then_probe_every_lock_then_done() {
        let s = Scenario::parse("[clients]\ncount = 3\nlocks = 2\n", "t", "t").unwrap();
        let mut l = Lifecycle::new(&s);
        assert_eq!(l.client_idle(), None, "idle during the workload means nothing");
        l = Lifecycle::new(&s);
        l.heal();
        assert_eq!(l.client_idle(), None);
        assert_eq!(l.client_idle(), None);
        assert_eq!(
            l.client_idle(),
            Some(vec![LockId(0), LockId(1)]),
            "the last one starts the probes"
        );
        assert_eq!(l.phase(), RunPhase::Probing);
        assert_eq!(l.client_idle(), None);
        assert!(l.is_done());
        assert!(Lifecycle::hard_stop_us(&s) > s.duration_us);
    }
}
