//! A simulated Redis node: the subset of Redis the lock algorithms use, executed natively
//! with the same semantics as the real commands and Lua scripts.
//!
//! Keys carry absolute expiry times on the node's own wall clock, as in Redis, and expire
//! lazily when touched: a key is gone once the node's clock reaches its expiry, whether
//! the clock got there by running or by jumping.

use super::clock::Clock;
use crate::command::{Cmd, Key, Reply, Token};
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
struct Entry {
    value: Token,
    expire_at_wall_us: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Node {
    pub clock: Clock,
    keys: BTreeMap<Key, Entry>,
}

impl Node {
    /// Executes one command at true time `now_us`.
    pub fn exec(&mut self, now_us: u64, cmd: Cmd) -> Reply {
        let wall = self.clock.wall(now_us);
        match cmd {
            Cmd::SetNxPx { key, token, ttl_ms } => {
                if self.live(key, wall).is_some() {
                    return Reply::Nil;
                }
                self.keys.insert(
                    key,
                    Entry {
                        value: token,
                        expire_at_wall_us: wall + ttl_ms * 1_000,
                    },
                );
                Reply::Ok
            }
            Cmd::DelIfEq { key, token } => {
                if self.live(key, wall) == Some(token) {
                    self.keys.remove(&key);
                    Reply::Int(1)
                } else {
                    Reply::Int(0)
                }
            }
        }
    }

    /// The value of `key` if it exists and has not expired by `wall_us`; drops it if expired.
    fn live(&mut self, key: Key, wall_us: u64) -> Option<Token> {
        let entry = self.keys.get(&key)?;
        if wall_us >= entry.expire_at_wall_us {
            self.keys.remove(&key);
            return None;
        }
        Some(entry.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::LockId;

    const K: Key = Key {
        kind: crate::command::KeyKind::Plain,
        lock: LockId(0),
    };

    #[test]
    fn set_nx_px_sets_once_until_expiry() {
        let mut n = Node::default();
        let set = |t| Cmd::SetNxPx {
            key: K,
            token: Token(t),
            ttl_ms: 10,
        };
        assert_eq!(n.exec(0, set(1)), Reply::Ok);
        assert_eq!(n.exec(9_999, set(2)), Reply::Nil);
        assert_eq!(n.exec(10_000, set(2)), Reply::Ok, "expired at ttl");
    }

    #[test]
    fn del_if_eq_deletes_only_the_owners_key() {
        let mut n = Node::default();
        n.exec(
            0,
            Cmd::SetNxPx {
                key: K,
                token: Token(1),
                ttl_ms: 10,
            },
        );
        assert_eq!(
            n.exec(
                1,
                Cmd::DelIfEq {
                    key: K,
                    token: Token(2)
                }
            ),
            Reply::Int(0)
        );
        assert_eq!(
            n.exec(
                2,
                Cmd::DelIfEq {
                    key: K,
                    token: Token(1)
                }
            ),
            Reply::Int(1)
        );
        assert_eq!(
            n.exec(
                3,
                Cmd::DelIfEq {
                    key: K,
                    token: Token(1)
                }
            ),
            Reply::Int(0)
        );
    }

    #[test]
    fn a_forward_clock_jump_expires_keys() {
        let mut n = Node::default();
        n.exec(
            0,
            Cmd::SetNxPx {
                key: K,
                token: Token(1),
                ttl_ms: 10_000,
            },
        );
        n.clock.jump(10_000_000);
        assert_eq!(
            n.exec(
                1,
                Cmd::SetNxPx {
                    key: K,
                    token: Token(2),
                    ttl_ms: 10
                }
            ),
            Reply::Ok
        );
    }
}
