//! The native read-write, extension, fencing and fair-queue commands, against the
//! semantics of the Lua scripts in `src/scripts/`.

use super::*;
use crate::command::Ticket;

const L: LockId = LockId(0);
/// Node wall clocks start at the epoch of `sim::clock`; in ms.
const T0_MS: u64 = crate::sim::clock::WALL_EPOCH_US / 1_000;

fn write(token: u64, now_ms: u64, ttl_ms: u64) -> Cmd {
    Cmd::WriteLock {
        lock: L,
        token: Token(token),
        now_ms,
        ttl_ms,
    }
}

fn read(token: u64, exp_at_ms: u64) -> Cmd {
    Cmd::ReadLock {
        lock: L,
        token: Token(token),
        exp_at_ms,
    }
}

#[test]
fn writer_script_answers_as_seed_000() {
    let mut n = Node::default();
    assert_eq!(n.exec(0, write(1, T0_MS, 100)), Reply::Int(1), "acquired");
    assert_eq!(
        n.exec(1_000, write(2, T0_MS + 1, 100)),
        Reply::Int(3),
        "write-locked"
    );
    assert_eq!(
        n.exec(2_000, read(3, T0_MS + 1_000)),
        Reply::Int(2),
        "reader sees the writer"
    );
    // w_{L} expires by the node's clock after its PX ttl.
    assert_eq!(n.exec(100_000, read(3, T0_MS + 1_000)), Reply::Int(1));
    assert_eq!(
        n.exec(100_000, write(4, T0_MS + 100, 100)),
        Reply::Int(2),
        "read-locked"
    );
}

#[test]
fn readers_share_and_expire_by_the_writers_now_inclusive() {
    let mut n = Node::default();
    assert_eq!(n.exec(0, read(1, 500)), Reply::Int(1));
    assert_eq!(n.exec(0, read(2, 700)), Reply::Int(1), "readers share");
    // ZREMRANGEBYSCORE r 0 now: a score equal to now is gone; the node's own clock plays
    // no part, only the writer's `now`.
    assert_eq!(n.exec(0, write(9, 699, 100)), Reply::Int(2));
    assert_eq!(n.exec(0, write(9, 700, 100)), Reply::Int(1));
}

#[test]
fn releases_remove_only_the_callers_token() {
    let mut n = Node::default();
    n.exec(0, read(1, 500));
    n.exec(0, read(2, 500));
    let zrem = |t| Cmd::ZRem {
        key: Key::readers(L),
        token: Token(t),
    };
    assert_eq!(n.exec(0, zrem(1)), Reply::Int(1));
    assert_eq!(n.exec(0, zrem(1)), Reply::Int(0));
    assert_eq!(n.exec(0, write(9, 0, 100)), Reply::Int(2), "reader 2 still holds");
    assert_eq!(n.exec(0, zrem(2)), Reply::Int(1));
    assert_eq!(n.exec(0, write(9, 0, 100)), Reply::Int(1));
    let del = |t| Cmd::DelIfEq {
        key: Key::writer(L),
        token: Token(t),
    };
    assert_eq!(n.exec(0, del(8)), Reply::Int(0));
    assert_eq!(n.exec(0, del(9)), Reply::Int(1));
    assert_eq!(n.exec(0, read(3, 500)), Reply::Int(1));
}

#[test]
fn extensions_need_the_token_and_a_live_lock() {
    let mut n = Node::default();
    n.exec(0, write(1, 0, 10));
    let ext = |t| Cmd::PExpireIfEq {
        key: Key::writer(L),
        token: Token(t),
        ttl_ms: 10,
    };
    assert_eq!(n.exec(5_000, ext(2)), Reply::Int(0), "another token");
    assert_eq!(n.exec(5_000, ext(1)), Reply::Int(1));
    assert_eq!(n.exec(14_999, read(5, 1)), Reply::Int(2), "extended to 15 ms");
    assert_eq!(n.exec(15_000, ext(1)), Reply::Int(0), "expired: not revived");

    let ext_read = |t, now_ms, exp_at_ms| Cmd::ExtendRead {
        lock: L,
        token: Token(t),
        now_ms,
        exp_at_ms,
    };
    let mut n = Node::default();
    n.exec(0, read(1, 100));
    assert_eq!(
        n.exec(0, ext_read(1, 100, 300)),
        Reply::Int(0),
        "expired at its score"
    );
    assert_eq!(n.exec(0, ext_read(2, 50, 300)), Reply::Int(0), "not a reader");
    assert_eq!(n.exec(0, ext_read(1, 50, 300)), Reply::Int(1));
    assert_eq!(n.exec(0, write(9, 299, 10)), Reply::Int(2), "score moved to 300");
    assert_eq!(n.exec(0, write(9, 300, 10)), Reply::Int(1));
    n.exec(0, read(3, 1_000));
    assert_eq!(
        n.exec(0, ext_read(3, 0, 2_000)),
        Reply::Int(0),
        "refused while a writer holds"
    );
}

#[test]
fn fence_counter_increments_and_only_rises() {
    let mut n = Node::default();
    let k = Key::fence(L);
    assert_eq!(n.exec(0, Cmd::Incr { key: k }), Reply::Int(1));
    assert_eq!(n.exec(0, Cmd::RaiseTo { key: k, value: 7 }), Reply::Int(7));
    assert_eq!(n.exec(0, Cmd::RaiseTo { key: k, value: 3 }), Reply::Int(7));
    assert_eq!(n.exec(0, Cmd::Incr { key: k }), Reply::Int(8));
}

fn ticket(id: u64, write: bool) -> Ticket {
    Ticket { id: Token(id), write }
}

fn args(t: Ticket, now_ms: u64, queued_at_ms: u64, enqueue: bool) -> FairArgs {
    FairArgs {
        ticket: t,
        now_ms,
        enqueue,
        queued_at_ms,
        ticket_exp_at_ms: now_ms + 100,
    }
}

fn fair_write(token: u64, fair: FairArgs) -> Cmd {
    Cmd::FairWriteLock {
        lock: L,
        token: Token(token),
        fair,
        ttl_ms: 100,
    }
}

fn fair_read(token: u64, fair: FairArgs) -> Cmd {
    Cmd::FairReadLock {
        lock: L,
        token: Token(token),
        fair,
        exp_at_ms: fair.now_ms + 100,
    }
}

#[test]
fn an_empty_queue_is_the_plain_lock() {
    let mut n = Node::default();
    assert_eq!(
        n.exec(0, fair_read(1, args(ticket(1, false), 0, 0, false))),
        Reply::Int(1)
    );
    assert_eq!(
        n.exec(0, fair_write(2, args(ticket(2, true), 0, 0, false))),
        Reply::Int(2)
    );
    assert!(
        n.keys.more.as_ref().is_none_or(|m| m.fair.is_empty()),
        "no queue was created"
    );
}

#[test]
fn a_queued_writer_holds_back_later_readers_until_it_gets_in() {
    let mut n = Node::default();
    let w = ticket(10, true);
    let r_old = ticket(20, false);
    let r_new = ticket(30, false);
    // A reader holds; the writer has waited too long and joins the queue (position 5).
    assert_eq!(n.exec(0, fair_read(20, args(r_old, 0, 0, false))), Reply::Int(1));
    assert_eq!(
        n.exec(0, fair_write(11, args(w, 10, 5, true))),
        Reply::Int(2),
        "queued, head, read-locked"
    );
    // A new reader must queue behind the writer, even without asking to.
    assert_eq!(
        n.exec(0, fair_read(31, args(r_new, 20, 20, false))),
        Reply::Int(4)
    );
    // The old reader releases; the writer at the head gets in and leaves the queue.
    n.exec(
        0,
        Cmd::ZRem {
            key: Key::readers(L),
            token: Token(20),
        },
    );
    assert_eq!(n.exec(0, fair_write(12, args(w, 30, 5, false))), Reply::Int(1));
    // The reader is now at the head but the writer holds w_{L}.
    assert_eq!(
        n.exec(0, fair_read(32, args(r_new, 40, 20, false))),
        Reply::Int(2)
    );
    n.exec(
        0,
        Cmd::DelIfEq {
            key: Key::writer(L),
            token: Token(12),
        },
    );
    assert_eq!(
        n.exec(0, fair_read(33, args(r_new, 50, 20, false))),
        Reply::Int(1)
    );
    assert!(
        n.keys.more.as_ref().is_none_or(|m| m.fair.is_empty()),
        "the queue drained: the lock is unfair again"
    );
}

#[test]
fn readers_at_the_head_share_and_writers_wait_their_turn() {
    let mut n = Node::default();
    let (r1, r2, w, w2) = (
        ticket(1, false),
        ticket(2, false),
        ticket(3, true),
        ticket(4, true),
    );
    assert_eq!(
        n.exec(0, fair_write(100, args(w, 0, 30, true))),
        Reply::Int(1),
        "alone: straight in"
    );
    // While the writer holds, two readers and another writer queue up.
    assert_eq!(n.exec(0, fair_read(101, args(r1, 0, 10, true))), Reply::Int(2));
    assert_eq!(n.exec(0, fair_read(102, args(r2, 0, 20, true))), Reply::Int(2));
    assert_eq!(
        n.exec(0, fair_write(103, args(w2, 0, 40, true))),
        Reply::Int(4),
        "behind the readers"
    );
    n.exec(
        0,
        Cmd::DelIfEq {
            key: Key::writer(L),
            token: Token(100),
        },
    );
    // r2 is behind r1, but only readers are ahead of it: it may go first.
    assert_eq!(n.exec(0, fair_read(104, args(r2, 1, 20, false))), Reply::Int(1));
    assert_eq!(
        n.exec(0, fair_write(105, args(w2, 1, 40, false))),
        Reply::Int(4),
        "r1 is still ahead"
    );
    assert_eq!(n.exec(0, fair_read(106, args(r1, 1, 10, false))), Reply::Int(1));
    assert_eq!(
        n.exec(0, fair_write(107, args(w2, 1, 40, false))),
        Reply::Int(2),
        "head, but read-locked"
    );
}

#[test]
fn an_abandoned_ticket_expires_and_stops_blocking() {
    let mut n = Node::default();
    let dead = ticket(1, true);
    let alive = ticket(2, true);
    n.exec(0, fair_read(50, args(ticket(50, false), 0, 0, false)));
    // The first writer queues (expiry 0 + 100 ms) and is never heard of again.
    assert_eq!(n.exec(0, fair_write(10, args(dead, 0, 1, true))), Reply::Int(2));
    assert_eq!(n.exec(0, fair_write(20, args(alive, 50, 2, true))), Reply::Int(4));
    n.exec(
        0,
        Cmd::ZRem {
            key: Key::readers(L),
            token: Token(50),
        },
    );
    assert_eq!(
        n.exec(0, fair_write(21, args(alive, 99, 2, false))),
        Reply::Int(4)
    );
    assert_eq!(
        n.exec(0, fair_write(22, args(alive, 100, 2, false))),
        Reply::Int(1),
        "the dead ticket expired at 100"
    );
    assert_eq!(
        n.exec(
            0,
            Cmd::FairLeave {
                lock: L,
                ticket: alive
            }
        ),
        Reply::Int(0),
        "it left on success"
    );
}

/// The bytes a value feeds a hasher, as the explorer's fingerprint collects them.
fn fed(value: &impl std::hash::Hash) -> Vec<u8> {
    struct Collect(Vec<u8>);
    impl std::hash::Hasher for Collect {
        fn write(&mut self, bytes: &[u8]) {
            self.0.extend_from_slice(bytes);
        }
        fn finish(&self) -> u64 {
            0
        }
    }
    let mut h = Collect(Vec::new());
    value.hash(&mut h);
    h.0
}

#[test]
fn a_store_whose_other_maps_emptied_is_the_state_of_one_that_never_had_them() {
    // A reader comes and expires; the writer's script drops it and the sorted set.
    let mut n = Node::default();
    let before = fed(&n);
    assert!(n.keys.more.is_none());
    assert_eq!(n.exec(0, read(7, 5)), Reply::Int(rw_reply::ACQUIRED));
    assert_ne!(fed(&n), before, "a reader is state");
    assert_eq!(
        n.exec(10_000, write(8, 10, 1_000)),
        Reply::Int(rw_reply::ACQUIRED)
    );
    let release = Cmd::DelIfEq {
        key: Key::writer(LockId(0)),
        token: Token(8),
    };
    assert_eq!(n.exec(20_000, release), Reply::Int(1));
    assert!(n.keys.more.is_some(), "the maps were made");
    assert_eq!(fed(&n), before);
}
