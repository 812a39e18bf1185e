//! What each fault touched of the lock: the evidence a "safe" rests on (DESIGN.md, "A
//! verdict is evidence"). Judged in the checker's one pass, from what the history shows
//! where it happened:
//!
//! - a crash, a failover or a node's pause: the live keys it **took down** (live on the
//!   node, by its `node` lines, when it went out), and of those the ones it **wiped**
//!   (the `lost` or `unreplicated` lines of that node after it); and the acquisitions
//!   **granted around** it (a workload `ok` while the node was out and no cut kept it
//!   from that client anyway: the lock was taken without it);
//! - a node's clock (jump or rate): the live keys whose expiry it **moved** (live on the
//!   node at the jump, or set or live while the rate was off). A jump acts at its
//!   instant only: a key set after it is given its ttl by the moved clock and lives
//!   that long (clocks are never set back), so it is not counted;
//! - a client's pause or clock: the client's **holds** in force and **acquisitions** in
//!   progress it stopped or whose clock it moved (at a jump's instant; while a rate or a
//!   pause is active). lockstorm's own exclusive locks time their validity by the
//!   monotonic clock, which a jump does not move: on their clients a client clock jump
//!   touches nothing (the read-write kinds send the wall clock to the nodes, so it does);
//! - a replication cut: the keys **set on the master while its replicas were cut off**
//!   (the node's `set` lines while it is active, until a crash or failover of the node
//!   ends the master it cut), which a failover would lose;
//! - a partition, a delay or a loss: the lock **messages** it dropped, held back (and
//!   for how long) or delayed (and by how much), from the `link` lines of its links.
//!
//! The probe client (meta `probe_client`) and its lock never count: a fault that touched
//! only the probe touched nothing of the lock under test. A link message counts when
//! the client had an operation in progress or a hold (the `link` line's `op` or `lock`).
//!
//! Faults are sets: a crash, failover or pause that starts while another keeps the same
//! process stopped is part of that one outage, and is judged with it ([`FaultTouch::joined`]).
//! A fault still active at the heal stops touching there.
//!
//! Whether what a fault touched is where a broken lock would break (its
//! [`FaultTouch::exercised`]), and the rule over a seed, are in [`super::exercise`].

use super::keys::Keys;
use super::Hold;
use crate::fault::{CutDirection, Fault, Origin};
use crate::history::compact::NodeSet;
use crate::history::{FaultAction, FaultEvent, LinkAction, LinkDir, LinkEvent, NodeAction, NodeRef, OpKind};
use crate::limits::MAX_NODES;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// History lines a touch cites, at most, per fault.
pub const CITED: usize = 8;

/// What a fault acts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Target {
    /// A node taken out of service (crash, failover, pause) or its clock.
    Node { node: usize, hit: NodeHit },
    /// A client's process (a pause) or its clock.
    Client { client: usize, hit: ClientHit },
    /// Links between any of `clients` and any of `nodes`.
    Links {
        nodes: NodeSet,
        clients: Box<[usize]>,
        hit: LinkHit,
    },
    /// Nothing the history names.
    None,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NodeHit {
    Out,
    /// Its replicas cut off from its master.
    Replication,
    /// `stays`: a jump (the clock stays moved), else a rate.
    Clock {
        stays: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum ClientHit {
    Pause,
    Clock { stays: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum LinkHit {
    Cut(CutDirection),
    Loss,
    Delay,
}

impl Target {
    pub(super) fn of(fault: &Fault) -> Target {
        let node = |n: usize| (n < MAX_NODES).then_some(n);
        let process = |n: Option<usize>, client: Option<usize>, node_hit, client_hit| match (
            n.and_then(node),
            client,
        ) {
            (Some(node), _) => Target::Node { node, hit: node_hit },
            (None, Some(client)) => Target::Client {
                client,
                hit: client_hit,
            },
            (None, None) => Target::None,
        };
        let links = |nodes: &[usize], clients: &[usize], hit| {
            let mut clients = clients.to_vec();
            clients.sort_unstable();
            clients.dedup();
            Target::Links {
                nodes: nodes.iter().copied().filter_map(node).collect(),
                clients: clients.into_boxed_slice(),
                hit,
            }
        };
        match fault {
            Fault::Crash { node: n, .. } | Fault::Failover { node: n } => match node(*n) {
                Some(node) => Target::Node {
                    node,
                    hit: NodeHit::Out,
                },
                None => Target::None,
            },
            Fault::ReplicationCut { node: n } => match node(*n) {
                Some(node) => Target::Node {
                    node,
                    hit: NodeHit::Replication,
                },
                None => Target::None,
            },
            Fault::Pause { node: n, client, .. } => process(*n, *client, NodeHit::Out, ClientHit::Pause),
            Fault::ClockJump { node: n, client, .. } => process(
                *n,
                *client,
                NodeHit::Clock { stays: true },
                ClientHit::Clock { stays: true },
            ),
            Fault::ClockRate { node: n, client, .. } => process(
                *n,
                *client,
                NodeHit::Clock { stays: false },
                ClientHit::Clock { stays: false },
            ),
            Fault::Partition {
                nodes,
                clients,
                direction,
            } => links(nodes, clients, LinkHit::Cut(*direction)),
            Fault::Delay { nodes, clients, .. } => links(nodes, clients, LinkHit::Delay),
            Fault::Loss { nodes, clients, .. } => links(nodes, clients, LinkHit::Loss),
        }
    }

    /// A clock jump (of a node or a client): it acts at its instant only.
    fn is_jump(&self) -> bool {
        matches!(
            self,
            Target::Client {
                hit: ClientHit::Clock { stays: true },
                ..
            } | Target::Node {
                hit: NodeHit::Clock { stays: true },
                ..
            }
        )
    }

    /// The process this fault stops, if it stops one (node or client): faults that stop
    /// the same process while it is stopped are one outage.
    fn outage(&self) -> Option<(bool, usize)> {
        match *self {
            Target::Node {
                node,
                hit: NodeHit::Out,
            } => Some((true, node)),
            Target::Client {
                client,
                hit: ClientHit::Pause,
            } => Some((false, client)),
            _ => None,
        }
    }

    /// Whether a `link` line's message is one this fault acts on.
    fn carries(&self, l: &LinkEvent) -> bool {
        let Target::Links { nodes, clients, hit } = self else {
            return false;
        };
        if !nodes.contains(&l.node) || clients.binary_search(&l.client).is_err() {
            return false;
        }
        match (hit, l.action) {
            (LinkHit::Cut(d), LinkAction::Dropped | LinkAction::Held) => match (d, l.dir) {
                (CutDirection::Both, _) => true,
                (CutDirection::ToNodes, dir) => dir == LinkDir::ToNode,
                (CutDirection::ToClients, dir) => dir == LinkDir::ToClient,
            },
            (LinkHit::Loss, LinkAction::Dropped) => true,
            (LinkHit::Delay, LinkAction::Delayed) => true,
            _ => false,
        }
    }

    /// The target in words, e.g. "node 2", "client 0", "clients [0, 1] / nodes [3, 4]".
    pub(super) fn describe(&self) -> String {
        match self {
            Target::Node { node, .. } => format!("node {node}"),
            Target::Client { client, .. } => format!("client {client}"),
            Target::Links { nodes, clients, .. } => format!("clients {clients:?} / nodes {nodes:?}"),
            Target::None => "no target".into(),
        }
    }
}

/// What one fault touched of the lock (see the module doc); zero everywhere: nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Touched {
    /// Live keys on the node when it went out (crash, failover, node pause).
    #[serde(skip_serializing_if = "is_zero")]
    pub keys_down: u64,
    /// Of those, keys the node came back without (`lost`, `unreplicated`).
    #[serde(skip_serializing_if = "is_zero")]
    pub keys_wiped: u64,
    /// Live keys whose expiry its clock moved.
    #[serde(skip_serializing_if = "is_zero")]
    pub keys_moved: u64,
    /// Keys set on the master while its replicas were cut off (a replication cut).
    #[serde(skip_serializing_if = "is_zero")]
    pub set_while_cut: u64,
    /// Workload acquisitions granted while the node was out (crash, failover, pause).
    #[serde(skip_serializing_if = "is_zero")]
    pub granted_around: u64,
    /// Lock messages it dropped.
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped: u64,
    /// Lock messages a cut held back, and the longest hold.
    #[serde(skip_serializing_if = "is_zero")]
    pub held: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub held_max_us: u64,
    /// Lock messages it delayed, and the longest delay.
    #[serde(skip_serializing_if = "is_zero")]
    pub delayed: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub delay_max_us: u64,
    /// Holds in force it stopped or whose clock it moved.
    #[serde(skip_serializing_if = "is_zero")]
    pub holds: u64,
    /// Acquisitions in progress it stopped or whose clock it moved.
    #[serde(skip_serializing_if = "is_zero")]
    pub acquisitions: u64,
    /// History lines that show it (the first [`CITED`]): the `set` of a key it took
    /// down or moved, the `lost` of a key it wiped, a `link` line, the `ok` of a hold or
    /// the `invoke` of an acquisition.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<usize>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Touched {
    pub fn is_empty(&self) -> bool {
        *self
            == Touched {
                lines: self.lines.clone(),
                ..Touched::default()
            }
    }

    fn cite(&mut self, line: usize) {
        if self.lines.len() < CITED && !self.lines.contains(&line) {
            self.lines.push(line);
        }
    }

    /// In words: "took down 2 live keys (2 wiped)", "delayed 6 lock messages (up to
    /// 0.800 s)", ..., or "nothing of the lock".
    pub fn describe(&self) -> String {
        let n = |k: u64, one: &str, many: &str| format!("{k} {}", if k == 1 { one } else { many });
        let secs = |us: u64| format!("{:.3} s", us as f64 / 1e6);
        let mut parts = Vec::new();
        if self.keys_down > 0 {
            let mut p = format!("took down {}", n(self.keys_down, "live key", "live keys"));
            if self.keys_wiped > 0 {
                p.push_str(&format!(" ({} wiped)", self.keys_wiped));
            }
            parts.push(p);
        } else if self.keys_wiped > 0 {
            parts.push(format!("wiped {}", n(self.keys_wiped, "key", "keys")));
        }
        if self.granted_around > 0 {
            parts.push(format!(
                "{} granted while it was out",
                n(self.granted_around, "acquisition", "acquisitions")
            ));
        }
        if self.keys_moved > 0 {
            parts.push(format!(
                "moved the expiry of {}",
                n(self.keys_moved, "live key", "live keys")
            ));
        }
        if self.set_while_cut > 0 {
            parts.push(format!(
                "kept {} set on the master from its replicas",
                n(self.set_while_cut, "key", "keys")
            ));
        }
        if self.dropped > 0 {
            parts.push(format!(
                "dropped {}",
                n(self.dropped, "lock message", "lock messages")
            ));
        }
        if self.held > 0 {
            parts.push(format!(
                "held back {} (up to {})",
                n(self.held, "lock message", "lock messages"),
                secs(self.held_max_us)
            ));
        }
        if self.delayed > 0 {
            parts.push(format!(
                "delayed {} (by up to {})",
                n(self.delayed, "lock message", "lock messages"),
                secs(self.delay_max_us)
            ));
        }
        if self.holds > 0 {
            parts.push(n(self.holds, "hold in force", "holds in force"));
        }
        if self.acquisitions > 0 {
            parts.push(n(
                self.acquisitions,
                "acquisition in progress",
                "acquisitions in progress",
            ));
        }
        if parts.is_empty() {
            return "nothing of the lock".into();
        }
        let mut text = parts.join("; ");
        if !self.lines.is_empty() {
            let lines: Vec<String> = self.lines.iter().map(usize::to_string).collect();
            text.push_str(&format!(" (lines {})", lines.join(", ")));
        }
        text
    }
}

/// One fault of the history and what it touched.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FaultTouch {
    pub id: usize,
    pub kind: &'static str,
    pub origin: Origin,
    pub start_us: u64,
    /// What it acted on, in words.
    pub target: String,
    pub touched: Touched,
    /// It started while an earlier fault (this id) kept the same process stopped: the
    /// two are one outage, judged together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joined: Option<usize>,
    /// It (or the outage it is part of) touched the lock where a broken lock would
    /// break ([`super::exercise`]).
    pub exercised: bool,
}

/// Follows faults, keys, holds and link messages as the checker reads the history.
#[derive(Default)]
pub(super) struct Collector {
    pub(super) faults: Vec<FaultTouch>,
    pub(super) targets: Vec<Target>,
    /// Per fault, the first fault of the outage it is part of (itself if none).
    pub(super) outages: Vec<usize>,
    /// The active faults by id, each as its index.
    active: BTreeMap<usize, usize>,
    /// Per stopped process: the first fault of its outage and how many are active.
    stopped: BTreeMap<(bool, usize), (usize, usize)>,
    /// Per node, the last crash or failover that took it down: a `lost` or
    /// `unreplicated` line of the node is its doing.
    took_down: BTreeMap<usize, usize>,
    /// Per node, the last fault that struck it (an outage or a clock): a `present` line
    /// of the node (what the real backend read as the fault struck) is its evidence.
    struck: BTreeMap<usize, usize>,
    /// Per fault (by index), the keys it counted, as (key, value): a key is counted once,
    /// whether its line came before the fault or as a `present` after it.
    counted: Vec<Vec<(String, Option<String>)>>,
    /// Messages held back by a cut and not yet let through, per (client, node, dir):
    /// the faults that hold them.
    pending: BTreeMap<(usize, usize, bool), Vec<usize>>,
    /// The live keys of every node.
    pub(super) keys: Keys,
    /// The probe client and the locks it takes (never the lock under test).
    probe: Option<usize>,
    probe_locks: BTreeSet<String>,
    /// Workload acquisitions that succeeded (the probe's not counted).
    pub(super) acquired: u64,
    healed: bool,
    /// The clients are lockstorm's own and read no wall clock (see the module's text):
    /// a client clock jump touches nothing.
    wall_blind: bool,
}

impl Collector {
    /// What the `meta` line tells: the probe, and whether the clients read a wall clock.
    pub(super) fn set_meta(&mut self, meta: &crate::history::Meta) {
        self.probe = meta.probe_client;
        let own = meta.worker.as_ref().is_none_or(|w| w.library == "lockstorm");
        self.wall_blind = own
            && crate::algorithm::AlgorithmKind::from_name(&meta.algorithm)
                .is_some_and(|k| !k.reads_wall_clock());
    }

    fn is_probe(&self, client: usize) -> bool {
        self.probe == Some(client)
    }

    /// Client `client` invokes an operation on `lock` (its name).
    pub(super) fn invoked(&mut self, client: usize, lock: &str, op: OpKind, workload: bool, line: usize) {
        if self.is_probe(client) {
            self.probe_locks.insert(lock.to_string());
            return;
        }
        if op != OpKind::Acquire || !workload || self.healed {
            return;
        }
        // A client clock fault in force moves the clock the acquisition is timed by.
        let hit: Vec<usize> = self
            .clock_faults()
            .filter(|&i| matches!(self.targets[i], Target::Client { client: c, .. } if c == client))
            .collect();
        for i in hit {
            let t = &mut self.faults[i].touched;
            t.acquisitions += 1;
            t.cite(line);
        }
    }

    /// A workload acquisition succeeded (its `ok` is history line `line`): a node out of
    /// service now was worked around.
    pub(super) fn acquired(&mut self, client: usize, workload: bool, line: usize) {
        if !workload || self.is_probe(client) {
            return;
        }
        self.acquired += 1;
        if self.healed {
            return;
        }
        // A node an active cut keeps from this client was out of its reach anyway: the
        // acquisition went around the cut, not around the node's outage.
        let cut_off = |node: usize| {
            self.active.values().any(|&j| {
                matches!(&self.targets[j], Target::Links { nodes, clients, hit: LinkHit::Cut(_) }
                    if nodes.contains(&node) && clients.binary_search(&client).is_ok())
            })
        };
        let out: Vec<usize> = self
            .active
            .values()
            .copied()
            .filter(
                |&i| matches!(self.targets[i], Target::Node { node, hit: NodeHit::Out } if !cut_off(node)),
            )
            .collect();
        for i in out {
            let t = &mut self.faults[i].touched;
            t.granted_around += 1;
            t.cite(line);
        }
    }

    /// Active clock rates (ids as indices): a jump acts at its instant only.
    fn clock_faults(&self) -> impl Iterator<Item = usize> + '_ {
        self.active.values().copied().filter(move |&i| {
            matches!(
                self.targets[i],
                Target::Client {
                    hit: ClientHit::Clock { .. },
                    ..
                } | Target::Node {
                    hit: NodeHit::Clock { .. },
                    ..
                }
            )
        })
    }

    /// A fault starts or ends at `f.t_us` (history line `line`); `holds` are the holds
    /// not yet ended, `ops` each client's operation in progress.
    pub(super) fn fault<'a>(
        &mut self,
        f: &FaultEvent,
        line: usize,
        holds: impl Iterator<Item = &'a Hold>,
        ops: &BTreeMap<usize, super::OpenOp>,
    ) {
        match f.action {
            FaultAction::Start => self.start(f, holds, ops),
            FaultAction::End => self.end(f, line),
        }
    }

    fn start<'a>(
        &mut self,
        f: &FaultEvent,
        holds: impl Iterator<Item = &'a Hold>,
        ops: &BTreeMap<usize, super::OpenOp>,
    ) {
        let t = f.t_us;
        let target = Target::of(&f.fault);
        let index = self.faults.len();
        let outage = target.outage().and_then(|key| {
            let (first, count) = self.stopped.entry(key).or_insert((index, 0));
            *count += 1;
            (*first != index).then_some(*first)
        });
        let mut touched = Touched::default();
        let mut counted = Vec::new();
        match &target {
            // It acts on the writes that come after it (Collector::node).
            Target::Node {
                hit: NodeHit::Replication,
                ..
            } => {}
            Target::Node { node, hit } => {
                for (key, k) in self
                    .keys
                    .on_node_keys(*node, t)
                    .filter(|(_, k)| !self.probe_locks.contains(k.lock.as_str()))
                {
                    match hit {
                        NodeHit::Out => touched.keys_down += 1,
                        NodeHit::Clock { .. } => touched.keys_moved += 1,
                        NodeHit::Replication => unreachable!("a replication cut counts no key at its start"),
                    }
                    touched.cite(k.line);
                    counted.push((key.to_string(), k.token.as_deref().map(str::to_string)));
                }
                if matches!(hit, NodeHit::Out)
                    && matches!(f.fault, Fault::Crash { .. } | Fault::Failover { .. })
                {
                    self.took_down.insert(*node, index);
                    // The master a replication cut kept apart is gone: what is set on
                    // the node from now on is another master's.
                    let node = *node;
                    self.active.retain(|_, &mut i| {
                        !matches!(self.targets[i], Target::Node { node: n, hit: NodeHit::Replication } if n == node)
                    });
                }
                self.struck.insert(*node, index);
            }
            Target::Client {
                hit: ClientHit::Clock { stays: true },
                ..
            } if self.wall_blind => {}
            Target::Client { client, .. } if !self.is_probe(*client) => {
                for h in holds.filter(|h| h.client == *client && h.start_us <= t && t < h.end_us) {
                    touched.holds += 1;
                    touched.cite(h.ok_line);
                }
                if let Some(op) = ops
                    .get(client)
                    .filter(|o| o.op == OpKind::Acquire && o.phase == crate::history::Phase::Workload)
                {
                    touched.acquisitions += 1;
                    touched.cite(op.line);
                }
            }
            _ => {}
        }
        self.outages.push(outage.unwrap_or(index));
        self.counted.push(counted);
        self.faults.push(FaultTouch {
            id: f.id,
            kind: f.fault.kind(),
            origin: f.origin,
            start_us: t,
            target: target.describe(),
            touched,
            joined: outage.map(|first| self.faults[first].id),
            exercised: false,
        });
        // A jump acts at its instant: it is over once counted (its end line, if any,
        // finds nothing active).
        let jump = target.is_jump();
        self.targets.push(target);
        if !jump {
            self.active.insert(f.id, index);
        }
    }

    fn end(&mut self, f: &FaultEvent, _line: usize) {
        let Some(index) = self.active.remove(&f.id) else {
            return;
        };
        let target = &self.targets[index];
        if let Some(key) = target.outage() {
            if let Some((_, count)) = self.stopped.get_mut(&key) {
                *count -= 1;
                if *count == 0 {
                    self.stopped.remove(&key);
                }
            }
        }
    }

    /// Counts key `key` = `token` once for fault `i`: true if it was not counted yet.
    fn count_once(&mut self, i: usize, key: &str, token: Option<&str>) -> bool {
        let counted = &mut self.counted[i];
        if counted.iter().any(|(k, v)| k == key && v.as_deref() == token) {
            return false;
        }
        counted.push((key.to_string(), token.map(str::to_string)));
        true
    }

    /// A node line (history line `line`).
    pub(super) fn node(&mut self, line: usize, n: &NodeRef<'_>) {
        let removed = self.keys.observe(line, n);
        let probe = self.probe_locks.contains(n.lock);
        match n.action {
            // What the real backend read as a fault struck the node: its keys then, each
            // counted once for that fault.
            NodeAction::Present if !probe => {
                let Some(&i) = self.struck.get(&n.node) else {
                    return;
                };
                if !self.count_once(i, n.key, n.token) {
                    return;
                }
                let out = matches!(
                    self.targets[i],
                    Target::Node {
                        hit: NodeHit::Out,
                        ..
                    }
                );
                let t = &mut self.faults[i].touched;
                if out {
                    t.keys_down += 1;
                } else {
                    t.keys_moved += 1;
                }
                t.cite(line);
            }
            NodeAction::Lost | NodeAction::Unreplicated if !probe => {
                let wiped = removed.iter().filter(|k| k.live_at(n.t_us)).count() as u64;
                if let (Some(&i), true) = (self.took_down.get(&n.node), wiped > 0) {
                    let t = &mut self.faults[i].touched;
                    t.keys_wiped += wiped;
                    t.cite(line);
                }
            }
            NodeAction::Set | NodeAction::Promoted if !probe && !self.healed => {
                if n.action == NodeAction::Set {
                    let cut: Vec<usize> = self
                        .active
                        .values()
                        .copied()
                        .filter(|&i| {
                            matches!(self.targets[i], Target::Node { node, hit: NodeHit::Replication } if node == n.node)
                        })
                        .collect();
                    for i in cut {
                        if self.count_once(i, n.key, n.token) {
                            let t = &mut self.faults[i].touched;
                            t.set_while_cut += 1;
                            t.cite(line);
                        }
                    }
                }
                let hit: Vec<usize> = self
                    .clock_faults()
                    .filter(|&i| matches!(self.targets[i], Target::Node { node, .. } if node == n.node))
                    .collect();
                for i in hit {
                    if !self.count_once(i, n.key, n.token) {
                        continue;
                    }
                    let t = &mut self.faults[i].touched;
                    t.keys_moved += 1;
                    t.cite(line);
                }
            }
            _ => {}
        }
    }

    /// A `link` line (history line `line`).
    pub(super) fn link(&mut self, line: usize, l: &LinkEvent) {
        if self.is_probe(l.client)
            || l.lock
                .as_ref()
                .is_some_and(|lock| self.probe_locks.contains(lock.as_str()))
            || (l.op.is_none() && l.lock.is_none())
        {
            return;
        }
        let slot = (l.client, l.node, l.dir == LinkDir::ToNode);
        let by = l.by_us.unwrap_or(0);
        match l.action {
            LinkAction::Released | LinkAction::Dropped if self.pending.contains_key(&slot) => {
                for i in self.pending.remove(&slot).unwrap_or_default() {
                    let t = &mut self.faults[i].touched;
                    t.held_max_us = t.held_max_us.max(by);
                    if l.action == LinkAction::Dropped {
                        t.dropped += 1;
                    }
                }
                return;
            }
            LinkAction::Released => return,
            _ => {}
        }
        let hit: Vec<usize> = self
            .active
            .values()
            .copied()
            .filter(|&i| self.targets[i].carries(l))
            .collect();
        for &i in &hit {
            let t = &mut self.faults[i].touched;
            match l.action {
                LinkAction::Dropped => t.dropped += 1,
                LinkAction::Held => t.held += 1,
                LinkAction::Delayed => {
                    t.delayed += 1;
                    t.delay_max_us = t.delay_max_us.max(by);
                }
                LinkAction::Released => {}
            }
            t.cite(line);
        }
        if l.action == LinkAction::Held && !hit.is_empty() {
            self.pending.insert(slot, hit);
        }
    }

    /// A hold starts (an acquisition, or a late extension or belief that starts anew).
    pub(super) fn hold_started(&mut self, hold: &Hold) {
        if self.is_probe(hold.client) || self.healed {
            return;
        }
        let hit: Vec<usize> = self
            .active
            .values()
            .copied()
            .filter(|&i| matches!(self.targets[i], Target::Client { client, .. } if client == hold.client))
            .collect();
        for i in hit {
            let t = &mut self.faults[i].touched;
            t.holds += 1;
            t.cite(hold.ok_line);
        }
    }

    /// Every fault is healed: none touches anything from here on (a `lost` line of a
    /// crash that keeps its planned end past the heal still counts: it is the crash's).
    pub(super) fn healed(&mut self) {
        self.healed = true;
        self.active.clear();
        self.stopped.clear();
    }
}
