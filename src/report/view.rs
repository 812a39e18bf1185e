//! What the report draws and tells, gathered once from a history and its findings.
//!
//! The plots, the narrative and the HTML page all read a [`RunView`]: the holds the
//! checker derived, every fault with its targets and interval, every completed acquire
//! with its latency, and every write the guarded resource judged. Modes are kept as their history names (`exclusive`, `read`,
//! `write`, ...) so a new mode needs no change here.

use crate::algorithm::Mode;
use crate::checker::{Findings, Hold, Violation};
use crate::fault::spans::OpenSpans;
use crate::fault::{Fault, Origin};
use crate::history::{Event, FaultAction, HistoryFile, Meta, OpKind, Phase, ResourceWrite};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// A fault's interval and what it hits.
#[derive(Clone, Debug)]
pub struct FaultWindow {
    pub id: usize,
    pub origin: Origin,
    pub fault: Fault,
    pub start_us: u64,
    /// `None` while it never healed within the history.
    pub end_us: Option<u64>,
    /// History line (1-based) of its start.
    pub line: usize,
}

/// How an acquire operation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Acquired,
    Failed,
    Unknown,
}

/// One completed acquire operation of the workload phase (a few words each: a long run
/// has millions).
#[derive(Clone, Copy, Debug)]
pub struct Acquire {
    pub client: usize,
    /// Index into [`RunView::locks`].
    pub lock: u32,
    pub mode: Mode,
    pub invoke_us: u64,
    pub done_us: u64,
    pub outcome: Outcome,
}

/// What a node did to a lock's key that the timeline marks on the node's row (the
/// history's `node` lines; `set` and `deleted` are the holds' own story and are not
/// marked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeMark {
    /// The key's expiry came by the node's clock, at this true time (`expired_at_us`).
    Expired,
    /// The node restarted without the key.
    Lost,
    /// At a failover the replica had the key.
    Replicated,
    /// At a failover the replica had not yet received the key: it trailed its master by
    /// `lag_us`.
    Unreplicated { lag_us: u64 },
}

/// One [`NodeMark`] on one node.
#[derive(Clone, Copy, Debug)]
pub struct NodeEventMark {
    pub node: usize,
    /// The lock whose key it was: an index into [`RunView::locks`].
    pub lock: u32,
    pub t_us: u64,
    pub mark: NodeMark,
}

/// The history a view quotes from: in memory, or on disk ([`HistoryFile`]), read again
/// a stretch at a time where a story quotes it. Indices are 0-based event positions
/// (the history's line numbers minus one).
#[derive(Clone, Copy)]
pub enum Lines<'a> {
    Memory(&'a [Event]),
    File(&'a HistoryFile),
}

/// How many events a [`Lines`] reads from disk at once when it searches.
const STRETCH: usize = 4096;

impl<'a> Lines<'a> {
    pub fn len(&self) -> usize {
        match self {
            Lines::Memory(events) => events.len(),
            Lines::File(file) => file.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events `from..to`, clipped to the history.
    pub fn range(&self, from: usize, to: usize) -> Cow<'a, [Event]> {
        match self {
            Lines::Memory(events) => {
                let to = to.min(events.len());
                Cow::Borrowed(&events[from.min(to)..to])
            }
            Lines::File(file) => Cow::Owned(file.read(from, to)),
        }
    }

    /// Event `i`.
    pub fn get(&self, i: usize) -> Option<Event> {
        self.range(i, i.saturating_add(1)).into_owned().pop()
    }

    /// The index of the last event before `before` that `found` picks.
    pub fn rposition(&self, before: usize, found: impl Fn(&Event) -> bool) -> Option<usize> {
        let mut to = before.min(self.len());
        while to > 0 {
            let from = to.saturating_sub(STRETCH);
            if let Some(i) = self.range(from, to).iter().rposition(&found) {
                return Some(from + i);
            }
            to = from;
        }
        None
    }

    /// Hands `each` the events from `from` on, in order, until it returns false.
    pub fn walk_from(&self, from: usize, mut each: impl FnMut(&Event) -> bool) {
        let mut at = from;
        while at < self.len() {
            for e in self.range(at, at + STRETCH).iter() {
                if !each(e) {
                    return;
                }
            }
            at += STRETCH;
        }
    }
}

/// Everything a report shows about one history.
pub struct RunView<'a> {
    pub history: Lines<'a>,
    pub findings: &'a Findings,
    /// The findings' lists, each worst first: the order the report tells them in.
    pub worst: super::severity::Worst<'a>,
    pub meta: Option<Meta>,
    pub nodes: usize,
    pub clients: usize,
    /// True time of the last event.
    pub end_us: u64,
    pub heal_us: Option<u64>,
    pub faults: Vec<FaultWindow>,
    pub acquires: Vec<Acquire>,
    /// The locks' names, in order of first acquisition or first node line
    /// ([`Acquire::lock`] and [`NodeEventMark::lock`] index it).
    pub locks: Vec<String>,
    /// Every write the guarded resource judged, in history order.
    pub writes: Vec<ResourceWrite>,
    /// The history line (1-based) of each of `writes`.
    pub write_lines: Vec<usize>,
    /// What the nodes did to the keys that the timeline marks, in history order.
    pub node_marks: Vec<NodeEventMark>,
    /// Node 0 is a deployment (the meta line says which; older Sentinel histories say it
    /// by their sentinels' lines), whose faults strike the master of the moment and split
    /// the network around it.
    pub deployment: Option<crate::history::Deploy>,
}

/// The name a mode has in the history (`exclusive`, `read`, `write`).
pub fn mode_name(mode: Mode) -> String {
    mode.name().to_string()
}

/// What a [`RunView`] is made of, gathered one event at a time: a history on disk is
/// read once, into this, and the view quotes the file for the rest.
#[derive(Default)]
pub struct Gather {
    meta: Option<Meta>,
    faults: Vec<FaultWindow>,
    acquires: Vec<Acquire>,
    /// Every lock name once, numbered in order of appearance (a walk of every name to
    /// find one made a history of 750,000 lock names take minutes).
    locks: crate::history::compact::Locks,
    writes: Vec<ResourceWrite>,
    write_lines: Vec<usize>,
    node_marks: Vec<NodeEventMark>,
    open: BTreeMap<usize, (u64, OpKind, Phase)>,
    open_faults: OpenSpans,
    heal_us: Option<u64>,
    end_us: u64,
    max_node: usize,
    max_client: usize,
    sentinel: bool,
}

impl Gather {
    /// Takes event `i` (0-based).
    pub fn observe(&mut self, i: usize, e: &Event) {
        self.end_us = e.t_us();
        match e {
            Event::Meta(m) => {
                if self.meta.is_none() {
                    self.meta = Some(m.clone());
                }
            }
            Event::Sentinel(_) => self.sentinel = true,
            Event::Belief(_) | Event::Lost(_) | Event::DriverStall(_) | Event::Link(_) => {}
            Event::Node(n) => {
                use crate::history::NodeAction;
                let (t_us, mark) = match n.action {
                    NodeAction::Expired => (n.expired_at_us.unwrap_or(n.t_us), NodeMark::Expired),
                    NodeAction::Lost => (n.t_us, NodeMark::Lost),
                    NodeAction::Replicated => (n.t_us, NodeMark::Replicated),
                    NodeAction::Unreplicated => (
                        n.t_us,
                        NodeMark::Unreplicated {
                            lag_us: n.lag_us.unwrap_or(0),
                        },
                    ),
                    _ => return,
                };
                self.max_node = self.max_node.max(n.node + 1);
                let lock = self.lock_index(&n.lock);
                self.node_marks.push(NodeEventMark {
                    node: n.node,
                    lock,
                    t_us,
                    mark,
                });
            }
            Event::Write(w) => {
                self.writes.push(w.clone());
                self.write_lines.push(i + 1);
            }
            Event::Invoke(op) => {
                self.max_client = self.max_client.max(op.client + 1);
                self.open.insert(op.client, (op.t_us, op.op, op.phase));
            }
            Event::Ok(op) | Event::Fail(op) | Event::Info(op) => {
                if let Some(n) = op.nodes.as_ref().and_then(|n| n.iter().max()) {
                    self.max_node = self.max_node.max(n + 1);
                }
                let Some((invoke_us, kind, phase)) = self.open.remove(&op.client) else {
                    return;
                };
                if kind != OpKind::Acquire || phase != Phase::Workload {
                    return;
                }
                let outcome = match e {
                    Event::Ok(_) => Outcome::Acquired,
                    Event::Fail(_) => Outcome::Failed,
                    _ => Outcome::Unknown,
                };
                let lock = self.lock_index(&op.lock);
                self.acquires.push(Acquire {
                    client: op.client,
                    lock,
                    mode: op.mode,
                    invoke_us,
                    done_us: op.t_us,
                    outcome,
                });
            }
            Event::Fault(f) => match f.action {
                FaultAction::Start => {
                    let (nodes, _) = targets(&f.fault);
                    if let Some(n) = nodes.iter().max() {
                        self.max_node = self.max_node.max(n + 1);
                    }
                    self.open_faults.begin(f.id, self.faults.len());
                    self.faults.push(FaultWindow {
                        id: f.id,
                        origin: f.origin,
                        fault: f.fault.clone(),
                        start_us: f.t_us,
                        end_us: None,
                        line: i + 1,
                    });
                }
                FaultAction::End => {
                    if let Some(w) = self.open_faults.end(f.id) {
                        self.faults[w].end_us = Some(f.t_us);
                    }
                }
            },
            Event::Heal { t_us } => self.heal_us = Some(*t_us),
        }
    }

    /// The index of `lock` in [`RunView::locks`], adding it.
    fn lock_index(&mut self, lock: &str) -> u32 {
        self.locks.intern(lock)
    }

    /// The view, quoting `history` (the history gathered).
    pub fn into_view<'a>(self, history: Lines<'a>, findings: &'a Findings) -> RunView<'a> {
        let meta = self.meta;
        let deployment = meta
            .as_ref()
            .and_then(|m| m.deployment)
            .or(self.sentinel.then_some(crate::history::Deploy::Sentinel));
        RunView {
            history,
            findings,
            worst: super::severity::Worst::of(findings),
            nodes: meta
                .as_ref()
                .map_or(self.max_node, |m| m.nodes.max(self.max_node)),
            clients: meta
                .as_ref()
                .map_or(self.max_client, |m| m.clients.max(self.max_client)),
            meta,
            end_us: self.end_us,
            heal_us: self.heal_us,
            faults: self.faults,
            acquires: self.acquires,
            locks: (0..self.locks.len() as u32)
                .map(|id| self.locks.name(id).as_str().to_string())
                .collect(),
            writes: self.writes,
            write_lines: self.write_lines,
            node_marks: self.node_marks,
            deployment,
        }
    }
}

impl<'a> RunView<'a> {
    /// The view of a history in memory.
    pub fn new(history: &'a [Event], findings: &'a Findings) -> RunView<'a> {
        let mut gather = Gather::default();
        for (i, e) in history.iter().enumerate() {
            gather.observe(i, e);
        }
        gather.into_view(Lines::Memory(history), findings)
    }

    pub fn holds(&self) -> &[Hold] {
        &self.findings.holds
    }

    /// The violations, the longest overlap first ([`super::severity`]).
    pub fn violations(&self) -> &[&'a Violation] {
        &self.worst.violations
    }

    /// The heal as plots draw it: only in a run with faults. A run without any has a heal
    /// line too (the end of its workload), which ends no fault.
    pub fn heal_drawn(&self) -> Option<u64> {
        self.heal_us.filter(|_| !self.faults.is_empty())
    }

    /// The end of the workload phase (the heal), or of the history.
    pub fn workload_end_us(&self) -> u64 {
        self.heal_us.unwrap_or(self.end_us)
    }

    /// The modes that occur, exclusive first, then by name.
    pub fn modes(&self) -> Vec<String> {
        let seen: std::collections::BTreeSet<Mode> = self
            .acquires
            .iter()
            .map(|a| a.mode)
            .chain(self.holds().iter().map(|h| h.mode))
            .collect();
        let mut modes: Vec<String> = seen.into_iter().map(mode_name).collect();
        modes.sort_by_key(|m| (m != "exclusive", m.clone()));
        modes
    }

    /// The locks only the probe client (meta `probe_client`) holds: its lock of its own,
    /// which the timelines of the workload's locks leave out.
    pub fn probe_locks(&self) -> Vec<String> {
        let Some(probe) = self.meta.as_ref().and_then(|m| m.probe_client) else {
            return Vec::new();
        };
        let mut probe_locks: Vec<String> = Vec::new();
        let mut others = std::collections::BTreeSet::new();
        for h in self.holds() {
            if h.client == probe {
                if !probe_locks.iter().any(|l| *l == h.lock) {
                    probe_locks.push(h.lock.to_string());
                }
            } else {
                others.insert(h.lock.as_str());
            }
        }
        for a in &self.acquires {
            if a.client != probe {
                others.insert(self.locks[a.lock as usize].as_str());
            }
        }
        probe_locks.retain(|l| !others.contains(l.as_str()));
        probe_locks
    }

    /// Whether readers and writers are told apart (a read-write lock run).
    pub fn is_read_write(&self) -> bool {
        self.modes().iter().any(|m| m != "exclusive")
    }

    /// Acquire latencies (invoke to ok) of one mode's successful acquires, sorted.
    pub fn latencies_us(&self, mode: &str) -> Vec<u64> {
        let mut v: Vec<u64> = self
            .acquires
            .iter()
            .filter(|a| a.mode.name() == mode && a.outcome == Outcome::Acquired)
            .map(|a| a.done_us - a.invoke_us)
            .collect();
        v.sort_unstable();
        v
    }

    /// Wait times of one mode, sorted: from a client's first acquire of a lock in that
    /// mode until it acquires, across failed attempts in between (as the checker's
    /// starvation judge counts them). This is what a starving reader or writer feels,
    /// where the latency of one attempt is not. Waits still open at the end are left out.
    pub fn waits_us(&self, mode: &str) -> Vec<u64> {
        self.waits(mode).0
    }

    /// How many waits of one mode were still open when the history ended: a client
    /// that asked and never got the lock (censored in the wait CDF).
    pub fn waits_open(&self, mode: &str) -> usize {
        self.waits(mode).1
    }

    fn waits(&self, mode: &str) -> (Vec<u64>, usize) {
        let mut waiting: BTreeMap<(usize, u32), u64> = BTreeMap::new();
        let mut out = Vec::new();
        for a in self.acquires.iter().filter(|a| a.mode.name() == mode) {
            let key = (a.client, a.lock);
            let since = *waiting.entry(key).or_insert(a.invoke_us);
            if a.outcome == Outcome::Acquired {
                out.push(a.done_us - since);
                waiting.remove(&key);
            }
        }
        out.sort_unstable();
        (out, waiting.len())
    }
}

/// Where the workload's time went, lock by lock, as the availability plot and
/// summary.json's `availability_in_time` count it (see docs/availability.md). Each list
/// is sorted and disjoint, within the workload phase.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeSpent {
    /// Some lock was free (not held, no acquisition of it under way that succeeded) and
    /// wanted, and every attempt at it failed: the lock could not be acquired.
    pub unavailable: Vec<(u64, u64)>,
    /// Some client's attempt at a lock failed while the lock was held or being
    /// acquired by a successful attempt: time lost to contention, not to faults.
    pub contended: Vec<(u64, u64)>,
}

impl TimeSpent {
    pub fn unavailable_us(&self) -> u64 {
        self.unavailable.iter().map(|(s, e)| e - s).sum()
    }

    pub fn contended_us(&self) -> u64 {
        self.contended.iter().map(|(s, e)| e - s).sum()
    }
}

/// Sorted intervals as sorted disjoint ones (touching ones joined, empty ones dropped).
pub fn union(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v.into_iter().filter(|&(s, e)| e > s) {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Intervals `(start, end)` in µs.
pub type Spans = Vec<(u64, u64)>;

/// `a` minus `b` and `a` intersected with `b`, both sorted and disjoint.
fn split(a: &[(u64, u64)], b: &[(u64, u64)]) -> (Spans, Spans) {
    let (mut minus, mut within) = (Vec::new(), Vec::new());
    let mut j = 0;
    for &(s, e) in a {
        while j < b.len() && b[j].1 <= s {
            j += 1;
        }
        let mut cur = s;
        let mut k = j;
        while k < b.len() && b[k].0 < e {
            let (bs, be) = b[k];
            if bs > cur {
                minus.push((cur, bs));
            }
            let (is, ie) = (bs.max(cur), be.min(e));
            if ie > is {
                within.push((is, ie));
            }
            cur = cur.max(be);
            k += 1;
        }
        if cur < e {
            minus.push((cur, e));
        }
    }
    (minus, within)
}

impl RunView<'_> {
    /// Where the workload's time went: see [`TimeSpent`]. The checker counts the same
    /// unavailable time (`stats.unavailable_us`); a test holds the two equal.
    pub fn time_spent(&self) -> TimeSpent {
        let w = self.workload_end_us();
        let clip = |(s, e): (u64, u64)| (s.min(w), e.min(w));
        let mut per_lock: Vec<(Spans, Spans)> = vec![Default::default(); self.locks.len()];
        for a in &self.acquires {
            let (busy, failed) = &mut per_lock[a.lock as usize];
            let span = clip((a.invoke_us, a.done_us));
            if a.outcome == Outcome::Acquired {
                busy.push(span);
            } else {
                failed.push(span);
            }
        }
        let index: BTreeMap<&str, usize> = self
            .locks
            .iter()
            .enumerate()
            .map(|(k, l)| (l.as_str(), k))
            .collect();
        for h in self.holds() {
            if let Some(&k) = index.get(h.lock.as_str()) {
                per_lock[k].0.push(clip((h.start_us, h.end_us)));
            }
        }
        let (mut unavailable, mut contended) = (Vec::new(), Vec::new());
        for (busy, failed) in per_lock {
            let (free, held) = split(&union(failed), &union(busy));
            unavailable.extend(free);
            contended.extend(held);
        }
        TimeSpent {
            unavailable: union(unavailable),
            contended: union(contended),
        }
    }
}

/// The nodes and clients a fault hits directly (see [`Fault::targets`]).
pub fn targets(fault: &Fault) -> (Vec<usize>, Vec<usize>) {
    fault.targets()
}

/// How a hold began: an acquisition, or an extension that succeeded after the client's
/// earlier hold had run out (the checker starts a new hold there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Began {
    Acquired,
    ExtendedLate,
}

/// The `ok` event that began a hold (its line is 1-based: an acquire, or a late
/// extension) and the line of the invoke before it.
pub(super) fn acquire_lines(history: Lines, h: &Hold) -> (Option<crate::history::Op>, usize) {
    let ok = history.get(h.ok_line.wrapping_sub(1)).and_then(|e| match e {
        Event::Ok(op) => Some(op),
        _ => None,
    });
    let kind = ok.as_ref().map_or(OpKind::Acquire, |o| o.op);
    let invoke = history
        .rposition(
            h.ok_line.saturating_sub(1),
            |e| matches!(e, Event::Invoke(op) if op.client == h.client && op.op == kind),
        )
        .map_or(h.ok_line, |i| i + 1);
    (ok, invoke)
}

/// When a hold was asked for: its acquire's `invoke`, else (no such line) its start.
pub(super) fn asked_us(history: Lines, h: &Hold) -> u64 {
    let (_, invoke_line) = acquire_lines(history, h);
    history
        .get(invoke_line.wrapping_sub(1))
        .as_ref()
        .map_or(h.start_us, Event::t_us)
        .min(h.start_us)
}

/// Whether a hold began with a late extension.
pub(super) fn began(view: &RunView, h: &Hold) -> Began {
    match acquire_lines(view.history, h).0 {
        Some(op) if op.op == OpKind::Extend => Began::ExtendedLate,
        _ => Began::Acquired,
    }
}
