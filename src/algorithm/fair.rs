//! The fair read-write Redlock: seed 000's fairness extension, designed out.
//!
//! Seed 000's read-write lock lets readers starve a writer: as long as read holds
//! overlap, `r_{L}` never empties on a majority and the writer script keeps answering
//! "read-locked". The seed sketches the fix: a FIFO queue `fair_{L}` of lock attempts,
//! used while it is non-empty, and created once an acquisition has waited longer than a
//! threshold; once drained, the lock is unfair again. This module pins the details down.
//!
//! **Tickets.** An acquisition draws one ticket when it starts (`w:<id>` or `r:<id>`, the
//! id being its first token) and keeps it across its retries, so it keeps its place. Its
//! position is the time the acquisition started (client wall clock, ms), which every node
//! receives identically, so the queues on different nodes order the tickets they share
//! in the same way (ties by member, as Redis orders equal scores). `fairexp_{L}` holds
//! each ticket's expiry, refreshed by every attempt to `now + ttl`.
//!
//! **Per node, atomically** (`src/scripts/fair_write_lock.lua`, `fair_read_lock.lua`):
//! drop the tickets whose expiry is at or before `now`; if the queue is non-empty, or the
//! caller has waited longer than `fair_after` (it then sets `enqueue`), join it (`ZADD NX`:
//! the position is never moved) and check the turn: a writer's turn is when it is at the
//! head; a reader's turn is when every ticket ahead of it is a reader (readers at the head
//! share the lock, as they would share it anyway). Not its turn: answer 4 (queued).
//! Its turn, or no queue: run seed 000's writer or reader script unchanged; on success
//! the ticket leaves the queue. After the acquisition ends, granted or not, the client
//! removes its ticket on every node (`fair_leave.lua`).
//!
//! **Safety** does not depend on the queue at all: a grant still needs seed 000's script
//! to succeed on a quorum, so the queue can only make a client wait more, never let two
//! conflicting clients in. Lost, duplicated or expired tickets affect fairness only.
//!
//! **Starvation freedom.** A waiter's position only improves: tickets join behind it
//! (their start time is later) and every ticket ahead leaves, by acquiring or by expiring
//! within a ttl after its client stops refreshing it. Once a writer is at the head of a
//! majority's queues, no new reader gets in on those nodes (new readers queue behind it),
//! so the readers holding the lock drain within their validity and the writer acquires
//! on its next attempt. An attempt refused by a quorum that answered (not its turn, or
//! the lock still held) does not use up the acquisition's `retry_count`: waiting in line
//! is progress, not failure, and giving up would lose the place. A fair acquisition thus
//! waits like a fair mutex does; only attempts that cannot reach a quorum (timeouts) or
//! that come too late for any validity count.
//!
//! **Limits.** Positions come from client wall clocks: a client whose clock runs behind
//! jumps the queue (unfair, still safe). A ticket stays behind for up to a ttl after its
//! client crashed, delaying the waiters behind it by that much. A node that misses a
//! ticket (partition, restart) lets later waiters pass there; with the ticket on a
//! majority the order still holds where it counts.

use super::Mode;
use crate::command::{Cmd, FairArgs, LockId, Ticket, Token};

/// The fair lock command of one attempt.
pub(super) fn lock_cmd(mode: Mode, lock: LockId, token: Token, fair: FairArgs, ttl_ms: u64) -> Cmd {
    match mode {
        Mode::Read => Cmd::FairReadLock {
            lock,
            token,
            fair,
            exp_at_ms: fair.now_ms + ttl_ms,
        },
        Mode::Write | Mode::Exclusive => Cmd::FairWriteLock {
            lock,
            token,
            fair,
            ttl_ms,
        },
    }
}

/// The ticket of an acquisition whose first token is `first`.
pub(super) fn ticket(mode: Mode, first: Token) -> Ticket {
    Ticket {
        id: first,
        write: mode != Mode::Read,
    }
}
