//! The read-write model, extensions, the guarded resource and the wait metric, on
//! hand-written histories.

use super::*;
use crate::history::{Op, ResourceWrite};

fn op(t: u64, client: usize, kind: OpKind, mode: Mode) -> Op {
    Op::new(t, client, kind, "L0", mode)
}
fn acq(t: u64, c: usize, mode: Mode) -> Event {
    Event::Invoke(op(t, c, OpKind::Acquire, mode))
}
fn ok(t: u64, c: usize, mode: Mode, valid_until: u64) -> Event {
    let mut o = op(t, c, OpKind::Acquire, mode);
    o.valid_until_us = Some(valid_until);
    o.token = Some(format!("tok{c}").into());
    Event::Ok(o)
}
fn fail(t: u64, c: usize, mode: Mode) -> Event {
    Event::Fail(op(t, c, OpKind::Acquire, mode))
}
fn rel(t: u64, c: usize, mode: Mode) -> Event {
    Event::Invoke(op(t, c, OpKind::Release, mode))
}
fn ext(t: u64, c: usize, mode: Mode) -> Event {
    Event::Invoke(op(t, c, OpKind::Extend, mode))
}
fn ext_ok(t: u64, c: usize, mode: Mode, valid_until: u64) -> Event {
    let mut o = op(t, c, OpKind::Extend, mode);
    o.valid_until_us = Some(valid_until);
    Event::Ok(o)
}
fn ext_fail(t: u64, c: usize, mode: Mode) -> Event {
    Event::Fail(op(t, c, OpKind::Extend, mode))
}
fn write(t: u64, c: usize, accepted: bool) -> Event {
    Event::Write(ResourceWrite {
        t_us: t,
        client: c,
        lock: "L0".into(),
        token: format!("tok{c}").into(),
        fence: None,
        accepted,
    })
}
fn meta(writer_wait_bound_us: Option<u64>) -> Event {
    Event::Meta(Meta {
        t_us: 0,
        scenario: "t".into(),
        seed: 1,
        algorithm: "rw_redlock".into(),
        nodes: 5,
        clients: 4,
        ttl_ms: 1,
        liveness_bound_us: 1,
        writer_wait_bound_us,
        worker: None,
        probe_client: None,
        cut: None,
        deployment: None,
        mitigations: None,
    })
}

use Mode::{Exclusive, Read, Write};

#[test]
fn readers_may_overlap_readers() {
    let h = [
        acq(0, 1, Read),
        acq(0, 2, Read),
        ok(10, 1, Read, 100),
        ok(20, 2, Read, 100),
    ];
    let f = check(&h).unwrap();
    assert!(f.is_safe(), "{:?}", f.violations);
}

#[test]
fn a_writer_overlaps_no_one() {
    for (first, second) in [
        (Read, Write),
        (Write, Read),
        (Write, Write),
        (Exclusive, Exclusive),
    ] {
        let h = [
            acq(0, 1, first),
            acq(0, 2, second),
            ok(10, 1, first, 100),
            ok(20, 2, second, 100),
        ];
        let f = check(&h).unwrap();
        assert_eq!(f.violations.len(), 1, "{first:?} then {second:?}");
        assert_eq!(
            (f.violations[0].overlap_start_us, f.violations[0].overlap_end_us),
            (20, 100)
        );
    }
}

#[test]
fn a_writer_is_caught_behind_a_long_reader_even_after_a_short_one() {
    // Reader 1 holds long, reader 2 short; the writer starts after reader 2 ended but
    // while reader 1 still holds.
    let h = [
        acq(0, 1, Read),
        acq(0, 2, Read),
        acq(0, 3, Write),
        ok(10, 1, Read, 500),
        ok(20, 2, Read, 50),
        ok(100, 3, Write, 300),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    assert_eq!(
        (f.violations[0].first.client, f.violations[0].second.client),
        (1, 3)
    );
}

#[test]
fn an_extension_in_time_moves_the_deadline() {
    let h = [
        acq(0, 1, Write),
        ok(10, 1, Write, 100),
        ext(80, 1, Write),
        ext_ok(90, 1, Write, 200),
        acq(100, 2, Read),
        ok(150, 2, Read, 400),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1, "the reader overlaps the extended writer");
    assert_eq!(f.violations[0].overlap_end_us, 200);
}

#[test]
fn a_failed_extension_ends_the_hold_at_the_earlier_deadline() {
    let h = [
        acq(0, 1, Write),
        ok(10, 1, Write, 100),
        ext(80, 1, Write),
        acq(90, 2, Write),
        ext_fail(95, 1, Write),
        ok(100, 2, Write, 400),
        rel(120, 1, Write),
    ];
    let f = check(&h).unwrap();
    assert!(f.is_safe(), "{:?}", f.violations);
    let first = f.holds.iter().find(|h| h.client == 1).unwrap();
    assert_eq!((first.end_us, first.ended_by), (100, HoldEnd::Validity));
}

#[test]
fn an_extension_granted_after_the_deadline_starts_a_new_hold() {
    let h = [
        acq(0, 1, Exclusive),
        acq(0, 2, Exclusive),
        ok(10, 1, Exclusive, 100),
        ext(90, 1, Exclusive),
        ok(100, 2, Exclusive, 150),
        ext_ok(140, 1, Exclusive, 300),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    let v = &f.violations[0];
    assert_eq!((v.first.client, v.second.client), (2, 1));
    assert_eq!((v.overlap_start_us, v.overlap_end_us), (140, 150));
}

#[test]
fn a_stale_write_over_a_later_holders_write_is_a_resource_violation_only() {
    let h = [
        acq(0, 1, Write),
        acq(0, 2, Write),
        ok(10, 1, Write, 100),
        write(20, 1, true),
        ok(150, 2, Write, 400),
        write(180, 2, true),
        write(200, 1, true),
    ];
    let f = check(&h).unwrap();
    assert!(f.is_safe(), "the lock itself is safe");
    assert_eq!(f.resource_violations.len(), 1);
    let v = &f.resource_violations[0];
    assert_eq!(
        (
            v.client,
            v.write_us,
            v.hold_end_us,
            v.holder.client,
            v.overwritten_us
        ),
        (1, 200, Some(100), 2, Some(180))
    );
    assert_eq!(
        (f.resource.writes, f.resource.accepted, f.resource.late),
        (3, 3, 0)
    );
}

#[test]
fn a_late_write_before_the_next_holder_writes_is_late_in_hold_order_not_stale() {
    // Client 1's write lands after its hold ended, while client 2 holds the lock, but
    // before client 2 writes: the writes take effect in hold order (fencing would let
    // it in too, its token being the newest the resource has seen).
    let h = [
        acq(0, 1, Write),
        acq(0, 2, Write),
        ok(10, 1, Write, 100),
        ok(150, 2, Write, 400),
        write(200, 1, true),
        write(250, 2, true),
    ];
    let f = check(&h).unwrap();
    assert!(f.is_resource_safe(), "{:?}", f.resource_violations);
    assert_eq!((f.resource.accepted, f.resource.late), (2, 1));
}

#[test]
fn a_stale_write_is_judged_against_the_latest_started_hold_that_wrote() {
    // Client 3's later hold wrote, then client 2's (earlier) one wrote late, then
    // client 1's even older one: both late writes overwrote client 3's.
    let h = [
        acq(0, 1, Write),
        acq(0, 2, Write),
        acq(0, 3, Write),
        ok(10, 1, Write, 100),
        ok(110, 2, Write, 200),
        ok(210, 3, Write, 300),
        write(220, 3, true),
        write(230, 2, true),
        write(240, 1, true),
    ];
    let f = check(&h).unwrap();
    let got: Vec<_> = f
        .resource_violations
        .iter()
        .map(|v| (v.client, v.holder.client, v.overwritten_us))
        .collect();
    assert_eq!(got, [(2, 3, Some(220)), (1, 3, Some(220))]);
}

#[test]
fn rejected_and_unopposed_stale_writes_are_no_violation() {
    let h = [
        acq(0, 1, Write),
        acq(0, 2, Write),
        ok(10, 1, Write, 100),
        write(120, 1, true),
        ok(150, 2, Write, 400),
        write(200, 1, false),
        write(300, 2, true),
    ];
    let f = check(&h).unwrap();
    assert!(f.is_resource_safe(), "{:?}", f.resource_violations);
    assert_eq!(f.resource.rejected, 1);
}

#[test]
fn a_stale_write_is_caught_even_when_the_writers_own_later_hold_ends_last() {
    // Client 1 writes with a token of no current hold while client 2 holds; client 1's
    // own (conflicting) later hold ends last, so the sweep must look past it.
    let mut stale = write(200, 1, true);
    if let Event::Write(w) = &mut stale {
        w.token = "old".into();
    }
    let h = [
        acq(0, 1, Exclusive),
        acq(0, 2, Exclusive),
        ok(10, 1, Exclusive, 50),
        ok(60, 2, Exclusive, 400),
        acq(70, 1, Exclusive),
        ok(80, 1, Exclusive, 500),
        stale,
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.resource_violations.len(), 1);
    let v = &f.resource_violations[0];
    assert_eq!((v.holder.client, v.hold_end_us), (2, None));
}

#[test]
fn waits_run_from_the_first_attempt_across_failures_per_mode() {
    let h = [
        meta(None),
        acq(0, 1, Write),
        acq(0, 2, Read),
        ok(10, 2, Read, 20),
        fail(100, 1, Write),
        acq(150, 1, Write),
        ok(400, 1, Write, 500),
        acq(600, 2, Read),
    ];
    let f = check(&h).unwrap();
    let w = &f.stats.waits[&Write];
    assert_eq!((w.acquired, w.p50_us, w.max_us), (1, 400, 400));
    let r = &f.stats.waits[&Read];
    assert_eq!((r.acquired, r.unfinished, r.p50_us), (1, 1, 10));
}

#[test]
fn a_writer_waiting_past_the_bound_while_readers_hold_is_starvation() {
    let busy = [
        meta(Some(1_000)),
        acq(0, 1, Read),
        acq(0, 3, Write),
        ok(0, 1, Read, 1_500),
        fail(1_000, 3, Write),
        acq(1_000, 3, Write),
        ok(2_000, 3, Write, 2_500),
    ];
    let f = check(&busy).unwrap();
    assert!(
        matches!(&f.liveness[..], [LivenessFinding::WriterStarvation { client: 3, waited_us: 2_000, acquired: true, readers_busy_share, .. }] if *readers_busy_share == 0.75),
        "{:?}",
        f.liveness
    );
    // The same wait with the lock mostly idle is no starvation by readers.
    let idle = [
        meta(Some(1_000)),
        acq(0, 1, Read),
        acq(0, 3, Write),
        ok(0, 1, Read, 500),
        ok(2_000, 3, Write, 2_500),
    ];
    assert!(check(&idle).unwrap().is_live());
}

fn ok_fenced(t: u64, c: usize, valid_until: u64, fence: u64) -> Event {
    let Event::Ok(mut o) = ok(t, c, Write, valid_until) else {
        unreachable!()
    };
    o.fence = Some(fence);
    Event::Ok(o)
}

#[test]
fn fencing_tokens_must_grow_from_a_finished_hold_to_a_later_one() {
    let h = [
        acq(0, 1, Write),
        ok_fenced(10, 1, 100, 5),
        acq(100, 2, Write),
        ok_fenced(150, 2, 300, 7),
        acq(300, 3, Write),
        ok_fenced(310, 3, 400, 6),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.fence_regressions.len(), 1);
    let r = &f.fence_regressions[0];
    assert_eq!((r.earlier.client, r.later.client), (2, 3));
    // Overlapping holds (a lock-level violation) may get tokens in either order.
    let h = [
        acq(0, 1, Write),
        acq(0, 2, Write),
        ok_fenced(10, 1, 100, 5),
        ok_fenced(20, 2, 300, 4),
    ];
    assert!(check(&h).unwrap().fence_regressions.is_empty());
}

#[test]
fn extending_a_lock_one_does_not_hold_is_malformed() {
    let h = [acq(0, 1, Write), fail(10, 1, Write), ext(20, 1, Write)];
    let e = check(&h).unwrap_err();
    assert_eq!(e.line, 3);
    assert!(e.message.contains("without holding"), "{e}");
}
