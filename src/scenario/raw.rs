//! The scenario file as serde reads it: every table rejects unknown keys, every field
//! has a default, and [`RawScenario::resolve`] checks values against each other.

use super::faults::{resolve_faults, RawFault, RawNemesis};
use super::{invalid, Backend, Clients, Dur, Expect, Invalid, Network, RawDist, Scenario, Targets};
use crate::algorithm::{
    AlgorithmConfig, AlgorithmKind, Extend, Fanout, Mistakes, Release, TokenScope, WaitAfterSet,
};
use crate::fault::{Nemesis, Persistence, Replication};
use crate::limits::{MAX_CLIENTS, MAX_LOCKS, MAX_NODES, MAX_PLANNED_FAULTS};
use serde::Deserialize;
use serde_untagged::UntaggedEnumVisitor;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    name: Option<String>,
    #[serde(default = "default_seed")]
    seed: u64,
    #[serde(default = "default_duration")]
    duration: Dur,
    #[serde(default = "default_expect")]
    expect: Expect,
    #[serde(default = "yes")]
    expect_live: bool,
    expect_resource: Option<Expect>,
    min_availability: Option<f64>,
    #[serde(default = "default_min_exercised")]
    min_exercised: f64,
    /// A node count, or the addresses of real servers someone else runs.
    #[serde(default = "default_nodes")]
    nodes: RawNodes,
    /// One persistence for every node, or one per node.
    #[serde(default)]
    persistence: RawPersistence,
    replication: Option<RawReplication>,
    /// A Redis Sentinel deployment instead of the plain node (real backend, one node).
    sentinel: Option<super::sentinel::RawSentinel>,
    /// A Redis Cluster instead of the plain node (real backend, one node).
    cluster: Option<super::cluster::RawCluster>,
    #[serde(default)]
    algorithm: RawAlgorithm,
    #[serde(default)]
    clients: RawClients,
    #[serde(default)]
    network: RawNetwork,
    #[serde(default)]
    faults: Vec<RawFault>,
    #[serde(default)]
    nemesis: RawNemesis,
    #[serde(default)]
    backend: Backend,
    /// Whether the simulator writes the nodes' `node` lines into the history.
    #[serde(default = "yes")]
    node_events: bool,
    /// End the workload this long after the last fault is over, before the duration.
    heal_after_faults: Option<Dur>,
    /// What the library matrix does with this file when it is a catalogue template.
    #[serde(default)]
    matrix: RawMatrix,
}

/// `[matrix]`: the settings a catalogue cell runs its fault over (`lockstorm matrix`;
/// a plain run ignores them).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMatrix {
    #[serde(default)]
    grid: Vec<RawGridSetting>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGridSetting {
    name: String,
    #[serde(default)]
    set: Vec<String>,
}

#[derive(Debug)]
enum RawNodes {
    Count(i64),
    Addrs(Vec<String>),
}

/// Written by hand (with `serde_untagged`) so a wrong type says what is expected.
impl<'de> Deserialize<'de> for RawNodes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        UntaggedEnumVisitor::new()
            .expecting("a node count such as 5, or a list of addresses such as [\"127.0.0.1:6379\"]")
            .i64(|n| Ok(RawNodes::Count(n)))
            .seq(|seq| seq.deserialize().map(RawNodes::Addrs))
            .deserialize(d)
    }
}

fn default_seed() -> u64 {
    1
}
fn default_duration() -> Dur {
    Dur(60_000_000)
}
fn default_expect() -> Expect {
    Expect::Safe
}
fn yes() -> bool {
    true
}
fn default_min_exercised() -> f64 {
    crate::outcome::MIN_EXERCISED
}
fn default_nodes() -> RawNodes {
    RawNodes::Count(5)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAlgorithm {
    #[serde(default = "default_kind")]
    kind: AlgorithmKind,
    #[serde(default = "default_ttl")]
    ttl: Dur,
    #[serde(default = "default_drift_factor")]
    drift_factor: f64,
    #[serde(default = "default_retry_count")]
    retry_count: i64,
    #[serde(default = "default_retry_delay")]
    retry_delay: RawDist,
    #[serde(default = "default_fanout")]
    fanout: Fanout,
    #[serde(default = "default_request_timeout")]
    request_timeout: Dur,
    quorum: Option<i64>,
    #[serde(default = "yes")]
    check_elapsed: bool,
    #[serde(default)]
    max_extensions: i64,
    extend_before: Option<Dur>,
    #[serde(default)]
    fencing: bool,
    #[serde(default = "default_fence_rounds")]
    fence_rounds: i64,
    fair_after: Option<Dur>,
    /// The client mistakes (`algorithm::Mistakes`), each off by default.
    #[serde(default)]
    release: Release,
    #[serde(default)]
    extend: Extend,
    #[serde(default)]
    token: TokenScope,
    /// `WAIT wait_replicas wait_timeout` after the SET (`algorithm::WaitAfterSet`); 0:
    /// no WAIT, as in the seeds.
    #[serde(default)]
    wait_replicas: i64,
    wait_timeout: Option<Dur>,
}

fn default_kind() -> AlgorithmKind {
    AlgorithmKind::Redlock
}
fn default_ttl() -> Dur {
    Dur::from_ms(10_000)
}
fn default_drift_factor() -> f64 {
    0.01
}
fn default_retry_count() -> i64 {
    3
}
fn default_retry_delay() -> RawDist {
    RawDist::Table(super::dist::RawDistTable {
        min: Some(Dur(0)),
        max: Some(Dur::from_ms(200)),
        mean: None,
    })
}
fn default_fence_rounds() -> i64 {
    2
}
fn default_fanout() -> Fanout {
    Fanout::Parallel
}
fn default_request_timeout() -> Dur {
    Dur::from_ms(50)
}

impl Default for RawAlgorithm {
    fn default() -> Self {
        toml::from_str("").expect("defaults parse")
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClients {
    #[serde(default = "default_clients")]
    count: i64,
    #[serde(default = "default_locks")]
    locks: i64,
    #[serde(default = "default_think")]
    think: RawDist,
    #[serde(default = "default_hold")]
    hold: RawDist,
    read_share: Option<f64>,
    writer_wait_bound: Option<Dur>,
    resource_writes: Option<bool>,
    /// A worker process per client (argv), instead of the built-in algorithm.
    worker: Option<Vec<String>>,
    /// Whether libfaketime reaches the worker library's clock.
    worker_faketime: Option<bool>,
    /// How long a worker request may go unanswered.
    worker_deadline: Option<Dur>,
    /// When a worker's hold starts: `answer` (the default) or `send`.
    worker_hold_from: Option<crate::worker::HoldFrom>,
    /// The probe client: `true`, or a table with its `think` and `hold`.
    probe: Option<RawProbe>,
}

/// `probe = true | false`, or `probe = { think = ..., hold = ... }`.
#[derive(Debug)]
enum RawProbe {
    On(bool),
    Table(RawProbeTable),
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProbeTable {
    think: Option<RawDist>,
    hold: Option<RawDist>,
}

impl<'de> Deserialize<'de> for RawProbe {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        UntaggedEnumVisitor::new()
            .expecting("true, false, or a table such as { think = \"20ms\", hold = \"20ms\" }")
            .bool(|b| Ok(RawProbe::On(b)))
            .map(|map| map.deserialize().map(RawProbe::Table))
            .deserialize(d)
    }
}

impl RawProbe {
    fn resolve(&self) -> Result<Option<super::Probe>, Invalid> {
        let defaults = super::Probe::default();
        Ok(match self {
            RawProbe::On(false) => None,
            RawProbe::On(true) => Some(defaults),
            RawProbe::Table(t) => Some(super::Probe {
                think: match &t.think {
                    Some(d) => d.resolve("clients.probe.think")?,
                    None => defaults.think,
                },
                hold: match &t.hold {
                    Some(d) => d.resolve("clients.probe.hold")?,
                    None => defaults.hold,
                },
            }),
        })
    }
}

fn default_clients() -> i64 {
    5
}
fn default_locks() -> i64 {
    1
}
fn range(min_ms: u64, max_ms: u64) -> RawDist {
    RawDist::Table(super::dist::RawDistTable {
        min: Some(Dur::from_ms(min_ms)),
        max: Some(Dur::from_ms(max_ms)),
        mean: None,
    })
}
fn default_think() -> RawDist {
    range(0, 50)
}
fn default_hold() -> RawDist {
    range(1, 20)
}

impl Default for RawClients {
    fn default() -> Self {
        toml::from_str("").expect("defaults parse")
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNetwork {
    #[serde(default = "default_latency")]
    latency: RawDist,
    #[serde(default = "yes")]
    fifo: bool,
}

fn default_latency() -> RawDist {
    RawDist::Table(super::dist::RawDistTable {
        min: Some(Dur(200)),
        max: Some(Dur(2_000)),
        mean: None,
    })
}

impl Default for RawNetwork {
    fn default() -> Self {
        toml::from_str("").expect("defaults parse")
    }
}

/// `persistence = "aof_everysec"` for every node, or `["none", "aof_always", ...]`.
#[derive(Debug)]
enum RawPersistence {
    All(Persistence),
    PerNode(Vec<Persistence>),
}

impl<'de> Deserialize<'de> for RawPersistence {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::IntoDeserializer;
        UntaggedEnumVisitor::new()
            .expecting("\"none\", \"aof_everysec\" or \"aof_always\", or a list of those with one per node")
            .string(|s| {
                let d: serde::de::value::StrDeserializer<serde_untagged::de::Error> = s.into_deserializer();
                Persistence::deserialize(d).map(RawPersistence::All)
            })
            .seq(|seq| seq.deserialize().map(RawPersistence::PerNode))
            .deserialize(d)
    }
}

impl Default for RawPersistence {
    fn default() -> Self {
        RawPersistence::All(Persistence::None)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReplication {
    /// How far behind the master its replica applies writes.
    lag: Dur,
}

impl RawScenario {
    pub fn resolve(self, default_name: &str) -> Result<Scenario, Invalid> {
        let (nodes, targets) = match &self.nodes {
            RawNodes::Count(n) => (*n, Targets::Local),
            RawNodes::Addrs(addrs) => {
                let mut out = Vec::with_capacity(addrs.len());
                for a in addrs {
                    out.push(a.parse().map_err(|_| {
                        invalid(
                            "nodes",
                            format!("nodes: {a:?} is not an address like \"127.0.0.1:6379\""),
                        )
                    })?);
                }
                (addrs.len() as i64, Targets::External(out))
            }
        };
        if !(1..=MAX_NODES as i64).contains(&nodes) {
            return Err(invalid(
                "nodes",
                format!("nodes = {nodes}: lockstorm runs 1 to {MAX_NODES} nodes"),
            ));
        }
        let nodes = nodes as usize;
        if self.backend == Backend::Docker && matches!(targets, Targets::External(_)) {
            return Err(invalid(
                "backend",
                "backend = \"docker\" starts its own containers: give `nodes` as a count, or use backend = \"redis\" for servers someone else runs",
            ));
        }
        let a = &self.algorithm;
        if a.ttl.us() == 0 {
            return Err(invalid("algorithm.ttl", "algorithm.ttl must be above 0"));
        }
        if !a.ttl.us().is_multiple_of(1_000) {
            return Err(invalid(
                "algorithm.ttl",
                format!("algorithm.ttl = {}: Redis takes PX in whole milliseconds", a.ttl),
            ));
        }
        if !(0.0..1.0).contains(&a.drift_factor) {
            return Err(invalid(
                "algorithm.drift_factor",
                format!("algorithm.drift_factor = {}: must be in [0, 1)", a.drift_factor),
            ));
        }
        if a.retry_count < 0 {
            return Err(invalid(
                "algorithm.retry_count",
                format!("algorithm.retry_count = {}: must not be negative", a.retry_count),
            ));
        }
        if a.request_timeout.us() == 0 {
            return Err(invalid(
                "algorithm.request_timeout",
                "algorithm.request_timeout must be above 0",
            ));
        }
        let used_nodes = match a.kind {
            AlgorithmKind::Single if nodes != 1 => {
                return Err(invalid(
                    "algorithm.kind",
                    format!("algorithm.kind = \"single\" runs on one node, but nodes = {nodes}"),
                ))
            }
            _ => nodes,
        };
        let quorum = match a.quorum {
            None => used_nodes / 2 + 1,
            Some(q) if q < 1 || q as usize > used_nodes => {
                return Err(invalid(
                    "algorithm.quorum",
                    format!("algorithm.quorum = {q}: must be between 1 and the node count ({used_nodes})"),
                ))
            }
            Some(q) => q as usize,
        };
        if a.max_extensions < 0 {
            return Err(invalid(
                "algorithm.max_extensions",
                format!(
                    "algorithm.max_extensions = {}: must not be negative",
                    a.max_extensions
                ),
            ));
        }
        let ttl_us = a.ttl.us();
        let extend_before_us = a.extend_before.map_or(ttl_us / 3, Dur::us);
        if extend_before_us == 0 || extend_before_us >= ttl_us {
            return Err(invalid(
                "algorithm.extend_before",
                format!(
                    "algorithm.extend_before = {}: must be above 0 and below the ttl",
                    Dur(extend_before_us)
                ),
            ));
        }
        if a.fair_after.is_some() && a.kind != AlgorithmKind::FairRwRedlock {
            return Err(invalid(
                "algorithm.fair_after",
                "algorithm.fair_after only applies to kind = \"fair_rw_redlock\"",
            ));
        }
        if a.extend == Extend::Pexpire && a.max_extensions == 0 {
            return Err(invalid(
                "algorithm.extend",
                "algorithm.extend = \"pexpire\" needs max_extensions above 0: clients never extend otherwise",
            ));
        }
        if !(1..=2).contains(&a.fence_rounds) {
            return Err(invalid(
                "algorithm.fence_rounds",
                format!(
                    "algorithm.fence_rounds = {}: 2 (safe) or 1 (the naive one-round design)",
                    a.fence_rounds
                ),
            ));
        }
        let wait = match (a.wait_replicas, a.wait_timeout) {
            (n, _) if !(0..=64).contains(&n) => {
                return Err(invalid(
                    "algorithm.wait_replicas",
                    format!("algorithm.wait_replicas = {n}: between 0 (no WAIT) and 64"),
                ))
            }
            (0, Some(_)) => {
                return Err(invalid(
                    "algorithm.wait_timeout",
                    "algorithm.wait_timeout needs wait_replicas above 0: clients send no WAIT otherwise",
                ))
            }
            (0, None) => None,
            // WAIT 0 blocks forever: a timeout of 0 would let a client hang.
            (_, Some(t)) if t.us() < 1_000 => {
                return Err(invalid(
                    "algorithm.wait_timeout",
                    format!("algorithm.wait_timeout = {t}: at least 1ms (WAIT's timeout 0 waits forever)"),
                ))
            }
            (n, t) => Some(WaitAfterSet {
                replicas: n as u32,
                // The request timeout by default: the WAIT gets as long as a reply does.
                timeout_ms: t.unwrap_or(a.request_timeout).us().div_ceil(1_000),
            }),
        };
        let algorithm = AlgorithmConfig {
            kind: a.kind,
            ttl_ms: a.ttl.us() / 1_000,
            drift_factor: a.drift_factor,
            retry_count: a.retry_count as u32,
            retry_delay: a.retry_delay.resolve("algorithm.retry_delay")?,
            fanout: a.fanout,
            request_timeout_us: a.request_timeout.us(),
            quorum,
            check_elapsed: a.check_elapsed,
            max_extensions: a.max_extensions.min(u32::MAX as i64) as u32,
            extend_before_us,
            fencing: a.fencing,
            fence_rounds: a.fence_rounds as u8,
            fair_after_us: a.fair_after.map_or(100_000, Dur::us),
            mistakes: Mistakes {
                release: a.release,
                extend: a.extend,
                token: a.token,
            },
            wait,
        };
        if algorithm.drift_us() >= algorithm.ttl_ms * 1_000 {
            return Err(invalid("algorithm.ttl", format!(
                "algorithm.ttl = {}: no validity is left after the drift allowance (ttl * drift_factor + 2ms)",
                a.ttl
            )));
        }

        let c = &self.clients;
        if c.count < 1 {
            return Err(invalid(
                "clients.count",
                format!(
                    "clients.count = {}: a scenario needs at least one client",
                    c.count
                ),
            ));
        }
        if c.count > MAX_CLIENTS as i64 {
            return Err(invalid(
                "clients.count",
                format!("clients.count = {}: at most {MAX_CLIENTS} clients", c.count),
            ));
        }
        if c.locks < 1 {
            return Err(invalid(
                "clients.locks",
                format!("clients.locks = {}: at least one lock name", c.locks),
            ));
        }
        if c.locks > MAX_LOCKS {
            return Err(invalid(
                "clients.locks",
                format!("clients.locks = {}: at most {MAX_LOCKS} lock names", c.locks),
            ));
        }
        let read_share = match (c.read_share, a.kind.is_read_write()) {
            (Some(r), _) if !(0.0..=1.0).contains(&r) => {
                return Err(invalid("clients.read_share", format!("clients.read_share = {r}: must be between 0 and 1")))
            }
            (Some(r), false) if r > 0.0 => {
                return Err(invalid("clients.read_share", format!(
                    "clients.read_share = {r}: only read-write algorithms (rw_redlock, fair_rw_redlock) take read locks"
                )))
            }
            (Some(r), _) => r,
            (None, true) => 0.5,
            (None, false) => 0.0,
        };
        if c.writer_wait_bound.is_some_and(|d| d.us() == 0) {
            return Err(invalid(
                "clients.writer_wait_bound",
                "clients.writer_wait_bound must be above 0",
            ));
        }
        let worker_deadline_us = match c.worker_deadline {
            Some(d) if d.us() == 0 => {
                return Err(invalid(
                    "clients.worker_deadline",
                    "clients.worker_deadline must be above 0",
                ))
            }
            d => d.map(Dur::us),
        };
        let worker = match &c.worker {
            None => {
                // worker_deadline waits for a worker the command line names.
                if c.worker_faketime.is_some() {
                    return Err(invalid(
                        "clients.worker_faketime",
                        "clients.worker_faketime needs clients.worker (an adapter says its own)",
                    ));
                }
                None
            }
            Some(argv) if argv.is_empty() || argv[0].trim().is_empty() => {
                return Err(invalid(
                    "clients.worker",
                    "clients.worker is empty: give the command and its arguments, e.g. [\"python3\", \"adapters/python/example_worker.py\"]",
                ))
            }
            Some(_) if self.backend == Backend::Sim => {
                return Err(invalid(
                    "clients.worker",
                    "clients.worker runs against real Redis: add `backend = \"redis\"` (or \"docker\")",
                ))
            }
            Some(argv) => Some(crate::worker::WorkerSpec {
                argv: argv.clone(),
                faketime: c.worker_faketime.unwrap_or(false),
                deadline_us: worker_deadline_us.unwrap_or(crate::worker::DEFAULT_DEADLINE_US),
                origin: crate::worker::WorkerOrigin::File,
            }),
        };
        let clients = Clients {
            worker,
            worker_hold_from: c.worker_hold_from.unwrap_or_default(),
            // Kept for a worker the command line names; a file's own worker has it already.
            worker_deadline_us: worker_deadline_us.filter(|_| c.worker.is_none()),
            read_share,
            writer_wait_bound_us: c.writer_wait_bound.map(Dur::us),
            resource_writes: c.resource_writes.unwrap_or(a.fencing),
            count: c.count as usize,
            locks: c.locks.min(u32::MAX as i64) as u32,
            think: c.think.resolve("clients.think")?,
            hold: c.hold.resolve("clients.hold")?,
            probe: c.probe.as_ref().map(RawProbe::resolve).transpose()?.flatten(),
        };
        if clients.probe.is_some() && clients.count >= MAX_CLIENTS {
            return Err(invalid(
                "clients.probe",
                format!("clients.probe is one more client, and clients.count = {} is already the most ({MAX_CLIENTS})", clients.count),
            ));
        }
        let network = Network {
            latency: self.network.latency.resolve("network.latency")?,
            fifo: self.network.fifo,
        };
        if network.latency.max_us() == 0 {
            return Err(invalid(
                "network.latency",
                "network.latency = 0: a message takes at least 1us, or simulated clients would run without time passing",
            ));
        }
        if self.duration.us() == 0 {
            return Err(invalid("duration", "duration must be above 0"));
        }
        if let Some(m) = self.min_availability {
            if !(0.0..=1.0).contains(&m) {
                return Err(invalid(
                    "min_availability",
                    format!("min_availability = {m}: must be between 0 and 1"),
                ));
            }
        }

        if !(0.0..=1.0).contains(&self.min_exercised) {
            return Err(invalid(
                "min_exercised",
                format!(
                    "min_exercised = {}: a share of the seeds, between 0 and 1",
                    self.min_exercised
                ),
            ));
        }

        let persistence = match self.persistence {
            RawPersistence::All(p) => vec![p; nodes],
            RawPersistence::PerNode(ps) if ps.len() == nodes => ps,
            RawPersistence::PerNode(ps) => {
                return Err(invalid(
                    "persistence",
                    format!("persistence lists {} nodes, but nodes = {nodes}", ps.len()),
                ))
            }
        };
        let replication = self
            .replication
            .as_ref()
            .map(|r| Replication { lag_us: r.lag.us() });

        let context = || super::sentinel::Context {
            backend: self.backend,
            local: matches!(targets, Targets::Local),
            nodes,
            algorithm: algorithm.kind,
            replication: replication.is_some(),
            clients: clients.count,
            persistence: persistence[0],
        };
        let sentinel = self
            .sentinel
            .as_ref()
            .map(|raw| raw.resolve(context()))
            .transpose()?;
        let cluster = self
            .cluster
            .as_ref()
            .map(|raw| raw.resolve(context()))
            .transpose()?;
        if sentinel.is_some() && cluster.is_some() {
            return Err(invalid(
                "cluster",
                "[cluster] and [sentinel] are two ways to run node 0: give one",
            ));
        }

        let faults = resolve_faults(
            &self.faults,
            nodes,
            clients.count,
            self.duration,
            replication,
            sentinel.is_some() || cluster.is_some(),
        )?;
        let nemesis = self.nemesis.resolve(replication, clients.count)?;
        planned_faults(faults.len(), &nemesis, self.duration)?;

        let name = self.name.unwrap_or_else(|| default_name.to_string());
        crate::limits::check_name(&name).map_err(|m| invalid("name", m))?;
        let bound_us = algorithm.liveness_bound_us(used_nodes);
        if bound_us > crate::limits::MAX_TIME_US {
            return Err(invalid(
                "algorithm.ttl",
                format!(
                    "algorithm.ttl = {}: the time a client may need to acquire after the heal (ttl, retry delay and attempts) is over {} us (about 31 years)",
                    a.ttl,
                    crate::limits::MAX_TIME_US
                ),
            ));
        }
        Ok(Scenario {
            name,
            path: None,
            overrides: Vec::new(),
            seed: self.seed,
            duration_us: self.duration.us(),
            expect: self.expect,
            expect_by: super::ExpectBy::Scenario,
            expect_live: self.expect_live,
            expect_resource: self.expect_resource,
            min_availability: self.min_availability,
            min_exercised: self.min_exercised,
            nodes,
            persistence,
            replication,
            sentinel,
            cluster,
            algorithm,
            clients,
            network,
            faults,
            nemesis,
            backend: self.backend,
            targets,
            node_events: self.node_events,
            heal_after_faults_us: self.heal_after_faults.map(Dur::us),
            grid: self
                .matrix
                .grid
                .iter()
                .enumerate()
                .map(|(i, g)| {
                    let key = format!("matrix.grid[{i}]");
                    if g.name.trim().is_empty() {
                        return Err(invalid(&key, format!("{key}.name is empty: name the setting")));
                    }
                    for s in &g.set {
                        super::Override::parse(s).map_err(|m| invalid(&key, format!("{key}.set: {m}")))?;
                    }
                    Ok(super::GridSetting {
                        name: g.name.clone(),
                        set: g.set.clone(),
                    })
                })
                .collect::<Result<Vec<_>, Invalid>>()?,
        })
    }
}

/// Refuses a run that would plan more than [`MAX_PLANNED_FAULTS`] faults on average (what
/// they would cost, [`crate::limits::FAULT_BYTES`]),
/// naming the nemesis kind that plans the most.
fn planned_faults(scripted: usize, nemesis: &Nemesis, duration: Dur) -> Result<(), Invalid> {
    let kinds = nemesis.expected_faults(duration.us());
    let total = scripted as f64 + kinds.iter().map(|(_, n)| n).sum::<f64>();
    if total <= MAX_PLANNED_FAULTS as f64 {
        return Ok(());
    }
    let why = format!(
        "lockstorm plans at most {MAX_PLANNED_FAULTS} faults per run (each costs about {} bytes and {} us, \
         from the plan to the report)",
        crate::limits::FAULT_BYTES,
        crate::limits::FAULT_NS / 1_000
    );
    match kinds.into_iter().max_by(|a, b| a.1.total_cmp(&b.1)) {
        Some((kind, most)) => Err(invalid(
            format!("nemesis.{kind}.interval"),
            format!(
                "nemesis.{kind}.interval plans about {most:.0} faults in a run of {duration} \
                 ({total:.0} in all); {why}: lengthen the interval or shorten the run"
            ),
        )),
        None => Err(invalid("faults", format!("{scripted} scripted faults; {why}"))),
    }
}
