//! The probe client (`[clients] probe`) in the simulator: a client on a lock of its own,
//! whose failed acquisitions while a majority was reachable the fault-tolerance judge
//! counts. Under a minority crash, a Redlock that needs every node (quorum = 5) fails
//! the probe and is found; the correct quorum is not. Contention alone (no fault)
//! misjudges nothing. A failing seed is printed.

use lockstorm::checker::LivenessFinding;
use lockstorm::run;
use lockstorm::scenario::Scenario;

/// Four clients on one lock and the probe; nodes 3 and 4 of 5 crash from 1 s to 3 s.
fn scenario(quorum: u32, crash: bool) -> Scenario {
    let faults = if crash {
        r#"
        [[faults]]
        at = "1s"
        kind = "crash"
        node = 3
        restart_after = "2s"

        [[faults]]
        at = "1s"
        kind = "crash"
        node = 4
        restart_after = "2s"
        "#
    } else {
        ""
    };
    let text = format!(
        r#"
        duration = "4s"
        nodes = 5
        [algorithm]
        kind = "redlock"
        ttl = "1s"
        quorum = {quorum}
        retry_count = 3
        retry_delay = {{ min = "5ms", max = "20ms" }}
        request_timeout = "50ms"
        [clients]
        count = 4
        think = "0ms"
        hold = {{ min = "50ms", max = "150ms" }}
        probe = true
        {faults}
        "#
    );
    Scenario::parse(&text, "probe.toml", "probe").unwrap_or_else(|e| panic!("{e}"))
}

/// Fault-tolerance findings by client.
fn tolerance_clients(findings: &lockstorm::checker::Findings) -> Vec<usize> {
    findings
        .liveness
        .iter()
        .filter_map(|l| match l {
            LivenessFinding::FaultTolerance { client, .. } => Some(*client),
            _ => None,
        })
        .collect()
}

#[test]
fn a_probe_failing_under_a_minority_crash_is_judged() {
    let s = scenario(5, true);
    for seed in 1..=3 {
        let (result, output, findings) = run::run_seed(&s, seed, &mut |_, _| {});
        let probe = result
            .stats
            .probe
            .clone()
            .unwrap_or_else(|| panic!("seed {seed}: no probe stats"));
        assert_eq!(
            probe.client, 4,
            "seed {seed}: the probe comes after the 4 clients"
        );
        // The history says who the probe is, so `lockstorm check` judges it the same way.
        match &output.history[0] {
            lockstorm::history::Event::Meta(m) => assert_eq!(m.probe_client, Some(4), "seed {seed}"),
            e => panic!("seed {seed}: first event {e:?}"),
        }
        assert!(
            probe.judged_during_faults > 0 && probe.judged_failed > 0,
            "seed {seed}: a quorum of 5 cannot acquire with 2 nodes down: {probe:?}"
        );
        let found = tolerance_clients(&findings);
        assert_eq!(
            found.iter().filter(|&&c| c == 4).count() as u64,
            probe.judged_failed,
            "seed {seed}: each judged failure of the probe is a finding: {found:?}"
        );
        let rechecked = lockstorm::checker::check(&output.history).unwrap();
        assert_eq!(rechecked.stats.probe, Some(probe), "seed {seed}: `check` agrees");
    }
}

#[test]
fn a_correct_quorum_keeps_the_probe_acquiring_through_the_crash() {
    let s = scenario(3, true);
    for seed in 1..=3 {
        let (result, _, findings) = run::run_seed(&s, seed, &mut |_, _| {});
        let probe = result.stats.probe.clone().unwrap();
        assert!(probe.judged_during_faults > 0, "seed {seed}: {probe:?}");
        assert_eq!(probe.judged_failed, 0, "seed {seed}: {probe:?}");
        assert!(
            !tolerance_clients(&findings).contains(&4),
            "seed {seed}: {:?}",
            findings.liveness
        );
        assert!(result.safe, "seed {seed}");
    }
}

#[test]
fn contention_alone_is_never_judged_a_fault_tolerance_failure() {
    let s = scenario(3, false);
    for seed in 1..=3 {
        let (result, _, findings) = run::run_seed(&s, seed, &mut |_, _| {});
        let probe = result.stats.probe.clone().unwrap();
        assert!(
            probe.judged > 10,
            "seed {seed}: the probe kept acquiring: {probe:?}"
        );
        assert_eq!((probe.judged_failed, probe.during_faults), (0, 0), "seed {seed}");
        assert!(
            tolerance_clients(&findings).is_empty(),
            "seed {seed}: {:?}",
            findings.liveness
        );
        // The four others contend for one lock: many fail, none is misjudged, and the
        // probe's share is not theirs.
        assert!(result.stats.failed > 0, "seed {seed}: the clients contended");
        assert!(
            probe.availability() > result.stats.contended_availability(),
            "seed {seed}: {} vs {}",
            probe.availability(),
            result.stats.contended_availability()
        );
        assert_eq!(result.stats.stalls, 0, "seed {seed}: no fault, no stall");
    }
}

#[test]
fn the_probe_takes_a_lock_no_other_client_uses() {
    let with = scenario(3, true);
    let (_, run, _) = run::run_seed(&with, 7, &mut |_, _| {});
    let invokes: Vec<&lockstorm::history::Op> = run
        .history
        .iter()
        .filter_map(|e| match e {
            lockstorm::history::Event::Invoke(o) => Some(o),
            _ => None,
        })
        .collect();
    assert!(invokes.iter().any(|o| o.client == 4), "the probe ran");
    for o in invokes {
        assert_eq!(o.client == 4, o.lock == "L1", "{o:?}");
    }
    let mut without = with.clone();
    without.clients.probe = None;
    let (_, run, _) = run::run_seed(&without, 7, &mut |_, _| {});
    match &run.history[0] {
        lockstorm::history::Event::Meta(m) => assert_eq!((m.clients, m.probe_client), (4, None)),
        e => panic!("{e:?}"),
    }
}
