//! Whether a run exercised what its faults aim at: the difference between "safe" and
//! "not exercised" (DESIGN.md, "A verdict is evidence").
//!
//! A seed with no violation is **safe** only if its faults met what they aim at and
//! enough acquisitions succeeded; otherwise it is **not exercised**, with the reason
//! ([`Exercise::not_exercised`]). A fault *meets* a hold when the fault was active while
//! the hold was in force (overlap in true time; a clock jump is instantaneous, so the
//! hold must be in force at the jump's time) and the hold is on what the fault targets:
//!
//! - a crash, a failover or a node pause: the node is among the nodes that granted the
//!   hold, or the hold was acquired while the node was out (the lock was taken despite
//!   the fault: what fault tolerance is about);
//! - a node's clock (jump or rate): the node is among the hold's nodes (its keys expire
//!   by that clock);
//! - a client pause or a client's clock rate: the hold is that client's;
//! - a client's clock jump: the hold is that client's and in force at the jump or after
//!   it (the clock stays moved, so every later hold of the client runs with it);
//! - a partition, delay or loss: the hold is by one of the fault's clients (a holder cut
//!   off or slowed), or on one of its nodes (a waiter cut off from the holder's nodes,
//!   or a holder's node out of reach).
//!
//! A hold whose nodes the history does not name (a worker's library reports none) is
//! taken to be on every node. A fault still active at the heal ends there. Faults are
//! sets: a crash, failover or pause that starts while another keeps the same process
//! stopped is part of that one outage, and meets what the outage meets.
//!
//! The rule over a seed: every scripted fault (each was aimed by the scenario's author)
//! must meet a hold, and so must at least one of the random nemesis's faults, if it
//! started any; a scripted fault that never started (a pause waiting for a point of the
//! lock cycle no client reached) met nothing. A seed with no fault at all is judged on
//! its acquisitions alone. Either way at least [`MIN_ACQUISITIONS`] acquisitions must
//! succeed in the workload phase: with fewer, no two holds could conflict.
//!
//! Computed in the checker's one pass: a fault is matched against the holds open when it
//! starts, and a hold against the faults active when it starts; nothing else is kept but
//! one record per fault.

use super::Hold;
use crate::fault::{Fault, Firing, Origin, PlannedFault};
use crate::history::compact::NodeSet;
use crate::history::{FaultAction, FaultEvent};
use crate::limits::MAX_NODES;
use serde::Serialize;
use std::collections::BTreeMap;

/// Successful workload acquisitions a seed needs to be exercised: fewer than two holds
/// cannot conflict, so one acquisition proves nothing about mutual exclusion.
pub const MIN_ACQUISITIONS: u64 = 2;

/// What a fault acts on, as the meeting rule reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    /// A node; `out` when the fault takes it out of service (crash, failover, pause).
    Node { node: usize, out: bool },
    /// A client's process or clock; `out` when the fault stops it (a pause), `stays`
    /// when the effect outlasts the fault (a jump).
    Client { client: usize, out: bool, stays: bool },
    /// Links between any of `clients` and any of `nodes`.
    Links { nodes: NodeSet, clients: Box<[usize]> },
    /// Nothing the history names (a fault with neither a node nor a client).
    None,
}

impl Target {
    fn of(fault: &Fault) -> Target {
        let node = |n: usize| match n < MAX_NODES {
            true => Some(n),
            false => None,
        };
        match fault {
            Fault::Crash { node: n, .. } | Fault::Failover { node: n } => match node(*n) {
                Some(node) => Target::Node { node, out: true },
                None => Target::None,
            },
            Fault::Pause { node: n, client, .. } => match (n.and_then(node), client) {
                (Some(node), _) => Target::Node { node, out: true },
                (None, Some(client)) => Target::Client {
                    client: *client,
                    out: true,
                    stays: false,
                },
                (None, None) => Target::None,
            },
            Fault::ClockJump { node: n, client, .. } | Fault::ClockRate { node: n, client, .. } => {
                let stays = matches!(fault, Fault::ClockJump { .. });
                match (n.and_then(node), client) {
                    (Some(node), _) => Target::Node { node, out: false },
                    (None, Some(client)) => Target::Client {
                        client: *client,
                        out: false,
                        stays,
                    },
                    (None, None) => Target::None,
                }
            }
            Fault::Partition { nodes, clients, .. }
            | Fault::Delay { nodes, clients, .. }
            | Fault::Loss { nodes, clients, .. } => {
                let mut clients = clients.clone();
                clients.sort_unstable();
                clients.dedup();
                Target::Links {
                    nodes: nodes.iter().copied().filter_map(node).collect(),
                    clients: clients.into_boxed_slice(),
                }
            }
        }
    }

    /// Whether `hold` is on this target; `began_during`: the hold was acquired while the
    /// fault was active.
    fn holds(&self, hold: &Hold, began_during: bool) -> bool {
        // A hold whose nodes were not reported may be on any node.
        let on = |node: usize| hold.nodes.is_empty() || hold.nodes.contains(&node);
        match self {
            Target::Node { node, out } => on(*node) || (*out && began_during),
            Target::Client { client, .. } => hold.client == *client,
            Target::Links { nodes, clients } => {
                clients.binary_search(&hold.client).is_ok() || nodes.iter().any(|&n| on(n))
            }
            Target::None => false,
        }
    }

    /// The process this fault stops, if it stops one: faults that stop the same process
    /// while it is stopped are one outage (faults are sets: the process stays down until
    /// the last of them ends).
    fn outage(&self) -> Option<(bool, usize)> {
        match *self {
            Target::Node { node, out: true } => Some((true, node)),
            Target::Client {
                client, out: true, ..
            } => Some((false, client)),
            _ => None,
        }
    }

    /// The target in words, e.g. "node 2", "client 0", "clients [0, 1] / nodes [3, 4]".
    fn describe(&self) -> String {
        match self {
            Target::Node { node, .. } => format!("node {node}"),
            Target::Client { client, .. } => format!("client {client}"),
            Target::Links { nodes, clients } => format!("clients {clients:?} / nodes {nodes:?}"),
            Target::None => "no target".into(),
        }
    }
}

/// One fault of the history and how many holds it met.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FaultMet {
    pub id: usize,
    pub kind: &'static str,
    pub origin: Origin,
    pub start_us: u64,
    /// What it acted on, in words.
    pub target: String,
    /// Holds it met (see the module doc).
    pub holds: u64,
    /// It started while an earlier fault (this id) kept the same process stopped: the
    /// two are one outage, judged together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joined: Option<usize>,
    /// It met a hold, or the outage it is part of did: false means it proved nothing.
    pub met: bool,
}

/// What the faults of a seed met: one record per fault that started, in start order.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Exercise {
    pub faults: Vec<FaultMet>,
}

/// Follows the faults and holds of a history as the checker reads it.
///
/// A nemesis may keep hundreds of thousands of faults active at once, so a fault's start
/// and end find what they need by key, without a scan of the active faults.
#[derive(Default)]
pub struct Collector {
    faults: Vec<FaultMet>,
    targets: Vec<Target>,
    /// Per fault, the index of the first fault of the outage it is part of (itself if none).
    outages: Vec<usize>,
    /// The active faults by id, each as its record's index in `faults` (the checker
    /// refuses a fault that starts again before it ended).
    active: BTreeMap<usize, usize>,
    /// Client clock jumps that ended: the clock stays moved, so they meet the client's
    /// holds until the heal.
    lasting: Vec<usize>,
    /// Per process that active faults stop ([`Target::outage`]): the first fault of the
    /// outage and how many active faults it has. Every active fault that stops a
    /// process is part of the same outage: one that starts while another is active
    /// joins that one's.
    stopped: BTreeMap<(bool, usize), (usize, usize)>,
}

impl Collector {
    /// A fault starts or ends at `f.t_us`; `open` are the holds not yet released (some
    /// may be past their validity).
    pub fn fault<'a>(&mut self, f: &FaultEvent, open: impl Iterator<Item = &'a Hold>) {
        let t = f.t_us;
        match f.action {
            FaultAction::Start => {
                let target = Target::of(&f.fault);
                let met = open
                    .filter(|h| h.start_us <= t && t < h.end_us && target.holds(h, h.start_us == t))
                    .count() as u64;
                let index = self.faults.len();
                let outage = target.outage().and_then(|key| {
                    let (first, count) = self.stopped.entry(key).or_insert((index, 0));
                    *count += 1;
                    (*first != index).then_some(*first)
                });
                self.outages.push(outage.unwrap_or(index));
                self.faults.push(FaultMet {
                    id: f.id,
                    kind: f.fault.kind(),
                    origin: f.origin,
                    start_us: t,
                    target: String::new(),
                    holds: met,
                    joined: outage.map(|first| self.faults[first].id),
                    met: false,
                });
                self.targets.push(target);
                self.active.insert(f.id, index);
            }
            FaultAction::End => {
                if let Some(index) = self.active.remove(&f.id) {
                    let target = &self.targets[index];
                    // A client's clock jump stays in force: its later holds run with it.
                    if matches!(target, Target::Client { stays: true, .. }) {
                        self.lasting.push(index);
                    } else if let Some(key) = target.outage() {
                        if let Some((_, count)) = self.stopped.get_mut(&key) {
                            *count -= 1;
                            if *count == 0 {
                                self.stopped.remove(&key);
                            }
                        }
                    }
                }
            }
        }
    }

    /// A hold starts (an acquisition, or a late extension or belief that starts anew).
    pub fn hold_started(&mut self, hold: &Hold) {
        for &index in self.active.values().chain(&self.lasting) {
            if self.targets[index].holds(hold, true) {
                self.faults[index].holds += 1;
            }
        }
    }

    /// Every fault is healed: none meets a hold from here on.
    pub fn healed(&mut self) {
        self.active.clear();
        self.lasting.clear();
        self.stopped.clear();
    }

    pub fn finish(self) -> Exercise {
        let mut faults = self.faults;
        let mut outage_met = vec![false; faults.len()];
        for (f, &first) in faults.iter().zip(&self.outages) {
            outage_met[first] |= f.holds > 0;
        }
        for ((f, target), &first) in faults.iter_mut().zip(&self.targets).zip(&self.outages) {
            f.target = target.describe();
            f.met = outage_met[first];
        }
        Exercise { faults }
    }
}

impl Exercise {
    /// Why a seed with `acquired` successful workload acquisitions and the fault `plan`
    /// it ran proved nothing, or `None` when it was exercised (the rule of the module
    /// doc). Without a plan (a history checked on its own) only the faults that started
    /// are judged.
    pub fn not_exercised(&self, acquired: u64, plan: Option<&[PlannedFault]>) -> Option<String> {
        let mut why = Vec::new();
        if acquired < MIN_ACQUISITIONS {
            why.push(format!(
                "too few acquisitions: {acquired} of at least {MIN_ACQUISITIONS}"
            ));
        }
        let plan = plan.unwrap_or_default();
        // A fault an aimed nemesis entry became is one of the nemesis's faults, judged
        // by the nemesis's rule (one of them meeting a hold is enough).
        let random = |f: &FaultMet| {
            f.origin == Origin::Nemesis
                || plan.iter().any(|p| {
                    p.id == f.id
                        && matches!(&p.firing, Some(Firing::FiredFrom { entry, .. })
                            if plan.iter().any(|e| e.id == *entry && e.origin == Origin::Nemesis))
                })
        };
        let mut missed: Vec<String> = self
            .faults
            .iter()
            .filter(|f| !random(f) && !f.met)
            .map(|f| {
                format!(
                    "#{} {} of {} at {:.3}s",
                    f.id,
                    f.kind,
                    f.target,
                    f.start_us as f64 / 1e6
                )
            })
            .collect();
        for p in plan {
            if p.origin == Origin::Nemesis || self.faults.iter().any(|f| f.id == p.id) {
                continue;
            }
            match (&p.aim, &p.firing) {
                // An aimed entry that fired is judged by the faults it became.
                (Some(_), Some(Firing::Fired { .. })) => {}
                (Some(_), _) => missed.push(format!(
                    "#{} aimed {} (its trigger never came)",
                    p.id,
                    p.fault.kind()
                )),
                (None, _) => missed.push(format!(
                    "#{} {} of {} (never started)",
                    p.id,
                    p.fault.kind(),
                    Target::of(&p.fault).describe()
                )),
            }
        }
        if !missed.is_empty() {
            const SHOWN: usize = 3;
            let more = missed.len().saturating_sub(SHOWN);
            missed.truncate(SHOWN);
            let mut line = format!("no hold met the fault(s) {}", missed.join(", "));
            if more > 0 {
                line.push_str(&format!(" and {more} more"));
            }
            why.push(line);
        }
        let random: Vec<&FaultMet> = self.faults.iter().filter(|f| random(f)).collect();
        if !random.is_empty() && random.iter().all(|f| !f.met) {
            why.push(format!(
                "no hold met any of the nemesis's {} fault(s)",
                random.len()
            ));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// How many faults met at least one hold, of how many started.
    pub fn met(&self) -> (usize, usize) {
        let met = self.faults.iter().filter(|f| f.met).count();
        (met, self.faults.len())
    }
}

#[cfg(test)]
#[path = "exercise_tests.rs"]
mod tests;
