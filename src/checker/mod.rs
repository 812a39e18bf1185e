//! The checker: the reference lock model that judges a history.
//!
//! Input is incremental, one event at a time ([`Checker::observe`]), as from a client in
//! any language. Safety is judged as the holds end ([`sweep`]: an online sweep in the
//! order of the batch one, [`safety::sweep`], which stays as its reference), and so are
//! writers' starvation ([`waits`]) and the liveness under faults ([`tolerance`]);
//! [`Checker::finish`] judges what is left. The guarded resource ([`resource`]) is
//! judged from every hold at the end, which the report draws too; a checker that keeps
//! no holds ([`Checker::without_holds`], what `lockstorm check` uses) judges it online
//! as well, and keeps what is open, not what has been. A
//! malformed history (an operation completed that was never invoked, time running
//! backwards, a client with two operations open, a number out of range: [`bounds`]) is
//! an error, [`Malformed`]; a violation
//! of the lock's guarantees is a finding in [`Findings`]. The two are never mixed.
//!
//! - Safety ([`safety`]): a client holds a lock from its successful acquire until the
//!   earlier of its release invocation and its believed validity deadline, in true time;
//!   a successful extension before that deadline moves it, and so does a `belief` (the
//!   client's clock changed, so the true time its validity ends at did): the hold ends
//!   at the earlier of its release and the belief in force; a `lost` (a worker's library
//!   lost the lock) ends it at once. Two conflicting holds of the
//!   same lock that overlap are a violation (readers may overlap readers; a writer or an
//!   exclusive holder overlaps no one).
//! - The guarded resource ([`resource`]): a stale write (accepted after its hold ended,
//!   over the write of another client's later hold) is a resource-level violation,
//!   reported apart from the lock's.
//! - Liveness ([`liveness`]): after the heal, an uncontended probe acquires every lock
//!   within the bound the history's `meta` line states; and no writer waits longer than
//!   the meta's `writer_wait_bound_us` while readers keep the lock busy ([`waits`]).
//!   During the workload ([`tolerance`]): uncontended acquisitions succeed while a
//!   majority is reachable, and locks are acquirable again after every heal.
//!   A liveness finding whose window meets a `driver_stall` (lockstorm's own driver did
//!   not run) is set aside, not blamed on the lock ([`liveness::set_aside`]).
//! - Exercise ([`exercise`]): what each fault touched of the lock (keys, messages, holds),
//!   so that a run with no violation reads "safe" only if it proved something, and
//!   "not exercised" otherwise.
//! - Statistics ([`stats`]): availability, acquire latency, per-mode waits and the
//!   availability penalty (time no client could take a free lock) of the workload phase.

mod attempts;
mod bounds;
pub mod exercise;
pub mod keys;
pub mod liveness;
pub mod resource;
pub mod safety;
pub mod stats;
mod sweep;
pub mod tolerance;
pub mod touch;
pub mod waits;

use crate::algorithm::Mode;
use crate::history::compact::{LockId, Locks};
use crate::history::compact::{LockName, NodeSet, Token};
use crate::history::{Belief, Event, FaultAction, Line, Lost, Meta, NodeRef, Op, OpKind, Phase};
pub use exercise::Exercise;
pub use liveness::LivenessFinding;
pub use resource::{ResourceStats, ResourceViolation};
pub use safety::Violation;
use serde::Serialize;
pub use stats::Stats;
use std::collections::BTreeMap;

/// A history that does not describe a possible run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("history line {line}: {message}")]
pub struct Malformed {
    pub line: usize,
    pub message: String,
}

/// One client's hold of a lock, in true time. A long history has millions: the lock,
/// token and nodes are kept as the events carry them ([`crate::history::compact`]),
/// and serialize as the history's strings and list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hold {
    pub client: usize,
    pub lock: LockName,
    pub mode: Mode,
    pub token: Option<Token>,
    /// The fencing token of the acquisition, if the algorithm issues them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fence: Option<u64>,
    pub start_us: u64,
    pub end_us: u64,
    /// Why the hold ended: the client released, its validity ran out, its library lost
    /// it (or the history ended).
    pub ended_by: HoldEnd,
    pub nodes: NodeSet,
    /// History line of the successful acquire.
    pub ok_line: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldEnd {
    Release,
    Validity,
    HistoryEnd,
    Lost,
}

/// A fault's interval, for relating violations to the faults around them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FaultSpan {
    pub id: usize,
    pub kind: String,
    pub start_us: u64,
    pub end_us: Option<u64>,
}

/// Everything the checker found.
#[derive(Clone, Debug, Serialize)]
pub struct Findings {
    pub violations: Vec<Violation>,
    pub liveness: Vec<LivenessFinding>,
    pub stats: Stats,
    pub resource_violations: Vec<ResourceViolation>,
    pub resource: ResourceStats,
    /// Fencing tokens that did not increase from one hold to a later one.
    pub fence_regressions: Vec<resource::FenceRegression>,
    /// What each fault touched, for the verdict's "safe" or "not exercised" ([`exercise`]).
    pub exercise: Exercise,
    /// Stalls of lockstorm's own driver the history records (`driver_stall` lines).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub driver_stalls: Vec<crate::history::DriverStall>,
    /// Liveness findings whose window met a driver stall: the harness's, not the lock's
    /// (not in `liveness`; see [`liveness::set_aside`]).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub liveness_set_aside: Vec<LivenessFinding>,
    #[serde(skip)]
    pub holds: Vec<Hold>,
    #[serde(skip)]
    pub faults: Vec<FaultSpan>,
}

impl Findings {
    pub fn is_safe(&self) -> bool {
        self.violations.is_empty()
    }
    pub fn is_live(&self) -> bool {
        self.liveness.is_empty()
    }
    /// No stale write got through, and fencing tokens only grew (a token below an
    /// earlier hold's lets that earlier holder's late writes in).
    pub fn is_resource_safe(&self) -> bool {
        self.resource_violations.is_empty() && self.fence_regressions.is_empty()
    }
}

/// A client's operation in progress.
pub(crate) struct OpenOp {
    op: OpKind,
    lock: LockId,
    invoke_us: u64,
    phase: Phase,
    /// The history line of its `invoke`.
    line: usize,
}

/// The incremental checker. Feed every event in order, then call [`Checker::finish`].
#[derive(Default)]
pub struct Checker {
    line: usize,
    last_us: u64,
    /// The history's numbers so far, to refuse an out-of-range one before it is used.
    bounds: bounds::Bounds,
    meta: Option<Meta>,
    /// Every lock name of the history, once: the records below keep a number or a
    /// shared name, never a copy.
    locks: Locks,
    open: BTreeMap<usize, OpenOp>,
    /// Holds not yet ended, by client and lock.
    holding: BTreeMap<(usize, LockId), Hold>,
    /// Every hold as it ended, for the report (and the resource judge), unless
    /// [`Checker::without_holds`].
    holds: Vec<Hold>,
    without_holds: bool,
    faults: Vec<FaultSpan>,
    open_faults: crate::fault::spans::OpenSpans,
    heal_us: Option<u64>,
    driver_stalls: Vec<crate::history::DriverStall>,
    stats: stats::Collector,
    probes: liveness::Probes,
    tolerance: tolerance::Collector,
    waits: waits::Waits,
    writes: resource::Writes,
    exercise: touch::Collector,
    /// The safety sweep and the fencing-token check, online ([`sweep`]).
    sweep: sweep::Sweep,
    /// When a fault was last active (now, while one is): an operation that began
    /// before it overlapped a fault.
    fault_active_us: Option<u64>,
    /// Releases and extensions that blocked past the ttl during a fault, the longest,
    /// and the workload acquires that overlapped a fault and those that succeeded.
    release_stalls: u64,
    release_stall_max_us: u64,
    fault_acquires: u64,
    fault_acquired: u64,
}

impl Checker {
    pub fn new() -> Self {
        Self::default()
    }

    /// A checker that keeps no holds: what it keeps follows what is open (per client and
    /// lock) and the faults (a record each), not the holds, and its findings have no
    /// `holds` to draw. Finish it with [`Checker::try_finish`]: the resource judge is
    /// then online, and a history whose writes it cannot judge without every hold
    /// ([`resource::Online`]) must be checked again with [`Checker::new`].
    pub fn without_holds() -> Self {
        Checker {
            without_holds: true,
            writes: resource::Writes::online(),
            ..Self::default()
        }
    }

    fn malformed(&self, message: impl Into<String>) -> Malformed {
        Malformed {
            line: self.line,
            message: message.into(),
        }
    }

    /// Takes the next event of the history.
    pub fn observe(&mut self, event: &Event) -> Result<(), Malformed> {
        if let Event::Node(n) = event {
            return self.observe_node(&NodeRef::from(n));
        }
        self.line += 1;
        if let Err(message) = self.bounds.check(event) {
            return Err(self.malformed(message));
        }
        let t = event.t_us();
        if t < self.last_us {
            return Err(self.malformed(format!("time goes backwards ({t} after {})", self.last_us)));
        }
        self.last_us = t;
        self.tolerance.advance(t, &self.holding, &self.locks);
        self.writes.advance(t, &self.holding, &self.locks);
        let mut lock = None;
        match event {
            Event::Meta(m) => {
                if self.line != 1 {
                    return Err(self.malformed("a meta event may only be the first line"));
                }
                self.waits.set_bound(m.writer_wait_bound_us);
                self.exercise.set_meta(m);
                self.meta = Some(m.clone());
            }
            Event::Invoke(op) => {
                let id = self.locks.intern(&op.lock);
                lock = Some(id);
                self.invoke(op, id)?
            }
            Event::Ok(op) | Event::Fail(op) | Event::Info(op) => {
                let id = self.locks.intern(&op.lock);
                lock = Some(id);
                let open = self.complete(op, id)?;
                self.stats.complete(event, open.op, open.phase, open.invoke_us);
                self.during_faults(event, op, &open);
                if open.phase == Phase::Probe {
                    self.probes.complete(event, op);
                }
                match (event, op.op) {
                    (Event::Ok(op), OpKind::Acquire) => {
                        if open.phase == Phase::Workload {
                            self.waits.acquired(op.client, op.t_us);
                        }
                        self.exercise
                            .acquired(op.client, open.phase == Phase::Workload, self.line);
                        self.acquired(op, id);
                    }
                    (Event::Ok(op), OpKind::Extend) => self.extended(op, id),
                    (_, OpKind::Acquire) if open.phase == Phase::Workload => {
                        self.waits.failed(op.client, op.t_us)
                    }
                    _ => {}
                }
            }
            Event::Fault(f) => match f.action {
                FaultAction::Start => {
                    self.fault_active_us = Some(t);
                    self.exercise
                        .fault(f, self.line, self.holding.values(), &self.open);
                    self.open_faults.begin(f.id, self.faults.len());
                    self.faults.push(FaultSpan {
                        id: f.id,
                        kind: f.fault.kind().to_string(),
                        start_us: t,
                        end_us: None,
                    })
                }
                FaultAction::End => {
                    self.fault_active_us = Some(t);
                    self.exercise.fault(f, self.line, std::iter::empty(), &self.open);
                    if let Some(i) = self.open_faults.end(f.id) {
                        self.faults[i].end_us = Some(t);
                    }
                }
            },
            Event::Heal { .. } => {
                self.heal_us = Some(t);
                self.exercise.healed();
            }
            Event::Write(w) => {
                let id = self.locks.intern(&w.lock);
                self.writes.observe(w, id)
            }
            Event::Belief(b) => self.belief(b)?,
            Event::Lost(l) => self.lost(l),
            Event::Node(_) => unreachable!("node lines are observed above"),
            Event::DriverStall(s) => self.driver_stalls.push(*s),
            Event::Link(l) => self.exercise.link(self.line, l),
            Event::Sentinel(_) => {}
        }
        self.tolerance.observe(event, lock);
        Ok(())
    }

    /// Observes a line as [`for_each_line`](crate::history::for_each_line) reads it.
    pub fn observe_line(&mut self, line: &Line<'_>) -> Result<(), Malformed> {
        match line {
            Line::Node(n) => self.observe_node(n),
            Line::Event(e) => self.observe(e),
        }
    }

    /// A node line: what the nodes did. The report names anomalies from them; holds
    /// and verdicts come from the clients' lines alone, so only its numbers and time
    /// are checked here.
    fn observe_node(&mut self, n: &NodeRef<'_>) -> Result<(), Malformed> {
        self.line += 1;
        if let Err(message) = self.bounds.node_line(n) {
            return Err(self.malformed(message));
        }
        if n.t_us < self.last_us {
            return Err(self.malformed(format!("time goes backwards ({} after {})", n.t_us, self.last_us)));
        }
        self.last_us = n.t_us;
        self.exercise.node(self.line, n);
        Ok(())
    }

    /// Whether a fault was active at some time since `from_us` (one is now, or one
    /// started or ended since).
    fn fault_since(&self, from_us: u64) -> bool {
        !self.open_faults.is_empty() || self.fault_active_us.is_some_and(|t| t >= from_us)
    }

    /// A workload operation that completed: an acquire that overlapped a fault counts
    /// in the availability during the faults; a release or an extension that blocked
    /// past the ttl during one is a stall. An operation begun before the heal counts
    /// however late it completes (a release stuck in a client's reconnect retries is
    /// often freed by the heal itself).
    fn during_faults(&mut self, event: &Event, op: &Op, open: &OpenOp) {
        if open.phase != Phase::Workload
            || self.heal_us.is_some_and(|h| h <= open.invoke_us)
            || !self.fault_since(open.invoke_us)
        {
            return;
        }
        let probe = self.meta.as_ref().and_then(|m| m.probe_client) == Some(op.client);
        match open.op {
            OpKind::Acquire if !probe => {
                self.fault_acquires += 1;
                self.fault_acquired += u64::from(matches!(event, Event::Ok(_)));
            }
            OpKind::Release | OpKind::Extend => {
                let took_us = op.t_us - open.invoke_us;
                let ttl_us = self
                    .meta
                    .as_ref()
                    .map_or(u64::MAX, |m| m.ttl_ms.saturating_mul(1_000));
                if took_us > ttl_us {
                    self.release_stalls += 1;
                    self.release_stall_max_us = self.release_stall_max_us.max(took_us);
                }
            }
            OpKind::Acquire => {}
        }
    }

    fn invoke(&mut self, op: &Op, lock: LockId) -> Result<(), Malformed> {
        if let Some(open) = self.open.get(&op.client) {
            return Err(self.malformed(format!(
                "client {} invokes {:?} while its {:?} of {} is still open",
                op.client,
                op.op,
                open.op,
                self.locks.name(open.lock)
            )));
        }
        if op.op == OpKind::Release {
            self.end_hold(op.client, lock, op.t_us, HoldEnd::Release);
        }
        if op.op == OpKind::Extend && self.hold(op.client, lock).is_none() {
            return Err(self.malformed(format!(
                "client {} extends {} without holding it",
                op.client, op.lock
            )));
        }
        if op.phase == Phase::Probe && op.op == OpKind::Acquire {
            self.probes.invoke(op);
        }
        if op.phase == Phase::Workload && op.op == OpKind::Acquire {
            self.waits.invoke(op.client, lock, op.mode, op.t_us);
        }
        self.exercise
            .invoked(op.client, &op.lock, op.op, op.phase == Phase::Workload, self.line);
        self.open.insert(
            op.client,
            OpenOp {
                op: op.op,
                lock,
                invoke_us: op.t_us,
                phase: op.phase,
                line: self.line,
            },
        );
        Ok(())
    }

    fn complete(&mut self, op: &Op, lock: LockId) -> Result<OpenOp, Malformed> {
        let Some(open) = self.open.remove(&op.client) else {
            return Err(self.malformed(format!(
                "client {} completes an operation it never invoked",
                op.client
            )));
        };
        if open.op != op.op || open.lock != lock {
            return Err(self.malformed(format!(
                "client {} completes {:?} of {} but invoked {:?} of {}",
                op.client,
                op.op,
                op.lock,
                open.op,
                self.locks.name(open.lock)
            )));
        }
        Ok(open)
    }

    fn acquired(&mut self, op: &Op, lock: LockId) {
        if self.hold(op.client, lock).is_some() {
            // Re-acquiring a lock one already holds ends the old hold here.
            self.end_hold(op.client, lock, op.t_us, HoldEnd::Release);
        }
        let hold = Hold {
            client: op.client,
            lock: self.locks.name(lock).clone(),
            mode: op.mode,
            token: op.token.clone(),
            fence: op.fence,
            start_us: op.t_us,
            end_us: op.valid_until_us.unwrap_or(u64::MAX).max(op.t_us),
            ended_by: HoldEnd::Validity,
            nodes: self.hold_nodes(op),
            ok_line: self.line,
        };
        self.hold_started(lock, &hold);
        self.holding.insert((op.client, lock), hold);
    }

    /// The nodes an acquisition holds its lock on: as its `ok` names them, or, where a
    /// worker's library named none, the nodes whose `node` lines hold its value now.
    fn hold_nodes(&self, op: &Op) -> NodeSet {
        match (op.nodes, &op.worker_token) {
            (Some(nodes), _) => nodes,
            (None, Some(value)) => self.exercise.keys.nodes_holding(&op.lock, value, op.t_us),
            (None, None) => NodeSet::default(),
        }
    }

    /// A successful extension: before the deadline it moves the deadline; after it (the
    /// client's clock ran slow) the old hold is over and a new one starts now.
    fn extended(&mut self, op: &Op, lock: LockId) {
        let new_end = op.valid_until_us.unwrap_or(u64::MAX).max(op.t_us);
        self.move_deadline(op.client, lock, op.t_us, |end| end.max(new_end));
    }

    /// A holder's belief changed with its clock: from now on the hold ends at the new
    /// belief, earlier or later than the old one.
    fn belief(&mut self, b: &Belief) -> Result<(), Malformed> {
        let lock = self.locks.id(&b.lock);
        let Some(hold) = lock.and_then(|lock| self.hold(b.client, lock)) else {
            return Err(self.malformed(format!(
                "client {} has a belief about {} without holding it",
                b.client, b.lock
            )));
        };
        if let (Some(held), Some(told)) = (&hold.token, &b.token) {
            if held != told {
                return Err(self.malformed(format!(
                    "client {}'s belief about {} names token {told}, but it holds {held}",
                    b.client, b.lock
                )));
            }
        }
        let new_end = b.valid_until_us.max(b.t_us);
        if let Some(lock) = lock {
            self.move_deadline(b.client, lock, b.t_us, |_| new_end);
        }
        Ok(())
    }

    /// A worker's library lost the lock: the hold ends now (a `lost` about a lock the
    /// client no longer holds changes nothing).
    fn lost(&mut self, l: &Lost) {
        if let Some(lock) = self.locks.id(&l.lock) {
            self.end_hold(l.client, lock, l.t_us, HoldEnd::Lost);
        }
    }

    /// Moves the deadline of an open hold at `t`, to what `end` makes of the current one.
    /// A hold whose deadline has passed is over: the new deadline starts a new hold at `t`
    /// (if it lies after `t`).
    fn move_deadline(&mut self, client: usize, lock: LockId, t: u64, end: impl FnOnce(u64) -> u64) {
        let line = self.line;
        let Some(hold) = self.holding.get_mut(&(client, lock)) else {
            return;
        };
        if t < hold.end_us {
            hold.end_us = end(hold.end_us).max(t);
            return;
        }
        let new_end = end(hold.end_us);
        if new_end <= t {
            return;
        }
        let mut next = hold.clone();
        next.start_us = t;
        next.end_us = new_end;
        next.ok_line = line;
        let started = next.clone();
        let old = std::mem::replace(hold, next);
        self.hold_started(lock, &started);
        self.hold_ended(lock, old, t);
    }

    /// The open hold of `client` on `lock`.
    fn hold(&self, client: usize, lock: LockId) -> Option<&Hold> {
        self.holding.get(&(client, lock))
    }

    /// Ends a hold at the earlier of `t` and its validity deadline.
    fn end_hold(&mut self, client: usize, lock: LockId, t: u64, why: HoldEnd) {
        if let Some(mut hold) = self.holding.remove(&(client, lock)) {
            if t < hold.end_us {
                hold.end_us = t;
                hold.ended_by = why;
            }
            self.hold_ended(lock, hold, t);
        }
    }

    /// A hold began (it is open: its end may still move). Every online judge hears of it
    /// here.
    fn hold_started(&mut self, lock: LockId, hold: &Hold) {
        self.exercise.hold_started(hold);
        self.sweep.opened(lock, hold);
        self.waits.hold_started(lock, hold);
        self.writes.hold_started(lock, hold);
    }

    /// An open hold ended as `hold` says, at or before `now_us`: its record is final.
    fn hold_ended(&mut self, lock: LockId, hold: Hold, now_us: u64) {
        self.tolerance.hold_ended(lock, &hold);
        self.waits.hold_ended(lock, &hold, now_us);
        self.writes.hold_ended(lock, &hold);
        if self.without_holds {
            self.sweep.ended(lock, hold, now_us);
        } else {
            self.sweep.ended(lock, hold.clone(), now_us);
            self.holds.push(hold);
        }
    }

    /// Judges everything observed.
    pub fn finish(self) -> Findings {
        assert!(
            !self.without_holds,
            "a checker without holds finishes with try_finish"
        );
        self.finish_parts()
            .expect("with every hold kept, every write is judged")
            .0
    }

    /// [`Checker::finish`] for a checker [`without_holds`](Checker::without_holds):
    /// `None` if the history has a write only a judge of every hold can judge.
    pub fn try_finish(self) -> Option<Findings> {
        self.finish_parts().map(|(findings, _)| findings)
    }

    /// [`Checker::finish`], and what the fault-tolerance judge found as it gave it (for
    /// the tests, which compare it with [`tolerance::batch`]).
    fn finish_parts(mut self) -> Option<(Findings, tolerance::Outcome)> {
        let end_us = self.last_us;
        // A hold still open keeps its validity: the client believes in it until then.
        // Only a hold without a validity deadline is cut at the end of the history.
        for ((_, lock), mut hold) in std::mem::take(&mut self.holding) {
            if hold.end_us == u64::MAX {
                hold.end_us = end_us.max(hold.start_us);
                hold.ended_by = HoldEnd::HistoryEnd;
            }
            self.hold_ended(lock, hold, end_us);
        }
        let (violations, fence_regressions) = self.sweep.finish(&self.locks, &self.faults);
        // The resource judge, unless online, reads every hold, by lock and start; and the
        // report draws them in that order.
        safety::sort(&mut self.holds);
        let (resource_violations, resource) = self.writes.finish(&self.holds, &self.locks)?;
        let mut liveness = liveness::judge(self.meta.as_ref(), self.heal_us, end_us, &self.probes);
        let under_faults = self.tolerance.finish(end_us, &self.locks);
        liveness.extend(under_faults.findings.iter().cloned());
        let mut stats = self.stats.finish();
        stats.tolerance_checked = under_faults.tolerance_checked;
        stats.probe = under_faults.probe.clone();
        stats.stalls = under_faults.stalls + self.release_stalls;
        stats.stall_max_us = under_faults.stall_max_us.max(self.release_stall_max_us);
        stats.release_stalls = self.release_stalls;
        stats.fault_acquires = self.fault_acquires;
        stats.fault_acquired = self.fault_acquired;
        stats.unavailable_us = under_faults.unavailable_us;
        let workload_us = self.heal_us.unwrap_or(end_us);
        stats.unavailable_share = if workload_us == 0 {
            0.0
        } else {
            under_faults.unavailable_us as f64 / workload_us as f64
        };
        let (waits, starvation) = self.waits.finish(&self.locks);
        liveness.extend(starvation);
        stats.waits = waits;
        let stalls: Vec<(u64, u64)> = self.driver_stalls.iter().map(|s| s.span()).collect();
        let (liveness, liveness_set_aside) = liveness::set_aside(liveness, &stalls, end_us);
        let findings = Findings {
            violations,
            liveness,
            driver_stalls: self.driver_stalls,
            liveness_set_aside,
            stats,
            resource_violations,
            resource,
            fence_regressions,
            exercise: self.exercise.finish(),
            holds: self.holds,
            faults: self.faults,
        };
        Some((findings, under_faults))
    }
}

/// Checks a whole history.
pub fn check(history: &[Event]) -> Result<Findings, Malformed> {
    let mut checker = Checker::new();
    for e in history {
        checker.observe(e)?;
    }
    Ok(checker.finish())
}

/// Checks a JSONL history file in one pass, without holding its events or its holds:
/// what `lockstorm check` does, in memory that follows what is open, not the length of
/// the history. The same answer as [`crate::history::read_jsonl`] then [`check`], but
/// with no `holds` in the findings; a line that cannot be read is that error even
/// after a malformed event (the rest of the file is still read, and not judged). A
/// history with a write the online resource judge cannot judge ([`resource::Online`],
/// never one of lockstorm's own) is read a second time, keeping every hold.
pub fn check_jsonl(
    path: &std::path::Path,
) -> Result<Result<Findings, Malformed>, crate::history::HistoryError> {
    let checked = one_pass(path, Checker::without_holds())?;
    match checked.map(Checker::try_finish) {
        Err(malformed) => Ok(Err(malformed)),
        Ok(Some(findings)) => Ok(Ok(findings)),
        Ok(None) => {
            let checked = one_pass(path, Checker::new())?;
            Ok(checked.map(|checker| {
                let mut findings = checker.finish();
                findings.holds = Vec::new();
                findings
            }))
        }
    }
}

/// Feeds every line of `path` to `checker`, up to the first malformed one.
fn one_pass(
    path: &std::path::Path,
    mut checker: Checker,
) -> Result<Result<Checker, Malformed>, crate::history::HistoryError> {
    let mut malformed = None;
    crate::history::for_each_line(path, |line| {
        if malformed.is_none() {
            if let Err(e) = checker.observe_line(&line) {
                malformed = Some(e);
            }
        }
    })?;
    Ok(match malformed {
        Some(e) => Err(e),
        None => Ok(checker),
    })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod rw_tests;

#[cfg(test)]
mod differential_tests;

#[cfg(test)]
mod reference;
