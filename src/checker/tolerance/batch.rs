//! The fault-tolerance judge as it was before it judged online: every acquisition and
//! hold kept, then swept per lock at the end. Kept as the reference the online judge
//! ([`super::Collector`]) is compared with (`checker::differential_tests`).

use super::super::attempts::{merge, union, Attempt, Top2};
use super::super::stats::ProbeStats;
use super::super::{Hold, LivenessFinding};
use super::{touched, Outcome, Span};
use crate::algorithm::AlgorithmKind;
use crate::fault::Fault;
use crate::history::compact::{LockId, Locks};
use crate::history::{Event, FaultAction, Meta, Op, OpKind, Phase};
use std::collections::BTreeMap;
use std::ops::Range;

#[derive(Default)]
pub struct Batch {
    spans: Vec<Span>,
    open_spans: crate::fault::spans::OpenSpans,
    /// Open workload acquisitions by client: (lock, invoke time).
    open: BTreeMap<usize, (LockId, u64)>,
    /// In the order they completed, so by end time.
    attempts: Vec<Attempt>,
}

impl Batch {
    /// Takes every event; `lock` is the number of an operation's lock.
    pub fn observe(&mut self, event: &Event, lock: Option<LockId>) {
        match (event, lock) {
            (Event::Invoke(op), Some(lock)) if op.op == OpKind::Acquire && op.phase == Phase::Workload => {
                self.open.insert(op.client, (lock, op.t_us));
            }
            (Event::Ok(op) | Event::Fail(op) | Event::Info(op), _) if op.op == OpKind::Acquire => {
                self.complete(op, matches!(event, Event::Ok(_)));
            }
            (Event::Fault(f), _) => match f.action {
                FaultAction::Start => {
                    self.open_spans.begin(f.id, self.spans.len());
                    self.spans.push(Span {
                        start_us: f.t_us,
                        end_us: None,
                        fault: f.fault.clone(),
                    })
                }
                FaultAction::End => {
                    if let Some(i) = self.open_spans.end(f.id) {
                        self.spans[i].end_us = Some(f.t_us);
                    }
                }
            },
            _ => {}
        }
    }

    fn complete(&mut self, op: &Op, ok: bool) {
        if let Some((lock, invoke_us)) = self.open.remove(&op.client) {
            self.attempts
                .push(Attempt::new(op.client, lock, invoke_us, op.t_us, ok));
        }
    }

    /// Judges the workload phase, which ends at `heal_us` (or the history's end);
    /// `holds` sorted by lock and start.
    pub fn finish(
        &self,
        meta: Option<&Meta>,
        heal_us: Option<u64>,
        end_us: u64,
        holds: &[Hold],
        locks: &Locks,
    ) -> Outcome {
        let workload_end_us = heal_us.unwrap_or(end_us);
        let by_lock = ByLock::new(&self.attempts, holds, locks);
        let mut out = Outcome {
            findings: Vec::new(),
            tolerance_checked: 0,
            unavailable_us: unavailable_us(&by_lock, locks, workload_end_us),
            probe: None,
            stalls: 0,
            stall_max_us: 0,
        };
        let Some(meta) = meta else { return out };
        self.fault_tolerance(meta, workload_end_us, &by_lock, locks, &mut out);
        self.after_heals(meta, workload_end_us, &by_lock, locks, &mut out);
        self.stalls(meta, workload_end_us, end_us, &mut out);
        out
    }

    /// Every fault span as (start, end, ()), to ask whether one was active in a window.
    fn active_index(&self, workload_end_us: u64) -> SpanIndex<()> {
        SpanIndex::new(
            self.spans
                .iter()
                .map(|s| (s.start_us, self.span_end(s, workload_end_us), ())),
        )
    }

    /// Stalls: acquires longer than the ttl with a fault active during them, finished
    /// or still open at the end of the history (`end_us`).
    fn stalls(&self, meta: &Meta, workload_end_us: u64, end_us: u64, out: &mut Outcome) {
        let ttl_us = meta.ttl_ms * 1_000;
        let active = self.active_index(workload_end_us);
        let open = self.open.values().map(|&(_, invoke_us)| (invoke_us, end_us));
        for (from, to) in self.attempts.iter().map(|a| (a.invoke_us, a.end_us)).chain(open) {
            let took_us = to.saturating_sub(from);
            if took_us > ttl_us && active.touching(from, to).next().is_some() {
                out.stalls += 1;
                out.stall_max_us = out.stall_max_us.max(took_us);
            }
        }
    }

    fn span_end(&self, s: &Span, workload_end_us: u64) -> u64 {
        s.end_us.unwrap_or(workload_end_us).max(s.start_us)
    }

    /// Per attempt, whether another client touched its lock (an attempt or a hold)
    /// between a ttl before it and its end. One sweep per lock: the failed attempts by
    /// end, the attempts and holds by start.
    fn contended(&self, ttl_us: u64, by_lock: &ByLock, locks: &Locks) -> Vec<bool> {
        let mut contended = vec![false; self.attempts.len()];
        let mut failed: Vec<u32> = Vec::new();
        for lock in 0..locks.len() as LockId {
            let mine = by_lock.attempts_of(lock);
            failed.clear();
            failed.extend(mine.iter().copied().filter(|&i| !by_lock.attempt(i).ok()));
            // Attempts are numbered as they ended.
            failed.sort_unstable();
            let holds = by_lock.holds_of(lock);
            let (mut next_attempt, mut next_hold) = (0, 0);
            let mut top = Top2::default();
            for &i in &failed {
                let a = by_lock.attempt(i);
                let (from, to) = (a.invoke_us.saturating_sub(ttl_us), a.end_us);
                while let Some(b) = mine.get(next_attempt).map(|&j| by_lock.attempt(j)) {
                    if b.invoke_us > to {
                        break;
                    }
                    top.push(b.end_us, b.client());
                    next_attempt += 1;
                }
                while let Some(h) = holds.get(next_hold) {
                    if h.start_us > to {
                        break;
                    }
                    top.push(h.end_us, h.client);
                    next_hold += 1;
                }
                contended[i as usize] = top.reaches(from, Some(a.client()));
            }
        }
        contended
    }

    fn fault_tolerance(
        &self,
        meta: &Meta,
        workload_end_us: u64,
        by_lock: &ByLock,
        locks: &Locks,
        out: &mut Outcome,
    ) {
        let ttl_us = meta.ttl_ms * 1_000;
        let majority = meta.nodes / 2 + 1;
        let wall_clock =
            AlgorithmKind::from_name(&meta.algorithm).is_none_or(AlgorithmKind::reads_wall_clock);
        let contended = self.contended(ttl_us, by_lock, locks);
        // Each span as the rule sees it: how long it acts, and on what.
        let index = SpanIndex::new(self.spans.iter().map(|s| {
            let end = match s.fault {
                // A jump moves expiry times by its size: count it as lasting that long.
                Fault::ClockJump { by_us, .. } => s.start_us + by_us.unsigned_abs(),
                _ => self.span_end(s, workload_end_us),
            };
            (s.start_us, end, touched(&s.fault, meta.nodes, wall_clock))
        }));
        let mut healthy = vec![true; meta.nodes];
        // The nodes healthy and reachable from the attempt's client for a ttl before it
        // and throughout it; `None` when a fault disturbed the client itself.
        let mut reachable = |a: &Attempt| -> Option<Vec<usize>> {
            let (from, to) = (a.invoke_us.saturating_sub(ttl_us), a.end_us);
            healthy.fill(true);
            let mut client_ok = true;
            for (_, pairs) in index.touching(from, to) {
                for &(node, client) in pairs {
                    match (node, client) {
                        (Some(n), None) if n < meta.nodes => healthy[n] = false,
                        (None, Some(c)) if c == a.client() => client_ok = false,
                        (Some(n), Some(c)) if c == a.client() && n < meta.nodes => healthy[n] = false,
                        _ => {}
                    }
                }
            }
            client_ok.then(|| (0..meta.nodes).filter(|&n| healthy[n]).collect())
        };
        if let Some(probe) = meta.probe_client {
            // Every acquisition of the probe, ok or not: how many were judged.
            let active = self.active_index(workload_end_us);
            let mut p = ProbeStats {
                client: probe,
                ..ProbeStats::default()
            };
            for a in self.attempts.iter().filter(|a| a.client() == probe) {
                p.acquires += 1;
                p.acquired += u64::from(a.ok());
                let during = active.touching(a.invoke_us, a.end_us).next().is_some();
                p.during_faults += u64::from(during);
                if reachable(a).is_some_and(|r| r.len() >= majority) {
                    p.judged += 1;
                    p.judged_during_faults += u64::from(during);
                    p.judged_failed += u64::from(!a.ok());
                }
            }
            out.probe = Some(p);
        }
        for (a, _) in self.attempts.iter().zip(contended).filter(|(a, c)| !a.ok() && !c) {
            let Some(reachable) = reachable(a) else {
                continue;
            };
            out.tolerance_checked += 1;
            if reachable.len() >= majority {
                out.findings.push(LivenessFinding::FaultTolerance {
                    client: a.client(),
                    lock: locks.name(a.lock).to_string(),
                    invoke_us: a.invoke_us,
                    end_us: a.end_us,
                    reachable_nodes: reachable,
                });
            }
        }
    }

    fn after_heals(
        &self,
        meta: &Meta,
        workload_end_us: u64,
        by_lock: &ByLock,
        locks: &Locks,
        out: &mut Outcome,
    ) {
        let bound_us = meta.liveness_bound_us;
        // Every moment at which the last active fault ended: no span that started by
        // then ends after it. Spans by start, with the latest end of every prefix.
        let mut by_start: Vec<(u64, u64)> = self
            .spans
            .iter()
            .map(|s| (s.start_us, self.span_end(s, workload_end_us)))
            .collect();
        by_start.sort_unstable();
        let latest_end: Vec<u64> = by_start
            .iter()
            .scan(0, |latest, &(_, end)| {
                *latest = end.max(*latest);
                Some(*latest)
            })
            .collect();
        let mut heals = Vec::new();
        for s in &self.spans {
            let h = self.span_end(s, workload_end_us);
            let started = by_start.partition_point(|&(start, _)| start <= h);
            let quiet = started == 0 || latest_end[started - 1] <= h;
            if quiet && h < workload_end_us {
                heals.push(h);
            }
        }
        heals.sort_unstable();
        heals.dedup();
        // Per lock, the holds started by the window's end so far and the latest end
        // among them: the windows only move later.
        let mut held: Vec<(usize, Option<u64>)> = vec![(0, None); locks.len()];
        for h in heals {
            let until = h + bound_us;
            // Judge only a quiet period that lasts the whole bound, inside the workload.
            let next_start = by_start.partition_point(|&(start, _)| start <= h);
            if until > workload_end_us || by_start.get(next_start).is_some_and(|&(start, _)| start < until) {
                continue;
            }
            for (lock, name) in locks.by_name() {
                // Clients asked for the lock: an attempt invoked and ended in the window.
                let mine = by_lock.attempts_of(lock);
                let first = mine.partition_point(|&i| by_lock.attempt(i).invoke_us < h);
                let asked = mine[first..]
                    .iter()
                    .map(|&i| by_lock.attempt(i))
                    .take_while(|a| a.invoke_us <= until)
                    .any(|a| a.end_us <= until);
                if !asked {
                    continue;
                }
                // A successful acquisition in the window starts a hold in it, so the
                // holds answer both "acquired" and "held".
                let holds = by_lock.holds_of(lock);
                let (next, latest_end) = &mut held[lock as usize];
                while let Some(x) = holds.get(*next).filter(|x| x.start_us <= until) {
                    *latest_end = Some(latest_end.map_or(x.end_us, |e| e.max(x.end_us)));
                    *next += 1;
                }
                if !latest_end.is_some_and(|e| e >= h) {
                    out.findings.push(LivenessFinding::StuckAfterHeal {
                        lock: name.to_string(),
                        heal_us: h,
                        bound_us,
                    });
                }
            }
        }
    }
}

/// Fault spans by start, to find the ones that act during a window without looking at
/// every span (histories with thousands of faults and of failed attempts).
struct SpanIndex<T> {
    /// (start, end, what the span carries), sorted by start.
    spans: Vec<(u64, u64, T)>,
    /// The longest span: one that ends at or after `from` starts at or after
    /// `from - longest_us`.
    longest_us: u64,
}

impl<T> SpanIndex<T> {
    fn new(spans: impl Iterator<Item = (u64, u64, T)>) -> Self {
        let mut spans: Vec<(u64, u64, T)> = spans.collect();
        spans.sort_by_key(|s| s.0);
        let longest_us = spans.iter().map(|s| s.1.saturating_sub(s.0)).max().unwrap_or(0);
        SpanIndex { spans, longest_us }
    }

    /// The spans with start ≤ `to` and end ≥ `from`, as (start, payload).
    fn touching(&self, from: u64, to: u64) -> impl Iterator<Item = (u64, &T)> {
        let first = self
            .spans
            .partition_point(|s| s.0 < from.saturating_sub(self.longest_us));
        let last = self.spans.partition_point(|s| s.0 <= to);
        self.spans[first..last.max(first)]
            .iter()
            .filter(move |s| s.1 >= from)
            .map(|s| (s.0, &s.2))
    }
}

/// The attempts and the holds of each lock, each in order of start.
pub(super) struct ByLock<'a> {
    pub attempts: &'a [Attempt],
    pub holds: &'a [Hold],
    /// Attempt indices by (lock, invoke time).
    order: Vec<u32>,
    /// Per lock id: its part of `order`, and of `holds`.
    attempt_ranges: Vec<Range<usize>>,
    hold_ranges: Vec<Range<usize>>,
}

impl<'a> ByLock<'a> {
    /// `holds` sorted by lock and start; every lock named in either is in `locks`.
    pub fn new(attempts: &'a [Attempt], holds: &'a [Hold], locks: &Locks) -> Self {
        let mut order: Vec<u32> = (0..attempts.len())
            .map(|i| u32::try_from(i).expect("fewer than 2^32 acquisitions"))
            .collect();
        order.sort_unstable_by_key(|&i| {
            let a = &attempts[i as usize];
            (a.lock, a.invoke_us, i)
        });
        let mut attempt_ranges = vec![0..0; locks.len()];
        let mut i = 0;
        while i < order.len() {
            let lock = attempts[order[i] as usize].lock;
            let n = order[i..].partition_point(|&j| attempts[j as usize].lock == lock);
            attempt_ranges[lock as usize] = i..i + n;
            i += n;
        }
        let mut hold_ranges = vec![0..0; locks.len()];
        let mut i = 0;
        while i < holds.len() {
            let lock = &holds[i].lock;
            let n = holds[i..].partition_point(|h| h.lock == *lock);
            let id = locks.id(lock).expect("every hold's lock is interned");
            hold_ranges[id as usize] = i..i + n;
            i += n;
        }
        ByLock {
            attempts,
            holds,
            order,
            attempt_ranges,
            hold_ranges,
        }
    }

    /// The indices of the attempts at `lock`, by invoke time.
    pub fn attempts_of(&self, lock: LockId) -> &[u32] {
        &self.order[self.attempt_ranges[lock as usize].clone()]
    }

    /// The holds of `lock`, by start.
    pub fn holds_of(&self, lock: LockId) -> &'a [Hold] {
        &self.holds[self.hold_ranges[lock as usize].clone()]
    }

    pub fn attempt(&self, i: u32) -> &'a Attempt {
        &self.attempts[i as usize]
    }
}

/// The availability penalty: the time during which some lock was free and wanted, yet
/// every attempt at it failed (failed attempts, minus the time the lock was held or
/// being successfully acquired), up to `workload_end_us`.
pub(super) fn unavailable_us(by_lock: &ByLock, locks: &Locks, workload_end_us: u64) -> u64 {
    let w = workload_end_us;
    // Per lock, free-but-failing time; then the union over locks, so two locks
    // unavailable at once count once.
    let mut free_failing = Vec::new();
    for lock in 0..locks.len() as LockId {
        let mine = by_lock.attempts_of(lock);
        if mine.is_empty() {
            continue;
        }
        let spans = |ok: bool| {
            mine.iter()
                .map(|&i| by_lock.attempt(i))
                .filter(move |a| a.ok() == ok)
                .map(move |a| (a.invoke_us.min(w), a.end_us.min(w)))
        };
        let held = by_lock
            .holds_of(lock)
            .iter()
            .map(|h| (h.start_us, h.end_us.min(w)));
        let busy: Vec<(u64, u64)> = union(merge_by_start(spans(true), held)).collect();
        let failed: Vec<(u64, u64)> = union(spans(false)).collect();
        // Both are sorted and disjoint: one pass subtracts busy from failed.
        super::subtract(&failed, &busy, &mut free_failing);
    }
    merge(free_failing).iter().map(|&(s, e)| e - s).sum()
}

/// Two interval streams sorted by start, as one.
fn merge_by_start(
    a: impl Iterator<Item = (u64, u64)>,
    b: impl Iterator<Item = (u64, u64)>,
) -> impl Iterator<Item = (u64, u64)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if y.0 < x.0 => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

#[cfg(test)]
mod tests {
    use super::SpanIndex;

    #[test]
    fn the_span_index_finds_exactly_the_spans_meeting_a_window() {
        let spans: Vec<(u64, u64, usize)> = (0..200u64)
            .map(|i| {
                let start = (i * 7919) % 1000;
                (start, start + (i * 31) % 97, i as usize)
            })
            .collect();
        let index = SpanIndex::new(spans.iter().copied());
        for (from, to) in [(0, 0), (5, 50), (500, 520), (990, 2000), (300, 200), (1100, 1200)] {
            let mut found: Vec<usize> = index.touching(from, to).map(|(_, &i)| i).collect();
            found.sort_unstable();
            let expected: Vec<usize> = spans
                .iter()
                .filter(|s| s.0 <= to && s.1 >= from)
                .map(|s| s.2)
                .collect();
            assert_eq!(found, expected, "[{from}, {to}]");
        }
    }
}
