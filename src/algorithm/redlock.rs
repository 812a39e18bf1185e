//! Redlock as seed 002 describes it, as a sans-IO state machine, for exclusive locks and
//! for seed 000's read-write lock (plain or fair), with optional extension and fencing.
//!
//! An acquisition: (1) read the monotonic clock as `t1`; (2) send the lock command of
//! the mode ([`super::rw`], or [`super::fair`] for the fair variant) to every node, all
//! at once or one after another, each with the request timeout ([`super::round`]); (3)
//! when every node has answered or timed out, compute `elapsed = now − t1` and
//! `validity = ttl − elapsed − drift` with `drift = ttl·drift_factor + 2 ms`; (4) if at
//! least `quorum` nodes granted and the validity is positive, the lock is held until
//! `t1 + ttl − drift` (with fencing, after the two token rounds of [`super::fencing`],
//! which must also end within the validity); (5) otherwise unlock ALL nodes (also those
//! that did not answer) and retry after a random delay, up to `retry_count` times.
//! Release unlocks all nodes. With one node and a quorum of one this is the
//! single-instance lock.
//!
//! `WAIT` after SET (`[algorithm] wait_replicas`, not in the seeds): once a quorum
//! granted in time, the client sends `WAIT replicas timeout` to every node and counts a
//! granting node only if that many of its replicas acknowledged; a quorum of such nodes,
//! still within the validity, holds the lock (then fencing, if on). Otherwise the
//! attempt fails and is undone as in step 5. This is the mitigation users reach for
//! against a failover that loses the key: it cannot make the replica's copy survive a
//! failover that promotes another replica, nor stop an old master that still reaches
//! its replicas from granting (docs/sentinel.md).
//!
//! Extension (seed 002, "Extending the lock"): the holder sends the extend-if-token-
//! matches command of its mode to every node at `t1'`. The extension counts only if a
//! quorum extended and the round ended before the current validity ran out; the hold
//! then lasts until `t1' + ttl − drift`. Otherwise the client is told `NotExtended`
//! and still holds the lock until its earlier deadline, as before the attempt (the keys
//! that were not extended expire then); it releases as usual. At most
//! `max_extensions` extensions per hold, so a holder cannot keep a lock forever (seed
//! 002: an unbounded number would violate liveness); the client enforces the bound.
//!
//! The client mistakes of [`super::Mistakes`] are reproduced here: a plain `DEL`
//! release (also for the unlock after a failed attempt), a plain `PEXPIRE` extension
//! that trusts its replies, and one token per client instead of one per attempt.
//!
//! Call order: `acquire` → (`on_reply` | `on_timer`)* → `Acquired` | `NotAcquired`;
//! then, while holding, `extend` → (`on_reply` | `on_timer`)* → `Extended` |
//! `NotExtended`, any number of times up to the bound; then `release` → `Released`.

use super::fair;
use super::fencing;
use super::round::{Net, Progress, Round};
use super::rw;
use super::{AlgorithmConfig, Extend, LockAlgorithm, Mode, NodeSet, Now, Output, ReqId, TimerId, TokenScope};
use crate::command::{Cmd, FairArgs, LockId, Reply, Ticket, Token};
use crate::rng::Rng;
use rand::RngCore;

/// Cloneable and hashable so `explore` can keep and deduplicate states of it (the
/// hash leaves out the configuration, which never changes, and stands for the RNG by
/// its position in its stream).
#[derive(Clone)]
pub struct Redlock {
    config: AlgorithmConfig,
    net: Net,
    rng: Rng,
    /// Whether lock commands go through the fair queue ([`super::fair`]).
    fair: bool,
    /// The one token of every acquisition with `token = "per_client"`; drawn only then,
    /// so the default draws the same random stream as ever.
    client_token: Option<Token>,
    state: State,
}

/// One acquisition, across its attempts.
#[derive(Clone, Hash)]
struct Acq {
    lock: LockId,
    mode: Mode,
    /// The current attempt's token.
    token: Token,
    /// Attempts made so far (1 for the first).
    number: u32,
    /// Attempts that count against `retry_count` (fair: not those that were only queued).
    counted: u32,
    start_mono_us: u64,
    /// The fair variant's queue ticket and position (ms since the epoch).
    ticket: Option<Ticket>,
    queued_at_ms: u64,
    /// Set once the lock round reached a quorum in time.
    valid_until_mono_us: u64,
    nodes: NodeSet,
    fence: Option<u64>,
}

/// A lock held.
#[derive(Clone, Hash)]
struct Held {
    lock: LockId,
    mode: Mode,
    token: Token,
    valid_until_mono_us: u64,
}

/// Which fencing round is running.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum FenceStep {
    Incr,
    Raise,
}

#[derive(Clone, Hash)]
enum State {
    Idle,
    Locking(Acq, Round),
    /// WAIT after the lock round: the replicas' acknowledgements.
    Replicating(Acq, Round),
    Fencing(Acq, Round, FenceStep),
    /// Waiting for the random retry delay before the next attempt.
    Backoff(Acq, TimerId),
    Holding(Held),
    Extending(Held, Round),
}

impl Redlock {
    pub fn new(config: AlgorithmConfig, nodes: usize, mut rng: Rng) -> Self {
        assert!((1..=64).contains(&nodes), "Redlock supports 1 to 64 nodes");
        let fair = config.kind == super::AlgorithmKind::FairRwRedlock;
        let client_token = (config.mistakes.token == TokenScope::PerClient).then(|| Token(rng.next_u64()));
        Redlock {
            config,
            net: Net::new(nodes),
            rng,
            fair,
            client_token,
            state: State::Idle,
        }
    }

    /// A fresh token for an attempt, or the client's one token.
    fn next_token(&mut self) -> Token {
        self.client_token.unwrap_or_else(|| Token(self.rng.next_u64()))
    }

    fn unlock_cmd(&self, mode: Mode, lock: LockId, token: Token) -> Cmd {
        rw::unlock_cmd(mode, lock, token, self.config.mistakes.release)
    }

    fn start_round(&mut self, now: Now, cmd: Cmd, out: &mut Vec<Output>) -> Round {
        self.net
            .start(now, cmd, self.config.fanout, self.config.request_timeout_us, out)
    }

    /// Whether a round that ends now still ends within the acquisition's validity.
    fn in_time(&self, now: Now, acq: &Acq) -> bool {
        !self.config.check_elapsed || now.mono_us < acq.valid_until_mono_us
    }

    fn start_attempt(&mut self, now: Now, mut acq: Acq, out: &mut Vec<Output>) {
        acq.number += 1;
        acq.token = self.next_token();
        let now_ms = now.wall_us / 1_000;
        let ttl_ms = self.config.ttl_ms;
        let cmd = if self.fair {
            let ticket = *acq.ticket.get_or_insert(fair::ticket(acq.mode, acq.token));
            let args = FairArgs {
                ticket,
                now_ms,
                enqueue: now.mono_us - acq.start_mono_us >= self.config.fair_after_us,
                queued_at_ms: acq.queued_at_ms,
                ticket_exp_at_ms: now_ms + ttl_ms,
            };
            fair::lock_cmd(acq.mode, acq.lock, acq.token, args, ttl_ms)
        } else {
            rw::lock_cmd(acq.mode, acq.lock, acq.token, now_ms, ttl_ms)
        };
        let round = self.start_round(now, cmd, out);
        self.state = State::Locking(acq, round);
    }

    /// The validity end of a round that started at `t1` and ended at `now`, if any is left.
    fn validity(&self, now: Now, t1_mono_us: u64) -> Option<u64> {
        let ttl_us = self.config.ttl_ms * 1_000;
        let drift_us = self.config.drift_us();
        if self.config.check_elapsed {
            let elapsed_us = now.mono_us - t1_mono_us;
            (ttl_us > elapsed_us + drift_us).then(|| t1_mono_us + ttl_us - drift_us)
        } else {
            Some(now.mono_us + ttl_us.saturating_sub(drift_us))
        }
    }

    /// Steps 3 and 4: decide on the lock round.
    fn lock_done(&mut self, now: Now, mut acq: Acq, round: Round, out: &mut Vec<Output>) {
        let valid_until = self.validity(now, round.t1_mono_us);
        match valid_until {
            Some(v) if round.acked.len() >= self.config.quorum => {
                acq.valid_until_mono_us = v;
                acq.nodes = round.acked;
                match self.config.wait {
                    Some(wait) => {
                        let cmd = Cmd::Wait {
                            lock: acq.lock,
                            replicas: wait.replicas,
                            timeout_ms: wait.timeout_ms,
                        };
                        let timeout_us = wait.round_timeout_us(self.config.request_timeout_us);
                        let round = self.net.start(now, cmd, self.config.fanout, timeout_us, out);
                        self.state = State::Replicating(acq, round);
                    }
                    None => self.held_on_quorum(now, acq, out),
                }
            }
            valid => {
                let unknown = !round.timed_out.is_empty();
                // Fair: refused by a quorum that answered means "wait your turn".
                let answered = self.net.nodes - round.timed_out.len();
                let waiting = self.fair
                    && valid.is_some()
                    && round.acked.len() < self.config.quorum
                    && answered >= self.config.quorum;
                self.fail_attempt(now, acq, unknown, waiting, out);
            }
        }
    }

    /// The lock is on a quorum (and, with WAIT, on their replicas): fence, or grant.
    fn held_on_quorum(&mut self, now: Now, acq: Acq, out: &mut Vec<Output>) {
        if self.config.fencing && acq.mode != Mode::Read {
            let round = self.start_round(now, fencing::incr_cmd(acq.lock), out);
            self.state = State::Fencing(acq, round, FenceStep::Incr);
        } else {
            self.grant(acq, out);
        }
    }

    /// The WAIT round: a granting node counts only if its replicas acknowledged.
    fn wait_done(&mut self, now: Now, mut acq: Acq, round: Round, out: &mut Vec<Output>) {
        acq.nodes.0 &= round.acked.0;
        if acq.nodes.len() < self.config.quorum || !self.in_time(now, &acq) {
            let unknown = !round.timed_out.is_empty();
            return self.fail_attempt(now, acq, unknown, false, out);
        }
        self.held_on_quorum(now, acq, out);
    }

    fn fence_done(&mut self, now: Now, mut acq: Acq, round: Round, step: FenceStep, out: &mut Vec<Output>) {
        if round.acked.len() < self.config.quorum || !self.in_time(now, &acq) {
            let unknown = !round.timed_out.is_empty();
            self.fail_attempt(now, acq, unknown, false, out);
            return;
        }
        match step {
            FenceStep::Incr => {
                let token = round.max_int.max(0) as u64;
                acq.fence = Some(token);
                if self.config.fence_rounds < 2 {
                    return self.grant(acq, out);
                }
                let round = self.start_round(now, fencing::raise_cmd(acq.lock, token), out);
                self.state = State::Fencing(acq, round, FenceStep::Raise);
            }
            FenceStep::Raise => self.grant(acq, out),
        }
    }

    fn grant(&mut self, acq: Acq, out: &mut Vec<Output>) {
        if let Some(ticket) = acq.ticket {
            self.net.send_all(
                Cmd::FairLeave {
                    lock: acq.lock,
                    ticket,
                },
                out,
            );
        }
        out.push(Output::Acquired {
            token: acq.token,
            valid_until_mono_us: acq.valid_until_mono_us,
            nodes: acq.nodes,
            attempts: acq.number,
            fence: acq.fence,
        });
        self.state = State::Holding(Held {
            lock: acq.lock,
            mode: acq.mode,
            token: acq.token,
            valid_until_mono_us: acq.valid_until_mono_us,
        });
    }

    /// Step 5: unlock everywhere, then retry or give up. A fair attempt that was only
    /// waiting its turn does not count against `retry_count`.
    fn fail_attempt(&mut self, now: Now, mut acq: Acq, unknown: bool, waiting: bool, out: &mut Vec<Output>) {
        let unlock = self.unlock_cmd(acq.mode, acq.lock, acq.token);
        self.net.send_all(unlock, out);
        if !waiting {
            acq.counted += 1;
        }
        if acq.counted <= self.config.retry_count {
            let delay_us = self.config.retry_delay.sample(&mut self.rng);
            let timer = self.net.timer(now.mono_us + delay_us, out);
            self.state = State::Backoff(acq, timer);
            return;
        }
        if let Some(ticket) = acq.ticket {
            self.net.send_all(
                Cmd::FairLeave {
                    lock: acq.lock,
                    ticket,
                },
                out,
            );
        }
        self.state = State::Idle;
        out.push(Output::NotAcquired {
            token: acq.token,
            unknown,
            attempts: acq.number,
        });
    }

    fn extend_done(&mut self, now: Now, mut held: Held, round: Round, out: &mut Vec<Output>) {
        // A plain-PEXPIRE extension trusts its replies as proof of ownership (see
        // `Extend::Pexpire`); the compare script's extension must also end in time.
        let trusts_replies = self.config.mistakes.extend == Extend::Pexpire && held.mode != Mode::Read;
        let in_time = trusts_replies || now.mono_us < held.valid_until_mono_us;
        match self.validity(now, round.t1_mono_us) {
            Some(v) if in_time && round.acked.len() >= self.config.quorum => {
                held.valid_until_mono_us = v;
                out.push(Output::Extended {
                    token: held.token,
                    valid_until_mono_us: v,
                    nodes: round.acked,
                });
                self.state = State::Holding(held);
            }
            _ => {
                // Nothing to undo: the keys still expire at the earlier deadline.
                out.push(Output::NotExtended { token: held.token });
                self.state = State::Holding(held);
            }
        }
    }
}

impl std::hash::Hash for Redlock {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.net.hash(h);
        self.rng.get_word_pos().hash(h);
        self.fair.hash(h);
        self.state.hash(h);
    }
}

impl LockAlgorithm for Redlock {
    fn acquire(&mut self, now: Now, lock: LockId, mode: Mode, out: &mut Vec<Output>) {
        debug_assert!(matches!(self.state, State::Idle), "acquire while busy");
        let acq = Acq {
            lock,
            mode,
            token: Token(0),
            number: 0,
            counted: 0,
            start_mono_us: now.mono_us,
            ticket: None,
            queued_at_ms: now.wall_us / 1_000,
            valid_until_mono_us: 0,
            nodes: NodeSet::default(),
            fence: None,
        };
        self.start_attempt(now, acq, out);
    }

    fn release(&mut self, _now: Now, out: &mut Vec<Output>) {
        if let State::Holding(held) = std::mem::replace(&mut self.state, State::Idle) {
            let unlock = self.unlock_cmd(held.mode, held.lock, held.token);
            self.net.send_all(unlock, out);
            out.push(Output::Released { token: held.token });
        } else {
            debug_assert!(false, "release while not holding");
        }
    }

    fn extend(&mut self, now: Now, out: &mut Vec<Output>) {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Holding(held) => {
                let cmd = rw::extend_cmd(
                    held.mode,
                    held.lock,
                    held.token,
                    now.wall_us / 1_000,
                    self.config.ttl_ms,
                    self.config.mistakes.extend,
                );
                let round = self.start_round(now, cmd, out);
                self.state = State::Extending(held, round);
            }
            other => {
                debug_assert!(false, "extend while not holding");
                self.state = other;
            }
        }
    }

    fn on_reply(&mut self, now: Now, req: ReqId, reply: Reply, out: &mut Vec<Output>) {
        // The round is fed in place; the state is taken apart only when it is done (most
        // replies leave a round waiting, and moving the state out and back costs copies).
        let progress = match &mut self.state {
            State::Locking(_, round) | State::Extending(_, round) => {
                self.net.on_reply(round, now, req, reply, rw::granted, out)
            }
            State::Fencing(_, round, _) => self.net.on_reply(round, now, req, reply, fencing::counted, out),
            State::Replicating(_, round) => {
                let replicas = self.config.wait.map_or(0, |w| i64::from(w.replicas));
                let acknowledged = |r: Reply| matches!(r, Reply::Int(n) if n >= replicas);
                self.net.on_reply(round, now, req, reply, acknowledged, out)
            }
            _ => return,
        };
        if progress == Progress::Done {
            self.round_done(now, out);
        }
    }

    fn on_timer(&mut self, now: Now, id: TimerId, out: &mut Vec<Output>) {
        let progress = match &mut self.state {
            State::Locking(_, round)
            | State::Replicating(_, round)
            | State::Fencing(_, round, _)
            | State::Extending(_, round) => self.net.on_timer(round, now, id, out),
            State::Backoff(_, timer) if *timer == id => {
                let State::Backoff(acq, _) = std::mem::replace(&mut self.state, State::Idle) else {
                    unreachable!()
                };
                return self.start_attempt(now, acq, out);
            }
            _ => return,
        };
        if progress == Progress::Done {
            self.round_done(now, out);
        }
    }
}

impl Redlock {
    /// The current round is done: hands it to what started it.
    fn round_done(&mut self, now: Now, out: &mut Vec<Output>) {
        match std::mem::replace(&mut self.state, State::Idle) {
            State::Locking(acq, round) => self.lock_done(now, acq, round, out),
            State::Replicating(acq, round) => self.wait_done(now, acq, round, out),
            State::Fencing(acq, round, step) => self.fence_done(now, acq, round, step, out),
            State::Extending(held, round) => self.extend_done(now, held, round, out),
            other => self.state = other,
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod rw_tests;

#[cfg(test)]
mod mistakes_tests;
