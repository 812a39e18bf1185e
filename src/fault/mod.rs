//! Faults: a typed enum, the schedule a run applies, and the random nemesis that plans one.
//!
//! A scenario's `[[faults]]` (scripted) and `[nemesis]` (random, [`nemesis`]) both become
//! a list of [`PlannedFault`]s before the run starts. The plan is fixed by the seed,
//! written to summary.json next to it, and every start and end is recorded in the
//! history, so a reader sees exactly which faults a seed exercised.
//!
//! How long a fault lasts is not part of the [`Fault`] but of its [`PlannedFault`]
//! (`duration_us`): the scenario's `duration` for most kinds, `restart_after` for a
//! crash, `promote_after` for a failover. A fault without a duration lasts until the
//! heal at the end of the workload. A clock jump is instantaneous: it starts and ends
//! at the same time, and the clock stays moved.
//!
//! A fault may also be aimed ([`aim`]): it starts on an event (an acquire succeeded, a
//! hold is contended) with targets relative to the hold, and the driver resolves it into
//! an ordinary planned fault at that moment.
//!
//! Faults are sets, not toggles: faults of one kind may overlap on one target, and the
//! target's state is what all the active ones compose to ([`active`] for nodes and
//! clients, [`links`] for the network), in both drivers.

pub mod active;
pub mod aim;
pub mod link_lines;
pub mod links;
pub mod nemesis;
pub mod spans;

pub use active::{Process, ProcessFaults};
pub use aim::{Aim, ClientAim, Firing, NodeAim, On, Trigger};
pub use links::LinkFaults;
pub use nemesis::{Nemesis, NemesisRate};

use crate::command::NodeId;
use serde::{Deserialize, Serialize};

/// Index of a client in the scenario (0-based).
pub type ClientId = usize;

/// What goes wrong. In a history the fields are flattened next to `kind`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// Messages between any of `clients` and any of `nodes` are lost: both ways, or only
    /// in one `direction` (a one-way cut).
    Partition {
        nodes: Vec<NodeId>,
        clients: Vec<ClientId>,
        #[serde(default, skip_serializing_if = "CutDirection::is_both")]
        direction: CutDirection,
    },
    /// The node's process dies: it answers nothing until it restarts at the fault's end,
    /// with what its persistence kept. `power_loss` takes the machine down too, which
    /// loses the writes `aof_everysec` had not yet synced (a plain kill loses nothing
    /// the kernel already has).
    Crash {
        node: NodeId,
        #[serde(default, skip_serializing_if = "is_false")]
        power_loss: bool,
    },
    /// Stop-the-world: a node stops serving (requests queue, nothing expires until it
    /// resumes) or a client stops running. A client pause waits for its `point` of the
    /// lock cycle after the fault's time; without one it starts at once.
    Pause {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<NodeId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<ClientId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        point: Option<PausePoint>,
    },
    /// The wall clock of a node or client steps by `by_us` (forward if positive). A
    /// client's monotonic clock does not move; a node expires keys by its wall clock.
    ClockJump {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<NodeId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<ClientId>,
        by_us: i64,
    },
    /// The clock of a node or client runs at `rate` times true time (1.02 is 2% fast)
    /// until the fault ends.
    ClockRate {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        node: Option<NodeId>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        client: Option<ClientId>,
        rate: f64,
    },
    /// Messages between `clients` and `nodes`, both ways, take `extra_us` longer. Links
    /// stay FIFO, so messages sent after the spike queue behind the delayed ones.
    Delay {
        nodes: Vec<NodeId>,
        clients: Vec<ClientId>,
        extra_us: u64,
    },
    /// Each message between `clients` and `nodes` is lost with `probability`.
    Loss {
        nodes: Vec<NodeId>,
        clients: Vec<ClientId>,
        probability: f64,
    },
    /// The master of a replicated `node` dies; at the fault's end its asynchronous
    /// replica is promoted and serves under the node's address with whatever it had
    /// received (seed 002's counterexample). The old master comes back as the replica.
    Failover { node: NodeId },
    /// The link between the master of `node` (when the fault starts) and its replicas is
    /// cut both ways: the replicas stop receiving its writes while clients and sentinels
    /// still reach it. At the fault's end they catch up, as Redis's partial resync does;
    /// a failover during the cut promotes a replica without what the master took since
    /// the cut began (issue 39's "replication cut before a failover").
    ReplicationCut { node: NodeId },
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Which way a partition cuts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutDirection {
    #[default]
    Both,
    /// Requests from clients are lost; replies still get through.
    ToNodes,
    /// Replies to clients are lost; requests still arrive and are executed.
    ToClients,
}

impl CutDirection {
    pub fn is_both(&self) -> bool {
        *self == CutDirection::Both
    }
}

/// Where in its lock cycle a paused client stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PausePoint {
    /// Right after the acquisition succeeds, before the client does anything with it.
    AfterAcquire,
    /// When a reply to its acquisition arrives, before the algorithm sees it: the
    /// algorithm computes the elapsed time and the validity only after the pause.
    BeforeValidityCheck,
    /// At the fault's time if the client holds a lock then, else at its next acquisition.
    WhileHolding,
}

/// How a node keeps its keys across a restart.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Persistence {
    /// A restart starts empty.
    #[default]
    None,
    /// Append-only file, fsync once a second: a kill loses nothing, a power loss loses
    /// the writes since the last fsync.
    AofEverysec,
    /// Append-only file, fsync on every write: nothing is lost.
    AofAlways,
}

/// Asynchronous replication: every node is a master with one replica that applies the
/// master's writes `lag_us` after they happen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Replication {
    pub lag_us: u64,
}

impl Fault {
    /// The nodes and clients a fault names directly. A fault that names no client (a
    /// node crash, a node's clock) hits only nodes, and the other way round.
    pub fn targets(&self) -> (Vec<NodeId>, Vec<ClientId>) {
        match self {
            Fault::Partition { nodes, clients, .. }
            | Fault::Delay { nodes, clients, .. }
            | Fault::Loss { nodes, clients, .. } => (nodes.clone(), clients.clone()),
            Fault::Crash { node, .. } | Fault::Failover { node } | Fault::ReplicationCut { node } => {
                (vec![*node], Vec::new())
            }
            Fault::Pause { node, client, .. }
            | Fault::ClockJump { node, client, .. }
            | Fault::ClockRate { node, client, .. } => {
                (node.iter().copied().collect(), client.iter().copied().collect())
            }
        }
    }

    /// The kind's name as scenario files and histories write it.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::Partition { .. } => "partition",
            Fault::Crash { .. } => "crash",
            Fault::Pause { .. } => "pause",
            Fault::ClockJump { .. } => "clock_jump",
            Fault::ClockRate { .. } => "clock_rate",
            Fault::Delay { .. } => "delay",
            Fault::Loss { .. } => "loss",
            Fault::Failover { .. } => "failover",
            Fault::ReplicationCut { .. } => "replication_cut",
        }
    }
}

/// Where a planned fault came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Script,
    Nemesis,
    /// Made by an aimed entry (scripted or drawn) when its trigger came ([`aim`]); the
    /// run's plan says which entry and which event.
    Aimed,
}

/// A fault with its time: it starts at `at_us` and heals `duration_us` later, or at the
/// end of the workload phase when the duration is `None`. An aimed entry (`aim`) is a
/// template the driver resolves into such faults when its trigger comes ([`aim`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedFault {
    pub id: usize,
    pub at_us: u64,
    pub duration_us: Option<u64>,
    pub origin: Origin,
    #[serde(flatten)]
    pub fault: Fault,
    /// An aimed entry: it starts on `aim.when` (`at_us` is the earliest), with the
    /// targets the aim names resolved then; its own fields for those are placeholders.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aim: Option<Aim>,
    /// In a run's plan: how an aimed entry played out, or which entry a fault came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firing: Option<Firing>,
}
