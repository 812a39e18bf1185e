//! What the report draws and tells, gathered once from a history and its findings.
//!
//! The plots, the narrative and the HTML page all read a [`RunView`]: the holds the
//! checker derived, every fault with its targets and interval, every completed acquire
//! with its latency, and every write the guarded resource judged. Modes are kept as their history names (`exclusive`, `read`,
//! `write`, ...) so a new mode needs no change here.

use crate::algorithm::Mode;
use crate::checker::{Findings, Hold, Violation};
use crate::fault::{Fault, Origin};
use crate::history::{Event, FaultAction, Meta, OpKind, Phase, ResourceWrite};
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

/// One completed acquire operation of the workload phase.
#[derive(Clone, Debug)]
pub struct Acquire {
    pub client: usize,
    pub lock: String,
    pub mode: String,
    pub invoke_us: u64,
    pub done_us: u64,
    pub outcome: Outcome,
}

/// Everything a report shows about one history.
pub struct RunView<'a> {
    pub history: &'a [Event],
    pub findings: &'a Findings,
    pub meta: Option<&'a Meta>,
    pub nodes: usize,
    pub clients: usize,
    /// True time of the last event.
    pub end_us: u64,
    pub heal_us: Option<u64>,
    pub faults: Vec<FaultWindow>,
    pub acquires: Vec<Acquire>,
    /// Every write the guarded resource judged, in history order.
    pub writes: Vec<&'a ResourceWrite>,
}

/// The name a mode has in the history (`exclusive`, `read`, `write`).
pub fn mode_name(mode: Mode) -> String {
    match serde_json::to_value(mode) {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{mode:?}").to_lowercase(),
    }
}

impl<'a> RunView<'a> {
    pub fn new(history: &'a [Event], findings: &'a Findings) -> RunView<'a> {
        let meta = history.iter().find_map(|e| match e {
            Event::Meta(m) => Some(m),
            _ => None,
        });
        let mut faults: Vec<FaultWindow> = Vec::new();
        let mut acquires = Vec::new();
        let mut writes = Vec::new();
        let mut open: BTreeMap<usize, (u64, OpKind, Phase)> = BTreeMap::new();
        let mut heal_us = None;
        let (mut max_node, mut max_client) = (0, 0);
        for (i, e) in history.iter().enumerate() {
            match e {
                Event::Meta(_) | Event::Belief(_) => {}
                Event::Write(w) => writes.push(w),
                Event::Invoke(op) => {
                    max_client = max_client.max(op.client + 1);
                    open.insert(op.client, (op.t_us, op.op, op.phase));
                }
                Event::Ok(op) | Event::Fail(op) | Event::Info(op) => {
                    if let Some(n) = op.nodes.as_ref().and_then(|n| n.iter().max()) {
                        max_node = max_node.max(n + 1);
                    }
                    let Some((invoke_us, kind, phase)) = open.remove(&op.client) else {
                        continue;
                    };
                    if kind != OpKind::Acquire || phase != Phase::Workload {
                        continue;
                    }
                    let outcome = match e {
                        Event::Ok(_) => Outcome::Acquired,
                        Event::Fail(_) => Outcome::Failed,
                        _ => Outcome::Unknown,
                    };
                    acquires.push(Acquire {
                        client: op.client,
                        lock: op.lock.clone(),
                        mode: mode_name(op.mode),
                        invoke_us,
                        done_us: op.t_us,
                        outcome,
                    });
                }
                Event::Fault(f) => match f.action {
                    FaultAction::Start => {
                        let (nodes, _) = targets(&f.fault);
                        if let Some(n) = nodes.iter().max() {
                            max_node = max_node.max(n + 1);
                        }
                        faults.push(FaultWindow {
                            id: f.id,
                            origin: f.origin,
                            fault: f.fault.clone(),
                            start_us: f.t_us,
                            end_us: None,
                            line: i + 1,
                        });
                    }
                    FaultAction::End => {
                        if let Some(w) = faults
                            .iter_mut()
                            .rev()
                            .find(|w| w.id == f.id && w.end_us.is_none())
                        {
                            w.end_us = Some(f.t_us);
                        }
                    }
                },
                Event::Heal { t_us } => heal_us = Some(*t_us),
            }
        }
        RunView {
            history,
            findings,
            meta,
            nodes: meta.map_or(max_node, |m| m.nodes.max(max_node)),
            clients: meta.map_or(max_client, |m| m.clients.max(max_client)),
            end_us: history.last().map_or(0, Event::t_us),
            heal_us,
            faults,
            acquires,
            writes,
        }
    }

    pub fn holds(&self) -> &[Hold] {
        &self.findings.holds
    }

    pub fn violations(&self) -> &[Violation] {
        &self.findings.violations
    }

    /// The end of the workload phase (the heal), or of the history.
    pub fn workload_end_us(&self) -> u64 {
        self.heal_us.unwrap_or(self.end_us)
    }

    /// The modes that occur, exclusive first, then by name.
    pub fn modes(&self) -> Vec<String> {
        let mut modes: Vec<String> = self
            .acquires
            .iter()
            .map(|a| a.mode.clone())
            .chain(self.holds().iter().map(|h| mode_name(h.mode)))
            .collect();
        modes.sort_by_key(|m| (m != "exclusive", m.clone()));
        modes.dedup();
        modes
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
            .filter(|a| a.mode == mode && a.outcome == Outcome::Acquired)
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
        let mut waiting: BTreeMap<(usize, &str), u64> = BTreeMap::new();
        let mut out = Vec::new();
        for a in self.acquires.iter().filter(|a| a.mode == mode) {
            let key = (a.client, a.lock.as_str());
            let since = *waiting.entry(key).or_insert(a.invoke_us);
            if a.outcome == Outcome::Acquired {
                out.push(a.done_us - since);
                waiting.remove(&key);
            }
        }
        out.sort_unstable();
        out
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
pub(super) fn acquire_lines<'a>(history: &'a [Event], h: &Hold) -> (Option<&'a crate::history::Op>, usize) {
    let ok = history.get(h.ok_line.wrapping_sub(1)).and_then(|e| match e {
        Event::Ok(op) => Some(op),
        _ => None,
    });
    let kind = ok.map_or(OpKind::Acquire, |o| o.op);
    let invoke = history[..h.ok_line.saturating_sub(1).min(history.len())]
        .iter()
        .rposition(|e| matches!(e, Event::Invoke(op) if op.client == h.client && op.op == kind))
        .map_or(h.ok_line, |i| i + 1);
    (ok, invoke)
}

/// Whether a hold began with a late extension.
pub(super) fn began(view: &RunView, h: &Hold) -> Began {
    match acquire_lines(view.history, h).0 {
        Some(op) if op.op == OpKind::Extend => Began::ExtendedLate,
        _ => Began::Acquired,
    }
}
