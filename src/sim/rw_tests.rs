//! Whole runs of the read-write lock, the fair variant and fencing in the simulator.

use super::run;
use crate::algorithm::Mode;
use crate::checker::check;
use crate::history::{Event, OpKind};
use crate::scenario::Scenario;

fn scenario(text: &str) -> Scenario {
    Scenario::parse(text, "t.toml", "t").unwrap()
}

const RW: &str = "duration = \"3s\"\nnodes = 5\n\
    [algorithm]\nkind = \"rw_redlock\"\nttl = \"500ms\"\nrequest_timeout = \"20ms\"\nretry_delay = { min = \"0ms\", max = \"20ms\" }\n\
    [clients]\ncount = 6\nread_share = 0.7\nthink = { min = \"0ms\", max = \"10ms\" }\nhold = { min = \"5ms\", max = \"30ms\" }\n\
    [network]\nlatency = { min = \"0.1ms\", max = \"1ms\" }\n";

#[test]
fn read_write_runs_are_deterministic_and_readers_really_share() {
    let s = scenario(RW);
    let a = run(&s, 7).history;
    assert_eq!(a, run(&s, 7).history, "same seed, same history");
    let f = check(&a).unwrap();
    assert!(f.is_safe(), "{:?}", f.violations);
    let reads: Vec<_> = f.holds.iter().filter(|h| h.mode == Mode::Read).collect();
    let writes = f.holds.iter().filter(|h| h.mode == Mode::Write).count();
    assert!(
        reads.len() > 50 && writes > 10,
        "{} reads, {writes} writes",
        reads.len()
    );
    let shared = reads.iter().any(|a| {
        reads
            .iter()
            .any(|b| a.client != b.client && a.start_us < b.start_us && b.start_us < a.end_us)
    });
    assert!(shared, "some read holds overlap");
}

const PAUSE: &str = "duration = \"6s\"\nnodes = 5\n\
    [algorithm]\nkind = \"redlock\"\nttl = \"500ms\"\nretry_count = 10\nrequest_timeout = \"20ms\"\nretry_delay = { min = \"0ms\", max = \"50ms\" }\nfencing = FENCING\n\
    [clients]\ncount = 4\nresource_writes = true\nthink = { min = \"0ms\", max = \"10ms\" }\nhold = { min = \"20ms\", max = \"60ms\" }\n\
    [network]\nlatency = { min = \"0.1ms\", max = \"1ms\" }\n\
    [[faults]]\nat = \"1s\"\nkind = \"pause\"\nclient = 0\nduration = \"1.5s\"\npoint = \"after_acquire\"\n\
    [[faults]]\nat = \"3s\"\nkind = \"pause\"\nclient = 1\nduration = \"1.5s\"\npoint = \"after_acquire\"\n";

#[test]
fn the_resource_rejects_exactly_the_writes_with_a_stale_fencing_token() {
    let h = run(&scenario(&PAUSE.replace("FENCING", "true")), 1).history;
    let mut last = 0;
    let mut rejected = 0;
    for e in &h {
        if let Event::Write(w) = e {
            let fence = w.fence.expect("fenced writes carry a token");
            assert_eq!(w.accepted, fence >= last, "{w:?} after {last}");
            if w.accepted {
                last = fence;
            } else {
                rejected += 1;
            }
        }
    }
    assert!(rejected > 0, "the paused clients' late writes were rejected");
    let f = check(&h).unwrap();
    assert!(f.is_safe() && f.is_resource_safe(), "{:?}", f.resource_violations);
    // Every acquisition's token is above all tokens of holds that ended before it.
    assert!(f.fence_regressions.is_empty());
}

#[test]
fn without_fencing_a_paused_clients_late_write_gets_through_but_the_lock_is_safe() {
    let h = run(&scenario(&PAUSE.replace("FENCING", "false")), 1).history;
    let f = check(&h).unwrap();
    assert!(f.is_safe(), "the lock-level verdict is safe: {:?}", f.violations);
    assert!(!f.resource_violations.is_empty(), "the resource is not");
    let v = &f.resource_violations[0];
    assert!(v.client <= 1, "a paused client wrote late: {v:?}");
    assert!(v.hold_end_us.is_some_and(|end| end < v.write_us));
    // The write was sent on resume: after the pause fault of that client ended.
    let resumed = h.iter().any(|e| matches!(e, Event::Fault(f) if f.t_us <= v.write_us && f.action == crate::history::FaultAction::End));
    assert!(resumed);
}

const FLOOD: &str = "duration = \"10s\"\nnodes = 5\n\
    [algorithm]\nkind = \"KIND\"\nttl = \"1s\"\nrequest_timeout = \"20ms\"\nretry_delay = { min = \"0ms\", max = \"50ms\" }\n\
    [clients]\ncount = 8\nread_share = 0.9\nwriter_wait_bound = \"2s\"\nthink = { min = \"0ms\", max = \"5ms\" }\nhold = { min = \"50ms\", max = \"200ms\" }\n\
    [network]\nlatency = { min = \"0.1ms\", max = \"1ms\" }\n";

#[test]
fn readers_starve_writers_unless_the_lock_is_fair() {
    let writer_max = |kind: &str| {
        let f = check(&run(&scenario(&FLOOD.replace("KIND", kind)), 3).history).unwrap();
        assert!(f.is_safe());
        (f.stats.waits[&Mode::Write].max_us, f.is_live())
    };
    let (plain, plain_live) = writer_max("rw_redlock");
    let (fair, fair_live) = writer_max("fair_rw_redlock");
    assert!(
        plain > 2_000_000 && !plain_live,
        "readers starve writers: {plain} us"
    );
    assert!(
        fair < 2_000_000 && fair_live,
        "the fair queue bounds the wait: {fair} us"
    );
}

#[test]
fn extensions_keep_long_work_under_one_hold() {
    let text = RW
        .replace(
            "hold = { min = \"5ms\", max = \"30ms\" }",
            "hold = { min = \"600ms\", max = \"900ms\" }",
        )
        .replace(
            "ttl = \"500ms\"",
            "ttl = \"500ms\"\nmax_extensions = 2\nextend_before = \"150ms\"",
        );
    let h = run(&scenario(&text), 2).history;
    let extended = h
        .iter()
        .filter(|e| matches!(e, Event::Ok(o) if o.op == OpKind::Extend))
        .count();
    assert!(extended > 5, "{extended} extensions");
    let f = check(&h).unwrap();
    assert!(f.is_safe(), "{:?}", f.violations);
    // Some hold outlived the ttl thanks to its extensions.
    assert!(f.holds.iter().any(|h| h.end_us - h.start_us > 600_000));
}
