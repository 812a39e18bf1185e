//! `[cluster]`: the scenario's one node is a Redis Cluster (masters that share the hash
//! slots, each with replicas, and no sentinel: the masters vote the failovers) on the real
//! backend (`crate::real::deployment::cluster`). The lock's key is in redis0's slots.
//! Parsed strictly like every table; each key defaults to [`Settings::default`], and what
//! cannot work is refused in one line that names the key.

use super::sentinel::{lag_seconds, whole_ms, Context};
use super::{invalid, Dur, Invalid};
use crate::real::deployment::cluster::Settings;
use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCluster {
    masters: Option<usize>,
    /// Per master.
    replicas: Option<usize>,
    /// `cluster-node-timeout`.
    node_timeout: Option<Dur>,
    min_replicas_to_write: Option<usize>,
    /// Whole seconds, as Redis takes it.
    min_replicas_max_lag: Option<Dur>,
}

impl RawCluster {
    pub(super) fn resolve(&self, cx: Context) -> Result<Settings, Invalid> {
        cx.deployment("cluster")?;
        let d = Settings::default();
        let settings = Settings {
            masters: self.masters.unwrap_or(d.masters),
            replicas: self.replicas.unwrap_or(d.replicas),
            node_timeout_ms: whole_ms(self.node_timeout, "cluster", "node_timeout", d.node_timeout_ms)?,
            min_replicas_to_write: self.min_replicas_to_write.unwrap_or(d.min_replicas_to_write),
            min_replicas_max_lag_s: lag_seconds(
                self.min_replicas_max_lag,
                "cluster",
                d.min_replicas_max_lag_s,
            )?,
            persistence: cx.persistence,
            // Filled from the clients when the run starts (`Scenario::deployment`).
            keys: Vec::new(),
        };
        settings.check().map_err(|e| {
            invalid(
                "cluster",
                format!("[cluster] {}", e.to_string().trim_start_matches("cluster: ")),
            )
        })?;
        Ok(settings)
    }
}
