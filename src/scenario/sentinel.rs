//! `[sentinel]`: the scenario's one node is a Redis Sentinel deployment (a master, its
//! replicas by real replication, and the sentinels that decide its failovers) on the
//! real backend (`crate::real::deployment`). Parsed strictly like every table; each key
//! defaults to [`Settings::default`], and what cannot work is refused in one line that
//! names the key.

use super::{invalid, Backend, Dur, Invalid};
use crate::algorithm::AlgorithmKind;
use crate::fault::{Fault, Persistence};
use crate::real::deployment::Settings;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSentinel {
    replicas: Option<usize>,
    sentinels: Option<usize>,
    quorum: Option<usize>,
    /// Sentinel's `down-after-milliseconds`.
    down_after: Option<Dur>,
    /// Sentinel's `failover-timeout`.
    failover_timeout: Option<Dur>,
    parallel_syncs: Option<usize>,
    min_replicas_to_write: Option<usize>,
    /// Whole seconds, as Redis takes it.
    min_replicas_max_lag: Option<Dur>,
}

/// What the rest of the file says, which `[sentinel]` must agree with.
pub(super) struct Context {
    pub backend: Backend,
    /// `nodes` is a count (lockstorm runs the servers), not addresses.
    pub local: bool,
    pub nodes: usize,
    pub algorithm: AlgorithmKind,
    pub replication: bool,
    pub clients: usize,
    pub persistence: Persistence,
}

impl Context {
    /// What `[table]` (a deployment as node 0) needs of the rest of the file, or the
    /// one-line error of the first thing that is not so.
    pub(super) fn deployment(&self, table: &str) -> Result<(), Invalid> {
        let refuse = |why: String| Err(invalid(table, format!("[{table}] {why}")));
        if self.backend != Backend::Redis || !self.local {
            return refuse("runs real redis-server processes lockstorm starts: it needs backend = \"redis\" and nodes = 1".into());
        }
        if self.nodes != 1 {
            return refuse(format!(
                "is one node (its masters, replicas and what decides their failovers): it needs nodes = 1, not {}",
                self.nodes
            ));
        }
        if self.algorithm != AlgorithmKind::Single {
            return refuse(format!(
                "is for a single-instance lock: it needs algorithm.kind = \"single\", not {:?}",
                self.algorithm.name()
            ));
        }
        if self.replication {
            return refuse(
                "has replicas of its own: leave out [replication] (lockstorm's own failover)".into(),
            );
        }
        if self.clients > crate::real::deployment::MAX_CLIENTS {
            return refuse(format!(
                "gives each client a loopback IP of its own, for at most {} clients, not {}",
                crate::real::deployment::MAX_CLIENTS,
                self.clients
            ));
        }
        Ok(())
    }
}

/// A whole number of milliseconds of at least 1 ms, for `table.key` (Sentinel and
/// Cluster take their timeouts so).
pub(super) fn whole_ms(v: Option<Dur>, table: &str, key: &str, default: u64) -> Result<u64, Invalid> {
    match v {
        None => Ok(default),
        Some(v) if v.us() < 1_000 || !v.us().is_multiple_of(1_000) => Err(invalid(
            format!("{table}.{key}"),
            format!("{table}.{key} = {v}: Redis takes whole milliseconds, at least 1ms"),
        )),
        Some(v) => Ok(v.us() / 1_000),
    }
}

/// `min_replicas_max_lag` in whole seconds, as Redis takes it.
pub(super) fn lag_seconds(v: Option<Dur>, table: &str, default: u64) -> Result<u64, Invalid> {
    match v {
        None => Ok(default),
        Some(v) if v.us() == 0 || !v.us().is_multiple_of(1_000_000) => Err(invalid(
            format!("{table}.min_replicas_max_lag"),
            format!("{table}.min_replicas_max_lag = {v}: Redis takes whole seconds, at least 1s"),
        )),
        Some(v) => Ok(v.us() / 1_000_000),
    }
}

impl RawSentinel {
    pub(super) fn resolve(&self, cx: Context) -> Result<Settings, Invalid> {
        cx.deployment("sentinel")?;
        let d = Settings::default();
        let ms = |v: Option<Dur>, key: &str, default: u64| whole_ms(v, "sentinel", key, default);
        let lag_s = lag_seconds(self.min_replicas_max_lag, "sentinel", d.min_replicas_max_lag_s)?;
        let settings = Settings {
            name: d.name.clone(),
            replicas: self.replicas.unwrap_or(d.replicas),
            sentinels: self.sentinels.unwrap_or(d.sentinels),
            quorum: self.quorum.unwrap_or(d.quorum),
            down_after_ms: ms(self.down_after, "down_after", d.down_after_ms)?,
            failover_timeout_ms: ms(self.failover_timeout, "failover_timeout", d.failover_timeout_ms)?,
            parallel_syncs: self.parallel_syncs.unwrap_or(d.parallel_syncs),
            min_replicas_to_write: self.min_replicas_to_write.unwrap_or(d.min_replicas_to_write),
            min_replicas_max_lag_s: lag_s,
            persistence: cx.persistence,
        };
        // Settings::check names the setting in its one line ("quorum 4 with 3 sentinels").
        settings.check().map_err(|e| {
            invalid(
                "sentinel",
                format!("[sentinel] {}", e.to_string().trim_start_matches("sentinel: ")),
            )
        })?;
        Ok(settings)
    }
}

/// How long the simulator's sentinels take from a master's death to the promoted replica
/// answering as the master, beyond `down-after-milliseconds`: the quorum's agreement
/// (+odown), the leader's election and its promotion and reconfiguration. Measured on
/// real sentinels (Redis 7.0, scenarios/real/sentinel-replication-cut.toml): the leader
/// names the promoted replica 1.1 to 1.3 s after down-after runs out.
pub const SIM_FAILOVER_AFTER_DOWN_US: u64 = 1_200_000;

/// The same for a Redis Cluster, beyond `cluster-node-timeout`: the majority's agreement
/// (`fail`), the replica's election delay (500 ms plus up to 500 ms at random, plus 1 s per
/// rank) and the vote. Measured on real clusters (Redis 7.0,
/// scenarios/real/cluster-master-crash.toml, five kills): the replica said `+promoted`
/// 1.0 to 1.7 s after the node timeout ran out.
pub const SIM_CLUSTER_FAILOVER_AFTER_TIMEOUT_US: u64 = 1_300_000;

/// How far the simulator's replicas trail their master: a local link replicates a write
/// within a millisecond.
pub const SIM_REPLICATION_LAG_US: u64 = 1_000;

impl super::Scenario {
    /// The simulator's model of this scenario's Sentinel deployment (issue 39, step 5),
    /// as a plain scenario the simulator runs: node 0 a master with a replica trailing it
    /// by [`SIM_REPLICATION_LAG_US`]; a crash of the master that outlasts the sentinels'
    /// failover time (`down_after` + [`SIM_FAILOVER_AFTER_DOWN_US`]) becomes a failover
    /// promoted at that time (the killed master comes back as the replica), a shorter one
    /// a plain crash (it comes back with what its persistence kept, still the master); a
    /// replication cut is the simulator's own. What the model leaves out is refused, in
    /// one line: a partition (a split brain needs two masters), min-replicas-to-write,
    /// and a crash that ends at the heal (its length is unknown before the run). A
    /// scenario without `[sentinel]` is returned as it is. A `[cluster]` is modeled the same
    /// way, as the master that serves the lock's slot with its replica, promoted
    /// `node_timeout` + [`SIM_CLUSTER_FAILOVER_AFTER_TIMEOUT_US`] after its death.
    pub fn deployment_on_simulator(&self) -> Result<super::Scenario, String> {
        // What decides a failover, how long after a master's death it is promoted, and
        // whether writes need replicas.
        let (table, failover_us, min_replicas) = match (&self.sentinel, &self.cluster) {
            (Some(s), _) => (
                "[sentinel]",
                s.down_after_ms * 1_000 + SIM_FAILOVER_AFTER_DOWN_US,
                s.min_replicas_to_write,
            ),
            (None, Some(c)) => (
                "[cluster]",
                c.node_timeout_ms * 1_000 + SIM_CLUSTER_FAILOVER_AFTER_TIMEOUT_US,
                c.min_replicas_to_write,
            ),
            (None, None) => return Ok(self.clone()),
        };
        let refuse = |why: &str| {
            Err(format!(
                "the simulator's model of {table} {why}; run it on the real backend"
            ))
        };
        if min_replicas > 0 {
            return refuse("does not model min-replicas-to-write");
        }
        let mut modeled = self.clone();
        modeled.sentinel = None;
        modeled.cluster = None;
        modeled.replication = Some(crate::fault::Replication {
            lag_us: SIM_REPLICATION_LAG_US,
        });
        for f in &mut modeled.faults {
            match f.fault {
                Fault::ReplicationCut { .. } => {}
                Fault::Crash {
                    node: 0,
                    power_loss: false,
                } => match f.duration_us {
                    Some(d) if d < failover_us => {}
                    Some(_) => {
                        f.fault = Fault::Failover { node: 0 };
                        f.duration_us = Some(failover_us);
                    }
                    None => return refuse("needs a crash with a `restart_after`"),
                },
                Fault::Partition { .. } => {
                    return refuse("does not model a partition (a split brain needs two masters)")
                }
                _ => return refuse(&format!("does not model a {} fault", f.fault.kind())),
            }
        }
        if !self.nemesis.expected_faults(self.duration_us).is_empty() {
            return refuse("does not model a nemesis");
        }
        Ok(modeled)
    }
}
