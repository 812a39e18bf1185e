//! Client pauses on the real backend: a stop-the-world pause of a client, for the
//! built-in clients and for workers alike.
//!
//! While a client is paused, lockstorm holds back everything addressed to it (node
//! replies, its timers and wake-ups, the resource's acknowledgements, its worker's
//! output) and hands it over in arrival order when it resumes, as the simulator does:
//! the client's cycle stops with its process. A worker is also stopped for real, with
//! SIGSTOP to its process group (SIGCONT at the end), so a request written to it during
//! the pause is answered only after it: a write decided before the pause and answered
//! after it reaches the guarded resource late, as in Kleppmann's analysis. Faults are
//! sets: a client is paused while any pause on it is active. A pause with a `point`
//! is armed at its time and starts when the client reaches that point.

use super::conn::Answer;
use super::{Driver, Ev};
use crate::fault::{Fault, PausePoint};
use crate::worker::process::WorkerEvent;

/// Something a paused client has not seen yet.
pub(super) enum Held {
    Ev(Ev),
    Reply(Answer),
    /// A worker's message, with when it came in: an answer its library gave before the
    /// pause is held back with the client, but the caller's hold counts from then.
    Worker(WorkerEvent, u64),
}

/// Per client: active pauses, what it has not seen, pauses waiting for their point,
/// and where it is in its cycle (for the points).
pub(super) struct ClientPauses {
    active: Vec<u32>,
    since_us: Vec<u64>,
    held: Vec<Vec<Held>>,
    armed: Vec<Vec<(usize, PausePoint)>>,
    acquiring: Vec<bool>,
    holding: Vec<bool>,
}

impl ClientPauses {
    pub(super) fn new(clients: usize) -> Self {
        ClientPauses {
            active: vec![0; clients],
            since_us: vec![0; clients],
            held: (0..clients).map(|_| Vec::new()).collect(),
            armed: vec![Vec::new(); clients],
            acquiring: vec![false; clients],
            holding: vec![false; clients],
        }
    }

    pub(super) fn is_paused(&self, c: usize) -> bool {
        self.active[c] > 0
    }

    pub(super) fn is_acquiring(&self, c: usize) -> bool {
        self.acquiring[c]
    }

    /// Follows the client through its cycle, from its history records.
    pub(super) fn on_record(&mut self, c: usize, r: &crate::client::Record) {
        use crate::client::RecordKind;
        use crate::history::OpKind;
        match (r.kind, r.op) {
            (RecordKind::Invoke, OpKind::Acquire) => self.acquiring[c] = true,
            (RecordKind::Invoke, OpKind::Release) => self.holding[c] = false,
            (RecordKind::Ok, OpKind::Acquire) => {
                self.acquiring[c] = false;
                self.holding[c] = true;
            }
            (_, OpKind::Acquire) => self.acquiring[c] = false,
            _ => {}
        }
    }
}

impl Driver<'_> {
    /// Holds `what` back if client `c` is paused; gives it back otherwise.
    pub(super) fn hold_back(&mut self, c: usize, what: Held) -> Option<Held> {
        if self.pauses.is_paused(c) {
            self.pauses.held[c].push(what);
            None
        } else {
            Some(what)
        }
    }

    /// A client pause waiting for its point is armed instead of started; returns
    /// whether fault `i` was armed.
    pub(super) fn arm_pause(&mut self, i: usize) -> bool {
        let Fault::Pause {
            client: Some(c),
            point: Some(point),
            ..
        } = self.plan[i].fault
        else {
            return false;
        };
        if point == PausePoint::WhileHolding && self.pauses.holding[c] {
            return false;
        }
        self.pauses.armed[c].push((i, point));
        true
    }

    /// Starts an armed pause of client `c` waiting for `point`, if there is one.
    pub(super) fn trigger_pause(&mut self, t: u64, c: usize, point: PausePoint) {
        if self.lifecycle.phase() != crate::lifecycle::RunPhase::Workload {
            return;
        }
        let Some(k) = self.pauses.armed[c].iter().position(|&(_, p)| p == point) else {
            return;
        };
        let (i, _) = self.pauses.armed[c].remove(k);
        self.begin_fault(t, i);
    }

    /// One more (`on`) or one fewer pause on client `c` at driver time `t`. The last one
    /// to end resumes it and hands over what it missed, stamped `t` like the fault's end:
    /// the history's times never go back, also when several faults end at one moment
    /// (the heal).
    pub(super) fn pause_client(&mut self, t: u64, c: usize, on: bool) {
        if on {
            self.pauses.active[c] += 1;
            if self.pauses.active[c] == 1 {
                self.pauses.since_us[c] = t;
                if let Some(w) = &mut self.workers {
                    w.pause(c);
                }
            }
            return;
        }
        let p = &mut self.pauses.active[c];
        *p = p.saturating_sub(1);
        if *p > 0 {
            return;
        }
        let paused_us = t.saturating_sub(self.pauses.since_us[c]);
        if let Some(w) = &mut self.workers {
            if let Some((id, deadline_us)) = w.resume(c, paused_us) {
                self.schedule(deadline_us, Ev::WorkerDeadline { client: c, id });
            }
        }
        let mut held = std::mem::take(&mut self.pauses.held[c]).into_iter();
        while let Some(what) = held.next() {
            self.hand_over(t, what);
            if self.pauses.is_paused(c) {
                // A point reached while catching up paused it again: the rest waits,
                // ahead of whatever came meanwhile.
                let mut rest: Vec<Held> = held.collect();
                rest.append(&mut self.pauses.held[c]);
                self.pauses.held[c] = rest;
                break;
            }
        }
    }

    /// Delivers something a client was sent (or held back from it until now).
    pub(super) fn hand_over(&mut self, t: u64, what: Held) {
        match what {
            Held::Ev(ev) => self.step(t, ev),
            Held::Reply(r) => self.on_reply(t, r),
            Held::Worker(ev, received_us) => self.on_worker(t, ev, received_us),
        }
    }
}
