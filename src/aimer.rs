//! The aimer: fires a scenario's aimed faults ([`crate::fault::aim`], whose module doc
//! says what an aim means) at the moment their trigger comes. Shared by both drivers,
//! sans-IO: a driver feeds it every acquire invoke and return of the workload clients
//! ([`Aimer::on_record`], saying whether an `ok`'s hold is still in force) and each
//! node's first answer to an acquisition in progress ([`Aimer::replied`]), with a way to
//! ask which nodes a client can reach now, and starts the ordinary [`PlannedFault`]s it
//! returns through the same path as any planned fault. It reads no clock and draws
//! nothing, so the same events give the same faults.

use crate::client::{Record, RecordKind};
use crate::command::{LockId, NodeId};
use crate::fault::aim::{Aim, ClientAim, Firing, NodeAim, On, Sighting};
use crate::fault::{ClientId, Fault, LinkFaults, Origin, PlannedFault, ProcessFaults};
use crate::history::OpKind;
use crate::lifecycle::Lifecycle;

/// What one event fired: how many aimed entries, and the faults they became.
#[derive(Debug, Default)]
pub struct Fired {
    pub entries: usize,
    pub faults: Vec<PlannedFault>,
}

impl Fired {
    /// Puts the faults into the run's `plan` (and `active`), tells the `lifecycle`, and
    /// returns each one's plan index with its start: the driver starts the ones due now
    /// and queues the others, as both drivers do.
    pub fn join(
        self,
        plan: &mut Vec<PlannedFault>,
        active: &mut Vec<bool>,
        lifecycle: &mut Lifecycle,
    ) -> Vec<(usize, u64)> {
        if self.entries > 0 {
            lifecycle.fired(self.entries, self.faults.len());
        }
        self.faults
            .into_iter()
            .map(|f| {
                let at = f.at_us;
                plan.push(f);
                active.push(false);
                (plan.len() - 1, at)
            })
            .collect()
    }
}

/// Which nodes client `c` can reach now: not down, and its link not cut either way.
pub fn reachable(links: &LinkFaults, procs: &ProcessFaults, c: ClientId, nodes: usize) -> Vec<NodeId> {
    use crate::fault::links::Direction;
    (0..nodes)
        .filter(|&n| {
            let link = links.link(c, n);
            !procs.is_down(n)
                && !links.is_cut(link, Direction::ToNode)
                && !links.is_cut(link, Direction::ToClient)
        })
        .collect()
}

/// An aimed entry waiting for its trigger.
#[derive(Debug)]
struct Pending {
    /// Its index in the plan.
    index: usize,
    earliest_us: u64,
    aim: Aim,
    seen: u32,
}

/// Resolves aimed entries into planned faults as their triggers come (see the module
/// doc). Feed it every acquire invoke and return in order, during the workload only.
#[derive(Debug)]
pub struct Aimer {
    pending: Vec<Pending>,
    templates: Vec<(usize, PlannedFault)>,
    clients: usize,
    nodes: usize,
    next_id: usize,
    /// Per client: the lock it holds and the nodes it holds it on.
    holds: Vec<Option<(LockId, Vec<NodeId>)>>,
    /// Per client: the lock it is acquiring.
    waiting: Vec<Option<LockId>>,
    /// Per client: the nodes that have answered its acquisition in progress, in order.
    answered: Vec<Vec<NodeId>>,
    /// Per client: whether no other client held the lock when its acquisition began.
    free: Vec<bool>,
    /// Per entry index: how it played out.
    fired: Vec<(usize, Sighting, Vec<usize>)>,
}

impl Aimer {
    /// An aimer for `plan` (the scripted and drawn faults of a run, ids equal to their
    /// index): the aimed entries in it wait, and the faults they become are numbered
    /// from `plan.len()`. `clients` counts the workload clients only: records of any
    /// client from `clients` on (the probe) are ignored (see the module doc).
    pub fn new(plan: &[PlannedFault], nodes: usize, clients: usize) -> Aimer {
        let pending = plan
            .iter()
            .enumerate()
            .filter_map(|(index, f)| {
                f.aim.map(|aim| Pending {
                    index,
                    earliest_us: f.at_us,
                    aim,
                    seen: 0,
                })
            })
            .collect::<Vec<_>>();
        Aimer {
            templates: pending.iter().map(|p| (p.index, plan[p.index].clone())).collect(),
            pending,
            clients,
            nodes,
            next_id: plan.len(),
            holds: vec![None; clients],
            waiting: vec![None; clients],
            answered: vec![Vec::new(); clients],
            free: vec![false; clients],
            fired: Vec::new(),
        }
    }

    /// Whether an aimed entry still waits (when none does, feeding is a no-op).
    pub fn is_idle(&self) -> bool {
        self.pending.is_empty()
    }

    /// [`Aimer::on_record`], with how many entries fired ([`Fired`]).
    pub fn record(
        &mut self,
        t_us: u64,
        c: ClientId,
        r: &Record,
        in_force: bool,
        reach: &dyn Fn(ClientId) -> Vec<NodeId>,
    ) -> Fired {
        let before = self.fired.len();
        let faults = self.on_record(t_us, c, r, in_force, reach);
        Fired {
            entries: self.fired.len() - before,
            faults,
        }
    }

    /// [`Aimer::replied`], with how many entries fired ([`Fired`]).
    pub fn answer(
        &mut self,
        t_us: u64,
        c: ClientId,
        node: NodeId,
        reach: &dyn Fn(ClientId) -> Vec<NodeId>,
    ) -> Fired {
        let before = self.fired.len();
        let faults = self.replied(t_us, c, node, reach);
        Fired {
            entries: self.fired.len() - before,
            faults,
        }
    }

    /// What client `c` recorded at `t_us`, as the drivers see it: an acquire's invoke and
    /// outcome, a release's invoke; anything else changes nothing. `in_force`: for an
    /// `ok`, whether the hold it reports is still valid at `t_us` (an `ok` whose validity
    /// already ran out is no hold, and triggers nothing).
    pub fn on_record(
        &mut self,
        t_us: u64,
        c: ClientId,
        r: &Record,
        in_force: bool,
        reach: &dyn Fn(ClientId) -> Vec<NodeId>,
    ) -> Vec<PlannedFault> {
        match (r.kind, r.op) {
            (RecordKind::Invoke, OpKind::Acquire) => self.acquiring(t_us, c, r.lock, reach),
            (RecordKind::Ok, OpKind::Acquire) if !in_force => {
                self.acquire_ended(c);
                Vec::new()
            }
            (RecordKind::Ok, OpKind::Acquire) => {
                let nodes: Vec<NodeId> = r.nodes.map(|s| s.iter().collect()).unwrap_or_default();
                self.acquired(t_us, c, r.lock, &nodes, reach)
            }
            (_, OpKind::Acquire) => {
                self.acquire_ended(c);
                Vec::new()
            }
            (RecordKind::Invoke, OpKind::Release) => {
                self.released(c);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Client `c` invokes an acquire of `lock` at `t_us`.
    pub fn acquiring(
        &mut self,
        t_us: u64,
        c: ClientId,
        lock: LockId,
        reach: &dyn Fn(ClientId) -> Vec<NodeId>,
    ) -> Vec<PlannedFault> {
        if self.is_idle() || c >= self.clients {
            return Vec::new();
        }
        self.holds[c] = None;
        self.waiting[c] = Some(lock);
        self.answered[c].clear();
        let holder =
            (0..self.clients).find(|&d| d != c && self.holds[d].as_ref().is_some_and(|h| h.0 == lock));
        self.free[c] = holder.is_none();
        let mut out = self.sight(t_us, On::Acquiring, c, lock, None, reach(c), reach);
        if let Some(d) = holder {
            let nodes = self.holds[d].as_ref().map(|h| h.1.clone()).unwrap_or_default();
            out.extend(self.sight(t_us, On::Contended, d, lock, Some(c), nodes, reach));
        }
        out
    }

    /// Client `c`'s acquire of `lock` succeeded at `t_us` on `nodes` (empty: not said).
    pub fn acquired(
        &mut self,
        t_us: u64,
        c: ClientId,
        lock: LockId,
        nodes: &[NodeId],
        reach: &dyn Fn(ClientId) -> Vec<NodeId>,
    ) -> Vec<PlannedFault> {
        if self.is_idle() || c >= self.clients {
            return Vec::new();
        }
        let nodes = if nodes.is_empty() {
            reach(c)
        } else {
            nodes.to_vec()
        };
        self.waiting[c] = None;
        self.answered[c].clear();
        self.holds[c] = Some((lock, nodes.clone()));
        let mut out = self.sight(t_us, On::Acquired, c, lock, None, nodes.clone(), reach);
        let waiter = (0..self.clients).find(|&w| w != c && self.waiting[w] == Some(lock));
        if let Some(w) = waiter {
            out.extend(self.sight(t_us, On::Contended, c, lock, Some(w), nodes, reach));
        }
        out
    }

    /// Node `node` answered client `c` at `t_us` (a reply to it, as the driver sees it):
    /// the first answer of a node to the client's acquisition in progress counts, and an
    /// entry waiting for `acquiring` with `replied` = that count fires.
    pub fn replied(
        &mut self,
        t_us: u64,
        c: ClientId,
        node: NodeId,
        reach: &dyn Fn(ClientId) -> Vec<NodeId>,
    ) -> Vec<PlannedFault> {
        if self.is_idle() || c >= self.clients {
            return Vec::new();
        }
        let Some(lock) = self.waiting[c] else {
            return Vec::new();
        };
        if self.answered[c].contains(&node) {
            return Vec::new();
        }
        self.answered[c].push(node);
        self.sight(t_us, On::Acquiring, c, lock, None, reach(c), reach)
    }

    /// Whether an entry waits for a node's answer (`replied`): a driver that must do work
    /// to see answers (a worker's proxies) does it only then.
    pub fn wants_replies(&self) -> bool {
        self.pending.iter().any(|p| p.aim.when.replied.is_some())
    }

    /// Client `c`'s acquire ended without a hold (failed or unknown).
    pub fn acquire_ended(&mut self, c: ClientId) {
        if let Some(w) = self.waiting.get_mut(c) {
            *w = None;
        }
        if let Some(a) = self.answered.get_mut(c) {
            a.clear();
        }
    }

    /// Client `c` no longer holds its lock (it is releasing it).
    pub fn released(&mut self, c: ClientId) {
        if let Some(h) = self.holds.get_mut(c) {
            *h = None;
        }
    }

    /// One event: every waiting entry it matches counts it, and those at their count
    /// fire, in plan order.
    #[allow(clippy::too_many_arguments)]
    fn sight(
        &mut self,
        t_us: u64,
        on: On,
        holder: ClientId,
        lock: LockId,
        waiter: Option<ClientId>,
        nodes: Vec<NodeId>,
        reach: &dyn Fn(ClientId) -> Vec<NodeId>,
    ) -> Vec<PlannedFault> {
        let mut out = Vec::new();
        let mut k = 0;
        // For `acquiring`: how many nodes have answered (0 at the invoke); an entry
        // matches only the event of its own `replied` count.
        let answered = match on {
            On::Acquiring => Some(self.answered[holder].clone()),
            _ => None,
        };
        let replied = answered.as_ref().map_or(0, |a| a.len() as u32);
        while k < self.pending.len() {
            let p = &mut self.pending[k];
            let w = p.aim.when;
            if w.on != on
                || t_us < p.earliest_us
                || w.client.is_some_and(|c| c != holder)
                || (on == On::Acquiring && w.replied.unwrap_or(0) != replied)
                || (on == On::Acquiring && w.uncontended && !self.free[holder])
            {
                k += 1;
                continue;
            }
            p.seen += 1;
            if p.seen < w.nth {
                k += 1;
                continue;
            }
            let p = self.pending.remove(k);
            let sighting = Sighting {
                on,
                t_us,
                holder,
                lock: lock.to_string(),
                waiter,
                nodes: nodes.clone(),
                answered: answered.clone().filter(|_| w.replied.is_some()),
            };
            let template = &self
                .templates
                .iter()
                .find(|(i, _)| *i == p.index)
                .expect("a template")
                .1;
            let faults = resolve(template, &p.aim, &sighting, self.nodes, self.clients, reach);
            let mut ids = Vec::with_capacity(faults.len());
            for fault in faults {
                let id = self.next_id;
                self.next_id += 1;
                ids.push(id);
                out.push(PlannedFault {
                    id,
                    at_us: t_us + p.aim.after_us,
                    duration_us: template.duration_us,
                    origin: Origin::Aimed,
                    fault,
                    aim: None,
                    firing: Some(Firing::FiredFrom {
                        entry: p.index,
                        by: sighting.clone(),
                    }),
                });
            }
            self.fired.push((p.index, sighting, ids));
        }
        out
    }

    /// Writes into a run's `plan` how each aimed entry played out (summary.json shows it).
    pub fn close(&self, plan: &mut [PlannedFault]) {
        for f in plan.iter_mut().filter(|f| f.aim.is_some()) {
            f.firing = Some(Firing::NeverFired);
        }
        for (index, by, into) in &self.fired {
            plan[*index].firing = Some(Firing::Fired {
                by: by.clone(),
                into: into.clone(),
            });
        }
    }
}

/// The faults `template` becomes when `aim` fires on `by`.
fn resolve(
    template: &PlannedFault,
    aim: &Aim,
    by: &Sighting,
    nodes: usize,
    clients: usize,
    reach: &dyn Fn(ClientId) -> Vec<NodeId>,
) -> Vec<Fault> {
    let node_set = aim.nodes.map(|a| aim_nodes(a, by, nodes, clients, reach));
    let client_set = aim.clients.map(|a| match a {
        ClientAim::Holder => vec![by.holder],
        ClientAim::Others => (0..clients).filter(|&c| c != by.holder).collect(),
    });
    let mut fault = template.fault.clone();
    match &mut fault {
        Fault::Partition {
            nodes: ns,
            clients: cs,
            ..
        }
        | Fault::Delay {
            nodes: ns,
            clients: cs,
            ..
        }
        | Fault::Loss {
            nodes: ns,
            clients: cs,
            ..
        } => {
            if let Some(set) = node_set {
                *ns = set;
            }
            if let Some(set) = client_set {
                *cs = set;
            }
            if ns.is_empty() || cs.is_empty() {
                return Vec::new();
            }
            vec![fault]
        }
        Fault::Crash { .. }
        | Fault::Failover { .. }
        | Fault::ReplicationCut { .. }
        | Fault::Pause { .. }
        | Fault::ClockJump { .. }
        | Fault::ClockRate { .. } => {
            let each: Vec<Fault> = match (node_set, client_set) {
                (Some(set), _) => set
                    .into_iter()
                    .map(|n| with_process(&fault, Some(n), None))
                    .collect(),
                (None, Some(set)) => set
                    .into_iter()
                    .map(|c| with_process(&fault, None, Some(c)))
                    .collect(),
                (None, None) => vec![fault],
            };
            each
        }
    }
}

/// `fault` (one that names one node or one client) on node `n` or client `c` instead.
fn with_process(fault: &Fault, n: Option<NodeId>, c: Option<ClientId>) -> Fault {
    let mut f = fault.clone();
    match &mut f {
        Fault::Crash { node, .. } | Fault::Failover { node } | Fault::ReplicationCut { node } => {
            if let Some(n) = n {
                *node = n;
            }
        }
        Fault::Pause { node, client, .. }
        | Fault::ClockJump { node, client, .. }
        | Fault::ClockRate { node, client, .. } => {
            if n.is_some() || c.is_some() {
                *node = n;
                *client = c;
            }
        }
        Fault::Partition { .. } | Fault::Delay { .. } | Fault::Loss { .. } => {}
    }
    f
}

/// The nodes `aim` picks relative to the holder of `by`.
fn aim_nodes(
    aim: NodeAim,
    by: &Sighting,
    nodes: usize,
    clients: usize,
    reach: &dyn Fn(ClientId) -> Vec<NodeId>,
) -> Vec<NodeId> {
    let mut held = by.nodes.clone();
    held.sort_unstable();
    held.dedup();
    match aim {
        NodeAim::Holder => held,
        NodeAim::Majority => {
            let k = held.len() / 2 + 1;
            held.truncate(k.min(held.len()));
            held
        }
        NodeAim::Pending => {
            let answered = by.answered.as_deref().unwrap_or_default();
            held.retain(|n| !answered.contains(n));
            held
        }
        NodeAim::Shared => {
            let mut reached_by = vec![0usize; nodes];
            for c in (0..clients).filter(|&c| c != by.holder) {
                for n in reach(c) {
                    reached_by[n] += 1;
                }
            }
            // The most reached; `max_by_key` keeps the last of equals, so go high to low.
            held.iter()
                .rev()
                .copied()
                .max_by_key(|&n| reached_by[n])
                .into_iter()
                .collect()
        }
    }
}

#[cfg(test)]
mod tests;
