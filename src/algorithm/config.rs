//! The knobs of the lock algorithms, as a scenario's `[algorithm]` table resolves them.
//!
//! Knobs exist so that known mistakes of real client libraries can be reproduced:
//! a sequential fan-out, no drift allowance, a quorum below a majority, or skipping the
//! elapsed-time check after acquisition.

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
            Fanout::Sequential => self.request_timeout_us * nodes as u64,
        };
        // Fencing adds its rounds to an attempt.
        if self.fencing {
            (1 + u64::from(self.fence_rounds)) * round
        } else {
            round
        }
    }
}

impl AlgorithmConfig {
    /// The longest an uncontended client may need to acquire once faults have healed:
    /// keys left behind expire within the ttl (plus 10% for slow node clocks), then the
    /// next attempt starts within one retry delay and takes at most two attempt times
    /// (one may straddle the expiry).
    pub fn liveness_bound_us(&self, nodes: usize) -> u64 {
        let ttl_us = self.ttl_ms * 1_000;
        ttl_us + ttl_us / 10 + self.retry_delay.max_us() + 2 * self.attempt_max_us(nodes)
    }

    /// The longest one acquire-hold-release operation can take.
    pub fn op_max_us(&self, nodes: usize) -> u64 {
        let attempts = u64::from(self.retry_count) + 1;
        let extensions = u64::from(self.max_extensions) + 1;
        attempts * (self.attempt_max_us(nodes) + self.retry_delay.max_us()) + extensions * self.ttl_ms * 1_000
    }
}
