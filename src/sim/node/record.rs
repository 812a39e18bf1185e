//! What a simulated node did to the keys of its locks, kept for the history's `node`
//! lines (see [`crate::history`]): set, extended, expired, deleted, lost at a crash,
//! replicated or not at a failover, promoted.
//!
//! A node only notes these when the run asks for them (`node_events`, on by default);
//! the driver takes them after each command or fault and writes them with the client
//! that sent the command. Off, the node does no more than before: one branch per key
//! change.
//!
//! Expiry is lazy, as in Redis: a key is found expired when the node next touches it.
//! The true time its expiry came is worked out from the node's clock: as it runs now,
//! or, if the key had already expired before the clock's last change (a jump or a new
//! rate), as it ran before that change.

use super::super::clock::Clock;
use crate::command::{Key, Token};
use crate::history::NodeAction;

/// One thing the node did to one key (an entry of `r_{L}` counts as a key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyEvent {
    pub key: Key,
    pub action: NodeAction,
    pub token: Option<Token>,
    /// Done by the command's sender (set, extended, deleted, a writer's script
    /// dropping a reader), not by time or a fault.
    pub by_request: bool,
    pub ttl_ms: Option<u64>,
    pub checked: Option<bool>,
    pub expired_at_us: Option<u64>,
    pub expire_at_node_us: Option<u64>,
    pub lag_us: Option<u64>,
}

impl KeyEvent {
    pub fn new(key: Key, action: NodeAction, token: Token) -> Self {
        KeyEvent {
            key,
            action,
            token: Some(token),
            by_request: false,
            ttl_ms: None,
            checked: None,
            expired_at_us: None,
            expire_at_node_us: None,
            lag_us: None,
        }
    }

    /// Done by the command's sender.
    pub fn by_request(mut self) -> Self {
        self.by_request = true;
        self
    }
}

/// The node's notes, and what it needs to date an expiry. Not part of the node's
/// state: two nodes with the same keys are the same node whatever they noted (the
/// explorer hashes nodes to deduplicate states).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    pub on: bool,
    /// True time of the command or fault being handled.
    pub now_us: u64,
    pub events: Vec<KeyEvent>,
    /// The node's clock as it ran before its last change, and when that change came.
    pub clock_before: Option<(u64, Clock)>,
}

impl std::hash::Hash for Recorder {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl Recorder {
    pub fn push(&mut self, event: KeyEvent) {
        if self.on {
            self.events.push(event);
        }
    }

    /// The clock is about to change at `now_us` (a jump, a new rate).
    pub fn clock_changes(&mut self, now_us: u64, clock: &Clock) {
        if self.on {
            self.clock_before = Some((now_us, clock.clone()));
        }
    }

    /// When the node's clock (now `clock`) reached `expire_wall_us`, in true time, no
    /// later than now.
    pub fn expiry_true_us(&self, clock: &Clock, expire_wall_us: u64) -> u64 {
        let at = match &self.clock_before {
            Some((changed, before)) if before.wall(*changed) >= expire_wall_us => {
                before.true_at_wall(expire_wall_us).min(*changed)
            }
            Some((changed, _)) => clock.true_at_wall(expire_wall_us).max(*changed),
            None => clock.true_at_wall(expire_wall_us),
        };
        at.min(self.now_us)
    }

    /// A key found expired.
    pub fn expired(&mut self, clock: &Clock, key: Key, token: Token, expire_wall_us: u64) {
        if self.on {
            let mut e = KeyEvent::new(key, NodeAction::Expired, token);
            e.expired_at_us = Some(self.expiry_true_us(clock, expire_wall_us));
            e.expire_at_node_us = Some(expire_wall_us);
            self.events.push(e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expiry_is_dated_by_the_clock_that_ran_when_it_came() {
        let mut r = Recorder {
            on: true,
            now_us: 5_000_000,
            ..Recorder::default()
        };
        let mut clock = Clock::default();
        let expire = clock.wall(4_000_000);
        assert_eq!(r.expiry_true_us(&clock, expire), 4_000_000);
        // A +10 s jump at t=3 s: the key set to expire at 4 s expired at the jump.
        r.clock_changes(3_000_000, &clock);
        clock.jump(10_000_000);
        assert_eq!(r.expiry_true_us(&clock, expire), 3_000_000);
        // One that had expired at 1 s, before the jump, keeps its time.
        assert_eq!(r.expiry_true_us(&clock, clock.wall(0) - 9_000_000), 1_000_000);
    }
}
