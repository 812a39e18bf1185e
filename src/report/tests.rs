//! The narrative and the view on hand-written histories.

use super::narrative::explain;
use super::view::RunView;
use super::words::fault_sentence;
use crate::algorithm::Mode;
use crate::checker::check;
use crate::fault::{Fault, Origin};
use crate::history::Deploy;
use crate::history::{Event, FaultAction, FaultEvent, Meta, Op, OpKind};
use serde_json::json;

/// Built from JSON, as a history has it, so fields added later keep their defaults.
pub(super) fn meta(nodes: usize, clients: usize) -> Event {
    Event::Meta(
        serde_json::from_value::<Meta>(serde_json::json!({
            "t_us": 0, "scenario": "hand", "seed": 7, "algorithm": "redlock", "nodes": nodes,
            "clients": clients, "ttl_ms": 10_000, "liveness_bound_us": 1_000_000,
        }))
        .unwrap(),
    )
}
pub(super) fn acq(t: u64, c: usize) -> Event {
    Event::Invoke(Op::new(t, c, OpKind::Acquire, "L0", Mode::Exclusive))
}
pub(super) fn ok(t: u64, c: usize, valid_until: u64, nodes: &[usize], attempts: u32) -> Event {
    let mut o = Op::new(t, c, OpKind::Acquire, "L0", Mode::Exclusive);
    o.valid_until_us = Some(valid_until);
    o.nodes = Some(nodes.iter().collect());
    o.attempts = Some(attempts);
    o.token = Some(format!("tok{c}").into());
    Event::Ok(o)
}
fn fail(t: u64, c: usize) -> Event {
    Event::Fail(Op::new(t, c, OpKind::Acquire, "L0", Mode::Exclusive))
}
pub(super) fn rel(t: u64, c: usize) -> Event {
    Event::Invoke(Op::new(t, c, OpKind::Release, "L0", Mode::Exclusive))
}
pub(super) fn rel_ok(t: u64, c: usize) -> Event {
    Event::Ok(Op::new(t, c, OpKind::Release, "L0", Mode::Exclusive))
}
pub(super) fn partition(t: u64, id: usize, action: FaultAction, nodes: &[usize], clients: &[usize]) -> Event {
    Event::Fault(FaultEvent {
        t_us: t,
        id,
        action,
        origin: Origin::Script,
        fault: partition_fault(nodes, clients),
    })
}

/// A fault event of any kind, the fault given as its history JSON.
pub(super) fn fault(t: u64, id: usize, action: FaultAction, f: serde_json::Value) -> Event {
    Event::Fault(FaultEvent {
        t_us: t,
        id,
        action,
        origin: Origin::Script,
        fault: serde_json::from_value(f).unwrap(),
    })
}

/// Built from JSON, as a history has it, so optional fields keep their defaults.
fn partition_fault(nodes: &[usize], clients: &[usize]) -> Fault {
    serde_json::from_value(serde_json::json!({"kind": "partition", "nodes": nodes, "clients": clients}))
        .unwrap()
}

#[test]
fn a_shared_node_that_granted_twice_is_told_with_the_fault_between() {
    let h = [
        meta(6, 6),
        acq(1_190_000, 3),
        ok(1_204_000, 3, 10_304_000, &[1, 2, 3], 1),
        partition(1_300_000, 0, FaultAction::Start, &[1, 2], &[5]),
        acq(1_305_000, 5),
        ok(1_310_000, 5, 11_000_000, &[3, 4, 5], 2),
        partition(2_000_000, 0, FaultAction::End, &[1, 2], &[5]),
        rel(3_000_000, 5),
        rel_ok(3_001_000, 5),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    assert_eq!(
        story.one_line(),
        "t=1.204 s client 3 acquires L0 on nodes 1,2,3 (validity 9.100 s, until t=10.304 s) \
         · t=1.300 s the network cuts nodes 1,2 off from client 5 [fault #0] \
         · t=1.310 s client 5 acquires L0 on nodes 3,4,5 (validity 9.690 s, until t=11.000 s, after 2 attempts) \
         · t=2.000 s the cut of fault #0 heals \
         · from t=1.310 s to t=3.000 s both client 3 and client 5 hold L0 (1.690 s), until client 5 releases"
    );
    assert_eq!(
        story.why,
        "Node 3 granted L0 to both clients: when client 5's successful attempt reached it, it no longer had \
         client 3's key \
         (it had expired, been lost, or been deleted by a release that does not check the token, while client 3 still trusted its validity)."
    );
    // From client 3's acquire invoke (line 2) to client 5's ok (line 6).
    assert_eq!((story.first_line, story.last_line), (2, 6));
}

#[test]
fn disjoint_minority_quorums_are_blamed_on_the_quorum_size() {
    let h = [
        meta(5, 2),
        acq(0, 0),
        acq(0, 1),
        ok(5_000, 0, 2_000_000, &[0, 1], 1),
        ok(6_000, 1, 2_000_000, &[3, 4], 1),
    ];
    let f = check(&h).unwrap();
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    assert_eq!(story.steps.len(), 2, "{story:?}");
    assert!(
        story
            .overlap
            .ends_with("(1.994 s), until client 1's validity runs out")
            || story
                .overlap
                .ends_with("(1.994 s), until client 0's validity runs out"),
        "{}",
        story.overlap
    );
    assert_eq!(
        story.why,
        "The two quorums (nodes 0,1 and nodes 3,4) share no node, so no node ever saw both requests: \
         a quorum of 2 out of 5 nodes is not a majority."
    );
}

#[test]
fn a_fault_already_under_way_is_told_first_and_later_faults_are_left_out() {
    let h = [
        meta(3, 3),
        partition(100, 0, FaultAction::Start, &[1], &[0]),
        acq(1_000, 0),
        ok(2_000, 0, 50_000, &[1, 2], 1),
        acq(3_000, 1),
        ok(4_000, 1, 60_000, &[0, 1], 1),
        rel(9_000, 0),
        rel_ok(9_500, 0),
        partition(20_000, 1, FaultAction::Start, &[2], &[0]),
    ];
    let f = check(&h).unwrap();
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    let texts: Vec<&str> = story.steps.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "the network cuts node 1 off from client 0 (already under way) [fault #0]",
            "client 0 acquires L0 on nodes 1,2 (validity 48.0 ms, until t=0.050 s)",
            "client 1 acquires L0 on nodes 0,1 (validity 56.0 ms, until t=0.060 s)",
        ]
    );
    assert_eq!(story.first_line, 2, "the story starts at the fault's line");
    assert!(
        story
            .why
            .ends_with("(it had expired, been lost, or been deleted by a release that does not check the token, while client 0 still trusted its validity)."),
        "{}",
        story.why
    );
}

/// Issue 10, 3(b): only faults that acted on the two holders or their nodes inside the
/// window are told, not every fault active at the time.
#[test]
fn only_faults_on_the_holders_and_their_nodes_are_told() {
    let h = [
        meta(5, 4),
        fault(500, 0, FaultAction::Start, json!({"kind": "crash", "node": 4})),
        fault(600, 1, FaultAction::Start, json!({"kind": "pause", "client": 3})),
        partition(700, 2, FaultAction::Start, &[0, 1], &[2, 3]),
        acq(1_000, 0),
        ok(2_000, 0, 900_000, &[0, 1, 2], 1),
        fault(3_000, 3, FaultAction::Start, json!({"kind": "crash", "node": 2})),
        fault(4_000, 3, FaultAction::End, json!({"kind": "crash", "node": 2})),
        acq(5_000, 1),
        ok(6_000, 1, 900_000, &[2, 3], 1),
        fault(
            7_000,
            4,
            FaultAction::Start,
            json!({"kind": "clock_rate", "client": 1, "rate": 1.01}),
        ),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    let told: Vec<&str> = story.steps.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(
        told,
        [
            "client 0 acquires L0 on nodes 0,1,2 (validity 898.0 ms, until t=0.900 s)",
            "node 2's process is killed [fault #3]",
            "node 2 restarts with what its persistence kept",
            "client 1 acquires L0 on nodes 2,3 (validity 894.0 ms, until t=0.900 s)",
            "client 1's clock runs at 1.01 times true time [fault #4]",
        ],
        "the crash of node 4, the pause of client 3 and the cut of clients 2,3 are elsewhere"
    );
    assert!(
        story
            .why
            .contains("node 2: it was killed and came back with only what its persistence kept (fault #3)"),
        "{}",
        story.why
    );
}

/// Issue 10, 3(a): a clock jump takes no time, and is told all the same, with what it
/// did to the key.
#[test]
fn a_node_clock_jump_is_told_in_the_story_and_marked_on_the_timeline() {
    let jump = json!({"kind": "clock_jump", "node": 2, "by_us": 10_000_000});
    let h = [
        meta(5, 2),
        partition(0, 0, FaultAction::Start, &[3, 4], &[0]),
        acq(1_000, 0),
        ok(2_000, 0, 9_900_000, &[0, 1, 2], 1),
        fault(3_000_000, 1, FaultAction::Start, jump.clone()),
        fault(3_000_000, 1, FaultAction::End, jump),
        acq(3_100_000, 1),
        ok(3_101_000, 1, 12_000_000, &[2, 3, 4], 2),
        rel(4_000_000, 0),
        rel_ok(4_000_100, 0),
    ];
    let f = check(&h).unwrap();
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    assert!(
        story
            .steps
            .iter()
            .any(|s| s.t_us == 3_000_000 && s.text == "node 2's wall clock jumps +10.000 s [fault #1]"),
        "{story:?}"
    );
    assert!(
        story.why.contains(
            "node 2: its wall clock jumped +10.000 s, so keys there expired that much early (fault #1)"
        ),
        "{}",
        story.why
    );
    let dir = tempfile::tempdir().unwrap();
    let around = super::plots::timeline::Timeline::around(&view, &f.violations[0]);
    super::plots::save(&around, dir.path(), "t").unwrap();
    let svg = std::fs::read_to_string(dir.path().join("t.svg")).unwrap();
    assert!(svg.contains("+10.000 s"), "the jump is labelled");
    assert!(svg.contains("#C80078"), "and marked in the clock-jump colour");
    assert!(svg.contains("clock jump"), "with a legend entry");
}

#[test]
fn every_fault_kind_has_a_sentence() {
    let all = partition_fault(&[0, 1], &[0, 1, 2]);
    assert_eq!(
        fault_sentence(&all, 3, None),
        "the network cuts nodes 0,1 off from every client"
    );
    assert_eq!(
        fault_sentence(&all, 4, None),
        "the network cuts nodes 0,1 off from clients 0,1,2"
    );
    // On a Sentinel deployment the partition splits the network around the master of
    // the moment, and a crash kills whichever member the sentinels name.
    let split = partition_fault(&[0], &[0]);
    assert_eq!(
        fault_sentence(&split, 2, Some(Deploy::Sentinel)),
        "the network splits node 0's master of the moment off from its replicas, the sentinels and client 0"
    );
    let crash = Fault::Crash {
        node: 0,
        power_loss: false,
    };
    assert_eq!(
        fault_sentence(&crash, 2, Some(Deploy::Sentinel)),
        "the master the sentinels name for node 0 is killed"
    );
    assert_eq!(fault_sentence(&crash, 2, None), "node 0's process is killed");
    // A replication cut: the replicas, not the clients, are cut off; its end catches
    // them up; a Sentinel crash's end demotes the killed member if another was promoted.
    let cut = Fault::ReplicationCut { node: 0 };
    assert_eq!(
        fault_sentence(&cut, 2, None),
        "node 0's master is cut off from its replica: the replica stops receiving its writes, while the clients still reach it"
    );
    assert!(fault_sentence(&cut, 2, Some(Deploy::Sentinel)).contains(
        "its replicas stop receiving its writes, while the clients and the sentinels still reach it"
    ));
    assert_eq!(
        super::words::fault_end_sentence(&cut, 3, None).as_deref(),
        Some("the replication cut of fault #3 heals: node 0's replicas catch up with their master")
    );
    assert!(
        super::words::fault_end_sentence(&crash, 1, Some(Deploy::Sentinel))
            .is_some_and(|s| s.starts_with("the killed member starts again"))
    );
    // In a cluster no sentinel decides: the other masters vote, and the sentences say so.
    let cluster = Some(Deploy::Cluster);
    assert_eq!(
        fault_sentence(&split, 2, cluster),
        "the network splits node 0's master of the moment off from every other node of the cluster (the other masters and every replica) and client 0"
    );
    assert_eq!(
        fault_sentence(&crash, 2, cluster),
        "the master that serves the lock's slot in node 0's cluster is killed"
    );
    assert!(
        fault_sentence(&cut, 2, cluster).ends_with("while the clients and the other masters still reach it")
    );
    let end = super::words::fault_end_sentence(&crash, 1, cluster).unwrap();
    assert!(
        end.contains("the masters voted another in") && !end.contains("sentinel"),
        "{end}"
    );
    let effect = super::causes::key_effect(&crash, 0, cluster).unwrap();
    assert!(
        effect.contains("a replica the other masters vote in") && !effect.contains("sentinel"),
        "{effect}"
    );
}

#[test]
fn waits_span_failed_attempts_and_latency_does_not() {
    let h = [
        meta(1, 1),
        acq(0, 0),
        fail(10, 0),
        acq(50, 0),
        ok(70, 0, 1_000, &[0], 1),
        rel(100, 0),
        rel_ok(101, 0),
    ];
    let f = check(&h).unwrap();
    let view = RunView::new(&h, &f);
    assert_eq!(view.latencies_us("exclusive"), vec![20]);
    assert_eq!(view.waits_us("exclusive"), vec![70]);
    assert_eq!(view.modes(), vec!["exclusive".to_string()]);
    assert!(!view.is_read_write());
}

/// `clients` × `each` holds of 2.5 ms, one every `every` µs per client, client c's
/// offset by c × `stagger`, with `more` events among them, in time order.
fn short_holds(clients: usize, each: u64, every: u64, stagger: u64, mut more: Vec<Event>) -> Vec<Event> {
    for c in 0..clients {
        for i in 0..each {
            let t = i * every + c as u64 * stagger;
            more.push(acq(t, c));
            more.push(ok(t + 500, c, t + 1_000_000, &[0, 1, 2], 1));
            more.push(rel(t + 3_000, c));
            more.push(rel_ok(t + 3_200, c));
        }
    }
    more.sort_by_key(Event::t_us);
    more
}

#[test]
fn a_long_run_draws_a_bounded_overview_timeline() {
    // 20 clients × 5,000 holds over 600 s: 100k holds, far more than pixels.
    let mut h = vec![meta(5, 20)];
    h.extend(short_holds(20, 5_000, 120_000, 5_000, Vec::new()));
    let f = check(&h).unwrap();
    assert_eq!(f.holds.len(), 100_000);
    assert!(f.is_safe());
    let view = RunView::new(&h, &f);
    let dir = tempfile::tempdir().unwrap();
    let overview = super::plots::timeline::Timeline::overview(&view);
    super::plots::save(&overview, dir.path(), "timeline").unwrap();
    let svg = std::fs::read_to_string(dir.path().join("timeline.svg")).unwrap();
    let rects = svg.matches("<rect").count();
    // At most about one bar per pixel column per client row, plus the frame and legend.
    assert!(rects <= 20 * 1_300 + 50, "{rects} rectangles");
    assert!(rects >= 20, "every client row has bars: {rects}");
    assert!(!dir.path().join("timeline.png").exists(), "SVG only");
}

#[test]
fn the_cdf_draws_one_line_per_mode_with_its_count() {
    let dir = tempfile::tempdir().unwrap();
    let cdf = super::plots::cdf::Cdf {
        title: "Wait time CDF per mode".into(),
        x_desc: "wait (ms)".into(),
        series: vec![
            ("read".into(), vec![100, 200, 300]),
            ("write".into(), vec![1_000, 50_000]),
            ("exclusive".into(), vec![]),
        ],
        censored: vec![0, 5],
    };
    super::plots::save(&cdf, dir.path(), "wait-cdf").unwrap();
    let svg = std::fs::read_to_string(dir.path().join("wait-cdf.svg")).unwrap();
    assert!(
        svg.contains("read (n = 3)") && svg.contains("write (n = 7; 5 never got it: the line stops at 29%)"),
        "legend per mode, with the writers that never got the lock: {svg}"
    );
    assert!(!svg.contains("exclusive (n"), "an empty mode draws no line");
    // Each mode in its own colour: read green, write purple; no exclusive blue.
    assert!(svg.contains("#2CA02C") && svg.contains("#9467BD"), "mode colours");
    assert!(!svg.contains("#1F77B4"));
}

#[test]
fn a_fault_while_the_first_holder_was_asking_is_told_with_when_it_asked() {
    // The checker relates only faults active once the hold began; the story also tells
    // one that struck while the first holder's request was on its way.
    let h = [
        meta(3, 2),
        acq(1_000_000, 0),
        partition(1_002_000, 0, FaultAction::Start, &[2], &[1]),
        partition(1_003_000, 0, FaultAction::End, &[2], &[1]),
        ok(1_004_000, 0, 3_000_000, &[0, 1], 1),
        acq(1_100_000, 1),
        ok(1_101_000, 1, 3_000_000, &[1, 2], 1),
    ];
    let f = check(&h).unwrap();
    assert_eq!(
        f.violations[0].faults,
        Vec::<usize>::new(),
        "the checker's window starts at the hold"
    );
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    let texts: Vec<(u64, &str)> = story.steps.iter().map(|s| (s.t_us, s.text.as_str())).collect();
    assert_eq!(
        texts,
        [
            (1_002_000, "the network cuts node 2 off from client 1 [fault #0]"),
            (1_003_000, "the cut of fault #0 heals"),
            (
                1_004_000,
                "client 0 acquires L0 on nodes 0,1 (asked at t=1.000 s, validity 1.996 s, until t=3.000 s)"
            ),
            (
                1_101_000,
                "client 1 acquires L0 on nodes 1,2 (validity 1.899 s, until t=3.000 s)"
            ),
        ]
    );
    assert!(
        story.why.starts_with("Node 1 granted L0 to both clients"),
        "{}",
        story.why
    );
}

#[test]
fn a_belief_that_moved_with_the_holders_clock_is_one_step_of_the_story() {
    // Client 0 believed until 1 s; its clock slowed at 0.5 s and it now believes until
    // 1.5 s, past client 1's acquisition at 1.2 s.
    let belief = Event::Belief(crate::history::Belief {
        t_us: 500_000,
        client: 0,
        lock: "L0".into(),
        token: Some("tok0".into()),
        valid_until_us: 1_500_000,
    });
    let h = [
        meta(3, 2),
        acq(0, 0),
        ok(10_000, 0, 1_000_000, &[0, 1, 2], 1),
        belief,
        acq(1_100_000, 1),
        ok(1_200_000, 1, 2_000_000, &[0, 1, 2], 1),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    let texts: Vec<&str> = story.steps.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(
        texts[1],
        "client 0's clock changed rate: it now believes it holds L0 until t=1.500 s"
    );
    assert!(
        story.overlap.starts_with("from t=1.200 s to t=1.500 s"),
        "{}",
        story.overlap
    );
}

#[test]
fn the_end_of_one_of_two_overlapping_crashes_does_not_restart_the_node() {
    let crash = |t, id, action| {
        Event::Fault(FaultEvent {
            t_us: t,
            id,
            action,
            origin: Origin::Script,
            fault: Fault::Crash {
                node: 1,
                power_loss: false,
            },
        })
    };
    let h = [
        meta(3, 2),
        acq(0, 0),
        ok(10_000, 0, 5_000_000, &[0, 1, 2], 1),
        crash(100_000, 0, FaultAction::Start),
        crash(200_000, 1, FaultAction::Start),
        crash(300_000, 0, FaultAction::End),
        acq(400_000, 1),
        ok(500_000, 1, 5_000_000, &[0, 2], 1),
        crash(600_000, 1, FaultAction::End),
        rel(700_000, 1),
    ];
    let f = check(&h).unwrap();
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    let texts: Vec<&str> = story.steps.iter().map(|s| s.text.as_str()).collect();
    assert!(
        texts.contains(&"fault #0 ends, but fault #1 still holds its target"),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"node 1 restarts with what its persistence kept"),
        "{texts:?}"
    );
}

#[test]
fn a_modes_name_is_the_one_the_history_writes() {
    use crate::algorithm::Mode;
    for mode in [Mode::Exclusive, Mode::Read, Mode::Write] {
        assert_eq!(
            serde_json::to_value(mode).unwrap(),
            serde_json::Value::from(mode.name())
        );
    }
}

/// A Sentinel deployment's history, from JSON lines: the SETs name the master that took
/// them (`member`), the sentinels' switches and demotions are lines of their own.
fn sentinel_history(lines: &[serde_json::Value]) -> Vec<Event> {
    let mut h = vec![meta(1, 2)];
    h.extend(
        lines
            .iter()
            .map(|l| serde_json::from_value::<Event>(l.clone()).unwrap()),
    );
    h
}

fn set_on(t: u64, c: usize, member: &str) -> serde_json::Value {
    json!({"type": "node", "t_us": t, "node": 0, "lock": "L0", "key": "L0", "action": "set",
           "client": c, "token": format!("tok{c}"), "ttl_ms": 10_000, "member": member})
}

fn switch(t: u64, from: &str, to: &str) -> serde_json::Value {
    json!({"type": "sentinel", "t_us": t, "sentinel": "sentinel0", "event": "+switch-master",
           "instance": to, "role": "master", "from": from})
}

fn op(e: Event) -> serde_json::Value {
    serde_json::to_value(e).unwrap()
}

/// The story of the first violation the checker finds in `h`.
fn first_story(h: &[Event]) -> super::narrative::Story {
    let f = check(h).unwrap();
    let view = RunView::new(h, &f);
    let v = view.violations().first().cloned().expect("a violation");
    explain(&view, v)
}

/// Two holds whose SETs went to two masters: the old one accepting a SET after the
/// sentinels moved the master away from it is a split brain; a SET before the switch
/// and the next on the promoted replica is a key lost on failover. Each names the lines.
#[test]
fn two_masters_of_a_sentinel_deployment_are_a_split_brain_or_a_failover() {
    let story = first_story;
    // Lines: 2 switch, 3-5 client 1 on redis1, 6-8 client 0 on the old master redis0.
    let h = sentinel_history(&[
        switch(1_000, "redis0", "redis1"),
        op(acq(2_000, 1)),
        set_on(2_100, 1, "redis1"),
        op(ok(2_100, 1, 9_000_000, &[0], 1)),
        op(acq(3_000, 0)),
        set_on(3_100, 0, "redis0"),
        op(ok(3_100, 0, 9_000_000, &[0], 1)),
    ]);
    let named = story(&h).anomaly.expect("named");
    assert_eq!(named.kind, super::anomaly::Anomaly::SplitBrain, "{}", named.cause);
    assert_eq!(named.lines, vec![2, 4, 5, 7, 8]);
    assert!(
        named.cause.contains("moved the master from redis0 to redis1 (line 2), yet redis0, not demoted, still accepted client 0's SET (line 7), while client 1's went to redis1 (line 4)"),
        "{}",
        named.cause
    );
    assert!(
        story(&h)
            .why
            .starts_with("Node 0 granted L0 to both clients (the sentinels"),
        "{}",
        story(&h).why
    );

    // Demoted before it took the SET: no longer a master, so no split brain.
    let mut demoted = h.clone();
    demoted.insert(
        5,
        serde_json::from_value(json!({"type": "sentinel", "t_us": 2_500, "sentinel": "sentinel0",
            "event": "+convert-to-slave", "instance": "redis0", "role": "replica"}))
        .unwrap(),
    );
    let named = story(&demoted).anomaly.expect("named");
    assert_ne!(named.kind, super::anomaly::Anomaly::SplitBrain, "{}", named.cause);

    // Client 0 on redis0 before the switch, client 1 on redis1 after it.
    let failover = [
        op(acq(1_000, 0)),
        set_on(1_100, 0, "redis0"),
        op(ok(1_100, 0, 9_000_000, &[0], 1)),
        switch(2_000, "redis0", "redis1"),
        op(acq(3_000, 1)),
        set_on(3_100, 1, "redis1"),
        op(ok(3_100, 1, 9_000_000, &[0], 1)),
    ];
    let h = sentinel_history(&failover);
    let named = story(&h).anomaly.expect("named");
    assert_eq!(
        named.kind,
        super::anomaly::Anomaly::KeyLostOnFailover,
        "{}",
        named.cause
    );
    assert_eq!(named.lines, vec![3, 4, 5, 7, 8]);
    assert!(named.cause.contains("client 0's SET went to redis0 (line 3); the sentinels then moved the master to redis1 (line 5), where client 1's SET NX succeeded (line 7)"), "{}", named.cause);

    // The same with redis0's replication cut in force at its SET: the story cites the
    // cut; a cut that healed before the SET is not cited.
    let cut = |t: u64, action: &str| {
        json!({"type": "fault", "t_us": t, "id": 0, "action": action, "origin": "script",
               "kind": "replication_cut", "node": 0})
    };
    let with_cut = |before: &[serde_json::Value]| {
        let mut lines = before.to_vec();
        lines.extend(failover.iter().cloned());
        story(&sentinel_history(&lines)).anomaly.expect("named")
    };
    let named = with_cut(&[cut(500, "start")]);
    assert_eq!(named.kind, super::anomaly::Anomaly::KeyLostOnFailover);
    assert!(
        named.cause.contains("client 0's SET went to redis0 (line 4) while its replicas were cut off from it (since t=0.001 s, fault #0, line 2); the sentinels"),
        "{}",
        named.cause
    );
    assert!(named.lines.contains(&2), "{:?}", named.lines);
    let ended = with_cut(&[cut(500, "start"), cut(600, "end")]);
    assert!(!ended.cause.contains("cut off"), "{}", ended.cause);

    // The leader names the replica it promotes before the sentinels say +switch-master:
    // a client that asks in between finds it, and the promotion is the cited line.
    let h = sentinel_history(&[
        op(acq(1_000, 0)),
        set_on(1_100, 0, "redis0"),
        op(ok(1_100, 0, 9_000_000, &[0], 1)),
        json!({"type": "sentinel", "t_us": 2_000, "sentinel": "sentinel2",
               "event": "+failover-state-send-slaveof-noone", "instance": "redis1", "role": "replica"}),
        op(acq(3_000, 1)),
        set_on(3_100, 1, "redis1"),
        op(ok(3_100, 1, 9_000_000, &[0], 1)),
        switch(4_000, "redis0", "redis1"),
    ]);
    let named = story(&h).anomaly.expect("named");
    assert_eq!(
        named.kind,
        super::anomaly::Anomaly::KeyLostOnFailover,
        "{}",
        named.cause
    );
    assert!(
        named.cause.contains("sentinel2, leading the failover, then promoted redis1 (line 5), where client 1's SET NX succeeded (line 7)"),
        "{}",
        named.cause
    );
}

/// A deployment's meta line says the mitigations in force, and a story of a key lost
/// on failover or a split brain names them, citing line 1: min-replicas-to-write 0 (the
/// default) took the SET counting no replica; min-replicas-to-write 1 took it within
/// the lag after the cut began (citing the cut); the lock's WAIT, or none, is named
/// only for the built-in lock, whose calls lockstorm sees.
#[test]
fn a_sentinel_story_names_the_mitigations_in_force() {
    let named = |mitigations: serde_json::Value, lines: &[serde_json::Value]| {
        let mut h = vec![serde_json::from_value::<Event>(json!({
            "type": "meta", "t_us": 0, "scenario": "hand", "seed": 7, "algorithm": "single",
            "nodes": 1, "clients": 2, "ttl_ms": 10_000, "liveness_bound_us": 1_000_000,
            "deployment": "sentinel", "mitigations": mitigations}))
        .unwrap()];
        h.extend(
            lines
                .iter()
                .map(|l| serde_json::from_value::<Event>(l.clone()).unwrap()),
        );
        first_story(&h).anomaly.expect("named")
    };
    let cut = json!({"type": "fault", "t_us": 500_000, "id": 0, "action": "start",
                     "origin": "script", "kind": "replication_cut", "node": 0});
    // Client 0 on redis0 (line 4) 0.6 s into the cut (line 2), client 1 on redis1 after
    // the switch.
    let failover = [
        cut.clone(),
        op(acq(1_000_000, 0)),
        set_on(1_100_000, 0, "redis0"),
        op(ok(1_100_000, 0, 9_000_000, &[0], 1)),
        switch(2_000_000, "redis0", "redis1"),
        op(acq(3_000_000, 1)),
        set_on(3_100_000, 1, "redis1"),
        op(ok(3_100_000, 1, 9_000_000, &[0], 1)),
    ];
    let off = named(
        json!({"min_replicas_to_write": 0, "min_replicas_max_lag_s": 10, "wait_replicas": 0}),
        &failover,
    );
    assert_eq!(
        off.kind,
        super::anomaly::Anomaly::KeyLostOnFailover,
        "{}",
        off.cause
    );
    assert!(
        off.cause.ends_with("so it did not have the first key; min-replicas-to-write was 0, Redis's default (line 1), so redis0 took the SET without counting a single replica, and the lock sent no WAIT after its SET"),
        "{}",
        off.cause
    );
    assert_eq!(off.lines[0], 1, "{:?}", off.lines);

    let on = named(
        json!({"min_replicas_to_write": 1, "min_replicas_max_lag_s": 1, "wait_replicas": 0}),
        &failover,
    );
    assert!(
        on.cause.contains("; min-replicas-to-write 1 with min-replicas-max-lag 1 s (line 1) did not refuse it: redis0 still counted 1 replica acknowledged within 1 s when it took the SET, 600.0 ms into the replication cut (fault #0, line 2), inside the window the mitigation leaves open (a cut's first 1 to 2 s), and the lock sent no WAIT after its SET"),
        "{}",
        on.cause
    );
    assert!(on.lines.starts_with(&[1, 2]), "{:?}", on.lines);

    // A worker's library: what it sends is not said; WAIT for one replica: what it shows.
    let worker = named(
        json!({"min_replicas_to_write": 0, "min_replicas_max_lag_s": 10}),
        &failover,
    );
    assert!(
        worker.cause.ends_with("without counting a single replica"),
        "{}",
        worker.cause
    );
    let wait = named(
        json!({"min_replicas_to_write": 0, "min_replicas_max_lag_s": 10, "wait_replicas": 1}),
        &failover,
    );
    assert!(
        wait.cause.ends_with("; the lock's WAIT for 1 replica after its SET showed only that 1 had the key, not that the one to be promoted did"),
        "{}",
        wait.cause
    );

    // The old master, not demoted, takes a SET after the switch: a split brain, whose
    // story names the same mitigations for that SET.
    let split = named(
        json!({"min_replicas_to_write": 0, "min_replicas_max_lag_s": 10, "wait_replicas": 0}),
        &[
            switch(1_000, "redis0", "redis1"),
            op(acq(2_000, 1)),
            set_on(2_100, 1, "redis1"),
            op(ok(2_100, 1, 9_000_000, &[0], 1)),
            op(acq(3_000, 0)),
            set_on(3_100, 0, "redis0"),
            op(ok(3_100, 0, 9_000_000, &[0], 1)),
        ],
    );
    assert_eq!(split.kind, super::anomaly::Anomaly::SplitBrain, "{}", split.cause);
    assert!(
        split.cause.ends_with("two masters at once; min-replicas-to-write was 0, Redis's default (line 1), so redis0 took the SET without counting a single replica, and the lock sent no WAIT after its SET"),
        "{}",
        split.cause
    );
    assert_eq!(split.lines, vec![1, 2, 4, 5, 7, 8]);
}

#[test]
fn the_whole_run_timeline_accounts_for_every_hold_within_its_budget() {
    // 8 clients × 600 holds over 60 s, and a partition of node 1 from 10 s to 20 s.
    let mut h = vec![meta(3, 8)];
    let cut = vec![
        partition(10_000_000, 0, FaultAction::Start, &[1], &[]),
        partition(20_000_000, 0, FaultAction::End, &[1], &[]),
    ];
    h.extend(short_holds(8, 600, 100_000, 10_000, cut));
    let f = check(&h).unwrap();
    assert_eq!(f.holds.len(), 4_800);
    let view = RunView::new(&h, &f);
    use super::interactive::{timeline, Budget, Focus};
    let focus = Focus {
        lock: "L0".into(),
        from_us: 30_000_000,
        to_us: 30_500_000,
        band: (30_100_000, 30_200_000),
    };
    for (budget, focus) in [(Budget::FULL, None), (Budget::COMMITTED, Some(&focus))] {
        let svg = timeline(&view, focus, budget);
        for row in ["node 0", "node 2", "partition faults", "client 0", "client 7"] {
            assert!(svg.contains(&format!(">{row}</text>")), "a row for {row}");
        }
        // Holds one by one (a title naming the hold), the rest merged into bars that
        // say how many they stand for: together, every hold once.
        let one_by_one = svg.matches(" holds L0 (exclusive)").count();
        let merged: usize = svg
            .split("<title>client ")
            .skip(1)
            .filter_map(|t| {
                // "3: 12 holds as one bar, lines 120–480"
                let (n, rest) = t.split(": ").nth(1)?.split_once(' ')?;
                rest.starts_with("holds as one bar")
                    .then(|| n.parse::<usize>().ok())?
            })
            .sum();
        assert_eq!(one_by_one, budget.holds, "{budget:?}");
        assert_eq!(one_by_one + merged, 4_800, "{budget:?}");
        // Merged bars lie under the holds drawn one by one (the finding's), not over.
        assert!(
            svg.rfind(" holds as one bar").unwrap() < svg.find(" holds L0 (exclusive)").unwrap(),
            "{budget:?}: a merged bar drawn after a hold"
        );
        let bars = svg.matches(" holds as one bar").count();
        assert!(bars <= budget.bars && bars >= 8, "{bars} bars, {budget:?}");
        // The partition: on its kind's row and node 1's, linked to its start line.
        let line = h.iter().position(|e| matches!(e, Event::Fault(_))).unwrap() + 1;
        assert_eq!(svg.matches(&format!("<a href=\"#L{line}\">")).count(), 2);
        assert!(svg.contains(&format!("node 1: fault 0 (partition), line {line}")));
        // A focus opens the window on it and shades its band; else the whole run.
        let opens = match focus {
            Some(_) => "data-a=\"30000000\" data-b=\"30500000\"".to_string(),
            None => format!("data-a=\"0\" data-b=\"{}\"", view.end_us),
        };
        assert!(svg.contains(&opens), "{budget:?}: opens on {opens}");
        assert_eq!(svg.contains("the finding&#39;s window"), focus.is_some());
        if focus.is_some() {
            // The holds in the window come first among those drawn one by one.
            assert!(svg.contains("from t=30.000 s") || svg.contains("from t=30.010 s"));
        }
    }
}
