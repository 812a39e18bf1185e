//! Exploration: the three counterexamples of issue 14 are found (shortest first) and
//! reproduced on the simulator; the two safe configurations are cleared within their
//! bounds, each against an unsafe twin explored with the same bounds.

mod common;

use lockstorm::explore::{self, Limits, Overrides, Verdict};
use lockstorm::scenario::Scenario;
use lockstorm::shrink::Kind;
use std::path::PathBuf;
use std::sync::Mutex;

/// One exploration at a time: the large ones hold a level of worlds in memory (about a
/// gigabyte) and already use every core.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(name)
}

fn explore(name: &str, o: &Overrides) -> explore::Exploration {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let scenario = Scenario::load(&file(name)).unwrap();
    explore::explore(&scenario, o, &Limits::default(), &|_| {}).unwrap()
}

/// A counterexample of `kind`, confirmed by the checker on the explorer's history and
/// reproduced by the simulator; returns its depth.
fn counterexample(name: &str, o: &Overrides, kind: Kind) -> usize {
    let done = explore(name, o);
    let cx = done.counterexample.as_ref().unwrap_or_else(|| {
        panic!(
            "{name}: {:?} ({} states)",
            done.searched.verdict, done.searched.states
        )
    });
    assert_eq!(cx.kind(), kind, "{name}");
    assert!(
        cx.confirmed,
        "{name}: the checker does not see it in the explorer's history"
    );
    assert!(
        cx.reproduced,
        "{name}: the simulator does not reproduce it:\n{}",
        cx.reproduction.to_toml("")
    );
    if kind == Kind::MutualExclusion {
        let story = cx.story.as_ref().expect("a violation has a story");
        assert!(story.steps.len() < 12, "{name}: {}", story.markdown());
    }
    cx.path.len()
}

fn cleared(name: &str, o: &Overrides) -> u64 {
    let done = explore(name, o);
    assert!(
        matches!(done.searched.verdict, Verdict::Clear),
        "{name}: {:?}",
        done.searched.verdict
    );
    assert!(
        done.searched.states > 1_000 && done.searched.depth >= 6,
        "{name}: a real search"
    );
    done.searched.states
}

#[test]
fn a_failover_to_a_lagging_replica_is_found() {
    // Acquire, the master dies, the replica is promoted, the other client acquires.
    assert_eq!(
        counterexample(
            "replica-failover.toml",
            &Overrides::default(),
            Kind::MutualExclusion
        ),
        6
    );
}

#[test]
fn a_restart_without_persistence_is_found_and_a_delayed_restart_is_cleared() {
    assert_eq!(
        counterexample(
            "restart-without-persistence.toml",
            &Overrides::default(),
            Kind::MutualExclusion
        ),
        7
    );
    // The same fault kinds, one crash, two cut links; the node stays down past the ttl.
    cleared("delayed-restart.toml", &Overrides::default());
}

#[test]
fn a_node_clock_jump_is_found() {
    assert_eq!(
        counterexample(
            "node-clock-jump.toml",
            &Overrides::default(),
            Kind::MutualExclusion
        ),
        6
    );
}

/// Three nodes, two clients, three cut links that may heal, six ticks of 125 ms.
fn fencing_bound() -> Overrides {
    Overrides {
        nodes: Some(3),
        clients: Some(2),
        partitions: Some(3),
        pauses: Some(0),
        ticks: Some(6),
        ..Overrides::default()
    }
}

#[test]
fn fencing_with_two_rounds_is_cleared_where_one_round_regresses() {
    counterexample("fencing-one-round.toml", &fencing_bound(), Kind::FenceRegression);
    cleared("fencing-pause.toml", &fencing_bound());
}

#[test]
fn the_command_prints_the_story_and_writes_a_scenario_that_reproduces_it() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = file("replica-failover.toml");
    let out = common::lockstorm(
        tmp.path(),
        &["explore", scenario.to_str().unwrap(), "--out", "cx"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("mutual exclusion violation found at depth 6"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1. t=") && stdout.contains("replica is promoted"),
        "{stdout}"
    );
    assert!(stdout.contains("(reproduced on the simulator)"), "{stdout}");
    let written = tmp.path().join("cx/replica-failover-explored.toml");
    common::runs_as_expected(tmp.path(), written.to_str().unwrap());
}

#[test]
fn what_explore_cannot_take_is_a_one_line_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("rw.toml"),
        "# rw\n[algorithm]\nkind = \"rw_redlock\"\n",
    )
    .unwrap();
    common::one_line_errors(
        tmp.path(),
        &[
            (&["explore", "rw.toml"][..], "exclusive locks"),
            (&["explore", "missing.toml"][..], "missing.toml"),
            (&["explore", "rw.toml", "--tick", "soon"][..], "soon"),
        ],
    );
}
