//! Faults are sets (issue 10): overlapping faults of one kind on one target compose, and
//! a holder's believed validity follows its clock. Whole runs of small scenarios.

use super::tests::{run, SPLIT};
use crate::history::{Event, FaultAction, OpKind};

/// Two clients that each reach three of five nodes, sharing node 2: only node 2 can let
/// both in, and only if it forgets a key (no persistence). A 2 s ttl.
fn shared_node_2() -> String {
    format!(
        "persistence = \"none\"\n{}",
        SPLIT.replace("ttl = \"10s\"", "ttl = \"2s\"")
    )
}

/// Before issue 10, the end of crash #2 restarted node 2 while crash #3 was still on
/// it: node 2 served from 3.5 s, crash #4 took it down at 4 s with the new holder's
/// key, and the end of #3 brought it back empty at 5.35 s, 1.35 s after it lost the
/// key, inside the 2 s ttl, although every crash delays its restart past the ttl. The
/// three crashes overlap: node 2 is down from 1 s to 6.5 s, once.
#[test]
fn issue_10_overlapping_crashes_with_restarts_delayed_past_the_ttl_are_safe() {
    let crashes = r#"
[[faults]]
at = "1s"
kind = "crash"
node = 2
restart_after = "2.5s"
[[faults]]
at = "3.3s"
kind = "crash"
node = 2
restart_after = "2.05s"
[[faults]]
at = "4s"
kind = "crash"
node = 2
restart_after = "2.5s"
"#;
    for seed in 1..=5 {
        let (h, f) = run(&format!("{}{crashes}", shared_node_2()), seed);
        assert!(f.is_safe(), "seed {seed}: {:?}", f.violations.first());
        let acquired_in = |from: u64, to: u64| {
            h.iter()
                .any(|e| matches!(e, Event::Ok(o) if o.op == OpKind::Acquire && (from..to).contains(&o.t_us)))
        };
        assert!(
            !acquired_in(1_100_000, 6_500_000),
            "seed {seed}: node 2 served while down"
        );
        assert!(
            acquired_in(6_500_000, 10_000_000),
            "seed {seed}: node 2 came back at 6.5 s"
        );
    }
}

/// The events of client `c` (operations and writes), by time.
fn client_times(h: &[Event], c: usize) -> Vec<u64> {
    h.iter()
        .filter_map(|e| match e {
            Event::Invoke(o) | Event::Ok(o) | Event::Fail(o) | Event::Info(o) if o.client == c => {
                Some(o.t_us)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn a_client_under_two_overlapping_pauses_acts_again_only_when_the_last_ends() {
    let (h, f) = run(
        r#"
nodes = 3
duration = "5s"
[algorithm]
ttl = "500ms"
request_timeout = "20ms"
[clients]
count = 2
think = { min = "0ms", max = "10ms" }
hold = { min = "1ms", max = "5ms" }
[[faults]]
at = "1s"
kind = "pause"
client = 0
duration = "1s"
[[faults]]
at = "1.5s"
kind = "pause"
client = 0
duration = "1s"
"#,
        1,
    );
    assert!(f.is_safe());
    let times = client_times(&h, 0);
    assert!(
        times.iter().all(|t| !(1_000_001..2_500_000).contains(t)),
        "client 0 acted while a pause was on it"
    );
    let next = times.iter().find(|&&t| t > 1_000_000);
    assert_eq!(
        next,
        Some(&2_500_000),
        "the held-back events replay when the last pause ends"
    );
}

#[test]
fn overlapping_client_clock_rates_multiply() {
    // Client 0 thinks for 1 s of its own clock. At 0.2 s its clock runs at 0.5, at 0.4 s
    // at 0.5 × 0.5: 0.2 + 0.1 read by 0.4 s, 0.7 left at a quarter speed is 2.8 s more.
    // The first rate ends at 1.4 s (0.25 read since 0.4 s, 0.45 left at half speed: 0.9
    // s), so the client wakes at 2.3 s.
    let (h, _) = run(
        r#"
nodes = 1
duration = "4s"
[algorithm]
kind = "single"
[clients]
count = 1
think = "1s"
[[faults]]
at = "200ms"
kind = "clock_rate"
client = 0
rate = 0.5
duration = "1.2s"
[[faults]]
at = "400ms"
kind = "clock_rate"
client = 0
rate = 0.5
"#,
        1,
    );
    let first = h.iter().find(|e| matches!(e, Event::Invoke(_))).unwrap();
    assert_eq!(first.t_us(), 2_300_000);
}

/// Client 1 is cut off for the first 300 ms, so client 0 takes the lock first, with a
/// 1 s ttl and work that outlasts it; at 500 ms its clock changes rate.
fn rate_during_hold(rate: f64) -> String {
    format!(
        r#"
nodes = 3
duration = "4s"
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
kind = "partition"
nodes = [0, 1, 2]
clients = [1]
duration = "300ms"
[[faults]]
at = "500ms"
kind = "clock_rate"
client = 0
rate = {rate}
duration = "3s"
"#
    )
}

/// The first `ok` acquire of client 0 and the belief events about it.
fn first_hold_beliefs(h: &[Event]) -> (u64, Vec<u64>) {
    let ok = h
        .iter()
        .find_map(|e| match e {
            Event::Ok(o) if o.client == 0 && o.op == OpKind::Acquire => o.valid_until_us,
            _ => None,
        })
        .expect("client 0 acquires");
    let beliefs = h
        .iter()
        .take_while(|e| !matches!(e, Event::Invoke(o) if o.client == 0 && o.op == OpKind::Release))
        .filter_map(|e| match e {
            Event::Belief(b) if b.client == 0 => Some(b.valid_until_us),
            _ => None,
        })
        .collect();
    (ok, beliefs)
}

#[test]
fn a_holder_whose_clock_slows_during_the_hold_outlives_its_keys() {
    let (h, f) = run(&rate_during_hold(0.5), 1);
    let (ok_until, beliefs) = first_hold_beliefs(&h);
    assert!(ok_until < 1_000_000, "{ok_until}");
    // 0.5 s in, about 0.48 s of validity is left by its clock: 0.96 s at half speed.
    assert_eq!(beliefs.len(), 1, "{beliefs:?}");
    assert_eq!(beliefs[0], 500_000 + 2 * (ok_until - 500_000));
    assert!(
        !f.is_safe(),
        "the belief outlives the keys (they expire near 1 s)"
    );
    let v = &f.violations[0];
    assert_eq!((v.first.client, v.second.client), (0, 1));
    assert_eq!(v.first.end_us, beliefs[0], "the hold ends at the belief in force");
    assert!(v.overlap_start_us >= ok_until, "{v:?}");
}

#[test]
fn a_holder_whose_clock_speeds_up_during_the_hold_gives_up_early_and_is_safe() {
    let (h, f) = run(&rate_during_hold(2.0), 1);
    let (ok_until, beliefs) = first_hold_beliefs(&h);
    assert_eq!(beliefs, vec![500_000 + (ok_until - 500_000).div_ceil(2)]);
    assert!(f.is_safe(), "{:?}", f.violations.first());
    let first = f.holds.iter().find(|h| h.client == 0).unwrap();
    assert!(first.end_us <= beliefs[0], "{first:?}");
}

#[test]
fn a_rate_fault_that_ends_during_a_hold_moves_the_belief_back() {
    // The rate of 0.5 from 0.5 s to 0.7 s costs 0.1 s of validity by the clock: the
    // belief moves far out at the start, and back to 0.1 s later than at first at the end.
    let text = rate_during_hold(0.5).replace("duration = \"3s\"", "duration = \"200ms\"");
    let (h, f) = run(&text, 1);
    let (ok_until, beliefs) = first_hold_beliefs(&h);
    assert_eq!(beliefs.len(), 2, "{beliefs:?}");
    assert_eq!(beliefs[1], ok_until + 100_000);
    assert!(!f.is_safe(), "100 ms beyond the keys");
    let ends = h
        .iter()
        .filter(|e| matches!(e, Event::Fault(x) if x.action == FaultAction::End))
        .count();
    assert!(ends >= 2);
}
