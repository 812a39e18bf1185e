//! The vocabulary between a lock client and a Redis node: keys, commands and replies.
//!
//! Algorithms emit [`Cmd`]s; the simulated node executes them natively and the real
//! backend turns them into `SET`/`EVALSHA` calls on the Lua scripts in `src/scripts/`.
//! Both sides answer with the same small [`Reply`] type, so an algorithm cannot tell
//! which driver it runs under.

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
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            KeyKind::Plain => write!(f, "{}", self.lock),
        }
    }
}

/// A command an algorithm sends to one node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cmd {
    /// `SET key token NX PX ttl_ms`: `Ok` if set, `Nil` if the key exists.
    SetNxPx { key: Key, token: Token, ttl_ms: u64 },
    /// The compare-and-delete script (`src/scripts/unlock.lua`): `Int(1)` if the key held
    /// `token` and was deleted, `Int(0)` otherwise.
    DelIfEq { key: Key, token: Token },
}

/// A node's answer. Errors carry no text so replies stay `Copy` on the hot path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    Ok,
    Nil,
    Int(i64),
    Error,
}
