//! The knobs of the lock algorithms, as a scenario's `[algorithm]` table resolves them.
//!
//! Knobs exist so that known mistakes of real client libraries can be reproduced:
//! a sequential fan-out, no drift allowance, a quorum below a majority, or skipping the
//! elapsed-time check after acquisition. The classic client mistakes of the lock's own
//! commands (a release that does not check the token, an extension that does not check
//! ownership, a token reused across acquisitions) are grouped in [`Mistakes`]; every one
//! defaults to the correct choice.

use crate::rng::Dist;
use serde::{Deserialize, Serialize};

/// Which lock algorithm the clients run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlgorithmKind {
    /// One Redis node: `SET k token NX PX ttl`, compare-and-delete release (seeds 002, 003).
    Single,
    /// N independent masters, quorum N/2+1 (seed 002).
    Redlock,
    /// Seed 000's read-write Redlock: `w_{L}`, `r_{L}` and the two scripts.
    RwRedlock,
    /// The read-write Redlock with seed 000's fairness queue `fair_{L}` (`algorithm/fair.rs`).
    FairRwRedlock,
}

impl AlgorithmKind {
    /// The name scenario files and a history's `meta` line use.
    pub fn name(self) -> &'static str {
        match self {
            AlgorithmKind::Single => "single",
            AlgorithmKind::Redlock => "redlock",
            AlgorithmKind::RwRedlock => "rw_redlock",
            AlgorithmKind::FairRwRedlock => "fair_rw_redlock",
        }
    }

    /// The kind a `meta` line names, if it is one of lockstorm's own.
    pub fn from_name(name: &str) -> Option<AlgorithmKind> {
        serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
    }

    /// Whether a client's wall clock reaches the nodes: the read-write scripts take `now`
    /// from it (a reader's expiry, the writer's cut-off for stale readers, the fair
    /// queue's order). Every kind reads the monotonic clock for its validity.
    pub fn reads_wall_clock(self) -> bool {
        self.is_read_write()
    }

    /// Whether clients take the lock in read and write modes (else exclusive).
    pub fn is_read_write(self) -> bool {
        matches!(self, AlgorithmKind::RwRedlock | AlgorithmKind::FairRwRedlock)
    }
}

/// How an acquisition contacts the nodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fanout {
    /// All nodes at once (seed 002's multiplexing).
    Parallel,
    /// One after another, each with the per-request timeout (seeds 002 step 2, 004).
    Sequential,
}

/// How a holder releases a string lock (an exclusive lock or a writer's `w_{L}`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Release {
    /// Delete the key only if it holds the caller's token (`src/scripts/unlock.lua`).
    #[default]
    Compare,
    /// Plain `DEL`: deletes whoever's key is there (seed 002: "Using just DEL is not safe
    /// as a client may remove the lock of another client"). It also serves the unlock
    /// after a failed attempt, which then deletes the lock of the client that holds it.
    Del,
}

/// How a holder extends a string lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Extend {
    /// `PEXPIRE` only if the key holds the caller's token (`src/scripts/extend.lua`),
    /// counted only if the round ends before the current validity does.
    #[default]
    Compare,
    /// Plain `PEXPIRE`, as a heartbeat that refreshes a lock on a timer sends it: a quorum
    /// of 1 replies is taken as proof that the lock is still the client's own (what the
    /// compare script would make true), so the extension is judged like an acquisition
    /// (quorum, validity left after the round) and not against the old deadline. PEXPIRE
    /// answers 1 whenever the key exists, whoever holds it.
    Pexpire,
}

/// Where lock tokens come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenScope {
    /// A new random token per acquisition attempt (seed 002: "unique across all clients
    /// and all lock requests").
    #[default]
    Random,
    /// One token per client, reused by every acquisition (a client id as the lock
    /// value): a late release of an earlier hold deletes the client's newer key. A
    /// release is late only if it can be overtaken by the client's next SET, which one
    /// ordered connection per node never allows (`[network] fifo = false` allows it).
    PerClient,
}

/// The classic client mistakes, each off (the correct choice) by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mistakes {
    pub release: Release,
    pub extend: Extend,
    pub token: TokenScope,
}

/// Resolved algorithm parameters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlgorithmConfig {
    pub kind: AlgorithmKind,
    /// Key time-to-live, sent as `PX`.
    pub ttl_ms: u64,
    /// Clock drift allowance as a share of the ttl; 2 ms are always added (seed 002).
    pub drift_factor: f64,
    /// Retries after the first attempt before an acquisition gives up.
    pub retry_count: u32,
    /// The random delay before each retry.
    pub retry_delay: Dist,
    pub fanout: Fanout,
    /// How long the client waits for one node before counting it as not acquired.
    pub request_timeout_us: u64,
    /// Acknowledgements needed; N/2+1 unless the scenario overrides it.
    pub quorum: usize,
    /// Whether the elapsed acquisition time is subtracted from the validity (and an
    /// acquisition with no validity left rejected). `false` reproduces clients that
    /// start the validity clock when the last reply arrives.
    pub check_elapsed: bool,
    /// Extensions allowed per hold (0: clients never extend; seed 002 bounds them).
    pub max_extensions: u32,
    /// A client extends once its remaining validity falls to this.
    pub extend_before_us: u64,
    /// Whether acquisitions issue fencing tokens (`algorithm/fencing.rs`).
    pub fencing: bool,
    /// Rounds of token issue: 2 (INCR, then raise a quorum to the token) or 1 (the naive
    /// "INCR on a quorum and take the max", which is not monotonic).
    pub fence_rounds: u8,
    /// The fair variant: an acquisition that has waited this long joins the queue.
    pub fair_after_us: u64,
    /// Client mistakes to reproduce; all off by default.
    pub mistakes: Mistakes,
    /// `WAIT` after the lock's SET, as a mitigation of asynchronous replication; off
    /// (`None`) by default, as in seeds 002 and 003.
    pub wait: Option<WaitAfterSet>,
}

/// `[algorithm] wait_replicas` and `wait_timeout`: after a node grants the lock the
/// client sends `WAIT replicas timeout` to it, and counts the node only if that many
/// replicas acknowledged the SET. A node whose replicas do not answer in time is
/// counted as not granted: the attempt fails and is undone like any other.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitAfterSet {
    pub replicas: u32,
    pub timeout_ms: u64,
}

impl WaitAfterSet {
    /// How long the client waits for a WAIT's answer: the server's own timeout, then the
    /// request timeout for the reply to come back.
    pub fn round_timeout_us(&self, request_timeout_us: u64) -> u64 {
        self.timeout_ms
            .saturating_mul(1_000)
            .saturating_add(request_timeout_us)
    }
}

impl AlgorithmConfig {
    /// The drift allowance in microseconds: `ttl * drift_factor + 2 ms`.
    pub fn drift_us(&self) -> u64 {
        (self.ttl_ms as f64 * 1_000.0 * self.drift_factor) as u64 + 2_000
    }

    /// The longest one attempt can take before the client decides.
    pub fn attempt_max_us(&self, nodes: usize) -> u64 {
        let round = match self.fanout {
            Fanout::Parallel => self.request_timeout_us,
            Fanout::Sequential => self.request_timeout_us.saturating_mul(nodes as u64),
        };
        // Fencing adds its rounds to an attempt, WAIT its own (one node after another
        // if the fan-out is sequential).
        let fenced = if self.fencing {
            (1 + u64::from(self.fence_rounds)).saturating_mul(round)
        } else {
            round
        };
        let wait = self.wait.map_or(0, |w| {
            let one = w.round_timeout_us(self.request_timeout_us);
            match self.fanout {
                Fanout::Parallel => one,
                Fanout::Sequential => one.saturating_mul(nodes as u64),
            }
        });
        fenced.saturating_add(wait)
    }
}

impl AlgorithmConfig {
    /// How these settings depart from the algorithm as its seed specifies it (seed 002's
    /// Redlock and single-instance lock, seed 000's read-write lock, and a fencing token
    /// that two rounds keep monotonic): each a deliberate mistake a scenario reproduces,
    /// in words. Empty for the algorithm as specified, whatever its timings. `nodes`: the
    /// scenario's node count (a quorum below its majority is a departure).
    pub fn departures(&self, nodes: usize) -> Vec<String> {
        let mut out = Vec::new();
        let majority = nodes / 2 + 1;
        if self.quorum < majority {
            out.push(format!(
                "a quorum of {} of {nodes} nodes, below a majority ({majority})",
                self.quorum
            ));
        }
        if !self.check_elapsed {
            out.push("no elapsed-time check (`check_elapsed = false`)".into());
        }
        if self.mistakes.release == Release::Del {
            out.push("release by a plain DEL (`release = \"del\"`)".into());
        }
        if self.mistakes.extend == Extend::Pexpire && self.max_extensions > 0 {
            out.push("extension by a plain PEXPIRE (`extend = \"pexpire\"`)".into());
        }
        if self.mistakes.token == TokenScope::PerClient {
            out.push("one token per client (`token = \"per_client\"`)".into());
        }
        if self.fencing && self.fence_rounds < 2 {
            out.push("fencing tokens issued in one round (`fence_rounds = 1`)".into());
        }
        out
    }
}

impl AlgorithmConfig {
    /// The longest an uncontended client may need to acquire once faults have healed:
    /// keys left behind expire within the ttl (plus 10% for slow node clocks), then the
    /// next attempt starts within one retry delay and takes at most two attempt times
    /// (one may straddle the expiry).
    pub fn liveness_bound_us(&self, nodes: usize) -> u64 {
        // Saturating: a scenario refuses a bound above `limits::MAX_TIME_US`, and must
        // be able to compute it to do so.
        let ttl_us = self.ttl_ms.saturating_mul(1_000);
        ttl_us
            .saturating_add(ttl_us / 10)
            .saturating_add(self.retry_delay.max_us())
            .saturating_add(self.attempt_max_us(nodes).saturating_mul(2))
    }

    /// The longest one acquire-hold-release operation can take.
    pub fn op_max_us(&self, nodes: usize) -> u64 {
        let attempts = u64::from(self.retry_count) + 1;
        let extensions = u64::from(self.max_extensions) + 1;
        attempts
            .saturating_mul(
                self.attempt_max_us(nodes)
                    .saturating_add(self.retry_delay.max_us()),
            )
            .saturating_add(extensions.saturating_mul(self.ttl_ms.saturating_mul(1_000)))
    }
}

#[cfg(test)]
mod tests {
    use super::AlgorithmKind;

    #[test]
    fn a_kind_is_named_as_scenario_files_and_histories_name_it() {
        for kind in [
            AlgorithmKind::Single,
            AlgorithmKind::Redlock,
            AlgorithmKind::RwRedlock,
            AlgorithmKind::FairRwRedlock,
        ] {
            let serde_name = serde_json::to_value(kind).unwrap();
            assert_eq!(serde_name.as_str(), Some(kind.name()));
            assert_eq!(AlgorithmKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(AlgorithmKind::from_name("redis-py"), None);
    }
}

#[cfg(test)]
mod departure_tests {
    use crate::scenario::Scenario;
    use std::path::Path;

    fn departures(file: &str) -> Vec<String> {
        let s = Scenario::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(file)).unwrap();
        s.algorithm.departures(s.nodes)
    }

    #[test]
    fn the_broken_variants_depart_from_the_seed_and_redlock_as_specified_does_not() {
        assert_eq!(
            departures("release-del.toml"),
            ["release by a plain DEL (`release = \"del\"`)"]
        );
        assert_eq!(
            departures("token-per-client.toml"),
            ["one token per client (`token = \"per_client\"`)"]
        );
        assert_eq!(
            departures("redlock-minority-quorum.toml"),
            ["a quorum of 2 of 5 nodes, below a majority (3)"]
        );
        assert_eq!(departures("network-delay-no-elapsed-check.toml").len(), 1);
        assert_eq!(departures("extend-pexpire.toml").len(), 1);
        assert_eq!(departures("fencing-one-round.toml").len(), 1);
        // Faults, timings, persistence and an unfenced resource are not departures from
        // the algorithm: these run it as specified.
        for file in [
            "partition.toml",
            "redlock-chaos.toml",
            "node-clock-jump.toml",
            "restart-without-persistence.toml",
            "fencing-pause-unfenced.toml",
            "fencing-pause.toml",
            "extension.toml",
            "single.toml",
            "replica-failover.toml",
        ] {
            assert_eq!(departures(file), Vec::<String>::new(), "{file}");
        }
    }
}
