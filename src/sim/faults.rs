//! How each fault kind acts on the simulated world, and how it heals.
//!
//! Faults start and end as queue events (`FaultStart`, `FaultEnd`), and every start and
//! end is recorded in the history with the fault's fields, right after the world has
//! changed (so the world at a fault event is the world that event describes). Pauses
//! are the driver's job: a paused process's events are held back in arrival order and
//! replayed when it resumes, so a paused client sees every reply and timer late, all at
//! once, exactly as a process stopped by a GC pause would. A client pause with a `point`
//! is armed at its time and starts (and is recorded) when the client reaches that point.
//!
//! Faults are sets, not toggles ([`crate::fault::active`], [`crate::fault::links`]):
//! overlapping faults of one kind on one target compose. A node is down while any crash
//! or failover of it is active and restarts once, when the last ends, with what the
//! outage that took it down left it (its persistence, or the replica's data); a process
//! is paused while any pause on it is active and replays what it missed once, when the
//! last ends; clock rates multiply, so a clock under rate faults 1.02 and 0.9 runs at
//! 0.918 (in whole ppm, and never below 1 ppm of true time); partitions count per link
//! and direction, delays add, losses draw independently.
//!
//! A client's clock-rate change reschedules its pending timers, so they act when its
//! own clock says so, and re-derives its believed validity: a holder's validity ends at
//! a reading of its monotonic clock, so when the rate changes, so does the true time at
//! which its clock gets there. The new belief is recorded as a `belief` event, which the
//! checker uses from then on. A clock jump moves only the wall clock, which no
//! algorithm's validity reads, so it changes no belief (the read-write scripts send wall
//! readings to the nodes, which is why a client's jump matters to them all the same).

use super::{Ev, World};
use crate::aimer;
use crate::client::Record;
use crate::fault::{Fault, PausePoint, Process};
use crate::history::{Belief, Event, FaultAction, FaultEvent};
use crate::lifecycle::RunPhase;

/// A clock rate as the clock takes it: parts per million above true time, at least
/// 1 ppm of true time (a clock does not stop).
fn rate_ppm(rate: f64) -> i64 {
    ((rate - 1.0) * 1e6).round().max(-999_999.0) as i64
}

/// What a fault's start or end leaves to do once its history event is written.
#[derive(Default)]
struct Then {
    /// A process that resumed: its held-back events replay.
    resumed: Option<Process>,
    /// A client whose clock changed rate: its belief is re-derived.
    rate_changed: Option<usize>,
}

impl World<'_> {
    fn fault_event(&mut self, t: u64, i: usize, action: FaultAction) {
        let f = &self.plan[i];
        let event = Event::Fault(FaultEvent {
            t_us: t,
            id: f.id,
            action,
            origin: f.origin,
            fault: f.fault.clone(),
        });
        self.emit(event);
    }

    /// Marks fault `i` active, applies it, records it and schedules its end.
    fn begin(&mut self, t: u64, i: usize) {
        self.active[i] = true;
        let then = self.act(t, i, true);
        self.fault_event(t, i, FaultAction::Start);
        self.all_node_events(t);
        if let Some(d) = self.plan[i].duration_us {
            self.queue.push(t + d, Ev::FaultEnd(i));
        }
        self.then(t, then);
    }

    pub(super) fn start_fault(&mut self, t: u64, i: usize) {
        if self.lifecycle.phase() != RunPhase::Workload {
            return;
        }
        if let Fault::Pause {
            client: Some(c),
            point: Some(point),
            ..
        } = self.plan[i].fault
        {
            let now = point == PausePoint::WhileHolding && self.holding[c];
            if !now {
                self.armed[c].push((i, point));
                return;
            }
        }
        self.begin(t, i);
    }

    /// Shows the aimer what client `c` just recorded, and starts (or schedules) the faults
    /// aimed entries become, through the same path as planned faults.
    pub(super) fn aim(&mut self, t: u64, c: usize, r: &Record) {
        if self.aimer.is_idle() || self.lifecycle.phase() != RunPhase::Workload {
            return;
        }
        let in_force = r
            .valid_until_mono_us
            .is_none_or(|m| self.client_clocks[c].true_at_mono(m) > t);
        let (links, procs, n) = (&self.net.faults, &self.procs, self.scenario.nodes);
        let reach = |c| aimer::reachable(links, procs, c, n);
        let fired = self.aimer.record(t, c, r, in_force, &reach);
        self.fire(t, fired);
    }

    /// Node `node`'s reply reaches client `c` at `t`, before the client sees it: an
    /// aimed entry waiting for that many answers of an acquisition fires.
    pub(super) fn aim_reply(&mut self, t: u64, c: usize, node: usize) {
        if self.aimer.is_idle() || self.lifecycle.phase() != RunPhase::Workload {
            return;
        }
        let (links, procs, n) = (&self.net.faults, &self.procs, self.scenario.nodes);
        let reach = |c| aimer::reachable(links, procs, c, n);
        let fired = self.aimer.answer(t, c, node, &reach);
        self.fire(t, fired);
    }

    /// Starts (or queues) the faults aimed entries became.
    fn fire(&mut self, t: u64, fired: crate::aimer::Fired) {
        for (i, at) in fired.join(&mut self.plan, &mut self.active, &mut self.lifecycle) {
            if at <= t {
                self.start_fault(t, i);
            } else {
                self.queue.push(at, Ev::FaultStart(i));
            }
        }
    }

    /// Starts an armed pause of client `c` waiting for `point`, if there is one.
    pub(super) fn trigger_pause(&mut self, t: u64, c: usize, point: PausePoint) {
        if self.lifecycle.phase() != RunPhase::Workload || self.client_paused[c] {
            return;
        }
        let Some(k) = self.armed[c].iter().position(|&(_, p)| p == point) else {
            return;
        };
        let (i, _) = self.armed[c].remove(k);
        self.begin(t, i);
    }

    pub(super) fn end_fault(&mut self, t: u64, i: usize) {
        if !std::mem::take(&mut self.active[i]) {
            return;
        }
        let then = self.act(t, i, false);
        self.fault_event(t, i, FaultAction::End);
        self.all_node_events(t);
        self.then(t, then);
        if let Some(at) = self.lifecycle.fault_over(t) {
            if at < self.scenario.duration_us {
                self.queue.push(at, Ev::EndWorkload);
            }
        }
    }

    /// Starts (`on`) or ends fault `i`: only the transitions of what the active faults
    /// compose to reach the nodes, clocks and network.
    fn act(&mut self, t: u64, i: usize, on: bool) -> Then {
        let mut then = Then::default();
        let id = self.plan[i].id;
        match self.plan[i].fault.clone() {
            Fault::Partition {
                nodes,
                clients,
                direction,
            } => self.net.faults.cut(&clients, &nodes, direction, on),
            Fault::Crash { node, power_loss } => {
                if self.procs.outage(node, on) {
                    if on {
                        self.nodes[node].crash(t, power_loss);
                    } else {
                        self.nodes[node].restart(t);
                    }
                }
            }
            Fault::ReplicationCut { node } => {
                if self.procs.replication_cut(node, on) {
                    self.nodes[node].cut_replication(t, on);
                }
            }
            Fault::Failover { node } => {
                if self.procs.outage(node, on) {
                    if on {
                        self.nodes[node].fail_master(t);
                    } else {
                        self.nodes[node].promote_replica(t);
                    }
                }
            }
            Fault::Pause { node, client, .. } => {
                let Some(p) = Process::of(node, client) else {
                    return then;
                };
                if self.procs.pause(p, on) {
                    match p {
                        Process::Node(n) => self.node_paused[n] = on,
                        Process::Client(c) => self.client_paused[c] = on,
                    }
                    then.resumed = (!on).then_some(p);
                }
            }
            Fault::ClockJump { node, client, by_us } => {
                // A jump is instantaneous: it moves the clock when it starts, and the
                // clock stays where it jumped to.
                if on {
                    if let Some(n) = node {
                        self.nodes[n].jump_clock(t, by_us);
                    }
                    if let Some(c) = client {
                        self.client_clocks[c].jump(by_us);
                    }
                }
            }
            Fault::ClockRate { node, client, rate } => {
                let Some(p) = Process::of(node, client) else {
                    return then;
                };
                let ppm = rate_ppm(self.procs.rate(p, id, rate, on));
                match p {
                    Process::Node(n) => self.nodes[n].set_clock_rate(t, ppm),
                    Process::Client(c) => {
                        self.set_client_rate(t, c, ppm);
                        then.rate_changed = Some(c);
                    }
                }
            }
            Fault::Delay {
                nodes,
                clients,
                extra_us,
            } => self.net.faults.delay(&clients, &nodes, extra_us, on),
            Fault::Loss {
                nodes,
                clients,
                probability,
            } => self.net.faults.lose(&clients, &nodes, probability, on),
        }
        then
    }

    /// What follows a fault event: a resumed process replays what it missed; a client
    /// whose clock changed revises its belief.
    fn then(&mut self, t: u64, then: Then) {
        match then.resumed {
            Some(Process::Node(n)) => {
                for ev in std::mem::take(&mut self.node_deferred[n]) {
                    self.step(t, ev);
                }
            }
            Some(Process::Client(c)) => {
                for ev in std::mem::take(&mut self.client_deferred[c]) {
                    self.step(t, ev);
                }
            }
            None => {}
        }
        if let Some(c) = then.rate_changed {
            self.revise_belief(t, c);
        }
    }

    fn set_client_rate(&mut self, t: u64, c: usize, ppm: i64) {
        self.client_clocks[c].set_rate(t, ppm);
        // The client's timers are due at clock readings, which now come at other times.
        // They are queued for the client (`World::push_clocked`), so only they are
        // looked at.
        debug_assert!(self.client_rates, "a clock-rate fault the plan did not have");
        let clock = &self.client_clocks[c];
        self.queue.retime(c as u32, |ev| match *ev {
            Ev::Timer { at_mono_us, .. } | Ev::Wake { at_mono_us, .. } => {
                Some(clock.true_at_mono(at_mono_us).max(t))
            }
            _ => None,
        });
    }

    /// Client `c`'s clock changed at `t`: if it still believes it holds a lock, the true
    /// time at which its clock reaches the end of the validity moves; record where to.
    fn revise_belief(&mut self, t: u64, c: usize) {
        let Some(held) = &mut self.beliefs[c] else {
            return;
        };
        let clock = &self.client_clocks[c];
        // A validity its clock has already passed is over, whatever the clock does next.
        if clock.mono(t) >= held.valid_until_mono_us {
            return;
        }
        let until = clock.true_at_mono(held.valid_until_mono_us);
        if until == held.valid_until_us {
            return;
        }
        held.valid_until_us = until;
        let event = Event::Belief(Belief {
            t_us: t,
            client: c,
            lock: self.names.lock(held.lock),
            token: held.token.map(Into::into),
            valid_until_us: until,
        });
        self.emit(event);
    }
}
