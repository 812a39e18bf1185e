//! Step-by-step tests of the read-write, fair, fencing and extension paths of the
//! Redlock state machine; the test plays the driver.

use super::tests::{sends, timer};
use super::*;
use crate::algorithm::{AlgorithmKind, Fanout};
use crate::command::Key;
use crate::rng::Dist;

fn config(kind: AlgorithmKind) -> AlgorithmConfig {
    AlgorithmConfig {
        kind,
        ttl_ms: 1_000,
        drift_factor: 0.01,
        retry_count: 1,
        retry_delay: Dist::fixed(100_000),
        fanout: Fanout::Parallel,
        request_timeout_us: 50_000,
        quorum: 3,
        check_elapsed: true,
        max_extensions: 2,
        extend_before_us: 300_000,
        fencing: false,
        fence_rounds: 2,
        fair_after_us: 100_000,
        mistakes: Default::default(),
        wait: None,
    }
}

/// Wall clock 1 s ahead of the monotonic one, so tests can tell them apart.
fn now(mono_us: u64) -> Now {
    Now {
        mono_us,
        wall_us: mono_us + 1_000_000_000,
    }
}

fn machine(config: AlgorithmConfig) -> Redlock {
    Redlock::new(config, 5, crate::rng::split(1, "test", 0))
}

/// Answers every request in `out` with `replies[node]` at `t`, returning what came out.
fn answer(r: &mut Redlock, out: &[Output], t: u64, replies: [Reply; 5]) -> Vec<Output> {
    let mut next = Vec::new();
    for (node, req, _) in sends(out) {
        r.on_reply(now(t), req, replies[node], &mut next);
    }
    next
}

const ONE: Reply = Reply::Int(1);

#[test]
fn a_reader_sends_seed_000s_reader_script_with_its_wall_clock_expiry_and_releases_by_zrem() {
    let mut r = machine(config(AlgorithmKind::RwRedlock));
    let mut out = Vec::new();
    r.acquire(now(5_000), LockId(0), Mode::Read, &mut out);
    let s = sends(&out);
    assert_eq!(s.len(), 5);
    // now = wall 1_000_005 ms; exp_at = now + ttl.
    assert!(s.iter().all(|(_, _, c)| matches!(
        c,
        Cmd::ReadLock {
            exp_at_ms: 1_001_005,
            ..
        }
    )));
    let out = answer(&mut r, &out, 6_000, [ONE, ONE, Reply::Int(2), ONE, Reply::Int(2)]);
    let Some(Output::Acquired {
        token,
        valid_until_mono_us,
        fence,
        ..
    }) = out.last().copied()
    else {
        panic!("expected Acquired, got {out:?}");
    };
    assert_eq!(valid_until_mono_us, 5_000 + 1_000_000 - 12_000);
    assert_eq!(fence, None, "readers are not fenced");
    let mut out = Vec::new();
    r.release(now(7_000), &mut out);
    assert_eq!(sends(&out).len(), 5);
    assert!(sends(&out).iter().all(|(_, _, c)| *c
        == Cmd::ZRem {
            key: Key::readers(LockId(0)),
            token
        }));
}

#[test]
fn a_writer_refused_by_readers_unlocks_its_writer_key_everywhere_and_retries() {
    let mut r = machine(config(AlgorithmKind::RwRedlock));
    let mut out = Vec::new();
    r.acquire(now(0), LockId(1), Mode::Write, &mut out);
    let Cmd::WriteLock {
        token,
        now_ms,
        ttl_ms,
        ..
    } = sends(&out)[0].2
    else {
        panic!("expected the writer script");
    };
    assert_eq!((now_ms, ttl_ms), (1_000_000, 1_000), "now from the wall clock");
    let two = Reply::Int(2);
    let out = answer(&mut r, &out, 1_000, [ONE, ONE, two, two, two]);
    let unlocks = sends(&out);
    assert_eq!(unlocks.len(), 5);
    assert!(unlocks.iter().all(|(_, _, c)| *c
        == Cmd::DelIfEq {
            key: Key::writer(LockId(1)),
            token
        }));
    assert_eq!(timer(&out).1, 101_000, "retry after the delay");
}

#[test]
fn fencing_takes_the_max_of_a_quorum_then_raises_a_quorum_to_it() {
    let mut c = config(AlgorithmKind::Redlock);
    c.fencing = true;
    let mut r = machine(c);
    let mut out = Vec::new();
    r.acquire(now(0), LockId(0), Mode::Exclusive, &mut out);
    let out = answer(&mut r, &out, 1_000, [Reply::Ok; 5]);
    assert!(sends(&out).iter().all(|(_, _, c)| matches!(c, Cmd::Incr { .. })));
    let (id, _) = timer(&out);
    // Three counters answer; two nodes stay silent until the timeout.
    let mut next = Vec::new();
    for (node, req, _) in sends(&out).into_iter().take(3) {
        r.on_reply(now(2_000), req, Reply::Int([3, 7, 5][node]), &mut next);
    }
    assert!(next.is_empty(), "waits for the timeout");
    r.on_timer(now(51_000), id, &mut next);
    let raises = sends(&next);
    assert_eq!(raises.len(), 5);
    assert!(raises
        .iter()
        .all(|(_, _, c)| matches!(c, Cmd::RaiseTo { value: 7, .. })));
    let out = answer(&mut r, &next, 52_000, [Reply::Int(7); 5]);
    assert!(
        matches!(
            out.last(),
            Some(Output::Acquired {
                fence: Some(7),
                valid_until_mono_us: 988_000,
                ..
            })
        ),
        "{out:?}"
    );
}

#[test]
fn fencing_rounds_that_end_after_the_validity_are_no_lock() {
    let mut c = config(AlgorithmKind::Redlock);
    c.fencing = true;
    c.retry_count = 0;
    c.request_timeout_us = 2_000_000;
    let mut r = machine(c);
    let mut out = Vec::new();
    r.acquire(now(0), LockId(0), Mode::Exclusive, &mut out);
    let out = answer(&mut r, &out, 1_000, [Reply::Ok; 5]);
    let out = answer(&mut r, &out, 990_000, [Reply::Int(1); 5]);
    assert!(
        matches!(out.last(), Some(Output::NotAcquired { .. })),
        "988 ms of validity are over: {out:?}"
    );
    assert!(sends(&out)
        .iter()
        .all(|(_, _, c)| matches!(c, Cmd::DelIfEq { .. })));
}

fn holding(kind: AlgorithmKind, mode: Mode) -> (Redlock, Token) {
    let mut r = machine(config(kind));
    let mut out = Vec::new();
    r.acquire(now(0), LockId(0), mode, &mut out);
    let out = answer(&mut r, &out, 1_000, [Reply::Ok, ONE, ONE, ONE, ONE]);
    match out.last() {
        Some(&Output::Acquired { token, .. }) => (r, token),
        other => panic!("expected Acquired, got {other:?}"),
    }
}

#[test]
fn an_extension_on_a_quorum_in_time_moves_the_validity() {
    let (mut r, token) = holding(AlgorithmKind::RwRedlock, Mode::Write);
    let mut out = Vec::new();
    r.extend(now(700_000), &mut out);
    assert!(sends(&out).iter().all(|(_, _, c)| *c
        == Cmd::PExpireIfEq {
            key: Key::writer(LockId(0)),
            token,
            ttl_ms: 1_000
        }));
    let zero = Reply::Int(0);
    let out = answer(&mut r, &out, 701_000, [ONE, ONE, zero, ONE, zero]);
    assert!(
        matches!(
            out.last(),
            Some(Output::Extended {
                valid_until_mono_us: 1_688_000,
                ..
            })
        ),
        "{out:?}"
    );
}

#[test]
fn a_reader_extends_by_moving_its_score() {
    let (mut r, token) = holding(AlgorithmKind::RwRedlock, Mode::Read);
    let mut out = Vec::new();
    r.extend(now(700_000), &mut out);
    assert!(sends(&out).iter().all(|(_, _, c)| *c
        == Cmd::ExtendRead {
            lock: LockId(0),
            token,
            now_ms: 1_000_700,
            exp_at_ms: 1_001_700
        }));
}

#[test]
fn a_failed_extension_leaves_the_hold_to_its_earlier_deadline() {
    let (mut r, token) = holding(AlgorithmKind::Redlock, Mode::Exclusive);
    let mut out = Vec::new();
    r.extend(now(700_000), &mut out);
    let zero = Reply::Int(0);
    let out = answer(&mut r, &out, 701_000, [ONE, ONE, zero, zero, zero]);
    assert_eq!(
        out,
        vec![Output::NotExtended { token }],
        "no unlock: keys expire on their own"
    );
    // A quorum too late is no extension either.
    let mut out = Vec::new();
    r.extend(now(900_000), &mut out);
    let out = answer(&mut r, &out, 990_000, [ONE; 5]);
    assert_eq!(
        out,
        vec![Output::NotExtended { token }],
        "validity ended at 988 ms"
    );
    let mut out = Vec::new();
    r.release(now(990_000), &mut out);
    assert!(
        matches!(out.last(), Some(Output::Released { .. })),
        "still releasable"
    );
}

#[test]
fn fair_waiting_keeps_the_ticket_and_does_not_use_up_retries() {
    let mut c = config(AlgorithmKind::FairRwRedlock);
    c.retry_count = 0;
    let mut r = machine(c);
    let mut out = Vec::new();
    r.acquire(now(0), LockId(0), Mode::Write, &mut out);
    let Cmd::FairWriteLock { fair: first, .. } = sends(&out)[0].2 else {
        panic!("expected the fair writer script");
    };
    assert!(!first.enqueue, "has not waited yet");
    assert!(first.ticket.write);
    let four = Reply::Int(4);
    for attempt in 0..3u64 {
        let t = attempt * 150_000;
        let out2 = answer(&mut r, &out, t + 1_000, [four, four, four, Reply::Int(2), four]);
        assert!(
            !out2.iter().any(|o| matches!(o, Output::NotAcquired { .. })),
            "a queued attempt is no failure"
        );
        let (id, at) = timer(&out2);
        out.clear();
        r.on_timer(now(at), id, &mut out);
        let Cmd::FairWriteLock { fair, token, .. } = sends(&out)[0].2 else {
            panic!("expected the fair writer script");
        };
        assert_eq!(fair.ticket, first.ticket, "same place in the queue");
        assert_eq!(fair.queued_at_ms, first.queued_at_ms);
        assert!(fair.enqueue, "waited over fair_after");
        assert_ne!(token, first.ticket.id, "a new lock token per attempt");
    }
    let out = answer(&mut r, &out, 500_000, [ONE; 5]);
    assert!(matches!(out.last(), Some(Output::Acquired { .. })));
    assert!(
        sends(&out).iter().all(|(_, _, c)| *c
            == Cmd::FairLeave {
                lock: LockId(0),
                ticket: first.ticket
            }),
        "leaves the queue everywhere"
    );
}

#[test]
fn fair_attempts_without_a_quorum_of_answers_do_count() {
    let mut c = config(AlgorithmKind::FairRwRedlock);
    c.retry_count = 0;
    let mut r = machine(c);
    let mut out = Vec::new();
    r.acquire(now(0), LockId(0), Mode::Read, &mut out);
    let (id, _) = timer(&out);
    let mut next = Vec::new();
    let s = sends(&out);
    r.on_reply(now(1_000), s[0].1, Reply::Int(4), &mut next);
    r.on_reply(now(1_000), s[1].1, Reply::Int(4), &mut next);
    r.on_timer(now(50_000), id, &mut next);
    assert!(
        matches!(next.last(), Some(Output::NotAcquired { unknown: true, .. })),
        "{next:?}"
    );
}
