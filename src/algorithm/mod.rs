//! The locks under test, as sans-IO state machines.
//!
//! An algorithm never reads a clock or touches a socket. Its driver (the simulator in
//! `sim/`, or the real backend) calls it in this order:
//!
//! 1. [`LockAlgorithm::acquire`] or [`LockAlgorithm::release`] when the client's workload
//!    wants to, with [`Now`]: the client's own clock readings at that moment;
//! 2. [`LockAlgorithm::on_reply`] for every reply from a node, and
//!    [`LockAlgorithm::on_timer`] when a timer it asked for comes due;
//! 3. after each call, the driver carries out the [`Output`]s pushed to `out`: send a
//!    command, arm a timer (on the client's monotonic clock), or note an outcome.
//!
//! While holding, [`LockAlgorithm::extend`] may be called (up to the configured number
//! of times), answered by `Extended` or `NotExtended` after its own replies and timers.
//!
//! Timers are never cancelled; an algorithm ignores a timer or reply it no longer
//! expects. Randomness (tokens, retry delays) comes from an RNG handed in at
//! construction, so the same seed gives the same decisions under any driver.
//!
//! One state machine, [`Redlock`], runs every lock of the family; the files split it by
//! concern: `round.rs` (the fan-out of one command to all nodes, shared by every phase),
//! `rw.rs` (seed 000's per-mode commands), `fair.rs` (the fair queue's design),
//! `fencing.rs` (token issue and its limits), `config.rs` (the knobs).

mod config;
mod fair;
mod fencing;
mod redlock;
mod round;
mod rw;

pub use config::{
    AlgorithmConfig, AlgorithmKind, Extend, Fanout, Mistakes, Release, TokenScope, WaitAfterSet,
};
pub use redlock::Redlock;

use crate::command::{Cmd, LockId, NodeId, Reply, Token};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// A client's clock readings. `mono_us` only moves forward at the clock's rate and is
/// what elapsed times and timers use; `wall_us` also carries offset and jumps and is
/// what an algorithm would send as a timestamp.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Now {
    pub mono_us: u64,
    pub wall_us: u64,
}

/// The mode a lock is taken in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Exclusive,
    /// A reader of a read-write lock: shares the lock with other readers.
    Read,
    /// A writer of a read-write lock: excludes readers and writers.
    Write,
}

impl Mode {
    /// Whether two holds in these modes may not overlap.
    pub fn conflicts(self, other: Mode) -> bool {
        !(self == Mode::Read && other == Mode::Read)
    }

    /// The name the mode has in a history (its serde name).
    pub fn name(self) -> &'static str {
        match self {
            Mode::Exclusive => "exclusive",
            Mode::Read => "read",
            Mode::Write => "write",
        }
    }
}

/// Identifies one request so its reply can be matched (and stale replies ignored).
pub type ReqId = u64;
/// Identifies one timer an algorithm armed.
pub type TimerId = u64;

/// A set of node indices (at most 64 nodes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NodeSet(pub u64);

impl NodeSet {
    pub fn insert(&mut self, n: NodeId) {
        self.0 |= 1 << n;
    }
    pub fn remove(&mut self, n: NodeId) {
        self.0 &= !(1 << n);
    }
    pub fn contains(self, n: NodeId) -> bool {
        self.0 & (1 << n) != 0
    }
    pub fn len(self) -> usize {
        self.0.count_ones() as usize
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The nodes in ascending order (one step per node in the set, not per possible node).
    pub fn iter(self) -> impl Iterator<Item = NodeId> {
        let mut bits = self.0;
        std::iter::from_fn(move || {
            (bits != 0).then(|| {
                let n = bits.trailing_zeros() as NodeId;
                bits &= bits - 1;
                n
            })
        })
    }
}

/// What an algorithm asks its driver to do, or tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Send `cmd` to `node`; its reply comes back through `on_reply` with `req`.
    Send { node: NodeId, req: ReqId, cmd: Cmd },
    /// Call `on_timer(id)` once the client's monotonic clock reads `at_mono_us`.
    Timer { id: TimerId, at_mono_us: u64 },
    /// The lock is held until the client's monotonic clock reads `valid_until_mono_us`.
    Acquired {
        token: Token,
        valid_until_mono_us: u64,
        nodes: NodeSet,
        attempts: u32,
        /// The fencing token, when the algorithm issues them (`algorithm/fencing.rs`).
        fence: Option<u64>,
    },
    /// Every attempt failed. `unknown` is set when some node never answered the last
    /// attempt, so the client cannot know what that node holds.
    NotAcquired {
        token: Token,
        unknown: bool,
        attempts: u32,
    },
    /// The release was sent; the client no longer holds the lock.
    Released { token: Token },
    /// The extension counted: the lock is held until `valid_until_mono_us`.
    Extended {
        token: Token,
        valid_until_mono_us: u64,
        nodes: NodeSet,
    },
    /// The extension failed: the lock is still held, but only until its earlier deadline;
    /// the client releases it as usual.
    NotExtended { token: Token },
}

/// A lock client's algorithm, driven by events. See the module doc for the call order.
pub trait LockAlgorithm: Send {
    /// Starts acquiring `lock` (with retries). Only called while idle.
    fn acquire(&mut self, now: Now, lock: LockId, mode: Mode, out: &mut Vec<Output>);
    /// Releases the held lock. Only called after `Acquired`.
    fn release(&mut self, now: Now, out: &mut Vec<Output>);
    /// Extends the held lock. Only called while holding, before the validity ends.
    fn extend(&mut self, now: Now, out: &mut Vec<Output>);
    /// A node answered request `req`.
    fn on_reply(&mut self, now: Now, req: ReqId, reply: Reply, out: &mut Vec<Output>);
    /// Timer `id` came due.
    fn on_timer(&mut self, now: Now, id: TimerId, out: &mut Vec<Output>);
}

/// Builds the state machine a scenario asks for, talking to nodes `0..nodes`.
pub fn build(config: &AlgorithmConfig, nodes: usize, rng: Rng) -> Box<dyn LockAlgorithm> {
    Box::new(redlock(config, nodes, rng))
}

/// The Redlock-family state machine of `config`, as a concrete type (`explore` clones
/// and hashes it).
pub fn redlock(config: &AlgorithmConfig, nodes: usize, rng: Rng) -> Redlock {
    match config.kind {
        // The single-instance lock is Redlock over one node with a quorum of one:
        // SET NX PX, then compare-and-delete, with the same validity bookkeeping.
        AlgorithmKind::Single => Redlock::new(config.clone(), 1, rng),
        AlgorithmKind::Redlock | AlgorithmKind::RwRedlock | AlgorithmKind::FairRwRedlock => {
            Redlock::new(config.clone(), nodes, rng)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NodeSet;

    #[test]
    fn a_node_set_lists_its_nodes_in_ascending_order() {
        for bits in [0u64, 1, 0b1011_0100, 1 << 63, u64::MAX, 0x8000_0000_0000_0001] {
            let set = NodeSet(bits);
            let listed: Vec<usize> = set.iter().collect();
            let expected: Vec<usize> = (0..64).filter(|&n| set.contains(n)).collect();
            assert_eq!(listed, expected, "{bits:#x}");
        }
    }
}
