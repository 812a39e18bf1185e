//! The deterministic simulator: the driver that runs a scenario in virtual time.
//!
//! A discrete-event loop pops events ordered by (virtual time, sequence number) and hands
//! them to simulated nodes ([`node`]), the network ([`network`]) and the sans-IO clients.
//! Every random choice comes from a stream split off the run seed, clocks are simulated
//! ([`clock`]), and nothing reads the wall clock or iterates a hash map, so the same seed
//! gives the same history, byte for byte.
//!
//! A run has three phases: the workload with its faults until `duration`; then the
//! faults heal (a `heal` event), clients finish what they were doing and stop; then one
//! client probes every lock, which the checker uses to judge liveness. A crash or
//! failover keeps its planned end past the heal, and the probe waits for it
//! ([`crate::lifecycle`]). How each fault
//! kind acts on nodes, clients, clocks and the network is in [`faults`].
//!
//! Clients holding a lock write to a guarded resource per lock (the storage of
//! Kleppmann's analysis), reached over its own link with the network's latency. With
//! fencing, the resource rejects a write whose fencing token is older than the last it
//! accepted; every write is recorded as a `write` event.

pub mod clock;
pub mod durability;
mod faults;
mod inspect;
pub mod network;
pub mod node;
mod queue;

use crate::aimer::Aimer;
use crate::algorithm::ReqId;
use crate::client::{build_clients, Action, Client, Record, RecordKind};
use crate::command::{Cmd, LockId, NodeId, Reply, Token};
use crate::fault::{PausePoint, PlannedFault, ProcessFaults};
use crate::history::{Event, LinkAction, LinkDir, LinkEvent, Meta, NodeEvent, OpKind};
use crate::lifecycle::{Lifecycle, RunOutput, RunStats};
use crate::resource::GuardedResource;
use crate::scenario::Scenario;
use crate::sink::Sink;
use clock::Clock;
pub use inspect::{run_inspected, Inspect};
use network::{Direction, Network};
use node::Node;
use queue::Queue;

#[derive(Clone, Copy)]
enum Ev {
    ToNode {
        client: usize,
        node: NodeId,
        req: ReqId,
        cmd: Cmd,
    },
    ToClient {
        client: usize,
        node: NodeId,
        req: ReqId,
        reply: Reply,
        /// The lock of the command it answers (for a `link` line, if a fault takes it).
        lock: LockId,
    },
    /// `generation` tells the latest wake of a client from stale ones.
    /// `at_mono_us` is the client-clock reading it is due at, to reschedule it if the
    /// client's clock rate changes.
    Wake {
        client: usize,
        generation: u64,
        at_mono_us: u64,
    },
    Timer {
        client: usize,
        id: u64,
        at_mono_us: u64,
    },
    /// A `WAIT` looks again at its node's replica.
    WaitDue(Waiting),
    FaultStart(usize),
    FaultEnd(usize),
    EndWorkload,
    /// The guarded resource's answer to a client's write.
    WriteAck {
        client: usize,
    },
    /// A write reaching the guarded resource of `lock`.
    ToResource {
        client: usize,
        lock: LockId,
        token: Token,
        fence: Option<u64>,
    },
}

/// A `WAIT` on `node`: answered once the replica has every write up to `since_us` (the
/// WAIT's arrival), or at `deadline_us` with what it has then.
#[derive(Clone, Copy)]
struct Waiting {
    client: usize,
    node: NodeId,
    req: ReqId,
    lock: LockId,
    replicas: u32,
    since_us: u64,
    deadline_us: u64,
}

struct World<'a> {
    scenario: &'a Scenario,
    queue: Queue<Ev>,
    nodes: Vec<Node>,
    clients: Vec<Client>,
    client_clocks: Vec<Clock>,
    wake_generation: Vec<u64>,
    net: Network,
    plan: Vec<PlannedFault>,
    active: Vec<bool>,
    /// Resolves the plan's aimed entries into faults as their triggers come.
    aimer: Aimer,
    /// What the active faults compose to per node and client (outages, pauses, rates).
    procs: ProcessFaults,
    /// A paused process's events, held back in arrival order until it resumes.
    client_paused: Vec<bool>,
    client_deferred: Vec<Vec<Ev>>,
    node_paused: Vec<bool>,
    node_deferred: Vec<Vec<Ev>>,
    /// Client pauses waiting for their point of the lock cycle: (fault index, point).
    armed: Vec<Vec<(usize, PausePoint)>>,
    /// What each client is doing, as its records tell: acquiring, holding, and the
    /// operation in progress (for `link` lines).
    acquiring: Vec<bool>,
    holding: Vec<bool>,
    op: Vec<Option<OpKind>>,
    /// Which messages a link fault acted on get a `link` line.
    link_lines: crate::fault::link_lines::LinkLines,
    /// What each holder believes about its hold, to re-derive when its clock changes.
    beliefs: Vec<Option<Held>>,
    /// Where every event of the history goes, as it happens.
    history: &'a mut dyn Sink,
    /// The lock and key names its events carry, each made once.
    names: crate::history::Names,
    /// Whether a fault of the plan can change a client clock's rate ([`World::push_clocked`]).
    client_rates: bool,
    /// Called at every history event, for tests that check the world against the history.
    inspect: Option<&'a mut dyn FnMut(&Inspect<'_>)>,
    lifecycle: Lifecycle,
    out: Vec<Action>,
    stats: RunStats,
    /// The storage the locks protect (shared with the other driver).
    resource: GuardedResource,
    resource_rng: crate::rng::Rng,
    /// lockstorm was asked to stop ([`crate::shutdown`]) and the run ended early.
    stopped: bool,
    /// The nodes' key events on their way to the history (kept for its capacity).
    key_events: Vec<node::KeyEvent>,
}

/// A holder's belief: its validity ends when its monotonic clock reads
/// `valid_until_mono_us`, which the history last said comes at true `valid_until_us`.
#[derive(Clone, Copy)]
struct Held {
    lock: LockId,
    token: Option<Token>,
    valid_until_mono_us: u64,
    valid_until_us: u64,
}

/// Runs `scenario` with `seed`.
pub fn run(scenario: &Scenario, seed: u64) -> RunOutput {
    run_with_progress(scenario, seed, &mut |_, _| {})
}

/// Runs `scenario` with `seed`, calling `progress(now_us, duration_us)` now and then;
/// the history is kept in memory.
pub fn run_with_progress(scenario: &Scenario, seed: u64, progress: &mut dyn FnMut(u64, u64)) -> RunOutput {
    let mut history = Vec::with_capacity(1024);
    let mut output = run_into(scenario, seed, &mut history, progress);
    output.history = history;
    output
}

/// Runs `scenario` with `seed`, pushing the history into `sink` as it is made (the
/// returned output's `history` is empty). A stop requested of lockstorm
/// ([`crate::shutdown::requested`]) ends the run early, with `stopped` set.
pub fn run_into(
    scenario: &Scenario,
    seed: u64,
    sink: &mut dyn Sink,
    progress: &mut dyn FnMut(u64, u64),
) -> RunOutput {
    run_world(scenario, seed, sink, progress, None)
}

fn run_world<'a>(
    scenario: &'a Scenario,
    seed: u64,
    sink: &'a mut dyn Sink,
    progress: &mut dyn FnMut(u64, u64),
    inspect: Option<&'a mut dyn FnMut(&Inspect<'_>)>,
) -> RunOutput {
    let mut plan = scenario.faults.clone();
    let nemesis = scenario.nemesis.plan(
        seed,
        scenario.duration_us,
        scenario.nodes,
        scenario.clients.count,
        plan.len(),
    );
    plan.extend(nemesis);

    let clients = build_clients(scenario, seed);
    let n_clients = clients.len();
    let mut world = World {
        scenario,
        queue: Queue::new(),
        nodes: scenario
            .persistence
            .iter()
            .map(|&p| Node::new(p, scenario.replication).with_events(scenario.node_events))
            .collect(),
        clients,
        client_clocks: vec![Clock::default(); n_clients],
        wake_generation: vec![0; n_clients],
        net: Network::new(
            scenario.network.latency,
            crate::rng::split(seed, "network", 0),
            crate::rng::split(seed, "loss", 0),
            n_clients,
            scenario.nodes,
        )
        .with_fifo(scenario.network.fifo),
        active: vec![false; plan.len()],
        // Any clock-rate entry, of a node or not: an aimed entry's targets are
        // placeholders until it fires.
        client_rates: plan
            .iter()
            .any(|f| matches!(f.fault, crate::fault::Fault::ClockRate { .. })),
        aimer: Aimer::new(&plan, scenario.nodes, scenario.clients.count),
        procs: ProcessFaults::new(scenario.nodes, n_clients),
        client_paused: vec![false; n_clients],
        client_deferred: vec![Vec::new(); n_clients],
        node_paused: vec![false; scenario.nodes],
        node_deferred: vec![Vec::new(); scenario.nodes],
        armed: vec![Vec::new(); n_clients],
        acquiring: vec![false; n_clients],
        holding: vec![false; n_clients],
        op: vec![None; n_clients],
        link_lines: crate::fault::link_lines::LinkLines::new(n_clients, scenario.nodes),
        beliefs: vec![None; n_clients],
        plan,
        history: sink,
        names: Default::default(),
        inspect,
        lifecycle: Lifecycle::new(scenario),
        out: Vec::with_capacity(64),
        stats: RunStats::default(),
        resource: GuardedResource::default(),
        resource_rng: crate::rng::split(seed, "resource", 0),
        stopped: false,
        key_events: Vec::new(),
    };
    world.emit(Event::Meta(Meta {
        t_us: 0,
        scenario: scenario.name.clone(),
        seed,
        algorithm: scenario.algorithm.kind.name().into(),
        nodes: scenario.nodes,
        clients: n_clients,
        ttl_ms: scenario.algorithm.ttl_ms,
        liveness_bound_us: scenario.algorithm.liveness_bound_us(scenario.nodes),
        writer_wait_bound_us: scenario.clients.writer_wait_bound_us,
        worker: None,
        probe_client: scenario.clients.probe_client(),
        cut: None,
        deployment: None,
        mitigations: None,
    }));
    world.lifecycle.planned(&world.plan);
    world.run(progress);
    world.aimer.close(&mut world.plan);
    RunOutput {
        worker_logs: None,
        node_logs: Vec::new(),
        history: Vec::new(),
        plan: world.plan,
        stats: world.stats,
        stopped: world.stopped,
    }
}

impl World<'_> {
    /// Records `event` in the history (and shows the world at it to an inspector).
    fn emit(&mut self, event: Event) {
        let Some(inspect) = self.inspect.as_mut() else {
            self.history.push(event);
            return;
        };
        let shown = event.clone();
        self.history.push(event);
        inspect(&Inspect {
            event: &shown,
            nodes: &self.nodes,
            node_paused: &self.node_paused,
            client_paused: &self.client_paused,
            client_clocks: &self.client_clocks,
        });
    }

    fn run(&mut self, progress: &mut dyn FnMut(u64, u64)) {
        let s = self.scenario;
        // Known in advance: kept out of the queue's heap (see `queue`), in the order
        // they were always queued, so ties with other events break the same way. Aimed
        // entries wait for their trigger instead.
        let planned = self
            .plan
            .iter()
            .enumerate()
            .filter(|(_, f)| f.aim.is_none())
            .map(|(i, f)| (f.at_us, Ev::FaultStart(i)));
        self.queue
            .push_planned(planned.chain([(s.duration_us, Ev::EndWorkload)]));
        for c in 0..self.clients.len() {
            let now = self.now(c, 0);
            self.clients[c].start(now, &mut self.out);
            self.apply(0, c);
        }
        // A hard stop so a run that never converges still ends.
        let limit_us = Lifecycle::hard_stop_us(s);

        while let Some((t, ev)) = self.queue.pop() {
            if t > limit_us || self.lifecycle.is_done() {
                break;
            }
            self.stats.events += 1;
            self.stats.end_us = t;
            if self.stats.events & 0xffff == 0 {
                progress(t.min(s.duration_us), s.duration_us);
                if crate::shutdown::requested().is_some() {
                    self.stopped = true;
                    break;
                }
            }
            self.step(t, ev);
        }
        progress(s.duration_us, s.duration_us);
    }

    fn now(&self, client: usize, t: u64) -> crate::algorithm::Now {
        let clock = &self.client_clocks[client];
        crate::algorithm::Now {
            mono_us: clock.mono(t),
            wall_us: clock.wall(t),
        }
    }

    /// A `WAIT` that arrived at `since_us`, looked at `t`: Redis answers as soon as the
    /// replica acknowledges every write before it (one replication lag after, on a
    /// link that is up), or at the deadline with the count it has. A node that is down
    /// answers nothing, like the broken connection it would be. A link that heals
    /// before the deadline is seen at the deadline, not when it heals: the count is the
    /// same, only later.
    fn wait(&mut self, t: u64, w: Waiting) {
        let reply = match self.nodes[w.node].acknowledged(t, w.since_us) {
            None => return,
            Some(n) if n >= w.replicas || t >= w.deadline_us => Reply::Int(i64::from(n)),
            Some(_) => {
                // One lag after its arrival, then at the deadline (a node without a
                // replica, or with a cut link, waits for the deadline).
                let lag_us = self.nodes[w.node].replication_lag_us().unwrap_or(0);
                let first = w.since_us + lag_us;
                let next = if t < first { first } else { w.deadline_us }.min(w.deadline_us);
                return self.queue.push(next.max(t), Ev::WaitDue(w));
            }
        };
        self.answer(t, w.client, w.node, w.req, reply, w.lock);
    }

    /// A node's reply leaves it at `t` for `client`, unless the link takes it.
    fn answer(&mut self, t: u64, client: usize, node: NodeId, req: ReqId, reply: Reply, lock: LockId) {
        if let Some(at) = self.sent(t, client, node, LinkDir::ToClient, lock) {
            self.queue.push(
                at,
                Ev::ToClient {
                    client,
                    node,
                    req,
                    reply,
                    lock,
                },
            );
        }
    }

    fn step(&mut self, t: u64, ev: Ev) {
        match ev {
            Ev::ToNode {
                client,
                node,
                req,
                cmd,
            } => {
                if self.net.is_cut(client, node, Direction::ToNode) {
                    self.link(
                        t,
                        client,
                        node,
                        LinkDir::ToNode,
                        LinkAction::Dropped,
                        None,
                        cmd.lock(),
                    );
                    return;
                }
                if self.node_paused[node] {
                    self.node_deferred[node].push(ev);
                    return;
                }
                self.stats.node_cmds += 1;
                if let Cmd::Wait {
                    lock,
                    replicas,
                    timeout_ms,
                } = cmd
                {
                    let w = Waiting {
                        client,
                        node,
                        req,
                        lock,
                        replicas,
                        since_us: t,
                        deadline_us: t + timeout_ms * 1_000,
                    };
                    return self.wait(t, w);
                }
                let reply = self.nodes[node].handle(t, cmd);
                if self.scenario.node_events {
                    self.node_events(t, node, Some(client));
                }
                let Some(reply) = reply else {
                    return;
                };
                self.answer(t, client, node, req, reply, cmd.lock());
            }
            Ev::ToClient {
                client,
                node,
                req,
                reply,
                lock,
            } => {
                if self.net.is_cut(client, node, Direction::ToClient) {
                    self.link(
                        t,
                        client,
                        node,
                        LinkDir::ToClient,
                        LinkAction::Dropped,
                        None,
                        lock,
                    );
                    return;
                }
                if self.acquiring[client] && !self.client_paused[client] {
                    self.aim_reply(t, client, node);
                }
                if self.acquiring[client] {
                    self.trigger_pause(t, client, PausePoint::BeforeValidityCheck);
                }
                if self.client_paused[client] {
                    self.client_deferred[client].push(ev);
                    return;
                }
                let now = self.now(client, t);
                self.clients[client].on_reply(now, req, reply, &mut self.out);
                self.apply(t, client);
            }
            Ev::Wake { client, .. } | Ev::Timer { client, .. } | Ev::WriteAck { client }
                if self.client_paused[client] =>
            {
                self.client_deferred[client].push(ev);
            }
            Ev::Wake {
                client, generation, ..
            } => {
                if generation == self.wake_generation[client] {
                    let now = self.now(client, t);
                    self.clients[client].on_wake(now, &mut self.out);
                    self.apply(t, client);
                }
            }
            Ev::Timer { client, id, .. } => {
                let now = self.now(client, t);
                self.clients[client].on_timer(now, id, &mut self.out);
                self.apply(t, client);
            }
            Ev::ToResource {
                client,
                lock,
                token,
                fence,
            } => self.resource_write(t, client, lock, token, fence),
            Ev::WriteAck { client } => {
                let now = self.now(client, t);
                self.clients[client].on_write_ack(now, &mut self.out);
                self.apply(t, client);
            }
            Ev::WaitDue(w) => {
                if self.node_paused[w.node] {
                    return self.node_deferred[w.node].push(ev);
                }
                self.wait(t, w);
            }
            Ev::FaultStart(i) => self.start_fault(t, i),
            Ev::FaultEnd(i) => {
                self.end_fault(t, i);
                if let Some(locks) = self.lifecycle.fault_ended(i) {
                    self.probe(t, &locks);
                }
            }
            // An early end (`heal_after_faults`) came first: the duration's is stale.
            Ev::EndWorkload if self.lifecycle.phase() != crate::lifecycle::RunPhase::Workload => {}
            Ev::EndWorkload => {
                // Outages with a planned end keep it (their `FaultEnd` is queued).
                for i in self.lifecycle.heal(&self.plan, &self.active) {
                    self.end_fault(t, i);
                }
                self.armed.iter_mut().for_each(Vec::clear);
                self.net.faults.clear();
                self.emit(Event::Heal { t_us: t });
                for c in 0..self.clients.len() {
                    self.clients[c].stop(&mut self.out);
                    self.apply(t, c);
                }
            }
        }
    }

    /// Writes what `node` did to its keys since the last call as `node` lines; `client`
    /// sent the command it was doing.
    fn node_events(&mut self, t: u64, node: NodeId, client: Option<usize>) {
        let mut events = std::mem::take(&mut self.key_events);
        self.nodes[node].take_events(&mut events);
        for e in events.drain(..) {
            let (lock, key) = (self.names.lock(e.key.lock), self.names.key(e.key));
            self.emit(Event::Node(NodeEvent {
                t_us: t,
                node,
                lock,
                key,
                action: e.action,
                client: client.filter(|_| e.by_request),
                token: e.token.map(crate::history::Token::hex),
                ttl_ms: e.ttl_ms,
                checked: e.checked,
                expired_at_us: e.expired_at_us,
                expire_at_node_us: e.expire_at_node_us,
                lag_us: e.lag_us,
                member: None,
            }));
        }
        self.key_events = events;
    }

    /// Sends a message about `lock` on the link between `client` and `node` at `t`: when
    /// it arrives, or `None` if a cut or a loss takes it. What a link fault did to it is
    /// written as a `link` line (the evidence of what the fault touched).
    fn sent(&mut self, t: u64, client: usize, node: NodeId, dir: LinkDir, lock: LockId) -> Option<u64> {
        let way = match dir {
            LinkDir::ToNode => Direction::ToNode,
            LinkDir::ToClient => Direction::ToClient,
        };
        let at = self.net.send(t, client, node, way);
        match at {
            None => self.link(t, client, node, dir, LinkAction::Dropped, None, lock),
            Some(_) => {
                let extra_us = self.net.extra_us(client, node);
                if extra_us > 0 {
                    self.link(t, client, node, dir, LinkAction::Delayed, Some(extra_us), lock);
                }
            }
        }
        at
    }

    /// A `link` line: a fault's cut, loss or delay acted on a message about `lock`.
    #[allow(clippy::too_many_arguments)]
    fn link(
        &mut self,
        t: u64,
        client: usize,
        node: NodeId,
        dir: LinkDir,
        action: LinkAction,
        by_us: Option<u64>,
        lock: LockId,
    ) {
        if !self.link_lines.first(client, node, dir, action) {
            return;
        }
        let lock = Some(self.names.lock(lock));
        let op = self.op[client];
        self.emit(Event::Link(LinkEvent {
            t_us: t,
            client,
            node,
            dir,
            action,
            by_us,
            lock,
            op,
        }));
    }

    /// Every node's key events (after a fault: a crash, a failover, a promotion).
    pub(super) fn all_node_events(&mut self, t: u64) {
        if self.scenario.node_events {
            for n in 0..self.nodes.len() {
                self.node_events(t, n, None);
            }
        }
    }

    /// The guarded resource applies or rejects a write.
    fn resource_write(&mut self, t: u64, client: usize, lock: LockId, token: Token, fence: Option<u64>) {
        let event = self
            .resource
            .write(&mut self.names, t, client, lock, token, fence);
        self.emit(event);
        let at = t + self.scenario.network.latency.sample(&mut self.resource_rng);
        self.queue.push(at, Ev::WriteAck { client });
    }

    /// Queues a client's timer or wake, due at a reading of its clock. When the plan can
    /// change a client clock's rate, it is queued for its client, so that the change
    /// moves only that client's ([`Queue::push_for`]); otherwise as any event, which
    /// costs the queue less.
    fn push_clocked(&mut self, at: u64, ev: Ev) {
        match ev {
            Ev::Timer { client, .. } | Ev::Wake { client, .. } if self.client_rates => {
                self.queue.push_for(at, client as u32, ev)
            }
            _ => self.queue.push(at, ev),
        }
    }

    /// Carries out the actions client `c` just asked for, at true time `t`.
    fn apply(&mut self, t: u64, c: usize) {
        let mut out = std::mem::take(&mut self.out);
        for action in out.drain(..) {
            match action {
                Action::Send { node, req, cmd } => {
                    if let Some(at) = self.sent(t, c, node, LinkDir::ToNode, cmd.lock()) {
                        self.queue.push(
                            at,
                            Ev::ToNode {
                                client: c,
                                node,
                                req,
                                cmd,
                            },
                        );
                    }
                }
                Action::Timer { id, at_mono_us } => {
                    let at = self.client_clocks[c].true_at_mono(at_mono_us).max(t);
                    self.push_clocked(
                        at,
                        Ev::Timer {
                            client: c,
                            id,
                            at_mono_us,
                        },
                    );
                }
                Action::Wake { at_mono_us } => {
                    let at = self.client_clocks[c].true_at_mono(at_mono_us).max(t);
                    self.wake_generation[c] += 1;
                    let generation = self.wake_generation[c];
                    self.push_clocked(
                        at,
                        Ev::Wake {
                            client: c,
                            generation,
                            at_mono_us,
                        },
                    );
                }
                Action::Write { lock, token, fence } => {
                    let at = t + self.scenario.network.latency.sample(&mut self.resource_rng);
                    self.queue.push(
                        at,
                        Ev::ToResource {
                            client: c,
                            lock,
                            token,
                            fence,
                        },
                    );
                }
                Action::Record(r) => self.record(t, c, r),
                Action::Idle => self.on_idle(t),
                // Worker clients run on the real backend only (refused at load).
                Action::Call(_) => {}
            }
        }
        self.out = out;
    }

    fn on_idle(&mut self, t: u64) {
        if let Some(locks) = self.lifecycle.client_idle() {
            self.probe(t, &locks);
        }
    }

    /// The liveness phase: client 0 probes `locks`.
    fn probe(&mut self, t: u64, locks: &[LockId]) {
        let now = self.now(0, t);
        self.clients[0].probe(now, locks, &mut self.out);
        self.apply(t, 0);
    }

    fn record(&mut self, t: u64, c: usize, r: Record) {
        if r.kind == RecordKind::Invoke {
            self.stats.lock_ops += 1;
        }
        let valid_until_us = r
            .valid_until_mono_us
            .map(|m| self.client_clocks[c].true_at_mono(m));
        self.op[c] = (r.kind == RecordKind::Invoke).then_some(r.op);
        if r.kind == RecordKind::Invoke {
            self.link_lines.operation(c);
        }
        match (r.kind, r.op) {
            (RecordKind::Invoke, OpKind::Acquire) => self.acquiring[c] = true,
            (RecordKind::Invoke, OpKind::Release) => {
                self.holding[c] = false;
                self.beliefs[c] = None;
            }
            (RecordKind::Ok, OpKind::Acquire) => {
                self.acquiring[c] = false;
                self.holding[c] = true;
            }
            (_, OpKind::Acquire) => self.acquiring[c] = false,
            _ => {}
        }
        if let (RecordKind::Ok, OpKind::Acquire | OpKind::Extend) = (r.kind, r.op) {
            self.beliefs[c] = r
                .valid_until_mono_us
                .zip(valid_until_us)
                .map(|(mono, until)| Held {
                    lock: r.lock,
                    token: r.token,
                    valid_until_mono_us: mono,
                    valid_until_us: until,
                });
        }
        let event = r.to_event(&mut self.names, t, c, valid_until_us);
        self.emit(event);
        // A pause at this point starts after the acquisition is on record.
        if (r.kind, r.op) == (RecordKind::Ok, OpKind::Acquire) {
            self.trigger_pause(t, c, PausePoint::AfterAcquire);
            self.trigger_pause(t, c, PausePoint::WhileHolding);
        }
        self.aim(t, c, &r);
    }
}

#[cfg(test)]
mod compose_tests;
#[cfg(test)]
mod heal_tests;
#[cfg(test)]
mod rw_tests;
#[cfg(test)]
mod tests;
