//! How each fault kind acts on the simulated world, and how it heals.
//!
//! Faults start and end as queue events (`FaultStart`, `FaultEnd`), and every start and
//! end is recorded in the history with the fault's fields. Pauses are the driver's job:
//! a paused process's events are held back in arrival order and replayed when it
//! resumes, so a paused client sees every reply and timer late, all at once, exactly as
//! a process stopped by a GC pause would. A client pause with a `point` is armed at its
//! time and starts (and is recorded) when the client reaches that point.
//!
//! A client's clock-rate change reschedules its pending timers, so it acts when its own
//! clock says so. One approximation remains: an `ok` acquire's `valid_until_us` is the
//! true time at which the client's clock, at the rate it had then, reaches the end of the
//! validity; a rate change during the hold moves the client's belief but not that line.

use super::{Ev, World};
use crate::fault::{Fault, PausePoint};
use crate::history::{Event, FaultAction, FaultEvent};
use crate::lifecycle::RunPhase;

/// A clock rate as the clock takes it: parts per million above true time.
fn rate_ppm(rate: f64) -> i64 {
    ((rate - 1.0) * 1e6).round() as i64
}

impl World<'_> {
    fn fault_event(&mut self, t: u64, i: usize, action: FaultAction) {
        let f = &self.plan[i];
        self.history.push(Event::Fault(FaultEvent {
            t_us: t,
            id: f.id,
            action,
            origin: f.origin,
            fault: f.fault.clone(),
        }));
    }

    /// Marks fault `i` active, records it and schedules its end.
    fn begin(&mut self, t: u64, i: usize) {
        self.active[i] = true;
        self.fault_event(t, i, FaultAction::Start);
        if let Some(d) = self.plan[i].duration_us {
            self.queue.push(t + d, Ev::FaultEnd(i));
        }
    }

    pub(super) fn start_fault(&mut self, t: u64, i: usize) {
        if self.lifecycle.phase() != RunPhase::Workload {
            return;
        }
        let fault = self.plan[i].fault.clone();
        if let Fault::Pause {
            client: Some(c),
            point: Some(point),
            ..
        } = fault
        {
            let now = point == PausePoint::WhileHolding && self.holding[c];
            if !now {
                self.armed[c].push((i, point));
                return;
            }
        }
        self.begin(t, i);
        match fault {
            Fault::Partition {
                nodes,
                clients,
                direction,
            } => self.net.cut(&clients, &nodes, direction),
            Fault::Crash { node, power_loss } => self.nodes[node].crash(t, power_loss),
            Fault::Pause { node, client, .. } => {
                if let Some(n) = node {
                    self.node_paused[n] = true;
                }
                if let Some(c) = client {
                    self.client_paused[c] = true;
                }
            }
            Fault::ClockJump { node, client, by_us } => {
                if let Some(n) = node {
                    self.nodes[n].clock.jump(by_us);
                }
                if let Some(c) = client {
                    self.client_clocks[c].jump(by_us);
                }
            }
            Fault::ClockRate { node, client, rate } => self.set_rate(t, node, client, rate_ppm(rate)),
            Fault::Delay {
                nodes,
                clients,
                extra_us,
            } => self.net.delay(&clients, &nodes, extra_us, true),
            Fault::Loss {
                nodes,
                clients,
                probability,
            } => self.net.lose(&clients, &nodes, probability, true),
            Fault::Failover { node } => self.nodes[node].fail_master(t),
        }
    }

    fn set_rate(&mut self, t: u64, node: Option<usize>, client: Option<usize>, ppm: i64) {
        if let Some(n) = node {
            self.nodes[n].clock.set_rate(t, ppm);
        }
        if let Some(c) = client {
            self.client_clocks[c].set_rate(t, ppm);
            // The client's timers are due at clock readings, which now come at other times.
            let clock = &self.client_clocks[c];
            self.queue.retime(|ev| match *ev {
                Ev::Timer {
                    client, at_mono_us, ..
                }
                | Ev::Wake {
                    client, at_mono_us, ..
                } if client == c => Some(clock.true_at_mono(at_mono_us).max(t)),
                _ => None,
            });
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
        self.client_paused[c] = true;
    }

    pub(super) fn end_fault(&mut self, t: u64, i: usize) {
        if !std::mem::take(&mut self.active[i]) {
            return;
        }
        self.fault_event(t, i, FaultAction::End);
        match self.plan[i].fault.clone() {
            Fault::Partition {
                nodes,
                clients,
                direction,
            } => self.net.uncut(&clients, &nodes, direction),
            Fault::Crash { node, .. } => self.nodes[node].restart(t),
            Fault::Pause { node, client, .. } => {
                if let Some(n) = node {
                    self.node_paused[n] = false;
                    for ev in std::mem::take(&mut self.node_deferred[n]) {
                        self.step(t, ev);
                    }
                }
                if let Some(c) = client {
                    self.client_paused[c] = false;
                    for ev in std::mem::take(&mut self.client_deferred[c]) {
                        self.step(t, ev);
                    }
                }
            }
            // A jump is instantaneous; the clock stays where it jumped to.
            Fault::ClockJump { .. } => {}
            Fault::ClockRate { node, client, .. } => self.set_rate(t, node, client, 0),
            Fault::Delay {
                nodes,
                clients,
                extra_us,
            } => self.net.delay(&clients, &nodes, extra_us, false),
            Fault::Loss {
                nodes,
                clients,
                probability,
            } => self.net.lose(&clients, &nodes, probability, false),
            Fault::Failover { node } => self.nodes[node].promote_replica(t),
        }
    }
}
