//! The real driver: runs a scenario's clients against real Redis nodes in real time.
//!
//! The counterpart of the simulator's event loop (`sim::World`): it carries out the same
//! [`Action`]s of the same sans-IO clients, but a `Send` becomes an async request on a
//! multiplexed redis-crate connection (one per client and node, through that node's
//! proxy), and wakes, timers and faults wait on tokio's clock. Every history time is
//! the lockstorm process's monotonic clock (microseconds since the run began), which is
//! also every client's clock. A request that gets no answer is simply never delivered:
//! the algorithm's own timeout then counts it as unknown, as in the simulator.
//!
//! Phases are the simulator's ([`crate::lifecycle`]): workload with faults until
//! `duration`, heal (every fault ends but a crash or failover with a planned end, which
//! keeps it), drain, then one client probes every lock for the liveness check once every
//! node is back.
//!
//! With `[clients] worker`, each client's lock operations go to its own worker process
//! ([`workers`]) instead of the built-in algorithm; the cycle, the nodes, the proxies
//! (the worker connects to its client's), the faults and the history stay lockstorm's.
//! Client pauses ([`pauses`]) hold a client's events back, and stop its worker.
//!
//! The driver wakes at least every 50 ms; a wake 100 ms or more late is a stall of the
//! driver itself (a blocked call, a starved thread), recorded as a `driver_stall` line,
//! so that a frozen driver is told from a frozen worker and the checker does not blame
//! the lock for the silence.

pub(crate) mod conn;
mod faults;
mod key_watch;
mod node_lines;
mod pauses;
mod workers;

use super::keyspace::News;
use super::node::load_scripts;
use super::proxy::{self, Proxy};
use super::runtime::{Host, Nodes};
use super::workdir::WorkDir;
use super::{wire, RealError};
use crate::aimer::Aimer;
use crate::algorithm::ReqId;
use crate::client::{build_clients, Action, Client, Record, RecordKind};
use crate::command::{Cmd, LockId, NodeId, Reply};
use crate::fault::{LinkFaults, PlannedFault, ProcessFaults};
use crate::history::{Event, Meta};
use crate::lifecycle::{Lifecycle, RunOutput, RunStats};
use crate::real::deployment::Entry;
use crate::resource::GuardedResource;
use crate::scenario::{Scenario, Targets};
use crate::sink::{JsonlFile, Sink, Tee};
use conn::{clear_locks, connection, request, Answer, Route, Slot};
use faults::{check_faults, needs_faketime, needs_worker_faketime};
use pauses::{ClientPauses, Held};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use workers::Workers;

/// The driver wakes at least this often, to notice its own stalls.
const HEARTBEAT_US: u64 = 50_000;

/// A timer this late (or later) is a stall of the driver, recorded in the history.
const STALL_US: u64 = 100_000;

/// Options of a real run that are not part of the scenario.
#[derive(Clone, Debug, Default)]
pub struct RealOptions {
    /// Keep the nodes' temporary directories (configs, logs, AOFs) and print where.
    pub keep: bool,
    /// Write the history here as the run goes (the file starts afresh with each seed),
    /// so a run that is stopped or killed leaves what it recorded. The simulator too
    /// writes its reported seed's history here, instead of keeping it in memory.
    pub history_path: Option<std::path::PathBuf>,
}

enum Ev {
    Wake {
        client: usize,
        generation: u64,
    },
    /// The guarded resource answered a client's write.
    WriteAck {
        client: usize,
    },
    Timer {
        client: usize,
        id: u64,
    },
    FaultStart(usize),
    FaultEnd(usize),
    EndWorkload,
    /// Client `client`'s worker request `id` may be out of time.
    WorkerDeadline {
        client: usize,
        id: u64,
    },
    /// Client `client`'s worker request `id` is still open: has its process exited (a
    /// process it started may keep its stdout open, so no end of file says so)?
    WorkerAlive {
        client: usize,
        id: u64,
    },
}

/// Runs `scenario` with `seed` against real Redis. Nodes are started (or reached), the
/// workload runs in real time, and every node lockstorm started is killed before this
/// returns, whatever happens. The history goes to `options.history_path` as it is made,
/// if set, and is returned too. A stop requested of lockstorm
/// ([`crate::shutdown::requested`]) ends the run early, with `stopped` set.
///
/// The nodes' temporary directory is removed at the end unless `options.keep`, or unless
/// the error names a node's log in it, which is then kept for the user to read.
pub fn run(scenario: &Scenario, seed: u64, options: &RealOptions) -> Result<RunOutput, RealError> {
    let mut plan = scenario.faults.clone();
    let nemesis = scenario.nemesis.plan(
        seed,
        scenario.duration_us,
        scenario.nodes,
        scenario.clients.count,
        plan.len(),
    );
    plan.extend(nemesis);
    let external = matches!(scenario.targets, Targets::External(_));
    check_faults(scenario, &plan, external)?;
    if !scenario.network.fifo {
        return Err(RealError::SimOnly(
            "network.fifo = false (a real client keeps one ordered connection per node)".into(),
        ));
    }

    let dir = WorkDir::create("lockstorm-", options.keep)?;
    let result = run_in(scenario, seed, plan, dir.path(), options);
    dir.close(&result);
    result
}

/// Starts the nodes in `dir`, runs, and stops them again before returning.
fn run_in(
    scenario: &Scenario,
    seed: u64,
    plan: Vec<PlannedFault>,
    dir: &std::path::Path,
    options: &RealOptions,
) -> Result<RunOutput, RealError> {
    let file = match &options.history_path {
        Some(path) => Some(
            JsonlFile::create(path).map_err(|e| RealError::Io(format!("create {}", path.display()), e))?,
        ),
        None => None,
    };
    let mut sink = Tee(Vec::with_capacity(1024), file);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RealError::Io("start the tokio runtime".into(), e))?;
    // Nodes start on this thread (the runtime's), which lives as long as they do.
    let result = runtime.block_on(async {
        // What the nodes lockstorm runs show of their keys by themselves (expiry, loss).
        let (news_tx, news_rx) = mpsc::unbounded_channel();
        let news_tx = scenario.node_events.then_some(news_tx);
        let nodes = match &scenario.targets {
            Targets::External(addrs) => Nodes::external(addrs),
            Targets::Local => Nodes::start(scenario, needs_faketime(&plan), dir, news_tx).await?,
        };
        let result = drive(scenario, seed, plan, &nodes.hosts, dir, news_rx, &mut sink).await;
        nodes.shutdown().await;
        result
    });
    // The servers are gone: their logs are whole (none for nodes lockstorm did not start).
    let node_logs = super::workdir::node_logs(dir);
    drop(runtime);
    let Tee(history, file) = sink;
    if let Some(file) = file {
        let path = file.path().to_path_buf();
        file.finish()
            .map_err(|e| RealError::Io(format!("write {}", path.display()), e))?;
    }
    match result {
        Ok(output) => Ok(RunOutput {
            history,
            node_logs,
            ..output
        }),
        Err(RealError::WorkerFailed(mut failure)) => {
            failure.output.history = history;
            failure.output.node_logs = node_logs;
            Err(RealError::WorkerFailed(failure))
        }
        Err(e) => Err(e),
    }
}

async fn drive(
    scenario: &Scenario,
    seed: u64,
    plan: Vec<PlannedFault>,
    hosts: &[Host],
    tmp: &std::path::Path,
    news: mpsc::UnboundedReceiver<News>,
    sink: &mut dyn Sink,
) -> Result<RunOutput, RealError> {
    let n_clients = scenario.clients.total();
    // What the faults do to the bytes on each link, from the proxies: `link` lines.
    let (notes_tx, notes_rx) = mpsc::unbounded_channel();
    let replies_wanted = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut proxies = Vec::with_capacity(hosts.len());
    for (i, h) in hosts.iter().enumerate() {
        let (upstream, serving) = match h {
            Host::Managed(n) => (n.upstream(), n.serving()),
            // Built-in clients reach a deployment's master through the sentinels
            // (`Route::Sentinel`), not through this proxy: it only fills node 0's place;
            // the deployment's own relays report the cuts (below).
            Host::Deployment(s) => (proxy::fixed(s.first_master), tokio::sync::watch::channel(true).1),
            Host::External(addr) => {
                load_scripts(i, *addr).await?;
                // The probe's lock comes after the workload's.
                let locks = scenario.clients.locks + u32::from(scenario.clients.probe.is_some());
                clear_locks(i, *addr, locks).await?;
                (proxy::fixed(*addr), tokio::sync::watch::channel(true).1)
            }
        };
        let notes = proxy::Notes {
            node: i,
            tx: notes_tx.clone(),
            replies: replies_wanted.clone(),
            sends: scenario.clients.worker.is_some(),
        };
        if let Host::Deployment(s) = h {
            // The deployment's relays carry the clients' bytes: they say what cuts did.
            s.note_links(notes.clone());
        }
        let proxy = Proxy::start_gated(upstream, serving, n_clients, Some(notes))
            .await
            .map_err(|e| RealError::Io(format!("start the proxy for node {i}"), e))?;
        proxies.push(proxy);
    }
    let slots: Vec<Vec<Slot>> = (0..n_clients)
        .map(|_| (0..hosts.len()).map(|_| Slot::default()).collect())
        .collect();
    let (worker_tx, mut worker_rx) = mpsc::unbounded_channel();
    let workers = match &scenario.clients.worker {
        Some(spec) => {
            let faketime = needs_worker_faketime(&plan).then(|| tmp.join("workers"));
            let sentinel = hosts.iter().find_map(|h| match h {
                Host::Deployment(s) => Some(s),
                _ => None,
            });
            Some(
                Workers::start(
                    scenario,
                    seed,
                    spec,
                    &proxies,
                    sentinel,
                    tmp,
                    faketime.as_deref(),
                    worker_tx,
                    &mut worker_rx,
                )
                .await?,
            )
        }
        None => None,
    };
    // Connect every link before the clock starts, so first requests do not pay for it.
    // Workers connect by themselves.
    let connect_timeout = Duration::from_secs(5);
    for (c, row) in slots.iter().enumerate().filter(|_| workers.is_none()) {
        for (n, slot) in row.iter().enumerate() {
            if connection(slot, &route(&hosts[n], &proxies[n], c), connect_timeout)
                .await
                .is_none()
            {
                return Err(RealError::Node {
                    node: n,
                    addr: hosts[n].addr().to_string(),
                    message: "cannot connect through the proxy".into(),
                });
            }
        }
    }
    let (tx, rx) = mpsc::unbounded_channel();
    let mut d = Driver {
        scenario,
        hosts,
        proxies,
        slots,
        links: LinkFaults::new(n_clients, hosts.len()),
        procs: ProcessFaults::new(hosts.len(), n_clients),
        wall_offset_us: vec![0; n_clients],
        wall_base_us: 0,
        clients: build_clients(scenario, seed),
        wake_generation: vec![0; n_clients],
        timers: BTreeMap::new(),
        seq: 0,
        active: vec![false; plan.len()],
        aimer: Aimer::new(&plan, hosts.len(), scenario.clients.count),
        plan,
        history: sink,
        names: Default::default(),
        lifecycle: Lifecycle::new(scenario),
        out: Vec::with_capacity(64),
        stats: RunStats::default(),
        start: Instant::now(),
        tx,
        resource: GuardedResource::default(),
        request_lifetime: request_lifetime(&scenario.algorithm),
        workers,
        pauses: ClientPauses::new(n_clients),
        failure: None,
        key_watch: key_watch::KeyWatch::new(scenario.clients.worker.is_some()),
        doing: vec![Doing::default(); n_clients],
        link_lines: crate::fault::link_lines::LinkLines::new(n_clients, hosts.len()),
        replies_wanted,
    };
    // A worker's answers are seen only through its proxies, which say so only while an
    // aimed entry waits for them.
    d.replies_wanted.store(
        d.workers.is_some() && d.aimer.wants_replies(),
        std::sync::atomic::Ordering::Relaxed,
    );
    d.history.push(Event::Meta(Meta {
        t_us: 0,
        scenario: scenario.name.clone(),
        seed,
        algorithm: scenario.algorithm.kind.name().into(),
        nodes: scenario.nodes,
        clients: n_clients,
        ttl_ms: scenario.algorithm.ttl_ms,
        liveness_bound_us: scenario.algorithm.liveness_bound_us(scenario.nodes),
        writer_wait_bound_us: scenario.clients.writer_wait_bound_us,
        worker: d.workers.as_ref().map(Workers::meta),
        probe_client: scenario.clients.probe_client(),
        cut: None,
        deployment: scenario.deployment().map(|s| match s {
            crate::real::deployment::Shape::Sentinel(_) => crate::history::Deploy::Sentinel,
            crate::real::deployment::Shape::Cluster(_) => crate::history::Deploy::Cluster,
        }),
        mitigations: scenario.mitigations(),
    }));
    d.lifecycle.planned(&d.plan);
    let sentinel = hosts.iter().find_map(|h| match h {
        Host::Deployment(s) => s.take_events(),
        _ => None,
    });
    let stopped = d.run(rx, worker_rx, news, notes_rx, sentinel).await;
    d.aimer.close(&mut d.plan);
    let worker_logs = d.workers.take().map(|mut w| {
        w.shutdown();
        w.logs
    });
    let output = RunOutput {
        history: Vec::new(),
        plan: d.plan,
        stats: d.stats,
        worker_logs,
        node_logs: Vec::new(),
        stopped,
    };
    match d.failure {
        Some(message) => Err(RealError::WorkerFailed(Box::new(super::WorkerFailure {
            message,
            output,
        }))),
        None => Ok(output),
    }
}

/// A sentinel's event as a history line.
fn sentinel_line(t_us: u64, e: &crate::real::deployment::SentinelEvent) -> crate::history::SentinelLine {
    use crate::real::deployment::{EventKind, Instance, Role};
    let name = |i: &Instance| i.member.map_or_else(|| i.addr.to_string(), |m| m.to_string());
    // A cluster node's own view, in the cluster's words (its `CLUSTER NODES` flags).
    let cluster = matches!(e.sentinel, crate::real::deployment::Member::Data(_));
    let event = match &e.kind {
        EventKind::Sdown if cluster => "+pfail".to_string(),
        EventKind::SdownEnd if cluster => "-pfail".into(),
        EventKind::Odown if cluster => "+fail".into(),
        EventKind::OdownEnd if cluster => "-fail".into(),
        EventKind::SwitchMaster { .. } if cluster => "+promoted".into(),
        EventKind::ConvertToSlave if cluster => "+demoted".into(),
        EventKind::Sdown => "+sdown".to_string(),
        EventKind::SdownEnd => "-sdown".into(),
        EventKind::Odown => "+odown".into(),
        EventKind::OdownEnd => "-odown".into(),
        EventKind::TryFailover => "+try-failover".into(),
        EventKind::ElectedLeader => "+elected-leader".into(),
        EventKind::FailoverState(s) => format!("+failover-state-{s}"),
        EventKind::FailoverAbort(s) => format!("-failover-abort-{s}"),
        EventKind::SwitchMaster { .. } => "+switch-master".into(),
        EventKind::FailoverEnd => "+failover-end".into(),
        EventKind::ConvertToSlave => "+convert-to-slave".into(),
        EventKind::Slave => "+slave".into(),
        EventKind::ClusterState { ok: false } => "+state-fail".into(),
        EventKind::ClusterState { ok: true } => "-state-fail".into(),
    };
    crate::history::SentinelLine {
        t_us,
        sentinel: e.sentinel.to_string(),
        event,
        instance: name(&e.instance),
        role: match e.instance.role {
            Role::Master => "master",
            Role::Replica => "replica",
            Role::Sentinel => "sentinel",
        }
        .into(),
        from: match &e.kind {
            EventKind::SwitchMaster { from } => Some(name(from)),
            _ => None,
        },
    }
}

/// Where client `c` sends node `n`'s requests: through the node's proxy, or for a
/// deployment to the master its sentinels name or that serves the lock's slot.
fn route(host: &Host, proxy: &Proxy, c: usize) -> Route {
    match host {
        Host::Deployment(s) => match &s.entry {
            Entry::Sentinel { sentinels, name } => Route::Sentinel {
                sentinels: sentinels.clone().into(),
                name: name.as_str().into(),
                source: s.client_ip(c),
            },
            Entry::Cluster { seeds, slot } => Route::Cluster {
                seeds: seeds.clone().into(),
                slot: *slot,
                source: s.client_ip(c),
            },
        },
        _ => Route::Direct(proxy.addr(c)),
    }
}

struct Driver<'a> {
    scenario: &'a Scenario,
    hosts: &'a [Host],
    proxies: Vec<Proxy>,
    slots: Vec<Vec<Slot>>,
    /// The partitions and delays in force per link (they may overlap); pushed to the
    /// proxies after every change.
    links: LinkFaults,
    /// The crashes, pauses and clock rates in force per node (they may overlap).
    procs: ProcessFaults,
    /// Per client: how far its wall clock is off (client clock jumps).
    wall_offset_us: Vec<i64>,
    /// Unix time at the start of the run: clients send wall-clock timestamps (the
    /// read-write scripts take `now` from the client), and a real client's are epoch
    /// times. Read once; it never reaches the history, whose times are monotonic.
    wall_base_us: u64,
    clients: Vec<Client>,
    wake_generation: Vec<u64>,
    timers: BTreeMap<(u64, u64), Ev>,
    seq: u64,
    plan: Vec<PlannedFault>,
    active: Vec<bool>,
    /// Resolves the plan's aimed entries into faults as their triggers come.
    aimer: Aimer,
    /// Where every event of the history goes, as it happens.
    history: &'a mut dyn Sink,
    /// The lock and key names its events carry, each made once.
    names: crate::history::Names,
    lifecycle: Lifecycle,
    out: Vec<Action>,
    stats: RunStats,
    start: Instant,
    tx: mpsc::UnboundedSender<Answer>,
    /// How long an unanswered request is kept before it is dropped.
    request_lifetime: Duration,
    /// The storage the locks protect (shared with the other driver).
    resource: GuardedResource,
    /// One worker process per client, when the scenario's clients are workers.
    workers: Option<Workers>,
    pauses: ClientPauses,
    /// Why the run stopped early: a worker broke the protocol, or a node could not be
    /// restarted (its environment, not the lock).
    failure: Option<String>,
    /// Turns the nodes' own news into `node` lines.
    key_watch: key_watch::KeyWatch,
    /// What each client is doing, for the `link` lines of its bytes.
    doing: Vec<Doing>,
    /// Which of the proxies' notes get a `link` line.
    link_lines: crate::fault::link_lines::LinkLines,
    /// Whether the proxies say when a node's bytes reach a client (the aimer waits for
    /// an acquisition's answers).
    replies_wanted: Arc<std::sync::atomic::AtomicBool>,
}

/// A client's operation in progress (or, once it is over, the last one: a built-in
/// client's release goes out after its `ok`, and a worker's library may still be
/// talking about it) and the lock it holds, as its records tell.
#[derive(Clone, Copy, Default)]
struct Doing {
    op: Option<(crate::history::OpKind, LockId)>,
    last: Option<(crate::history::OpKind, LockId)>,
    held: Option<LockId>,
}

impl Driver<'_> {
    fn now_us(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    /// Client `c`'s clock at driver time `t`: monotonic is the driver's clock; wall is
    /// Unix time, moved by the client's clock jumps.
    fn now(&self, c: usize, t: u64) -> crate::algorithm::Now {
        crate::algorithm::Now {
            mono_us: t,
            wall_us: (self.wall_base_us + t).saturating_add_signed(self.wall_offset_us[c]),
        }
    }

    fn schedule(&mut self, at_us: u64, ev: Ev) {
        self.seq += 1;
        self.timers.insert((at_us, self.seq), ev);
    }

    /// Runs until the lifecycle is done or the hard stop; returns whether it ended early
    /// because lockstorm was asked to stop.
    async fn run(
        &mut self,
        mut rx: mpsc::UnboundedReceiver<Answer>,
        mut worker_rx: mpsc::UnboundedReceiver<crate::worker::process::WorkerEvent>,
        mut news: mpsc::UnboundedReceiver<News>,
        mut notes: mpsc::UnboundedReceiver<proxy::LinkNote>,
        mut sentinel: Option<mpsc::UnboundedReceiver<crate::real::deployment::SentinelEvent>>,
    ) -> bool {
        let stop = Arc::new(tokio::sync::Notify::new());
        let _wake = {
            let stop = stop.clone();
            crate::shutdown::on_stop(move || stop.notify_one())
        };
        let s = self.scenario;
        // Aimed entries wait for their trigger instead.
        for i in 0..self.plan.len() {
            if self.plan[i].aim.is_none() {
                self.schedule(self.plan[i].at_us, Ev::FaultStart(i));
            }
        }
        self.schedule(s.duration_us, Ev::EndWorkload);
        self.start = Instant::now();
        self.wall_base_us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        for c in 0..self.clients.len() {
            let now = self.now(c, 0);
            self.clients[c].start(now, &mut self.out);
            self.apply(0, c);
        }

        let limit_us = Lifecycle::hard_stop_us(s);
        let mut heartbeat_us = HEARTBEAT_US;

        while !self.lifecycle.is_done() {
            let next_us = self
                .timers
                .keys()
                .next()
                .map_or(limit_us, |k| k.0)
                .min(limit_us)
                .min(heartbeat_us);
            let deadline = tokio::time::Instant::from_std(self.start + Duration::from_micros(next_us));
            tokio::select! {
                biased;
                // Nothing more is recorded: the nodes are killed as they are, and the
                // history ends with what was open at the stop.
                () = stop.notified() => return true,
                // Before the replies: a node that came back reports what it kept before
                // any client can reach it, so its `lost` lines precede what clients did
                // on it afterwards.
                Some(n) = news.recv() => {
                    let t = self.now_us();
                    let mut lines = Vec::new();
                    self.key_watch.news(t, n, &mut lines);
                    for line in lines {
                        self.history.push(Event::Node(line));
                    }
                }
                // Before the news: a switch's `unreplicated` lines follow its line.
                Some(e) = async {
                    match sentinel.as_mut() {
                        Some(r) => r.recv().await,
                        None => std::future::pending().await,
                    }
                } => {
                    let t = self.now_us();
                    self.history.push(Event::Sentinel(sentinel_line(t, &e)));
                }
                Some(note) = notes.recv() => {
                    let t = self.now_us();
                    self.link(t, note);
                }
                Some(r) = rx.recv() => {
                    let t = self.now_us();
                    self.stats.events += 1;
                    // The node applied it whether or not the client is paused.
                    if let Some((node, cmd)) = r.sent.filter(|_| self.scenario.node_events) {
                        if let Some(mut line) = node_lines::node_line(&mut self.names, t, r.client, node, cmd, r.reply) {
                            // Which master of a Sentinel deployment it was.
                            if let (Host::Deployment(s), Some(a)) = (&self.hosts[node], r.served_by) {
                                line.member = s.data_node_at(a).map(str::to_string);
                            }
                            self.history.push(Event::Node(line));
                        }
                    }
                    self.on_reply(t, r);
                }
                Some(ev) = worker_rx.recv() => {
                    let t = self.now_us();
                    self.stats.events += 1;
                    if let Some(Held::Worker(ev, _)) = self.hold_back(ev.client, Held::Worker(ev, t)) {
                        self.on_worker(t, ev, t);
                    }
                }
                _ = tokio::time::sleep_until(deadline) => {
                    let t = self.now_us();
                    self.lag(t, next_us);
                    if t >= heartbeat_us {
                        heartbeat_us = t + HEARTBEAT_US;
                    }
                    while let Some(entry) = self.timers.first_entry() {
                        if entry.key().0 > t {
                            break;
                        }
                        let ev = entry.remove();
                        self.stats.events += 1;
                        self.step(t, ev);
                    }
                }
            }
            let t = self.now_us();
            self.stats.end_us = t;
            if self.failure.is_none() {
                self.failure = self.hosts.iter().find_map(|h| match h {
                    Host::Managed(n) => n.broken(),
                    _ => None,
                });
            }
            if t > limit_us || self.failure.is_some() {
                break;
            }
        }
        // Whatever was still faulty at a hard stop is healed before the nodes go away.
        self.heal(self.now_us(), 0..self.plan.len());
        false
    }

    /// A timer due at `due_us` fired at `t`: a lag of [`STALL_US`] or more means the
    /// driver itself did not run in between (a blocked call, a starved thread), which
    /// the history records so that nobody's silence then is blamed on the lock.
    fn lag(&mut self, t: u64, due_us: u64) {
        let lag_us = t.saturating_sub(due_us);
        if lag_us < STALL_US {
            return;
        }
        crate::errln!(
            "lockstorm: warning: the driver stalled for {} ms until {:.3} s (recorded as driver_stall)",
            lag_us / 1_000,
            t as f64 / 1e6
        );
        self.history.push(Event::DriverStall(crate::history::DriverStall {
            t_us: t,
            lag_us,
        }));
    }

    /// What a fault did to a client's bytes, as its node's proxy saw it: a `link` line,
    /// about the client's operation in progress (or the lock it holds).
    fn link(&mut self, t: u64, note: proxy::LinkNote) {
        use crate::history::{LinkAction, LinkEvent};
        use proxy::Noted;
        let Some(doing) = self.doing.get(note.client).copied() else {
            return;
        };
        let (action, by) = match note.what {
            Noted::Answered { go } => {
                // A worker's answer from a node, before its library reads it: only the
                // aimer wants it. The proxy forwards it once a fault it fires is in force.
                if self.workers.is_some() && self.doing[note.client].op.is_some() {
                    self.aim_reply(t, note.client, note.node);
                }
                let _ = go.send(());
                return;
            }
            Noted::Sent { at } => {
                let t = at.saturating_duration_since(self.start).as_micros() as u64;
                if let Some(w) = &mut self.workers {
                    w.sent(note.client, note.node, t);
                }
                return;
            }
            Noted::Held => (LinkAction::Held, None),
            Noted::Released { held } => (LinkAction::Released, Some(held)),
            Noted::Dropped { held } => (LinkAction::Dropped, Some(held)),
            Noted::Delayed { by } => (LinkAction::Delayed, Some(by)),
        };
        if !self.link_lines.first(note.client, note.node, note.dir, action) {
            return;
        }
        let op = doing.op.or(doing.last);
        let lock = op.map(|(_, l)| l).or(doing.held);
        self.history.push(Event::Link(LinkEvent {
            t_us: t,
            client: note.client,
            node: note.node,
            dir: note.dir,
            action,
            by_us: by.map(|d| d.as_micros() as u64),
            lock: lock.map(|l| self.names.lock(l)),
            op: op.map(|(op, _)| op),
        }));
    }

    /// A node's reply to a client (held back while the client is paused).
    fn on_reply(&mut self, t: u64, r: Answer) {
        if let Some((node, _)) = r.sent.filter(|_| self.pauses.is_acquiring(r.client)) {
            if !self.pauses.is_paused(r.client) {
                self.aim_reply(t, r.client, node);
            }
        }
        if self.pauses.is_acquiring(r.client) {
            self.trigger_pause(t, r.client, crate::fault::PausePoint::BeforeValidityCheck);
        }
        if let Some(Held::Reply(r)) = self.hold_back(r.client, Held::Reply(r)) {
            let now = self.now(r.client, t);
            self.clients[r.client].on_reply(now, r.req, r.reply, &mut self.out);
            self.apply(t, r.client);
        }
    }

    fn step(&mut self, t: u64, ev: Ev) {
        let ev = match ev {
            Ev::Wake { client, .. } | Ev::Timer { client, .. } | Ev::WriteAck { client } => {
                match self.hold_back(client, Held::Ev(ev)) {
                    Some(Held::Ev(ev)) => ev,
                    _ => return,
                }
            }
            ev => ev,
        };
        match ev {
            Ev::Wake { client, generation } => {
                if generation == self.wake_generation[client] {
                    let now = self.now(client, t);
                    self.clients[client].on_wake(now, &mut self.out);
                    self.apply(t, client);
                }
            }
            Ev::WriteAck { client } => {
                let now = self.now(client, t);
                self.clients[client].on_write_ack(now, &mut self.out);
                self.apply(t, client);
            }
            Ev::Timer { client, id } => {
                let now = self.now(client, t);
                self.clients[client].on_timer(now, id, &mut self.out);
                self.apply(t, client);
            }
            Ev::WorkerDeadline { client, id } => self.deadline(t, client, id),
            Ev::WorkerAlive { client, id } => self.alive(t, client, id),
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
                // Outages with a planned end keep it (their `FaultEnd` is scheduled).
                let now = self.lifecycle.heal(&self.plan, &self.active);
                self.heal(t, now);
                self.history.push(Event::Heal { t_us: t });
                for c in 0..self.clients.len() {
                    self.clients[c].stop(&mut self.out);
                    self.apply(t, c);
                }
            }
        }
    }

    fn send(&mut self, client: usize, node: NodeId, req: ReqId, cmd: Cmd) {
        self.stats.node_cmds += 1;
        let slot = self.slots[client][node].clone();
        let route = route(&self.hosts[node], &self.proxies[node], client);
        let reply = Answer {
            client,
            req,
            reply: Reply::Error,
            sent: Some((node, cmd)),
            served_by: None,
        };
        tokio::spawn(request(
            slot,
            route,
            wire::to_redis(&cmd),
            self.request_lifetime,
            self.tx.clone(),
            reply,
        ));
    }

    /// Carries out the actions client `c` just asked for, at time `t`.
    fn apply(&mut self, t: u64, c: usize) {
        let mut out = std::mem::take(&mut self.out);
        for action in out.drain(..) {
            match action {
                Action::Send { node, req, cmd } => self.send(c, node, req, cmd),
                Action::Timer { id, at_mono_us } => {
                    self.schedule(at_mono_us.max(t), Ev::Timer { client: c, id })
                }
                Action::Wake { at_mono_us } => {
                    self.wake_generation[c] += 1;
                    let generation = self.wake_generation[c];
                    self.schedule(
                        at_mono_us.max(t),
                        Ev::Wake {
                            client: c,
                            generation,
                        },
                    );
                }
                Action::Write { lock, token, fence } => self.resource_write(t, c, lock, token, fence),
                Action::Record(r) => self.record(t, c, r),
                Action::Idle => self.on_idle(t),
                Action::Call(request) => self.call(t, c, request),
            }
        }
        self.out = out;
    }

    /// The guarded resource (Kleppmann's storage service), in process: it accepts a
    /// write unless its fencing token is below the highest it has seen for that lock.
    fn resource_write(
        &mut self,
        t: u64,
        client: usize,
        lock: LockId,
        token: crate::command::Token,
        fence: Option<u64>,
    ) {
        self.history.push(
            self.resource
                .write(&mut self.names, t, client, lock, token, fence),
        );
        self.schedule(t, Ev::WriteAck { client });
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
        {
            use crate::history::OpKind;
            let doing = &mut self.doing[c];
            doing.op = (r.kind == RecordKind::Invoke).then_some((r.op, r.lock));
            if r.kind == RecordKind::Invoke {
                doing.last = doing.op;
                self.link_lines.operation(c);
            }
            match (r.kind, r.op) {
                (RecordKind::Ok, OpKind::Acquire) => doing.held = Some(r.lock),
                (RecordKind::Invoke, OpKind::Release) => doing.held = None,
                _ => {}
            }
        }
        let mut event = r.to_event(&mut self.names, t, c, r.valid_until_mono_us);
        self.worker_token(&mut event);
        self.history.push(event);
        self.pauses.on_record(c, &r);
        // A pause at this point starts after the acquisition is on record.
        if (r.kind, r.op) == (RecordKind::Ok, crate::history::OpKind::Acquire) {
            self.trigger_pause(t, c, crate::fault::PausePoint::AfterAcquire);
            self.trigger_pause(t, c, crate::fault::PausePoint::WhileHolding);
        }
        self.aim(t, c, &r);
    }
}

/// How long a request may wait for its connection and reply before it is abandoned:
/// well past the algorithm's own timeout (which already counted it as unknown), and
/// past a WAIT's server-side timeout.
fn request_lifetime(algorithm: &crate::algorithm::AlgorithmConfig) -> Duration {
    let us = algorithm.request_timeout_us.saturating_mul(20);
    let wait_us = algorithm
        .wait
        .map_or(0, |w| w.round_timeout_us(algorithm.request_timeout_us));
    Duration::from_micros(us.max(wait_us)).max(Duration::from_secs(1))
}
