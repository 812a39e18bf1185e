//! The vocabulary between a lock client and a Redis node: keys, commands and replies.
//!
//! Algorithms emit [`Cmd`]s; the simulated node executes them natively and the real
//! backend turns them into `SET`/`EVALSHA` calls on the Lua scripts in `src/scripts/`.
//! Both sides answer with the same small [`Reply`] type, so an algorithm cannot tell
//! which driver it runs under.
//!
//! The read-write lock of seed 000 uses two keys per lock, `w_{L}` (a string holding the
//! writer's token) and `r_{L}` (a sorted set of reader tokens scored by their expiry in
//! milliseconds since the Unix epoch, by the *client's* wall clock). Its scripts take
//! `now` and `exp_at` from the client, as the seed specifies.

use std::fmt;

/// Index of a Redis node in the scenario (0-based).
pub type NodeId = usize;

/// A lock name, by index: lock `n` is called `L{n}` on the wire and in histories.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LockId(pub u32);

impl fmt::Display for LockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{}", self.0)
    }
}

/// A lock token: unique per acquisition attempt, drawn from the client's seeded RNG.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token(pub u64);

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// Which Redis key of a lock a command touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeyKind {
    /// The key of an exclusive lock: the lock name itself.
    Plain,
    /// `w_{L}`: the writer side of a read-write lock (a string with PX expiry).
    Writer,
    /// `r_{L}`: the reader side of a read-write lock (a sorted set scored by expiry).
    Readers,
    /// `fair_{L}`: the FIFO queue of the fair read-write lock (a sorted set scored by
    /// the time a waiter joined; see `algorithm/fair.rs`).
    Fair,
    /// `fairexp_{L}`: when each ticket in `fair_{L}` expires (a sorted set scored by expiry).
    FairExpiry,
    /// `fence_{L}`: the fencing-token counter (an integer, no expiry).
    Fence,
}

/// A Redis key, structured so the simulator never formats strings on its hot path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    pub kind: KeyKind,
    pub lock: LockId,
}

impl Key {
    pub fn plain(lock: LockId) -> Self {
        Key {
            kind: KeyKind::Plain,
            lock,
        }
    }

    pub fn writer(lock: LockId) -> Self {
        Key {
            kind: KeyKind::Writer,
            lock,
        }
    }

    pub fn readers(lock: LockId) -> Self {
        Key {
            kind: KeyKind::Readers,
            lock,
        }
    }

    pub fn fence(lock: LockId) -> Self {
        Key {
            kind: KeyKind::Fence,
            lock,
        }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            KeyKind::Plain => write!(f, "{}", self.lock),
            KeyKind::Writer => write!(f, "w_{{{}}}", self.lock),
            KeyKind::Readers => write!(f, "r_{{{}}}", self.lock),
            KeyKind::Fair => write!(f, "fair_{{{}}}", self.lock),
            KeyKind::FairExpiry => write!(f, "fairexp_{{{}}}", self.lock),
            KeyKind::Fence => write!(f, "fence_{{{}}}", self.lock),
        }
    }
}

/// What the read-write scripts answer (seed 000's return codes, plus the fair queue's).
pub mod rw_reply {
    /// The lock was taken (or extended).
    pub const ACQUIRED: i64 = 1;
    /// The writer script: readers hold the lock. The reader script: a writer holds it.
    pub const BLOCKED: i64 = 2;
    /// The writer script: another writer holds the lock.
    pub const WRITE_LOCKED: i64 = 3;
    /// The fair scripts: the caller is queued behind other waiters; not its turn yet.
    pub const QUEUED: i64 = 4;
}

/// A command an algorithm sends to one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cmd {
    /// `SET key token NX PX ttl_ms`: `Ok` if set, `Nil` if the key exists.
    SetNxPx { key: Key, token: Token, ttl_ms: u64 },
    /// The compare-and-delete script (`src/scripts/unlock.lua`): `Int(1)` if the key held
    /// `token` and was deleted, `Int(0)` otherwise.
    DelIfEq { key: Key, token: Token },
    /// Seed 000's writer script (`src/scripts/rw_write_lock.lua`, KEYS = r, w; ARGV = tok,
    /// now, ttl): drop readers whose expiry is at or before `now_ms`; refuse with `Int(2)`
    /// if readers remain, `Int(3)` if `w` exists; else `SET w tok PX ttl`, `Int(1)`.
    WriteLock {
        lock: LockId,
        token: Token,
        now_ms: u64,
        ttl_ms: u64,
    },
    /// Seed 000's reader script (`src/scripts/rw_read_lock.lua`, KEYS = r, w; ARGV = tok,
    /// exp_at): `Int(2)` if `w` exists, else `ZADD r exp_at tok`, `Int(1)`.
    ReadLock {
        lock: LockId,
        token: Token,
        exp_at_ms: u64,
    },
    /// `DEL key` on a string key: `Int(1)` if a live key was deleted, `Int(0)` otherwise.
    /// The release of `release = "del"`, which does not look at whose key it is.
    Del { key: Key },
    /// `PEXPIRE key ttl` on a string key: `Int(1)` if a live key got the new ttl,
    /// `Int(0)` otherwise. The extension of `extend = "pexpire"`, which does not look at
    /// whose key it is.
    PExpire { key: Key, ttl_ms: u64 },
    /// `ZREM key token`: a reader's release. `Int(1)` if removed, `Int(0)` otherwise.
    ZRem { key: Key, token: Token },
    /// Extension of a string lock (`src/scripts/extend.lua`): if `key` holds `token`,
    /// `PEXPIRE key ttl`, `Int(1)`; else `Int(0)`.
    PExpireIfEq { key: Key, token: Token, ttl_ms: u64 },
    /// Extension of a read lock (`src/scripts/extend_read.lua`, KEYS = r, w; ARGV = tok,
    /// now, exp_at): `Int(1)` and the reader's score set to `exp_at_ms` if `w` does not
    /// exist and the reader is in `r` with a score after `now_ms`; else `Int(0)`.
    ExtendRead {
        lock: LockId,
        token: Token,
        now_ms: u64,
        exp_at_ms: u64,
    },
    /// `INCR key`: `Int(new value)`.
    Incr { key: Key },
    /// Raise a counter to at least `value` (`src/scripts/fence_raise.lua`): `Int(value
    /// now stored)`. The second round of fencing-token issue (`algorithm/fencing.rs`).
    RaiseTo { key: Key, value: u64 },
    /// The fair writer script (`src/scripts/fair_write_lock.lua`); see `algorithm/fair.rs`.
    FairWriteLock {
        lock: LockId,
        token: Token,
        fair: FairArgs,
        ttl_ms: u64,
    },
    /// The fair reader script (`src/scripts/fair_read_lock.lua`); see `algorithm/fair.rs`.
    FairReadLock {
        lock: LockId,
        token: Token,
        fair: FairArgs,
        exp_at_ms: u64,
    },
    /// Leave the fair queue (`src/scripts/fair_leave.lua`): remove the ticket from
    /// `fair_{L}` and `fairexp_{L}`. `Int(1)` if it was there.
    FairLeave { lock: LockId, ticket: Ticket },
    /// `WAIT replicas timeout_ms` after a lock's SET, on the node that took it: blocks
    /// until `replicas` replicas have acknowledged every write this connection made
    /// before it, or the timeout passes, and answers `Int(replicas that acknowledged)`.
    /// Sent by `[algorithm] wait_replicas` (`algorithm/redlock.rs`); `lock` routes it
    /// (a cluster sends it to the master that owns the lock's slot) and names it in a
    /// `link` line.
    Wait {
        lock: LockId,
        replicas: u32,
        timeout_ms: u64,
    },
}

impl Cmd {
    /// The lock the command is about.
    pub fn lock(&self) -> LockId {
        match *self {
            Cmd::SetNxPx { key, .. }
            | Cmd::DelIfEq { key, .. }
            | Cmd::Del { key }
            | Cmd::PExpire { key, .. }
            | Cmd::ZRem { key, .. }
            | Cmd::PExpireIfEq { key, .. }
            | Cmd::Incr { key }
            | Cmd::RaiseTo { key, .. } => key.lock,
            Cmd::WriteLock { lock, .. }
            | Cmd::ReadLock { lock, .. }
            | Cmd::ExtendRead { lock, .. }
            | Cmd::FairWriteLock { lock, .. }
            | Cmd::FairReadLock { lock, .. }
            | Cmd::FairLeave { lock, .. }
            | Cmd::Wait { lock, .. } => lock,
        }
    }
}

/// A waiter's place in the fair queue: the member `w:<ticket>` or `r:<ticket>` of
/// `fair_{L}`. The ticket is the first token of the acquisition and stays the same
/// across its retries, so a waiter keeps its place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ticket {
    pub id: Token,
    pub write: bool,
}

impl fmt::Display for Ticket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", if self.write { "w" } else { "r" }, self.id)
    }
}

/// The queue arguments of the fair scripts, all times in ms since the Unix epoch by the
/// client's wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FairArgs {
    pub ticket: Ticket,
    /// The client's `now`: tickets expiring at or before it are dropped first.
    pub now_ms: u64,
    /// Join the queue even if it is empty (the acquisition has waited too long).
    pub enqueue: bool,
    /// The queue position (score in `fair_{L}`): when the acquisition first started.
    pub queued_at_ms: u64,
    /// The ticket's new expiry (score in `fairexp_{L}`), refreshed at every attempt.
    pub ticket_exp_at_ms: u64,
}

/// A node's answer. Errors carry no text so replies stay `Copy` on the hot path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reply {
    Ok,
    Nil,
    Int(i64),
    Error,
}
