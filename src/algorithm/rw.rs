//! The read-write Redlock of seed 000: which command each mode sends.
//!
//! The state machine is the one of [`super::Redlock`] (quorum N/2+1, validity = ttl −
//! elapsed − drift, unlock everywhere on failure, retry after a random delay); only the
//! per-node commands differ by [`Mode`]:
//!
//! | mode | lock | release | extend |
//! | --- | --- | --- | --- |
//! | exclusive | `SET L tok NX PX ttl` | delete `L` if it holds `tok` | `PEXPIRE` if it holds `tok` |
//! | write | writer script on `r_{L}`, `w_{L}` | delete `w_{L}` if it holds `tok` | `PEXPIRE w_{L}` if it holds `tok` |
//! | read | reader script: `ZADD r_{L} exp_at tok` | `ZREM r_{L} tok` | reader's score moved to the new `exp_at` |
//!
//! As the seed specifies, `now` and `exp_at = now + ttl` are the client's WALL clock
//! reading in milliseconds since the Unix epoch, taken when the attempt starts: a reader's
//! expiry is judged by the clock of the writer that later drops it, not by the node. This
//! is why the read-write lock is sensitive to client clock offsets where the exclusive
//! lock is not (it only uses node clocks and the client's monotonic clock): a writer whose
//! wall clock runs ahead drops live readers.
//!
//! A grant is `OK` (for `SET NX`) or `Int(1)` (for the scripts); anything else is a refusal.
//!
//! The client mistakes of [`super::Mistakes`] change the string-key commands only:
//! `release = "del"` sends plain `DEL L` / `DEL w_{L}`, `extend = "pexpire"` plain
//! `PEXPIRE`. A reader's commands name its own token by nature (it is the member of
//! `r_{L}`), so they stay as they are.

use super::{Extend, Mode, Release};
use crate::command::{rw_reply, Cmd, Key, LockId, Reply, Token};

/// The lock command of one attempt, `now_ms` being the client's wall clock in ms.
pub(super) fn lock_cmd(mode: Mode, lock: LockId, token: Token, now_ms: u64, ttl_ms: u64) -> Cmd {
    match mode {
        Mode::Exclusive => Cmd::SetNxPx {
            key: Key::plain(lock),
            token,
            ttl_ms,
        },
        Mode::Write => Cmd::WriteLock {
            lock,
            token,
            now_ms,
            ttl_ms,
        },
        Mode::Read => Cmd::ReadLock {
            lock,
            token,
            exp_at_ms: now_ms + ttl_ms,
        },
    }
}

/// The string key of an exclusive or write lock; `None` for a reader.
fn string_key(mode: Mode, lock: LockId) -> Option<Key> {
    match mode {
        Mode::Exclusive => Some(Key::plain(lock)),
        Mode::Write => Some(Key::writer(lock)),
        Mode::Read => None,
    }
}

/// The release (and unlock-on-failure) command.
pub(super) fn unlock_cmd(mode: Mode, lock: LockId, token: Token, release: Release) -> Cmd {
    match (string_key(mode, lock), release) {
        (Some(key), Release::Compare) => Cmd::DelIfEq { key, token },
        (Some(key), Release::Del) => Cmd::Del { key },
        (None, _) => Cmd::ZRem {
            key: Key::readers(lock),
            token,
        },
    }
}

/// The extension command: the key lives `ttl_ms` more from the node's (or, for a reader,
/// the client's) `now`.
pub(super) fn extend_cmd(
    mode: Mode,
    lock: LockId,
    token: Token,
    now_ms: u64,
    ttl_ms: u64,
    extend: Extend,
) -> Cmd {
    match (string_key(mode, lock), extend) {
        (Some(key), Extend::Compare) => Cmd::PExpireIfEq { key, token, ttl_ms },
        (Some(key), Extend::Pexpire) => Cmd::PExpire { key, ttl_ms },
        (None, _) => Cmd::ExtendRead {
            lock,
            token,
            now_ms,
            exp_at_ms: now_ms + ttl_ms,
        },
    }
}

/// Whether a reply grants the lock (or the extension).
pub(super) fn granted(reply: Reply) -> bool {
    matches!(reply, Reply::Ok | Reply::Int(rw_reply::ACQUIRED))
}
