//! Liveness under faults, judged from the workload phase: fault tolerance, deadlock
//! freedom after every heal, and the availability penalty (seed 002).
//!
//! - Fault tolerance: an acquisition that failed although, for a ttl before it and
//!   throughout it, a majority of nodes was up, healthy and reachable from its client,
//!   the client itself ran undisturbed, and no other client touched the lock, is a
//!   finding. The ttl before the attempt covers keys that earlier holders may have left.
//!   A node counts as unhealthy while a fault names it (crash, failover, pause, clock
//!   fault) or cuts, delays or drops its link to the client. A client counts as
//!   disturbed whenever a fault acts on anything its algorithm reads: a pause, a clock
//!   rate (every variant times its validity and timeouts by its monotonic clock), and a
//!   wall-clock jump when the algorithm sends wall readings to the nodes (the read-write
//!   scripts take `now` from the client; a history from another library, whose `meta`
//!   names no kind of lockstorm's, is assumed to read its wall clock too). A clock jump
//!   counts for its size after it: it moves expiry times (a node's keys, a client's
//!   reader scores) by that much. The offset it leaves can make a stale entry of another
//!   client look alive longer than the ttl lookback covers; that is not counted.
//! - Deadlock freedom after every heal: once every fault has ended, a lock that clients
//!   ask for must be acquired (or be held) within the liveness bound of the `meta`
//!   line, unless a new fault starts first. The final heal is judged by the probes.
//! - Availability penalty: the time during which some lock was free and wanted, yet
//!   every attempt at it failed: failed attempts, minus the time the lock was held or
//!   being successfully acquired.
//! - The probe client (`meta.probe_client`), when the run has one, takes a lock no
//!   other client uses, so none of its attempts is contended: each of them, ok or
//!   failed, is judged by the rule above when its client was undisturbed and a majority
//!   reachable, and counted ([`ProbeStats`]): "n of m uncontended acquisitions failed
//!   while a majority was reachable", with how many of the m overlapped a fault.
//! - Stalls: a workload acquire that took longer than the ttl (or was open that long
//!   when the history ended) while a fault was active. Availability counts only the
//!   acquires that finished; a stall is what it leaves out.
//!
//! All of it is judged online, as the history goes, from what is still open: an
//! acquisition is judged once time has moved past its end (every event at that time
//! seen), against the latest-ending acquisitions and holds of its lock so far ([`Top2`]),
//! the holds still open, and the fault spans (few: every one is kept). What the future
//! could still change waits in a short reorder window: another client's acquisition
//! open at its end contends with it if it completes (a history that ends first drops
//! it), and after a heal a fault still open ends where it ends, or at the last heal.
//! A quiet period after a heal is judged once it is over; the penalty is summed up to
//! the earliest open acquisition (nothing before it can change any more) and the
//! intervals before that retired. The judgement is exactly the batch one over every
//! acquisition and hold (`tolerance/batch.rs`, kept for the tests as its reference).

use super::attempts::{merge, Attempt, Top2};
use super::stats::ProbeStats;
use super::{Hold, LivenessFinding};
use crate::algorithm::AlgorithmKind;
use crate::fault::spans::OpenSpans;
use crate::fault::Fault;
use crate::history::compact::{LockId, Locks};
use crate::history::{Event, FaultAction, Meta, OpKind, Phase};
use std::collections::{BTreeMap, BTreeSet};

#[cfg(test)]
pub(super) mod batch;

/// The open holds, by client and lock, as the checker keeps them.
pub(super) type Holding = BTreeMap<(usize, LockId), Hold>;

/// A fault's span.
struct Span {
    start_us: u64,
    end_us: Option<u64>,
    fault: Fault,
}

/// What the rules need of the history's `meta` line.
struct Rules {
    ttl_us: u64,
    nodes: usize,
    majority: usize,
    /// Whether the clients' algorithm reads their wall clocks ([`touched`]).
    wall_clock: bool,
    liveness_bound_us: u64,
    probe: Option<usize>,
}

/// One lock's part: what the judgements of its acquisitions ask.
#[derive(Default)]
struct PerLock {
    /// The ended acquisitions and holds: the latest-ending ones, of two clients.
    ended: Top2,
    /// The latest end of an ended hold.
    held_until: Option<u64>,
    /// The penalty's intervals not yet settled: acquisitions that succeeded and holds
    /// (busy), acquisitions that failed.
    busy: Vec<(u64, u64)>,
    failed: Vec<(u64, u64)>,
}

/// A completed acquisition whose judgement waits on what comes after it.
struct Waiting {
    seq: u64,
    attempt: Attempt,
    /// Whether another client touched the lock; while `watch` is not empty, these
    /// acquisitions (client, invoke time) were open at its end: it was contended if one
    /// of them completes.
    contended: bool,
    watch: Vec<(usize, u64)>,
}

/// The quiet period after a heal: every fault ended at `heal_us`, and none may start
/// before `until_us`.
struct Quiet {
    heal_us: u64,
    until_us: u64,
    /// The locks clients asked for in it: an acquisition invoked and ended in it.
    asked: BTreeSet<LockId>,
}

/// A quiet period judged while a later heal could still move the workload's end past
/// it: which of its locks were not held, kept until the end says whether it counts.
struct Held {
    heal_us: u64,
    until_us: u64,
    stuck: Vec<String>,
}

/// The availability penalty, summed as time settles.
#[derive(Default)]
struct Penalty {
    /// Everything before this is summed, and its intervals retired.
    settled_us: u64,
    total_us: u64,
    /// Intervals added since the last settling.
    added: usize,
}

/// How many intervals wait before the penalty is settled again: often in the tests, so
/// that their short histories settle it mid-way too (the sum does not depend on when).
const SETTLE_EVERY: usize = if cfg!(test) { 3 } else { 4096 };

#[derive(Default)]
pub struct Collector {
    rules: Option<Rules>,
    spans: Vec<Span>,
    /// Per span: the (node, client) pairs it disturbs ([`touched`]; empty without rules).
    touches: Vec<Vec<(Option<usize>, Option<usize>)>>,
    /// The spans not ended yet, by index, and by fault id. Thousands may be open at
    /// once: nothing here scans them all per event.
    open_spans: BTreeSet<usize>,
    open_by_id: OpenSpans,
    /// The longest ended span, either way it is measured: a span that reaches a time
    /// starts at most this long before it, or is open.
    longest_us: u64,
    /// The latest heal so far: the workload phase ends there (or at the history's end).
    heal_us: Option<u64>,
    /// The time of the events seen last.
    now_us: u64,
    /// Open workload acquisitions by client: (lock, invoke time).
    open: BTreeMap<usize, (LockId, u64)>,
    /// Completed workload acquisitions, numbered in order.
    seq: u64,
    /// Those that completed at `now_us`: judged when time moves on.
    due: Vec<(u64, Attempt)>,
    waiting: Vec<Waiting>,
    locks: Vec<PerLock>,
    /// Fault-tolerance findings: the acquisition's number, it, and the nodes reachable.
    found: Vec<(u64, Attempt, Vec<usize>)>,
    /// A fault ended at this time with none left active: a heal, if none starts then.
    heal_candidate: Option<u64>,
    quiet: Option<Quiet>,
    /// Stuck locks found, by heal.
    stuck: Vec<(u64, LivenessFinding)>,
    held_later: Vec<Held>,
    checked: u64,
    probe: Option<ProbeStats>,
    stalls: u64,
    stall_max_us: u64,
    penalty: Penalty,
}

/// What [`Collector::finish`] works out.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub findings: Vec<LivenessFinding>,
    /// Failed acquisitions the fault-tolerance rule applied to (all healthy, uncontended).
    pub tolerance_checked: u64,
    pub unavailable_us: u64,
    /// The probe client's acquisitions as the rule saw them, if `meta` names one.
    pub probe: Option<ProbeStats>,
    /// Acquires longer than the ttl while a fault was active, and the longest.
    pub stalls: u64,
    pub stall_max_us: u64,
}

impl Collector {
    /// Before an event at `t_us` is applied: once time moves past the events seen, what
    /// waited for every event of their time is judged, with the holds still open.
    pub fn advance(&mut self, t_us: u64, holding: &Holding, locks: &Locks) {
        if t_us <= self.now_us {
            return;
        }
        let due = std::mem::take(&mut self.due);
        for (seq, a) in &due {
            self.completed(*seq, a, holding, None);
        }
        if let Some(h) = self.heal_candidate.take() {
            self.begin_quiet(h, &due);
        }
        self.due = due;
        self.due.clear();
        if self.quiet.as_ref().is_some_and(|q| q.until_us < t_us) {
            self.end_quiet(holding, locks, None);
        }
        if self.penalty.added >= SETTLE_EVERY {
            // Nothing before the earliest open acquisition (or now) can change.
            let open = self.open.values().map(|&(_, invoke_us)| invoke_us).min();
            let upto = open.map_or(self.now_us, |o| o.min(self.now_us));
            self.settle(upto, holding, self.heal_us);
        }
        self.now_us = t_us;
    }

    /// Takes every event; `lock` is the number of an operation's lock.
    pub fn observe(&mut self, event: &Event, lock: Option<LockId>) {
        match (event, lock) {
            (Event::Meta(m), _) => {
                self.probe = m.probe_client.map(|client| ProbeStats {
                    client,
                    ..ProbeStats::default()
                });
                self.rules = Some(Rules::of(m));
            }
            (Event::Invoke(op), Some(lock)) if op.op == OpKind::Acquire && op.phase == Phase::Workload => {
                self.open.insert(op.client, (lock, op.t_us));
            }
            (Event::Ok(op) | Event::Fail(op) | Event::Info(op), _) if op.op == OpKind::Acquire => {
                if let Some((lock, invoke_us)) = self.open.remove(&op.client) {
                    let ok = matches!(event, Event::Ok(_));
                    self.complete(Attempt::new(op.client, lock, invoke_us, op.t_us, ok));
                }
            }
            (Event::Fault(f), _) => match f.action {
                FaultAction::Start => self.fault_started(f.id, f.t_us, &f.fault),
                FaultAction::End => self.fault_ended(f.id, f.t_us),
            },
            (Event::Heal { t_us }, _) => self.heal_us = Some(*t_us),
            _ => {}
        }
    }

    /// A hold ended, as its record says for good.
    pub fn hold_ended(&mut self, lock: LockId, hold: &Hold) {
        let l = self.lock(lock);
        l.ended.push(hold.end_us, hold.client);
        l.held_until = l.held_until.max(Some(hold.end_us));
        l.busy.push((hold.start_us, hold.end_us));
        self.penalty.added += 1;
    }

    fn lock(&mut self, lock: LockId) -> &mut PerLock {
        let i = lock as usize;
        if self.locks.len() <= i {
            self.locks.resize_with(i + 1, PerLock::default);
        }
        &mut self.locks[i]
    }

    fn complete(&mut self, a: Attempt) {
        let client = a.client();
        let l = self.lock(a.lock);
        l.ended.push(a.end_us, client);
        if a.ok() {
            l.busy.push((a.invoke_us, a.end_us));
        } else {
            l.failed.push((a.invoke_us, a.end_us));
        }
        self.penalty.added += 1;
        if let Some(q) = &mut self.quiet {
            if a.invoke_us >= q.heal_us {
                q.asked.insert(a.lock);
            }
        }
        // An acquisition open at the end of a waiting one contends with it.
        let mut resolved = false;
        for w in &mut self.waiting {
            if w.watch.contains(&(client, a.invoke_us)) {
                w.contended = true;
                w.watch.clear();
                resolved = true;
            }
        }
        if resolved {
            self.judge_waiting(None);
        }
        if self.rules.is_some() {
            self.seq += 1;
            self.due.push((self.seq, a));
        }
    }

    fn fault_started(&mut self, id: usize, t_us: u64, fault: &Fault) {
        if let Some(q) = &self.quiet {
            if t_us > q.heal_us && t_us < q.until_us {
                // Not quiet for the whole bound: not judged.
                self.quiet = None;
            }
        }
        let touches = match &self.rules {
            Some(r) => touched(fault, r.nodes, r.wall_clock),
            None => Vec::new(),
        };
        if let Fault::ClockJump { by_us, .. } = fault {
            self.longest_us = self.longest_us.max(by_us.unsigned_abs());
        }
        self.open_spans.insert(self.spans.len());
        self.open_by_id.begin(id, self.spans.len());
        self.spans.push(Span {
            start_us: t_us,
            end_us: None,
            fault: fault.clone(),
        });
        self.touches.push(touches);
    }

    fn fault_ended(&mut self, id: usize, t_us: u64) {
        let Some(i) = self.open_by_id.end(id) else {
            return;
        };
        let s = &mut self.spans[i];
        s.end_us = Some(t_us);
        self.longest_us = self.longest_us.max(t_us.saturating_sub(s.start_us));
        self.open_spans.remove(&i);
        if self.open_spans.is_empty() {
            self.heal_candidate = Some(t_us);
            self.judge_waiting(None);
        }
    }

    /// Judges an acquisition that completed at `now_us` (with every event of that time
    /// seen), or puts it to wait. `workload_end_us`: known only at the end.
    fn completed(&mut self, seq: u64, a: &Attempt, holding: &Holding, workload_end_us: Option<u64>) {
        let Some(r) = &self.rules else { return };
        let took_us = a.end_us - a.invoke_us;
        let probe = r.probe == Some(a.client());
        if a.ok() && !probe && took_us <= r.ttl_us {
            return;
        }
        let (contended, watch) = if a.ok() {
            (false, Vec::new())
        } else {
            self.contention(a, holding)
        };
        let w = Waiting {
            seq,
            attempt: *a,
            contended,
            watch,
        };
        if w.watch.is_empty() && (workload_end_us.is_some() || self.spans_settled()) {
            self.judge(&w, workload_end_us);
        } else {
            self.waiting.push(w);
        }
    }

    /// Whether another client touched the lock of `a` between a ttl before it and its
    /// end: an acquisition or hold of another client that ended by now and reaches the
    /// window, or a hold still open that does. Acquisitions of other clients still open
    /// are returned: they contend if they complete.
    fn contention(&self, a: &Attempt, holding: &Holding) -> (bool, Vec<(usize, u64)>) {
        let ttl_us = self.rules.as_ref().map_or(0, |r| r.ttl_us);
        let from = a.invoke_us.saturating_sub(ttl_us);
        let client = a.client();
        let ended = self
            .locks
            .get(a.lock as usize)
            .is_some_and(|l| l.ended.reaches(from, Some(client)));
        let held = || {
            holding
                .iter()
                .any(|(&(c, l), h)| l == a.lock && c != client && h.end_us >= from)
        };
        if ended || held() {
            return (true, Vec::new());
        }
        let watch = self
            .open
            .iter()
            .filter(|&(&c, &(l, _))| l == a.lock && c != client)
            .map(|(&c, &(_, invoke_us))| (c, invoke_us))
            .collect();
        (false, watch)
    }

    /// Whether the spans' ends are known enough to judge: a span still open ends after
    /// now, unless a heal has already come (then it may end at the last heal).
    fn spans_settled(&self) -> bool {
        self.heal_us.is_none() || self.open_spans.is_empty()
    }

    /// Judges the waiting acquisitions whose answer is known now (all of them at the
    /// end, `workload_end_us` given).
    fn judge_waiting(&mut self, workload_end_us: Option<u64>) {
        if workload_end_us.is_none() && !self.spans_settled() {
            return;
        }
        let waiting = std::mem::take(&mut self.waiting);
        for mut w in waiting {
            if workload_end_us.is_some() {
                // Acquisitions still open at the end never completed: no contention.
                w.watch.clear();
            }
            if w.watch.is_empty() {
                self.judge(&w, workload_end_us);
            } else {
                self.waiting.push(w);
            }
        }
    }

    /// Where a span ends: its end, or while it is open, the end of the workload (after
    /// every time there is while that is not known).
    fn span_end(s: &Span, workload_end_us: Option<u64>) -> u64 {
        match s.end_us {
            Some(end) => end.max(s.start_us),
            None => workload_end_us.map_or(u64::MAX, |w| w.max(s.start_us)),
        }
    }

    /// The spans with start ≤ `to` and end ≥ `from`, by index. `reach`: a clock jump
    /// counts as lasting its size (it moves expiry times by that much).
    fn touching(
        &self,
        from: u64,
        to: u64,
        reach: bool,
        workload_end_us: Option<u64>,
    ) -> impl Iterator<Item = usize> + '_ {
        let first = self
            .spans
            .partition_point(|s| s.start_us < from.saturating_sub(self.longest_us));
        let last = self.spans.partition_point(|s| s.start_us <= to).max(first);
        let older_open = self.open_spans.range(..first).copied();
        (first..last).chain(older_open).filter(move |&i| {
            let s = &self.spans[i];
            let end = match s.fault {
                Fault::ClockJump { by_us, .. } if reach => s.start_us + by_us.unsigned_abs(),
                _ => Self::span_end(s, workload_end_us),
            };
            end >= from
        })
    }

    /// The nodes healthy and reachable from the client of `a` for a ttl before it and
    /// throughout it; `None` when a fault disturbed the client itself.
    fn reachable(&self, r: &Rules, a: &Attempt, workload_end_us: Option<u64>) -> Option<Vec<usize>> {
        let (from, to) = (a.invoke_us.saturating_sub(r.ttl_us), a.end_us);
        let mut healthy = vec![true; r.nodes];
        let mut client_ok = true;
        for i in self.touching(from, to, true, workload_end_us) {
            for &(node, client) in &self.touches[i] {
                match (node, client) {
                    (Some(n), None) if n < r.nodes => healthy[n] = false,
                    (None, Some(c)) if c == a.client() => client_ok = false,
                    (Some(n), Some(c)) if c == a.client() && n < r.nodes => healthy[n] = false,
                    _ => {}
                }
            }
        }
        client_ok.then(|| (0..r.nodes).filter(|&n| healthy[n]).collect())
    }

    /// The rules for one completed acquisition, whose contention is known.
    fn judge(&mut self, w: &Waiting, workload_end_us: Option<u64>) {
        let Some(r) = &self.rules else { return };
        let a = &w.attempt;
        let took_us = a.end_us - a.invoke_us;
        let probe = r.probe == Some(a.client());
        let active = (probe || took_us > r.ttl_us)
            && self
                .touching(a.invoke_us, a.end_us, false, workload_end_us)
                .next()
                .is_some();
        let judged = !a.ok() && !w.contended;
        let reachable = if probe || judged {
            self.reachable(r, a, workload_end_us)
        } else {
            None
        };
        let majority = r.majority;
        if took_us > r.ttl_us && active {
            self.stalls += 1;
            self.stall_max_us = self.stall_max_us.max(took_us);
        }
        if probe {
            let Some(p) = &mut self.probe else { return };
            p.acquires += 1;
            p.acquired += u64::from(a.ok());
            p.during_faults += u64::from(active);
            if reachable.as_ref().is_some_and(|n| n.len() >= majority) {
                p.judged += 1;
                p.judged_during_faults += u64::from(active);
                p.judged_failed += u64::from(!a.ok());
            }
        }
        if let (true, Some(nodes)) = (judged, reachable) {
            self.checked += 1;
            if nodes.len() >= majority {
                self.found.push((w.seq, w.attempt, nodes));
            }
        }
    }

    /// Time moved past `heal_us`, at which a fault ended with none left active: the
    /// quiet period after it begins, with what clients asked for at that time.
    fn begin_quiet(&mut self, heal_us: u64, due: &[(u64, Attempt)]) {
        let Some(r) = &self.rules else { return };
        if !self.open_spans.is_empty() {
            return;
        }
        self.quiet = Some(Quiet {
            heal_us,
            until_us: heal_us.saturating_add(r.liveness_bound_us),
            asked: due
                .iter()
                .filter(|(_, a)| a.invoke_us >= heal_us)
                .map(|(_, a)| a.lock)
                .collect(),
        });
    }

    /// The quiet period is over (or the history is, `workload_end_us` given): every
    /// lock asked for in it must have been acquired or held in it. It counts if it lies
    /// inside the workload, whose end a later heal could still move.
    fn end_quiet(&mut self, holding: &Holding, locks: &Locks, workload_end_us: Option<u64>) {
        let Some(q) = self.quiet.take() else { return };
        let Some(r) = &self.rules else { return };
        let mut stuck = Vec::new();
        for (lock, name) in locks.by_name().filter(|(l, _)| q.asked.contains(l)) {
            let open = holding
                .iter()
                .filter(|(&(_, l), _)| l == lock)
                .map(|(_, h)| h.end_us)
                .max();
            let held = self.locks.get(lock as usize).and_then(|l| l.held_until);
            if held.max(open).is_none_or(|end| end < q.heal_us) {
                stuck.push(name.to_string());
            }
        }
        let held = Held {
            heal_us: q.heal_us,
            until_us: q.until_us,
            stuck,
        };
        let end = workload_end_us.or(self.heal_us);
        match end {
            // No heal yet: the workload ends after now.
            None => self.stuck_after(held, r.liveness_bound_us),
            Some(w) if held.heal_us < w && held.until_us <= w => self.stuck_after(held, r.liveness_bound_us),
            // A later heal may still make it count.
            Some(_) if workload_end_us.is_none() => self.held_later.push(held),
            Some(_) => {}
        }
    }

    fn stuck_after(&mut self, held: Held, bound_us: u64) {
        self.stuck.extend(held.stuck.into_iter().map(|lock| {
            (
                held.heal_us,
                LivenessFinding::StuckAfterHeal {
                    lock,
                    heal_us: held.heal_us,
                    bound_us,
                },
            )
        }));
    }

    /// Sums the penalty from where it was settled up to `upto` (and the workload's end),
    /// which nothing to come can change: per lock, failing time minus busy time, then
    /// their union over locks. The intervals that ended by then are retired.
    fn settle(&mut self, upto: u64, holding: &Holding, workload_end_us: Option<u64>) {
        let from = self.penalty.settled_us;
        let to = upto.min(workload_end_us.unwrap_or(u64::MAX));
        self.penalty.added = 0;
        if to <= from {
            return;
        }
        let clip = move |&(s, e): &(u64, u64)| (s.max(from), e.min(to));
        let mut open: BTreeMap<LockId, Vec<(u64, u64)>> = BTreeMap::new();
        for (&(_, lock), h) in holding {
            // An open hold is busy at least until its end or now, whichever is first.
            open.entry(lock)
                .or_default()
                .push((h.start_us, h.end_us.min(upto)));
        }
        let mut pieces = Vec::new();
        for (lock, l) in self.locks.iter_mut().enumerate() {
            if !l.failed.is_empty() {
                let failed = merge(l.failed.iter().map(clip).collect());
                let mut busy: Vec<(u64, u64)> = l.busy.iter().map(clip).collect();
                if let Some(o) = open.get(&(lock as LockId)) {
                    busy.extend(o.iter().map(clip));
                }
                subtract(&failed, &merge(busy), &mut pieces);
            }
            l.failed.retain(|&(_, e)| e > to);
            l.busy.retain(|&(_, e)| e > to);
        }
        self.penalty.total_us += merge(pieces).iter().map(|&(s, e)| e - s).sum::<u64>();
        self.penalty.settled_us = to;
    }

    /// Judges what is left: the history ended at `end_us`, every hold has ended.
    pub fn finish(mut self, end_us: u64, locks: &Locks) -> Outcome {
        let w = self.heal_us.unwrap_or(end_us);
        let none = Holding::new();
        let due = std::mem::take(&mut self.due);
        for (seq, a) in &due {
            self.completed(*seq, a, &none, Some(w));
        }
        self.judge_waiting(Some(w));
        if let Some(h) = self.heal_candidate.take().filter(|&h| h < w) {
            self.begin_quiet(h, &due);
        }
        if self.quiet.as_ref().is_some_and(|q| q.until_us <= w) {
            self.end_quiet(&none, locks, Some(w));
        }
        let bound_us = self.rules.as_ref().map_or(0, |r| r.liveness_bound_us);
        for held in std::mem::take(&mut self.held_later) {
            if held.heal_us < w && held.until_us <= w {
                self.stuck_after(held, bound_us);
            }
        }
        if let Some(r) = &self.rules {
            // Acquisitions still open at the end stalled if they took longer than the ttl.
            let open: Vec<u64> = self.open.values().map(|&(_, invoke_us)| invoke_us).collect();
            for invoke_us in open {
                let took_us = end_us.saturating_sub(invoke_us);
                if took_us > r.ttl_us && self.touching(invoke_us, end_us, false, Some(w)).next().is_some() {
                    self.stalls += 1;
                    self.stall_max_us = self.stall_max_us.max(took_us);
                }
            }
        }
        self.settle(u64::MAX, &none, Some(w));
        self.found.sort_by_key(|f| f.0);
        self.stuck.sort_by_key(|f| f.0);
        let mut findings: Vec<LivenessFinding> = self
            .found
            .into_iter()
            .map(|(_, a, reachable_nodes)| LivenessFinding::FaultTolerance {
                client: a.client(),
                lock: locks.name(a.lock).to_string(),
                invoke_us: a.invoke_us,
                end_us: a.end_us,
                reachable_nodes,
            })
            .collect();
        findings.extend(self.stuck.into_iter().map(|(_, f)| f));
        Outcome {
            findings,
            tolerance_checked: self.checked,
            unavailable_us: self.penalty.total_us,
            probe: self.probe,
            stalls: self.stalls,
            stall_max_us: self.stall_max_us,
        }
    }
}

impl Rules {
    fn of(m: &Meta) -> Self {
        Rules {
            ttl_us: m.ttl_ms * 1_000,
            nodes: m.nodes,
            majority: m.nodes / 2 + 1,
            wall_clock: AlgorithmKind::from_name(&m.algorithm).is_none_or(AlgorithmKind::reads_wall_clock),
            liveness_bound_us: m.liveness_bound_us,
            probe: m.probe_client,
        }
    }
}

/// Appends `failed` minus `busy` (both sorted and disjoint) to `out`.
fn subtract(failed: &[(u64, u64)], busy: &[(u64, u64)], out: &mut Vec<(u64, u64)>) {
    let mut busy = busy.iter().copied().peekable();
    for &(s, e) in failed {
        while busy.next_if(|&(_, be)| be <= s).is_some() {}
        let mut cur = s;
        while let Some(&(bs, be)) = busy.peek() {
            if bs >= e {
                break;
            }
            if bs > cur {
                out.push((cur, bs));
            }
            cur = cur.max(be);
            if be > e {
                // It may cover the next failed span too.
                break;
            }
            busy.next();
        }
        if cur < e {
            out.push((cur, e));
        }
    }
}

/// The (node, client) pairs a fault disturbs: `(Some(n), None)` for a whole node,
/// `(None, Some(c))` for a whole client, `(Some(n), Some(c))` for one link.
/// `wall_clock`: whether the clients' algorithm reads their wall clocks.
fn touched(fault: &Fault, nodes: usize, wall_clock: bool) -> Vec<(Option<usize>, Option<usize>)> {
    let links = |ns: &[usize], cs: &[usize]| {
        ns.iter()
            .flat_map(|&n| cs.iter().map(move |&c| (Some(n), Some(c))))
            .collect()
    };
    match fault {
        Fault::Partition { nodes, clients, .. } => links(nodes, clients),
        Fault::Delay { nodes, clients, .. } => links(nodes, clients),
        Fault::Loss { nodes, clients, .. } => links(nodes, clients),
        // A replication cut leaves the node reachable, but a master with
        // min-replicas-to-write refuses writes through it: the whole node is disturbed.
        Fault::Crash { node, .. } | Fault::Failover { node } | Fault::ReplicationCut { node } => {
            vec![(Some(*node), None)]
        }
        Fault::Pause { node, client, .. } | Fault::ClockRate { node, client, .. } => vec![(*node, *client)]
            .into_iter()
            .filter(|p| p.0.is_some() != p.1.is_some())
            .collect(),
        // A node's wall clock expires keys; a client's matters if its algorithm sends it.
        Fault::ClockJump { node, client, .. } => match (node, client) {
            (Some(n), _) => vec![(Some(*n), None)],
            (None, Some(c)) if wall_clock => vec![(None, Some(*c))],
            _ => vec![],
        },
    }
    .into_iter()
    .filter(|(n, _)| n.is_none_or(|n| n < nodes))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Mode;
    use crate::checker::check;
    use crate::fault::{CutDirection, Origin};
    use crate::history::{FaultEvent, Op};

    fn meta(bound_us: u64) -> Event {
        Event::Meta(Meta {
            t_us: 0,
            scenario: "t".into(),
            seed: 1,
            algorithm: "redlock".into(),
            nodes: 5,
            clients: 2,
            ttl_ms: 1,
            liveness_bound_us: bound_us,
            writer_wait_bound_us: None,
            worker: None,
            probe_client: None,
            cut: None,
            deployment: None,
            mitigations: None,
        })
    }
    fn op(t: u64, c: usize, kind: OpKind) -> Op {
        Op::new(t, c, kind, "L0", Mode::Exclusive)
    }
    fn acq(t: u64, c: usize) -> Event {
        Event::Invoke(op(t, c, OpKind::Acquire))
    }
    fn fail(t: u64, c: usize) -> Event {
        Event::Fail(op(t, c, OpKind::Acquire))
    }
    fn ok(t: u64, c: usize, valid_until_us: u64) -> Event {
        let mut o = op(t, c, OpKind::Acquire);
        o.valid_until_us = Some(valid_until_us);
        Event::Ok(o)
    }
    fn fault(t: u64, id: usize, action: FaultAction, fault: Fault) -> Event {
        Event::Fault(FaultEvent {
            t_us: t,
            id,
            action,
            origin: Origin::Script,
            fault,
        })
    }
    fn crash(t: u64, id: usize, node: usize) -> Event {
        fault(
            t,
            id,
            FaultAction::Start,
            Fault::Crash {
                node,
                power_loss: false,
            },
        )
    }
    fn tolerance_findings(h: &[Event]) -> (usize, u64) {
        let f = check(h).unwrap();
        let n = f
            .liveness
            .iter()
            .filter(|l| matches!(l, LivenessFinding::FaultTolerance { .. }))
            .count();
        (n, f.stats.tolerance_checked)
    }

    #[test]
    fn an_uncontended_failure_with_a_majority_up_is_a_finding() {
        let (n, checked) = tolerance_findings(&[meta(1_000_000), acq(5_000, 0), fail(5_100, 0)]);
        assert_eq!((n, checked), (1, 1));
        // Two nodes down still leave a majority of three.
        let h = [
            meta(1_000_000),
            crash(0, 0, 3),
            crash(0, 1, 4),
            acq(5_000, 0),
            fail(5_100, 0),
        ];
        assert_eq!(tolerance_findings(&h), (1, 1));
        let cut = fault(
            0,
            0,
            FaultAction::Start,
            Fault::Partition {
                nodes: vec![3, 4],
                clients: vec![0],
                direction: CutDirection::ToNodes,
            },
        );
        assert_eq!(
            tolerance_findings(&[meta(1_000_000), cut, acq(5_000, 0), fail(5_100, 0)]),
            (1, 1)
        );
    }

    #[test]
    fn without_a_majority_or_with_contention_a_failure_is_excused() {
        let down = [
            meta(1_000_000),
            crash(0, 0, 2),
            crash(0, 1, 3),
            crash(0, 2, 4),
            acq(5_000, 0),
            fail(5_100, 0),
        ];
        assert_eq!(tolerance_findings(&down), (0, 1));
        // The crash ended 2 ms before the attempt, more than the 1 ms ttl: a majority again.
        let mut healed = down.to_vec();
        healed.insert(
            4,
            fault(
                3_000,
                0,
                FaultAction::End,
                Fault::Crash {
                    node: 2,
                    power_loss: false,
                },
            ),
        );
        assert_eq!(tolerance_findings(&healed), (1, 1));
        // Client 1 held the lock until 4.5 ms, within a ttl before client 0's attempt.
        let contended = [
            meta(1_000_000),
            acq(3_000, 1),
            ok(3_100, 1, 4_500),
            acq(5_000, 0),
            fail(5_100, 0),
        ];
        assert_eq!(tolerance_findings(&contended), (0, 0));
        // A paused client is not judged.
        let paused = [
            meta(1_000_000),
            fault(
                4_000,
                0,
                FaultAction::Start,
                Fault::Pause {
                    node: None,
                    client: Some(0),
                    point: None,
                },
            ),
            acq(5_000, 0),
            fail(5_100, 0),
        ];
        assert_eq!(tolerance_findings(&paused), (0, 0));
    }

    #[test]
    fn a_clock_fault_on_a_client_counts_when_its_algorithm_reads_that_clock() {
        // Client 0 fails at 5 ms, with every node healthy; its clock was hit at `at`.
        let with = |algorithm: &str, at: u64, f: Fault| {
            let mut m = meta(1_000_000);
            if let Event::Meta(m) = &mut m {
                m.algorithm = algorithm.into();
            }
            tolerance_findings(&[
                m,
                fault(at, 0, FaultAction::Start, f),
                acq(5_000, 0),
                fail(5_100, 0),
            ])
        };
        let jump = |client, by_us| Fault::ClockJump {
            node: None,
            client: Some(client),
            by_us,
        };
        // The read-write scripts take `now` from the client's wall clock.
        assert_eq!(with("rw_redlock", 4_500, jump(0, -2_000)), (0, 0));
        assert_eq!(with("fair_rw_redlock", 4_500, jump(0, -2_000)), (0, 0));
        // A library lockstorm does not know may read it too.
        assert_eq!(with("some-library", 4_500, jump(0, -2_000)), (0, 0));
        // Redlock's exclusive lock never sends the wall clock anywhere.
        assert_eq!(with("redlock", 4_500, jump(0, -2_000)), (1, 1));
        // Another client's jump leaves client 0 alone.
        assert_eq!(with("rw_redlock", 4_500, jump(1, -2_000)), (1, 1));
        // A jump counts for its size after it, and the 1 ms ttl looks back from 5 ms.
        assert_eq!(
            with("rw_redlock", 1_000, jump(0, 3_500)),
            (0, 0),
            "lasts until 4.5 ms"
        );
        assert_eq!(with("rw_redlock", 1_000, jump(0, 1)), (1, 1), "over at 1.001 ms");
        // Every variant times its validity by its monotonic clock: a rate counts for all.
        let rate = Fault::ClockRate {
            node: None,
            client: Some(0),
            rate: 1.5,
        };
        assert_eq!(with("redlock", 4_500, rate.clone()), (0, 0));
        assert_eq!(with("single", 4_500, rate), (0, 0));
    }

    #[test]
    fn a_lock_nobody_gets_after_a_heal_is_stuck() {
        let end = |t| {
            fault(
                t,
                0,
                FaultAction::End,
                Fault::Crash {
                    node: 0,
                    power_loss: false,
                },
            )
        };
        let base = vec![
            meta(2_000),
            crash(0, 0, 0),
            end(1_000),
            acq(1_500, 0),
            fail(2_500, 0),
        ];
        let mut stuck = base.clone();
        stuck.push(Event::Heal { t_us: 10_000 });
        let f = check(&stuck).unwrap();
        assert!(f.liveness.contains(&LivenessFinding::StuckAfterHeal {
            lock: "L0".into(),
            heal_us: 1_000,
            bound_us: 2_000
        }));
        let mut fine = base;
        fine.extend([acq(2_600, 1), ok(2_900, 1, 9_000), Event::Heal { t_us: 10_000 }]);
        let f = check(&fine).unwrap();
        assert!(!f
            .liveness
            .iter()
            .any(|l| matches!(l, LivenessFinding::StuckAfterHeal { .. })));
    }

    #[test]
    fn an_acquire_longer_than_the_ttl_during_a_fault_is_a_stall() {
        // ttl 1 ms. Client 0 waits 5 ms while node 0 is down: a stall; then 5 ms again
        // after the crash ended: slow, but no fault was active. Client 1 is still
        // waiting when the history ends, 9 ms after it began during the crash.
        let end = fault(
            6_000,
            0,
            FaultAction::End,
            Fault::Crash {
                node: 0,
                power_loss: false,
            },
        );
        let h = [
            meta(1_000_000),
            crash(1_000, 0, 0),
            acq(1_000, 0),
            acq(4_000, 1),
            fail(6_000, 0),
            end,
            acq(7_000, 0),
            fail(12_000, 0),
            Event::Heal { t_us: 13_000 },
        ];
        let f = check(&h).unwrap();
        assert_eq!((f.stats.stalls, f.stats.stall_max_us), (2, 9_000));
        // Without the crash nothing stalls, however slow.
        let calm: Vec<Event> = h
            .iter()
            .filter(|e| !matches!(e, Event::Fault(_)))
            .cloned()
            .collect();
        assert_eq!(check(&calm).unwrap().stats.stalls, 0);
    }

    #[test]
    fn the_penalty_is_failing_time_while_the_lock_was_free() {
        // Client 0 fails from 100 to 400 us; client 1 holds from 150 to 300 (its
        // acquisition ran from 120): free and failing 100..120 and 300..400.
        let h = [
            acq(100, 0),
            acq(120, 1),
            ok(150, 1, 300),
            fail(400, 0),
            Event::Heal { t_us: 1_000 },
        ];
        let f = check(&h).unwrap();
        assert_eq!(f.stats.unavailable_us, 120);
        assert!((f.stats.unavailable_share - 0.12).abs() < 1e-9);
    }
}
