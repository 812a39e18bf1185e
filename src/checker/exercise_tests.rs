//! What each fault kind touched, and the exercise rule, on hand-written histories: keys
//! from `node` lines, messages from `link` lines, holds and acquisitions from operation
//! lines; the probe never counts.

use super::*;
use crate::algorithm::Mode;
use crate::checker::check;
use crate::fault::{CutDirection, Fault, PlannedFault};
use crate::history::{
    Event, FaultAction, FaultEvent, LinkAction, LinkDir, LinkEvent, Meta, NodeAction, NodeEvent, Op, OpKind,
};

fn op(t: u64, client: usize, kind: OpKind) -> Op {
    Op::new(t, client, kind, "L0", Mode::Exclusive)
}

fn node_line(t: u64, node: usize, action: NodeAction, token: &str, client: Option<usize>) -> Event {
    Event::Node(NodeEvent {
        t_us: t,
        node,
        lock: "L0".into(),
        key: "L0".into(),
        action,
        client,
        token: Some(token.into()),
        ttl_ms: Some(10),
        checked: None,
        expired_at_us: None,
        expire_at_node_us: None,
        lag_us: None,
        member: None,
    })
}

/// Client `c` acquires at `from` on `nodes` (their `set` lines just before the `ok`),
/// valid until `until`; the keys live 10 ms.
fn hold(c: usize, from: u64, until: u64, nodes: &[usize]) -> Vec<Event> {
    let token = format!("tok{c}-{from}");
    let mut ok = op(from, c, OpKind::Acquire);
    ok.valid_until_us = Some(until);
    ok.token = Some(token.as_str().into());
    ok.nodes = Some(nodes.iter().collect());
    let mut out = vec![Event::Invoke(op(from.saturating_sub(2), c, OpKind::Acquire))];
    out.extend(
        nodes
            .iter()
            .map(|&n| node_line(from.saturating_sub(1), n, NodeAction::Set, &token, Some(c))),
    );
    out.push(Event::Ok(ok));
    out
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

fn link(t: u64, client: usize, node: usize, action: LinkAction, op: Option<OpKind>) -> Event {
    Event::Link(LinkEvent {
        t_us: t,
        client,
        node,
        dir: LinkDir::ToNode,
        action,
        by_us: (action == LinkAction::Delayed).then_some(800),
        lock: Some("L0".into()),
        op,
    })
}

/// The events sorted by time (stable, so an invoke stays before its ok).
fn history(parts: &[&[Event]]) -> Vec<Event> {
    let mut all: Vec<Event> = parts.iter().flat_map(|p| p.iter().cloned()).collect();
    all.sort_by_key(Event::t_us);
    all
}

/// What the history's only fault touched, and whether that exercised it.
fn touched(parts: &[&[Event]]) -> (Touched, bool) {
    let f = check(&history(parts)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.exercise.faults.len(), 1, "{:?}", f.exercise);
    let t = &f.exercise.faults[0];
    (t.touched.clone(), t.exercised)
}

const CRASH_2: Fault = Fault::Crash {
    node: 2,
    power_loss: false,
};

#[test]
fn a_crash_takes_down_the_live_keys_on_its_node_and_wipes_those_it_lost() {
    let on_2 = hold(0, 1_000, 9_000, &[0, 1, 2]);
    let (t, exercised) = touched(&[&on_2, &span(&CRASH_2, 5_000, 6_000)]);
    assert_eq!((t.keys_down, t.keys_wiped, exercised), (1, 0, true));
    assert_eq!(t.lines, vec![4], "the set line of the key it took down");
    let lost = [node_line(5_000, 2, NodeAction::Lost, "tok0-1000", None)];
    let (t, _) = touched(&[&on_2, &span(&CRASH_2, 5_000, 6_000), &lost]);
    assert_eq!((t.keys_down, t.keys_wiped), (1, 1));
}

#[test]
fn a_crash_of_a_node_without_a_live_key_touches_nothing() {
    let elsewhere = hold(0, 1_000, 9_000, &[0, 1, 3]);
    assert!(!touched(&[&elsewhere, &span(&CRASH_2, 5_000, 6_000)]).1);
    // The key's ttl (10 ms) ran out before the crash, whatever the client believed.
    let expired = hold(0, 1_000, 90_000, &[2]);
    assert_eq!(
        touched(&[&expired, &span(&CRASH_2, 20_000, 21_000)]).0.keys_down,
        0
    );
    // Released: the key was deleted.
    let mut released = hold(0, 1_000, 9_000, &[2]);
    released.extend(release(0, 4_000));
    released.push(node_line(4_001, 2, NodeAction::Deleted, "tok0-1000", Some(0)));
    assert_eq!(
        touched(&[&released, &span(&CRASH_2, 5_000, 6_000)]).0.keys_down,
        0
    );
    // Set after the restart.
    let after = hold(0, 7_000, 9_000, &[2]);
    assert_eq!(touched(&[&after, &span(&CRASH_2, 5_000, 6_000)]).0.keys_down, 0);
}

#[test]
fn a_present_line_after_the_fault_counts_a_key_its_set_line_had_not_told_yet_once() {
    // The real backend: the holder's set line comes after the crash (the key event
    // reached lockstorm late), but the snapshot before the kill saw the key.
    let ok = hold(0, 1_000, 9_000, &[]);
    let present = |t, token| node_line(t, 2, NodeAction::Present, token, None);
    let (t, exercised) = touched(&[
        &ok,
        &span(&CRASH_2, 5_000, 6_000),
        &[
            present(5_000, "tok0-1000"),
            node_line(5_001, 2, NodeAction::Set, "tok0-1000", None),
        ],
    ]);
    assert_eq!((t.keys_down, exercised), (1, true), "counted once: {t:?}");
    // A key the fault counted from its set line is not counted again.
    let on_2 = hold(0, 1_000, 9_000, &[2]);
    let (t, _) = touched(&[
        &on_2,
        &span(&CRASH_2, 5_000, 6_000),
        &[present(5_000, "tok0-1000")],
    ]);
    assert_eq!(t.keys_down, 1);
    // For a clock jump, a present line is a key whose expiry moved.
    let jump = Fault::ClockJump {
        node: Some(2),
        client: None,
        by_us: 5_000_000,
    };
    let (t, _) = touched(&[&span(&jump, 5_000, 5_000), &[present(5_000, "tok-x")]]);
    assert_eq!(t.keys_moved, 1);
}

#[test]
fn an_acquisition_granted_while_a_node_is_out_was_taken_around_it() {
    // The lock was taken without node 2: a lock that counts a node it cannot reach
    // would break there.
    let during = hold(0, 5_500, 9_000, &[0, 1, 3]);
    let (t, exercised) = touched(&[&during, &span(&CRASH_2, 5_000, 6_000)]);
    assert_eq!((t.keys_down, t.granted_around, exercised), (0, 1, true));
    assert!(t.lines.contains(&6), "the ok line: {:?}", t.lines);
    let after = hold(0, 7_000, 9_000, &[0, 1, 3]);
    assert!(!touched(&[&after, &span(&CRASH_2, 5_000, 6_000)]).1);
}

#[test]
fn a_failover_and_a_node_pause_take_down_keys_as_a_crash_does() {
    let on_0 = hold(0, 1_000, 9_000, &[0]);
    let failover = Fault::Failover { node: 0 };
    let unreplicated = [node_line(6_000, 0, NodeAction::Unreplicated, "tok0-1000", None)];
    let (t, exercised) = touched(&[&on_0, &span(&failover, 5_000, 6_000), &unreplicated]);
    assert_eq!((t.keys_down, t.keys_wiped, exercised), (1, 1, true));
    let pause = Fault::Pause {
        node: Some(0),
        client: None,
        point: None,
    };
    assert_eq!(touched(&[&on_0, &span(&pause, 5_000, 6_000)]).0.keys_down, 1);
}

/// A replication cut touches the keys set on its node's master while it is active (the
/// writes its replicas missed): not those set before or after it, nor those set after a
/// crash of the node ended the master it cut.
#[test]
fn a_replication_cut_counts_the_keys_set_on_its_master_while_it_is_active() {
    let cut = Fault::ReplicationCut { node: 0 };
    let (t, exercised) = touched(&[&span(&cut, 500, 6_000), &hold(0, 1_000, 9_000, &[0])]);
    assert_eq!((t.set_while_cut, exercised), (1, true));
    assert_eq!(t.lines, vec![3], "the set line");
    let before = touched(&[&hold(0, 1_000, 9_000, &[0]), &span(&cut, 5_000, 6_000)]);
    assert_eq!((before.0.set_while_cut, before.1), (0, false));
    let elsewhere = touched(&[&span(&cut, 500, 6_000), &hold(0, 1_000, 9_000, &[1])]);
    assert!(!elsewhere.1, "another node's set");
    // A crash of node 0 at 2 ms: the set at 3 ms is the next master's.
    let f = check(&history(&[
        &[fault(500, 0, FaultAction::Start, Origin::Script, &cut)],
        &[fault(
            2_000,
            1,
            FaultAction::Start,
            Origin::Script,
            &Fault::Crash {
                node: 0,
                power_loss: false,
            },
        )],
        &hold(0, 3_000, 9_000, &[0]),
    ]))
    .unwrap();
    assert_eq!(f.exercise.faults[0].touched.set_while_cut, 0, "{:?}", f.exercise);
}

#[test]
fn a_node_clock_jump_moves_the_keys_live_at_it_and_not_those_set_later() {
    let jump = Fault::ClockJump {
        node: Some(2),
        client: None,
        by_us: -10_000_000,
    };
    let (t, exercised) = touched(&[&hold(0, 1_000, 9_000, &[2, 3]), &span(&jump, 5_000, 5_000)]);
    assert_eq!((t.keys_moved, exercised), (1, true));
    assert!(!touched(&[&hold(0, 1_000, 9_000, &[0, 3]), &span(&jump, 5_000, 5_000)]).1);
    // A jump with no key at its instant touched nothing: a key set on the node later
    // gets its whole ttl by the moved clock, which is never set back. Also when the
    // jump has no end line (the real backend writes none for an instant fault).
    let (t, exercised) = touched(&[&span(&jump, 500, 500), &hold(0, 7_000, 9_000, &[2])]);
    assert_eq!((t.keys_moved, exercised), (0, false));
    let no_end = [fault(500, 0, FaultAction::Start, Origin::Script, &jump)];
    assert!(!touched(&[&no_end, &hold(0, 7_000, 9_000, &[2])]).1);
}

#[test]
fn a_node_clock_rate_moves_the_keys_live_or_set_while_it_runs() {
    let rate = Fault::ClockRate {
        node: Some(1),
        client: None,
        rate: 2.0,
    };
    let (t, _) = touched(&[&hold(0, 5_500, 9_000, &[1, 2]), &span(&rate, 5_000, 6_000)]);
    assert_eq!(t.keys_moved, 1);
    assert!(!touched(&[&hold(0, 5_500, 9_000, &[2, 3]), &span(&rate, 5_000, 6_000)]).1);
}

#[test]
fn a_client_pause_stops_a_hold_in_force_or_an_acquisition_in_progress() {
    let pause = Fault::Pause {
        node: None,
        client: Some(1),
        point: None,
    };
    let (t, exercised) = touched(&[&hold(1, 1_000, 9_000, &[0]), &span(&pause, 5_000, 6_000)]);
    assert_eq!((t.holds, t.acquisitions, exercised), (1, 0, true));
    // Stopped mid-acquisition: the acquire is invoked and not yet answered. Its outcome
    // (here a refusal, as an elapsed-time check gives) does not matter.
    let acquiring = [
        Event::Invoke(op(4_000, 1, OpKind::Acquire)),
        Event::Fail(op(7_000, 1, OpKind::Acquire)),
    ];
    let (t, exercised) = touched(&[&acquiring, &span(&pause, 5_000, 6_000)]);
    assert_eq!((t.holds, t.acquisitions, exercised), (0, 1, true));
    assert!(
        !touched(&[&hold(0, 1_000, 9_000, &[0]), &span(&pause, 5_000, 6_000)]).1,
        "another client"
    );
    assert!(
        !touched(&[&hold(1, 7_000, 9_000, &[0]), &span(&pause, 5_000, 6_000)]).1,
        "after it"
    );
}

fn meta(algorithm: &str, worker: Option<&str>) -> [Event; 1] {
    [Event::Meta(Meta {
        t_us: 0,
        scenario: "t".into(),
        seed: 1,
        algorithm: algorithm.into(),
        nodes: 5,
        clients: 2,
        ttl_ms: 10,
        liveness_bound_us: 1,
        writer_wait_bound_us: None,
        worker: worker.map(|library| crate::history::WorkerMeta {
            library: library.into(),
            version: String::new(),
            command: vec!["w".into()],
        }),
        probe_client: None,
        cut: None,
        deployment: None,
        mitigations: None,
    })]
}

#[test]
fn a_client_clock_jump_touches_that_clients_holds_and_acquisition_at_its_instant() {
    let jump = Fault::ClockJump {
        node: None,
        client: Some(0),
        by_us: 2_000_000,
    };
    let library = meta("redlock", Some("pottery"));
    let at = touched(&[&library, &hold(0, 1_000, 9_000, &[0]), &span(&jump, 5_000, 5_000)]).0;
    assert_eq!((at.holds, at.acquisitions), (1, 0));
    let acquiring = [Event::Invoke(op(4_000, 0, OpKind::Acquire))];
    let (t, exercised) = touched(&[&library, &acquiring, &span(&jump, 5_000, 5_000)]);
    assert_eq!((t.acquisitions, exercised), (1, true));
    // A hold taken after the jump is timed by the moved clock from its start: untouched.
    assert!(!touched(&[&library, &hold(0, 7_000, 9_000, &[0]), &span(&jump, 5_000, 5_000)]).1);
    assert!(!touched(&[&library, &hold(1, 1_000, 9_000, &[0]), &span(&jump, 5_000, 5_000)]).1);
    // lockstorm's own exclusive lock times its validity by the monotonic clock, which a
    // jump does not move; its read-write lock sends the wall clock to the nodes.
    for own in [meta("redlock", None), meta("redlock", Some("lockstorm"))] {
        assert!(!touched(&[&own, &hold(0, 1_000, 9_000, &[0]), &span(&jump, 5_000, 5_000)]).1);
    }
    let rw = meta("rw_redlock", None);
    assert!(touched(&[&rw, &hold(0, 1_000, 9_000, &[0]), &span(&jump, 5_000, 5_000)]).1);
}

#[test]
fn a_link_fault_touches_the_lock_messages_its_links_dropped_held_or_delayed() {
    let cut = Fault::Partition {
        nodes: vec![3, 4],
        clients: vec![0],
        direction: CutDirection::Both,
    };
    let acquiring = [Event::Invoke(op(4_000, 0, OpKind::Acquire))];
    let dropped = [link(5_500, 0, 3, LinkAction::Dropped, Some(OpKind::Acquire))];
    let (t, exercised) = touched(&[&acquiring, &dropped, &span(&cut, 5_000, 6_000)]);
    assert_eq!((t.dropped, exercised), (1, true));
    // Another link, and a message of nobody's operation, are not its touches.
    let other = [link(5_500, 1, 3, LinkAction::Dropped, Some(OpKind::Acquire))];
    assert!(!touched(&[&other, &span(&cut, 5_000, 6_000)]).1);
    let idle = [Event::Link(LinkEvent {
        lock: None,
        ..match link(5_500, 0, 3, LinkAction::Dropped, None) {
            Event::Link(l) => l,
            _ => unreachable!(),
        }
    })];
    assert!(!touched(&[&idle, &span(&cut, 5_000, 6_000)]).1);
    // Held by a real proxy, then let through: how long counts.
    let mut held = vec![
        link(5_500, 0, 4, LinkAction::Held, Some(OpKind::Acquire)),
        link(6_100, 0, 4, LinkAction::Released, Some(OpKind::Acquire)),
    ];
    if let Event::Link(l) = &mut held[1] {
        l.by_us = Some(600);
    }
    let (t, _) = touched(&[&held, &span(&cut, 5_000, 6_000)]);
    assert_eq!((t.held, t.held_max_us), (1, 600));
    // A delay touches delayed messages only; a cut, dropped or held ones only.
    let delay = Fault::Delay {
        nodes: vec![3],
        clients: vec![0],
        extra_us: 800,
    };
    let delayed = [link(5_500, 0, 3, LinkAction::Delayed, Some(OpKind::Acquire))];
    let (t, exercised) = touched(&[&delayed, &span(&delay, 5_000, 6_000)]);
    assert_eq!((t.delayed, t.delay_max_us, exercised), (1, 800, true));
    assert!(!touched(&[&dropped, &span(&delay, 5_000, 6_000)]).1);
    assert!(!touched(&[&delayed, &span(&cut, 5_000, 6_000)]).1);
}

#[test]
fn the_probe_never_counts() {
    let meta = [Event::Meta(Meta {
        t_us: 0,
        scenario: "t".into(),
        seed: 1,
        algorithm: "redlock".into(),
        nodes: 5,
        clients: 2,
        ttl_ms: 10,
        liveness_bound_us: 1,
        writer_wait_bound_us: None,
        worker: None,
        probe_client: Some(1),
        cut: None,
        deployment: None,
        mitigations: None,
    })];
    let mut probe = hold(1, 1_000, 9_000, &[2]);
    for e in &mut probe {
        match e {
            Event::Invoke(o) | Event::Ok(o) => o.lock = "P".into(),
            Event::Node(n) => {
                n.lock = "P".into();
                n.key = "P".into();
            }
            _ => {}
        }
    }
    let (t, exercised) = touched(&[&meta, &probe, &span(&CRASH_2, 5_000, 6_000)]);
    assert_eq!((t.keys_down, exercised), (0, false), "the probe's key");
    let pause = Fault::Pause {
        node: None,
        client: Some(1),
        point: None,
    };
    assert!(
        !touched(&[&meta, &probe, &span(&pause, 5_000, 6_000)]).1,
        "the probe's hold"
    );
    let f = check(&history(&[&meta, &probe])).unwrap();
    assert_eq!(f.exercise.acquired, 0, "the probe's acquisitions");
}

#[test]
fn a_worker_hold_is_on_the_nodes_whose_lines_hold_its_value() {
    // A worker names no nodes: its `ok` carries the library's value, which node 1's
    // line holds (node 0's is an earlier attempt, deleted; node 2 holds another's).
    let mut ok = op(1_000, 0, OpKind::Acquire);
    ok.valid_until_us = Some(9_000);
    ok.worker_token = Some("lib-a".into());
    let events = [
        Event::Invoke(op(100, 0, OpKind::Acquire)),
        node_line(200, 0, NodeAction::Set, "lib-a", None),
        node_line(300, 0, NodeAction::Deleted, "lib-a", None),
        node_line(400, 1, NodeAction::Set, "lib-a", None),
        node_line(500, 2, NodeAction::Set, "lib-b", None),
        Event::Ok(ok),
    ];
    let f = check(&events).unwrap();
    assert_eq!(f.holds[0].nodes.to_vec(), vec![1]);
}

#[test]
fn a_fault_never_ended_stops_touching_at_the_heal() {
    let cut = Fault::Partition {
        nodes: vec![0],
        clients: vec![0],
        direction: CutDirection::Both,
    };
    let start = [fault(100, 0, FaultAction::Start, Origin::Script, &cut)];
    let heal = [Event::Heal { t_us: 200 }];
    let dropped = [link(300, 0, 0, LinkAction::Dropped, Some(OpKind::Acquire))];
    assert!(!touched(&[&start, &heal, &dropped]).1);
    assert!(touched(&[&start, &dropped]).1, "no heal: still active");
}

fn judged(parts: &[&[Event]], plan: Option<&[PlannedFault]>) -> Option<String> {
    let f = check(&history(parts)).unwrap();
    f.exercise.not_exercised(plan)
}

fn two_holds() -> Vec<Event> {
    let mut two = hold(0, 1_000, 9_000, &[0, 1, 2]);
    two.extend(release(0, 9_000));
    two.extend(hold(1, 12_000, 20_000, &[2, 3, 4]));
    two
}

#[test]
fn a_clean_run_is_exercised_by_its_acquisitions_alone() {
    assert_eq!(judged(&[&two_holds()], Some(&[])), None);
    assert_eq!(
        judged(&[&hold(0, 10, 100, &[0])], Some(&[])).as_deref(),
        Some("too few acquisitions: 1 of at least 2")
    );
    assert_eq!(
        judged(&[], None).as_deref(),
        Some("too few acquisitions: 0 of at least 2")
    );
}

#[test]
fn every_scripted_fault_must_be_exercised() {
    let two = two_holds();
    let hit = span(&CRASH_2, 5_000, 5_000);
    assert_eq!(judged(&[&two, &hit], None), None);
    // A second crash, after the first key expired and before the second was set.
    let missed = [
        fault(11_500, 5, FaultAction::Start, Origin::Script, &CRASH_2),
        fault(11_500, 5, FaultAction::End, Origin::Script, &CRASH_2),
    ];
    assert_eq!(
        judged(&[&two, &hit, &missed], None).as_deref(),
        Some("fault(s) that touched no lock where it could break: #5 crash of node 2 at 0.011s touched nothing of the lock")
    );
    let one = hold(0, 10, 100, &[0]);
    assert!(judged(&[&one, &missed], None)
        .unwrap()
        .starts_with("too few acquisitions: 1 of at least 2; fault(s) that touched"));
}

#[test]
fn a_planned_fault_that_never_started_touched_nothing() {
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
        judged(&[&two_holds()], Some(std::slice::from_ref(&pause))).as_deref(),
        Some("fault(s) that touched no lock where it could break: #3 pause of client 0 (never started)")
    );
    let random = PlannedFault {
        origin: Origin::Nemesis,
        ..pause
    };
    assert_eq!(
        judged(&[&two_holds()], Some(&[random])),
        None,
        "a random fault is judged as a group"
    );
}

#[test]
fn the_nemesis_needs_one_exercised_fault() {
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
    let two = two_holds();
    let (hit, miss) = (random(5_000, 1, 2), random(6_000, 2, 4));
    assert_eq!(judged(&[&two, &hit, &miss], None), None, "one of two is enough");
    assert_eq!(
        judged(&[&two, &miss, &random(11_500, 3, 2)], None).as_deref(),
        Some("none of the nemesis's 2 fault(s) touched the lock where it could break")
    );
    let f = check(&history(&[&two, &hit, &miss])).unwrap();
    assert_eq!(f.exercise.exercised(), (1, 2));
}

#[test]
fn a_crash_of_a_node_already_down_is_part_of_that_outage() {
    // scenarios/real/overlapping-crashes.toml: node 2 is down from the first crash to the
    // end of the last; only the first took a key down, and the others are the same outage.
    let crash = |t: u64, id: usize, action| fault(t, id, action, Origin::Script, &CRASH_2);
    let parts: [&[Event]; 2] = [
        &hold(1, 1_000, 9_000, &[2, 3, 4]),
        &[
            crash(5_000, 2, FaultAction::Start),
            crash(16_500, 3, FaultAction::Start),
            crash(17_500, 2, FaultAction::End),
            crash(20_000, 4, FaultAction::Start),
            crash(26_800, 3, FaultAction::End),
            crash(32_500, 4, FaultAction::End),
            crash(40_000, 5, FaultAction::Start),
            crash(41_000, 5, FaultAction::End),
        ],
    ];
    let f = check(&history(&parts)).unwrap();
    let seen: Vec<(usize, u64, Option<usize>, bool)> = f
        .exercise
        .faults
        .iter()
        .map(|f| (f.id, f.touched.keys_down, f.joined, f.exercised))
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
}
