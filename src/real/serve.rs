//! `lockstorm worker`: lockstorm's own lock algorithms behind the worker protocol.
//!
//! The built-in sans-IO state machine (the same one scenarios run in-process), driven
//! in real time by a small loop: read the hello from stdin, connect to the node
//! addresses it names (the client's proxies), answer `hello_ok`, then carry out each
//! request (node commands over one multiplexed connection per node, timers on the
//! process's monotonic clock, the wall clock from the system, so libfaketime reaches it)
//! and answer it on stdout. It is a worker like any other: lockstorm starts it with
//! `[clients] worker = ["lockstorm", "worker"]`, which lets the same scenario run
//! direct and through the protocol (the differential test) and measures what the
//! protocol costs (`lockstorm bench --protocol`). Logs go to stderr.

use super::driver::conn::{connection, request, Answer, Route, Slot};
use super::wire;
use crate::algorithm::{self, AlgorithmConfig, AlgorithmKind, LockAlgorithm, Mode, Now, Output};
use crate::command::LockId;
use crate::worker::protocol::{self, Capabilities, FromWorker, Hello, ToWorker};
use futures_util::StreamExt;
use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec};

/// Why `lockstorm worker` stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("stdin: {0}")]
    Input(String),
    #[error("the first message must be a hello, got: {0}")]
    NoHello(String),
    #[error("hello: {0}")]
    Hello(String),
    #[error("stdout: {0}")]
    Output(#[from] std::io::Error),
}

/// Serves the protocol on stdin/stdout until stdin closes.
pub fn serve() -> Result<(), ServeError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut lines = FramedRead::new(tokio::io::stdin(), LinesCodec::new_with_max_length(1 << 20));
        let first = match lines.next().await {
            Some(Ok(l)) => l,
            Some(Err(e)) => return Err(ServeError::Input(e.to_string())),
            None => return Ok(()),
        };
        let hello = match serde_json::from_str::<ToWorker>(&first) {
            Ok(ToWorker::Hello(h)) => h,
            _ => return Err(ServeError::NoHello(first)),
        };
        let mut w = Served::greet(&hello).await?;
        w.run(&mut lines).await
    })
}

/// The algorithm a hello asks for: lockstorm's exact configuration if it sent one,
/// else the documented fields over lockstorm's defaults.
fn config(hello: &Hello) -> Result<AlgorithmConfig, ServeError> {
    if let Some(c) = &hello.algorithm.config {
        return Ok(c.clone());
    }
    let a = &hello.algorithm;
    let mut c = crate::scenario::Scenario::parse("", "hello", "hello")
        .map_err(|e| ServeError::Hello(e.to_string()))?
        .algorithm;
    c.kind = a.kind;
    c.ttl_ms = hello.ttl_ms;
    c.quorum = a.quorum;
    c.retry_count = a.retry_count;
    c.drift_factor = a.drift_factor;
    c.request_timeout_us = a.request_timeout_ms * 1_000;
    c.fencing = a.fencing;
    let d = a.retry_delay_ms;
    c.retry_delay = match (d.min, d.mean) {
        (_, Some(mean)) => crate::rng::Dist::Exponential {
            mean_us: mean * 1_000,
            max_us: d.max * 1_000,
        },
        (min, None) => crate::rng::Dist::uniform(min.unwrap_or(0) * 1_000, d.max * 1_000),
    };
    Ok(c)
}

/// What the loop answers once the algorithm decides.
#[derive(Clone, Copy)]
struct Pending {
    id: u64,
    /// When the request came in, by the worker's monotonic clock: an `ok` says how long
    /// the call took (`took_ms`).
    since_us: u64,
}

/// Node 0's route on a Sentinel deployment: the sentinels, asked for the master at each
/// connection as the built-in clients ask them, from the IP lockstorm gave this client
/// (its source shim's variable; 127.0.0.1, which no cut reaches, without it).
fn sentinel_route(s: &protocol::HelloSentinel) -> Result<Route, ServeError> {
    let sentinels = addresses(&s.sentinels, "sentinel")?;
    Ok(Route::Sentinel {
        sentinels: sentinels.into(),
        name: s.master.as_str().into(),
        source: source_ip(),
    })
}

/// Node 0's route on a Redis Cluster: the master of the lock's slot, from the slot map the
/// seed nodes give, asked from the IP lockstorm gave this client as for a Sentinel
/// deployment. The slot is the one the first lock's key hashes to, as a seed computes it.
async fn cluster_route(c: &protocol::HelloCluster, lock: &str) -> Result<Route, ServeError> {
    let seeds = addresses(&c.nodes, "cluster node")?;
    let mut ask = redis::cmd("CLUSTER");
    ask.arg("KEYSLOT").arg(lock);
    let mut slot = None;
    for &seed in &seeds {
        let reply =
            super::deployment::observe::ask(seed, &ask, super::deployment::observe::ASK_TIMEOUT).await;
        if let Some(s) = reply.ok().and_then(|v| redis::from_redis_value::<u16>(v).ok()) {
            slot = Some(s);
            break;
        }
    }
    let slot = slot.ok_or_else(|| ServeError::Hello("no cluster node answers CLUSTER KEYSLOT".into()))?;
    Ok(Route::Cluster {
        seeds: seeds.into(),
        slot,
        source: source_ip(),
    })
}

/// The hello's `what` addresses, at least one, each `host:port`.
fn addresses(list: &[String], what: &str) -> Result<Vec<SocketAddr>, ServeError> {
    if list.is_empty() {
        return Err(ServeError::Hello(format!("no {what} address")));
    }
    list.iter()
        .map(|a| {
            a.parse()
                .map_err(|_| ServeError::Hello(format!("{a:?} is not a {what} address")))
        })
        .collect()
}

/// The IP lockstorm gave this client (its source shim's variable); 127.0.0.1, which no cut
/// reaches, without it.
fn source_ip() -> std::net::Ipv4Addr {
    std::env::var(super::deployment::source::SOURCE_IP_VAR)
        .ok()
        .and_then(|ip| ip.parse().ok())
        .unwrap_or(std::net::Ipv4Addr::LOCALHOST)
}

struct Served {
    algorithm: Box<dyn LockAlgorithm>,
    slots: Vec<Slot>,
    /// Where each node's requests go: its address, or on a Sentinel deployment (the
    /// hello's `sentinel`) the master its sentinels name.
    routes: Vec<Route>,
    lifetime: Duration,
    start: Instant,
    timers: BTreeMap<(u64, u64), u64>,
    seq: u64,
    pending: Option<Pending>,
    /// The fencing token of the current hold, echoed with writes.
    fence: Option<u64>,
    tx: mpsc::UnboundedSender<Answer>,
    rx: mpsc::UnboundedReceiver<Answer>,
    out: Vec<Output>,
}

impl Served {
    async fn greet(hello: &Hello) -> Result<Served, ServeError> {
        let config = config(hello)?;
        let addrs: Vec<SocketAddr> = hello
            .nodes
            .iter()
            .map(|a| {
                a.parse()
                    .map_err(|_| ServeError::Hello(format!("{a:?} is not a node address")))
            })
            .collect::<Result<_, _>>()?;
        let nodes = match config.kind {
            AlgorithmKind::Single => 1,
            _ => addrs.len(),
        };
        if addrs.len() < nodes || nodes == 0 {
            return Err(ServeError::Hello("no node address".into()));
        }
        let rng = crate::rng::split(hello.seed, "algorithm", hello.client as u64);
        let mut routes: Vec<Route> = addrs.iter().map(|&a| Route::Direct(a)).collect();
        if let Some(s) = &hello.sentinel {
            routes[0] = sentinel_route(s)?;
        }
        if let Some(c) = &hello.cluster {
            let lock = hello.locks.first().map_or("L0", String::as_str);
            routes[0] = cluster_route(c, lock).await?;
        }
        let slots: Vec<Slot> = addrs.iter().map(|_| Slot::default()).collect();
        for (slot, route) in slots.iter().zip(&routes) {
            // A node down at the start is simply not connected yet; requests retry.
            let _ = connection(slot, route, Duration::from_secs(5)).await;
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let modes = if config.kind.is_read_write() {
            vec![Mode::Read, Mode::Write]
        } else {
            vec![Mode::Exclusive]
        };
        crate::errln!(
            "lockstorm worker: client {} of {}, {:?} on {} node(s), ttl {} ms",
            hello.client,
            hello.clients,
            config.kind,
            nodes,
            config.ttl_ms
        );
        let served = Served {
            algorithm: algorithm::build(&config, nodes, rng),
            slots,
            routes,
            lifetime: Duration::from_micros(config.request_timeout_us * 20).max(Duration::from_secs(1)),
            start: Instant::now(),
            timers: BTreeMap::new(),
            seq: 0,
            pending: None,
            fence: None,
            tx,
            rx,
            out: Vec::new(),
        };
        answer(&FromWorker::HelloOk {
            in_reply_to: hello.id,
            library: "lockstorm".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            capabilities: Capabilities {
                extend: true,
                validity: true,
                fencing: config.fencing,
                modes,
            },
        })?;
        Ok(served)
    }

    fn now(&self) -> Now {
        Now {
            mono_us: self.start.elapsed().as_micros() as u64,
            wall_us: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as u64),
        }
    }

    async fn run(&mut self, lines: &mut FramedRead<tokio::io::Stdin, LinesCodec>) -> Result<(), ServeError> {
        loop {
            let next_us = self.timers.keys().next().map(|k| k.0);
            let sleep = next_us.map_or(Duration::from_secs(3600), |at| {
                Duration::from_micros(at.saturating_sub(self.now().mono_us))
            });
            tokio::select! {
                biased;
                Some(r) = self.rx.recv() => {
                    let now = self.now();
                    self.algorithm.on_reply(now, r.req, r.reply, &mut self.out);
                }
                line = lines.next() => match line {
                    None => return Ok(()),
                    Some(Err(e)) => return Err(ServeError::Input(e.to_string())),
                    Some(Ok(l)) => self.request(&l)?,
                },
                _ = tokio::time::sleep(sleep), if next_us.is_some() => {
                    let t = self.now().mono_us;
                    while let Some(entry) = self.timers.first_entry() {
                        if entry.key().0 > t {
                            break;
                        }
                        let id = entry.remove();
                        let now = self.now();
                        self.algorithm.on_timer(now, id, &mut self.out);
                    }
                }
            }
            self.carry_out()?;
        }
    }

    /// One request line from lockstorm.
    fn request(&mut self, line: &str) -> Result<(), ServeError> {
        let message = match serde_json::from_str::<ToWorker>(line) {
            Ok(m) => m,
            Err(e) => {
                crate::errln!("lockstorm worker: ignoring a line that is not a request ({e}): {line}");
                return Ok(());
            }
        };
        let now = self.now();
        let lock_id = |lock: &str| lock.strip_prefix('L').and_then(|n| n.parse().ok()).map(LockId);
        match message {
            ToWorker::Hello(h) => {
                crate::errln!("lockstorm worker: a second hello (id {}) is ignored", h.id);
            }
            ToWorker::Acquire { id, lock, mode } => {
                let Some(l) = lock_id(&lock) else {
                    return fail(
                        id,
                        &format!("unknown lock name {lock:?} (lockstorm's are L0, L1, ...)"),
                    );
                };
                self.pending = Some(Pending {
                    id,
                    since_us: now.mono_us,
                });
                self.algorithm.acquire(now, l, mode, &mut self.out);
            }
            ToWorker::Release { id, .. } => {
                self.pending = Some(Pending {
                    id,
                    since_us: now.mono_us,
                });
                self.fence = None;
                self.algorithm.release(now, &mut self.out);
            }
            ToWorker::Extend { id, .. } => {
                self.pending = Some(Pending {
                    id,
                    since_us: now.mono_us,
                });
                self.algorithm.extend(now, &mut self.out);
            }
            ToWorker::Write { id, value, .. } => answer(&FromWorker::Ok {
                in_reply_to: id,
                validity_ms: None,
                expires: None,
                token: None,
                fence: self.fence,
                value: Some(value),
                took_ms: None,
                nodes: None,
            })?,
        }
        Ok(())
    }

    /// Carries out the algorithm's outputs: sends, timers, and answers to lockstorm.
    fn carry_out(&mut self) -> Result<(), ServeError> {
        let now = self.now();
        for o in std::mem::take(&mut self.out) {
            let validity = |until_us: u64| Some((until_us.saturating_sub(now.mono_us) / 1_000) as f64);
            // The nodes an acquisition or extension holds: the protocol's `nodes`.
            let mut held_on: Option<Vec<usize>> = None;
            let reply = match o {
                Output::Send { node, req, cmd } => {
                    let reply = Answer {
                        client: 0,
                        req,
                        reply: crate::command::Reply::Error,
                        sent: None,
                        served_by: None,
                    };
                    tokio::spawn(request(
                        self.slots[node].clone(),
                        self.routes[node].clone(),
                        wire::to_redis(&cmd),
                        self.lifetime,
                        self.tx.clone(),
                        reply,
                    ));
                    None
                }
                Output::Timer { id, at_mono_us } => {
                    self.seq += 1;
                    self.timers.insert((at_mono_us, self.seq), id);
                    None
                }
                Output::Acquired {
                    token,
                    valid_until_mono_us,
                    fence,
                    nodes,
                    ..
                } => {
                    self.fence = fence;
                    held_on = (!nodes.is_empty()).then(|| nodes.iter().collect());
                    Some((
                        true,
                        validity(valid_until_mono_us),
                        Some(token.to_string()),
                        fence,
                    ))
                }
                Output::NotAcquired {
                    unknown: true, token, ..
                } => {
                    self.settle(|id| FromWorker::Error {
                        in_reply_to: id,
                        message: Some("some node never answered the last attempt".into()),
                        token: Some(token.to_string()),
                    })?;
                    None
                }
                Output::NotAcquired { token, .. } => Some((false, None, Some(token.to_string()), None)),
                Output::Released { .. } => Some((true, None, None, None)),
                Output::Extended {
                    valid_until_mono_us,
                    nodes,
                    ..
                } => {
                    held_on = (!nodes.is_empty()).then(|| nodes.iter().collect());
                    Some((true, validity(valid_until_mono_us), None, None))
                }
                Output::NotExtended { .. } => Some((false, None, None, None)),
            };
            if let Some((ok, validity_ms, token, fence)) = reply {
                let took_ms = self
                    .pending
                    .as_ref()
                    .map(|p| now.mono_us.saturating_sub(p.since_us) as f64 / 1_000.0);
                self.settle(|id| match ok {
                    true => FromWorker::Ok {
                        in_reply_to: id,
                        validity_ms,
                        expires: None,
                        token,
                        fence,
                        value: None,
                        took_ms,
                        nodes: held_on,
                    },
                    false => FromWorker::Fail {
                        in_reply_to: id,
                        reason: None,
                        token,
                    },
                })?;
            }
        }
        Ok(())
    }

    /// Answers the pending request, if there is one.
    fn settle(&mut self, message: impl FnOnce(u64) -> FromWorker) -> Result<(), ServeError> {
        match self.pending.take() {
            Some(p) => answer(&message(p.id)),
            None => Ok(()),
        }
    }
}

fn fail(id: u64, reason: &str) -> Result<(), ServeError> {
    answer(&FromWorker::Fail {
        in_reply_to: id,
        reason: Some(reason.into()),
        token: None,
    })
}

/// Writes one message to stdout, flushed (lockstorm waits for it).
fn answer(message: &FromWorker) -> Result<(), ServeError> {
    let mut out = std::io::stdout().lock();
    out.write_all(protocol::to_line(message).as_bytes())?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}
