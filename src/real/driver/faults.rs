//! Faults on real nodes: what each [`Fault`] kind does to the proxies, the processes and
//! their clocks, and which kinds the real backend refuses before a run starts. Client
//! pauses are in `pauses.rs`; a worker client's clock faults move its libfaketime
//! clock.
//!
//! The match on [`Fault`] in [`Driver::fault`] has no wildcard: a new kind does not
//! compile until it is carried out here or refused in [`check_faults`].
//!
//! Faults are sets, kept the simulator's way ([`crate::fault::active`],
//! [`crate::fault::links`]): a node is killed by the first crash on it and restarted
//! when the last one ends; it is stopped (SIGSTOP) by the first pause and continued by
//! the end of the last; a node restarted while a pause on it is still active is stopped
//! again as soon as its scripts are loaded; its libfaketime rate is the product of its
//! active rate faults; a link is cut while any partition cuts it, and its delay is the
//! sum of the active ones.

use super::{Driver, Ev};
use crate::client::Record;
use crate::command::NodeId;
use crate::fault::links::Direction;
use crate::fault::{Fault, PausePoint, Persistence, PlannedFault, Process};
use crate::history::{Event, FaultAction, FaultEvent};
use crate::lifecycle::RunPhase;
use crate::real::faketime::Faketime;
use crate::real::node::NodeOp;
use crate::real::runtime::Host;
use crate::real::RealError;
use crate::scenario::Scenario;

/// Checks that every planned fault can be carried out on these nodes, before any
/// server starts: a fault the real backend cannot do is an error, never skipped.
pub(super) fn check_faults(
    scenario: &Scenario,
    plan: &[PlannedFault],
    external: bool,
) -> Result<(), RealError> {
    let worker = scenario.clients.worker.as_ref();
    for f in plan {
        let refuse = |why: &str| {
            Err(RealError::Unsupported {
                id: f.id,
                kind: f.fault.kind().into(),
                why: why.into(),
            })
        };
        let process =
            "it needs control of the redis-server process, and `nodes` lists servers lockstorm does not run";
        if let Some(shape) = scenario.deployment() {
            let table = match shape {
                crate::real::deployment::Shape::Sentinel(_) => "[sentinel]",
                crate::real::deployment::Shape::Cluster(_) => "[cluster]",
            };
            match &f.fault {
                Fault::Crash {
                    node: 0,
                    power_loss: false,
                } => continue,
                Fault::Partition {
                    direction: crate::fault::CutDirection::Both,
                    ..
                }
                | Fault::ReplicationCut { node: 0 } => continue,
                _ => {
                    return refuse(&format!(
                    "with {table} only a crash of node 0 (the current master), a replication cut of node 0 \
                         and a partition (both ways) are supported yet"
                ))
                }
            }
        }
        match &f.fault {
            Fault::Partition { .. } | Fault::Delay { .. } => {}
            Fault::Crash { node, power_loss } => {
                if external {
                    return refuse(process);
                }
                if *power_loss && scenario.persistence[*node] == Persistence::AofEverysec {
                    return refuse(
                        "a power loss under aof_everysec (losing the unsynced second) is simulator-only; \
                         a real kill loses nothing the kernel has",
                    );
                }
            }
            Fault::Pause { node, point, .. } => match node {
                Some(_) if external => return refuse(process),
                None if worker.is_some() && *point == Some(PausePoint::BeforeValidityCheck) => {
                    return refuse(
                        "before_validity_check is inside the worker's library, where lockstorm cannot stop it: \
                         use after_acquire or while_holding",
                    )
                }
                _ => {}
            },
            Fault::ClockJump { node, .. } | Fault::ClockRate { node, .. } if node.is_some() && external => {
                return refuse(process)
            }
            Fault::ClockJump { client: Some(_), .. } | Fault::ClockRate { client: Some(_), .. }
                if worker.is_some_and(|w| !w.faketime) =>
            {
                return refuse(
                    "lockstorm cannot tell whether libfaketime reaches the clock this worker's library reads: \
                     set `clients.worker_faketime = true` if it does (see adapters/README.md)",
                )
            }
            Fault::ClockJump { .. } => {}
            Fault::ClockRate { node: Some(_), .. } => {}
            Fault::ClockRate { .. } if worker.is_some() => {}
            Fault::ClockRate { .. } => {
                return refuse(
                    "a client clock rate needs a worker client (built-in real clients share lockstorm's clock)",
                )
            }
            Fault::Loss { .. } => {
                return refuse(
                    "TCP delivers or breaks, it does not lose single messages: use partition or delay",
                )
            }
            Fault::Failover { .. } if external => {
                return refuse("failover needs replicas, which lockstorm starts only for servers it runs")
            }
            Fault::Failover { .. } if scenario.replication.is_none() => {
                return refuse("failover needs [replication] (a replica per node)")
            }
            Fault::Failover { .. } => {}
            Fault::ReplicationCut { .. } => {
                return refuse(
                    "on the real backend a replication cut needs [sentinel]: the links of lockstorm's own \
                     replicas (`[replication]`) cannot be cut yet",
                )
            }
        }
    }
    Ok(())
}

/// Whether any fault of the run moves a client's clock (a worker's, by libfaketime).
pub(super) fn needs_worker_faketime(plan: &[PlannedFault]) -> bool {
    plan.iter().any(|f| {
        matches!(
            f.fault,
            Fault::ClockJump { client: Some(_), .. } | Fault::ClockRate { client: Some(_), .. }
        )
    })
}

/// Whether any fault of the run moves a node's clock.
pub(super) fn needs_faketime(plan: &[PlannedFault]) -> bool {
    plan.iter().any(|f| {
        matches!(
            f.fault,
            Fault::ClockJump { node: Some(_), .. } | Fault::ClockRate { node: Some(_), .. }
        )
    })
}

impl Driver<'_> {
    /// Ends the faults `which` (the rest of the plan keeps its planned ends) and every
    /// link fault.
    pub(super) fn heal(&mut self, t: u64, which: impl IntoIterator<Item = usize>) {
        for i in which {
            self.end_fault(t, i);
        }
        for p in &self.proxies {
            p.heal();
        }
        self.links.clear();
    }

    fn fault_event(&mut self, t: u64, i: usize, action: FaultAction) {
        let f = &self.plan[i];
        self.history.push(Event::Fault(FaultEvent {
            t_us: t,
            id: f.id,
            action,
            origin: f.origin,
            fault: f.fault.clone(),
        }));
    }

    /// Shows the aimer ([`crate::aimer`], shared with the simulator) what client `c`
    /// just recorded, and starts (or schedules) the faults aimed entries become, through
    /// the same path as planned faults.
    pub(super) fn aim(&mut self, t: u64, c: usize, r: &Record) {
        if self.aimer.is_idle() || self.lifecycle.phase() != RunPhase::Workload {
            return;
        }
        // The driver's clock is every client's monotonic clock.
        let in_force = r.valid_until_mono_us.is_none_or(|m| m > t);
        let (links, procs, n) = (&self.links, &self.procs, self.hosts.len());
        let reach = |c| crate::aimer::reachable(links, procs, c, n);
        let fired = self.aimer.record(t, c, r, in_force, &reach);
        self.fire(t, fired);
    }

    /// Node `node` answered client `c` at `t` (a built-in client's reply, before the
    /// client sees it; a worker's bytes back through its proxy): an aimed entry waiting
    /// for that many answers of an acquisition fires.
    pub(super) fn aim_reply(&mut self, t: u64, c: usize, node: usize) {
        if self.aimer.is_idle() || self.lifecycle.phase() != RunPhase::Workload {
            return;
        }
        let (links, procs, n) = (&self.links, &self.procs, self.hosts.len());
        let reach = |c| crate::aimer::reachable(links, procs, c, n);
        let fired = self.aimer.answer(t, c, node, &reach);
        self.fire(t, fired);
    }

    /// Starts (or schedules) the faults aimed entries became.
    fn fire(&mut self, t: u64, fired: crate::aimer::Fired) {
        self.replies_wanted.store(
            self.workers.is_some() && self.aimer.wants_replies(),
            std::sync::atomic::Ordering::Relaxed,
        );
        for (i, at) in fired.join(&mut self.plan, &mut self.active, &mut self.lifecycle) {
            if at <= t {
                self.start_fault(t, i);
            } else {
                self.schedule(at, Ev::FaultStart(i));
            }
        }
    }

    pub(super) fn start_fault(&mut self, t: u64, i: usize) {
        if self.lifecycle.phase() != RunPhase::Workload || self.arm_pause(i) {
            return;
        }
        self.begin_fault(t, i);
    }

    /// Marks fault `i` active, records it, carries it out and schedules its end.
    pub(super) fn begin_fault(&mut self, t: u64, i: usize) {
        self.active[i] = true;
        self.fault_event(t, i, FaultAction::Start);
        self.fault(t, i, true);
        match (self.plan[i].duration_us, &self.plan[i].fault) {
            // A clock jump is instantaneous: the clock stays moved, nothing to undo; it
            // ends at once, as on the simulator (its end line, and the heal's count).
            (Some(0), Fault::ClockJump { .. }) => self.end_fault(t, i),
            // Any other fault ends, at once if its duration is 0 (a crash with
            // `restart_after = "0s"` restarts, a failover with `promote_after = "0s"`
            // promotes), as on the simulator.
            (Some(d), _) => self.schedule(t + d, Ev::FaultEnd(i)),
            (None, _) => {}
        }
    }

    pub(super) fn end_fault(&mut self, t: u64, i: usize) {
        if !std::mem::take(&mut self.active[i]) {
            return;
        }
        self.fault_event(t, i, FaultAction::End);
        self.fault(t, i, false);
        if let Some(at) = self.lifecycle.fault_over(t) {
            if at < self.scenario.duration_us {
                self.schedule(at, Ev::EndWorkload);
            }
        }
    }

    /// Starts (`on`) or ends fault `i`: only the transitions of what the active faults
    /// compose to reach the proxies and processes. The match has no wildcard: a new
    /// fault kind does not compile until the real backend says what it does (or refuses
    /// it in `check_faults`).
    fn fault(&mut self, t: u64, i: usize, on: bool) {
        let id = self.plan[i].id;
        match self.plan[i].fault.clone() {
            Fault::Partition {
                nodes,
                clients,
                direction,
            } => {
                self.links.cut(&clients, &nodes, direction, on);
                self.push_links(&clients, &nodes);
                self.push_sentinel_partition();
            }
            Fault::Delay {
                nodes,
                clients,
                extra_us,
            } => {
                self.links.delay(&clients, &nodes, extra_us, on);
                self.push_links(&clients, &nodes);
            }
            Fault::Crash { node, .. } => {
                if self.procs.outage(node, on) {
                    self.node_op(node, if on { NodeOp::Crash } else { NodeOp::Restart });
                }
            }
            Fault::Pause { node, client, .. } => {
                if let Some(c) = client {
                    self.pause_client(t, c, on);
                }
                if let Some(node) = node {
                    if self.procs.pause(Process::Node(node), on) {
                        self.node_op(node, if on { NodeOp::Pause } else { NodeOp::Resume });
                    }
                }
            }
            Fault::ClockJump { node, client, by_us } => {
                if !on {
                    return;
                }
                if let Some(c) = client {
                    self.wall_offset_us[c] += by_us;
                    self.with_worker_clock(c, |ft| ft.jump(by_us));
                }
                if let Some(n) = node {
                    self.node_op(n, NodeOp::ClockJump(by_us));
                }
            }
            Fault::ClockRate { node, client, rate } => {
                if let Some(n) = node {
                    let rate = self.procs.rate(Process::Node(n), id, rate, on);
                    self.node_op(n, NodeOp::ClockRate(rate));
                }
                if let Some(c) = client {
                    let rate = self.procs.rate(Process::Client(c), id, rate, on);
                    self.with_worker_clock(c, |ft| ft.set_rate(rate));
                }
            }
            Fault::Failover { node } => {
                if self.procs.outage(node, on) {
                    self.node_op(node, if on { NodeOp::FailMaster } else { NodeOp::Restart });
                }
            }
            Fault::ReplicationCut { node } => {
                if self.procs.replication_cut(node, on) {
                    if let Host::Deployment(s) = &self.hosts[node] {
                        s.send(crate::real::deployment::DeploymentOp::ReplicationCut { cut: on });
                    }
                }
            }
            // Refused by check_faults before the run starts.
            Fault::Loss { .. } => {}
        }
    }

    fn with_worker_clock(&mut self, c: usize, f: impl FnOnce(&mut Faketime) -> Result<(), RealError>) {
        if let Some(ft) = self.workers.as_mut().and_then(|w| w.clock(c)) {
            if let Err(e) = f(ft) {
                crate::errln!("lockstorm: warning: client {c}: clock fault not applied: {e}");
            }
        }
    }

    /// Hands an operation to a node lockstorm runs (check_faults refused the faults
    /// that need one on servers it does not run).
    fn node_op(&self, node: NodeId, op: NodeOp) {
        use crate::real::deployment::DeploymentOp;
        match &self.hosts[node] {
            Host::Managed(n) => n.send(op),
            // check_faults lets only crashes through to a deployment.
            Host::Deployment(s) => match op {
                NodeOp::Crash => s.send(DeploymentOp::Crash),
                NodeOp::Restart => s.send(DeploymentOp::Restart),
                _ => unreachable!("{op:?} on a Sentinel deployment is refused by check_faults"),
            },
            Host::External(_) => {}
        }
    }

    /// A Sentinel deployment's side of the partitions in force on node 0: the clients cut
    /// from it are cut from its master, which is then cut from the rest of the deployment
    /// too (docs/sentinel.md, Split brain).
    fn push_sentinel_partition(&self) {
        let Some(Host::Deployment(s)) = self.hosts.first() else {
            return;
        };
        let clients = self.scenario.clients.count;
        let cut: Vec<usize> = (0..clients)
            .filter(|&c| self.links.is_cut(self.links.link(c, 0), Direction::ToNode))
            .collect();
        s.send(crate::real::deployment::DeploymentOp::Partition {
            isolated: !cut.is_empty(),
            cut,
            clients,
        });
    }

    /// Tells the proxies of `nodes` what their links to `clients` now are.
    fn push_links(&self, clients: &[usize], nodes: &[NodeId]) {
        for &c in clients {
            for &n in nodes {
                let link = self.links.link(c, n);
                let (to_node, to_client) = (
                    self.links.is_cut(link, Direction::ToNode),
                    self.links.is_cut(link, Direction::ToClient),
                );
                let delay_us = self.links.extra_us(link);
                self.proxies[n].update(c, |s| {
                    s.cut_to_node = to_node;
                    s.cut_to_client = to_client;
                    s.delay_us = delay_us;
                });
            }
        }
    }
}
