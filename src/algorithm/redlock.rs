//! Redlock as seed 002 describes it, as a sans-IO state machine.
//!
//! An acquisition: (1) read the monotonic clock as `t1`; (2) send `SET key token NX PX
//! ttl` to every node, all at once or one after another, each with the request timeout;
//! (3) when every node has answered or timed out, compute `elapsed = now − t1` and
//! `validity = ttl − elapsed − drift` with `drift = ttl·drift_factor + 2 ms`; (4) if at
//! least `quorum` nodes said OK and the validity is positive, the lock is held until
//! `t1 + ttl − drift`; (5) otherwise unlock ALL nodes (also those that did not answer)
//! and retry after a random delay, up to `retry_count` times. Release unlocks all nodes.
//! With one node and a quorum of one this is the single-instance lock.

use super::{AlgorithmConfig, Fanout, LockAlgorithm, Mode, NodeSet, Now, Output, ReqId, TimerId};
use crate::command::{Cmd, Key, LockId, NodeId, Reply, Token};
use crate::rng::Rng;
use rand::RngCore;

pub struct Redlock {
    config: AlgorithmConfig,
    nodes: usize,
    rng: Rng,
    /// Attempt counter; request ids carry it in their upper bits so that replies to an
    /// earlier attempt are recognised and ignored.
    seq: u64,
    next_timer: TimerId,
    state: State,
}

enum State {
    Idle,
    Acquiring(Attempt),
    /// Waiting for the random retry delay before attempt number `attempts + 1`.
    Backoff {
        lock: LockId,
        timer: TimerId,
        attempts: u32,
    },
    Holding {
        lock: LockId,
        token: Token,
    },
}

struct Attempt {
    lock: LockId,
    token: Token,
    t1_mono_us: u64,
    /// 1 for the first attempt of an acquisition.
    number: u32,
    acked: NodeSet,
    pending: NodeSet,
    timed_out: NodeSet,
    /// Sequential fan-out: the next node to ask.
    next_node: NodeId,
    timer: TimerId,
}

impl Redlock {
    pub fn new(config: AlgorithmConfig, nodes: usize, rng: Rng) -> Self {
        assert!((1..=64).contains(&nodes), "Redlock supports 1 to 64 nodes");
        Redlock {
            config,
            nodes,
            rng,
            seq: 0,
            next_timer: 0,
            state: State::Idle,
        }
    }

    fn req(&self, node: NodeId) -> ReqId {
        (self.seq << 8) | node as u64
    }

    fn timer(&mut self, at_mono_us: u64, out: &mut Vec<Output>) -> TimerId {
        self.next_timer += 1;
        out.push(Output::Timer {
            id: self.next_timer,
            at_mono_us,
        });
        self.next_timer
    }

    fn start_attempt(&mut self, now: Now, lock: LockId, number: u32, out: &mut Vec<Output>) {
        self.seq += 1;
        let token = Token(self.rng.next_u64());
        let mut attempt = Attempt {
            lock,
            token,
            t1_mono_us: now.mono_us,
            number,
            acked: NodeSet::default(),
            pending: NodeSet::default(),
            timed_out: NodeSet::default(),
            next_node: 0,
            timer: 0,
        };
        match self.config.fanout {
            Fanout::Parallel => {
                for node in 0..self.nodes {
                    self.send_set(&mut attempt, node, out);
                }
                attempt.next_node = self.nodes;
                attempt.timer = self.timer(now.mono_us + self.config.request_timeout_us, out);
            }
            Fanout::Sequential => self.send_next(now, &mut attempt, out),
        }
        self.state = State::Acquiring(attempt);
    }

    fn send_set(&self, attempt: &mut Attempt, node: NodeId, out: &mut Vec<Output>) {
        attempt.pending.insert(node);
        out.push(Output::Send {
            node,
            req: self.req(node),
            cmd: Cmd::SetNxPx {
                key: Key::plain(attempt.lock),
                token: attempt.token,
                ttl_ms: self.config.ttl_ms,
            },
        });
    }

    /// Sequential fan-out: ask the next node; the caller finishes when none is left.
    fn send_next(&mut self, now: Now, attempt: &mut Attempt, out: &mut Vec<Output>) {
        let node = attempt.next_node;
        attempt.next_node += 1;
        self.send_set(attempt, node, out);
        attempt.timer = self.timer(now.mono_us + self.config.request_timeout_us, out);
    }

    /// Called when no request of the current step is pending any more.
    fn step_done(&mut self, now: Now, mut attempt: Attempt, out: &mut Vec<Output>) {
        if attempt.next_node < self.nodes {
            self.send_next(now, &mut attempt, out);
            self.state = State::Acquiring(attempt);
        } else {
            self.finish(now, attempt, out);
        }
    }

    /// Steps 3 to 5: decide, then hold, retry or give up.
    fn finish(&mut self, now: Now, attempt: Attempt, out: &mut Vec<Output>) {
        let ttl_us = self.config.ttl_ms * 1_000;
        let drift_us = self.config.drift_us();
        let elapsed_us = now.mono_us - attempt.t1_mono_us;
        let quorum = attempt.acked.len() >= self.config.quorum;
        let (valid, valid_until_mono_us) = if self.config.check_elapsed {
            let valid = ttl_us > elapsed_us + drift_us;
            (valid, attempt.t1_mono_us + ttl_us.saturating_sub(drift_us))
        } else {
            (true, now.mono_us + ttl_us.saturating_sub(drift_us))
        };
        if quorum && valid {
            self.state = State::Holding {
                lock: attempt.lock,
                token: attempt.token,
            };
            out.push(Output::Acquired {
                token: attempt.token,
                valid_until_mono_us,
                nodes: attempt.acked,
                attempts: attempt.number,
            });
            return;
        }
        self.unlock_all(attempt.lock, attempt.token, out);
        if attempt.number <= self.config.retry_count {
            let delay_us = self.config.retry_delay.sample(&mut self.rng);
            let timer = self.timer(now.mono_us + delay_us, out);
            self.state = State::Backoff {
                lock: attempt.lock,
                timer,
                attempts: attempt.number,
            };
        } else {
            self.state = State::Idle;
            out.push(Output::NotAcquired {
                token: attempt.token,
                unknown: !attempt.timed_out.is_empty(),
                attempts: attempt.number,
            });
        }
    }

    /// Compare-and-delete on every node, whether or not it acknowledged the lock.
    /// Replies are not awaited: a new attempt id makes them stale.
    fn unlock_all(&mut self, lock: LockId, token: Token, out: &mut Vec<Output>) {
        self.seq += 1;
        for node in 0..self.nodes {
            out.push(Output::Send {
                node,
                req: self.req(node),
                cmd: Cmd::DelIfEq {
                    key: Key::plain(lock),
                    token,
                },
            });
        }
    }
}

impl LockAlgorithm for Redlock {
    fn acquire(&mut self, now: Now, lock: LockId, mode: Mode, out: &mut Vec<Output>) {
        debug_assert!(matches!(self.state, State::Idle), "acquire while busy");
        debug_assert_eq!(mode, Mode::Exclusive);
        self.start_attempt(now, lock, 1, out);
    }

    fn release(&mut self, _now: Now, out: &mut Vec<Output>) {
        if let State::Holding { lock, token } = std::mem::replace(&mut self.state, State::Idle) {
            self.unlock_all(lock, token, out);
            out.push(Output::Released { token });
        } else {
            debug_assert!(false, "release while not holding");
        }
    }

    fn on_reply(&mut self, now: Now, req: ReqId, reply: Reply, out: &mut Vec<Output>) {
        let node = (req & 0xff) as NodeId;
        let State::Acquiring(attempt) = &mut self.state else {
            return;
        };
        if req >> 8 != self.seq || !attempt.pending.contains(node) {
            return;
        }
        attempt.pending.remove(node);
        if reply == Reply::Ok {
            attempt.acked.insert(node);
        }
        if attempt.pending.is_empty() {
            let State::Acquiring(attempt) = std::mem::replace(&mut self.state, State::Idle) else {
                unreachable!()
            };
            self.step_done(now, attempt, out);
        }
    }

    fn on_timer(&mut self, now: Now, id: TimerId, out: &mut Vec<Output>) {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Acquiring(mut attempt) if attempt.timer == id => {
                attempt.timed_out.0 |= attempt.pending.0;
                attempt.pending = NodeSet::default();
                self.step_done(now, attempt, out);
            }
            State::Backoff {
                lock,
                timer,
                attempts,
            } if timer == id => self.start_attempt(now, lock, attempts + 1, out),
            other => self.state = other,
        }
    }
}

#[cfg(test)]
mod tests;
