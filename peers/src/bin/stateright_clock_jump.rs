//! The scope `lockstorm explore scenarios/node-clock-jump.toml` searches, as a
//! Stateright model, searched breadth first on one thread (as `lockstorm bench --sim`
//! runs its explorer). Prints one JSON line: distinct states per wall second (median of
//! `--rounds`, default 3), the states it counted and the counterexample it found.
//!
//! The scope, as lockstorm resolves it: 2 clients, 5 nodes, quorum 3, ttl 10 s, 6
//! ticks of 2.5 s; the adversary may, at a tick boundary, cut up to 2 client↔node
//! links (they never heal) and jump a node's clock forward by 10 s up to 2 times.
//! Between boundaries the world runs event by event with a fixed one-way latency of
//! 2 ms: each client thinks one tick, asks for the lock on every node (SET NX PX, 20 ms
//! request timeout), holds it 4 s or until its validity ends, releases (compare-and-
//! delete on every node, not awaited), thinks again. A failed attempt unlocks every
//! node and retries after a random 0–50 ms, up to 3 times. A message is lost if its
//! link is cut when it is sent or when it arrives. The adversary's faults at one
//! boundary are taken in one order unless they touch the same node or client (the
//! partial-order reduction lockstorm's explorer uses). The property: no client
//! acquires while another client's hold (to the end of its validity) is running.
//!
//! Written anew from the scenario and seed 002, not from lockstorm's explorer: the
//! world is smaller than lockstorm's (a node is one key; unlock replies are not
//! modelled; retry delays come from a splitmix64 stream), so the state counts differ
//! and both are printed.

use lockstorm_peers::{acquired_until, drift_us, flag, median};
use stateright::{Checker, Model, Property};
use std::time::Instant;

const CLIENTS: usize = 2;
const NODES: usize = 5;
const QUORUM: usize = 3;
const TTL_US: u64 = 10_000_000;
const TICK_US: u64 = 2_500_000;
const TICKS: u8 = 6;
const LATENCY_US: u64 = 2_000;
const REQUEST_TIMEOUT_US: u64 = 20_000;
const THINK_US: u64 = TICK_US;
const HOLD_US: u64 = 4_000_000;
const RETRY_COUNT: u8 = 3;
const RETRY_DELAY_MAX_US: u64 = 50_000;
const CUTS: u8 = 2;
const JUMPS: u8 = 2;
const JUMP_BY_US: u64 = 10_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Act {
    Cut(u8, u8),
    Jump(u8),
    Tick,
}

impl Act {
    /// Whether the order of two faults at one boundary can matter.
    fn depends_on(self, other: Act) -> bool {
        let node = |a: Act| match a {
            Act::Cut(_, n) | Act::Jump(n) => Some(n),
            Act::Tick => None,
        };
        let client = |a: Act| match a {
            Act::Cut(c, _) => Some(c),
            _ => None,
        };
        (node(self).is_some() && node(self) == node(other))
            || (client(self).is_some() && client(self) == client(other))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Cmd {
    SetNx { token: u64 },
    Del { token: u64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Ev {
    ToNode { c: u8, n: u8, cmd: Cmd },
    Granted { c: u8, n: u8, token: u64, ok: bool },
    Wake { c: u8 },
    Timeout { c: u8, token: u64 },
    Retry { c: u8 },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
struct Node {
    /// How far the node's clock is ahead of true time.
    offset_us: u64,
    /// The lock key: its token and when it expires by the node's clock.
    key: Option<(u64, u64)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Thinking,
    Acquiring {
        attempt: u8,
        token: u64,
        t1_us: u64,
        granted: u8,
        answered: u8,
    },
    Backoff {
        attempt: u8,
    },
    Holding {
        token: u64,
        until_us: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Client {
    phase: Phase,
    /// Tokens drawn so far (a token is unique per attempt).
    tokens: u32,
    /// splitmix64 state for the retry delays.
    rng: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct World {
    tick: u8,
    nodes: [Node; NODES],
    clients: [Client; CLIENTS],
    /// Events in flight, by time and then scheduling order.
    queue: Vec<(u64, Ev)>,
    /// Bit `c * NODES + n`: the link between client c and node n is cut.
    cut: u16,
    cuts_left: u8,
    jumps_left: u8,
    /// The last fault at this boundary (partial-order reduction).
    last: Option<Act>,
    found: bool,
}

fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl World {
    fn new() -> World {
        let mut w = World {
            tick: 0,
            nodes: [Node::default(); NODES],
            clients: std::array::from_fn(|c| Client {
                phase: Phase::Thinking,
                tokens: 0,
                rng: c as u64 + 1,
            }),
            queue: Vec::new(),
            cut: 0,
            cuts_left: CUTS,
            jumps_left: JUMPS,
            last: None,
            found: false,
        };
        for c in 0..CLIENTS as u8 {
            w.push(THINK_US, Ev::Wake { c });
        }
        w
    }

    fn push(&mut self, at: u64, ev: Ev) {
        let i = self.queue.partition_point(|&(t, _)| t <= at);
        self.queue.insert(i, (at, ev));
    }

    fn is_cut(&self, c: u8, n: u8) -> bool {
        self.cut & (1 << (usize::from(c) * NODES + usize::from(n))) != 0
    }

    fn send_all(&mut self, t: u64, c: u8, cmd: Cmd) {
        for n in 0..NODES as u8 {
            if !self.is_cut(c, n) {
                self.push(t + LATENCY_US, Ev::ToNode { c, n, cmd });
            }
        }
    }

    fn attempt(&mut self, t: u64, c: u8, attempt: u8) {
        let client = &mut self.clients[usize::from(c)];
        client.tokens += 1;
        let token = (u64::from(c) << 32) | u64::from(client.tokens);
        client.phase = Phase::Acquiring {
            attempt,
            token,
            t1_us: t,
            granted: 0,
            answered: 0,
        };
        self.send_all(t, c, Cmd::SetNx { token });
        self.push(t + REQUEST_TIMEOUT_US, Ev::Timeout { c, token });
    }

    /// Every node answered or the request timed out: acquired, or unlock and retry.
    fn finish(&mut self, t: u64, c: u8) {
        let ci = usize::from(c);
        let Phase::Acquiring {
            attempt,
            token,
            t1_us,
            granted,
            ..
        } = self.clients[ci].phase
        else {
            return;
        };
        let drift = drift_us(TTL_US, 0.01);
        if let Some(until_us) = acquired_until(t1_us, t, granted.count_ones() as usize, QUORUM, TTL_US, drift)
        {
            let overlap = self.clients.iter().enumerate().any(|(d, other)| {
                d != ci && matches!(other.phase, Phase::Holding { until_us: u, .. } if u > t)
            });
            self.found |= overlap && until_us > t;
            self.clients[ci].phase = Phase::Holding { token, until_us };
            self.push((t + HOLD_US).min(until_us), Ev::Wake { c });
            return;
        }
        self.send_all(t, c, Cmd::Del { token });
        if attempt < RETRY_COUNT {
            self.clients[ci].phase = Phase::Backoff { attempt: attempt + 1 };
            let delay = splitmix(&mut self.clients[ci].rng) % (RETRY_DELAY_MAX_US + 1);
            self.push(t + delay, Ev::Retry { c });
        } else {
            self.clients[ci].phase = Phase::Thinking;
            self.push(t + THINK_US, Ev::Wake { c });
        }
    }

    fn step(&mut self, t: u64, ev: Ev) {
        match ev {
            Ev::ToNode { c, n, cmd } => {
                if self.is_cut(c, n) {
                    return;
                }
                let node = &mut self.nodes[usize::from(n)];
                let node_now = t + node.offset_us;
                let live = node.key.filter(|&(_, expires)| expires > node_now);
                match cmd {
                    Cmd::SetNx { token } => {
                        let ok = live.is_none();
                        if ok {
                            node.key = Some((token, node_now + TTL_US));
                        } else {
                            node.key = live;
                        }
                        if !self.is_cut(c, n) {
                            self.push(t + LATENCY_US, Ev::Granted { c, n, token, ok });
                        }
                    }
                    Cmd::Del { token } => {
                        node.key = live.filter(|&(held, _)| held != token);
                    }
                }
            }
            Ev::Granted { c, n, .. } if self.is_cut(c, n) => {}
            Ev::Granted { c, n, token, ok } => {
                let ci = usize::from(c);
                if let Phase::Acquiring {
                    token: current,
                    granted,
                    answered,
                    ..
                } = &mut self.clients[ci].phase
                {
                    if *current == token {
                        *answered |= 1 << n;
                        *granted |= u8::from(ok) << n;
                        if answered.count_ones() as usize == NODES {
                            self.finish(t, c);
                        }
                    }
                }
            }
            Ev::Timeout { c, token } => {
                if matches!(self.clients[usize::from(c)].phase,
                    Phase::Acquiring { token: current, .. } if current == token)
                {
                    self.finish(t, c);
                }
            }
            Ev::Retry { c } => {
                if let Phase::Backoff { attempt } = self.clients[usize::from(c)].phase {
                    self.attempt(t, c, attempt);
                }
            }
            Ev::Wake { c } => match self.clients[usize::from(c)].phase {
                Phase::Thinking => self.attempt(t, c, 0),
                Phase::Holding { token, .. } => {
                    self.send_all(t, c, Cmd::Del { token });
                    self.clients[usize::from(c)].phase = Phase::Thinking;
                    self.push(t + THINK_US, Ev::Wake { c });
                }
                _ => {}
            },
        }
    }

    fn run_tick(&mut self) {
        let end = (u64::from(self.tick) + 1) * TICK_US;
        while !self.found && self.queue.first().is_some_and(|&(t, _)| t < end) {
            let (t, ev) = self.queue.remove(0);
            self.step(t, ev);
        }
        self.tick += 1;
        self.last = None;
    }
}

struct Scope;

impl Model for Scope {
    type State = World;
    type Action = Act;

    fn init_states(&self) -> Vec<World> {
        vec![World::new()]
    }

    fn actions(&self, w: &World, out: &mut Vec<Act>) {
        if w.found || w.tick >= TICKS {
            return;
        }
        let mut push = |a: Act| {
            if w.last.is_none_or(|last| a > last || a.depends_on(last)) {
                out.push(a);
            }
        };
        for c in 0..CLIENTS as u8 {
            for n in 0..NODES as u8 {
                if w.cuts_left > 0 && !w.is_cut(c, n) {
                    push(Act::Cut(c, n));
                }
            }
        }
        for n in 0..NODES as u8 {
            if w.jumps_left > 0 {
                push(Act::Jump(n));
            }
        }
        out.push(Act::Tick);
    }

    fn next_state(&self, w: &World, a: Act) -> Option<World> {
        let mut w = w.clone();
        match a {
            Act::Tick => w.run_tick(),
            Act::Cut(c, n) => {
                w.cuts_left -= 1;
                w.cut |= 1 << (usize::from(c) * NODES + usize::from(n));
                w.last = Some(a);
            }
            Act::Jump(n) => {
                w.jumps_left -= 1;
                w.nodes[usize::from(n)].offset_us += JUMP_BY_US;
                w.last = Some(a);
            }
        }
        Some(w)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("mutual exclusion", |_, w: &World| !w.found)]
    }
}

fn main() {
    let rounds: usize = flag("--rounds", 3).max(1);
    let mut secs = Vec::new();
    let mut last = None;
    for _ in 0..rounds {
        let started = Instant::now();
        let checker = Scope.checker().threads(1).spawn_bfs().join();
        secs.push(started.elapsed().as_secs_f64());
        last = Some(checker);
    }
    let checker = last.expect("at least one round");
    let path = checker.discovery("mutual exclusion").map(|p| p.into_actions());
    let states = checker.unique_state_count() as u64;
    let line = serde_json::json!({
        "peer": "stateright 0.31.0",
        "model": "node-clock-jump scope: 2 clients, 5 nodes, 6 ticks of 2.5 s, 2 cut links, 2 node clock jumps of 10 s",
        "threads": 1,
        "rounds": rounds,
        "states": states,
        "generated": checker.state_count(),
        "max_depth": checker.max_depth(),
        "counterexample_len": path.as_ref().map(Vec::len),
        "counterexample": path.map(|p| p.iter().map(|a| format!("{a:?}")).collect::<Vec<_>>()),
        "secs": median(&mut secs),
        "states_per_sec": states as f64 / median(&mut secs).max(1e-9),
    });
    println!("{line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_articles_schedule_breaks_the_lock() {
        // Kleppmann's schedule: cut client 0 from nodes 0 and 1, let it acquire on
        // 2, 3, 4; jump node 2's clock; client 1 gets 0, 1, 2.
        let mut w = World::new();
        for a in [Act::Cut(0, 0), Act::Cut(0, 1), Act::Tick, Act::Tick] {
            w = Scope.next_state(&w, a).unwrap();
        }
        assert!(matches!(w.clients[0].phase, Phase::Holding { .. }));
        assert!(!w.found);
        for a in [Act::Jump(2), Act::Tick] {
            w = Scope.next_state(&w, a).unwrap();
        }
        assert!(w.found, "client 1 acquired while client 0 held: {w:?}");
    }

    #[test]
    fn without_faults_the_lock_stays_safe() {
        let mut w = World::new();
        for _ in 0..TICKS {
            w = Scope.next_state(&w, Act::Tick).unwrap();
        }
        assert!(!w.found);
    }
}
