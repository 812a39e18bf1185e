//! A worker's side of a client, sans-IO: the lock operations of a client's cycle
//! (`client::Client`) turned into protocol requests, and the worker's answers
//! turned back into the outcomes the built-in algorithms report ([`Output`]).
//!
//! This is what makes the cycle the same for both kinds of client: the client asks
//! [`WorkerLock`] for a request where it would call the algorithm, and feeds it the
//! answer where it would feed replies and timers. Like an algorithm it reads no clock
//! (the caller passes [`Now`]) and touches no pipe (the driver carries the request).
//!
//! A hold is the caller's ([`HoldFrom::Answer`], the default): it starts when the `ok`
//! arrives and lasts the validity the library reports (`validity_ms = v`: until
//! `answer + v`), else the ttl the library was given (`answer + ttl`), as the library's
//! user holds the lock once acquire returns. A library whose validity does not subtract
//! the time its acquisition took is then believed as its user believes it, and an
//! overlap that follows is shown. [`HoldFrom::Send`] counts from the moment the request
//! was sent instead (every try inside the library against the hold): a documented
//! option, a lower bound that can hide an overlap and never invent one. An `ok` with
//! `expires: false` holds until its release is sent ([`UNTIL_RELEASED`]). Tokens are lockstorm's own
//! (one per acquisition, from the client's seeded stream), so the history ties each
//! write to its hold whatever the library's token looks like.

use super::protocol::Request;
use super::HoldFrom;
use crate::algorithm::{Mode, NodeSet, Now, Output};
use crate::command::{LockId, Token};
use crate::rng::Rng;
use rand::RngCore;

/// How a worker answered the open request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerKind {
    Ok,
    /// Definitely not done.
    Fail,
    /// Unknown outcome.
    Error,
}

/// A worker's answer, as the client's cycle needs it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Answered {
    pub kind: AnswerKind,
    pub validity_ms: Option<f64>,
    /// `false`: the hold has no expiry (the worker said `expires: false`).
    pub expires: bool,
    pub fence: Option<u64>,
    /// How long the library's call took, as the worker measured it (`took_ms`).
    pub took_ms: Option<f64>,
    /// The nodes the worker says the hold is on (empty: not said).
    pub nodes: NodeSet,
    /// The client's clock when the last bytes its library sent before this answer left
    /// for a node, the earliest of those per node (its proxies saw them): no key this
    /// answer stands on was set before. `None`: not seen.
    pub last_sent_mono_us: Option<u64>,
}

/// The believed validity end of a hold with no expiry: it lasts until its release is
/// sent. No other validity reaches it (they stop at [`crate::limits::MAX_TIME_US`]), and
/// a client records such a hold without `valid_until_us`.
pub const UNTIL_RELEASED: u64 = u64::MAX;

/// One client's lock operations, carried out by its worker process.
pub struct WorkerLock {
    ttl_us: u64,
    /// When a hold starts: at the answer (the caller's hold) or at the send.
    hold_from: HoldFrom,
    rng: Rng,
    /// The request waiting for its answer, and the client's clock when it was sent.
    open: Option<(Request, u64)>,
    /// The current acquisition's token (lockstorm's, not the library's).
    token: Token,
    writes: u32,
}

impl WorkerLock {
    /// `ttl_ms` is what a hold is believed valid for when the worker reports no validity;
    /// `hold_from` when it starts.
    pub fn new(ttl_ms: u64, rng: Rng, hold_from: HoldFrom) -> Self {
        WorkerLock {
            ttl_us: ttl_ms * 1_000,
            hold_from,
            rng,
            open: None,
            token: Token(0),
            writes: 0,
        }
    }

    fn send(&mut self, now: Now, request: Request) -> Request {
        debug_assert!(self.open.is_none(), "a client's requests never overlap");
        self.open = Some((request, now.mono_us));
        request
    }

    pub fn acquire(&mut self, now: Now, lock: LockId, mode: Mode) -> Request {
        self.token = Token(self.rng.next_u64());
        self.send(now, Request::Acquire { lock, mode })
    }

    pub fn release(&mut self, now: Now, lock: LockId) -> Request {
        self.send(now, Request::Release { lock })
    }

    pub fn extend(&mut self, now: Now, lock: LockId) -> Request {
        self.send(now, Request::Extend { lock })
    }

    pub fn write(&mut self, now: Now, lock: LockId) -> Request {
        self.writes += 1;
        let seq = self.writes;
        self.send(now, Request::Write { lock, seq })
    }

    /// The current acquisition's token.
    pub fn token(&self) -> Token {
        self.token
    }

    /// The open request, if any.
    pub fn open(&self) -> Option<Request> {
        self.open.map(|(r, _)| r)
    }

    /// The answer to the open request, arrived at `now`: pushes the outcome a built-in
    /// algorithm would report. A write's answer pushes nothing (the client applies it to
    /// the resource).
    pub fn on_answer(&mut self, now: Now, answer: Answered, out: &mut Vec<Output>) {
        let Some((request, sent_us)) = self.open.take() else {
            return;
        };
        // The library returned `took_ms` after the request was sent, if the worker says,
        // and no later than the answer came in (a worker stopped between its library's
        // return and its answer has its answer held back with it).
        let answered_us = now.mono_us.max(sent_us);
        let from_us = match (self.hold_from, answer.took_ms) {
            (HoldFrom::Answer, Some(ms)) => sent_us
                .saturating_add((ms.max(0.0) * 1_000.0) as u64)
                .min(answered_us),
            (HoldFrom::Answer, None) => answered_us,
            (HoldFrom::Send, _) => sent_us,
        };
        let token = self.token;
        // Taken at the library's word, however large (a library whose validity wraps
        // around believes it holds for ages), up to the longest time a history can say
        // (`limits::MAX_TIME_US`, decades): the float cast and the sum saturate.
        let valid_until_mono_us = || {
            if !answer.expires {
                return UNTIL_RELEASED;
            }
            let end = match answer.validity_ms {
                Some(ms) => from_us.saturating_add((ms.max(0.0) * 1_000.0) as u64),
                // No validity: the ttl it was given, which the node counts from when it
                // set the key, not from the library's return. That set came no earlier
                // than the last request its library sent before the answer (seen at the
                // proxies), nor than the request to the worker: the hold ends no later
                // than the key does (counted from the return, a rival's SET landing in
                // the few ms between the key's expiry and that end read as two holders).
                None => {
                    let set_after = answer.last_sent_mono_us.unwrap_or(sent_us).max(sent_us);
                    from_us.min(set_after).saturating_add(self.ttl_us)
                }
            };
            end.min(crate::limits::MAX_TIME_US)
        };
        // A worker names its nodes if it can (empty: not said), never its attempts (0).
        let nodes = answer.nodes;
        match (request, answer.kind) {
            (Request::Acquire { .. }, AnswerKind::Ok) => out.push(Output::Acquired {
                token,
                valid_until_mono_us: valid_until_mono_us(),
                nodes,
                attempts: 0,
                fence: answer.fence,
            }),
            (Request::Acquire { .. }, kind) => out.push(Output::NotAcquired {
                token,
                unknown: kind == AnswerKind::Error,
                attempts: 0,
            }),
            // The hold ended when the release was sent, whatever the answer.
            (Request::Release { .. }, _) => out.push(Output::Released { token }),
            (Request::Extend { .. }, AnswerKind::Ok) => out.push(Output::Extended {
                token,
                valid_until_mono_us: valid_until_mono_us(),
                nodes,
            }),
            // An unknown extension is not counted on: the hold keeps its earlier end.
            (Request::Extend { .. }, _) => out.push(Output::NotExtended { token }),
            (Request::Write { .. }, _) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(mono_us: u64) -> Now {
        Now {
            mono_us,
            wall_us: mono_us,
        }
    }

    fn ok(validity_ms: Option<f64>) -> Answered {
        Answered {
            last_sent_mono_us: None,
            kind: AnswerKind::Ok,
            validity_ms,
            expires: true,
            fence: Some(4),
            took_ms: None,
            nodes: NodeSet::default(),
        }
    }

    fn worker(from: HoldFrom) -> WorkerLock {
        WorkerLock::new(10_000, crate::rng::split(1, "t", 0), from)
    }

    #[test]
    fn the_callers_hold_counts_from_the_answer_and_defaults_to_the_ttl() {
        let mut w = worker(HoldFrom::Answer);
        let mut out = Vec::new();
        w.acquire(at(1_000), LockId(0), Mode::Exclusive);
        // Answered 1.9 s later, with 1.95 s of validity left: the caller holds until
        // 1.9 + 1.95 s, not 1 ms + 1.95 s.
        w.on_answer(at(1_901_000), ok(Some(1_950.0)), &mut out);
        let Output::Acquired {
            valid_until_mono_us, ..
        } = out[0]
        else {
            panic!("{out:?}")
        };
        assert_eq!(valid_until_mono_us, 1_901_000 + 1_950_000);
        out.clear();
        w.release(at(4_000_000), LockId(0));
        w.on_answer(at(4_000_100), ok(None), &mut out);
        out.clear();
        // No validity reported: the ttl it was given, from the library's last request
        // before its answer (the key's SET, at the earliest), not from the answer.
        w.acquire(at(5_000_000), LockId(0), Mode::Exclusive);
        let answer = Answered {
            last_sent_mono_us: Some(5_290_000),
            ..ok(None)
        };
        w.on_answer(at(5_300_000), answer, &mut out);
        assert!(
            matches!(out[0], Output::Acquired { valid_until_mono_us, .. } if valid_until_mono_us == 5_290_000 + 10_000_000)
        );
    }

    #[test]
    fn the_nodes_a_worker_names_are_the_holds_nodes() {
        let mut w = worker(HoldFrom::Answer);
        let mut out = Vec::new();
        w.acquire(at(1_000), LockId(0), Mode::Exclusive);
        let mut nodes = NodeSet::default();
        nodes.insert(0);
        nodes.insert(2);
        w.on_answer(at(2_000), Answered { nodes, ..ok(None) }, &mut out);
        assert!(
            matches!(out[0], Output::Acquired { nodes: held, .. } if held.iter().collect::<Vec<_>>() == [0, 2]),
            "{out:?}"
        );
        out.clear();
        w.extend(at(3_000), LockId(0));
        w.on_answer(at(4_000), ok(None), &mut out);
        assert!(
            matches!(out[0], Output::Extended { nodes: held, .. } if held.is_empty()),
            "not said: {out:?}"
        );
    }

    #[test]
    fn the_callers_hold_starts_when_the_library_returned_if_the_worker_says_so() {
        // The library returned 2 ms after the request, then the worker was stopped
        // before it answered, and the answer came in 2.5 s later: the caller has held
        // since the return.
        let mut w = worker(HoldFrom::Answer);
        let mut out = Vec::new();
        w.acquire(at(1_000), LockId(0), Mode::Exclusive);
        let answer = Answered {
            took_ms: Some(2.0),
            nodes: NodeSet::default(),
            ..ok(Some(1_000.0))
        };
        w.on_answer(at(2_503_000), answer, &mut out);
        assert!(
            matches!(out[0], Output::Acquired { valid_until_mono_us, .. } if valid_until_mono_us == 3_000 + 1_000_000),
            "{out:?}"
        );
        // A worker cannot put the return after its answer came in.
        out.clear();
        w.release(at(3_000_000), LockId(0));
        w.on_answer(at(3_000_100), ok(None), &mut out);
        out.clear();
        w.acquire(at(4_000_000), LockId(0), Mode::Exclusive);
        let late = Answered {
            took_ms: Some(9e9),
            nodes: NodeSet::default(),
            ..ok(Some(1_000.0))
        };
        w.on_answer(at(4_001_000), late, &mut out);
        assert!(
            matches!(out[0], Output::Acquired { valid_until_mono_us, .. } if valid_until_mono_us == 4_001_000 + 1_000_000),
            "{out:?}"
        );
    }

    #[test]
    fn with_hold_from_send_validity_counts_from_the_send() {
        let mut w = worker(HoldFrom::Send);
        let mut out = Vec::new();
        w.acquire(at(1_000), LockId(0), Mode::Exclusive);
        // Answered 5 ms later: the validity still counts from 1 ms.
        w.on_answer(at(6_000), ok(Some(9_950.0)), &mut out);
        let Output::Acquired {
            valid_until_mono_us,
            fence,
            ..
        } = out[0]
        else {
            panic!("{out:?}")
        };
        assert_eq!(valid_until_mono_us, 1_000 + 9_950_000);
        assert_eq!(fence, Some(4));

        out.clear();
        w.release(at(20_000), LockId(0));
        w.on_answer(at(20_100), ok(None), &mut out);
        assert!(matches!(out[0], Output::Released { .. }));

        out.clear();
        w.acquire(at(30_000), LockId(0), Mode::Exclusive);
        w.on_answer(at(31_000), ok(None), &mut out);
        assert!(
            matches!(out[0], Output::Acquired { valid_until_mono_us, .. } if valid_until_mono_us == 30_000 + 10_000_000)
        );
    }

    #[test]
    fn a_hold_without_expiry_is_believed_until_released() {
        let mut w = worker(HoldFrom::Answer);
        let mut out = Vec::new();
        w.acquire(at(1_000), LockId(0), Mode::Exclusive);
        let answer = Answered {
            expires: false,
            ..ok(Some(5.0))
        };
        w.on_answer(at(2_000), answer, &mut out);
        assert!(
            matches!(out[0], Output::Acquired { valid_until_mono_us, .. } if valid_until_mono_us == UNTIL_RELEASED),
            "{out:?}"
        );
    }

    #[test]
    fn a_validity_that_wrapped_around_is_believed_up_to_the_longest_history_time() {
        // redlock-rs can report about 1.8e19 ms (a wrapped subtraction).
        let mut w = worker(HoldFrom::Answer);
        let mut out = Vec::new();
        w.acquire(at(1_000), LockId(0), Mode::Exclusive);
        w.on_answer(at(2_000), ok(Some(1.8e19)), &mut out);
        assert!(
            matches!(out[0], Output::Acquired { valid_until_mono_us, .. } if valid_until_mono_us == crate::limits::MAX_TIME_US),
            "{out:?}"
        );
    }

    #[test]
    fn fail_is_not_acquired_and_error_is_unknown() {
        let mut w = worker(HoldFrom::Answer);
        let mut out = Vec::new();
        for (kind, unknown) in [(AnswerKind::Fail, false), (AnswerKind::Error, true)] {
            w.acquire(at(0), LockId(0), Mode::Exclusive);
            let answer = Answered {
                kind,
                validity_ms: None,
                expires: true,
                fence: None,
                took_ms: None,
                nodes: NodeSet::default(),
                last_sent_mono_us: None,
            };
            w.on_answer(at(0), answer, &mut out);
            assert!(
                matches!(out.pop(), Some(Output::NotAcquired { unknown: u, .. }) if u == unknown),
                "{kind:?}"
            );
        }
        w.extend(at(0), LockId(0));
        w.on_answer(at(0), ok(Some(-5.0)), &mut out);
        assert!(
            matches!(
                out.pop(),
                Some(Output::Extended {
                    valid_until_mono_us: 0,
                    ..
                })
            ),
            "a negative validity is none"
        );
        assert_eq!(w.open(), None);
    }

    /// Without a validity the hold lasts the ttl counted from when the key can have been
    /// set at the earliest (the last bytes the library sent before its answer, else the
    /// request to the worker), never past the ttl from the return: it ends no later than
    /// the key does, so a rival's SET after the key's expiry is never two holders.
    #[test]
    fn without_a_validity_the_ttl_counts_from_the_last_request_the_library_sent() {
        let ttl_us = 10_000_000;
        let end = |sent: u64, answered: u64, last_sent: Option<u64>| {
            let mut w = worker(HoldFrom::Answer);
            let mut out = Vec::new();
            w.acquire(at(sent), LockId(0), Mode::Exclusive);
            let answer = Answered {
                last_sent_mono_us: last_sent,
                ..ok(None)
            };
            w.on_answer(at(answered), answer, &mut out);
            match out[0] {
                Output::Acquired {
                    valid_until_mono_us, ..
                } => valid_until_mono_us,
                ref o => panic!("{o:?}"),
            }
        };
        // One SET 3 ms before the answer: the ttl from that SET, not from the answer.
        assert_eq!(end(10_000, 15_000, Some(12_000)), 12_000 + ttl_us);
        // A blocking acquire that waited 900 ms: from its last SET, not from the request.
        assert_eq!(end(10_000, 915_000, Some(910_000)), 910_000 + ttl_us);
        // Nothing seen: from the request to the worker.
        assert_eq!(end(10_000, 15_000, None), 10_000 + ttl_us);
        // Bytes seen before the request (another operation's) do not count.
        assert_eq!(end(10_000, 15_000, Some(5_000)), 10_000 + ttl_us);
    }
}
