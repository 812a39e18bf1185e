//! The simulator under faults: whole runs of small scenarios, and one classic case
//! driven by hand, step by step over simulated time.

use super::node::Node;
use crate::algorithm::{self, Now, Output};
use crate::checker::{self, Findings};
use crate::command::{LockId, Reply};
use crate::fault::{Fault, Persistence};
use crate::history::{Event, FaultAction, OpKind};
use crate::scenario::Scenario;

fn scenario(text: &str) -> Scenario {
    Scenario::parse(text, "t.toml", "t").unwrap()
}

pub(super) fn run(text: &str, seed: u64) -> (Vec<Event>, Findings) {
    let out = super::run(&scenario(text), seed);
    let findings = checker::check(&out.history).unwrap();
    (out.history, findings)
}

/// Two clients that each reach three of five nodes, sharing node 2 (seed 002's "3 of 5").
pub(super) const SPLIT: &str = r#"
nodes = 5
duration = "12s"
[algorithm]
ttl = "10s"
retry_delay = { min = "0ms", max = "50ms" }
request_timeout = "20ms"
[clients]
count = 2
think = { min = "0ms", max = "10ms" }
hold = "4s"
[[faults]]
at = "0s"
kind = "partition"
nodes = [3, 4]
clients = [0]
[[faults]]
at = "0s"
kind = "partition"
nodes = [0, 1]
clients = [1]
"#;

#[test]
fn every_fault_kind_is_deterministic_per_seed() {
    let text = r#"
nodes = 3
duration = "5s"
persistence = "aof_everysec"
[replication]
lag = "50ms"
[algorithm]
ttl = "500ms"
request_timeout = "20ms"
[clients]
count = 4
[nemesis]
partition = { interval = "400ms", duration = "200ms" }
crash = { interval = "700ms", duration = "100ms", power_loss = true }
pause = { interval = "600ms", duration = "300ms" }
clock_jump = { interval = "900ms", max = "200ms" }
clock_rate = { interval = "800ms", duration = "500ms", max_deviation = 0.05 }
delay = { interval = "500ms", duration = "200ms", extra = { min = "1ms", max = "30ms" } }
loss = { interval = "500ms", duration = "300ms", probability = 0.3 }
failover = { interval = "1s", duration = "100ms" }
"#;
    let (a, _) = run(text, 7);
    let (b, _) = run(text, 7);
    let (c, _) = run(text, 8);
    assert_eq!(a, b, "same seed, same history");
    assert_ne!(a, c);
    for kind in [
        "partition",
        "crash",
        "pause",
        "clock_jump",
        "clock_rate",
        "delay",
        "loss",
        "failover",
    ] {
        let starts = a
            .iter()
            .filter(
                |e| matches!(e, Event::Fault(f) if f.fault.kind() == kind && f.action == FaultAction::Start),
            )
            .count();
        let ends = a
            .iter()
            .filter(
                |e| matches!(e, Event::Fault(f) if f.fault.kind() == kind && f.action == FaultAction::End),
            )
            .count();
        assert!(starts > 0, "{kind} never started");
        assert_eq!(starts, ends, "every {kind} that starts ends by the heal");
    }
}

#[test]
fn a_restart_without_persistence_breaks_redlock_and_aof_always_does_not() {
    let crash = "[[faults]]\nat = \"3s\"\nkind = \"crash\"\nnode = 2\nrestart_after = \"0s\"\n";
    let (_, none) = run(&format!("persistence = \"none\"\n{SPLIT}{crash}"), 1);
    assert!(!none.is_safe(), "node 2 forgot the holder's key");
    let v = &none.violations[0];
    assert!(v.overlap_start_us >= 3_000_000, "{v:?}");
    assert!(v.second.nodes.contains(&2) && v.first.nodes.contains(&2));
    let (_, always) = run(&format!("persistence = \"aof_always\"\n{SPLIT}{crash}"), 1);
    assert!(always.is_safe());
    let (_, kill) = run(&format!("persistence = \"aof_everysec\"\n{SPLIT}{crash}"), 1);
    assert!(kill.is_safe(), "a process kill loses nothing under everysec");
}

#[test]
fn a_node_clock_jump_forward_expires_the_key_and_a_small_one_does_not() {
    let jump = |by: &str| {
        format!("{SPLIT}[[faults]]\nat = \"3s\"\nkind = \"clock_jump\"\nnode = 2\nby = \"{by}\"\n")
    };
    let (h, big) = run(&jump("+10s"), 1);
    assert!(!big.is_safe());
    assert!(h.iter().any(|e| matches!(e, Event::Fault(f)
        if f.fault == Fault::ClockJump { node: Some(2), client: None, by_us: 10_000_000 })));
    let (_, small) = run(&jump("+1s"), 1);
    assert!(small.is_safe(), "keys still have most of their ttl");
}

#[test]
fn a_slow_client_clock_outlives_its_keys_and_a_drift_inside_the_allowance_does_not() {
    let text = |rate: f64| {
        format!(
            r#"
nodes = 3
duration = "10s"
[algorithm]
ttl = "1s"
retry_delay = {{ min = "0ms", max = "20ms" }}
request_timeout = "20ms"
[clients]
count = 2
think = {{ min = "0ms", max = "10ms" }}
hold = "5s"
[[faults]]
at = "0s"
kind = "clock_rate"
client = 0
rate = {rate}
"#
        )
    };
    // At half speed client 0 believes its 1 s validity for 2 s of true time.
    let (_, slow) = run(&text(0.5), 1);
    assert!(!slow.is_safe());
    assert!(slow
        .violations
        .iter()
        .all(|v| v.first.client == 0 || v.second.client == 0));
    // 0.5% slow is inside the 1% drift allowance.
    let (_, drift) = run(&text(0.995), 1);
    assert!(drift.is_safe());
}

#[test]
fn a_pause_before_the_validity_check_is_caught_by_the_elapsed_time_check() {
    let text = |check: bool| {
        format!(
            r#"
nodes = 3
duration = "10s"
[algorithm]
ttl = "1s"
retry_delay = {{ min = "0ms", max = "20ms" }}
request_timeout = "20ms"
check_elapsed = {check}
[clients]
count = 2
think = {{ min = "0ms", max = "10ms" }}
hold = "2s"
# Client 1 cannot compete until 2.5 s, so client 0's attempt at 2 s succeeds.
[[faults]]
at = "0s"
kind = "partition"
nodes = [0, 1, 2]
clients = [1]
duration = "2500ms"
[[faults]]
at = "2s"
kind = "pause"
client = 0
point = "before_validity_check"
duration = "1500ms"
"#
        )
    };
    let (h, checked) = run(&text(true), 1);
    assert!(checked.is_safe());
    let start = h
        .iter()
        .find_map(|e| match e {
            Event::Fault(f) if f.action == FaultAction::Start && f.fault.kind() == "pause" => Some(f.t_us),
            _ => None,
        })
        .expect("the pause started");
    assert!(start >= 2_000_000);
    // Client 0 was acquiring when the pause began and decided only after it ended.
    let decided = h
        .iter()
        .find(|e| {
            matches!(e, Event::Ok(o) | Event::Fail(o) | Event::Info(o)
            if o.client == 0 && o.op == OpKind::Acquire && o.t_us >= start)
        })
        .expect("client 0 finished its acquisition");
    assert!(decided.t_us() >= start + 1_500_000, "{decided:?}");
    let (_, unchecked) = run(&text(false), 1);
    assert!(
        !unchecked.is_safe(),
        "validity counted from after the pause outlives the keys"
    );
}

#[test]
fn a_client_paused_after_acquiring_is_overtaken_but_the_lock_level_verdict_is_safe() {
    let (h, f) = run(
        r#"
nodes = 5
duration = "10s"
[algorithm]
ttl = "2s"
request_timeout = "20ms"
[clients]
count = 2
think = { min = "0ms", max = "10ms" }
hold = { min = "50ms", max = "100ms" }
[[faults]]
at = "1s"
kind = "pause"
client = 0
point = "after_acquire"
duration = "5s"
"#,
        1,
    );
    assert!(f.is_safe());
    let paused = h
        .iter()
        .position(|e| matches!(e, Event::Fault(f) if f.action == FaultAction::Start))
        .unwrap();
    let Event::Ok(held) = &h[paused - 1] else {
        panic!("the pause follows client 0's acquisition: {:?}", h[paused - 1])
    };
    let valid_until = held.valid_until_us.unwrap();
    let resume = held.t_us + 5_000_000;
    // Client 1 took the lock after client 0's validity but while client 0 slept: the
    // stale-write window that fencing tokens (issue 4) close.
    assert!(h.iter().any(|e| matches!(e, Event::Ok(o)
        if o.client == 1 && o.op == OpKind::Acquire && o.t_us >= valid_until && o.t_us < resume)));
    let release = h
        .iter()
        .find(|e| matches!(e, Event::Invoke(o) if o.client == 0 && o.op == OpKind::Release && o.t_us > held.t_us))
        .unwrap();
    assert_eq!(
        release.t_us(),
        resume,
        "client 0 acts again only when the pause ends"
    );
}

#[test]
fn a_paused_node_serves_its_queue_when_its_last_pause_ends() {
    let one_pause = r#"
nodes = 1
duration = "4s"
[algorithm]
kind = "single"
ttl = "1s"
retry_count = 0
request_timeout = "20ms"
[clients]
count = 1
think = "10ms"
hold = "1ms"
[[faults]]
at = "1s"
kind = "pause"
node = 0
duration = "1s"
"#;
    let ok_in = |h: &[Event], from: u64, to: u64| {
        h.iter()
            .filter(|e| matches!(e, Event::Ok(o) if o.op == OpKind::Acquire && (from..to).contains(&o.t_us)))
            .count()
    };
    let (h, f) = run(one_pause, 1);
    assert!(f.is_safe() && f.is_live(), "{:?}", f.liveness);
    assert_eq!(
        ok_in(&h, 1_000_100, 2_000_000),
        0,
        "nothing is served while paused"
    );
    assert!(ok_in(&h, 0, 1_000_000) > 10 && ok_in(&h, 2_100_000, 4_000_000) > 10);
    // A second pause from 1.5 s to 2.5 s: the end of the first does not resume the node.
    let (h, _) = run(
        &format!("{one_pause}[[faults]]\nat = \"1.5s\"\nkind = \"pause\"\nnode = 0\nduration = \"1s\"\n"),
        1,
    );
    assert_eq!(
        ok_in(&h, 1_000_100, 2_500_000),
        0,
        "nothing is served while a pause is on"
    );
    assert!(ok_in(&h, 2_600_000, 4_000_000) > 10);
}

#[test]
fn one_way_cuts_and_loss_lose_only_what_they_should() {
    let text = |fault: &str| {
        format!(
            r#"
nodes = 1
duration = "2s"
[algorithm]
kind = "single"
ttl = "100ms"
retry_count = 0
request_timeout = "20ms"
[clients]
count = 1
think = "10ms"
hold = "1ms"
[[faults]]
at = "0s"
{fault}
"#
        )
    };
    let outcomes = |h: &[Event]| {
        let count = |f: fn(&Event) -> bool| h.iter().filter(|e| f(e)).count();
        (
            count(|e| matches!(e, Event::Ok(o) if o.op == OpKind::Acquire && o.phase == Default::default())),
            count(|e| matches!(e, Event::Fail(_))),
            count(|e| matches!(e, Event::Info(_))),
        )
    };
    // Replies lost: every SET is applied but the client never hears back.
    let (h, _) = run(
        &text("kind = \"partition\"\nnodes = [0]\ndirection = \"to_clients\""),
        1,
    );
    let (ok, _, unknown) = outcomes(&h);
    assert_eq!(ok, 0);
    assert!(unknown > 10);
    // Everything lost one way or the other half the time.
    let (h, f) = run(&text("kind = \"loss\"\nprobability = 0.5"), 1);
    let (ok, _, unknown) = outcomes(&h);
    assert!(ok > 5 && unknown > 5, "{ok} {unknown}");
    assert!(f.is_safe());
}

/// Seed 002's restart scenario, driven by hand: two Redlock clients and five nodes, each
/// message delivered at a chosen simulated time, the crash between two steps.
#[test]
fn step_by_step_restart_without_persistence() {
    let config = scenario("[algorithm]\nttl = \"10s\"\nrequest_timeout = \"20ms\"\n").algorithm;
    let mut a = algorithm::build(&config, 5, crate::rng::split(1, "algorithm", 0));
    let mut b = algorithm::build(&config, 5, crate::rng::split(1, "algorithm", 1));
    let mut nodes: Vec<Node> = (0..5).map(|_| Node::new(Persistence::None, None)).collect();
    let now = |t: u64| Now {
        mono_us: t,
        wall_us: t,
    };
    let mut out = Vec::new();

    // t = 0: A asks all five nodes; only 0, 1, 2 are reachable. They answer at 1 ms.
    a.acquire(now(0), LockId(0), algorithm::Mode::Exclusive, &mut out);
    let sends: Vec<Output> = std::mem::take(&mut out);
    let timer = sends
        .iter()
        .find_map(|o| match o {
            Output::Timer { id, at_mono_us } => Some((*id, *at_mono_us)),
            _ => None,
        })
        .unwrap();
    for o in &sends {
        if let Output::Send { node, req, cmd } = *o {
            if node <= 2 {
                let reply = nodes[node].handle(500, cmd).unwrap();
                assert_eq!(reply, Reply::Ok);
                a.on_reply(now(1_000), req, reply, &mut out);
            }
        }
    }
    assert!(out.is_empty(), "A waits for nodes 3 and 4 until the timeout");
    // t = 20 ms: the timeout; three of five is a quorum.
    assert_eq!(timer.1, 20_000);
    a.on_timer(now(timer.1), timer.0, &mut out);
    let valid_until = match out.pop() {
        Some(Output::Acquired {
            valid_until_mono_us,
            nodes,
            ..
        }) => {
            assert_eq!(nodes.iter().collect::<Vec<_>>(), vec![0, 1, 2]);
            valid_until_mono_us
        }
        other => panic!("A should hold the lock: {other:?}"),
    };
    assert_eq!(valid_until, 10_000_000 - config.drift_us());

    // t = 3 s: node 2 crashes and restarts at once, with no persistence.
    nodes[2].crash(3_000_000, false);
    nodes[2].restart(3_000_000);

    // t = 3.001 s: B reaches nodes 2, 3, 4, which all say OK: A still believes it holds.
    b.acquire(now(3_001_000), LockId(0), algorithm::Mode::Exclusive, &mut out);
    let sends: Vec<Output> = std::mem::take(&mut out);
    for o in &sends {
        if let Output::Send { node, req, cmd } = *o {
            let reply = nodes[node].handle(3_001_500, cmd).unwrap();
            assert_eq!(reply == Reply::Ok, node >= 2, "node {node}");
            b.on_reply(now(3_002_000), req, reply, &mut out);
        }
    }
    match out.pop() {
        Some(Output::Acquired { nodes, .. }) => {
            assert_eq!(nodes.iter().collect::<Vec<_>>(), vec![2, 3, 4]);
        }
        other => panic!("B should hold the lock too: {other:?}"),
    }
    assert!(3_002_000 < valid_until, "two holders at once");
}

#[test]
fn a_quorum_of_all_nodes_is_caught_by_the_fault_tolerance_rule() {
    let text = |quorum: u32| {
        format!(
            r#"
nodes = 5
duration = "5s"
[algorithm]
ttl = "500ms"
quorum = {quorum}
request_timeout = "20ms"
[clients]
count = 1
[[faults]]
at = "1s"
kind = "crash"
node = 4
restart_after = "2s"
"#
        )
    };
    let (_, majority) = run(&text(3), 1);
    assert!(majority.is_live(), "{:?}", majority.liveness);
    let (_, all) = run(&text(5), 1);
    assert!(all.stats.tolerance_checked > 0);
    assert!(all.liveness.iter().any(|l| matches!(l,
        crate::checker::LivenessFinding::FaultTolerance { reachable_nodes, .. }
            if reachable_nodes == &vec![0, 1, 2, 3])));
}

#[test]
fn the_readme_fault_examples_parse() {
    let readme = include_str!("../../README.md");
    let start = readme
        .find("persistence = \"none\"")
        .expect("README shows the fault schema");
    let block = &readme[start..];
    let block = &block[..block.find("```").unwrap()];
    scenario(block);
}

#[test]
fn a_client_clock_rate_change_moves_its_pending_wake() {
    let (h, _) = run(
        r#"
nodes = 1
duration = "3s"
[algorithm]
kind = "single"
[clients]
count = 1
think = "1s"
[[faults]]
at = "500ms"
kind = "clock_rate"
client = 0
rate = 0.5
"#,
        1,
    );
    let first = h
        .iter()
        .find(|e| matches!(e, Event::Invoke(_)))
        .expect("the client acquires once");
    // Half of its 1 s think time is left at 0.5 s, and its clock now runs at half speed.
    assert_eq!(first.t_us(), 1_500_000);
}

#[test]
fn a_pause_while_holding_starts_at_once_if_the_client_holds() {
    let (h, f) = run(
        r#"
nodes = 1
duration = "5s"
[algorithm]
kind = "single"
ttl = "10s"
[clients]
count = 1
think = "10ms"
hold = "3s"
[[faults]]
at = "1s"
kind = "pause"
client = 0
point = "while_holding"
duration = "3s"
"#,
        1,
    );
    assert!(f.is_safe());
    let pause: Vec<(u64, FaultAction)> = h
        .iter()
        .filter_map(|e| match e {
            Event::Fault(f) => Some((f.t_us, f.action)),
            _ => None,
        })
        .collect();
    assert_eq!(
        pause,
        vec![(1_000_000, FaultAction::Start), (4_000_000, FaultAction::End)]
    );
    // The hold was due to end near 3 s; the client only gets to release it at 4 s.
    let release = h
        .iter()
        .find(|e| matches!(e, Event::Invoke(o) if o.op == OpKind::Release))
        .unwrap();
    assert_eq!(release.t_us(), 4_000_000, "{release:?}");
}

/// partition.toml seed 1's JSONL history: its length and XXH3-128. Pinned before issue
/// 24's speed work, re-pinned by issue 37, which added the `link` lines (what the
/// partitions did to each operation's messages); without them the history is the one
/// pinned before, byte for byte (73,213,935 bytes, XXH3-128 07f4763d7afbd5bfa86b04384f189588).
const PINNED_LEN: usize = 93_616_167;
const PINNED_XXH3: &str = "176679de55c6e967c71599ef7ab7d0b0";

/// The simulator's output pinned: partition.toml's history for seed 1, as JSONL, hashed
/// (XXH3-128) with the code before issue 24's speed work. A change to the event loop,
/// the queue, the RNG streams or an algorithm's hot path that moves a single event or
/// draw changes this hash; a deliberate change of behaviour must say so and re-pin it.
#[test]
fn partition_seed_1_history_is_pinned_byte_for_byte() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/partition.toml");
    let scenario = Scenario::load(std::path::Path::new(path)).unwrap();
    let out = super::run(&scenario, 1);
    let mut jsonl = Vec::new();
    crate::history::write_jsonl(&out.history, &mut jsonl).unwrap();
    assert_eq!(
        (
            jsonl.len(),
            format!("{:032x}", xxhash_rust::xxh3::xxh3_128(&jsonl))
        ),
        (PINNED_LEN, PINNED_XXH3.to_string()),
        "partition.toml seed 1 no longer gives the history it gave"
    );
}

/// WAIT on the simulator: a node with a replica answers one replication lag after the
/// WAIT arrives and the lock is held; a node without one (or with its link cut, or a
/// lag of 0 and a cut) answers 0 at the WAIT's timeout, so no lock is ever held, and the
/// run still ends.
#[test]
fn a_wait_is_answered_after_the_replicas_lag_or_at_its_timeout_with_none() {
    let base = "nodes = 1\nduration = \"2s\"\n[algorithm]\nkind = \"single\"\nttl = \"500ms\"\n\
                wait_replicas = 1\nwait_timeout = \"30ms\"\nretry_count = 2\n[clients]\ncount = 1\n";
    let acquired = |history: &[Event]| {
        history
            .iter()
            .filter(|e| matches!(e, Event::Ok(o) if o.op == OpKind::Acquire))
            .count()
    };
    let (history, _) = run(&format!("{base}[replication]\nlag = \"5ms\"\n"), 1);
    assert!(acquired(&history) > 0, "held once the replica has the key");
    let (history, _) = run(base, 1);
    assert_eq!(acquired(&history), 0, "no replica: every WAIT answers 0");
    let cut = "[[faults]]\nat = \"0s\"\nkind = \"replication_cut\"\nnode = 0\n";
    let (history, _) = run(&format!("{base}[replication]\nlag = \"0ms\"\n{cut}"), 1);
    let heal = history
        .iter()
        .position(|e| matches!(e, Event::Fault(f) if f.action == FaultAction::End))
        .expect("the cut ends with the workload");
    assert_eq!(acquired(&history[..heal]), 0, "a cut link: every WAIT answers 0");
    assert!(
        acquired(&history[heal..]) > 0,
        "and the lock is held once it heals"
    );
}
