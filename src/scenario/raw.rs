//! The scenario file as serde reads it: every table rejects unknown keys, every field
//! has a default, and [`RawScenario::resolve`] checks values against each other.

use super::{Backend, Clients, Dur, Expect, Network, RawDist, Scenario, SignedDur, Targets};
use crate::algorithm::{AlgorithmConfig, AlgorithmKind, Fanout};
use crate::fault::{
    CutDirection, Fault, Nemesis, NemesisRate, Origin, PausePoint, Persistence, PlannedFault, Replication,
};
use serde::Deserialize;

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
    /// A node count, or the addresses of real servers someone else runs.
    #[serde(default = "default_nodes")]
    nodes: RawNodes,
    /// One persistence for every node, or one per node.
    #[serde(default)]
    persistence: RawPersistence,
    replication: Option<RawReplication>,
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
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawNodes {
    Count(i64),
    Addrs(Vec<String>),
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
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawPersistence {
    All(Persistence),
    PerNode(Vec<Persistence>),
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

/// A scripted fault: `kind` picks the variant, `at` is when it starts. Faults on sets
/// of nodes or clients default to all of them where the kind says so.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum RawFault {
    /// Cut `nodes` off from `clients` (all clients if omitted) for `duration` (until the
    /// heal if omitted), both ways or in one `direction`.
    Partition {
        at: Dur,
        nodes: Vec<i64>,
        clients: Option<Vec<i64>>,
        duration: Option<Dur>,
        #[serde(default)]
        direction: CutDirection,
    },
    /// Kill `node`; it restarts `restart_after` later (at the heal if omitted).
    Crash {
        at: Dur,
        node: i64,
        restart_after: Option<Dur>,
        #[serde(default)]
        power_loss: bool,
    },
    /// Stop a `node` or a `client` for `duration`; a client may wait for a `point`.
    Pause {
        at: Dur,
        node: Option<i64>,
        client: Option<i64>,
        duration: Dur,
        point: Option<PausePoint>,
    },
    /// Step the wall clock of a `node` or `client` `by` a signed amount.
    ClockJump {
        at: Dur,
        node: Option<i64>,
        client: Option<i64>,
        by: SignedDur,
    },
    /// Run the clock of a `node` or `client` at `rate` for `duration`.
    ClockRate {
        at: Dur,
        node: Option<i64>,
        client: Option<i64>,
        rate: f64,
        duration: Option<Dur>,
    },
    /// Add `extra` latency between `nodes` and `clients` (all if omitted).
    Delay {
        at: Dur,
        nodes: Option<Vec<i64>>,
        clients: Option<Vec<i64>>,
        extra: Dur,
        duration: Option<Dur>,
    },
    /// Lose messages between `nodes` and `clients` (all if omitted) with `probability`.
    Loss {
        at: Dur,
        nodes: Option<Vec<i64>>,
        clients: Option<Vec<i64>>,
        probability: f64,
        duration: Option<Dur>,
    },
    /// Kill the master of `node` (0 if omitted); its replica is promoted `promote_after`
    /// later (at once if omitted).
    Failover {
        at: Dur,
        #[serde(default)]
        node: i64,
        promote_after: Option<Dur>,
    },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNemesis {
    partition: Option<RawRate>,
    crash: Option<RawCrashRate>,
    pause: Option<RawRate>,
    clock_jump: Option<RawJumpRate>,
    clock_rate: Option<RawClockRate>,
    delay: Option<RawDelayRate>,
    loss: Option<RawLossRate>,
    failover: Option<RawRate>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRate {
    /// Time between the starts of two faults of this kind.
    interval: RawDist,
    duration: RawDist,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCrashRate {
    interval: RawDist,
    /// The restart delay.
    duration: RawDist,
    #[serde(default)]
    power_loss: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJumpRate {
    interval: RawDist,
    /// The largest jump, either way.
    max: Dur,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClockRate {
    interval: RawDist,
    duration: RawDist,
    /// Rates are drawn from `1 ± max_deviation`.
    max_deviation: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDelayRate {
    interval: RawDist,
    duration: RawDist,
    extra: RawDist,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLossRate {
    interval: RawDist,
    duration: RawDist,
    probability: f64,
}

/// Resolves a nemesis kind's interval and duration, naming the kind in errors.
fn rate(interval: &RawDist, duration: Option<&RawDist>, what: &str) -> Result<NemesisRate, String> {
    let interval = interval.resolve(&format!("{what}.interval"))?;
    if interval.max_us() == 0 {
        return Err(format!("{what}.interval must be above 0"));
    }
    Ok(NemesisRate {
        interval,
        duration: match duration {
            Some(d) => d.resolve(&format!("{what}.duration"))?,
            None => super::Dist::fixed(0),
        },
    })
}

fn probability(p: f64, what: &str) -> Result<f64, String> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{what} = {p}: a probability is between 0 and 1"))
    }
}

fn clock_rate(r: f64, what: &str) -> Result<f64, String> {
    if r > 0.0 && r <= 10.0 {
        Ok(r)
    } else {
        Err(format!(
            "{what} = {r}: a clock rate is above 0 and at most 10 (1.02 is 2% fast)"
        ))
    }
}

/// Exactly one of `node` and `client`, each in range.
fn process(
    node: Option<i64>,
    client: Option<i64>,
    nodes: usize,
    clients: usize,
    fault: usize,
) -> Result<(Option<usize>, Option<usize>), String> {
    match (node, client) {
        (Some(n), None) => Ok((Some(indices(&[n], nodes, "node", fault)?[0]), None)),
        (None, Some(c)) => Ok((None, Some(indices(&[c], clients, "client", fault)?[0]))),
        _ => Err(format!(
            "faults[{fault}]: give either `node` or `client`, not both or neither"
        )),
    }
}

/// Checks that every index in `ids` is below `count`, naming the field in the error.
fn indices(ids: &[i64], count: usize, what: &str, fault: usize) -> Result<Vec<usize>, String> {
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        if id < 0 || id as usize >= count {
            return Err(format!(
                "faults[{fault}]: {what} {id} does not exist (there are {count}, numbered 0 to {})",
                count.saturating_sub(1)
            ));
        }
        out.push(id as usize);
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(format!("faults[{fault}]: {what}s is empty"));
    }
    Ok(out)
}

impl RawScenario {
    pub fn resolve(self, default_name: &str) -> Result<Scenario, String> {
        let (nodes, targets) = match &self.nodes {
            RawNodes::Count(n) => (*n, Targets::Local),
            RawNodes::Addrs(addrs) => {
                let mut out = Vec::with_capacity(addrs.len());
                for a in addrs {
                    out.push(
                        a.parse()
                            .map_err(|_| format!("nodes: {a:?} is not an address like \"127.0.0.1:6379\""))?,
                    );
                }
                (addrs.len() as i64, Targets::External(out))
            }
        };
        if !(1..=64).contains(&nodes) {
            return Err(format!("nodes = {nodes}: lockstorm runs 1 to 64 nodes"));
        }
        let nodes = nodes as usize;
        let a = &self.algorithm;
        if a.ttl.us() == 0 {
            return Err("algorithm.ttl must be above 0".into());
        }
        if !a.ttl.us().is_multiple_of(1_000) {
            return Err(format!(
                "algorithm.ttl = {}: Redis takes PX in whole milliseconds",
                a.ttl
            ));
        }
        if !(0.0..1.0).contains(&a.drift_factor) {
            return Err(format!(
                "algorithm.drift_factor = {}: must be in [0, 1)",
                a.drift_factor
            ));
        }
        if a.retry_count < 0 {
            return Err(format!(
                "algorithm.retry_count = {}: must not be negative",
                a.retry_count
            ));
        }
        if a.request_timeout.us() == 0 {
            return Err("algorithm.request_timeout must be above 0".into());
        }
        let used_nodes = match a.kind {
            AlgorithmKind::Single if nodes != 1 => {
                return Err(format!(
                    "algorithm.kind = \"single\" runs on one node, but nodes = {nodes}"
                ))
            }
            _ => nodes,
        };
        let quorum = match a.quorum {
            None => used_nodes / 2 + 1,
            Some(q) if q < 1 || q as usize > used_nodes => {
                return Err(format!(
                    "algorithm.quorum = {q}: must be between 1 and the node count ({used_nodes})"
                ))
            }
            Some(q) => q as usize,
        };
        if a.max_extensions < 0 {
            return Err(format!(
                "algorithm.max_extensions = {}: must not be negative",
                a.max_extensions
            ));
        }
        let ttl_us = a.ttl.us();
        let extend_before_us = a.extend_before.map_or(ttl_us / 3, Dur::us);
        if extend_before_us == 0 || extend_before_us >= ttl_us {
            return Err(format!(
                "algorithm.extend_before = {}: must be above 0 and below the ttl",
                Dur(extend_before_us)
            ));
        }
        if a.fair_after.is_some() && a.kind != AlgorithmKind::FairRwRedlock {
            return Err("algorithm.fair_after only applies to kind = \"fair_rw_redlock\"".into());
        }
        if !(1..=2).contains(&a.fence_rounds) {
            return Err(format!(
                "algorithm.fence_rounds = {}: 2 (safe) or 1 (the naive one-round design)",
                a.fence_rounds
            ));
        }
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
        };
        if algorithm.drift_us() >= algorithm.ttl_ms * 1_000 {
            return Err(format!(
                "algorithm.ttl = {}: no validity is left after the drift allowance (ttl * drift_factor + 2ms)",
                a.ttl
            ));
        }

        let c = &self.clients;
        if c.count < 1 {
            return Err(format!(
                "clients.count = {}: a scenario needs at least one client",
                c.count
            ));
        }
        if c.count > 10_000 {
            return Err(format!("clients.count = {}: at most 10000 clients", c.count));
        }
        if c.locks < 1 {
            return Err(format!("clients.locks = {}: at least one lock name", c.locks));
        }
        let read_share = match (c.read_share, a.kind.is_read_write()) {
            (Some(r), _) if !(0.0..=1.0).contains(&r) => {
                return Err(format!("clients.read_share = {r}: must be between 0 and 1"))
            }
            (Some(r), false) if r > 0.0 => {
                return Err(format!(
                    "clients.read_share = {r}: only read-write algorithms (rw_redlock, fair_rw_redlock) take read locks"
                ))
            }
            (Some(r), _) => r,
            (None, true) => 0.5,
            (None, false) => 0.0,
        };
        if c.writer_wait_bound.is_some_and(|d| d.us() == 0) {
            return Err("clients.writer_wait_bound must be above 0".into());
        }
        let clients = Clients {
            read_share,
            writer_wait_bound_us: c.writer_wait_bound.map(Dur::us),
            resource_writes: c.resource_writes.unwrap_or(a.fencing),
            count: c.count as usize,
            locks: c.locks.min(u32::MAX as i64) as u32,
            think: c.think.resolve("clients.think")?,
            hold: c.hold.resolve("clients.hold")?,
        };
        let network = Network {
            latency: self.network.latency.resolve("network.latency")?,
        };
        if self.duration.us() == 0 {
            return Err("duration must be above 0".into());
        }
        if let Some(m) = self.min_availability {
            if !(0.0..=1.0).contains(&m) {
                return Err(format!("min_availability = {m}: must be between 0 and 1"));
            }
        }

        let persistence = match self.persistence {
            RawPersistence::All(p) => vec![p; nodes],
            RawPersistence::PerNode(ps) if ps.len() == nodes => ps,
            RawPersistence::PerNode(ps) => {
                return Err(format!(
                    "persistence lists {} nodes, but nodes = {nodes}",
                    ps.len()
                ))
            }
        };
        let replication = self
            .replication
            .as_ref()
            .map(|r| Replication { lag_us: r.lag.us() });

        let all_nodes: Vec<i64> = (0..nodes as i64).collect();
        let all_clients: Vec<i64> = (0..clients.count as i64).collect();
        let mut faults = Vec::with_capacity(self.faults.len());
        for (i, f) in self.faults.iter().enumerate() {
            let ns =
                |list: &Option<Vec<i64>>| indices(list.as_deref().unwrap_or(&all_nodes), nodes, "node", i);
            let cs = |list: &Option<Vec<i64>>| {
                indices(
                    list.as_deref().unwrap_or(&all_clients),
                    clients.count,
                    "client",
                    i,
                )
            };
            let what = |field: &str| format!("faults[{i}].{field}");
            let (at, duration, fault) = match f {
                RawFault::Partition {
                    at,
                    nodes: n,
                    clients: c,
                    duration,
                    direction,
                } => (
                    at,
                    *duration,
                    Fault::Partition {
                        nodes: ns(&Some(n.clone()))?,
                        clients: cs(c)?,
                        direction: *direction,
                    },
                ),
                RawFault::Crash {
                    at,
                    node,
                    restart_after,
                    power_loss,
                } => (
                    at,
                    *restart_after,
                    Fault::Crash {
                        node: indices(&[*node], nodes, "node", i)?[0],
                        power_loss: *power_loss,
                    },
                ),
                RawFault::Pause {
                    at,
                    node,
                    client,
                    duration,
                    point,
                } => {
                    let (node, client) = process(*node, *client, nodes, clients.count, i)?;
                    if node.is_some() && point.is_some() {
                        return Err(format!(
                            "faults[{i}]: `point` is for client pauses; a node pauses at `at`"
                        ));
                    }
                    (
                        at,
                        Some(*duration),
                        Fault::Pause {
                            node,
                            client,
                            point: *point,
                        },
                    )
                }
                RawFault::ClockJump { at, node, client, by } => {
                    let (node, client) = process(*node, *client, nodes, clients.count, i)?;
                    (
                        at,
                        Some(Dur(0)),
                        Fault::ClockJump {
                            node,
                            client,
                            by_us: by.0,
                        },
                    )
                }
                RawFault::ClockRate {
                    at,
                    node,
                    client,
                    rate,
                    duration,
                } => {
                    let (node, client) = process(*node, *client, nodes, clients.count, i)?;
                    let rate = clock_rate(*rate, &what("rate"))?;
                    (at, *duration, Fault::ClockRate { node, client, rate })
                }
                RawFault::Delay {
                    at,
                    nodes: n,
                    clients: c,
                    extra,
                    duration,
                } => (
                    at,
                    *duration,
                    Fault::Delay {
                        nodes: ns(n)?,
                        clients: cs(c)?,
                        extra_us: extra.us(),
                    },
                ),
                RawFault::Loss {
                    at,
                    nodes: n,
                    clients: c,
                    probability: p,
                    duration,
                } => (
                    at,
                    *duration,
                    Fault::Loss {
                        nodes: ns(n)?,
                        clients: cs(c)?,
                        probability: probability(*p, &what("probability"))?,
                    },
                ),
                RawFault::Failover {
                    at,
                    node,
                    promote_after,
                } => {
                    if replication.is_none() {
                        return Err(format!(
                            "faults[{i}]: a failover needs a replica: add `[replication]` with a `lag`"
                        ));
                    }
                    (
                        at,
                        Some(promote_after.unwrap_or(Dur(0))),
                        Fault::Failover {
                            node: indices(&[*node], nodes, "node", i)?[0],
                        },
                    )
                }
            };
            let planned = PlannedFault {
                id: i,
                at_us: at.us(),
                duration_us: duration.map(Dur::us),
                origin: Origin::Script,
                fault,
            };
            if planned.at_us >= self.duration.us() {
                return Err(format!(
                    "faults[{i}]: at = {} is not before the end of the run (duration = {})",
                    Dur(planned.at_us),
                    self.duration
                ));
            }
            faults.push(planned);
        }
        let n = &self.nemesis;
        if n.failover.is_some() && replication.is_none() {
            return Err("nemesis.failover needs a replica: add `[replication]` with a `lag`".into());
        }
        let nemesis = Nemesis {
            partition: n
                .partition
                .as_ref()
                .map(|r| rate(&r.interval, Some(&r.duration), "nemesis.partition"))
                .transpose()?,
            crash: n
                .crash
                .as_ref()
                .map(|r| rate(&r.interval, Some(&r.duration), "nemesis.crash"))
                .transpose()?,
            crash_power_loss: n.crash.as_ref().is_some_and(|r| r.power_loss),
            pause: n
                .pause
                .as_ref()
                .map(|r| rate(&r.interval, Some(&r.duration), "nemesis.pause"))
                .transpose()?,
            clock_jump: n
                .clock_jump
                .as_ref()
                .map(|r| rate(&r.interval, None, "nemesis.clock_jump"))
                .transpose()?,
            clock_jump_max_us: n.clock_jump.as_ref().map_or(0, |r| r.max.us()),
            clock_rate: n
                .clock_rate
                .as_ref()
                .map(|r| rate(&r.interval, Some(&r.duration), "nemesis.clock_rate"))
                .transpose()?,
            clock_rate_max_deviation: match &n.clock_rate {
                Some(r) if !(0.0..1.0).contains(&r.max_deviation) => {
                    return Err(format!(
                        "nemesis.clock_rate.max_deviation = {}: must be in [0, 1)",
                        r.max_deviation
                    ))
                }
                Some(r) => r.max_deviation,
                None => 0.0,
            },
            delay: n
                .delay
                .as_ref()
                .map(|r| rate(&r.interval, Some(&r.duration), "nemesis.delay"))
                .transpose()?,
            delay_extra: match &n.delay {
                Some(r) => r.extra.resolve("nemesis.delay.extra")?,
                None => super::Dist::fixed(0),
            },
            loss: n
                .loss
                .as_ref()
                .map(|r| rate(&r.interval, Some(&r.duration), "nemesis.loss"))
                .transpose()?,
            loss_probability: match &n.loss {
                Some(r) => probability(r.probability, "nemesis.loss.probability")?,
                None => 0.0,
            },
            failover: n
                .failover
                .as_ref()
                .map(|r| rate(&r.interval, Some(&r.duration), "nemesis.failover"))
                .transpose()?,
        };

        Ok(Scenario {
            name: self.name.unwrap_or_else(|| default_name.to_string()),
            path: None,
            seed: self.seed,
            duration_us: self.duration.us(),
            expect: self.expect,
            expect_live: self.expect_live,
            expect_resource: self.expect_resource,
            min_availability: self.min_availability,
            nodes,
            persistence,
            replication,
            algorithm,
            clients,
            network,
            faults,
            nemesis,
            backend: self.backend,
            targets,
        })
    }
}
