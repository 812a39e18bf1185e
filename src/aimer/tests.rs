use super::*;
use crate::fault::aim::Trigger;
use crate::fault::CutDirection;

const L0: LockId = LockId(0);
const L1: LockId = LockId(1);

fn entry(fault: Fault, at_us: u64, duration_us: Option<u64>, aim: Aim) -> PlannedFault {
    PlannedFault {
        id: 0,
        at_us,
        duration_us,
        origin: Origin::Script,
        fault,
        aim: Some(aim),
        firing: None,
    }
}

fn aim(on: On, nodes: Option<NodeAim>, clients: Option<ClientAim>) -> Aim {
    Aim {
        when: Trigger {
            on,
            client: None,
            nth: 1,
            replied: None,
            uncontended: false,
        },
        after_us: 0,
        nodes,
        clients,
    }
}

fn crash() -> Fault {
    Fault::Crash {
        node: 0,
        power_loss: false,
    }
}

/// Every client reaches every one of 5 nodes.
fn all(_: ClientId) -> Vec<NodeId> {
    (0..5).collect()
}

fn aimer(entries: Vec<PlannedFault>) -> Aimer {
    let plan: Vec<PlannedFault> = entries
        .into_iter()
        .enumerate()
        .map(|(i, mut f)| {
            f.id = i;
            f
        })
        .collect();
    Aimer::new(&plan, 5, 3)
}

fn crashed(faults: &[PlannedFault]) -> Vec<NodeId> {
    faults
        .iter()
        .map(|f| match f.fault {
            Fault::Crash { node, .. } => node,
            ref other => panic!("not a crash: {other:?}"),
        })
        .collect()
}

#[test]
fn acquired_fires_once_on_the_first_success_after_its_earliest_time_with_the_next_free_id() {
    let mut a = aimer(vec![entry(
        crash(),
        1_000,
        Some(0),
        aim(On::Acquired, Some(NodeAim::Holder), None),
    )]);
    assert!(a.acquiring(10, 0, L0, &all).is_empty());
    // Before `at`: does not count.
    assert!(a.acquired(500, 0, L0, &[0, 1, 2], &all).is_empty());
    a.released(0);
    let out = a.acquired(2_000, 1, L0, &[1, 3, 4], &all);
    assert_eq!(crashed(&out), vec![1, 3, 4]);
    assert_eq!(out.iter().map(|f| f.id).collect::<Vec<_>>(), vec![1, 2, 3]);
    assert!(out
        .iter()
        .all(|f| f.at_us == 2_000 && f.origin == Origin::Aimed && f.duration_us == Some(0)));
    assert!(a.is_idle());
    assert!(
        a.acquired(3_000, 2, L0, &[0, 1, 2], &all).is_empty(),
        "an entry fires once"
    );
}

#[test]
fn acquired_by_a_named_client_and_the_nth_success_count_only_their_matches() {
    let mut named = aim(On::Acquired, Some(NodeAim::Holder), None);
    named.when.client = Some(2);
    let mut third = aim(On::Acquired, Some(NodeAim::Holder), None);
    third.when.nth = 3;
    let mut a = aimer(vec![
        entry(crash(), 0, None, named),
        entry(crash(), 0, None, third),
    ]);
    assert!(a.acquired(1, 0, L0, &[0], &all).is_empty());
    let out = a.acquired(2, 2, L1, &[1], &all);
    assert_eq!(
        crashed(&out),
        vec![1],
        "client 2's first success, also the 2nd of the run"
    );
    let out = a.acquired(3, 1, L0, &[2], &all);
    assert_eq!(crashed(&out), vec![2], "the 3rd success of the run");
    match &out[0].firing {
        Some(Firing::FiredFrom { entry, by }) => {
            assert_eq!(*entry, 1);
            assert_eq!(
                (by.on, by.t_us, by.holder, by.lock.as_str()),
                (On::Acquired, 3, 1, "L0")
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn acquiring_fires_on_the_invoke_and_aims_at_what_the_acquirer_reaches() {
    let delay = Fault::Delay {
        nodes: vec![],
        clients: vec![],
        extra_us: 700,
    };
    let mut a = aimer(vec![entry(
        delay,
        0,
        Some(50),
        Aim {
            after_us: 5,
            ..aim(On::Acquiring, Some(NodeAim::Holder), Some(ClientAim::Holder))
        },
    )]);
    let reach = |c: ClientId| {
        if c == 1 {
            vec![0, 2, 4]
        } else {
            vec![0, 1, 2, 3, 4]
        }
    };
    let out = a.acquiring(100, 1, L0, &reach);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].at_us, 105, "`after` delays the start");
    assert_eq!(
        out[0].fault,
        Fault::Delay {
            nodes: vec![0, 2, 4],
            clients: vec![1],
            extra_us: 700
        }
    );
}

#[test]
fn contended_fires_when_a_second_client_acquires_a_held_lock_or_a_waited_one_is_taken() {
    let pause = Fault::Pause {
        node: None,
        client: Some(0),
        point: None,
    };
    let mut second = aim(On::Contended, None, Some(ClientAim::Holder));
    second.when.nth = 2;
    let mut a = aimer(vec![
        entry(
            pause.clone(),
            0,
            Some(10),
            aim(On::Contended, None, Some(ClientAim::Holder)),
        ),
        entry(pause, 0, Some(10), second),
    ]);
    assert!(a.acquired(1, 0, L0, &[0, 1, 2], &all).is_empty(), "no one waits");
    assert!(a.acquiring(2, 1, L1, &all).is_empty(), "another lock");
    let out = a.acquiring(3, 2, L0, &all);
    assert_eq!(out.len(), 1, "the second entry waits for the second contention");
    assert!(matches!(out[0].fault, Fault::Pause { client: Some(0), .. }));
    match &out[0].firing {
        Some(Firing::FiredFrom { by, .. }) => assert_eq!((by.holder, by.waiter), (0, Some(2))),
        other => panic!("{other:?}"),
    }
    // Client 1 now waits on L1; client 2 takes L1 while it waits: holder 2.
    a.acquire_ended(2);
    let out = a.acquired(4, 2, L1, &[3], &all);
    assert_eq!(out.len(), 1);
    assert!(matches!(out[0].fault, Fault::Pause { client: Some(2), .. }));
}

#[test]
fn a_released_hold_is_not_contended() {
    let mut a = aimer(vec![entry(
        crash(),
        0,
        None,
        aim(On::Contended, Some(NodeAim::Holder), None),
    )]);
    a.acquired(1, 0, L0, &[0, 1, 2], &all);
    a.released(0);
    assert!(a.acquiring(2, 1, L0, &all).is_empty());
    let out = a.acquired(3, 1, L0, &[2, 3, 4], &all);
    assert!(out.is_empty(), "client 1's own wait ended with its success");
}

#[test]
fn majority_is_a_bare_majority_of_the_holders_nodes_lowest_first() {
    for (held, want) in [
        (vec![4, 0, 2], vec![0, 2]),
        (vec![0, 1, 2, 3, 4], vec![0, 1, 2]),
        (vec![1, 3, 2, 4], vec![1, 2, 3]),
    ] {
        let mut a = aimer(vec![entry(
            crash(),
            0,
            Some(0),
            aim(On::Acquired, Some(NodeAim::Majority), None),
        )]);
        assert_eq!(crashed(&a.acquired(1, 0, L0, &held, &all)), want, "held {held:?}");
    }
}

#[test]
fn shared_is_the_holders_node_the_most_other_clients_reach_lowest_first() {
    let jump = Fault::ClockJump {
        node: Some(0),
        client: None,
        by_us: 5_000,
    };
    let mut a = aimer(vec![entry(
        jump.clone(),
        0,
        Some(0),
        aim(On::Acquired, Some(NodeAim::Shared), None),
    )]);
    // Client 0 holds {0, 1, 2}; client 1 is on its side, client 2 reaches only {2, 3, 4}.
    let reach = |c: ClientId| if c == 2 { vec![2, 3, 4] } else { vec![0, 1, 2] };
    let out = a.acquired(1, 0, L0, &[0, 1, 2], &reach);
    assert!(matches!(
        out[0].fault,
        Fault::ClockJump {
            node: Some(2),
            client: None,
            by_us: 5_000
        }
    ));
    // No other client reaches any of the holder's nodes: its lowest.
    let mut a = aimer(vec![entry(
        jump,
        0,
        Some(0),
        aim(On::Acquired, Some(NodeAim::Shared), None),
    )]);
    let reach = |c: ClientId| if c == 0 { vec![1, 2] } else { vec![3, 4] };
    let out = a.acquired(1, 0, L0, &[2, 1], &reach);
    assert!(matches!(out[0].fault, Fault::ClockJump { node: Some(1), .. }));
}

#[test]
fn holder_nodes_not_named_by_the_ok_are_the_nodes_the_holder_reaches() {
    let mut a = aimer(vec![entry(
        crash(),
        0,
        Some(0),
        aim(On::Acquired, Some(NodeAim::Holder), None),
    )]);
    let reach = |c: ClientId| if c == 0 { vec![1, 3] } else { vec![0] };
    assert_eq!(crashed(&a.acquired(1, 0, L0, &[], &reach)), vec![1, 3]);
}

#[test]
fn others_is_every_client_but_the_holder_and_an_empty_target_fires_into_nothing() {
    let cut = Fault::Partition {
        nodes: vec![0],
        clients: vec![],
        direction: CutDirection::Both,
    };
    let mut a = aimer(vec![entry(
        cut,
        0,
        None,
        aim(On::Acquired, Some(NodeAim::Holder), Some(ClientAim::Others)),
    )]);
    let out = a.acquired(1, 1, L0, &[0, 1, 2], &all);
    assert_eq!(
        out[0].fault,
        Fault::Partition {
            nodes: vec![0, 1, 2],
            clients: vec![0, 2],
            direction: CutDirection::Both
        }
    );
    let pause = Fault::Pause {
        node: None,
        client: Some(0),
        point: None,
    };
    let mut a = Aimer::new(
        &[entry(
            pause,
            0,
            Some(1),
            aim(On::Acquired, None, Some(ClientAim::Others)),
        )],
        5,
        1,
    );
    assert!(a.acquired(1, 0, L0, &[0], &all).is_empty());
    let mut plan = vec![entry(
        crash(),
        0,
        None,
        aim(On::Acquired, None, Some(ClientAim::Others)),
    )];
    a.close(&mut plan);
    assert!(matches!(&plan[0].firing, Some(Firing::Fired { into, .. }) if into.is_empty()));
}

#[test]
fn close_marks_entries_that_never_fired_and_those_that_did() {
    let plan0 = vec![
        entry(crash(), 0, None, aim(On::Acquired, Some(NodeAim::Shared), None)),
        entry(crash(), 0, None, aim(On::Contended, Some(NodeAim::Shared), None)),
    ];
    let mut plan: Vec<PlannedFault> = plan0
        .into_iter()
        .enumerate()
        .map(|(i, mut f)| {
            f.id = i;
            f
        })
        .collect();
    let mut a = Aimer::new(&plan, 5, 3);
    let out = a.acquired(1, 0, L0, &[3, 4, 0], &all);
    assert_eq!(crashed(&out), vec![0]);
    a.close(&mut plan);
    assert!(matches!(&plan[0].firing, Some(Firing::Fired { into, .. }) if into == &vec![2]));
    assert_eq!(plan[1].firing, Some(Firing::NeverFired));
}

#[test]
fn reachable_leaves_out_nodes_down_or_cut_either_way() {
    let mut links = LinkFaults::new(2, 4);
    let mut procs = ProcessFaults::new(4, 2);
    links.cut(&[0], &[1], CutDirection::ToClients, true);
    links.cut(&[1], &[2], CutDirection::ToNodes, true);
    procs.outage(3, true);
    assert_eq!(reachable(&links, &procs, 0, 4), vec![0, 2]);
    assert_eq!(reachable(&links, &procs, 1, 4), vec![0, 1]);
}

#[test]
fn the_probe_after_the_workload_clients_never_triggers_nor_is_a_target() {
    // aimer() has 3 workload clients; client 3 is the probe on a lock of its own.
    let delay = Fault::Delay {
        nodes: vec![],
        clients: vec![],
        extra_us: 700,
    };
    let mut a = aimer(vec![
        entry(
            delay,
            0,
            Some(50),
            aim(On::Acquiring, Some(NodeAim::Shared), Some(ClientAim::Others)),
        ),
        entry(crash(), 0, None, aim(On::Acquired, Some(NodeAim::Holder), None)),
    ]);
    assert!(a.acquiring(10, 3, L1, &all).is_empty());
    assert!(a.acquired(20, 3, L1, &[0, 1, 2], &all).is_empty());
    let out = a.acquiring(30, 1, L0, &all);
    match &out[..] {
        [PlannedFault {
            fault: Fault::Delay { clients, .. },
            ..
        }] => assert_eq!(clients, &vec![0, 2], "the others: workload clients only"),
        other => panic!("{other:?}"),
    }
    assert_eq!(crashed(&a.acquired(40, 1, L0, &[3, 4], &all)), vec![3, 4]);
}

#[test]
fn acquiring_with_replied_fires_when_that_many_nodes_answered_and_pending_is_the_rest() {
    let mut at_two = aim(On::Acquiring, Some(NodeAim::Pending), None);
    at_two.when.replied = Some(2);
    let mut a = aimer(vec![entry(crash(), 0, Some(0), at_two)]);
    assert!(a.wants_replies());
    assert!(a.acquiring(10, 0, L0, &all).is_empty(), "not at the invoke");
    assert!(a.replied(11, 0, 3, &all).is_empty());
    assert!(a.replied(12, 0, 3, &all).is_empty(), "a node answers once");
    assert!(a.replied(13, 1, 0, &all).is_empty(), "a client not acquiring");
    let out = a.replied(14, 0, 1, &all);
    assert_eq!(crashed(&out), vec![0, 2, 4], "the nodes yet to answer");
    match &out[0].firing {
        Some(Firing::FiredFrom { by, .. }) => assert_eq!(by.answered.as_deref(), Some(&[3, 1][..])),
        other => panic!("{other:?}"),
    }
    assert!(!a.wants_replies(), "it fired");
}

#[test]
fn pending_at_the_invoke_is_every_node_the_client_reaches_and_answers_reset_per_acquire() {
    let mut a = aimer(vec![entry(
        crash(),
        0,
        Some(0),
        aim(On::Acquiring, Some(NodeAim::Pending), None),
    )]);
    let reach = |_c: ClientId| vec![0, 2, 4];
    assert_eq!(crashed(&a.acquiring(1, 0, L0, &reach)), vec![0, 2, 4]);
    let mut at_one = aim(On::Acquiring, Some(NodeAim::Pending), None);
    at_one.when.replied = Some(1);
    let mut a = aimer(vec![entry(crash(), 0, Some(0), at_one)]);
    a.acquiring(1, 0, L0, &all);
    a.acquire_ended(0);
    assert!(
        a.replied(2, 0, 4, &all).is_empty(),
        "an answer after the acquire ended"
    );
    a.acquiring(3, 0, L0, &all);
    assert_eq!(crashed(&a.replied(4, 0, 4, &all)), vec![0, 1, 2, 3]);
}

#[test]
fn an_ok_whose_hold_already_ran_out_triggers_nothing() {
    let mut a = aimer(vec![entry(
        crash(),
        0,
        Some(0),
        aim(On::Acquired, Some(NodeAim::Holder), None),
    )]);
    let record = |kind, valid_until_mono_us| Record {
        kind,
        op: OpKind::Acquire,
        lock: L0,
        mode: crate::algorithm::Mode::Exclusive,
        token: None,
        valid_until_mono_us,
        nodes: Some(crate::algorithm::NodeSet(0b111)),
        attempts: Some(1),
        fence: None,
        phase: crate::history::Phase::Workload,
    };
    a.on_record(5, 0, &record(RecordKind::Invoke, None), true, &all);
    assert!(a
        .on_record(10, 0, &record(RecordKind::Ok, Some(9)), false, &all)
        .is_empty());
    a.on_record(11, 0, &record(RecordKind::Invoke, None), true, &all);
    assert_eq!(
        crashed(&a.on_record(20, 0, &record(RecordKind::Ok, Some(99)), true, &all)),
        vec![0, 1, 2]
    );
}
