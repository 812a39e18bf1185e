//! The scenario file as serde reads it: every table rejects unknown keys, every field
//! has a default, and [`RawScenario::resolve`] checks values against each other.

use super::{Backend, Clients, Dur, Expect, Network, Persistence, RawDist, RedisSettings, Scenario, Targets};
use crate::algorithm::{AlgorithmConfig, AlgorithmKind, Fanout};
use crate::fault::{Fault, Nemesis, NemesisRate, Origin, PlannedFault};
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
    min_availability: Option<f64>,
    /// A node count, or the addresses of real servers someone else runs.
    #[serde(default = "default_nodes")]
    nodes: RawNodes,
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
    #[serde(default)]
    redis: RawRedis,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum RawNodes {
    Count(i64),
    Addrs(Vec<String>),
}

/// The real backend's `[redis]` table.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRedis {
    #[serde(default)]
    persistence: Persistence,
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

/// A scripted fault: `kind` picks the variant, `at` is when it starts.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum RawFault {
    /// Cut `nodes` off from `clients` (all clients if omitted) for `duration` (until the
    /// heal if omitted).
    Partition {
        at: Dur,
        nodes: Vec<i64>,
        clients: Option<Vec<i64>>,
        duration: Option<Dur>,
    },
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawNemesis {
    partition: Option<RawRate>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRate {
    /// Time between the starts of two faults of this kind.
    interval: RawDist,
    duration: RawDist,
}

impl RawRate {
    fn resolve(&self, what: &str) -> Result<NemesisRate, String> {
        let interval = self.interval.resolve(&format!("{what}.interval"))?;
        if interval.max_us() == 0 {
            return Err(format!("{what}.interval must be above 0"));
        }
        Ok(NemesisRate {
            interval,
            duration: self.duration.resolve(&format!("{what}.duration"))?,
        })
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
        let clients = Clients {
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

        let mut faults = Vec::with_capacity(self.faults.len());
        for (i, f) in self.faults.iter().enumerate() {
            let planned = match f {
                RawFault::Partition {
                    at,
                    nodes: ns,
                    clients: cs,
                    duration,
                } => {
                    let all: Vec<i64> = (0..clients.count as i64).collect();
                    PlannedFault {
                        id: i,
                        at_us: at.us(),
                        duration_us: duration.map(Dur::us),
                        origin: Origin::Script,
                        fault: Fault::Partition {
                            nodes: indices(ns, nodes, "node", i)?,
                            clients: indices(cs.as_deref().unwrap_or(&all), clients.count, "client", i)?,
                        },
                    }
                }
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
        let nemesis = Nemesis {
            partition: self
                .nemesis
                .partition
                .as_ref()
                .map(|r| r.resolve("nemesis.partition"))
                .transpose()?,
        };

        Ok(Scenario {
            name: self.name.unwrap_or_else(|| default_name.to_string()),
            path: None,
            seed: self.seed,
            duration_us: self.duration.us(),
            expect: self.expect,
            expect_live: self.expect_live,
            min_availability: self.min_availability,
            nodes,
            algorithm,
            clients,
            network,
            faults,
            nemesis,
            backend: self.backend,
            redis: RedisSettings {
                persistence: self.redis.persistence,
                targets,
            },
        })
    }
}
