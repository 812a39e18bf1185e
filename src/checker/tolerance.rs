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

use super::attempts::{unavailable_us, Attempt, ByLock, Top2};
use super::compact::{LockId, Locks};
use super::stats::ProbeStats;
use super::{Hold, LivenessFinding};
use crate::algorithm::AlgorithmKind;
use crate::fault::Fault;
use crate::history::{Event, FaultAction, Meta, Op, OpKind, Phase};
use std::collections::BTreeMap;

/// A fault's span and what it touched.
struct Span {
    id: usize,
    start_us: u64,
    end_us: Option<u64>,
    fault: Fault,
}

#[derive(Default)]
pub struct Collector {
    spans: Vec<Span>,
    /// Open workload acquisitions by client: (lock, invoke time).
    open: BTreeMap<usize, (LockId, u64)>,
    /// In the order they completed, so by end time.
    attempts: Vec<Attempt>,
}

/// What [`Collector::finish`] works out.
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
                FaultAction::Start => self.spans.push(Span {
                    id: f.id,
                    start_us: f.t_us,
                    end_us: None,
                    fault: f.fault.clone(),
                }),
                FaultAction::End => {
                    if let Some(s) = self
                        .spans
                        .iter_mut()
                        .rev()
                        .find(|s| s.id == f.id && s.end_us.is_none())
                    {
                        s.end_us = Some(f.t_us);
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
        Fault::Crash { node, .. } | Fault::Failover { node } => vec![(Some(*node), None)],
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
    use crate::history::FaultEvent;

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

#[cfg(test)]
mod busy_tests {
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
