//! What survives a node's crash: the append-only file and the asynchronous replica.
//!
//! Both are kept as snapshots of the node's key store rather than a log of commands, so
//! they work for any command the node learns: the store as it stood at the last fsync
//! (AOF everysec), and the stores the master had over the last `lag` (the replica's
//! view, which trails the master by the lag). Snapshots are cheap because a lock
//! workload keeps only a handful of keys per node.

use crate::fault::Persistence;
use std::collections::VecDeque;

/// Redis's `appendfsync everysec`: a background fsync once a second.
const FSYNC_INTERVAL_US: u64 = 1_000_000;

/// The append-only file of one node.
#[derive(Clone, Debug, Hash)]
pub struct Aof<S> {
    persistence: Persistence,
    /// The store as of the fsync at `synced_at_us` (everysec only).
    synced: S,
    synced_at_us: u64,
}

impl<S: Clone + Default> Aof<S> {
    pub fn new(persistence: Persistence) -> Self {
        Aof {
            persistence,
            synced: S::default(),
            synced_at_us: 0,
        }
    }

    /// Call before a node executes a command at `now_us` with its store as it stands:
    /// if an fsync fell due since the last command, the store before this command is
    /// exactly what that fsync wrote.
    pub fn before_command(&mut self, now_us: u64, store: &S) {
        if self.persistence == Persistence::AofEverysec {
            let due = now_us / FSYNC_INTERVAL_US * FSYNC_INTERVAL_US;
            if due > self.synced_at_us {
                self.synced = store.clone();
                self.synced_at_us = due;
            }
        }
    }

    /// The store a node restarts with after a crash at `now_us`. A process kill leaves
    /// every write in the kernel's page cache, so AOF keeps them all; a power loss
    /// keeps only what was fsynced.
    pub fn recover(&mut self, now_us: u64, store: &S, power_loss: bool) -> S {
        match self.persistence {
            Persistence::None => S::default(),
            Persistence::AofAlways => store.clone(),
            Persistence::AofEverysec if !power_loss => store.clone(),
            Persistence::AofEverysec => {
                // An fsync due since the last command wrote the store as it stands.
                self.before_command(now_us, store);
                self.synced.clone()
            }
        }
    }
}

/// An asynchronous replica: it applies the master's writes `lag_us` after they happen,
/// except while its link to the master is cut: then it keeps what it had received when
/// the cut began, and catches up when the cut heals (Redis's partial resync).
#[derive(Clone, Debug, Hash)]
pub struct Replica<S> {
    pub lag_us: u64,
    /// While the link is cut: the master's time up to which the replica has its writes.
    frozen: Option<u64>,
    /// The master's store after each command, oldest first; the front entry is the
    /// replica's current state once older ones are pruned.
    history: VecDeque<(u64, S)>,
}

impl<S: Clone + Default> Replica<S> {
    pub fn new(lag_us: u64) -> Self {
        Replica {
            lag_us,
            frozen: None,
            history: VecDeque::from([(0, S::default())]),
        }
    }

    /// The master's time up to which the replica has its writes at `now_us`.
    fn horizon(&self, now_us: u64) -> u64 {
        let h = now_us.saturating_sub(self.lag_us);
        self.frozen.map_or(h, |f| f.min(h))
    }

    /// Whether, at `now_us`, the replica has every write the master took up to `t_us`.
    pub fn has_writes_until(&self, now_us: u64, t_us: u64) -> bool {
        self.horizon(now_us) >= t_us
    }

    /// The link to the master is cut (`true`) at `now_us`, or heals.
    pub fn cut(&mut self, now_us: u64, cut: bool) {
        self.frozen = cut.then(|| self.horizon(now_us));
    }

    /// Records the master's store after a command at `now_us`.
    pub fn after_command(&mut self, now_us: u64, store: &S) {
        self.history.push_back((now_us, store.clone()));
        let horizon = self.horizon(now_us);
        // Keep the newest snapshot at or before the horizon: the replica's state.
        while self.history.len() > 1 && self.history[1].0 <= horizon {
            self.history.pop_front();
        }
    }

    /// What the replica holds at `now_us` (no earlier than the last command): the
    /// master's store as of `now_us - lag`.
    pub fn state_at(&self, now_us: u64) -> S {
        let horizon = self.horizon(now_us);
        self.history
            .iter()
            .take_while(|(t, _)| *t <= horizon)
            .last()
            .map_or_else(S::default, |(_, s)| s.clone())
    }

    /// A full resync: the replica now holds `store`.
    pub fn resync(&mut self, now_us: u64, store: &S) {
        self.history.clear();
        // Dated one lag back, so the replica holds it from now on.
        let at = now_us.saturating_sub(self.lag_us);
        self.history.push_back((at, store.clone()));
        // A cut link keeps the replica at what this resync gave it.
        if self.frozen.is_some() {
            self.frozen = Some(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type S = Vec<u32>;

    #[test]
    fn everysec_keeps_the_last_fsync_on_power_loss_and_everything_on_a_kill() {
        let mut aof: Aof<S> = Aof::new(Persistence::AofEverysec);
        let mut store = vec![];
        for (t, v) in [(100_000, 1), (900_000, 2), (1_200_000, 3), (1_700_000, 4)] {
            aof.before_command(t, &store);
            store.push(v);
        }
        assert_eq!(aof.recover(1_800_000, &store, true), vec![1, 2], "fsync at 1s");
        assert_eq!(aof.recover(1_800_000, &store, false), vec![1, 2, 3, 4]);
        assert_eq!(
            aof.recover(2_000_000, &store, true),
            vec![1, 2, 3, 4],
            "the fsync at 2s ran before the crash"
        );
    }

    #[test]
    fn always_keeps_everything_and_none_keeps_nothing() {
        let store = vec![7];
        assert_eq!(Aof::new(Persistence::AofAlways).recover(5, &store, true), store);
        assert_eq!(
            Aof::<S>::new(Persistence::None).recover(5, &store, false),
            S::new()
        );
    }

    #[test]
    fn a_cut_replica_keeps_what_it_had_and_catches_up_at_the_heal() {
        let mut r: Replica<S> = Replica::new(10);
        r.after_command(100, &vec![1]);
        r.cut(200, true);
        r.after_command(300, &vec![1, 2]);
        r.after_command(400, &vec![1, 2, 3]);
        assert_eq!(r.state_at(1_000), vec![1], "nothing after the cut arrives");
        r.cut(1_000, false);
        assert_eq!(r.state_at(1_000), vec![1, 2, 3], "the heal catches it up");
        // A cut within the lag keeps only what had arrived by then.
        r.after_command(2_000, &vec![4]);
        r.cut(2_005, true);
        assert_eq!(r.state_at(3_000), vec![1, 2, 3]);
    }

    #[test]
    fn the_replica_trails_by_the_lag() {
        let mut r: Replica<S> = Replica::new(500);
        r.after_command(1_000, &vec![1]);
        r.after_command(1_200, &vec![1, 2]);
        assert_eq!(r.state_at(1_400), S::new());
        assert_eq!(r.state_at(1_500), vec![1]);
        r.after_command(2_000, &vec![1, 2, 3]);
        assert_eq!(r.state_at(2_000), vec![1, 2], "the write at 2ms is not there yet");
        assert_eq!(r.state_at(2_500), vec![1, 2, 3]);
        r.resync(3_000, &vec![9]);
        assert_eq!(r.state_at(3_000), vec![9]);
    }
}
