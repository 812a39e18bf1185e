//! The history of a run: one JSON object per line (JSONL), the contract between a driver
//! (the simulator, the real backend, or any client in any language) and the checker.
//!
//! Every line has `type` and `t_us`, the harness's true time in microseconds since the
//! run began. Types:
//!
//! - `meta` (first line): `scenario`, `seed`, `algorithm`, `nodes`, `clients`, `ttl_ms`,
//!   and `liveness_bound_us`, the longest an uncontended probe may wait after the heal.
//!   Optional: `writer_wait_bound_us`, the longest a writer may wait for a read-write
//!   lock before the checker reports starvation. `worker` (when the clients were worker
//!   processes running a lock library): `library` and `version` as the worker's
//!   `hello_ok` named them, and `command`, the worker's argv. Histories without it parse
//!   as before. `probe_client`, the client that takes
//!   a lock of its own, which no other client uses, throughout the workload (the probe of
//!   `[clients] probe`): the fault-tolerance judge counts its acquisitions while a
//!   majority was reachable, and the availability of an uncontended client is its
//!   success share. `cut` (`lines`, `context`): the file keeps only the lines its report
//!   cites, with `context` lines either side, of `lines`; the rest are blank ([`cut`]).
//!   The checker refuses a cut history.
//! - `invoke`: a client starts an operation: `client`, `op` (`acquire` | `release` |
//!   `extend`), `lock`, `mode` (`exclusive` | `read` | `write`), and `phase` (`workload`,
//!   the default, or `probe` for the liveness probes after the heal).
//! - `ok` / `fail` / `info`: the operation ended: acquired (or released, or extended),
//!   definitely not, or unknown (a node never answered). An `ok` acquire carries `token`,
//!   `valid_until_us` (the true time at which the client's own clock says its validity
//!   ends), `nodes` (which nodes acknowledged), `attempts`, and `fence` (the fencing
//!   token, when the algorithm issues them). A worker client's `ok` acquire (or extend)
//!   may carry `worker_token`, the library's own lock value, beside lockstorm's `token`;
//!   its `info` carries `error`, what the library said (a refused connection, a timeout).
//!   An `ok` acquire without `valid_until_us` is a hold with no expiry: it lasts until
//!   its `release` is invoked (a worker that reported `expires: false`), or until a `lost`.
//! - Extensions: a holder invokes `extend` (same `lock`, `mode`, `token`); an `ok` extend
//!   carries the new `valid_until_us` and `nodes`. An extension that succeeds before the
//!   current deadline continues the hold; one that succeeds after it (the client's clock
//!   ran slow) starts a new hold at the `ok`. A `fail` extend means the hold ends at the
//!   earlier deadline: the client stops working and releases (by then, or later: either
//!   way the hold ends at the earlier of the release and the deadline).
//! - `belief`: a holder's believed validity moved because its clock changed (a clock
//!   rate fault started or ended during the hold): `client`, `lock`, `token` (of the
//!   hold), and `valid_until_us`, the true time at which the client's clock now says its
//!   validity ends. From then on the hold ends at the earlier of its release and this
//!   belief, until the next belief or extension. A belief must refer to a hold that is
//!   open (acquired and not yet released, same token); one that comes after the hold's
//!   validity already ran out and says the client believes again starts a new hold, as
//!   a late extension does.
//! - `write`: the guarded resource received a write from a client that believed it held
//!   `lock`: `client`, `lock`, `token` (of the lock hold), `fence` (if fenced), and
//!   `accepted` (false when the resource rejected a stale fencing token). `t_us` is when
//!   the resource applied or rejected it.
//! - `fault`: a fault `start`s or `end`s (`action`), with its `id`, `origin` and the
//!   fault's own fields, flattened: `kind` (`partition`, `crash`, `pause`, `clock_jump`,
//!   `clock_rate`, `delay`, `loss`, `failover`) and, by kind, `nodes`, `clients`,
//!   `direction`, `node`, `client`, `power_loss`, `point`, `by_us`, `rate`, `extra_us`,
//!   `probability` (see [`Fault`]). A crash ends when the node restarts, a failover when
//!   the replica is promoted; a clock jump starts and ends at the same time. A client
//!   pause waiting for a point of the lock cycle starts when the client reaches it.
//!   Faults may overlap, also of one kind on one target, and compose: a node is down
//!   while any crash or failover of it is active, a process paused while any pause on
//!   it is, a clock runs at the product of its active `rate`s, jumps add up, a link is
//!   cut while any partition cuts it and its delays add up (see [`crate::fault::active`]).
//!   `origin` is `script` (a `[[faults]]` entry), `nemesis` (drawn from the seed) or
//!   `aimed`: made when an aimed entry's trigger came (`crate::aimer`), with the next
//!   free id after the run's plan; it starts on the line right after the `invoke` or `ok`
//!   that triggered it (or `after` it), and summary.json's `fault_plan` says which entry
//!   and which event (`firing`). An aimed entry that never fired has no line at all.
//! - `heal`: the workload stops and its faults heal: every one ends here but a crash or
//!   failover with a planned end, whose `end` line comes at that end, later; the
//!   liveness probe starts once clients are idle and every such node is back.
//! - `lost`: a worker client's library said it no longer holds `lock` (`client`, `lock`,
//!   `token` of the hold): the hold ends here, at `t_us`, if it had not ended already. A
//!   `lost` about a lock the client does not hold (its library noticed after the
//!   release) changes nothing.
//! - `node`: what a node did to one key of a lock, so a story's claims about the nodes
//!   can be checked from the history: `node`, `lock`, `key` (the lock's name, `w_{L}` or
//!   `r_{L}`), `action`, and by action: `set` (`client`, `token`, `ttl_ms`,
//!   `expire_at_node_us`: the expiry on the node's own wall clock), `extended` (`client`,
//!   `token` of the key there, `ttl_ms`, `checked`: whether the command compared the
//!   token, `expire_at_node_us`), `expired` (`token`, `expire_at_node_us`, and
//!   `expired_at_us`, the true time the node's clock reached it: expiry is lazy, as in
//!   Redis, so the line comes when the node next touches the key; an `r_{L}` entry
//!   dropped by a writer's script names that writer as `client`), `deleted` (`client`,
//!   `token` of the key deleted, `checked`), `lost` (`token`: the node crashed and what
//!   its persistence kept does not have the key; the line comes at the crash), and at a
//!   failover `replicated` / `unreplicated` (`token`, `lag_us`: the master's key had or
//!   had not reached the replica when the master died) and `promoted` (`token`: the
//!   promoted replica serves this key, at the promotion). The simulator writes them
//!   unless the scenario says `node_events = false`. The real backend writes `set`,
//!   `extended` and `deleted` from the commands its own clients sent and the replies
//!   they got (at the reply; `crate::real`'s `node_lines`), not yet expiry, loss or
//!   replication.
//!   Histories without them are read and checked as before: the checker only checks
//!   their node and client numbers; the report reads them to name each finding's
//!   anomaly (`crate::report::anomaly`).
//! - `driver_stall`: lockstorm's real driver itself did not run from `t_us - lag_us` to
//!   `t_us` (a timer fired `lag_us` late; it ticks every 50 ms and records a lag of
//!   100 ms or more). Silence then is the harness's: the checker sets aside a liveness
//!   finding whose window meets a stall, and says so, instead of blaming the lock.
//! - `sentinel`: what a sentinel of a `[sentinel]` deployment said (`+sdown`, `+odown`,
//!   `+switch-master` with the old master in `from`, `+failover-end`,
//!   `+convert-to-slave`, ...), about which member. The keys a switch lost are `node`
//!   lines (`unreplicated`: the promoted replica lacked the old master's key). The
//!   checker reads nothing from them; stories cite them.
//! - `link`: what a link fault did to one message between a client and a node
//!   ([`LinkEvent`]): `client`, `node`, `dir` (`to_node` or `to_client`), `action`
//!   (`dropped`, `held` by a cut, `released` after a hold, `delayed`), `by_us` (the
//!   delay, or how long a held message was held), and, when the driver knows them, the
//!   `lock` it was about and the client's operation in progress (`op`). The checker
//!   reads them as the touches of the partitions, delays and losses active on that
//!   link ([`crate::checker::touch`]). A `to_client` message is a reply; the request it
//!   answers was applied.
//!
//! A client holds a lock from its `ok` acquire until the earliest of its `release` invoke,
//! a `lost`, and the `valid_until_us` in force (of the acquire, a later extension or `belief`). Operations of one client never overlap. A history may end
//! with operations still open (the run was cut off).
//!
//! In memory, from the driver that makes an event through the sink to the checker, an
//! event's lock and key names are shared, its token is kept inline and its nodes are a
//! bit mask ([`compact`]): an event allocates nothing of its own, and the JSONL it is
//! written as is the same byte for byte. So an `ok` line's `nodes` are read as a set: in
//! any order, a node named twice counts once, and one numbered 64 or more is refused
//! (lockstorm writes them ascending, each once).

pub mod compact;
pub mod cut;
mod parallel;

use crate::algorithm::Mode;
use crate::fault::{Fault, Origin};
pub use compact::{LockName, Names, NodeSet, Token};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::Path;

/// One line of a history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Meta(Meta),
    Invoke(Op),
    Ok(Op),
    Fail(Op),
    Info(Op),
    Fault(FaultEvent),
    Heal { t_us: u64 },
    Write(ResourceWrite),
    Belief(Belief),
    Lost(Lost),
    Node(NodeEvent),
    DriverStall(DriverStall),
    Link(LinkEvent),
    Sentinel(SentinelLine),
}

impl Event {
    pub fn t_us(&self) -> u64 {
        match self {
            Event::Meta(m) => m.t_us,
            Event::Invoke(o) | Event::Ok(o) | Event::Fail(o) | Event::Info(o) => o.t_us,
            Event::Fault(f) => f.t_us,
            Event::Heal { t_us } => *t_us,
            Event::Write(w) => w.t_us,
            Event::Belief(b) => b.t_us,
            Event::Lost(l) => l.t_us,
            Event::Node(n) => n.t_us,
            Event::DriverStall(s) => s.t_us,
            Event::Link(l) => l.t_us,
            Event::Sentinel(s) => s.t_us,
        }
    }
}

/// Run parameters the checker and the report need, so a history stands on its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub t_us: u64,
    pub scenario: String,
    pub seed: u64,
    pub algorithm: String,
    pub nodes: usize,
    pub clients: usize,
    pub ttl_ms: u64,
    pub liveness_bound_us: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writer_wait_bound_us: Option<u64>,
    /// The lock library the clients ran, when they were worker processes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<WorkerMeta>,
    /// The probe client (an uncontended lock of its own), if the run has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_client: Option<usize>,
    /// Set when the file is cut to the lines its report cites ([`cut`]): the checker
    /// refuses it, since a verdict needs every line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cut: Option<Cut>,
    /// What node 0 was when it was a deployment of several processes (`[sentinel]`,
    /// `[cluster]`); histories from before this field say it only by their sentinel lines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<Deploy>,
    /// The mitigations of asynchronous replication in force on that deployment, which
    /// its stories name; histories from before this field do not say.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mitigations: Option<Mitigations>,
}

/// What stood between a master's SET and its loss at a failover or in a split brain
/// (issue 39): the data nodes' `min-replicas-*` settings and the lock's own WAIT.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mitigations {
    /// Each data node's `min-replicas-to-write`: a master refuses writes unless that many
    /// replicas acknowledged within the lag. 0, Redis's default, is off.
    pub min_replicas_to_write: usize,
    /// Each data node's `min-replicas-max-lag`, in seconds.
    pub min_replicas_max_lag_s: u64,
    /// The built-in lock's WAIT after its SET: how many replicas it waits for (0: it
    /// sends none). Absent for a worker's library, whose calls lockstorm does not see.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_replicas: Option<u32>,
}

/// A deployment as node 0: who decides its failovers, in the words of its stories.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Deploy {
    /// Redis Sentinel: the sentinels decide, and their events are the `sentinel` lines.
    Sentinel,
    /// Redis Cluster: the masters vote; the `sentinel` lines are each node's own view
    /// (`+pfail`, `+fail`, `+promoted`, `+demoted`).
    Cluster,
}

/// The meta line's `cut`: this file keeps only the lines its report cites, each window
/// with `context` lines either side, at their own line numbers, of the `lines` lines the
/// history had; the other lines are blank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cut {
    pub lines: usize,
    pub context: usize,
}

/// Which lock library a run's worker clients ran (the meta line's `worker`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerMeta {
    /// The library and its version, as the worker's `hello_ok` named them.
    pub library: String,
    pub version: String,
    /// The worker's argv.
    pub command: Vec<String>,
}

impl WorkerMeta {
    /// "pottery 3.0.1", or the command when the worker named no library.
    pub fn name(&self) -> String {
        match (self.library.is_empty(), self.version.is_empty()) {
            (true, _) => format!("`{}`", self.command.join(" ")),
            (false, true) => self.library.clone(),
            (false, false) => format!("{} {}", self.library, self.version),
        }
    }
}

/// What a link fault did to one message between a client and a node (a `link` line):
/// the evidence of what a partition, a delay or a loss touched. The driver writes it
/// where it happens: the simulator's network when it loses or delays a message, the
/// real backend's proxy when it holds bytes behind a cut, lets them through or drops
/// them with their connection, or delays them. Which fault did it is the checker's to
/// work out (every active fault of the right kind on that link and direction: faults
/// are sets).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkEvent {
    pub t_us: u64,
    pub client: usize,
    pub node: usize,
    /// Which way the message went: `to_node` (a request) or `to_client` (a reply).
    pub dir: LinkDir,
    pub action: LinkAction,
    /// `delayed`: the extra delay the message got; `released` and `dropped` after a
    /// `held`: how long it was held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_us: Option<u64>,
    /// The lock the message was about, when the driver knows it: the command's lock,
    /// or the lock of the client's operation in progress (a worker's bytes are not read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lock: Option<LockName>,
    /// The client's operation the message belongs to: the one in progress (`acquire`,
    /// `release` or `extend`), or on the real backend, between operations, the last one
    /// (a built-in client's release goes out after its `ok`; a worker's bytes are not
    /// read, so they are put down to its last operation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<OpKind>,
}

/// Which way a message goes on a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkDir {
    ToNode,
    ToClient,
}

/// What a link fault did to a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkAction {
    /// Lost: never delivered (the simulator's cut or loss; a real connection that ended
    /// while a cut held its bytes, `by_us` after they were held).
    Dropped,
    /// A cut holds it (the real proxy: TCP keeps the bytes until the link heals).
    Held,
    /// Held bytes went through, `by_us` after they were held.
    Released,
    /// Delivered `by_us` later than the link alone would have.
    Delayed,
}

impl LinkAction {
    pub fn name(self) -> &'static str {
        match self {
            LinkAction::Dropped => "dropped",
            LinkAction::Held => "held",
            LinkAction::Released => "released",
            LinkAction::Delayed => "delayed",
        }
    }
}

/// What a sentinel of a `[sentinel]` deployment said (`+sdown`, `+odown`,
/// `+switch-master`, `+failover-end`, `+convert-to-slave`, ...), when lockstorm heard it.
/// Members are named as at the start (`redis0` the first master, `redis1..` its
/// replicas, `sentinel0..`): roles change at a failover, names do not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentinelLine {
    pub t_us: u64,
    /// The sentinel that said it.
    pub sentinel: String,
    /// The event as Sentinel names its channel (`+switch-master`).
    pub event: String,
    /// The instance it is about (for `+switch-master`, the new master): a member's name,
    /// else its address.
    pub instance: String,
    /// `master`, `replica` or `sentinel`, as the sentinel sees it.
    pub role: String,
    /// `+switch-master`: the old master.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// lockstorm's own driver stalled: a timer due at `t_us - lag_us` fired only at `t_us`,
/// so nothing the driver does (sending, recording, faulting) happened in between. Clients
/// that were silent then were not frozen themselves; a liveness finding over that time
/// is the harness's, not the lock's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverStall {
    pub t_us: u64,
    pub lag_us: u64,
}

impl DriverStall {
    /// The time the driver did not run: `(from, to)`.
    pub fn span(&self) -> (u64, u64) {
        (self.t_us.saturating_sub(self.lag_us), self.t_us)
    }
}

/// A worker client's library lost a lock it held: the hold ends here.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lost {
    pub t_us: u64,
    pub client: usize,
    pub lock: LockName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<Token>,
}

/// What a node did to a key of a lock (a `node` line); see the module doc.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeAction {
    /// A client's request created the key (or added its entry to `r_{L}`).
    Set,
    /// A client's request moved the key's expiry (PEXPIRE, with or without a token check).
    Extended,
    /// The key's expiry came by the node's clock (or, for an entry of `r_{L}`, a
    /// writer's script dropped it by the writer's clock).
    Expired,
    /// A client's request deleted the key (or removed its entry of `r_{L}`).
    Deleted,
    /// The node crashed and what its persistence kept does not have the key.
    Lost,
    /// At a failover, the replica had the master's key.
    Replicated,
    /// At a failover, the replica had not yet received the master's key: it is gone.
    Unreplicated,
    /// The promoted replica serves the key (the master may have deleted it since).
    Promoted,
    /// The node held the key when a fault struck it: a snapshot of its keys read just
    /// before a kill, a pause or a clock fault (the real backend, whose key events reach
    /// lockstorm a moment after they happen: the snapshot is what the fault found).
    Present,
}

impl NodeAction {
    pub fn name(self) -> &'static str {
        match self {
            NodeAction::Set => "set",
            NodeAction::Extended => "extended",
            NodeAction::Expired => "expired",
            NodeAction::Deleted => "deleted",
            NodeAction::Lost => "lost",
            NodeAction::Replicated => "replicated",
            NodeAction::Unreplicated => "unreplicated",
            NodeAction::Promoted => "promoted",
            NodeAction::Present => "present",
        }
    }

    /// Whether the key (with its token) is gone from the node after this.
    pub fn removes(self) -> bool {
        matches!(
            self,
            NodeAction::Expired | NodeAction::Deleted | NodeAction::Lost | NodeAction::Unreplicated
        )
    }
}

/// One thing a node did to one key of a lock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeEvent {
    pub t_us: u64,
    pub node: usize,
    /// The lock the key belongs to, as `lock` names it in operation lines.
    pub lock: LockName,
    /// The Redis key: the lock's name, `w_{L}` or `r_{L}`.
    pub key: LockName,
    pub action: NodeAction,
    /// The client whose request did it (`set`, `extended`, `deleted`; for an `expired`
    /// entry of `r_{L}`, the writer whose script dropped it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<usize>,
    /// The key's value (the holder's token) when it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<Token>,
    /// `set`, `extended`: the ttl given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// `deleted`, `extended`: whether the command compared the token first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checked: Option<bool>,
    /// `expired`: the true time at which the node's clock reached the key's expiry
    /// (expiry is lazy, as in Redis: the line comes when the node next touches the key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expired_at_us: Option<u64>,
    /// `set`, `extended`, `expired`: the expiry on the node's own wall clock (µs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expire_at_node_us: Option<u64>,
    /// `unreplicated`: how far the replica trailed the master.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lag_us: Option<u64>,
    /// A Redis Sentinel deployment's node (`[sentinel]`): the member that served the
    /// request, `redis0`, `redis1`, ...: after a failover, or in a split brain, the
    /// master a client wrote to is not the first one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member: Option<String>,
}

/// A write reaching the guarded resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceWrite {
    pub t_us: u64,
    pub client: usize,
    pub lock: LockName,
    pub token: Token,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence: Option<u64>,
    pub accepted: bool,
}

/// A holder's believed validity, re-derived because its clock changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Belief {
    pub t_us: u64,
    pub client: usize,
    pub lock: LockName,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<Token>,
    pub valid_until_us: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpKind {
    Acquire,
    Release,
    Extend,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    #[default]
    Workload,
    Probe,
}

impl Phase {
    fn is_workload(&self) -> bool {
        *self == Phase::Workload
    }
}

/// An operation event (`invoke`, `ok`, `fail`, `info`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Op {
    pub t_us: u64,
    pub client: usize,
    pub op: OpKind,
    pub lock: LockName,
    pub mode: Mode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<Token>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub valid_until_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<NodeSet>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fence: Option<u64>,
    #[serde(default, skip_serializing_if = "Phase::is_workload")]
    pub phase: Phase,
    /// The library's own lock value (a worker's `ok`), beside lockstorm's `token`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_token: Option<String>,
    /// What a worker's library said when it answered `error` (an `info` line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Op {
    /// A bare operation event; the builder-style setters fill in the rest.
    pub fn new(t_us: u64, client: usize, op: OpKind, lock: impl Into<LockName>, mode: Mode) -> Op {
        Op {
            t_us,
            client,
            op,
            lock: lock.into(),
            mode,
            token: None,
            valid_until_us: None,
            nodes: None,
            attempts: None,
            fence: None,
            phase: Phase::Workload,
            worker_token: None,
            error: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultAction {
    Start,
    End,
}

/// A fault starting or ending.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FaultEvent {
    pub t_us: u64,
    pub id: usize,
    pub action: FaultAction,
    pub origin: Origin,
    #[serde(flatten)]
    pub fault: Fault,
}

/// Why a history file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    #[error("{path}: cannot read: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}:{line}: not a history event: {message}")]
    Parse {
        path: String,
        line: usize,
        message: String,
    },
}

/// Writes a history as JSONL.
pub fn write_jsonl(events: &[Event], mut w: impl Write) -> std::io::Result<()> {
    for e in events {
        serde_json::to_writer(&mut w, e)?;
        w.write_all(b"\n")?;
    }
    w.flush()
}

/// Reads a JSONL history; blank lines are skipped.
pub fn read_jsonl(path: &Path) -> Result<Vec<Event>, HistoryError> {
    let mut events = Vec::new();
    for_each_jsonl(path, |event| events.push(event))?;
    Ok(events)
}

/// Reads a JSONL history one event at a time, handing each to `each` as it is read,
/// so the history need not fit in memory; blank lines are skipped. Stops at the first
/// line that cannot be read, having handed over the events before it.
pub fn for_each_jsonl(path: &Path, mut each: impl FnMut(Event)) -> Result<(), HistoryError> {
    scan(path, 0, |_, _, event| {
        each(event);
        true
    })
}

/// Reads events from byte `offset` of `path` (the start of a line), handing each to
/// `each` with its byte offset and its 1-based line number counted from `offset`, until
/// `each` says to stop or the file ends. Blank lines are skipped.
fn scan(
    path: &Path,
    offset: u64,
    mut each: impl FnMut(u64, usize, Event) -> bool,
) -> Result<(), HistoryError> {
    scan_text(path, offset, |start, line, text| {
        Ok(each(start, line, parse_line(text)?))
    })
}

/// Reads a JSONL history one line at a time as [`crate::checker::check_jsonl`] needs it:
/// a node line as the part the checker reads ([`Line::Node`]: nothing allocated for it),
/// any other line as its event. Otherwise as [`for_each_jsonl`].
///
/// With more than one core, workers parse the lines ([`parallel`]): the same lines are
/// handed over in the same order, and the same error ends the reading.
pub fn for_each_line(path: &Path, mut each: impl FnMut(Line<'_>)) -> Result<(), HistoryError> {
    let workers = line_workers();
    if workers > 0 {
        return parallel::for_each_line(path, workers, parallel::BLOCK_BYTES, each);
    }
    scan_text(path, 0, |_, _, text| {
        each(parse_line_ref(text)?);
        Ok(true)
    })
}

/// Opens a history file, refusing what is no regular file before opening it: a FIFO's
/// open blocks until a writer comes, and a device (/dev/zero) never ends.
pub(crate) fn open_regular(path: &Path) -> std::io::Result<std::fs::File> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    std::fs::File::open(path)
}

/// How many workers parse lines for [`for_each_line`] on this machine: one per core, up
/// to four; none on one core, where the calling thread parses them itself.
pub fn line_workers() -> usize {
    match std::thread::available_parallelism().map_or(1, |n| n.get()) {
        1 => 0,
        cores => cores.min(parallel::MAX_WORKERS),
    }
}

/// [`scan`], handing over each line's text: `each` reads it, and its error names the line.
fn scan_text(
    path: &Path,
    offset: u64,
    mut each: impl FnMut(u64, usize, &str) -> Result<bool, serde_json::Error>,
) -> Result<(), HistoryError> {
    use std::io::{Seek, SeekFrom};
    let shown = path.display().to_string();
    let io = |error| HistoryError::Io {
        path: shown.clone(),
        error,
    };
    let mut file = open_regular(path).map_err(io)?;
    if offset > 0 {
        file.seek(SeekFrom::Start(offset)).map_err(io)?;
    }
    let mut reader = std::io::BufReader::with_capacity(1 << 16, file);
    // One buffer for every line, where `lines()` would allocate one per line; a line
    // is read up to one byte past the limit, never whole.
    let max = crate::limits::MAX_LINE_BYTES;
    let mut line = Vec::new();
    let mut at = offset;
    for i in 0.. {
        line.clear();
        let read = std::io::Read::take(&mut reader, max as u64 + 2)
            .read_until(b'\n', &mut line)
            .map_err(io)?;
        if read == 0 {
            break;
        }
        let bad = |message: String| HistoryError::Parse {
            path: shown.clone(),
            line: i + 1,
            message,
        };
        let start = at;
        at += read as u64;
        let Some(text) = line_text(line.strip_suffix(b"\n").unwrap_or(&line)).map_err(bad)? else {
            continue;
        };
        if !each(start, i + 1, text).map_err(|e| bad(e.to_string()))? {
            break;
        }
    }
    Ok(())
}

/// A line's text without its `\n`: without a `\r` before it either, refused when longer
/// than [`crate::limits::MAX_LINE_BYTES`] or not UTF-8, and `None` when blank.
fn line_text(raw: &[u8]) -> Result<Option<&str>, String> {
    let text = raw.strip_suffix(b"\r").unwrap_or(raw);
    let max = crate::limits::MAX_LINE_BYTES;
    if text.len() > max {
        return Err(format!("the line is longer than {max} bytes"));
    }
    let text = std::str::from_utf8(text).map_err(|e| format!("not UTF-8 text ({e})"))?;
    Ok(Some(text).filter(|t| !t.trim().is_empty()))
}

/// How many events lie between two marks of a [`HistoryFile`].
const STRIDE: usize = 1024;

/// A history on disk, read by event index without holding its events: where every
/// `STRIDE`-th event (1,024th) starts is kept, so reading a stretch of events seeks to the mark
/// before it and reads on from there. What a report of a long run quotes comes from
/// here; the events themselves stay on disk.
#[derive(Debug)]
pub struct HistoryFile {
    path: std::path::PathBuf,
    marks: Vec<u64>,
    len: usize,
    /// The first error of a later read (the file changed or went away meanwhile).
    error: std::cell::RefCell<Option<HistoryError>>,
}

impl HistoryFile {
    /// Reads `path` once, handing `each` every event with its index (0-based, blank
    /// lines not counted), and keeps the marks.
    pub fn scan(path: &Path, mut each: impl FnMut(usize, Event)) -> Result<HistoryFile, HistoryError> {
        let mut marks = Vec::new();
        let mut len = 0;
        scan(path, 0, |offset, _, event| {
            if len % STRIDE == 0 {
                marks.push(offset);
            }
            each(len, event);
            len += 1;
            true
        })?;
        Ok(HistoryFile {
            path: path.to_path_buf(),
            marks,
            len,
            error: Default::default(),
        })
    }

    /// How many events the file holds.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events `from..to` (clipped to the file), read again from disk. A read that
    /// fails gives what it read and leaves the error for [`HistoryFile::error`].
    pub fn read(&self, from: usize, to: usize) -> Vec<Event> {
        let to = to.min(self.len);
        let mut out = Vec::with_capacity(to.saturating_sub(from));
        if from >= to {
            return out;
        }
        let mut index = from / STRIDE * STRIDE;
        let result = scan(&self.path, self.marks[from / STRIDE], |_, _, event| {
            if index >= from {
                out.push(event);
            }
            index += 1;
            index < to
        });
        if let Err(e) = result {
            self.error.borrow_mut().get_or_insert(e);
        }
        out
    }

    /// The first error a [`HistoryFile::read`] met, if any.
    pub fn error(&self) -> Option<HistoryError> {
        self.error.borrow_mut().take()
    }
}

/// Parses one line of a history. Same result as `serde_json::from_str::<Event>`, faster
/// for the usual lines (operations and node events, nine in ten of a run's lines).
/// serde reads an internally tagged enum (`"type"`) by first buffering the whole object,
/// so such a line is tried first as a flat struct with exactly its event's fields and
/// `type`, read by [`fast`]; any other line, or anything that struct refuses (an unknown
/// field, a wrong type, a key twice), goes the general way with `serde_json`, which also
/// gives the error message. Which flat struct to try is chosen by how lockstorm writes a
/// line (`{"type":"node",...`); a line written otherwise only takes the general way.
pub fn parse_line(text: &str) -> Result<Event, serde_json::Error> {
    parse_line_with::<SerdeJson>(text)
}

/// What reads the flat line structs of [`parse_line`] (the general path is `serde_json`
/// either way). lockstorm uses [`SerdeJson`]: on its own lines it took fewer
/// instructions than sonic-rs and simd-json built for a portable target
/// (`cargo bench --bench jsonl` compares them); another reader plugs in here.
pub trait LineReader {
    /// `T` read from `text` (borrowing its strings where it can), or `None` for the
    /// general path.
    fn read<'a, T: Deserialize<'a>>(text: &'a str) -> Option<T>;
}

/// `serde_json`'s reader.
pub struct SerdeJson;

impl LineReader for SerdeJson {
    fn read<'a, T: Deserialize<'a>>(text: &'a str) -> Option<T> {
        serde_json::from_str(text).ok()
    }
}

/// [`parse_line`], with the flat line structs read by `R`.
pub fn parse_line_with<R: LineReader>(text: &str) -> Result<Event, serde_json::Error> {
    let fast = if text.starts_with(NODE_PREFIX) {
        R::read::<NodeLine>(text).map(NodeLine::into_event)
    } else {
        R::read::<OpLine>(text).map(OpLine::into_event)
    };
    match fast {
        Some(event) => Ok(event),
        None => serde_json::from_str(text),
    }
}

/// One line of a history as the checker reads it from JSONL: a node line (two lines in
/// three of a run) borrowed from the line's text, or any other event. A node line is
/// read whole and as strictly as [`parse_line`] reads it; the checker needs only the
/// part [`NodeRef`] shows.
pub enum Line<'a> {
    Node(NodeRef<'a>),
    Event(Event),
}

/// What the checker reads of a node line: when, on which node, of which lock and key,
/// what happened, the client whose request it was, the key's value and the ttl given
/// ([`NodeEvent`] has the rest). The checker follows the live keys of each node from
/// them ([`crate::checker::keys`]), to tell what a fault touched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRef<'a> {
    pub t_us: u64,
    pub node: usize,
    pub lock: &'a str,
    pub key: &'a str,
    pub action: NodeAction,
    pub client: Option<usize>,
    pub token: Option<&'a str>,
    pub ttl_ms: Option<u64>,
}

impl<'a> From<&'a NodeEvent> for NodeRef<'a> {
    fn from(n: &'a NodeEvent) -> Self {
        NodeRef {
            t_us: n.t_us,
            node: n.node,
            lock: &n.lock,
            key: &n.key,
            action: n.action,
            client: n.client,
            token: n.token.as_deref(),
            ttl_ms: n.ttl_ms,
        }
    }
}

/// [`parse_line`], with a node line borrowed: the same lines read, refused with the
/// same message.
pub fn parse_line_ref(text: &str) -> Result<Line<'_>, serde_json::Error> {
    if text.starts_with(NODE_PREFIX) {
        if let Some(n) = SerdeJson::read::<NodeLine>(text) {
            return Ok(Line::Node(NodeRef {
                t_us: n.t_us,
                node: n.node,
                lock: n.lock,
                key: n.key,
                action: n.action,
                client: n.client,
                token: n.token,
                ttl_ms: n.ttl_ms,
            }));
        }
    }
    parse_line(text).map(Line::Event)
}

/// How lockstorm begins a node line.
const NODE_PREFIX: &str = r#"{"type":"node","#;

/// A node line, read without buffering (see [`parse_line`]). Its fields and their
/// attributes mirror [`NodeEvent`]'s; its strings are borrowed from the line, so a line
/// with an escaped string is refused here and takes the general path.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NodeLine<'a> {
    #[serde(rename = "type")]
    _kind: NodeLineKind,
    t_us: u64,
    node: usize,
    lock: &'a str,
    key: &'a str,
    action: NodeAction,
    #[serde(default)]
    client: Option<usize>,
    #[serde(default)]
    token: Option<&'a str>,
    #[serde(default)]
    ttl_ms: Option<u64>,
    #[serde(default)]
    checked: Option<bool>,
    #[serde(default)]
    expired_at_us: Option<u64>,
    #[serde(default)]
    expire_at_node_us: Option<u64>,
    #[serde(default)]
    lag_us: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum NodeLineKind {
    Node,
}

impl NodeLine<'_> {
    fn into_event(self) -> Event {
        Event::Node(NodeEvent {
            t_us: self.t_us,
            node: self.node,
            lock: LockName::read(self.lock),
            key: LockName::read(self.key),
            action: self.action,
            client: self.client,
            token: self.token.map(Token::new),
            ttl_ms: self.ttl_ms,
            checked: self.checked,
            expired_at_us: self.expired_at_us,
            expire_at_node_us: self.expire_at_node_us,
            lag_us: self.lag_us,
            member: None,
        })
    }
}

/// An operation line, read without buffering (see [`parse_line`]). Its fields and their
/// attributes mirror [`Op`]'s; `deny_unknown_fields` sends anything else to the general
/// path (which ignores unknown fields, as [`Op`] does).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OpLine {
    #[serde(rename = "type")]
    kind: OpLineKind,
    t_us: u64,
    client: usize,
    op: OpKind,
    lock: LockName,
    mode: Mode,
    #[serde(default)]
    token: Option<Token>,
    #[serde(default)]
    valid_until_us: Option<u64>,
    #[serde(default)]
    nodes: Option<NodeSet>,
    #[serde(default)]
    attempts: Option<u32>,
    #[serde(default)]
    fence: Option<u64>,
    #[serde(default)]
    phase: Phase,
    #[serde(default)]
    worker_token: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum OpLineKind {
    Invoke,
    Ok,
    Fail,
    Info,
}

impl OpLine {
    fn into_event(self) -> Event {
        let op = Op {
            t_us: self.t_us,
            client: self.client,
            op: self.op,
            lock: self.lock,
            mode: self.mode,
            token: self.token,
            valid_until_us: self.valid_until_us,
            nodes: self.nodes,
            attempts: self.attempts,
            fence: self.fence,
            phase: self.phase,
            worker_token: self.worker_token,
            error: self.error,
        };
        match self.kind {
            OpLineKind::Invoke => Event::Invoke(op),
            OpLineKind::Ok => Event::Ok(op),
            OpLineKind::Fail => Event::Fail(op),
            OpLineKind::Info => Event::Info(op),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_op_round_trips_and_omits_empty_fields() {
        let mut op = Op::new(5, 2, OpKind::Acquire, "L0", Mode::Exclusive);
        let line = serde_json::to_string(&Event::Invoke(op.clone())).unwrap();
        assert_eq!(
            line,
            r#"{"type":"invoke","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"exclusive"}"#
        );
        op.token = Some("ab".into());
        op.phase = Phase::Probe;
        let e = Event::Ok(op);
        let back: Event = serde_json::from_str(&serde_json::to_string(&e).unwrap()).unwrap();
        assert_eq!(back, e);
    }

    #[test]
    fn a_history_file_reads_any_stretch_as_the_whole_history_has_it() {
        let events: Vec<Event> = (0..STRIDE as u64 * 3 + 17)
            .map(|t| Event::Heal { t_us: t })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let mut text = Vec::new();
        write_jsonl(&events[..STRIDE], &mut text).unwrap();
        // Blank lines are not events, and do not shift the indices.
        text.extend_from_slice(b"\n\n");
        write_jsonl(&events[STRIDE..], &mut text).unwrap();
        std::fs::write(&path, text).unwrap();
        let mut seen = Vec::new();
        let file = HistoryFile::scan(&path, |i, e| seen.push((i, e))).unwrap();
        assert_eq!(file.len(), events.len());
        assert!(seen
            .iter()
            .enumerate()
            .all(|(k, (i, e))| k == *i && *e == events[k]));
        let n = events.len();
        for (from, to) in [
            (0, 1),
            (0, n),
            (STRIDE - 1, STRIDE + 1),
            (STRIDE, 2 * STRIDE),
            (n - 3, n + 5),
            (5, 5),
            (n, n + 1),
        ] {
            assert_eq!(
                file.read(from, to),
                events[from.min(n)..to.min(n)],
                "{from}..{to}"
            );
        }
        assert!(file.error().is_none());
        std::fs::remove_file(&path).unwrap();
        assert!(file.read(0, 3).is_empty());
        assert!(
            file.error().is_some(),
            "a file gone is an error, kept for the caller"
        );
    }

    /// sonic-rs, as `cargo bench --bench jsonl` measures it.
    struct Sonic;

    impl LineReader for Sonic {
        fn read<'a, T: Deserialize<'a>>(text: &'a str) -> Option<T> {
            sonic_rs::from_str(text).ok()
        }
    }

    #[test]
    fn the_fast_path_reads_lines_as_the_general_one_does() {
        let lines = [
            r#"{"type":"ok","t_us":1880,"client":5,"op":"acquire","lock":"L1","mode":"exclusive","token":"d6","valid_until_us":1978218,"nodes":[0,1,2,3,4],"attempts":1}"#,
            r#"{"t_us":5,"client":2,"op":"release","lock":"L0","mode":"read","phase":"probe","type":"invoke"}"#,
            r#"{"type":"info","t_us":5,"client":2,"op":"extend","lock":"L\u0030","mode":"write","token":null,"fence":7}"#,
            // Unknown fields are ignored, as by `Op`; wrong ones are refused the same way.
            r#"{"type":"fail","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","extra":[1]}"#,
            r#"{"type":"fail","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","t_us":6}"#,
            r#"{"type":"fail","t_us":-5,"client":2,"op":"acquire","lock":"L0","mode":"read"}"#,
            r#"{"type":"fail","t_us":5,"client":2,"op":"grab","lock":"L0","mode":"read"}"#,
            r#"{"type":"fail","t_us":5,"client":2,"op":"acquire","mode":"read"}"#,
            r#"{"type":"nope","t_us":5}"#,
            r#"{"type":"heal","t_us":5}"#,
            r#"{"t_us":5}"#,
            r#"[1]"#,
            // Node lines, as lockstorm writes them and otherwise.
            r#"{"type":"node","t_us":855,"node":0,"lock":"L1","key":"L1","action":"set","client":13,"token":"1ab6129a5bb9e9a4","ttl_ms":2000,"expire_at_node_us":1700000002000855}"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"L1","key":"r_{L1}","action":"expired","token":"ab","expired_at_us":7,"expire_at_node_us":8}"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"L1","key":"L1","action":"unreplicated","token":null,"lag_us":70,"checked":true}"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"L1","key":"L1","action":"set","color":"red"}"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"L1","key":"L1","action":"set","node":3}"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"L1","key":"L1","action":"melted"}"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"L1","action":"set"}"#,
            r#"{"type":"node","t_us":9,"node":-2,"lock":"L1","key":"L1","action":"set"}"#,
            r#"{"type":"node","t_us":9.5,"node":2,"lock":"L1","key":"L1","action":"set"}"#,
            r#"{"type":"node","t_us":1e3,"node":2,"lock":"L1","key":"L1","action":"set"}"#,
            r#"{"type":"node","t_us":18446744073709551616,"node":2,"lock":"L1","key":"L1","action":"set"}"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"L1","key":"L1","action":"set"} x"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"L1","key":"L1","action":"set"}  "#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"L1","key":"L1","action":"set","#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"\ud800","key":"L1","action":"set"}"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"\ud83d\ude00 \"q\" \\ \n","key":"L1","action":"set"}"#,
            r#"{"type":"node","t_us":9,"node":2,"lock":"\x41","key":"L1","action":"set"}"#,
            "{\"type\":\"node\",\"t_us\":9,\"node\":2,\"lock\":\"L\u{1}\",\"key\":\"L1\",\"action\":\"set\"}",
            "{\"type\":\"ok\",\"t_us\":5,\"client\":2,\"op\":\"acquire\",\"lock\":\"L\t\",\"mode\":\"read\"}",
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","nodes":[1,2,]}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","nodes":[1,-2]}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","nodes":[1,64]}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","nodes":[4294967296]}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","nodes":7}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","nodes":[3,1,3]}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","token":7}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":5,"mode":"read"}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","attempts":4294967296}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","token":"\u00e9\u20ac"}"#,
            r#" {"type":"ok","t_us":05,"client":2,"op":"acquire","lock":"L0","mode":"read"}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read",}"#,
            r#"{"type":"ok" , "t_us" : 5 ,"client":2,"op":"acquire","lock":"L0","mode":"read"}"#,
            r#"{"type":"ok","t_us":5,"client":true,"op":"acquire","lock":"L0","mode":"read"}"#,
            r#"{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read"}{}"#,
        ];
        for line in lines {
            let general = serde_json::from_str::<Event>(line).map_err(|e| e.to_string());
            let fast = parse_line(line).map_err(|e| e.to_string());
            assert_eq!(fast, general, "serde_json: {line}");
            // The readers measured against it read every line alike too.
            let sonic = parse_line_with::<Sonic>(line).map_err(|e| e.to_string());
            assert_eq!(sonic, general, "sonic-rs: {line}");
            // The checker's borrowed read: a node line shows what the event has.
            let borrowed = parse_line_ref(line).map_err(|e| e.to_string());
            match (&borrowed, &general) {
                (Ok(Line::Node(n)), Ok(Event::Node(e))) => assert_eq!(*n, NodeRef::from(e), "{line}"),
                (Ok(Line::Event(b)), Ok(e)) => assert_eq!(b, e, "{line}"),
                (Err(b), Err(e)) => assert_eq!(b, e, "{line}"),
                _ => panic!("the borrowed read differs on {line}"),
            }
        }
        // Lockstorm's own node lines are borrowed; an escaped one is read the general way.
        assert!(matches!(parse_line_ref(lines[12]), Ok(Line::Node(_))));
        assert!(matches!(
            parse_line_ref(lines[27]),
            Ok(Line::Event(Event::Node(_)))
        ));
    }

    #[test]
    fn an_acquisitions_nodes_read_as_a_set_of_at_most_64() {
        let line = |nodes: &str| {
            format!(
                r#"{{"type":"ok","t_us":5,"client":2,"op":"acquire","lock":"L0","mode":"read","nodes":{nodes}}}"#
            )
        };
        let Event::Ok(op) = parse_line(&line("[3,1,3]")).unwrap() else {
            panic!("an ok line")
        };
        assert_eq!(op.nodes.map(|n| n.to_vec()), Some(vec![1, 3]));
        let e = parse_line(&line("[1,64]")).unwrap_err().to_string();
        assert!(
            e.contains("node 64 does not exist (a history names at most 64 nodes)"),
            "{e}"
        );
        let e = parse_line(&line("[-1]")).unwrap_err().to_string();
        assert!(e.contains("expected usize"), "{e}");
    }

    #[test]
    fn worker_fields_and_lost_read_as_documented() {
        let ok = r#"{"type":"ok","t_us":9,"client":1,"op":"acquire","lock":"L0","mode":"exclusive","token":"ab","worker_token":"lib-7"}"#;
        let Event::Ok(op) = parse_line(ok).unwrap() else {
            panic!("{ok}")
        };
        assert_eq!(op.worker_token.as_deref(), Some("lib-7"));
        assert_eq!(op.valid_until_us, None, "no expiry: held until released");
        assert_eq!(serde_json::to_string(&Event::Ok(op)).unwrap(), ok);
        let info = r#"{"type":"info","t_us":9,"client":1,"op":"acquire","lock":"L0","mode":"exclusive","error":"connection refused"}"#;
        let Event::Info(unknown) = parse_line(info).unwrap() else {
            panic!("{info}")
        };
        assert_eq!(unknown.error.as_deref(), Some("connection refused"));
        assert_eq!(serde_json::to_string(&Event::Info(unknown)).unwrap(), info);
        let lost = r#"{"type":"lost","t_us":12,"client":1,"lock":"L0","token":"ab"}"#;
        let e = parse_line(lost).unwrap();
        assert_eq!(e.t_us(), 12);
        assert_eq!(serde_json::to_string(&e).unwrap(), lost);
        // An old meta line parses; a new one names the library.
        let old = r#"{"type":"meta","t_us":0,"scenario":"s","seed":1,"algorithm":"single","nodes":1,"clients":2,"ttl_ms":1000,"liveness_bound_us":5}"#;
        let Event::Meta(m) = parse_line(old).unwrap() else {
            panic!("{old}")
        };
        assert_eq!(m.worker, None);
        let new = old.replace(
            "}",
            r#","worker":{"library":"pottery","version":"3.0.1","command":["python3","w.py"]}}"#,
        );
        let Event::Meta(m) = parse_line(&new).unwrap() else {
            panic!("{new}")
        };
        assert_eq!(m.worker.unwrap().name(), "pottery 3.0.1");
    }

    #[test]
    fn a_belief_reads_as_documented() {
        let line = r#"{"type":"belief","t_us":7,"client":1,"lock":"L0","token":"ab","valid_until_us":90}"#;
        let e: Event = serde_json::from_str(line).unwrap();
        assert_eq!(
            e,
            Event::Belief(Belief {
                t_us: 7,
                client: 1,
                lock: "L0".into(),
                token: Some("ab".into()),
                valid_until_us: 90,
            })
        );
        assert_eq!(serde_json::to_string(&e).unwrap(), line);
    }

    #[test]
    fn a_fault_event_flattens_the_fault() {
        let e = Event::Fault(FaultEvent {
            t_us: 1,
            id: 0,
            action: FaultAction::Start,
            origin: Origin::Script,
            fault: Fault::Partition {
                nodes: vec![1],
                clients: vec![0, 2],
                direction: Default::default(),
            },
        });
        let line = serde_json::to_string(&e).unwrap();
        assert!(
            line.contains(r#""kind":"partition","nodes":[1],"clients":[0,2]"#),
            "{line}"
        );
        assert_eq!(serde_json::from_str::<Event>(&line).unwrap(), e);
    }
}
