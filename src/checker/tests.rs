//! The checker on hand-written histories.

use super::*;
use crate::history::{FaultEvent, Op};

fn op(t: u64, client: usize, kind: OpKind) -> Op {
    Op::new(t, client, kind, "L0", Mode::Exclusive)
}
fn acq(t: u64, c: usize) -> Event {
    Event::Invoke(op(t, c, OpKind::Acquire))
}
fn ok(t: u64, c: usize, valid_until: u64) -> Event {
    let mut o = op(t, c, OpKind::Acquire);
    o.valid_until_us = Some(valid_until);
    o.token = Some(format!("tok{c}").into());
    Event::Ok(o)
}
fn rel(t: u64, c: usize) -> Event {
    Event::Invoke(op(t, c, OpKind::Release))
}
fn rel_ok(t: u64, c: usize) -> Event {
    Event::Ok(op(t, c, OpKind::Release))
}

#[test]
fn overlapping_holds_are_a_violation_with_the_overlap_interval() {
    let h = [
        acq(0, 1),
        ok(10, 1, 100),
        acq(20, 2),
        ok(30, 2, 200),
        rel(60, 1),
        rel_ok(61, 1),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    let v = &f.violations[0];
    assert_eq!((v.first.client, v.second.client), (1, 2));
    assert_eq!((v.overlap_start_us, v.overlap_end_us), (30, 60));
    assert_eq!(v.first.ended_by, HoldEnd::Release);
    assert_eq!((v.second.end_us, v.second.ended_by), (200, HoldEnd::Validity));
}

#[test]
fn touching_holds_do_not_overlap() {
    let h = [
        acq(0, 1),
        ok(10, 1, 100),
        rel(50, 1),
        acq(50, 2),
        rel_ok(50, 1),
        ok(50, 2, 90),
    ];
    assert!(check(&h).unwrap().is_safe());
}

#[test]
fn a_hold_ends_at_its_validity_even_without_a_release() {
    // Client 1's validity ends at 40; client 2 acquires at 40: no overlap. Its late
    // release at 70 does not extend the hold.
    let h = [acq(0, 1), ok(10, 1, 40), acq(20, 2), ok(40, 2, 90), rel(70, 1)];
    let f = check(&h).unwrap();
    assert!(f.is_safe(), "{:?}", f.violations);
    let first = f.holds.iter().find(|h| h.client == 1).unwrap();
    assert_eq!((first.end_us, first.ended_by), (40, HoldEnd::Validity));
}

#[test]
fn a_validity_one_microsecond_too_long_is_caught() {
    let h = [acq(0, 1), ok(10, 1, 41), acq(20, 2), ok(40, 2, 90)];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    assert_eq!(f.violations[0].overlap_us(), 1);
}

#[test]
fn failed_and_unknown_acquires_hold_nothing_but_count_against_availability() {
    let h = [
        acq(0, 1),
        acq(0, 2),
        Event::Info(op(10, 1, OpKind::Acquire)),
        Event::Fail(op(10, 2, OpKind::Acquire)),
        acq(11, 3),
        ok(12, 3, 100),
    ];
    let f = check(&h).unwrap();
    assert!(f.is_safe());
    assert_eq!(f.holds.len(), 1);
    assert_eq!(
        (
            f.stats.acquires,
            f.stats.acquired,
            f.stats.failed,
            f.stats.unknown
        ),
        (3, 1, 1, 1)
    );
    assert!((f.stats.availability - 1.0 / 3.0).abs() < 1e-9);
    assert_eq!(f.stats.latency_p50_us, 1);
}

#[test]
fn different_locks_never_conflict() {
    let mut other = ok(30, 2, 200);
    if let Event::Ok(o) = &mut other {
        o.lock = "L1".into();
    }
    let mut inv = acq(20, 2);
    if let Event::Invoke(o) = &mut inv {
        o.lock = "L1".into();
    }
    assert!(check(&[acq(0, 1), ok(10, 1, 100), inv, other]).unwrap().is_safe());
}

#[test]
fn three_overlapping_holds_give_a_violation_each_for_the_later_two() {
    let h = [
        acq(0, 1),
        acq(0, 2),
        acq(0, 3),
        ok(1, 1, 100),
        ok(2, 2, 100),
        ok(3, 3, 100),
    ];
    assert_eq!(check(&h).unwrap().violations.len(), 2);
}

#[test]
fn violations_name_the_faults_around_them() {
    let fault = |t, action| {
        Event::Fault(FaultEvent {
            t_us: t,
            id: 7,
            action,
            origin: crate::fault::Origin::Script,
            fault: crate::fault::Fault::Partition {
                nodes: vec![0],
                clients: vec![1],
                direction: Default::default(),
            },
        })
    };
    let h = [
        acq(0, 1),
        ok(10, 1, 100),
        fault(15, FaultAction::Start),
        acq(20, 2),
        ok(30, 2, 200),
        fault(35, FaultAction::End),
    ];
    assert_eq!(check(&h).unwrap().violations[0].faults, vec![7]);
}

#[test]
fn malformed_histories_are_errors_not_findings() {
    let cases: [(&[Event], &str, usize); 4] = [
        (&[ok(1, 1, 5)], "never invoked", 1),
        (&[acq(0, 1), acq(1, 1)], "still open", 2),
        (
            &[acq(5, 1), Event::Fail(op(4, 1, OpKind::Acquire))],
            "backwards",
            2,
        ),
        (&[acq(0, 1), rel_ok(1, 1)], "invoked Acquire", 2),
    ];
    for (h, needle, line) in cases {
        let e = check(h).unwrap_err();
        assert!(e.message.contains(needle), "{e}");
        assert_eq!(e.line, line, "{e}");
    }
}

fn meta(bound: u64) -> Event {
    Event::Meta(Meta {
        t_us: 0,
        scenario: "t".into(),
        seed: 1,
        algorithm: "redlock".into(),
        nodes: 5,
        clients: 2,
        ttl_ms: 1,
        liveness_bound_us: bound,
        writer_wait_bound_us: None,
        worker: None,
        probe_client: None,
        cut: None,
        deployment: None,
        mitigations: None,
    })
}

fn probe(e: Event) -> Event {
    match e {
        Event::Invoke(mut o) => {
            o.phase = Phase::Probe;
            Event::Invoke(o)
        }
        Event::Ok(mut o) => {
            o.phase = Phase::Probe;
            Event::Ok(o)
        }
        Event::Fail(mut o) => {
            o.phase = Phase::Probe;
            Event::Fail(o)
        }
        other => other,
    }
}

#[test]
fn a_probe_within_the_bound_is_live_and_a_slow_one_is_a_deadlock() {
    let run = |ok_at: u64| {
        check(&[
            meta(100),
            Event::Heal { t_us: 10 },
            probe(acq(20, 0)),
            probe(Event::Fail(op(60, 0, OpKind::Acquire))),
            probe(acq(60, 0)),
            probe(ok(ok_at, 0, 1_000)),
        ])
        .unwrap()
    };
    assert!(run(120).is_live());
    let late = run(121);
    assert_eq!(
        late.liveness,
        vec![LivenessFinding::Deadlock {
            lock: "L0".into(),
            probe_start_us: 20,
            waited_us: 101,
            bound_us: 100,
            acquired: true
        }]
    );
    assert_eq!(late.stats.acquires, 0, "probes are not workload");
}

#[test]
fn a_heal_without_any_probe_is_a_liveness_finding() {
    let f = check(&[meta(100), Event::Heal { t_us: 10 }, acq(20, 1)]).unwrap();
    assert_eq!(f.liveness, vec![LivenessFinding::NoProbe { heal_us: 10 }]);
}

fn belief(t: u64, c: usize, token: &str, valid_until: u64) -> Event {
    Event::Belief(crate::history::Belief {
        t_us: t,
        client: c,
        lock: "L0".into(),
        token: Some(token.into()),
        valid_until_us: valid_until,
    })
}

#[test]
fn a_belief_moves_the_end_of_the_hold_either_way() {
    // Client 1 acquires until 40; client 2 acquires at 50.
    let base = [acq(0, 1), ok(10, 1, 40), acq(45, 2), ok(50, 2, 90)];
    assert!(check(&base).unwrap().is_safe());
    // Its clock slowed at 20: it now believes until 60, past client 2's acquisition.
    let mut later = base.to_vec();
    later.insert(2, belief(20, 1, "tok1", 60));
    let f = check(&later).unwrap();
    assert_eq!(f.violations.len(), 1);
    assert_eq!(
        (f.violations[0].overlap_start_us, f.violations[0].overlap_end_us),
        (50, 60)
    );
    // A second belief at 30 takes it back to 45: safe again.
    let mut back = later.clone();
    back.insert(3, belief(30, 1, "tok1", 45));
    let f = check(&back).unwrap();
    assert!(f.is_safe(), "{:?}", f.violations);
    let first = f.holds.iter().find(|h| h.client == 1).unwrap();
    assert_eq!((first.end_us, first.ended_by), (45, HoldEnd::Validity));
    // A belief earlier than the acquisition's deadline shortens the hold; a release
    // before the belief ends it there.
    let h = [
        acq(0, 1),
        ok(10, 1, 100),
        belief(20, 1, "tok1", 30),
        acq(35, 2),
        ok(40, 2, 90),
        rel(95, 1),
    ];
    assert!(check(&h).unwrap().is_safe());
    let h = [
        acq(0, 1),
        ok(10, 1, 40),
        belief(20, 1, "tok1", 80),
        rel(30, 1),
        acq(31, 2),
        ok(32, 2, 90),
    ];
    assert!(check(&h).unwrap().is_safe());
}

#[test]
fn a_belief_after_the_validity_ran_out_starts_a_new_hold() {
    // Client 1's validity ends at 40; at 60 it believes again, until 100 (a clock that
    // went back): it overlaps client 2 from 60.
    let h = [
        acq(0, 1),
        ok(10, 1, 40),
        acq(45, 2),
        ok(50, 2, 90),
        belief(60, 1, "tok1", 100),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    assert_eq!(f.violations[0].overlap_start_us, 60);
    // A belief that is over already changes nothing.
    let h = [
        acq(0, 1),
        ok(10, 1, 40),
        acq(45, 2),
        ok(50, 2, 90),
        belief(60, 1, "tok1", 55),
    ];
    assert!(check(&h).unwrap().is_safe());
}

#[test]
fn a_belief_about_a_hold_that_is_not_open_is_malformed() {
    let never = [acq(0, 1), belief(5, 1, "tok1", 50)];
    let e = check(&never).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(e.message.contains("without holding"), "{e}");
    let released = [
        acq(0, 1),
        ok(10, 1, 40),
        rel(20, 1),
        rel_ok(21, 1),
        belief(25, 1, "tok1", 50),
    ];
    assert_eq!(check(&released).unwrap_err().line, 5);
    let other_token = [acq(0, 1), ok(10, 1, 40), belief(20, 1, "tok9", 50)];
    let e = check(&other_token).unwrap_err();
    assert!(e.message.contains("tok9"), "{e}");
    let other_lock = [acq(0, 1), ok(10, 1, 40), {
        let mut b = belief(20, 1, "tok1", 50);
        if let Event::Belief(b) = &mut b {
            b.lock = "L1".into();
        }
        b
    }];
    assert!(check(&other_lock).is_err());
}

#[test]
fn a_history_file_checked_in_one_pass_gives_what_reading_it_whole_does() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.jsonl");
    let write = |events: &[Event], tail: &str| {
        let mut text = Vec::new();
        crate::history::write_jsonl(events, &mut text).unwrap();
        text.extend_from_slice(tail.as_bytes());
        std::fs::write(&path, text).unwrap();
    };
    // The one pass keeps no holds (nor does it draw them).
    let whole = || {
        crate::history::read_jsonl(&path).map(|events| {
            check(&events).map(|mut f| {
                f.holds.clear();
                f
            })
        })
    };
    let debug = |r: &Result<Result<Findings, Malformed>, crate::history::HistoryError>| format!("{r:?}");

    // Well formed, with a violation.
    write(
        &[acq(0, 1), ok(10, 1, 100), acq(20, 2), ok(30, 2, 200), rel(60, 1)],
        "\n",
    );
    let one_pass = check_jsonl(&path);
    assert_eq!(debug(&one_pass), debug(&whole()));
    assert_eq!(one_pass.unwrap().unwrap().violations.len(), 1);
    // Stale writes: client 1's write after its hold, over client 2's. Naming client 1's
    // own token, it is judged online; naming client 2's, it takes the second pass, which
    // keeps every hold.
    let write_of = |t: u64, c: usize, token: &str| {
        Event::Write(crate::history::ResourceWrite {
            t_us: t,
            client: c,
            lock: "L0".into(),
            token: token.into(),
            fence: None,
            accepted: true,
        })
    };
    for token in ["tok1", "tok2"] {
        let events = [
            acq(0, 1),
            ok(10, 1, 50),
            acq(60, 2),
            ok(70, 2, 200),
            write_of(80, 2, "tok2"),
            write_of(90, 1, token),
        ];
        write(&events, "");
        let one_pass = check_jsonl(&path);
        assert_eq!(debug(&one_pass), debug(&whole()));
        assert_eq!(one_pass.unwrap().unwrap().resource_violations.len(), 1, "{token}");
    }
    // Malformed (a completion never invoked), then fine.
    write(&[acq(0, 1), rel_ok(5, 2), acq(20, 2)], "");
    assert!(check_jsonl(&path).unwrap().is_err());
    assert_eq!(debug(&check_jsonl(&path)), debug(&whole()));
    // Malformed, then a line that is not an event: the unreadable line is the error.
    write(&[acq(0, 1), rel_ok(5, 2)], "{\"type\":\"nope\"}\n");
    assert!(check_jsonl(&path).is_err());
    assert_eq!(debug(&check_jsonl(&path)), debug(&whole()));
    // Node lines, read borrowed: well formed, a node out of range, time going back.
    let node = |t: u64, n: usize| {
        Event::Node(crate::history::NodeEvent {
            t_us: t,
            node: n,
            lock: "L0".into(),
            key: "L0".into(),
            action: crate::history::NodeAction::Set,
            client: Some(1),
            token: Some("tok1".into()),
            ttl_ms: Some(100),
            checked: None,
            expired_at_us: None,
            expire_at_node_us: Some(1_000),
            lag_us: None,
            member: None,
        })
    };
    for (events, well_formed) in [
        (
            vec![acq(0, 1), node(3, 0), ok(10, 1, 100), node(12, 1), rel(60, 1)],
            true,
        ),
        (
            vec![acq(0, 1), node(3, crate::limits::MAX_NODES), ok(10, 1, 100)],
            false,
        ),
        (vec![acq(0, 1), node(3, 0), ok(10, 1, 100), node(9, 1)], false),
    ] {
        write(&events, "");
        let one_pass = check_jsonl(&path);
        assert_eq!(debug(&one_pass), debug(&whole()));
        assert_eq!(one_pass.unwrap().is_ok(), well_formed, "{events:?}");
    }
}

/// A worker's hold with no expiry (an `ok` acquire without `valid_until_us`).
fn ok_until_released(t: u64, c: usize) -> Event {
    let mut o = op(t, c, OpKind::Acquire);
    o.token = Some(format!("tok{c}").into());
    Event::Ok(o)
}

fn lost(t: u64, c: usize) -> Event {
    Event::Lost(crate::history::Lost {
        t_us: t,
        client: c,
        lock: "L0".into(),
        token: Some(format!("tok{c}").into()),
    })
}

#[test]
fn a_hold_without_expiry_lasts_until_its_release_and_a_lost_ends_it() {
    // Client 1 holds with no expiry from 10 to its release at 500: client 2's hold at
    // 300 overlaps it, however long after a ttl that would be.
    let h = [
        acq(0, 1),
        ok_until_released(10, 1),
        acq(20, 2),
        ok(300, 2, 400),
        rel(500, 1),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1, "{:?}", f.holds);
    assert_eq!(
        (f.violations[0].overlap_start_us, f.violations[0].overlap_end_us),
        (300, 400)
    );
    // The same, but client 1's library reports the lock lost at 300: no overlap, and
    // the hold says why it ended. A lost after the release changes nothing.
    let h = [
        acq(0, 1),
        ok_until_released(10, 1),
        acq(20, 2),
        lost(300, 1),
        ok(300, 2, 400),
        rel(500, 1),
        rel_ok(501, 1),
        lost(502, 1),
    ];
    let f = check(&h).unwrap();
    assert!(f.is_safe(), "{:?}", f.violations);
    let first = f.holds.iter().find(|h| h.client == 1).unwrap();
    assert_eq!((first.end_us, first.ended_by), (300, HoldEnd::Lost));
    // A lost one microsecond late is a violation.
    let h = [
        acq(0, 1),
        ok_until_released(10, 1),
        acq(20, 2),
        ok(300, 2, 400),
        lost(301, 1),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    assert_eq!(f.violations[0].overlap_end_us, 301);
}

#[test]
fn a_liveness_finding_over_a_driver_stall_is_set_aside_as_the_harnesss() {
    use crate::history::DriverStall;
    let slow_probe = |stall: Option<DriverStall>| {
        let mut h = vec![meta(100), Event::Heal { t_us: 10 }, probe(acq(20, 0))];
        h.extend(stall.map(Event::DriverStall));
        h.extend([probe(Event::Fail(op(300, 0, OpKind::Acquire)))]);
        check(&h).unwrap()
    };
    let blamed = slow_probe(None);
    assert!(
        !blamed.is_live(),
        "a probe that never got in is the lock's deadlock"
    );
    assert!(blamed.liveness_set_aside.is_empty());
    // The driver did not run from 40 to 290 us: nobody could get in then.
    let stalled = slow_probe(Some(DriverStall {
        t_us: 290,
        lag_us: 250,
    }));
    assert!(stalled.is_live(), "{:?}", stalled.liveness);
    assert_eq!(stalled.liveness_set_aside.len(), 1);
    assert_eq!(stalled.liveness_set_aside[0].kind(), "deadlock");
    assert_eq!(stalled.driver_stalls.len(), 1);
    // A stall before the window explains nothing.
    let before = check(&[
        meta(100),
        Event::DriverStall(DriverStall { t_us: 5, lag_us: 5 }),
        Event::Heal { t_us: 10 },
        probe(acq(20, 0)),
        probe(Event::Fail(op(300, 0, OpKind::Acquire))),
    ])
    .unwrap();
    assert!(!before.is_live());
    // The line reads back as written.
    let line = serde_json::to_string(&Event::DriverStall(DriverStall {
        t_us: 290,
        lag_us: 250,
    }))
    .unwrap();
    assert_eq!(line, r#"{"type":"driver_stall","t_us":290,"lag_us":250}"#);
}
