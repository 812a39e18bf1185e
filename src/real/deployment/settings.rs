//! What a Sentinel deployment is made of and how its sentinels decide: the number of
//! replicas and sentinels, the sentinels' quorum and timeouts, and the data nodes'
//! `min-replicas-*` mitigation. [`Settings::check`] refuses what cannot work, with one
//! line that says why, before any process starts.

use super::super::RealError;
use crate::fault::Persistence;

/// A deployment's shape and its Sentinel and replication settings.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Settings {
    /// The name the sentinels monitor the master under (`sentinel monitor <name> ...`).
    pub name: String,
    /// Replicas of the master (R >= 1: a failover needs one to promote).
    pub replicas: usize,
    /// Sentinels (S >= 3: fewer cannot tell a dead master from their own partition).
    pub sentinels: usize,
    /// Sentinels that must agree the master is down before a failover (1..=S). The
    /// election that follows needs a majority of S whatever the quorum.
    pub quorum: usize,
    /// How long a sentinel waits for a valid reply before it marks an instance down.
    pub down_after_ms: u64,
    /// Sentinel's `failover-timeout`: how long a failover may take before it is aborted,
    /// and twice it before a sentinel tries the same master again.
    pub failover_timeout_ms: u64,
    /// Replicas reconfigured to the new master at once after a failover.
    pub parallel_syncs: usize,
    /// A master refuses writes unless this many replicas are connected with a lag of at
    /// most [`Settings::min_replicas_max_lag_s`]; 0 turns the check off (Redis's default).
    pub min_replicas_to_write: usize,
    /// The lag (seconds since the replica's last REPLCONF ACK) a replica may have and
    /// still count for [`Settings::min_replicas_to_write`].
    pub min_replicas_max_lag_s: u64,
    /// What each data node writes to disk.
    pub persistence: Persistence,
}

impl Default for Settings {
    /// One replica and three sentinels with a majority quorum; timeouts short enough for
    /// a run of seconds (Redis's own defaults, 30 s and 3 min, would need minutes per
    /// failover), long enough that a loaded machine does not fail over by itself.
    fn default() -> Settings {
        Settings {
            name: "lockstorm".into(),
            replicas: 1,
            sentinels: 3,
            quorum: 2,
            down_after_ms: 2_000,
            failover_timeout_ms: 10_000,
            parallel_syncs: 1,
            min_replicas_to_write: 0,
            min_replicas_max_lag_s: 10,
            persistence: Persistence::None,
        }
    }
}

impl Settings {
    /// The settings, or a one-line error naming the first one that cannot work.
    pub fn check(&self) -> Result<(), RealError> {
        let bad = |why: String| Err(RealError::Sentinel(why));
        if self.name.is_empty()
            || !self
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return bad(format!(
                "master name {:?} must be letters, digits, '-', '_' or '.'",
                self.name
            ));
        }
        if self.sentinels < 3 {
            return bad(format!(
                "{} sentinel(s): at least 3 are needed, so that a majority can elect a failover leader while one is down or cut off",
                self.sentinels
            ));
        }
        if self.quorum == 0 || self.quorum > self.sentinels {
            return bad(format!(
                "quorum {} with {} sentinels: it must be between 1 and the number of sentinels",
                self.quorum, self.sentinels
            ));
        }
        if self.replicas < 1 {
            return bad("0 replicas: a failover needs at least 1 replica to promote".into());
        }
        if self.replicas + 1 + self.sentinels > 126 {
            return bad(format!(
                "{} replicas and {} sentinels: a deployment has at most 126 members (each its own loopback IP below the clients')",
                self.replicas, self.sentinels
            ));
        }
        if self.down_after_ms == 0 || self.failover_timeout_ms == 0 {
            return bad("down_after_ms and failover_timeout_ms must be more than 0".into());
        }
        if self.parallel_syncs == 0 {
            return bad("parallel_syncs 0: at least 1 replica must be reconfigured at a time".into());
        }
        if self.min_replicas_to_write > self.replicas {
            return bad(format!(
                "min_replicas_to_write {} with {} replica(s): the master would refuse every write",
                self.min_replicas_to_write, self.replicas
            ));
        }
        if self.min_replicas_to_write > 0 && self.min_replicas_max_lag_s == 0 {
            return bad("min_replicas_max_lag_s 0 turns min_replicas_to_write off in Redis; give a lag of 1 s or more".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(change: impl FnOnce(&mut Settings)) -> String {
        let mut s = Settings::default();
        change(&mut s);
        s.check().expect_err("refused").to_string()
    }

    #[test]
    fn the_defaults_work() {
        Settings::default().check().unwrap();
    }

    #[test]
    fn impossible_settings_are_refused_in_one_line() {
        for (e, needle) in [
            (error(|s| s.quorum = 4), "quorum 4 with 3 sentinels"),
            (error(|s| s.quorum = 0), "quorum 0"),
            (error(|s| s.sentinels = 2), "2 sentinel(s): at least 3"),
            (error(|s| s.replicas = 0), "0 replicas"),
            (error(|s| s.min_replicas_to_write = 2), "refuse every write"),
            (error(|s| s.name = "a b".into()), "master name"),
        ] {
            assert!(e.starts_with("sentinel: ") && e.contains(needle), "{e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }
}
