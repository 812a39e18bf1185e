//! `lockstorm bench`: what a Redlock acquire and release cost on real local nodes.
//!
//! Starts `nodes` redis-servers (no persistence), connects once to each (one multiplexed
//! connection per node, no proxy), and measures in the same run: a single `SET NX PX`
//! round trip to one node, then Redlock acquire and acquire+release with parallel and
//! with sequential fan-out. Redlock here is the same sans-IO state machine the scenarios
//! run, driven by a minimal loop. Results are p50/p99 in microseconds and their ratio to
//! the single round trip's p50. Not a timed test: numbers depend on the machine.

use super::server::{self, Server};
use super::workdir::WorkDir;
use super::{wire, RealError};
use crate::algorithm::{self, AlgorithmConfig, Fanout, LockAlgorithm, Now, Output};
use crate::command::LockId;
use crate::fault::Persistence;
use redis::aio::MultiplexedConnection;
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// One measured series.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Series {
    pub name: String,
    pub samples: usize,
    pub p50_us: u64,
    pub p99_us: u64,
}

fn series(name: &str, mut us: Vec<u64>) -> Series {
    us.sort_unstable();
    let at = |q: f64| us[((us.len() - 1) as f64 * q).round() as usize];
    Series {
        name: name.into(),
        samples: us.len(),
        p50_us: at(0.5),
        p99_us: at(0.99),
    }
}

/// Runs the benchmark: `iterations` samples per series on `nodes` local nodes.
pub fn run(nodes: usize, iterations: usize) -> Result<Vec<Series>, RealError> {
    let binary = server::binary()?;
    let dir = WorkDir::create("lockstorm-bench-", false)?;
    let result = run_in(&binary, dir.path(), nodes, iterations);
    dir.close(&result);
    result
}

fn run_in(binary: &Path, tmp: &Path, nodes: usize, iterations: usize) -> Result<Vec<Series>, RealError> {
    let mut servers = Vec::with_capacity(nodes);
    for i in 0..nodes {
        let dir = tmp.join(format!("node{i}"));
        std::fs::create_dir_all(&dir).map_err(|e| RealError::Io(format!("create {}", dir.display()), e))?;
        servers.push(Server::start(i, binary, dir, Persistence::None, None)?);
    }
    let addrs: Vec<_> = servers.iter().map(Server::addr).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| RealError::Io("start the tokio runtime".into(), e))?;
    let out = runtime.block_on(async {
        let mut conns = Vec::with_capacity(nodes);
        for (i, a) in addrs.iter().enumerate() {
            let err = |e: redis::RedisError| RealError::Node {
                node: i,
                addr: a.to_string(),
                message: e.to_string(),
            };
            let client = redis::Client::open(format!("redis://{a}/")).map_err(err)?;
            let mut c = client.get_multiplexed_async_connection().await.map_err(err)?;
            wire::load_scripts(&mut c).await.map_err(err)?;
            conns.push(c);
        }
        Ok::<_, RealError>(measure(&conns, iterations).await)
    });
    drop(runtime);
    drop(servers);
    out
}

/// Takes every series once per iteration, interleaved, so that load from the rest of
/// the machine falls on all series alike and the ratios stay meaningful.
async fn measure(conns: &[MultiplexedConnection], iterations: usize) -> Vec<Series> {
    // The scenario defaults, with a long ttl and timeout and no retries.
    let config = |fanout: Fanout| -> AlgorithmConfig {
        let text = format!(
            "nodes = {}\n[algorithm]\nttl = \"10s\"\nretry_count = 0\nrequest_timeout = \"1s\"\nfanout = \"{}\"\n",
            conns.len(),
            format!("{fanout:?}").to_lowercase()
        );
        crate::scenario::Scenario::parse(&text, "bench", "bench")
            .expect("the bench configuration is valid")
            .algorithm
    };
    let mut locks = [Fanout::Parallel, Fanout::Sequential]
        .map(|f| algorithm::build(&config(f), conns.len(), crate::rng::split(1, "bench", f as u64)));
    // Warm up connections and the servers' code paths.
    set_nx(&conns[0], 0).await;
    let mut us: Vec<Vec<u64>> = (0..6).map(|_| Vec::with_capacity(iterations)).collect();
    for i in 0..iterations {
        let t = Instant::now();
        set_nx(&conns[0], 2 * i as u64 + 1).await;
        us[0].push(t.elapsed().as_micros() as u64);

        // The floor for any parallel fan-out on this machine: the same SET NX PX sent
        // to every node at once, awaited together, without the lock algorithm.
        let t = Instant::now();
        let tasks: Vec<_> = conns
            .iter()
            .map(|c| {
                let c = c.clone();
                tokio::spawn(async move { set_nx(&c, 2 * i as u64 + 2).await })
            })
            .collect();
        for task in tasks {
            let _ = task.await;
        }
        us[1].push(t.elapsed().as_micros() as u64);

        for (k, lock) in locks.iter_mut().enumerate() {
            let (acquire, total) = acquire_release(lock.as_mut(), conns).await;
            us[2 + 2 * k].push(acquire);
            us[3 + 2 * k].push(total);
        }
    }
    let names = [
        "single SET NX PX round trip".to_string(),
        format!("{} x SET NX PX at once (no algorithm)", conns.len()),
        "redlock parallel acquire".into(),
        "redlock parallel acquire+release".into(),
        "redlock sequential acquire".into(),
        "redlock sequential acquire+release".into(),
    ];
    names.iter().zip(us).map(|(n, u)| series(n, u)).collect()
}

async fn set_nx(conn: &MultiplexedConnection, i: u64) {
    let mut c = conn.clone();
    let _: redis::Value = redis::cmd("SET")
        .arg(format!("bench:{i}"))
        .arg("x")
        .arg("NX")
        .arg("PX")
        .arg(1_000)
        .query_async(&mut c)
        .await
        .unwrap_or(redis::Value::Nil);
}

/// One acquire then one release; returns (acquire µs, acquire+release µs). The release
/// is timed until every node answered its unlock.
async fn acquire_release(lock: &mut dyn LockAlgorithm, conns: &[MultiplexedConnection]) -> (u64, u64) {
    let start = Instant::now();
    let now = || {
        let us = start.elapsed().as_micros() as u64;
        Now {
            mono_us: us,
            wall_us: us,
        }
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut outs = Vec::new();
    lock.acquire(now(), LockId(0), algorithm::Mode::Exclusive, &mut outs);
    let mut acquired_us = None;
    let mut unlocks_pending = 0usize;
    let mut released = false;
    let mut timers: Vec<(u64, u64)> = Vec::new();
    loop {
        for o in outs.drain(..) {
            match o {
                Output::Send { node, req, cmd } => {
                    if released {
                        unlocks_pending += 1;
                    }
                    let mut c = conns[node].clone();
                    let tx = tx.clone();
                    tokio::spawn(async move {
                        let r = wire::to_redis(&cmd).query_async::<redis::Value>(&mut c).await;
                        let reply = r.map_or(crate::command::Reply::Error, |v| wire::from_redis(&v));
                        let _ = tx.send((req, reply));
                    });
                }
                Output::Timer { id, at_mono_us } => timers.push((at_mono_us, id)),
                Output::Acquired { .. } => acquired_us = Some(start.elapsed().as_micros() as u64),
                Output::NotAcquired { .. } => acquired_us = Some(start.elapsed().as_micros() as u64),
                Output::Released { .. } | Output::Extended { .. } | Output::NotExtended { .. } => {}
            }
        }
        if acquired_us.is_some() && !released {
            released = true;
            lock.release(now(), &mut outs);
            continue;
        }
        if released && unlocks_pending == 0 {
            break;
        }
        let next = timers.iter().map(|t| t.0).min().unwrap_or(u64::MAX / 4);
        let sleep = Duration::from_micros(next.saturating_sub(now().mono_us));
        tokio::select! {
            Some((req, reply)) = rx.recv() => {
                if released {
                    unlocks_pending -= 1;
                }
                lock.on_reply(now(), req, reply, &mut outs);
            }
            _ = tokio::time::sleep(sleep) => {
                let t = now().mono_us;
                let due: Vec<u64> = timers.iter().filter(|x| x.0 <= t).map(|x| x.1).collect();
                timers.retain(|x| x.0 > t);
                for id in due {
                    lock.on_timer(now(), id, &mut outs);
                }
            }
        }
    }
    (acquired_us.unwrap_or(0), start.elapsed().as_micros() as u64)
}
