//! scenarios/partition.toml's workload on turmoil 0.7: 5 nodes, 20 Redlock clients on
//! 2 locks, random cuts between clients and nodes. Prints one JSON line: lock
//! operations (acquire and release invocations, as lockstorm counts them) simulated per
//! wall second, the median of `--rounds` (default 3) runs of `--secs` (default 60)
//! virtual seconds, and what each run counted.
//!
//! As the scenario says: ttl 2 s, drift factor 0.01, 3 retries after 0–100 ms,
//! parallel fan-out with a 20 ms request timeout, think 0–20 ms, hold 1–10 ms, one-way
//! latency 0.1–1 ms; a cut every 500 ms on average (exponential, at most 5 s apart)
//! lasting 100 ms–3 s, of a random non-empty set of nodes away from a random
//! non-empty set of clients. Nodes are turmoil hosts answering SET NX PX and
//! compare-and-delete over UDP; clients are turmoil clients running seed 002's Redlock
//! with tokio's (simulated) clock. turmoil steps every host once per 1 ms tick, its
//! default. The holds are checked for overlaps at the end, so the run shows it did the
//! work: partition.toml is safe, and `violations` must be 0.
//!
//! Not modelled (lockstorm does them, so this side is, if anything, flattered): the
//! history, the checker's online judgement, and the heal-and-probe liveness phase.

use lockstorm_peers::{acquired_until, drift_us, flag, median};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cell::RefCell;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;
use std::time::{Duration, Instant};
use turmoil::net::UdpSocket;

const NODES: usize = 5;
const CLIENTS: usize = 20;
const LOCKS: u8 = 2;
const QUORUM: usize = NODES / 2 + 1;
const TTL_US: u64 = 2_000_000;
const DRIFT_FACTOR: f64 = 0.01;
const RETRY_COUNT: u32 = 3;
const RETRY_DELAY_MAX_US: u64 = 100_000;
const REQUEST_TIMEOUT_US: u64 = 20_000;
const THINK_MAX_US: u64 = 20_000;
const HOLD_US: (u64, u64) = (1_000, 10_000);
const CUT_MEAN_US: f64 = 500_000.0;
const CUT_GAP_MAX_US: u64 = 5_000_000;
const CUT_US: (u64, u64) = (100_000, 3_000_000);
const PORT: u16 = 6379;

const SET: u8 = 1;
const DEL: u8 = 2;

#[derive(Default)]
struct Counts {
    /// Acquire and release invocations.
    lock_ops: u64,
    acquired: u64,
    /// (lock, start, end) in true (simulated) microseconds.
    holds: Vec<(u8, u64, u64)>,
}

fn sim_us() -> u64 {
    turmoil::sim_elapsed().unwrap_or_default().as_micros() as u64
}

fn request(op: u8, lock: u8, token: u64) -> [u8; 10] {
    let mut b = [0; 10];
    b[0] = op;
    b[1] = lock;
    b[2..].copy_from_slice(&token.to_le_bytes());
    b
}

/// A node: one key per lock, with its token and expiry by the node's clock.
async fn node() -> turmoil::Result {
    let sock = UdpSocket::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), PORT)).await?;
    let mut keys: [Option<(u64, tokio::time::Instant)>; LOCKS as usize] = [None; LOCKS as usize];
    let mut buf = [0u8; 16];
    loop {
        let (n, from) = sock.recv_from(&mut buf).await?;
        if n != 10 {
            continue;
        }
        let (op, lock) = (buf[0], usize::from(buf[1]));
        let token = u64::from_le_bytes(buf[2..10].try_into().expect("8 bytes"));
        let now = tokio::time::Instant::now();
        let live = keys[lock].filter(|&(_, expires)| expires > now);
        let ok = match op {
            SET if live.is_none() => {
                keys[lock] = Some((token, now + Duration::from_micros(TTL_US)));
                true
            }
            DEL if live.is_some_and(|(held, _)| held == token) => {
                keys[lock] = None;
                true
            }
            _ => false,
        };
        // A reply is a request with the lock byte replaced by the answer.
        let _ = sock.send_to(&request(op, u8::from(ok), token), from).await;
    }
}

/// A Redlock client: think, acquire (with retries), hold, release, forever.
async fn client(id: u64, seed: u64, quorum: usize, counts: Rc<RefCell<Counts>>) -> turmoil::Result {
    let sock = UdpSocket::bind((IpAddr::V4(Ipv4Addr::UNSPECIFIED), 9000)).await?;
    let nodes: Vec<SocketAddr> = (0..NODES)
        .map(|n| SocketAddr::new(turmoil::lookup(format!("n{n}")), PORT))
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (id << 40));
    let drift = drift_us(TTL_US, DRIFT_FACTOR);
    let started = tokio::time::Instant::now();
    let mono_us = || started.elapsed().as_micros() as u64;
    let mut tokens = 0u64;
    let mut buf = [0u8; 16];
    let send_all = |msg: [u8; 10]| {
        let sock = &sock;
        let nodes = &nodes;
        async move {
            for a in nodes {
                let _ = sock.send_to(&msg, *a).await;
            }
        }
    };
    loop {
        tokio::time::sleep(Duration::from_micros(rng.gen_range(0..=THINK_MAX_US))).await;
        let lock = rng.gen_range(0..LOCKS);
        counts.borrow_mut().lock_ops += 1;
        let mut held = None;
        for attempt in 0..=RETRY_COUNT {
            tokens += 1;
            let token = (id << 32) | tokens;
            let t1 = mono_us();
            send_all(request(SET, lock, token)).await;
            let deadline = tokio::time::Instant::now() + Duration::from_micros(REQUEST_TIMEOUT_US);
            let (mut answered, mut granted) = (0, 0);
            while answered < NODES {
                let Ok(got) = tokio::time::timeout_at(deadline, sock.recv_from(&mut buf)).await else {
                    break;
                };
                let (n, _) = got?;
                let reply_token = u64::from_le_bytes(buf[2..10].try_into().expect("8 bytes"));
                if n == 10 && buf[0] == SET && reply_token == token {
                    answered += 1;
                    granted += usize::from(buf[1]);
                }
            }
            if let Some(until) = acquired_until(t1, mono_us(), granted, quorum, TTL_US, drift) {
                held = Some((token, until));
                break;
            }
            send_all(request(DEL, lock, token)).await;
            if attempt < RETRY_COUNT {
                let delay = rng.gen_range(0..=RETRY_DELAY_MAX_US);
                tokio::time::sleep(Duration::from_micros(delay)).await;
            }
        }
        let Some((token, until)) = held else { continue };
        let start = sim_us();
        let now = mono_us();
        let hold = rng.gen_range(HOLD_US.0..=HOLD_US.1).min(until - now);
        tokio::time::sleep(Duration::from_micros(hold)).await;
        let end = sim_us().min(start + (until - now));
        {
            let mut c = counts.borrow_mut();
            c.lock_ops += 1;
            c.acquired += 1;
            c.holds.push((lock, start, end));
        }
        send_all(request(DEL, lock, token)).await;
    }
}

/// One cut: the links between `nodes` and `clients`, from `at_us` for `for_us`.
struct Cut {
    at_us: u64,
    for_us: u64,
    nodes: Vec<usize>,
    clients: Vec<usize>,
}

/// A random non-empty subset of `0..n`.
fn pick(rng: &mut ChaCha8Rng, n: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    rand::seq::SliceRandom::shuffle(&mut all[..], rng);
    all.truncate(rng.gen_range(1..=n));
    all
}

fn plan(seed: u64, duration_us: u64) -> Vec<Cut> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let gap = |rng: &mut ChaCha8Rng| {
        let u: f64 = rng.gen();
        ((-CUT_MEAN_US * (1.0 - u).ln()) as u64).clamp(1, CUT_GAP_MAX_US)
    };
    let mut cuts = Vec::new();
    let mut t = gap(&mut rng);
    while t < duration_us {
        cuts.push(Cut {
            at_us: t,
            for_us: rng.gen_range(CUT_US.0..=CUT_US.1),
            nodes: pick(&mut rng, NODES),
            clients: pick(&mut rng, CLIENTS),
        });
        t += gap(&mut rng);
    }
    cuts
}

/// Holds that began while an earlier hold of the same lock was still in force.
fn violations(holds: &mut [(u8, u64, u64)]) -> u64 {
    holds.sort_unstable();
    let mut found = 0;
    let mut open: Option<(u8, u64)> = None;
    for &(lock, start, end) in holds.iter() {
        match open {
            Some((l, until)) if l == lock => {
                found += u64::from(start < until);
                open = Some((lock, until.max(end)));
            }
            _ => open = Some((lock, end)),
        }
    }
    found
}

struct Run {
    counts: Counts,
    cuts: usize,
    steps: u64,
    secs: f64,
}

/// One run; `quorum` is the scenario's majority except in the test that breaks it.
fn run(seed: u64, duration_us: u64, quorum: usize) -> turmoil::Result<Run> {
    let counts = Rc::new(RefCell::new(Counts::default()));
    let mut sim = turmoil::Builder::new()
        .simulation_duration(Duration::from_micros(duration_us) + Duration::from_secs(1))
        .min_message_latency(Duration::from_micros(100))
        .max_message_latency(Duration::from_micros(1_000))
        .rng_seed(seed)
        .build();
    for n in 0..NODES {
        sim.host(format!("n{n}"), node);
    }
    for c in 0..CLIENTS {
        sim.client(format!("c{c}"), client(c as u64, seed, quorum, counts.clone()));
    }
    // Starts and ends of cuts, in time order; a link is cut while any cut holds it.
    let cuts = plan(seed, duration_us);
    let mut changes: Vec<(u64, bool, usize)> = Vec::new();
    for (i, c) in cuts.iter().enumerate() {
        changes.push((c.at_us, true, i));
        changes.push((c.at_us + c.for_us, false, i));
    }
    changes.sort_unstable_by_key(|&(t, start, i)| (t, start, i));
    let mut held = vec![0u32; NODES * CLIENTS];
    let mut next = 0;
    let mut steps = 0;
    let started = Instant::now();
    while (sim.elapsed().as_micros() as u64) < duration_us {
        let now = sim.elapsed().as_micros() as u64;
        while next < changes.len() && changes[next].0 <= now {
            let (_, start, i) = changes[next];
            for &n in &cuts[i].nodes {
                for &c in &cuts[i].clients {
                    let link = &mut held[n * CLIENTS + c];
                    let (a, b) = (format!("n{n}"), format!("c{c}"));
                    if start {
                        *link += 1;
                        if *link == 1 {
                            sim.partition(a, b);
                        }
                    } else {
                        *link -= 1;
                        if *link == 0 {
                            sim.repair(a, b);
                        }
                    }
                }
            }
            next += 1;
        }
        sim.step()?;
        steps += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    drop(sim);
    let counts = Rc::try_unwrap(counts)
        .map_err(|_| "the clients outlived the simulation")?
        .into_inner();
    Ok(Run {
        counts,
        cuts: changes[..next].iter().filter(|c| c.1).count(),
        steps,
        secs,
    })
}

fn main() {
    let rounds: usize = flag("--rounds", 3).max(1);
    let secs: u64 = flag("--secs", 60).max(1);
    let seed: u64 = flag("--seed", 1);
    let mut walls = Vec::new();
    let mut last = None;
    for _ in 0..rounds {
        match run(seed, secs * 1_000_000, QUORUM) {
            Ok(r) => {
                walls.push(r.secs);
                last = Some(r);
            }
            Err(e) => {
                eprintln!("error: the turmoil simulation failed: {e}");
                std::process::exit(1);
            }
        }
    }
    let mut r = last.expect("at least one round");
    let wall = median(&mut walls);
    let line = serde_json::json!({
        "peer": "turmoil 0.7.2",
        "model": "partition.toml: 5 nodes, 20 Redlock clients, 2 locks, random cuts; 1 ms ticks",
        "seed": seed,
        "rounds": rounds,
        "virtual_secs": secs,
        "lock_ops": r.counts.lock_ops,
        "acquired": r.counts.acquired,
        "violations": violations(&mut r.counts.holds),
        "cuts": r.cuts,
        "steps": r.steps,
        "secs": wall,
        "lock_ops_per_sec": r.counts.lock_ops as f64 / wall.max(1e-9),
    });
    println!("{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_holds_of_one_lock_are_counted() {
        let mut holds = vec![
            (0, 0, 100),
            (1, 50, 60),
            (0, 100, 120),
            (0, 10, 20),
            (0, 110, 130),
        ];
        // Lock 0: [0,100) contains [10,20); [100,120) and [110,130) overlap.
        assert_eq!(violations(&mut holds), 2);
        assert_eq!(violations(&mut [(0, 0, 10), (0, 10, 20), (1, 0, 20)]), 0);
    }

    #[test]
    fn a_short_run_acquires_and_stays_safe() {
        let r = run(7, 2_000_000, QUORUM).unwrap();
        assert!(r.counts.acquired > 10, "{}", r.counts.acquired);
        assert!(r.counts.lock_ops > r.counts.acquired);
        assert_eq!(violations(&mut r.counts.holds.clone()), 0);
    }

    #[test]
    fn a_quorum_of_one_lets_holds_overlap_and_the_check_sees_it() {
        // It takes a cut: uncut, the first SET to reach each node is the same client's.
        let mut r = run(1, 10_000_000, 1).unwrap();
        assert!(r.cuts > 0);
        assert!(violations(&mut r.counts.holds) > 0);
    }
}
