//! The real driver's worker clients: their processes started and greeted before the
//! clock starts, each client's request written to its worker with a wire id, every
//! answer matched to the one open request, and every breach of the protocol turned into
//! an error that names the client, the worker command and the offending line.
//!
//! A breach stops the run: the client's open operation is recorded as an unknown
//! outcome (`info`), the history so far is kept ([`super::super::WorkerFailure`]) and
//! every process is stopped. A request that goes unanswered for the scenario's
//! `worker_deadline` (time the worker spent paused by a fault not counted) is a breach
//! too; a worker that is merely slow is not.
//!
//! An unsolicited `lost` (protocol version 2) ends the client's hold of that lock: it is
//! recorded as a `lost` event and the client gives up the hold. The `token` of an `ok`
//! goes into the history as the event's `worker_token`, beside lockstorm's own.

use super::{Driver, Ev};
use crate::real::deployment::{source::SourceShim, DeploymentHandle, Entry};
use crate::real::faketime::{Faketime, FaketimeLibs};
use crate::real::proxy::Proxy;
use crate::real::RealError;
use crate::scenario::Scenario;
use crate::worker::process::{self, FromProcess, WorkerEvent, WorkerLogs, WorkerProcess};
use crate::worker::protocol::{
    self, Capabilities, FromWorker, Hello, HelloAlgorithm, HelloCluster, HelloSentinel, ToWorker,
};
use crate::worker::{AnswerKind, Answered, Request, WorkerSpec};
use std::time::Duration;

/// How often an open request's worker is looked at for having exited ([`Driver::alive`]).
const ALIVE_POLL_US: u64 = 250_000;
use tokio::sync::mpsc;

/// How long every worker together has to answer the hello (imports, connections).
const HELLO_TIMEOUT: Duration = Duration::from_secs(30);

/// A request written to a worker and not answered yet.
struct Open {
    id: u64,
    request: Request,
    /// When it was written to the worker.
    sent_us: u64,
    /// When the worker is out of time (moved on by the time it spends paused).
    deadline_us: u64,
}

/// The worker processes of a run, one per client.
pub(super) struct Workers {
    spec: WorkerSpec,
    procs: Vec<WorkerProcess>,
    open: Vec<Option<Open>>,
    next_id: Vec<u64>,
    /// Each worker's clock, when libfaketime reaches it.
    clocks: Vec<Option<Faketime>>,
    /// The library's token of the `ok` being handled, for the event it makes.
    token: Option<String>,
    /// The library's message of the `error` being handled, for the `info` it makes.
    error: Option<String>,
    pub(super) logs: WorkerLogs,
    /// Per client, per node: when its library's last bytes left for the node (its
    /// proxies say), for the hold of an answer without a validity.
    last_sent: Vec<std::collections::BTreeMap<usize, u64>>,
}

impl Workers {
    /// Client `c`'s library sent bytes to node `node` at `t`.
    pub(super) fn sent(&mut self, c: usize, node: usize, t: u64) {
        if let Some(nodes) = self.last_sent.get_mut(c) {
            nodes.insert(node, t);
        }
    }

    /// The earliest, over the nodes client `c`'s library sent to since `since`, of the
    /// last bytes it sent each: no key an answer to a request sent at `since` stands on
    /// was set before.
    fn keys_set_after(&self, c: usize, since: u64) -> Option<u64> {
        self.last_sent
            .get(c)?
            .values()
            .copied()
            .filter(|&t| t >= since)
            .min()
    }

    /// Starts every client's worker, sends each its hello and waits for every
    /// `hello_ok`. `proxies[n].addr(c)` is client `c`'s address of node `n`; on a
    /// Sentinel deployment (`sentinel`) a worker is told the sentinels and the first
    /// master instead, and connects to them from its own IP (the shim, written into
    /// `dir`).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn start(
        scenario: &Scenario,
        seed: u64,
        spec: &WorkerSpec,
        proxies: &[Proxy],
        sentinel: Option<&DeploymentHandle>,
        dir: &std::path::Path,
        faketime_dir: Option<&std::path::Path>,
        events: mpsc::UnboundedSender<WorkerEvent>,
        rx: &mut mpsc::UnboundedReceiver<WorkerEvent>,
    ) -> Result<Workers, RealError> {
        let n = scenario.clients.total();
        let logs = WorkerLogs::new(n).map_err(|e| RealError::Io("create the worker log folder".into(), e))?;
        if let Some(dir) = faketime_dir {
            std::fs::create_dir_all(dir)
                .map_err(|e| RealError::Io(format!("create {}", dir.display()), e))?;
        }
        let libs = faketime_dir.map(FaketimeLibs::build).transpose()?;
        let source = sentinel.map(|_| SourceShim::write(dir)).transpose()?;
        let mut w = Workers {
            spec: spec.clone(),
            procs: Vec::with_capacity(n),
            open: (0..n).map(|_| None).collect(),
            next_id: vec![1; n],
            clocks: Vec::with_capacity(n),
            token: None,
            error: None,
            logs,
            last_sent: vec![Default::default(); n],
        };
        for c in 0..n {
            let mut clock = match (&libs, faketime_dir) {
                (Some(libs), Some(dir)) => {
                    let d = dir.join(format!("client{c}"));
                    std::fs::create_dir_all(&d)
                        .map_err(|e| RealError::Io(format!("create {}", d.display()), e))?;
                    Some(libs.node(&d)?)
                }
                _ => None,
            };
            let prepare = |cmd: &mut std::process::Command| {
                if let Some(ft) = &mut clock {
                    ft.apply(cmd);
                }
                if let (Some(shim), Some(s)) = (&source, sentinel) {
                    shim.apply(cmd, s.client_ip(c));
                }
            };
            let p = WorkerProcess::start(spec, c, &w.logs.path(c), prepare, events.clone())
                .map_err(|e| RealError::Worker(e.to_string()))?;
            w.procs.push(p);
            w.clocks.push(clock);
            let hello = ToWorker::Hello(Box::new(Hello {
                id: 0,
                protocol: protocol::VERSION,
                client: c,
                clients: n,
                nodes: match sentinel {
                    Some(s) => vec![s.first_master.to_string()],
                    None => proxies.iter().map(|p| p.addr(c).to_string()).collect(),
                },
                locks: (0..scenario.clients.locks.min(1_000))
                    .map(crate::command::LockId)
                    .chain(scenario.clients.probe_lock())
                    .map(|l| l.to_string())
                    .collect(),
                ttl_ms: scenario.algorithm.ttl_ms,
                seed,
                algorithm: HelloAlgorithm::from_config(&scenario.algorithm),
                sentinel: match sentinel.map(|s| &s.entry) {
                    Some(Entry::Sentinel { sentinels, name }) => Some(HelloSentinel {
                        master: name.clone(),
                        sentinels: sentinels.iter().map(|a| a.to_string()).collect(),
                    }),
                    _ => None,
                },
                cluster: match sentinel.map(|s| &s.entry) {
                    Some(Entry::Cluster { seeds, .. }) => Some(HelloCluster {
                        nodes: seeds.iter().map(|a| a.to_string()).collect(),
                    }),
                    _ => None,
                },
            }));
            if let Err(e) = w.procs[c].send(&protocol::to_line(&hello)) {
                return Err(RealError::Worker(w.breach(
                    c,
                    &format!("cannot send the hello ({e})"),
                    None,
                )));
            }
        }
        let deadline = tokio::time::Instant::now() + HELLO_TIMEOUT;
        let mut greeted = vec![false; n];
        while let Some(c) = greeted.iter().position(|g| !g) {
            let Ok(Some(ev)) = tokio::time::timeout_at(deadline, rx.recv()).await else {
                let what = format!("no hello_ok within {}s", HELLO_TIMEOUT.as_secs());
                return Err(RealError::Worker(w.breach(c, &what, None)));
            };
            let c = ev.client;
            let line = match ev.what {
                FromProcess::Line(line) => line,
                FromProcess::Garbage(what) => return Err(RealError::Worker(w.breach(c, &what, None))),
                FromProcess::Closed => {
                    let what = w.exited(c, "before answering the hello");
                    return Err(RealError::Worker(w.breach(c, &what, None)));
                }
            };
            match serde_json::from_str::<FromWorker>(&line) {
                Ok(FromWorker::HelloOk {
                    in_reply_to: 0,
                    library,
                    version,
                    capabilities,
                }) => {
                    if let Err(why) = fits(scenario, &capabilities) {
                        return Err(RealError::Worker(w.breach(c, &why, Some(&line))));
                    }
                    if w.logs.library.is_none() {
                        w.logs.library = Some((library, version));
                    }
                    greeted[c] = true;
                }
                // The worker's own refusal (a protocol version it does not speak, a
                // library that does not import), in its words.
                Ok(FromWorker::Error {
                    in_reply_to: 0,
                    message,
                    ..
                }) => {
                    let what = format!(
                        "refused the hello: {}",
                        message.as_deref().unwrap_or("(no message)")
                    );
                    return Err(RealError::Worker(w.breach(c, &what, None)));
                }
                // A `lost` may come at any time (docs/worker-protocol.md), also before or
                // right after the hello_ok; nothing is held before the first request, so
                // it changes nothing.
                Ok(FromWorker::Lost { .. }) => {}
                Ok(_) => {
                    let what = "answered the hello with something other than hello_ok to id 0";
                    return Err(RealError::Worker(w.breach(c, what, Some(&line))));
                }
                Err(e) => {
                    let what = format!("not a protocol message ({e})");
                    return Err(RealError::Worker(w.breach(c, &what, Some(&line))));
                }
            }
        }
        Ok(w)
    }

    /// The error text for client `c`: who, what, the offending line, its stderr's tail.
    fn breach(&self, c: usize, what: &str, line: Option<&str>) -> String {
        let mut m = format!("client {c} (worker `{}`): {what}", self.spec.command_line());
        if let Some(l) = line {
            const SHOWN: usize = 300;
            let cut: String = l.chars().take(SHOWN).collect();
            let more = if l.chars().count() > SHOWN { "..." } else { "" };
            m.push_str(&format!(": {cut:?}{more}"));
        }
        let tail = self.procs.get(c).map(|p| p.log_tail(3)).unwrap_or_default();
        if !tail.is_empty() {
            m.push_str(&format!(" (its stderr ends: {tail})"));
        }
        m
    }

    /// "exited with status N <when>", or "closed its stdout <when>".
    fn exited(&mut self, c: usize, when: &str) -> String {
        match self.procs[c].exit_status(process::EXIT_GRACE) {
            Some(status) => format!("exited ({status}) {when}"),
            None => format!("closed its stdout {when}"),
        }
    }

    pub(super) fn pause(&mut self, c: usize) {
        self.procs[c].pause();
    }

    /// Resumes client `c`'s worker after `paused_us`; its deadline moves on by as much.
    pub(super) fn resume(&mut self, c: usize, paused_us: u64) -> Option<(u64, u64)> {
        self.procs[c].resume();
        let open = self.open[c].as_mut()?;
        open.deadline_us += paused_us;
        Some((open.id, open.deadline_us))
    }

    /// What the history's meta line says of the library.
    pub(super) fn meta(&self) -> crate::history::WorkerMeta {
        let (library, version) = self.logs.library.clone().unwrap_or_default();
        crate::history::WorkerMeta {
            library,
            version,
            command: self.spec.argv.clone(),
        }
    }

    pub(super) fn clock(&mut self, c: usize) -> Option<&mut Faketime> {
        self.clocks[c].as_mut()
    }

    /// Closes every stdin, waits a moment, kills the rest.
    pub(super) fn shutdown(&mut self) {
        process::shutdown(&mut self.procs);
    }
}

/// Whether a worker's capabilities cover what the scenario will ask of it.
fn fits(scenario: &Scenario, caps: &Capabilities) -> Result<(), String> {
    use crate::algorithm::Mode;
    let modes: &[Mode] = if scenario.algorithm.kind.is_read_write() {
        &[Mode::Read, Mode::Write]
    } else {
        &[Mode::Exclusive]
    };
    for m in modes {
        if !caps.modes.contains(m) {
            return Err(format!(
                "the scenario takes {m:?} locks, which the worker does not list in capabilities.modes"
            ));
        }
    }
    if scenario.algorithm.max_extensions > 0 && !caps.extend {
        return Err("the scenario extends locks (algorithm.max_extensions), which the worker cannot (capabilities.extend is false)".into());
    }
    Ok(())
}

impl Driver<'_> {
    /// Writes client `c`'s request to its worker and starts its deadline.
    pub(super) fn call(&mut self, t: u64, c: usize, request: Request) {
        let Some(w) = &mut self.workers else { return };
        let id = w.next_id[c];
        w.next_id[c] += 1;
        let line = protocol::to_line(&request.to_message(id, c));
        let deadline_us = t + w.spec.deadline_us;
        w.open[c] = Some(Open {
            id,
            request,
            sent_us: t,
            deadline_us,
        });
        if let Err(e) = w.procs[c].send(&line) {
            let what = w.exited(c, &format!("(cannot write the {} request: {e})", request.name()));
            self.fail(t, c, &what, None);
            return;
        }
        self.schedule(deadline_us, Ev::WorkerDeadline { client: c, id });
        self.schedule(t + ALIVE_POLL_US, Ev::WorkerAlive { client: c, id });
    }

    /// While request `id` of client `c` is open, its worker is looked at every
    /// [`ALIVE_POLL_US`]: one that has exited stops the run now, as the worker error it
    /// is, though a process it started still holds its stdout (which would otherwise wait
    /// out the request's deadline, and read as the lock's failure to answer).
    pub(super) fn alive(&mut self, t: u64, c: usize, id: u64) {
        let Some(w) = &mut self.workers else { return };
        if w.open[c].as_ref().is_none_or(|o| o.id != id) {
            return;
        }
        match w.procs[c].exit_status(Duration::ZERO) {
            Some(status) => {
                let what = format!(
                    "exited ({status}) during the run, with its {} request (id {id}) open",
                    w.open[c].as_ref().map_or("open", |o| o.request.name())
                );
                self.fail(t, c, &what, None);
            }
            None => self.schedule(t + ALIVE_POLL_US, Ev::WorkerAlive { client: c, id }),
        }
    }

    /// A request's deadline came: still unanswered and not paused, the run stops.
    pub(super) fn deadline(&mut self, t: u64, c: usize, id: u64) {
        let Some(w) = &self.workers else { return };
        match &w.open[c] {
            Some(open) if open.id == id && open.deadline_us <= t && !self.pauses.is_paused(c) => {
                let request = open.request;
                let what = crate::real::server::with_conntrack(format!(
                    "no answer to its {} request (id {id}) within {}",
                    request.name(),
                    crate::scenario::Dur(w.spec.deadline_us)
                ));
                self.fail(t, c, &what, None);
            }
            _ => {}
        }
    }

    /// Something came from a worker's stdout.
    /// A message of a worker, handled at `t`, which came in at `received_us` (earlier
    /// when the client's pause held it back: an answer counts from when the library
    /// gave it, as its caller's hold does).
    pub(super) fn on_worker(&mut self, t: u64, ev: WorkerEvent, received_us: u64) {
        let c = ev.client;
        let Some(w) = &mut self.workers else { return };
        let line = match ev.what {
            FromProcess::Line(line) => line,
            FromProcess::Garbage(what) => return self.fail(t, c, &what, None),
            FromProcess::Closed => {
                let what = w.exited(c, "during the run");
                return self.fail(t, c, &what, None);
            }
        };
        let message = match serde_json::from_str::<FromWorker>(&line) {
            Ok(m) => m,
            Err(e) => return self.fail(t, c, &format!("not a protocol message ({e})"), Some(&line)),
        };
        let Some(id) = message.in_reply_to() else {
            return self.on_lost(t, c, &message, &line);
        };
        let Some(open) = w.open[c].take_if(|o| o.id == id) else {
            return self.fail(
                t,
                c,
                &format!("answered id {id}, which it was not asked"),
                Some(&line),
            );
        };
        let keys_after = w.keys_set_after(c, open.sent_us);
        let mut expires_now = true;
        let mut took = None;
        let mut held_on = crate::algorithm::NodeSet::default();
        let (kind, validity_ms, fence) = match message {
            FromWorker::Ok {
                validity_ms,
                expires,
                fence,
                value,
                token,
                took_ms,
                nodes,
                ..
            } => {
                took = took_ms;
                for n in nodes.unwrap_or_default() {
                    if n >= self.scenario.nodes {
                        let what = format!(
                            "named node {n} in its ok, but the hello gave it {} nodes (indices from 0)",
                            self.scenario.nodes
                        );
                        return self.fail(t, c, &what, Some(&line));
                    }
                    held_on.insert(n);
                }
                if let Request::Write { seq, .. } = open.request {
                    let expected = protocol::write_value(c, seq);
                    if value.as_deref() != Some(expected.as_str()) {
                        let what = format!("answered the write of {expected:?} with another value");
                        return self.fail(t, c, &what, Some(&line));
                    }
                }
                expires_now = expires.unwrap_or(true);
                w.token = token;
                (AnswerKind::Ok, validity_ms, fence)
            }
            FromWorker::Fail { token, .. } => {
                w.token = token;
                (AnswerKind::Fail, None, None)
            }
            FromWorker::Error { message, token, .. } => {
                w.error = message.clone();
                w.token = token;
                (AnswerKind::Error, None, None)
            }
            FromWorker::HelloOk { .. } => {
                return self.fail(t, c, "answered a request with hello_ok", Some(&line));
            }
            FromWorker::Lost { .. } => unreachable!("a lost answers no request"),
        };
        let answer = Answered {
            kind,
            validity_ms,
            expires: expires_now,
            fence,
            took_ms: took,
            nodes: held_on,
            last_sent_mono_us: keys_after.map(|k| self.now(c, k).mono_us),
        };
        let now = self.now(c, received_us.min(t));
        self.clients[c].on_answer(now, answer, &mut self.out);
        self.apply(t, c);
        if let Some(w) = &mut self.workers {
            w.token = None;
            w.error = None;
        }
    }

    /// An unsolicited `lost`: client `c`'s library no longer holds the lock. If the
    /// client holds it, the hold ends here (a `lost` event) and the client gives it up.
    fn on_lost(&mut self, t: u64, c: usize, message: &FromWorker, line: &str) {
        let FromWorker::Lost { lock: name, .. } = message else {
            return;
        };
        let lock = name
            .strip_prefix('L')
            .and_then(|n| n.parse::<u32>().ok())
            .filter(|&n| {
                // The hello's locks: the workload's, and the probe's after them.
                let locks = self.scenario.clients.locks + u32::from(self.scenario.clients.probe.is_some());
                n < locks && crate::command::LockId(n).to_string() == *name
            });
        let Some(lock) = lock.map(crate::command::LockId) else {
            let what = format!("reported lock {name:?} lost, which is not one of the hello's locks");
            return self.fail(t, c, &what, Some(line));
        };
        let now = self.now(c, t);
        if let Some(token) = self.clients[c].on_lost(now, lock, &mut self.out) {
            self.history
                .push(crate::history::Event::Lost(crate::history::Lost {
                    t_us: t,
                    client: c,
                    lock: name.as_str().into(),
                    token: Some(token.into()),
                }));
        }
        self.apply(t, c);
    }

    /// Puts the library's token of the `ok` being handled on its history event, and
    /// the library's message of an `error` on the `info` it makes.
    pub(super) fn worker_token(&mut self, event: &mut crate::history::Event) {
        use crate::history::Event;
        match (&mut self.workers, event) {
            (Some(w), Event::Ok(op)) if op.op != crate::history::OpKind::Release => {
                op.worker_token = w.token.take();
            }
            (Some(w), Event::Fail(op)) if op.op == crate::history::OpKind::Acquire => {
                op.worker_token = w.token.take();
            }
            (Some(w), Event::Info(op)) => {
                op.error = w.error.take();
                if op.op == crate::history::OpKind::Acquire {
                    op.worker_token = w.token.take();
                }
            }
            _ => {}
        }
    }

    /// Stops the run for a breach by client `c`'s worker, recording its open operation
    /// as an unknown outcome. The first breach is the one reported.
    pub(super) fn fail(&mut self, t: u64, c: usize, what: &str, line: Option<&str>) {
        if self.failure.is_some() {
            return;
        }
        let Some(w) = &mut self.workers else { return };
        w.open[c] = None;
        self.failure = Some(w.breach(c, what, line));
        if let Some(r) = self.clients[c].unknown_outcome() {
            self.record(t, c, r);
        }
    }
}
