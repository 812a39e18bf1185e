//! Step-by-step tests of the Redlock state machine: the test plays the driver, feeding
//! replies and timers by hand and reading the outputs.

use super::*;
use crate::algorithm::Fanout;
use crate::command::{Key, KeyKind, NodeId};
use crate::rng::Dist;

/// The configuration of these tests (shared with `mistakes_tests`).
pub(super) fn config(fanout: Fanout) -> AlgorithmConfig {
    AlgorithmConfig {
        kind: crate::algorithm::AlgorithmKind::Redlock,
        ttl_ms: 1_000,
        drift_factor: 0.01,
        retry_count: 1,
        retry_delay: Dist::fixed(100_000),
        fanout,
        request_timeout_us: 50_000,
        quorum: 3,
        check_elapsed: true,
        max_extensions: 0,
        extend_before_us: 300_000,
        fencing: false,
        fence_rounds: 2,
        fair_after_us: 100_000,
        mistakes: Default::default(),
        wait: None,
    }
}

pub(super) fn now(mono_us: u64) -> Now {
    Now {
        mono_us,
        wall_us: mono_us,
    }
}

/// The commands an algorithm asked to send (shared with `rw_tests`).
pub(super) fn sends(out: &[Output]) -> Vec<(NodeId, ReqId, Cmd)> {
    out.iter()
        .filter_map(|o| match *o {
            Output::Send { node, req, cmd } => Some((node, req, cmd)),
            _ => None,
        })
        .collect()
}

/// The first timer an algorithm armed (shared with `rw_tests`).
pub(super) fn timer(out: &[Output]) -> (TimerId, u64) {
    out.iter()
        .find_map(|o| match *o {
            Output::Timer { id, at_mono_us } => Some((id, at_mono_us)),
            _ => None,
        })
        .expect("a timer was armed")
}

fn machine(fanout: Fanout) -> Redlock {
    Redlock::new(config(fanout), 5, crate::rng::split(1, "test", 0))
}

#[test]
fn parallel_acquire_with_a_quorum_holds_until_t1_plus_ttl_minus_drift() {
    let mut r = machine(Fanout::Parallel);
    let mut out = Vec::new();
    r.acquire(now(1_000), LockId(0), Mode::Exclusive, &mut out);
    let s = sends(&out);
    assert_eq!(s.len(), 5, "asks all nodes at once");
    assert!(s
        .iter()
        .all(|(_, _, c)| matches!(c, Cmd::SetNxPx { ttl_ms: 1_000, key, .. } if key.kind == KeyKind::Plain)));
    assert_eq!(timer(&out).1, 51_000);
    let reqs: Vec<ReqId> = s.iter().map(|&(_, req, _)| req).collect();
    out.clear();
    r.on_reply(now(2_000), reqs[0], Reply::Ok, &mut out);
    r.on_reply(now(2_000), reqs[1], Reply::Nil, &mut out);
    r.on_reply(now(3_000), reqs[2], Reply::Ok, &mut out);
    r.on_reply(now(3_000), reqs[3], Reply::Ok, &mut out);
    assert!(out.is_empty(), "waits for every node: {out:?}");
    r.on_reply(now(4_000), reqs[4], Reply::Nil, &mut out);
    // drift = 1 s * 0.01 + 2 ms = 12 ms; valid until t1 + ttl - drift.
    match out.as_slice() {
        [Output::Acquired {
            valid_until_mono_us,
            nodes,
            attempts,
            ..
        }] => {
            assert_eq!(*valid_until_mono_us, 1_000 + 1_000_000 - 12_000);
            assert_eq!(nodes.iter().collect::<Vec<_>>(), vec![0, 2, 3]);
            assert_eq!(*attempts, 1);
        }
        other => panic!("expected Acquired, got {other:?}"),
    }
    out.clear();
    r.release(now(5_000), &mut out);
    let unlocks = sends(&out);
    assert_eq!(unlocks.len(), 5, "release unlocks every node");
    assert!(unlocks.iter().all(|(_, _, c)| matches!(c, Cmd::DelIfEq { .. })));
    assert!(matches!(out.last(), Some(Output::Released { .. })));
}

#[test]
fn without_a_quorum_it_unlocks_all_nodes_then_retries_then_gives_up() {
    let mut r = machine(Fanout::Parallel);
    let mut out = Vec::new();
    r.acquire(now(0), LockId(0), Mode::Exclusive, &mut out);
    let first_token = match sends(&out)[0].2 {
        Cmd::SetNxPx { token, .. } => token,
        _ => unreachable!(),
    };
    let (id, _) = timer(&out);
    let reqs: Vec<ReqId> = sends(&out).iter().map(|&(_, req, _)| req).collect();
    out.clear();
    r.on_reply(now(1_000), reqs[0], Reply::Ok, &mut out);
    r.on_reply(now(1_000), reqs[1], Reply::Ok, &mut out);
    r.on_timer(now(50_000), id, &mut out);
    let unlocks = sends(&out);
    assert_eq!(
        unlocks.len(),
        5,
        "unlocks all nodes, also those that did not answer"
    );
    assert!(unlocks.iter().all(|(_, _, c)| *c
        == Cmd::DelIfEq {
            key: Key::plain(LockId(0)),
            token: first_token
        }));
    let (retry, at) = timer(&out);
    assert_eq!(at, 150_000, "retries after the retry delay");
    out.clear();
    r.on_reply(now(60_000), reqs[2], Reply::Ok, &mut out);
    assert!(out.is_empty(), "a reply to an old attempt is ignored");
    r.on_timer(now(150_000), retry, &mut out);
    let second = sends(&out);
    assert_eq!(second.len(), 5);
    assert!(
        matches!(second[0].2, Cmd::SetNxPx { token, .. } if token != first_token),
        "new token per attempt"
    );
    let (id, _) = timer(&out);
    out.clear();
    r.on_timer(now(200_000), id, &mut out);
    match out.last() {
        Some(Output::NotAcquired {
            unknown, attempts, ..
        }) => {
            assert!(*unknown, "nodes never answered");
            assert_eq!(*attempts, 2);
        }
        other => panic!("expected NotAcquired, got {other:?}"),
    }
}

#[test]
fn a_quorum_reached_too_late_is_no_lock() {
    let mut r = machine(Fanout::Parallel);
    r.config.request_timeout_us = 2_000_000;
    r.config.retry_count = 0;
    let mut out = Vec::new();
    r.acquire(now(0), LockId(0), Mode::Exclusive, &mut out);
    let reqs: Vec<ReqId> = sends(&out).iter().map(|&(_, req, _)| req).collect();
    out.clear();
    for req in reqs {
        // 990 ms elapsed + 12 ms drift > 1 s ttl: no validity left.
        r.on_reply(now(990_000), req, Reply::Ok, &mut out);
    }
    assert!(
        matches!(out.last(), Some(Output::NotAcquired { unknown: false, .. })),
        "{out:?}"
    );
    assert_eq!(sends(&out).len(), 5, "and it unlocks everywhere");
}

#[test]
fn without_the_elapsed_check_a_late_quorum_counts_and_validity_starts_late() {
    let mut r = machine(Fanout::Parallel);
    r.config.request_timeout_us = 2_000_000;
    r.config.check_elapsed = false;
    let mut out = Vec::new();
    r.acquire(now(0), LockId(0), Mode::Exclusive, &mut out);
    let reqs: Vec<ReqId> = sends(&out).iter().map(|&(_, req, _)| req).collect();
    out.clear();
    for req in reqs {
        r.on_reply(now(990_000), req, Reply::Ok, &mut out);
    }
    assert!(
        matches!(out.last(), Some(Output::Acquired { valid_until_mono_us, .. }) if *valid_until_mono_us == 990_000 + 988_000),
        "{out:?}"
    );
}

#[test]
fn sequential_fanout_asks_one_node_at_a_time_and_skips_a_silent_one() {
    let mut r = machine(Fanout::Sequential);
    let mut out = Vec::new();
    r.acquire(now(0), LockId(3), Mode::Exclusive, &mut out);
    let mut acked = 0;
    for node in 0..5 {
        let s = sends(&out);
        assert_eq!(s.len(), 1, "one request at a time");
        assert_eq!(s[0].0, node);
        let (id, at) = timer(&out);
        let req = s[0].1;
        out.clear();
        if node == 1 {
            r.on_timer(now(at), id, &mut out);
        } else {
            r.on_reply(now(at - 40_000), req, Reply::Ok, &mut out);
            acked += 1;
        }
    }
    assert_eq!(acked, 4);
    assert!(
        matches!(out.last(), Some(Output::Acquired { nodes, .. }) if nodes.iter().collect::<Vec<_>>() == vec![0, 2, 3, 4]),
        "{out:?}"
    );
}

/// WAIT after SET: a node that granted counts only if its replicas acknowledged; a
/// quorum of such nodes holds the lock, else the attempt is undone on every node.
#[test]
fn wait_after_set_counts_a_node_only_once_its_replicas_acknowledged() {
    use crate::algorithm::WaitAfterSet;
    let wait = WaitAfterSet {
        replicas: 1,
        timeout_ms: 100,
    };
    let mut r = machine(Fanout::Parallel);
    r.config.wait = Some(wait);
    r.config.retry_count = 0;
    // Acquires on nodes 0..3 and sends the WAITs; returns the WAITs' requests.
    let lock_round = |r: &mut Redlock, out: &mut Vec<Output>| {
        r.acquire(now(0), LockId(0), Mode::Exclusive, out);
        let reqs: Vec<ReqId> = sends(out).iter().map(|&(_, req, _)| req).collect();
        out.clear();
        for (node, &req) in reqs.iter().enumerate() {
            let reply = if node < 3 { Reply::Ok } else { Reply::Nil };
            r.on_reply(now(1_000), req, reply, out);
        }
        assert!(
            !out.iter().any(|o| matches!(o, Output::Acquired { .. })),
            "not held before the replicas acknowledge: {out:?}"
        );
        let waits = sends(out);
        assert_eq!(waits.len(), 5);
        assert!(waits.iter().all(|(_, _, c)| *c
            == Cmd::Wait {
                lock: LockId(0),
                replicas: 1,
                timeout_ms: 100
            }));
        assert_eq!(
            timer(out).1,
            1_000 + 100_000 + 50_000,
            "the server's timeout, then a reply's"
        );
        let reqs: Vec<ReqId> = waits.iter().map(|&(_, req, _)| req).collect();
        out.clear();
        reqs
    };
    let mut out = Vec::new();
    // Nodes 0, 1 and 2 granted and their replicas have the key: held on them alone
    // (node 3's acknowledgement does not count: it never granted).
    let reqs = lock_round(&mut r, &mut out);
    for (node, &req) in reqs.iter().enumerate() {
        r.on_reply(now(2_000), req, Reply::Int(i64::from(node != 4)), &mut out);
    }
    match out.as_slice() {
        [Output::Acquired { nodes, .. }] => assert_eq!(nodes.iter().collect::<Vec<_>>(), vec![0, 1, 2]),
        other => panic!("expected Acquired, got {other:?}"),
    }
    out.clear();
    r.release(now(3_000), &mut out);
    out.clear();
    // Node 2's replica did not acknowledge in time: two of three, no quorum; undone.
    let reqs = lock_round(&mut r, &mut out);
    for (node, &req) in reqs.iter().enumerate() {
        r.on_reply(now(2_000), req, Reply::Int(i64::from(node < 2)), &mut out);
    }
    assert_eq!(sends(&out).len(), 5, "unlocks every node");
    assert!(sends(&out)
        .iter()
        .all(|(_, _, c)| matches!(c, Cmd::DelIfEq { .. })));
    assert!(
        matches!(out.last(), Some(Output::NotAcquired { unknown: false, .. })),
        "{out:?}"
    );
}
