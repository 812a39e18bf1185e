//! The phases of a run, the same under both drivers.
//!
//! Workload (clients run, faults come and go) until the scenario's duration (or, with
//! `heal_after_faults`, that long after the last fault of the plan is over: every
//! planned fault started and ended and every aimed entry fired into faults that ended,
//! so a run spends no time on a workload its faults no longer touch); then the
//! faults heal and each client finishes its current operation (draining); once all are
//! idle and every node is back, client 0 probes every lock (the liveness phase the
//! checker judges); when it is idle again the run is done. A hard stop ends a run that
//! never converges. What a driver hands on when the run is over is a [`RunOutput`].
//!
//! The heal keeps each fault's promises ([`Lifecycle::heal`]): partitions, delays, loss,
//! pauses and clock rates end at once, but a crash or a failover with a planned end keeps
//! it, so a node comes back no earlier than its restart delay says and a replica is
//! promoted no earlier than planned (a restart delay longer than the ttl is what makes a
//! crash safe without persistence). The probe waits for them.

use crate::command::LockId;
use crate::fault::{Fault, PlannedFault};
use crate::scenario::Scenario;
use std::collections::BTreeSet;

/// At most this many locks are probed after the heal.
const MAX_PROBED_LOCKS: u32 = 1_000;

/// A redis-server's log, read from the run's directory once its processes were gone
/// (`real::workdir`), for the report to keep ([`crate::report::logs`]).
#[derive(Clone, Debug)]
pub struct NodeLog {
    /// Its folder in the run's directory, `/` as `-`: `node0`, `node0-replica`,
    /// `sentinel-redis0`, `cluster-redis1`.
    pub name: String,
    pub bytes: Vec<u8>,
}

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
    /// The logs of the redis-servers lockstorm started (none on the simulator, in
    /// containers or for servers it did not start).
    pub node_logs: Vec<NodeLog>,
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
    /// Outages the heal left to their planned end (plan indices): the probe waits for
    /// them.
    outages: BTreeSet<usize>,
    /// The plan's faults not over yet (an aimed entry counts until it fires, then each
    /// fault it became), and how long after the last one the workload ends; `None`: it
    /// ends at the duration.
    open_faults: usize,
    heal_after_us: Option<u64>,
}

impl Lifecycle {
    pub fn new(scenario: &Scenario) -> Self {
        Lifecycle {
            phase: RunPhase::Workload,
            idle: 0,
            clients: scenario.clients.total(),
            locks: scenario.clients.locks.min(MAX_PROBED_LOCKS),
            outages: BTreeSet::new(),
            open_faults: 0,
            heal_after_us: scenario.heal_after_faults_us,
        }
    }

    /// The run's plan (scripted, drawn and aimed entries), before it starts.
    pub fn planned(&mut self, plan: &[PlannedFault]) {
        self.open_faults = plan.len();
    }

    /// `entries` aimed entries fired into `into` faults (which join the plan).
    pub fn fired(&mut self, entries: usize, into: usize) {
        self.open_faults = (self.open_faults + into).saturating_sub(entries);
    }

    /// A fault of the plan ended during the workload at `t_us`: when it was the last one
    /// open and the scenario ends early, the time the workload ends.
    pub fn fault_over(&mut self, t_us: u64) -> Option<u64> {
        if self.phase != RunPhase::Workload {
            return None;
        }
        self.open_faults = self.open_faults.saturating_sub(1);
        let after = self.heal_after_us?;
        (self.open_faults == 0).then(|| t_us.saturating_add(after))
    }

    pub fn phase(&self) -> RunPhase {
        self.phase
    }

    pub fn is_done(&self) -> bool {
        self.phase == RunPhase::Done
    }

    /// The workload is over: of the faults `active` in `plan`, returns those the driver
    /// ends now, at the heal. Every fault ends there but an outage (a crash or a
    /// failover) with a planned end, which keeps it: the driver ends it when its end
    /// comes, as during the workload, and tells [`Lifecycle::fault_ended`]. Clients
    /// drain from now on.
    pub fn heal(&mut self, plan: &[PlannedFault], active: &[bool]) -> Vec<usize> {
        self.phase = RunPhase::Draining;
        let (outages, now): (Vec<usize>, Vec<usize>) = (0..plan.len())
            .filter(|&i| active[i])
            .partition(|&i| outlasts_heal(&plan[i]));
        self.outages.extend(outages);
        now
    }

    /// Fault `i` ended after the heal. When it was the last outage the probe waited for
    /// and every client is idle, returns the locks client 0 must probe now.
    pub fn fault_ended(&mut self, i: usize) -> Option<Vec<LockId>> {
        if !self.outages.remove(&i) {
            return None;
        }
        self.probe_if_ready()
    }

    /// A client went idle. When the last one of the drain does (and no node is still
    /// down), returns the locks client 0 must probe now; when the probing client does,
    /// the run is done.
    pub fn client_idle(&mut self) -> Option<Vec<LockId>> {
        self.idle += 1;
        match self.phase {
            RunPhase::Draining => self.probe_if_ready(),
            RunPhase::Probing => {
                self.phase = RunPhase::Done;
                None
            }
            _ => None,
        }
    }

    fn probe_if_ready(&mut self) -> Option<Vec<LockId>> {
        if self.phase != RunPhase::Draining || self.idle < self.clients || !self.outages.is_empty() {
            return None;
        }
        self.phase = RunPhase::Probing;
        // Client 0 is busy again until its probes are over.
        self.idle -= 1;
        Some((0..self.locks).map(LockId).collect())
    }

    /// When a run that never converges is cut off: the longest outage that may outlast
    /// the heal, the drain of every client's last operation, then several liveness
    /// bounds for each probed lock.
    pub fn hard_stop_us(scenario: &Scenario) -> u64 {
        let a = &scenario.algorithm;
        let op_max_us = a.op_max_us(scenario.nodes);
        let locks = u64::from(scenario.clients.locks.min(MAX_PROBED_LOCKS));
        scenario.duration_us
            + longest_outage_us(scenario)
            + 2 * op_max_us
            + locks * 2 * (a.liveness_bound_us(scenario.nodes) + op_max_us)
    }
}

/// Whether a fault active at the heal keeps its planned end: a crash or a failover
/// with a duration (its restart or promotion delay).
pub fn outlasts_heal(f: &PlannedFault) -> bool {
    matches!(f.fault, Fault::Crash { .. } | Fault::Failover { .. }) && f.duration_us.is_some()
}

/// The longest a crash or failover of `scenario` may keep a node down, scripted, aimed
/// or drawn by the nemesis: how long past the heal the probe may have to wait.
fn longest_outage_us(scenario: &Scenario) -> u64 {
    let scripted = scenario
        .faults
        .iter()
        .filter(|f| outlasts_heal(f))
        .filter_map(|f| f.duration_us);
    let n = &scenario.nemesis;
    let drawn = [n.crash, n.failover]
        .into_iter()
        .flatten()
        .map(|r| r.duration.max_us());
    scripted.chain(drawn).max().unwrap_or(0)
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
        assert_eq!(l.heal(&[], &[]), Vec::<usize>::new());
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

    #[test]
    fn the_heal_leaves_planned_restarts_and_promotions_to_their_time_and_the_probe_waits() {
        let text = r#"
duration = "10s"
nodes = 2
[replication]
lag = "1ms"
[clients]
count = 2
[[faults]]
at = "9s"
kind = "crash"
node = 0
restart_after = "30s"
[[faults]]
at = "9s"
kind = "crash"
node = 1
[[faults]]
at = "9s"
kind = "partition"
nodes = [0]
clients = [1]
duration = "60s"
[[faults]]
at = "9s"
kind = "failover"
node = 1
promote_after = "5s"
[[faults]]
at = "1s"
kind = "crash"
node = 1
restart_after = "1s"
"#;
        let s = Scenario::parse(text, "t", "t").unwrap();
        let mut l = Lifecycle::new(&s);
        // The last crash is over by the heal; the crash without a restart delay, the
        // partition (whatever its duration) end at the heal.
        assert_eq!(l.heal(&s.faults, &[true, true, true, true, false]), vec![1, 2]);
        assert_eq!(l.client_idle(), None);
        assert_eq!(l.client_idle(), None, "node 0 is still down");
        assert_eq!(l.fault_ended(1), None, "not one the probe waits for");
        assert_eq!(l.fault_ended(3), None, "node 0 is still down");
        assert_eq!(l.fault_ended(0), Some(vec![LockId(0)]), "every node is back");
        assert_eq!(l.client_idle(), None);
        assert!(l.is_done());
        let base =
            Lifecycle::hard_stop_us(&Scenario::parse("duration = \"10s\"\nnodes = 2\n", "t", "t").unwrap());
        assert_eq!(
            Lifecycle::hard_stop_us(&s),
            base + 30_000_000,
            "room for the longest outage"
        );
    }
}
