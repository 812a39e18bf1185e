//! A lock client: a workload driving a lock algorithm, sans-IO like the algorithm itself.
//!
//! The client cycles think → acquire → hold → release. It holds until its hold time is
//! over or its validity runs out, whichever comes first: a correct client never works
//! past its validity by its own clock. Drivers call [`Client::start`], then
//! [`Client::on_wake`], [`Client::on_reply`] and [`Client::on_timer`] as the client asked,
//! and carry out the [`Action`]s: send, arm a timer, wake later, or record an event in the
//! history (the driver stamps it with true time).
//!
//! After [`Client::stop`] the client finishes its current operation and goes idle.
//! [`Client::probe`] then makes it acquire and release each listed lock once, retrying
//! until it succeeds: the liveness phase after the heal.

use crate::algorithm::{self, LockAlgorithm, Mode, NodeSet, Now, Output, ReqId, TimerId};
use crate::command::{Cmd, LockId, NodeId, Reply, Token};
use crate::history::{OpKind, Phase};
use crate::workload::Workload;

/// What the driver must do for a client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Send {
        node: NodeId,
        req: ReqId,
        cmd: Cmd,
    },
    Timer {
        id: TimerId,
        at_mono_us: u64,
    },
    /// Call `on_wake` once the client's monotonic clock reads `at_mono_us`.
    Wake {
        at_mono_us: u64,
    },
    Record(Record),
    /// The client has stopped and has nothing left to do.
    Idle,
}

/// A history event, without the time and client the driver adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: RecordKind,
    pub op: OpKind,
    pub lock: LockId,
    pub mode: Mode,
    pub phase: Phase,
    pub token: Option<Token>,
    /// Validity end by the client's monotonic clock; the driver converts it to true time.
    pub valid_until_mono_us: Option<u64>,
    pub nodes: Option<NodeSet>,
    pub attempts: Option<u32>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    Invoke,
    Ok,
    Fail,
    Info,
}

enum State {
    Thinking,
    Acquiring { lock: LockId },
    Holding { lock: LockId },
    Idle,
}

pub struct Client {
    algorithm: Box<dyn LockAlgorithm>,
    workload: Workload,
    state: State,
    stopping: bool,
    /// Locks still to probe, in order; non-empty only in the liveness phase.
    probes: Vec<LockId>,
    scratch: Vec<Output>,
}

impl Client {
    pub fn new(algorithm: Box<dyn LockAlgorithm>, workload: Workload) -> Self {
        Client {
            algorithm,
            workload,
            state: State::Idle,
            stopping: false,
            probes: Vec::new(),
            scratch: Vec::new(),
        }
    }

    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Idle)
    }

    /// Begins the workload: think first, so clients do not all start at once.
    pub fn start(&mut self, now: Now, out: &mut Vec<Action>) {
        self.state = State::Thinking;
        out.push(Action::Wake {
            at_mono_us: now.mono_us + self.workload.think_us(),
        });
    }

    /// Finish the current operation, then go idle.
    pub fn stop(&mut self, out: &mut Vec<Action>) {
        self.stopping = true;
        if matches!(self.state, State::Thinking) {
            self.state = State::Idle;
            out.push(Action::Idle);
        }
    }

    /// Acquire and release each of `locks` once, retrying until each succeeds.
    pub fn probe(&mut self, now: Now, locks: &[LockId], out: &mut Vec<Action>) {
        debug_assert!(self.is_idle());
        self.probes = locks.iter().rev().copied().collect();
        self.next_probe(now, out);
    }

    fn phase(&self) -> Phase {
        if self.probes.is_empty() {
            Phase::Workload
        } else {
            Phase::Probe
        }
    }

    fn record(&self, kind: RecordKind, op: OpKind, lock: LockId) -> Record {
        Record {
            kind,
            op,
            lock,
            mode: Mode::Exclusive,
            phase: self.phase(),
            token: None,
            valid_until_mono_us: None,
            nodes: None,
            attempts: None,
        }
    }

    fn next_probe(&mut self, now: Now, out: &mut Vec<Action>) {
        match self.probes.last() {
            Some(&lock) => self.begin_acquire(now, lock, out),
            None => {
                self.state = State::Idle;
                out.push(Action::Idle);
            }
        }
    }

    fn begin_acquire(&mut self, now: Now, lock: LockId, out: &mut Vec<Action>) {
        self.state = State::Acquiring { lock };
        out.push(Action::Record(self.record(
            RecordKind::Invoke,
            OpKind::Acquire,
            lock,
        )));
        self.algorithm
            .acquire(now, lock, Mode::Exclusive, &mut self.scratch);
        self.drain(now, out);
    }

    /// What to do once an operation is over: think, probe the next lock, or stop.
    fn after_op(&mut self, now: Now, out: &mut Vec<Action>) {
        if !self.probes.is_empty() {
            self.next_probe(now, out);
        } else if self.stopping {
            self.state = State::Idle;
            out.push(Action::Idle);
        } else {
            self.state = State::Thinking;
            out.push(Action::Wake {
                at_mono_us: now.mono_us + self.workload.think_us(),
            });
        }
    }

    pub fn on_wake(&mut self, now: Now, out: &mut Vec<Action>) {
        match self.state {
            State::Thinking => {
                let lock = self.workload.pick_lock();
                self.begin_acquire(now, lock, out);
            }
            State::Holding { lock } => {
                out.push(Action::Record(self.record(
                    RecordKind::Invoke,
                    OpKind::Release,
                    lock,
                )));
                self.algorithm.release(now, &mut self.scratch);
                self.drain(now, out);
            }
            State::Acquiring { .. } | State::Idle => {}
        }
    }

    pub fn on_reply(&mut self, now: Now, req: ReqId, reply: Reply, out: &mut Vec<Action>) {
        self.algorithm.on_reply(now, req, reply, &mut self.scratch);
        self.drain(now, out);
    }

    pub fn on_timer(&mut self, now: Now, id: TimerId, out: &mut Vec<Action>) {
        self.algorithm.on_timer(now, id, &mut self.scratch);
        self.drain(now, out);
    }

    /// Turns the algorithm's outputs into actions, reacting to its verdicts.
    fn drain(&mut self, now: Now, out: &mut Vec<Action>) {
        let mut outputs = std::mem::take(&mut self.scratch);
        for output in outputs.drain(..) {
            match output {
                Output::Send { node, req, cmd } => out.push(Action::Send { node, req, cmd }),
                Output::Timer { id, at_mono_us } => out.push(Action::Timer { id, at_mono_us }),
                Output::Acquired {
                    token,
                    valid_until_mono_us,
                    nodes,
                    attempts,
                } => {
                    let State::Acquiring { lock } = self.state else {
                        continue;
                    };
                    let mut r = self.record(RecordKind::Ok, OpKind::Acquire, lock);
                    r.token = Some(token);
                    r.valid_until_mono_us = Some(valid_until_mono_us);
                    r.nodes = Some(nodes);
                    r.attempts = Some(attempts);
                    out.push(Action::Record(r));
                    self.state = State::Holding { lock };
                    // Probes release at once; workload clients hold, but never past validity.
                    let hold_us = if self.probes.is_empty() {
                        self.workload.hold_us()
                    } else {
                        0
                    };
                    out.push(Action::Wake {
                        at_mono_us: (now.mono_us + hold_us).min(valid_until_mono_us),
                    });
                }
                Output::NotAcquired {
                    token,
                    unknown,
                    attempts,
                } => {
                    let State::Acquiring { lock } = self.state else {
                        continue;
                    };
                    let kind = if unknown {
                        RecordKind::Info
                    } else {
                        RecordKind::Fail
                    };
                    let mut r = self.record(kind, OpKind::Acquire, lock);
                    r.token = Some(token);
                    r.attempts = Some(attempts);
                    out.push(Action::Record(r));
                    if self.probes.is_empty() {
                        self.after_op(now, out);
                    } else {
                        self.begin_acquire(now, lock, out);
                    }
                }
                Output::Released { token } => {
                    let State::Holding { lock } = self.state else {
                        continue;
                    };
                    let mut r = self.record(RecordKind::Ok, OpKind::Release, lock);
                    r.token = Some(token);
                    out.push(Action::Record(r));
                    self.probes.pop();
                    self.after_op(now, out);
                }
            }
        }
        self.scratch = outputs;
    }
}

/// Builds the clients of a scenario, each with its own algorithm and workload streams.
pub fn build_clients(scenario: &crate::scenario::Scenario, seed: u64) -> Vec<Client> {
    (0..scenario.clients.count)
        .map(|i| {
            let algorithm = algorithm::build(
                &scenario.algorithm,
                scenario.nodes,
                crate::rng::split(seed, "algorithm", i as u64),
            );
            let workload = Workload::new(&scenario.clients, crate::rng::split(seed, "workload", i as u64));
            Client::new(algorithm, workload)
        })
        .collect()
}
