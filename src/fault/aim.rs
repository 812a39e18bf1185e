//! Aimed faults: a fault that starts on an event instead of at a time, with targets
//! relative to the hold that triggered it. Shared by both drivers, sans-IO.
//!
//! A scenario's aimed entry (a [`PlannedFault`] with an [`Aim`]) is a template: its
//! `at_us` is only the earliest time it may fire, and the target fields its aim names
//! (`node`/`nodes`, `client`/`clients`) are placeholders. This module holds what a
//! scenario and a run's plan say of them; the aimer (`crate::aimer`) fires them. A
//! driver feeds the aimer what it sees of the clients (an acquire invoked, an acquire that succeeded
//! and the nodes it succeeded on, a hold that ended, an acquire that ended without one),
//! with a way to ask which nodes a client can reach now; at the moment a template's
//! trigger comes, the aimer returns the ordinary [`PlannedFault`]s it becomes (next free
//! ids, [`Origin::Aimed`], `at_us` the trigger's time plus the aim's `after_us`), and the
//! driver starts them through the same path as any planned fault. Fault sets, the
//! history and the checker see nothing new but the origin. The aimer reads no clock and
//! draws nothing, so the same events give the same faults: a seed's history stays
//! byte for byte the same.
//!
//! Triggers ([`On`]): `acquiring` (a client invokes an acquire; with `replied = k`, the
//! moment the k-th node answers that acquisition instead: mid-acquisition), `acquired`
//! (an acquire succeeds, and the hold it reports is still in force: an `ok` whose
//! validity already ran out is no hold to aim at), `contended` (a hold is in force on a
//! lock while another client is acquiring it: the moment the second of the two begins).
//! A trigger may name the client (for `contended`, the holder) and count: `nth` = 3
//! fires on the third matching event at or after the entry's earliest time; an
//! `acquiring` trigger may count only acquisitions that start with the lock free
//! (`uncontended`). Each entry fires once.
//!
//! Targets are relative to the *holder*: the client that acquired (or, for `acquiring`,
//! the client that is acquiring; for `contended`, the client holding the lock).
//! - the holder's nodes: the nodes its acquire succeeded on, as its `ok` names them; an
//!   `ok` that names none (a worker's) and an acquire still under way stand for every node
//!   the holder can reach at that moment (not down, not cut either way);
//! - [`NodeAim::Majority`]: a bare majority of the holder's nodes (⌊k/2⌋+1 of k), lowest
//!   indices first: wiping them lets another client make a quorum whatever the holder
//!   had, since it leaves the others at least ⌈N/2⌉ − ⌈k/2⌉ + ⌊k/2⌋ + 1 ≥ ⌊N/2⌋ + 1 nodes;
//! - [`NodeAim::Shared`]: of the holder's nodes, the one the most other clients can reach
//!   at that moment, lowest index among equals: the node the holder's quorum shares with
//!   the other side of a partition (with no partition, the holder's lowest node);
//! - [`NodeAim::Pending`]: for `acquiring`, the nodes that have not answered the
//!   acquisition yet (with `replied = k`, all but the k that did; at the invoke, every
//!   node the client can reach): "cut off the last node during an acquisition";
//! - [`ClientAim::Holder`] and [`ClientAim::Others`] (every client but the holder).
//!
//! Which node answered a client is what the driver sees: a built-in client's replies,
//! and a worker's bytes coming back through its proxy to that node (so for a worker
//! the answer has reached its library when the fault starts; for a built-in client the
//! fault starts before the client sees the k-th answer).
//!
//! A fault kind that names one node (crash, failover, a node's pause or clock) aimed at
//! several becomes one fault per node, all starting together; a kind that names a set
//! (partition, delay, loss) gets the set. An aim whose target set comes out empty fires
//! into no fault.
//!
//! The aimer sees the workload clients only. The probe client (`clients.probe`, after
//! them) observes fault tolerance on a lock of its own; were its acquires triggers, a
//! fault aimed at "the holder" would often land on the probe, which contends with
//! nobody, and the fault would prove nothing about the lock under test. So the probe's
//! records are ignored, and no relative target (`others`, `shared`'s count) includes it.

use super::ClientId;
use crate::command::NodeId;
use serde::{Deserialize, Serialize};

/// The event an aimed fault waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum On {
    /// A client invokes an acquire.
    Acquiring,
    /// An acquire succeeds.
    Acquired,
    /// A hold is in force while another client acquires the same lock.
    Contended,
}

impl On {
    pub fn name(self) -> &'static str {
        match self {
            On::Acquiring => "acquiring",
            On::Acquired => "acquired",
            On::Contended => "contended",
        }
    }
}

/// When an aimed fault fires: the `nth` event `on` (of `client`, if named; for
/// `contended`, `client` is the holder) at or after the entry's earliest time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Trigger {
    pub on: On,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientId>,
    pub nth: u32,
    /// `acquiring` only: fire when this many nodes have answered the acquisition (none:
    /// at its invoke).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replied: Option<u32>,
    /// `acquiring` only: count only an acquisition invoked while no other workload
    /// client held the lock (by the records: its acquire succeeded, its release not yet
    /// sent), one that can succeed: a fault aimed at it meets a lock being granted, not
    /// a refusal.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub uncontended: bool,
}

/// Nodes relative to the holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeAim {
    /// Every node the holder acquired on.
    Holder,
    /// A bare majority of the holder's nodes, lowest first.
    Majority,
    /// The holder's node the most other clients can reach (lowest among equals).
    Shared,
    /// The nodes that have not answered the acquisition in progress yet.
    Pending,
}

impl NodeAim {
    pub fn name(self) -> &'static str {
        match self {
            NodeAim::Holder => "holder",
            NodeAim::Majority => "majority",
            NodeAim::Shared => "shared",
            NodeAim::Pending => "pending",
        }
    }
}

/// Clients relative to the holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientAim {
    Holder,
    /// Every client but the holder.
    Others,
}

impl ClientAim {
    pub fn name(self) -> &'static str {
        match self {
            ClientAim::Holder => "holder",
            ClientAim::Others => "others",
        }
    }
}

/// What makes a planned fault aimed: its trigger, a delay after it, and which of its
/// targets are relative (the others are the entry's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Aim {
    pub when: Trigger,
    #[serde(default)]
    pub after_us: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<NodeAim>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clients: Option<ClientAim>,
}

/// The event an aimed entry fired on, as the history shows it at `t_us`: the `ok` (or
/// `invoke`) of `holder` on `lock`, and for `contended` the client that was waiting.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sighting {
    pub on: On,
    pub t_us: u64,
    pub holder: ClientId,
    pub lock: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiter: Option<ClientId>,
    /// The holder's nodes the targets were resolved from.
    pub nodes: Vec<NodeId>,
    /// `acquiring` with `replied`: the nodes that had answered the acquisition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered: Option<Vec<NodeId>>,
}

/// How an aimed entry played out, in a run's plan (summary.json).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Firing {
    /// An aimed entry whose trigger never came during the workload: it did nothing.
    NeverFired,
    /// An aimed entry that fired and became the faults `into` (empty: its targets were).
    Fired { by: Sighting, into: Vec<usize> },
    /// A fault that aimed entry `entry` became.
    FiredFrom { entry: usize, by: Sighting },
}
