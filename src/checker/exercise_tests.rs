//! The exercise judge on hand-written histories: each fault kind meets a hold or does
//! not, and the rule over a seed.

use super::*;
use crate::algorithm::Mode;
use crate::checker::check;
use crate::fault::{CutDirection, PlannedFault};
use crate::history::{Event, Op, OpKind};

fn op(t: u64, client: usize, kind: OpKind) -> Op {
    Op::new(t, client, kind, "L0", Mode::Exclusive)
}

/// Client `c` acquires at `from` on `nodes` (none: not reported), valid until `until`.
fn hold(c: usize, from: u64, until: u64, nodes: Option<&[usize]>) -> [Event; 2] {
    let mut ok = op(from, c, OpKind::Acquire);
    ok.valid_until_us = Some(until);
    ok.token = Some(format!("tok{c}-{from}").into());
    ok.nodes = nodes.map(|n| n.iter().collect());
    [
        Event::Invoke(op(from.saturating_sub(1), c, OpKind::Acquire)),
        Event::Ok(ok),
    ]
}

fn release(c: usize, t: u64) -> [Event; 2] {
    [
        Event::Invoke(op(t, c, OpKind::Release)),
        Event::Ok(op(t, c, OpKind::Release)),
    ]
}

fn fault(t: u64, id: usize, action: FaultAction, origin: Origin, fault: &Fault) -> Event {
    Event::Fault(FaultEvent {
        t_us: t,
        id,
        action,
        origin,
        fault: fault.clone(),
    })
}

/// `fault` from `start` to `end` (the same time for a jump), scripted, id 0.
fn span(f: &Fault, start: u64, end: u64) -> [Event; 2] {
    [
        fault(start, 0, FaultAction::Start, Origin::Script, f),
        fault(end, 0, FaultAction::End, Origin::Script, f),
    ]
}

/// The events sorted by time (stable, so an invoke stays before its ok).
fn history(parts: &[&[Event]]) -> Vec<Event> {
    let mut all: Vec<Event> = parts.iter().flat_map(|p| p.iter().cloned()).collect();
    all.sort_by_key(Event::t_us);
    all
}

/// How many holds the history's only fault met.
fn met(parts: &[&[Event]]) -> u64 {
    let f = check(&history(parts)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.exercise.faults.len(), 1, "{:?}", f.exercise);
    f.exercise.faults[0].holds
}

const CRASH_2: Fault = Fault::Crash {
    node: 2,
    power_loss: false,
};

#[test]
fn a_crash_meets_a_hold_on_its_node_in_force_when_it_starts() {
    let on_2 = hold(0, 10, 1_000, Some(&[0, 1, 2]));
    assert_eq!(met(&[&on_2, &span(&CRASH_2, 500, 600)]), 1);
    // Restarted at once: still in force at that instant.
    assert_eq!(met(&[&on_2, &span(&CRASH_2, 500, 500)]), 1);
}

#[test]
fn a_crash_misses_holds_on_other_nodes_and_holds_over_before_it() {
    let elsewhere = hold(0, 10, 1_000, Some(&[0, 1, 3]));
    assert_eq!(met(&[&elsewhere, &span(&CRASH_2, 500, 600)]), 0);
    let expired = hold(0, 10, 400, Some(&[0, 1, 2]));
    assert_eq!(met(&[&expired, &span(&CRASH_2, 500, 600)]), 0, "validity over");
    let mut released = hold(0, 10, 1_000, Some(&[0, 1, 2])).to_vec();
    released.extend(release(0, 450));
    assert_eq!(met(&[&released, &span(&CRASH_2, 500, 600)]), 0, "released before");
    let after = hold(0, 700, 1_000, Some(&[0, 1, 2]));
    assert_eq!(met(&[&after, &span(&CRASH_2, 500, 600)]), 0, "after the restart");
}

#[test]
fn a_hold_acquired_while_a_node_is_down_meets_the_crash() {
    // The lock was taken despite the crash: fault tolerance was exercised.
    let during = hold(0, 550, 1_000, Some(&[0, 1, 3]));
    assert_eq!(met(&[&during, &span(&CRASH_2, 500, 600)]), 1);
    let failover = Fault::Failover { node: 0 };
    assert_eq!(
        met(&[&hold(0, 550, 1_000, Some(&[1, 2, 3])), &span(&failover, 500, 600)]),
        1
    );
}

#[test]
fn a_node_clock_jump_meets_only_holds_on_its_node_in_force_at_the_jump() {
    let jump = Fault::ClockJump {
        node: Some(2),
        client: None,
        by_us: 10_000_000,
    };
    assert_eq!(
        met(&[&hold(0, 10, 1_000, Some(&[2, 3, 4])), &span(&jump, 500, 500)]),
        1
    );
    assert_eq!(
        met(&[&hold(0, 10, 1_000, Some(&[0, 1, 3])), &span(&jump, 500, 500)]),
        0
    );
    assert_eq!(
        met(&[&hold(0, 10, 400, Some(&[2])), &span(&jump, 500, 500)]),
        0,
        "ended before the jump"
    );
    assert_eq!(
        met(&[&hold(0, 600, 1_000, Some(&[2])), &span(&jump, 500, 500)]),
        0,
        "started after the jump: its keys were set by the moved clock"
    );
}

#[test]
fn a_node_clock_rate_needs_a_hold_on_its_node_even_one_acquired_during_it() {
    let rate = Fault::ClockRate {
        node: Some(1),
        client: None,
        rate: 2.0,
    };
    assert_eq!(
        met(&[&hold(0, 550, 900, Some(&[1, 2, 3])), &span(&rate, 500, 600)]),
        1
    );
    assert_eq!(
        met(&[&hold(0, 550, 900, Some(&[2, 3, 4])), &span(&rate, 500, 600)]),
        0
    );
}

#[test]
fn a_node_pause_is_a_node_out_of_service() {
    let pause = Fault::Pause {
        node: Some(4),
        client: None,
        point: None,
    };
    assert_eq!(
        met(&[&hold(0, 10, 900, Some(&[2, 3, 4])), &span(&pause, 500, 600)]),
        1
    );
    assert_eq!(
        met(&[&hold(0, 10, 900, Some(&[0, 1, 2])), &span(&pause, 500, 600)]),
        0
    );
    assert_eq!(
        met(&[&hold(0, 520, 900, Some(&[0, 1, 2])), &span(&pause, 500, 600)]),
        1
    );
}

#[test]
fn a_client_pause_meets_only_that_clients_holds() {
    let pause = Fault::Pause {
        node: None,
        client: Some(1),
        point: None,
    };
    assert_eq!(met(&[&hold(1, 10, 900, Some(&[0])), &span(&pause, 500, 600)]), 1);
    assert_eq!(
        met(&[&hold(1, 550, 900, Some(&[0])), &span(&pause, 500, 600)]),
        1,
        "acquired as the pause began"
    );
    assert_eq!(met(&[&hold(0, 10, 900, Some(&[0])), &span(&pause, 500, 600)]), 0);
    assert_eq!(met(&[&hold(1, 700, 900, Some(&[0])), &span(&pause, 500, 600)]), 0);
}

#[test]
fn a_client_clock_rate_meets_that_clients_hold_while_it_runs() {
    let rate = Fault::ClockRate {
        node: None,
        client: Some(0),
        rate: 0.5,
    };
    assert_eq!(met(&[&hold(0, 10, 900, Some(&[0])), &span(&rate, 500, 2_000)]), 1);
    assert_eq!(met(&[&hold(1, 10, 900, Some(&[0])), &span(&rate, 500, 2_000)]), 0);
    assert_eq!(
        met(&[&hold(0, 2_100, 2_900, Some(&[0])), &span(&rate, 500, 2_000)]),
        0
    );
}

#[test]
fn a_client_clock_jump_meets_that_clients_holds_at_and_after_it_until_the_heal() {
    let jump = Fault::ClockJump {
        node: None,
        client: Some(0),
        by_us: 2_000_000,
    };
    assert_eq!(met(&[&hold(0, 10, 900, Some(&[0])), &span(&jump, 500, 500)]), 1);
    assert_eq!(
        met(&[&hold(0, 700, 900, Some(&[0])), &span(&jump, 500, 500)]),
        1,
        "the clock stays moved"
    );
    assert_eq!(met(&[&hold(1, 700, 900, Some(&[0])), &span(&jump, 500, 500)]), 0);
    let healed = [Event::Heal { t_us: 600 }];
    assert_eq!(
        met(&[&span(&jump, 500, 500), &healed, &hold(0, 700, 900, Some(&[0]))]),
        0,
        "a probe after the heal"
    );
}

#[test]
fn a_partition_meets_a_hold_by_one_of_its_clients_or_on_one_of_its_nodes() {
    let cut = Fault::Partition {
        nodes: vec![3, 4],
        clients: vec![0],
        direction: CutDirection::Both,
    };
    // The holder is cut off (from nodes it does not hold: it cannot reach them).
    assert_eq!(
        met(&[&hold(0, 10, 900, Some(&[0, 1, 2])), &span(&cut, 500, 600)]),
        1
    );
    // A waiter is cut off from the holder's nodes.
    assert_eq!(
        met(&[&hold(1, 10, 900, Some(&[2, 3, 4])), &span(&cut, 500, 600)]),
        1
    );
    // Neither: another client, on other nodes.
    assert_eq!(
        met(&[&hold(1, 10, 900, Some(&[0, 1, 2])), &span(&cut, 500, 600)]),
        0
    );
    // Not at the same time.
    assert_eq!(
        met(&[&hold(0, 10, 400, Some(&[0, 1, 2])), &span(&cut, 500, 600)]),
        0
    );
    for f in [
        Fault::Delay {
            nodes: vec![3],
            clients: vec![2],
            extra_us: 1_000,
        },
        Fault::Loss {
            nodes: vec![3],
            clients: vec![2],
            probability: 0.5,
        },
    ] {
        assert_eq!(
            met(&[&hold(2, 550, 900, Some(&[0, 1, 2])), &span(&f, 500, 600)]),
            1
        );
        assert_eq!(
            met(&[&hold(1, 550, 900, Some(&[0, 1, 3])), &span(&f, 500, 600)]),
            1
        );
        assert_eq!(
            met(&[&hold(1, 550, 900, Some(&[0, 1, 2])), &span(&f, 500, 600)]),
            0
        );
    }
}

#[test]
fn a_hold_whose_nodes_are_not_reported_is_on_every_node() {
    assert_eq!(met(&[&hold(0, 10, 900, None), &span(&CRASH_2, 500, 500)]), 1);
}

#[test]
fn a_fault_never_ended_ends_at_the_heal() {
    let cut = Fault::Partition {
        nodes: vec![0],
        clients: vec![0],
        direction: CutDirection::Both,
    };
    let start = [fault(100, 0, FaultAction::Start, Origin::Script, &cut)];
    let heal = [Event::Heal { t_us: 200 }];
    assert_eq!(met(&[&start, &heal, &hold(0, 300, 900, Some(&[0]))]), 0);
    assert_eq!(
        met(&[&start, &hold(0, 300, 900, Some(&[0]))]),
        1,
        "no heal: still active"
    );
}

#[test]
fn each_hold_counts_once_per_fault() {
    let a = hold(0, 10, 900, Some(&[2]));
    let b = hold(1, 550, 1_900, Some(&[2]));
    let c = hold(2, 700, 1_900, Some(&[3]));
    let pause = Fault::Pause {
        node: Some(2),
        client: None,
        point: None,
    };
    // a in force at the start, b and c acquired while node 2 is paused.
    assert_eq!(met(&[&a, &b, &c, &span(&pause, 500, 800)]), 3);
}

fn judged(parts: &[&[Event]], plan: Option<&[PlannedFault]>) -> Option<String> {
    let f = check(&history(parts)).unwrap();
    f.exercise.not_exercised(f.stats.acquired, plan)
}

#[test]
fn a_clean_run_is_exercised_by_its_acquisitions_alone() {
    let mut two = hold(0, 10, 100, Some(&[0])).to_vec();
    two.extend(release(0, 50));
    two.extend(hold(1, 60, 200, Some(&[0])));
    assert_eq!(judged(&[&two], Some(&[])), None);
    assert_eq!(
        judged(&[&hold(0, 10, 100, Some(&[0]))], Some(&[])).as_deref(),
        Some("too few acquisitions: 1 of at least 2")
    );
    assert_eq!(
        judged(&[], None).as_deref(),
        Some("too few acquisitions: 0 of at least 2")
    );
}

#[test]
fn every_scripted_fault_must_meet_a_hold() {
    let mut two = hold(0, 10, 1_000, Some(&[0, 1, 2])).to_vec();
    two.extend(release(0, 1_000));
    two.extend(hold(1, 1_100, 2_000, Some(&[2, 3, 4])));
    let met = span(&CRASH_2, 500, 500);
    assert_eq!(judged(&[&two, &met], None), None);
    // A second crash, between the two holds, meets neither.
    let missed = [
        fault(1_050, 5, FaultAction::Start, Origin::Script, &CRASH_2),
        fault(1_050, 5, FaultAction::End, Origin::Script, &CRASH_2),
    ];
    assert_eq!(
        judged(&[&two, &met, &missed], None).as_deref(),
        Some("no hold met the fault(s) #5 crash of node 2 at 0.001s")
    );
    // Too few acquisitions and a missed fault: both reasons.
    let one = hold(0, 10, 100, Some(&[0]));
    assert_eq!(
        judged(&[&one, &missed], None).as_deref(),
        Some("too few acquisitions: 1 of at least 2; no hold met the fault(s) #5 crash of node 2 at 0.001s")
    );
}

#[test]
fn a_planned_fault_that_never_started_met_nothing() {
    let mut two = hold(0, 10, 100, Some(&[0])).to_vec();
    two.extend(release(0, 50));
    two.extend(hold(1, 60, 200, Some(&[0])));
    let pause = PlannedFault {
        id: 3,
        at_us: 1_000,
        duration_us: Some(100),
        origin: Origin::Script,
        fault: Fault::Pause {
            node: None,
            client: Some(0),
            point: Some(crate::fault::PausePoint::AfterAcquire),
        },
        aim: None,
        firing: None,
    };
    assert_eq!(
        judged(&[&two], Some(std::slice::from_ref(&pause))).as_deref(),
        Some("no hold met the fault(s) #3 pause of client 0 (never started)")
    );
    let random = PlannedFault {
        origin: Origin::Nemesis,
        ..pause
    };
    assert_eq!(
        judged(&[&two], Some(&[random])),
        None,
        "a random fault is judged as a group"
    );
}

#[test]
fn the_nemesis_needs_one_fault_that_met_a_hold() {
    let mut two = hold(0, 10, 1_000, Some(&[0, 1, 2])).to_vec();
    two.extend(release(0, 1_000));
    two.extend(hold(1, 1_100, 2_000, Some(&[2, 3, 4])));
    let random = |t: u64, id: usize, node: usize| {
        let f = Fault::Crash {
            node,
            power_loss: false,
        };
        [
            fault(t, id, FaultAction::Start, Origin::Nemesis, &f),
            fault(t, id, FaultAction::End, Origin::Nemesis, &f),
        ]
    };
    let (hit, miss) = (random(500, 1, 2), random(600, 2, 4));
    assert_eq!(judged(&[&two, &hit, &miss], None), None, "one of two is enough");
    assert_eq!(
        judged(&[&two, &miss, &random(1_050, 3, 2)], None).as_deref(),
        Some("no hold met any of the nemesis's 2 fault(s)")
    );
    let f = check(&history(&[&two, &hit, &miss])).unwrap();
    assert_eq!(f.exercise.met(), (1, 2));
}

#[test]
fn a_crash_of_a_node_already_down_is_part_of_that_outage() {
    // scenarios/real/overlapping-crashes.toml: node 2 is down from the first crash to the
    // end of the last; only the first met a hold, and the others are the same outage.
    let crash = |t: u64, id: usize, action| fault(t, id, action, Origin::Script, &CRASH_2);
    let parts: [&[Event]; 2] = [
        &hold(1, 10, 900, Some(&[2, 3, 4])),
        &[
            crash(500, 2, FaultAction::Start),
            crash(1_650, 3, FaultAction::Start),
            crash(1_750, 2, FaultAction::End),
            crash(2_000, 4, FaultAction::Start),
            crash(2_680, 3, FaultAction::End),
            crash(3_250, 4, FaultAction::End),
            crash(4_000, 5, FaultAction::Start),
            crash(4_100, 5, FaultAction::End),
        ],
    ];
    let f = check(&history(&parts)).unwrap();
    let seen: Vec<(usize, u64, Option<usize>, bool)> = f
        .exercise
        .faults
        .iter()
        .map(|f| (f.id, f.holds, f.joined, f.met))
        .collect();
    assert_eq!(
        seen,
        vec![
            (2, 1, None, true),
            (3, 0, Some(2), true),
            (4, 0, Some(2), true),
            (5, 0, None, false)
        ],
        "#4 started after #2 ended, while #3 (of #2's outage) was on"
    );
    assert_eq!(
        f.exercise.not_exercised(2, None).as_deref(),
        Some("no hold met the fault(s) #5 crash of node 2 at 0.004s")
    );
}

#[test]
fn a_fault_id_that_starts_again_after_its_end_is_a_new_fault() {
    // The collector finds an active fault by id: the end of #7's first run must not
    // touch its second, which #8 joins and which ends before the second hold.
    let crash = |t: u64, id: usize, action| fault(t, id, action, Origin::Script, &CRASH_2);
    let parts: [&[Event]; 3] = [
        &hold(1, 10, 900, Some(&[2, 3, 4])),
        &[
            crash(500, 7, FaultAction::Start),
            crash(1_000, 7, FaultAction::End),
            crash(1_200, 7, FaultAction::Start),
            crash(1_300, 8, FaultAction::Start),
            crash(1_400, 7, FaultAction::End),
            crash(3_000, 8, FaultAction::End),
        ],
        &hold(2, 1_500, 1_900, Some(&[2])),
    ];
    let f = check(&history(&parts)).unwrap();
    let seen: Vec<(usize, u64, Option<usize>)> = f
        .exercise
        .faults
        .iter()
        .map(|f| (f.id, f.holds, f.joined))
        .collect();
    assert_eq!(seen, vec![(7, 1, None), (7, 0, None), (8, 1, Some(7))]);
}
