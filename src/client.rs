//! A lock client: a workload driving a lock algorithm, sans-IO like the algorithm itself.
//!
//! The client cycles think → acquire → hold → release. Holding is work: with
//! `resource_writes` on (the default when fencing is), the client writes
//! to the guarded resource once right after acquiring (which also shows the resource its
//! fencing token early) and once when its work is done, just before releasing; readers do
//! not write. Writes are synchronous, as a real client's would be: the client waits for
//! the resource's acknowledgement ([`Client::on_write_ack`]) before it starts its work
//! or releases. Its work takes the hold time; if that would run past the validity, the
//! client extends the lock when `extend_before` of validity is left (up to the bound), or
//! stops at the validity without the final write. A correct client therefore never acts
//! past its validity by its own clock, except when the world stops under it (a pause):
//! then the final write goes out late, as in Kleppmann's analysis, because the client
//! decided to write while it still held the lock.
//!
//! With a read-write lock, an acquisition that fails is retried after the next think time
//! with the same lock and mode: a client that wants a lock keeps wanting it, which is
//! what the starvation metric (first attempt to acquisition) measures. Exclusive
//! workloads pick a lock afresh after a failure.
//!
//! Drivers call [`Client::start`], then [`Client::on_wake`], [`Client::on_reply`] and
//! [`Client::on_timer`] as the client asked, and carry out the [`Action`]s: send, arm a
//! timer, wake later, write to the resource, or record an event in the history (the
//! driver stamps it with true time).
//!
//! The lock operations are carried out by a [`Locker`]: the built-in sans-IO algorithm
//! (actions `Send` and `Timer`), or a worker process running any lock library
//! ([`crate::worker`]; actions `Call`, answered through [`Client::on_answer`]). The
//! cycle above is the same for both. A worker client's writes go through its worker
//! first: the `Write` action comes when the worker answers, with the fencing token the
//! worker reports, so a worker paused before answering makes a late write.
//!
//! A worker may hold with no expiry (recorded without `valid_until_us`), and may report
//! that its library lost a hold ([`Client::on_lost`]): the client then stops working and
//! releases at once, without the final write, as after a failed extension.
//!
//! After [`Client::stop`] the client finishes its current operation and goes idle.
//! [`Client::probe`] then makes it acquire and release each listed lock once, retrying
//! until it succeeds: the liveness phase after the heal.

use crate::algorithm::{self, LockAlgorithm, Mode, NodeSet, Now, Output, ReqId, TimerId};
use crate::command::{Cmd, LockId, NodeId, Reply, Token};
use crate::history::{OpKind, Phase};
use crate::worker::{AnswerKind, Answered, Request, WorkerLock};
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
    /// Send `request` to the client's worker; its answer comes back through `on_answer`.
    Call(Request),
    /// Call `on_wake` once the client's monotonic clock reads `at_mono_us`.
    Wake {
        at_mono_us: u64,
    },
    /// Write to the guarded resource of `lock`, with the hold's token and fencing token.
    Write {
        lock: LockId,
        token: Token,
        fence: Option<u64>,
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
    pub fence: Option<u64>,
}

impl Record {
    /// The history event for this record, stamped by the driver with true time and the
    /// client, and with the validity deadline converted to true time; the lock is named
    /// from the driver's `names`.
    pub fn to_event(
        &self,
        names: &mut crate::history::Names,
        t_us: u64,
        client: usize,
        valid_until_us: Option<u64>,
    ) -> crate::history::Event {
        use crate::history::{Event, Op};
        let mut op = Op::new(t_us, client, self.op, names.lock(self.lock), self.mode);
        op.phase = self.phase;
        op.token = self.token.map(crate::history::Token::hex);
        op.valid_until_us = valid_until_us;
        op.nodes = self.nodes.map(|set| crate::history::NodeSet::from_bits(set.0));
        op.attempts = self.attempts;
        op.fence = self.fence;
        match self.kind {
            RecordKind::Invoke => Event::Invoke(op),
            RecordKind::Ok => Event::Ok(op),
            RecordKind::Fail => Event::Fail(op),
            RecordKind::Info => Event::Info(op),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecordKind {
    Invoke,
    Ok,
    Fail,
    Info,
}

/// What the next wake-up of a holder is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HoldStep {
    /// The work is done: write, then release.
    Finish,
    /// Little validity is left: extend.
    Extend,
    /// The validity is over and no extension is left: release without the final write.
    GiveUp,
}

#[derive(Clone, Copy, Debug)]
struct Hold {
    lock: LockId,
    mode: Mode,
    token: Token,
    fence: Option<u64>,
    work_end_mono_us: u64,
    valid_until_mono_us: u64,
    extensions: u32,
    step: HoldStep,
    /// The worker's library said it lost the lock: give up at once.
    lost: bool,
}

enum State {
    /// `want` is an acquisition that failed and will be tried again.
    Thinking {
        want: Option<(LockId, Mode)>,
    },
    Acquiring {
        lock: LockId,
        mode: Mode,
    },
    Holding(Hold),
    /// Waiting for the resource to acknowledge a write; then work (`release` false) or
    /// release.
    Writing {
        hold: Hold,
        release: bool,
    },
    Extending(Hold),
    Idle,
}

/// Who carries out a client's lock operations.
pub enum Locker {
    /// The built-in sans-IO algorithm, talking to the nodes itself.
    Algorithm(Box<dyn LockAlgorithm>),
    /// A worker process, talking to the nodes through the client's own proxies.
    Worker(Box<WorkerLock>),
}

pub struct Client {
    locker: Locker,
    workload: Workload,
    state: State,
    stopping: bool,
    /// Locks still to probe, in order; non-empty only in the liveness phase.
    probes: Vec<LockId>,
    max_extensions: u32,
    extend_before_us: u64,
    /// Retry a failed acquisition with the same lock and mode (read-write workloads).
    keep_wanting: bool,
    /// Whether holders write to the guarded resource.
    resource_writes: bool,
    scratch: Vec<Output>,
}

impl Client {
    pub fn new(algorithm: Box<dyn LockAlgorithm>, workload: Workload) -> Self {
        Client::with_locker(Locker::Algorithm(algorithm), workload)
    }

    /// A client whose lock operations go to a worker process.
    pub fn worker(lock: WorkerLock, workload: Workload) -> Self {
        Client::with_locker(Locker::Worker(Box::new(lock)), workload)
    }

    fn with_locker(locker: Locker, workload: Workload) -> Self {
        Client {
            locker,
            workload,
            state: State::Idle,
            stopping: false,
            probes: Vec::new(),
            max_extensions: 0,
            extend_before_us: 0,
            keep_wanting: false,
            resource_writes: false,
            scratch: Vec::new(),
        }
    }

    /// Lets the client extend a hold up to `max` times, when `before_us` of validity is left.
    pub fn with_extensions(mut self, max: u32, before_us: u64) -> Self {
        self.max_extensions = max;
        self.extend_before_us = before_us;
        self
    }

    /// Makes holders write to the guarded resource.
    pub fn with_resource_writes(mut self, on: bool) -> Self {
        self.resource_writes = on;
        self
    }

    /// Retries a failed acquisition with the same lock and mode.
    pub fn keep_wanting(mut self) -> Self {
        self.keep_wanting = true;
        self
    }

    pub fn is_idle(&self) -> bool {
        matches!(self.state, State::Idle)
    }

    /// Begins the workload: think first, so clients do not all start at once.
    pub fn start(&mut self, now: Now, out: &mut Vec<Action>) {
        self.state = State::Thinking { want: None };
        out.push(Action::Wake {
            at_mono_us: now.mono_us + self.workload.think_us(),
        });
    }

    /// Finish the current operation, then go idle.
    pub fn stop(&mut self, out: &mut Vec<Action>) {
        self.stopping = true;
        if matches!(self.state, State::Thinking { .. }) {
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

    fn record(&self, kind: RecordKind, op: OpKind, lock: LockId, mode: Mode) -> Record {
        Record {
            kind,
            op,
            lock,
            mode,
            phase: self.phase(),
            token: None,
            valid_until_mono_us: None,
            nodes: None,
            attempts: None,
            fence: None,
        }
    }

    fn next_probe(&mut self, now: Now, out: &mut Vec<Action>) {
        match self.probes.last() {
            Some(&lock) => {
                let mode = self.workload.probe_mode();
                self.begin_acquire(now, lock, mode, out)
            }
            None => {
                self.state = State::Idle;
                out.push(Action::Idle);
            }
        }
    }

    fn begin_acquire(&mut self, now: Now, lock: LockId, mode: Mode, out: &mut Vec<Action>) {
        self.state = State::Acquiring { lock, mode };
        out.push(Action::Record(self.record(
            RecordKind::Invoke,
            OpKind::Acquire,
            lock,
            mode,
        )));
        match &mut self.locker {
            Locker::Algorithm(a) => a.acquire(now, lock, mode, &mut self.scratch),
            Locker::Worker(w) => out.push(Action::Call(w.acquire(now, lock, mode))),
        }
        self.drain(now, out);
    }

    /// What to do once an operation is over: think (and retry `want`), probe the next
    /// lock, or stop.
    fn after_op(&mut self, now: Now, want: Option<(LockId, Mode)>, out: &mut Vec<Action>) {
        if !self.probes.is_empty() {
            self.next_probe(now, out);
        } else if self.stopping {
            self.state = State::Idle;
            out.push(Action::Idle);
        } else {
            self.state = State::Thinking { want };
            out.push(Action::Wake {
                at_mono_us: now.mono_us + self.workload.think_us(),
            });
        }
    }

    /// Decides the holder's next step and asks to be woken for it.
    fn schedule(&mut self, now: Now, mut hold: Hold, out: &mut Vec<Action>) {
        let at_mono_us = if hold.lost {
            hold.step = HoldStep::GiveUp;
            now.mono_us
        } else if hold.work_end_mono_us <= hold.valid_until_mono_us {
            hold.step = HoldStep::Finish;
            hold.work_end_mono_us
        } else if hold.extensions < self.max_extensions {
            hold.step = HoldStep::Extend;
            hold.valid_until_mono_us.saturating_sub(self.extend_before_us)
        } else {
            hold.step = HoldStep::GiveUp;
            hold.valid_until_mono_us
        };
        self.state = State::Holding(hold);
        out.push(Action::Wake {
            at_mono_us: at_mono_us.max(now.mono_us),
        });
    }

    fn release(&mut self, now: Now, hold: Hold, out: &mut Vec<Action>) {
        self.state = State::Holding(hold);
        out.push(Action::Record(self.record(
            RecordKind::Invoke,
            OpKind::Release,
            hold.lock,
            hold.mode,
        )));
        match &mut self.locker {
            Locker::Algorithm(a) => a.release(now, &mut self.scratch),
            Locker::Worker(w) => out.push(Action::Call(w.release(now, hold.lock))),
        }
        self.drain(now, out);
    }

    /// Whether this hold writes to the guarded resource: workload writers only.
    fn writes(&self, hold: &Hold) -> bool {
        self.resource_writes && hold.mode != Mode::Read && self.probes.is_empty()
    }

    pub fn on_wake(&mut self, now: Now, out: &mut Vec<Action>) {
        match self.state {
            State::Thinking { want } => {
                let (lock, mode) = match want {
                    Some(w) => w,
                    None => {
                        let lock = self.workload.pick_lock();
                        (lock, self.workload.pick_mode())
                    }
                };
                self.begin_acquire(now, lock, mode, out);
            }
            State::Holding(hold) => match hold.step {
                HoldStep::Finish => {
                    if self.writes(&hold) {
                        self.write(now, hold, true, out);
                    } else {
                        self.release(now, hold, out);
                    }
                }
                HoldStep::GiveUp => self.release(now, hold, out),
                HoldStep::Extend => {
                    self.state = State::Extending(hold);
                    let mut r = self.record(RecordKind::Invoke, OpKind::Extend, hold.lock, hold.mode);
                    r.token = Some(hold.token);
                    out.push(Action::Record(r));
                    match &mut self.locker {
                        Locker::Algorithm(a) => a.extend(now, &mut self.scratch),
                        Locker::Worker(w) => out.push(Action::Call(w.extend(now, hold.lock))),
                    }
                    self.drain(now, out);
                }
            },
            State::Acquiring { .. } | State::Writing { .. } | State::Extending(_) | State::Idle => {}
        }
    }

    fn write(&mut self, now: Now, hold: Hold, release: bool, out: &mut Vec<Action>) {
        self.state = State::Writing { hold, release };
        match &mut self.locker {
            Locker::Algorithm(_) => out.push(Action::Write {
                lock: hold.lock,
                token: hold.token,
                fence: hold.fence,
            }),
            // The resource sees the write when the worker answers it.
            Locker::Worker(w) => out.push(Action::Call(w.write(now, hold.lock))),
        }
    }

    /// The worker answered the client's open request.
    pub fn on_answer(&mut self, now: Now, answer: Answered, out: &mut Vec<Action>) {
        let Locker::Worker(w) = &mut self.locker else {
            return;
        };
        if let (&State::Writing { hold, .. }, Some(Request::Write { .. })) = (&self.state, w.open()) {
            w.on_answer(now, answer, &mut self.scratch);
            if answer.kind == AnswerKind::Ok {
                out.push(Action::Write {
                    lock: hold.lock,
                    token: hold.token,
                    fence: answer.fence,
                });
            } else {
                // Not written: carry on as after a rejected write.
                self.on_write_ack(now, out);
            }
            return;
        }
        w.on_answer(now, answer, &mut self.scratch);
        self.drain(now, out);
    }

    /// The worker request in flight, ended as an unknown outcome (`info`), for a driver
    /// that stops while the client waits for its worker; `None` when no lock
    /// operation is open.
    pub fn unknown_outcome(&self) -> Option<Record> {
        let Locker::Worker(w) = &self.locker else {
            return None;
        };
        let (op, lock, mode, token) = match (w.open()?, &self.state) {
            (Request::Acquire { lock, mode }, _) => (OpKind::Acquire, lock, mode, w.token()),
            (Request::Release { .. }, State::Holding(h)) => (OpKind::Release, h.lock, h.mode, h.token),
            (Request::Extend { .. }, State::Extending(h)) => (OpKind::Extend, h.lock, h.mode, h.token),
            _ => return None,
        };
        let mut r = self.record(RecordKind::Info, op, lock, mode);
        r.token = Some(token);
        Some(r)
    }

    /// The worker said its library lost `lock`. If the client holds it (and is not
    /// releasing it already), the hold is over: returns its token, for the driver to
    /// record the `lost`, and the client gives up at once (after the request in flight,
    /// if any), without the final write.
    pub fn on_lost(&mut self, now: Now, lock: LockId, out: &mut Vec<Action>) -> Option<Token> {
        let Locker::Worker(w) = &self.locker else {
            return None;
        };
        let releasing = matches!(w.open(), Some(Request::Release { .. }));
        match &mut self.state {
            State::Holding(h) if h.lock == lock && !h.lost && !releasing => {
                h.lost = true;
                let hold = *h;
                self.schedule(now, hold, out);
                Some(hold.token)
            }
            State::Extending(h) | State::Writing { hold: h, .. } if h.lock == lock && !h.lost => {
                h.lost = true;
                Some(h.token)
            }
            _ => None,
        }
    }

    /// The guarded resource answered the client's write (accepted or not).
    pub fn on_write_ack(&mut self, now: Now, out: &mut Vec<Action>) {
        if let State::Writing { hold, release } = self.state {
            if release {
                self.release(now, hold, out);
            } else {
                self.schedule(now, hold, out);
            }
        }
    }

    pub fn on_reply(&mut self, now: Now, req: ReqId, reply: Reply, out: &mut Vec<Action>) {
        if let Locker::Algorithm(a) = &mut self.locker {
            a.on_reply(now, req, reply, &mut self.scratch);
        }
        self.drain(now, out);
    }

    pub fn on_timer(&mut self, now: Now, id: TimerId, out: &mut Vec<Action>) {
        if let Locker::Algorithm(a) = &mut self.locker {
            a.on_timer(now, id, &mut self.scratch);
        }
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
                    fence,
                } => {
                    let State::Acquiring { lock, mode } = self.state else {
                        continue;
                    };
                    let mut r = self.record(RecordKind::Ok, OpKind::Acquire, lock, mode);
                    r.token = Some(token);
                    // A worker's hold with no expiry is recorded without a validity.
                    r.valid_until_mono_us =
                        (valid_until_mono_us != crate::worker::UNTIL_RELEASED).then_some(valid_until_mono_us);
                    // A worker reports neither (empty, 0).
                    r.nodes = (!nodes.is_empty()).then_some(nodes);
                    r.attempts = (attempts > 0).then_some(attempts);
                    r.fence = fence;
                    out.push(Action::Record(r));
                    // Probes release at once; workload clients work for their hold time.
                    let hold_us = if self.probes.is_empty() {
                        self.workload.hold_us()
                    } else {
                        0
                    };
                    let hold = Hold {
                        lock,
                        mode,
                        token,
                        fence,
                        work_end_mono_us: now.mono_us + hold_us,
                        valid_until_mono_us,
                        extensions: 0,
                        step: HoldStep::Finish,
                        lost: false,
                    };
                    if self.writes(&hold) {
                        self.write(now, hold, false, out);
                    } else {
                        self.schedule(now, hold, out);
                    }
                }
                Output::NotAcquired {
                    token,
                    unknown,
                    attempts,
                } => {
                    let State::Acquiring { lock, mode } = self.state else {
                        continue;
                    };
                    let kind = if unknown {
                        RecordKind::Info
                    } else {
                        RecordKind::Fail
                    };
                    let mut r = self.record(kind, OpKind::Acquire, lock, mode);
                    r.token = Some(token);
                    r.attempts = (attempts > 0).then_some(attempts);
                    out.push(Action::Record(r));
                    if self.probes.is_empty() {
                        let want = self.keep_wanting.then_some((lock, mode));
                        self.after_op(now, want, out);
                    } else {
                        self.begin_acquire(now, lock, mode, out);
                    }
                }
                Output::Extended {
                    token,
                    valid_until_mono_us,
                    nodes,
                } => {
                    let State::Extending(mut hold) = self.state else {
                        continue;
                    };
                    let mut r = self.record(RecordKind::Ok, OpKind::Extend, hold.lock, hold.mode);
                    r.token = Some(token);
                    r.valid_until_mono_us =
                        (valid_until_mono_us != crate::worker::UNTIL_RELEASED).then_some(valid_until_mono_us);
                    r.nodes = (!nodes.is_empty()).then_some(nodes);
                    out.push(Action::Record(r));
                    hold.valid_until_mono_us = valid_until_mono_us;
                    hold.extensions += 1;
                    self.schedule(now, hold, out);
                }
                Output::NotExtended { token } => {
                    let State::Extending(mut hold) = self.state else {
                        continue;
                    };
                    let mut r = self.record(RecordKind::Fail, OpKind::Extend, hold.lock, hold.mode);
                    r.token = Some(token);
                    out.push(Action::Record(r));
                    // No more extensions: stop at the earlier deadline and release.
                    hold.extensions = u32::MAX;
                    self.schedule(now, hold, out);
                }
                Output::Released { token } => {
                    let State::Holding(hold) = self.state else {
                        continue;
                    };
                    let mut r = self.record(RecordKind::Ok, OpKind::Release, hold.lock, hold.mode);
                    r.token = Some(token);
                    out.push(Action::Record(r));
                    self.probes.pop();
                    self.after_op(now, None, out);
                }
            }
        }
        self.scratch = outputs;
    }
}

/// Builds the clients of a scenario, each with its own algorithm and workload streams:
/// the built-in algorithm, or the scenario's worker.
///
/// The probe client, if the scenario has one, comes last (index `clients.count`): the
/// same lock, on a lock of its own, writing nothing to the guarded resource. Its
/// streams are split off the seed like any client's, so the other clients' streams are
/// the same with and without it.
pub fn build_clients(scenario: &crate::scenario::Scenario, seed: u64) -> Vec<Client> {
    let a = &scenario.algorithm;
    let c = &scenario.clients;
    (0..c.total())
        .map(|i| {
            let rng = crate::rng::split(seed, "algorithm", i as u64);
            let stream = crate::rng::split(seed, "workload", i as u64);
            let probe = c.probe.zip(c.probe_lock()).filter(|_| i == c.count);
            let workload = match probe {
                Some((p, lock)) => Workload::probe(&p, lock, a.kind.is_read_write(), stream),
                None => Workload::new(c, a.kind.is_read_write(), stream),
            };
            let client = match scenario.clients.worker {
                Some(_) => Client::worker(
                    WorkerLock::new(a.ttl_ms, rng, scenario.clients.worker_hold_from),
                    workload,
                ),
                None => Client::new(algorithm::build(a, scenario.nodes, rng), workload),
            }
            .with_extensions(a.max_extensions, a.extend_before_us)
            .with_resource_writes(c.resource_writes && probe.is_none());
            if a.kind.is_read_write() {
                client.keep_wanting()
            } else {
                client
            }
        })
        .collect()
}
