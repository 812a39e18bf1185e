//! Properties over random seeds and random small scenarios (proptest).
//!
//! A failing case prints its seed and parameters; rerun it with the scenario text it shows.

use lockstorm::checker;
use lockstorm::history::{Event, Op, OpKind};
use lockstorm::scenario::Scenario;
use lockstorm::sim;
use proptest::prelude::*;

/// A small Redlock scenario with random partitions and the given knobs. The request
/// timeout (10 ms) outlasts the longest round trip (2 x 3 ms): a reply that timed out
/// would fail an acquisition with a majority reachable, which is no fault of the lock.
fn scenario(nodes: usize, clients: usize, fanout: &str, ttl_ms: u64, locks: u32) -> Scenario {
    let text = format!(
        r#"
        duration = "20s"
        nodes = {nodes}
        [algorithm]
        ttl = "{ttl_ms}ms"
        fanout = "{fanout}"
        request_timeout = "10ms"
        retry_delay = {{ min = "0ms", max = "20ms" }}
        [clients]
        count = {clients}
        locks = {locks}
        think = {{ min = "0ms", max = "10ms" }}
        hold = {{ min = "0ms", max = "30ms" }}
        [network]
        latency = {{ min = "0.1ms", max = "3ms" }}
        [nemesis]
        partition = {{ interval = {{ mean = "300ms" }}, duration = {{ min = "10ms", max = "1s" }} }}
        "#
    );
    Scenario::parse(&text, "property", "property").expect("valid scenario")
}

fn arb_scenario() -> impl Strategy<Value = Scenario> {
    (
        prop::sample::select(vec![1usize, 3, 5, 7]),
        1usize..6,
        prop::sample::select(vec!["parallel", "sequential"]),
        50u64..2_000,
        1u32..3,
    )
        .prop_map(|(n, c, f, ttl, locks)| scenario(n, c, f, ttl, locks))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Any seed gives a well-formed history that starts with `meta`, and Redlock with a
    /// majority quorum and perfect clocks stays safe and live under any partitions.
    #[test]
    fn any_seed_gives_a_well_formed_safe_and_live_history(s in arb_scenario(), seed in any::<u64>()) {
        let out = sim::run(&s, seed);
        prop_assert!(matches!(out.history.first(), Some(Event::Meta(_))));
        let findings = checker::check(&out.history)
            .map_err(|e| TestCaseError::fail(format!("seed {seed}: malformed: {e}")))?;
        prop_assert!(findings.is_safe(), "seed {seed}: {:?}", findings.violations.first());
        prop_assert!(findings.is_live(), "seed {seed}: {:?}", findings.liveness);
        prop_assert!(findings.stats.acquires > 0, "seed {seed}: no acquisitions at all");
    }

    /// Injecting a second holder inside any successful hold of a safe history is caught.
    #[test]
    fn the_checker_flags_an_overlap_injected_into_a_safe_history(seed in any::<u64>(), pick in any::<prop::sample::Index>()) {
        let s = scenario(5, 3, "parallel", 500, 1);
        let mut history = sim::run(&s, seed).history;
        let base = checker::check(&history).unwrap();
        prop_assert!(base.is_safe());
        // Holds that last at least 2us, whatever ended them (release or validity).
        let holds: Vec<_> = base.holds.iter().filter(|h| h.end_us > h.start_us + 1).collect();
        prop_assume!(!holds.is_empty());
        let hold = holds[pick.index(holds.len())];
        let (i, held) = match &history[hold.ok_line - 1] {
            Event::Ok(o) => (hold.ok_line - 1, o.clone()),
            other => panic!("ok_line points at {other:?}"),
        };
        // A client that is not in the run acquires the same lock 1us after: one more
        // client on the meta line, so the history stays well formed.
        let Some(Event::Meta(meta)) = history.first_mut() else { panic!("no meta line") };
        let intruder = meta.clients;
        meta.clients += 1;
        let t = held.t_us + 1;
        let mut invoke = Op::new(t, intruder, OpKind::Acquire, held.lock.clone(), held.mode);
        invoke.phase = held.phase;
        let mut ok = invoke.clone();
        ok.valid_until_us = Some(t + 1_000);
        let at = history[i + 1..].iter().position(|e| e.t_us() > t).map_or(history.len(), |p| i + 1 + p);
        history.insert(at, Event::Ok(ok));
        history.insert(at, Event::Invoke(invoke));
        let findings = checker::check(&history).unwrap();
        prop_assert!(
            findings.violations.iter().any(|v| v.first.client == intruder || v.second.client == intruder),
            "seed {seed}: injected overlap at t={t} not found"
        );
    }
}
