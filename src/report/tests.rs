//! The narrative and the view on hand-written histories.

use super::narrative::{explain, fault_sentence};
use super::view::RunView;
use crate::algorithm::Mode;
use crate::checker::check;
use crate::fault::{Fault, Origin};
use crate::history::{Event, FaultAction, FaultEvent, Meta, Op, OpKind};

/// Built from JSON, as a history has it, so fields added later keep their defaults.
fn meta(nodes: usize, clients: usize) -> Event {
    Event::Meta(
        serde_json::from_value::<Meta>(serde_json::json!({
            "t_us": 0, "scenario": "hand", "seed": 7, "algorithm": "redlock", "nodes": nodes,
            "clients": clients, "ttl_ms": 10_000, "liveness_bound_us": 1_000_000,
        }))
        .unwrap(),
    )
}
fn acq(t: u64, c: usize) -> Event {
    Event::Invoke(Op::new(t, c, OpKind::Acquire, "L0", Mode::Exclusive))
}
fn ok(t: u64, c: usize, valid_until: u64, nodes: &[usize], attempts: u32) -> Event {
    let mut o = Op::new(t, c, OpKind::Acquire, "L0", Mode::Exclusive);
    o.valid_until_us = Some(valid_until);
    o.nodes = Some(nodes.to_vec());
    o.attempts = Some(attempts);
    o.token = Some(format!("tok{c}"));
    Event::Ok(o)
}
fn fail(t: u64, c: usize) -> Event {
    Event::Fail(Op::new(t, c, OpKind::Acquire, "L0", Mode::Exclusive))
}
fn rel(t: u64, c: usize) -> Event {
    Event::Invoke(Op::new(t, c, OpKind::Release, "L0", Mode::Exclusive))
}
fn rel_ok(t: u64, c: usize) -> Event {
    Event::Ok(Op::new(t, c, OpKind::Release, "L0", Mode::Exclusive))
}
fn partition(t: u64, id: usize, action: FaultAction, nodes: &[usize], clients: &[usize]) -> Event {
    Event::Fault(FaultEvent {
        t_us: t,
        id,
        action,
        origin: Origin::Script,
        fault: partition_fault(nodes, clients),
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
        "Node 3 granted L0 to both clients: by the time client 5 asked, it no longer had client 3's key \
         (it had expired or been lost while client 3 still trusted its validity)."
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
        partition(100, 0, FaultAction::Start, &[1], &[2]),
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
            "the network cuts node 1 off from client 2 (already under way) [fault #0]",
            "client 0 acquires L0 on nodes 1,2 (validity 48.0 ms, until t=0.050 s)",
            "client 1 acquires L0 on nodes 0,1 (validity 56.0 ms, until t=0.060 s)",
        ]
    );
    assert_eq!(story.first_line, 2, "the story starts at the fault's line");
    assert!(
        story.why.ends_with("(it had expired or been lost while client 0 still trusted its validity; node 1 was hit by the faults above)."),
        "{}",
        story.why
    );
}

#[test]
fn every_fault_kind_has_a_sentence() {
    let all = partition_fault(&[0, 1], &[0, 1, 2]);
    assert_eq!(
        fault_sentence(&all, 3),
        "the network cuts nodes 0,1 off from every client"
    );
    assert_eq!(
        fault_sentence(&all, 4),
        "the network cuts nodes 0,1 off from clients 0,1,2"
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

#[test]
fn a_long_run_draws_a_bounded_overview_timeline() {
    // 20 clients × 5,000 holds over 600 s: 100k holds, far more than pixels.
    let mut h = vec![meta(5, 20)];
    let mut events = Vec::new();
    for c in 0..20u64 {
        for i in 0..5_000u64 {
            let t = i * 120_000 + c * 5_000;
            let c = c as usize;
            events.push(acq(t, c));
            events.push(ok(t + 500, c, t + 1_000_000, &[0, 1, 2], 1));
            events.push(rel(t + 3_000, c));
            events.push(rel_ok(t + 3_200, c));
        }
    }
    events.sort_by_key(Event::t_us);
    h.extend(events);
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
    assert!(dir.path().join("timeline.png").metadata().unwrap().len() > 10_000);
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
    };
    super::plots::save(&cdf, dir.path(), "wait-cdf").unwrap();
    let svg = std::fs::read_to_string(dir.path().join("wait-cdf.svg")).unwrap();
    assert!(
        svg.contains("read (n = 3)") && svg.contains("write (n = 2)"),
        "legend per mode"
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
