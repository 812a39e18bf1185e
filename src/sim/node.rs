//! A simulated Redis node: the subset of Redis the lock algorithms use, executed natively
//! with the same semantics as the real commands and Lua scripts.
//!
//! Keys carry absolute expiry times on the node's own wall clock, as in Redis, and expire
//! lazily when touched: a key is gone once the node's clock reaches its expiry, whether
//! the clock got there by running or by jumping.
//!
//! A node can crash and restart with what its persistence kept ([`durability`]); keys
//! keep their absolute expiry times, so time passes while a node is down. A replicated
//! node is a master with one asynchronous replica that a failover promotes. The driver
//! calls [`Node::handle`], which answers nothing while the node is down; pauses are the
//! driver's business (it holds the requests back).
//!
//! The read-write lock's sorted sets, the fencing counters and the fair queues live in
//! their own maps of the node's `Store`: each key kind has one Redis type, so one
//! keyspace split by type behaves like Redis's. Sorted-set
//! members are never expired by the node: as in seed 000, a reader's score is its expiry
//! by the client's clock, and the writer script drops expired readers by the client's
//! `now`. Anything that wipes or restores a node's data (crash, persistence) works on
//! the whole `Store`.
//!
//! [`durability`]: super::durability

use super::clock::Clock;
use super::durability::{Aof, Replica};
use crate::command::{rw_reply, Cmd, FairArgs, Key, LockId, Reply, Ticket, Token};
use crate::fault::{Persistence, Replication};
use crate::history::NodeAction;
pub use record::KeyEvent;
use record::Recorder;
use sorted::SortedMap;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, Hash)]
struct Entry {
    value: Token,
    expire_at_wall_us: u64,
}

/// A node's whole keyspace, one map per Redis type. It is one value so that whatever
/// keeps or loses a node's data (a crash, persistence, a replica) takes all of it.
#[derive(Clone, Debug, Default)]
struct Store {
    /// Strings with PX expiry: exclusive locks and `w_{L}`.
    strings: SortedMap<Key, Entry>,
    /// The other types, made when first written: most runs hold strings only, and the
    /// explorer copies and drops every node's stores with each world it makes.
    more: Option<Box<More>>,
}

#[derive(Clone, Debug, Default, Hash)]
struct More {
    /// Sorted sets (`r_{L}`): member → score in ms.
    zsets: BTreeMap<Key, BTreeMap<Token, u64>>,
    /// Integer keys (`fence_{L}`), without expiry.
    counters: BTreeMap<Key, i64>,
    /// The fair queue of each lock: `fair_{L}` and `fairexp_{L}` together.
    fair: BTreeMap<LockId, BTreeMap<Ticket, Queued>>,
}

/// No sorted sets, for a store that has none.
static NO_ZSETS: BTreeMap<Key, BTreeMap<Token, u64>> = BTreeMap::new();

impl Store {
    fn zsets(&self) -> &BTreeMap<Key, BTreeMap<Token, u64>> {
        self.more.as_ref().map_or(&NO_ZSETS, |m| &m.zsets)
    }

    /// The other types, made if the store has none yet.
    fn more(&mut self) -> &mut More {
        self.more.get_or_insert_with(Default::default)
    }

    /// The other types if there are any, for a change that adds nothing.
    fn more_if_any(&mut self) -> Option<&mut More> {
        self.more.as_deref_mut()
    }
}

/// A store without `more` hashes as one whose other maps are empty: the explorer
/// tells states apart by these bytes, and a store whose sorted set came and went is
/// the same state as one that never had any.
impl std::hash::Hash for Store {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.strings.hash(h);
        match &self.more {
            Some(more) => more.hash(h),
            // What three empty maps feed a hasher: their lengths.
            None => (0..3).for_each(|_| h.write_usize(0)),
        }
    }
}

/// Whether a node's process is running.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Status {
    #[default]
    Up,
    /// Crashed. A killed process refuses connections at once; a machine without power
    /// answers nothing.
    Down { power_loss: bool },
}

#[derive(Clone, Debug, Hash)]
pub struct Node {
    pub clock: Clock,
    keys: Store,
    status: Status,
    aof: Aof<Store>,
    replica: Option<Replica<Store>>,
    /// What the node did to its keys, for the history's `node` lines (off by default).
    record: Recorder,
}

impl Default for Node {
    fn default() -> Self {
        Node::new(Persistence::None, None)
    }
}

/// A ticket in a fair queue: its position (score in `fair_{L}`) and expiry (score in
/// `fairexp_{L}`), both in ms.
#[derive(Clone, Copy, Debug, Hash)]
struct Queued {
    at_ms: u64,
    exp_at_ms: u64,
}

/// Redis orders equal scores by member bytes; `r:<hex>` sorts before `w:<hex>`, and
/// fixed-width hex sorts like the number.
fn queue_order(t: &Ticket, q: &Queued) -> (u64, bool, Token) {
    (q.at_ms, t.write, t.id)
}

impl Node {
    pub fn new(persistence: Persistence, replication: Option<Replication>) -> Self {
        Node {
            clock: Clock::default(),
            keys: Store::default(),
            status: Status::Up,
            aof: Aof::new(persistence),
            replica: replication.map(|r| Replica::new(r.lag_us)),
            record: Recorder::default(),
        }
    }

    /// Whether the node notes what it does to its keys ([`Node::take_events`]).
    pub fn with_events(mut self, on: bool) -> Self {
        self.record.on = on;
        self
    }

    /// What the node did to its keys since the last call, oldest first, into `out`.
    pub fn take_events(&mut self, out: &mut Vec<KeyEvent>) {
        out.append(&mut self.record.events);
    }

    /// The node's wall clock jumps by `by_us` at `now_us`.
    pub fn jump_clock(&mut self, now_us: u64, by_us: i64) {
        self.record.clock_changes(now_us, &self.clock);
        self.clock.jump(by_us);
    }

    /// The node's clock runs at `rate_ppm` from `now_us` on.
    pub fn set_clock_rate(&mut self, now_us: u64, rate_ppm: i64) {
        self.record.clock_changes(now_us, &self.clock);
        self.clock.set_rate(now_us, rate_ppm);
    }

    /// Notes every lock key of `keys` (strings and reader entries) as `action`.
    fn note_all(&mut self, now_us: u64, action: NodeAction, keep: impl Fn(&Key, &Token) -> bool) {
        if !self.record.on {
            return;
        }
        let wall = self.clock.wall(now_us);
        let strings = self.keys.strings.iter();
        let live = strings
            .filter(|(_, e)| wall < e.expire_at_wall_us)
            .map(|(k, e)| (*k, e.value));
        let readers = self
            .keys
            .zsets()
            .iter()
            .flat_map(|(k, z)| z.keys().map(move |t| (*k, *t)));
        let noted: Vec<(Key, Token)> = live.chain(readers).filter(|(k, t)| keep(k, t)).collect();
        for (key, token) in noted {
            self.record.push(KeyEvent::new(key, action, token));
        }
    }

    pub fn status(&self) -> Status {
        self.status
    }

    /// A request arrives at true time `now_us`: the reply, or `None` if the node is down
    /// and silent.
    pub fn handle(&mut self, now_us: u64, cmd: Cmd) -> Option<Reply> {
        match self.status {
            Status::Down { power_loss: true } => None,
            Status::Down { power_loss: false } => Some(Reply::Error),
            Status::Up => {
                self.record.now_us = now_us;
                self.aof.before_command(now_us, &self.keys);
                let reply = self.exec(now_us, cmd);
                if let Some(replica) = &mut self.replica {
                    replica.after_command(now_us, &self.keys);
                }
                Some(reply)
            }
        }
    }

    /// How many replicas have every write the master took up to `since_us`, at `now_us`
    /// (the answer `WAIT` counts); `None` if the node is down and answers nothing.
    pub fn acknowledged(&self, now_us: u64, since_us: u64) -> Option<u32> {
        match self.status {
            Status::Up => Some(u32::from(
                self.replica
                    .as_ref()
                    .is_some_and(|r| r.has_writes_until(now_us, since_us)),
            )),
            Status::Down { .. } => None,
        }
    }

    /// The replica's lag, if the node has one.
    pub fn replication_lag_us(&self) -> Option<u64> {
        self.replica.as_ref().map(|r| r.lag_us)
    }

    /// The process dies at `now_us`; what survives is decided now.
    pub fn crash(&mut self, now_us: u64, power_loss: bool) {
        if self.status != Status::Up {
            return;
        }
        let kept = self.aof.recover(now_us, &self.keys, power_loss);
        if self.record.on {
            self.record.now_us = now_us;
            let had = |k: &Key, t: &Token| {
                kept.strings.get(k).is_some_and(|e| e.value == *t)
                    || kept.zsets().get(k).is_some_and(|z| z.contains_key(t))
            };
            self.note_all(now_us, NodeAction::Lost, |k, t| !had(k, t));
        }
        self.keys = kept;
        self.status = Status::Down { power_loss };
    }

    /// The process starts again with what it kept; a replica resyncs from it.
    pub fn restart(&mut self, now_us: u64) {
        if self.status == Status::Up {
            return;
        }
        self.status = Status::Up;
        if let Some(replica) = &mut self.replica {
            replica.resync(now_us, &self.keys);
        }
    }

    /// The link between the master and its replica is cut (`true`) at `now_us`, or heals.
    pub fn cut_replication(&mut self, now_us: u64, cut: bool) {
        if let Some(replica) = &mut self.replica {
            replica.cut(now_us, cut);
        }
    }

    /// The master dies at `now_us`: its replica stops receiving writes, trailing by the lag.
    pub fn fail_master(&mut self, now_us: u64) {
        if self.replica.is_none() || self.status != Status::Up {
            return self.crash(now_us, true);
        }
        let replica = self.replica.as_ref().expect("checked above");
        // The promoted replica will hold what it had received when the master died.
        let kept = replica.state_at(now_us);
        if self.record.on {
            self.record.now_us = now_us;
            let lag_us = replica.lag_us;
            let had = |k: &Key, t: &Token| {
                kept.strings.get(k).is_some_and(|e| e.value == *t)
                    || kept.zsets().get(k).is_some_and(|z| z.contains_key(t))
            };
            let start = self.record.events.len();
            self.note_all(now_us, NodeAction::Replicated, |_, _| true);
            for e in &mut self.record.events[start..] {
                if !had(&e.key, &e.token.expect("noted with a token")) {
                    e.action = NodeAction::Unreplicated;
                    e.lag_us = Some(lag_us);
                }
            }
        }
        self.keys = kept;
        self.status = Status::Down { power_loss: true };
    }

    /// The replica is promoted and serves under the node's address; the old master
    /// rejoins as its replica with a full resync.
    pub fn promote_replica(&mut self, now_us: u64) {
        let down = self.status != Status::Up;
        self.restart(now_us);
        if down {
            self.record.now_us = now_us;
            self.note_all(now_us, NodeAction::Promoted, |_, _| true);
        }
    }

    /// Executes one command at true time `now_us`, whatever the node's status.
    pub fn exec(&mut self, now_us: u64, cmd: Cmd) -> Reply {
        let wall = self.clock.wall(now_us);
        match cmd {
            Cmd::SetNxPx { key, token, ttl_ms } => {
                if self.live(key, wall).is_some() {
                    return Reply::Nil;
                }
                self.set(key, token, wall, ttl_ms);
                Reply::Ok
            }
            Cmd::DelIfEq { key, token } => {
                if self.live(key, wall) == Some(token) {
                    self.keys.strings.remove(&key);
                    self.deleted(key, token, true);
                    Reply::Int(1)
                } else {
                    Reply::Int(0)
                }
            }
            Cmd::WriteLock {
                lock,
                token,
                now_ms,
                ttl_ms,
            } => Reply::Int(self.write_lock(wall, lock, token, now_ms, ttl_ms)),
            Cmd::ReadLock {
                lock,
                token,
                exp_at_ms,
            } => Reply::Int(self.read_lock(wall, lock, token, exp_at_ms)),
            Cmd::Del { key } => {
                let existed = self.live(key, wall);
                self.keys.strings.remove(&key);
                if let Some(token) = existed {
                    self.deleted(key, token, false);
                }
                Reply::Int(i64::from(existed.is_some()))
            }
            Cmd::PExpire { key, ttl_ms } => match self.keys.strings.get_mut(&key) {
                Some(e) if wall < e.expire_at_wall_us => {
                    e.expire_at_wall_us = wall + ttl_ms * 1_000;
                    let token = e.value;
                    self.extended(key, token, wall, ttl_ms, false);
                    Reply::Int(1)
                }
                _ => Reply::Int(0),
            },
            Cmd::ZRem { key, token } => {
                let removed = self
                    .keys
                    .more_if_any()
                    .and_then(|m| m.zsets.get_mut(&key))
                    .and_then(|z| z.remove(&token));
                if removed.is_some() {
                    self.deleted(key, token, true);
                }
                Reply::Int(i64::from(removed.is_some()))
            }
            Cmd::PExpireIfEq { key, token, ttl_ms } => {
                if self.live(key, wall) == Some(token) {
                    if let Some(e) = self.keys.strings.get_mut(&key) {
                        e.expire_at_wall_us = wall + ttl_ms * 1_000;
                    }
                    self.extended(key, token, wall, ttl_ms, true);
                    Reply::Int(1)
                } else {
                    Reply::Int(0)
                }
            }
            Cmd::ExtendRead {
                lock,
                token,
                now_ms,
                exp_at_ms,
            } => {
                if self.live(Key::writer(lock), wall).is_some() {
                    return Reply::Int(0);
                }
                match self
                    .keys
                    .more_if_any()
                    .and_then(|m| m.zsets.get_mut(&Key::readers(lock)))
                    .and_then(|z| z.get_mut(&token))
                {
                    Some(score) if *score > now_ms => {
                        *score = exp_at_ms;
                        Reply::Int(1)
                    }
                    _ => Reply::Int(0),
                }
            }
            Cmd::Incr { key } => {
                let v = self.keys.more().counters.entry(key).or_insert(0);
                *v += 1;
                Reply::Int(*v)
            }
            Cmd::RaiseTo { key, value } => {
                let v = self.keys.more().counters.entry(key).or_insert(0);
                *v = (*v).max(value as i64);
                Reply::Int(*v)
            }
            Cmd::FairWriteLock {
                lock,
                token,
                fair,
                ttl_ms,
            } => {
                if let Some(r) = self.queue_turn(lock, fair) {
                    return Reply::Int(r);
                }
                let r = self.write_lock(wall, lock, token, fair.now_ms, ttl_ms);
                if r == rw_reply::ACQUIRED {
                    self.leave(lock, fair.ticket);
                }
                Reply::Int(r)
            }
            Cmd::FairReadLock {
                lock,
                token,
                fair,
                exp_at_ms,
            } => {
                if let Some(r) = self.queue_turn(lock, fair) {
                    return Reply::Int(r);
                }
                let r = self.read_lock(wall, lock, token, exp_at_ms);
                if r == rw_reply::ACQUIRED {
                    self.leave(lock, fair.ticket);
                }
                Reply::Int(r)
            }
            Cmd::FairLeave { lock, ticket } => Reply::Int(i64::from(self.leave(lock, ticket))),
            // Answered at once with what the replica has now; the simulator's driver
            // holds a WAIT back until its replica catches up (`sim::World::wait`).
            Cmd::Wait { .. } => Reply::Int(i64::from(
                self.replica
                    .as_ref()
                    .is_some_and(|r| r.has_writes_until(now_us, now_us)),
            )),
        }
    }

    /// Seed 000's writer script.
    fn write_lock(&mut self, wall_us: u64, lock: LockId, token: Token, now_ms: u64, ttl_ms: u64) -> i64 {
        let r = Key::readers(lock);
        if let Some(more) = self.keys.more_if_any() {
            if let Some(z) = more.zsets.get_mut(&r) {
                // ZREMRANGEBYSCORE r 0 now: the bounds are inclusive.
                let record = &mut self.record;
                z.retain(|t, score| {
                    let keep = *score > now_ms;
                    if !keep {
                        record.push(KeyEvent::new(r, NodeAction::Expired, *t).by_request());
                    }
                    keep
                });
                if !z.is_empty() {
                    return rw_reply::BLOCKED;
                }
                more.zsets.remove(&r);
            }
        }
        let w = Key::writer(lock);
        if self.live(w, wall_us).is_some() {
            return rw_reply::WRITE_LOCKED;
        }
        self.set(w, token, wall_us, ttl_ms);
        rw_reply::ACQUIRED
    }

    /// Seed 000's reader script.
    fn read_lock(&mut self, wall_us: u64, lock: LockId, token: Token, exp_at_ms: u64) -> i64 {
        if self.live(Key::writer(lock), wall_us).is_some() {
            return rw_reply::BLOCKED;
        }
        self.keys
            .more()
            .zsets
            .entry(Key::readers(lock))
            .or_default()
            .insert(token, exp_at_ms);
        self.record
            .push(KeyEvent::new(Key::readers(lock), NodeAction::Set, token).by_request());
        rw_reply::ACQUIRED
    }

    /// The queue half of the fair scripts: `Some(QUEUED)` if the caller must wait its
    /// turn, `None` if it may try the lock itself.
    fn queue_turn(&mut self, lock: LockId, fair: FairArgs) -> Option<i64> {
        let queues = &mut self.keys.more().fair;
        let q = queues.entry(lock).or_default();
        q.retain(|_, e| e.exp_at_ms > fair.now_ms);
        if q.is_empty() && !fair.enqueue {
            queues.remove(&lock);
            return None;
        }
        let me = q.entry(fair.ticket).or_insert(Queued {
            at_ms: fair.queued_at_ms,
            exp_at_ms: fair.ticket_exp_at_ms,
        });
        me.exp_at_ms = fair.ticket_exp_at_ms;
        let mine = queue_order(&fair.ticket, me);
        let mut ahead = q.iter().filter(|(t, e)| queue_order(t, e) < mine);
        let blocked = if fair.ticket.write {
            ahead.next().is_some()
        } else {
            ahead.any(|(t, _)| t.write)
        };
        blocked.then_some(rw_reply::QUEUED)
    }

    fn leave(&mut self, lock: LockId, ticket: Ticket) -> bool {
        let Some(queues) = self.keys.more_if_any().map(|m| &mut m.fair) else {
            return false;
        };
        let Some(q) = queues.get_mut(&lock) else {
            return false;
        };
        let was = q.remove(&ticket).is_some();
        if q.is_empty() {
            queues.remove(&lock);
        }
        was
    }

    /// The value of `key` if it exists and has not expired by `wall_us`; drops it if expired.
    fn live(&mut self, key: Key, wall_us: u64) -> Option<Token> {
        let entry = self.keys.strings.get(&key)?;
        if wall_us >= entry.expire_at_wall_us {
            let (token, expire) = (entry.value, entry.expire_at_wall_us);
            self.keys.strings.remove(&key);
            self.record.expired(&self.clock, key, token, expire);
            return None;
        }
        Some(entry.value)
    }

    /// Sets string `key` to `token`, expiring `ttl_ms` after `wall_us`.
    fn set(&mut self, key: Key, token: Token, wall_us: u64, ttl_ms: u64) {
        let expire_at_wall_us = wall_us + ttl_ms * 1_000;
        self.keys.strings.insert(
            key,
            Entry {
                value: token,
                expire_at_wall_us,
            },
        );
        let mut e = KeyEvent::new(key, NodeAction::Set, token).by_request();
        e.ttl_ms = Some(ttl_ms);
        e.expire_at_node_us = Some(expire_at_wall_us);
        self.record.push(e);
    }

    fn deleted(&mut self, key: Key, token: Token, checked: bool) {
        let mut e = KeyEvent::new(key, NodeAction::Deleted, token).by_request();
        e.checked = Some(checked);
        self.record.push(e);
    }

    fn extended(&mut self, key: Key, token: Token, wall_us: u64, ttl_ms: u64, checked: bool) {
        let mut e = KeyEvent::new(key, NodeAction::Extended, token).by_request();
        e.ttl_ms = Some(ttl_ms);
        e.checked = Some(checked);
        e.expire_at_node_us = Some(wall_us + ttl_ms * 1_000);
        self.record.push(e);
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
    fn plain_del_and_pexpire_act_on_whoevers_key_is_there() {
        let mut n = Node::default();
        n.exec(
            0,
            Cmd::SetNxPx {
                key: K,
                token: Token(1),
                ttl_ms: 10,
            },
        );
        assert_eq!(n.exec(5_000, Cmd::PExpire { key: K, ttl_ms: 10 }), Reply::Int(1));
        assert_eq!(
            n.exec(
                12_000,
                Cmd::SetNxPx {
                    key: K,
                    token: Token(2),
                    ttl_ms: 10
                }
            ),
            Reply::Nil,
            "the key lives 10 ms from the PEXPIRE at 5 ms"
        );
        assert_eq!(
            n.exec(13_000, Cmd::Del { key: K }),
            Reply::Int(1),
            "no token asked"
        );
        assert_eq!(n.exec(13_000, Cmd::Del { key: K }), Reply::Int(0));
        assert_eq!(n.exec(14_000, Cmd::PExpire { key: K, ttl_ms: 10 }), Reply::Int(0));
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

#[cfg(test)]
mod fault_tests {
    //! Crash, restart, persistence and failover semantics of one node.
    use super::*;
    use crate::command::LockId;

    const K: Key = Key {
        kind: crate::command::KeyKind::Plain,
        lock: LockId(0),
    };

    fn set(token: u64, ttl_ms: u64) -> Cmd {
        Cmd::SetNxPx {
            key: K,
            token: Token(token),
            ttl_ms,
        }
    }

    #[test]
    fn without_persistence_a_restart_forgets_the_lock() {
        let mut n = Node::new(Persistence::None, None);
        assert_eq!(n.handle(0, set(1, 10_000)), Some(Reply::Ok));
        n.crash(1_000, false);
        assert_eq!(
            n.handle(2_000, set(2, 10_000)),
            Some(Reply::Error),
            "a killed process refuses"
        );
        n.restart(3_000);
        assert_eq!(
            n.handle(4_000, set(2, 10_000)),
            Some(Reply::Ok),
            "the key is gone"
        );
    }

    #[test]
    fn a_node_notes_what_it_did_to_its_keys() {
        let actions = |n: &mut Node| {
            let mut out = Vec::new();
            n.take_events(&mut out);
            out.iter()
                .map(|e| (e.action, e.token.map(|t| t.0), e.by_request))
                .collect::<Vec<_>>()
        };
        let mut n = Node::new(Persistence::None, None).with_events(true);
        n.handle(0, set(1, 10));
        n.handle(20_000, set(2, 10_000));
        let mut out = Vec::new();
        n.take_events(&mut out);
        assert_eq!(out[1].action, NodeAction::Expired);
        assert_eq!(
            out[1].expired_at_us,
            Some(10_000),
            "when the node's clock reached it"
        );
        n.crash(30_000, false);
        assert_eq!(actions(&mut n), [(NodeAction::Lost, Some(2), false)]);

        let repl = Some(Replication { lag_us: 1_000_000 });
        let mut n = Node::new(Persistence::None, repl).with_events(true);
        n.handle(0, set(1, 60_000));
        n.handle(5_000_000, Cmd::Del { key: K });
        n.handle(5_000_000, set(2, 60_000));
        n.fail_master(5_500_000);
        n.promote_replica(6_000_000);
        assert_eq!(
            actions(&mut n),
            [
                (NodeAction::Set, Some(1), true),
                (NodeAction::Deleted, Some(1), true),
                (NodeAction::Set, Some(2), true),
                (NodeAction::Unreplicated, Some(2), false),
                (NodeAction::Promoted, Some(1), false),
            ]
        );
        let mut quiet = Node::new(Persistence::None, None);
        quiet.handle(0, set(1, 10));
        assert!(actions(&mut quiet).is_empty(), "off unless asked for");
    }

    #[test]
    fn a_power_loss_is_silent_while_down() {
        let mut n = Node::new(Persistence::AofAlways, None);
        n.crash(0, true);
        assert_eq!(n.status(), Status::Down { power_loss: true });
        assert_eq!(n.handle(1, set(1, 10)), None);
    }

    #[test]
    fn aof_always_keeps_the_lock_and_its_absolute_expiry_while_down() {
        let mut n = Node::new(Persistence::AofAlways, None);
        n.handle(0, set(1, 1_000));
        n.crash(100_000, true);
        n.restart(500_000);
        assert_eq!(n.handle(600_000, set(2, 1_000)), Some(Reply::Nil), "still held");
        n.crash(700_000, true);
        n.restart(1_200_000);
        assert_eq!(
            n.handle(1_200_000, set(2, 1_000)),
            Some(Reply::Ok),
            "the ttl ran out while the node was down"
        );
    }

    #[test]
    fn aof_everysec_loses_the_last_second_on_power_loss_only() {
        let mut kill = Node::new(Persistence::AofEverysec, None);
        let mut power = Node::new(Persistence::AofEverysec, None);
        for n in [&mut kill, &mut power] {
            n.handle(1_500_000, set(1, 10_000));
        }
        kill.crash(1_900_000, false);
        power.crash(1_900_000, true);
        kill.restart(2_000_000);
        power.restart(2_000_000);
        assert_eq!(
            kill.handle(2_000_000, set(2, 10_000)),
            Some(Reply::Nil),
            "a kill keeps it"
        );
        assert_eq!(
            power.handle(2_000_000, set(2, 10_000)),
            Some(Reply::Ok),
            "the write after the fsync at 1s is lost"
        );
    }

    #[test]
    fn a_failover_promotes_a_replica_that_missed_the_lag() {
        let repl = Some(Replication { lag_us: 1_000_000 });
        let mut n = Node::new(Persistence::None, repl);
        n.handle(0, set(1, 60_000));
        n.handle(
            5_000_000,
            Cmd::DelIfEq {
                key: K,
                token: Token(1),
            },
        );
        n.handle(5_000_000, set(2, 60_000));
        n.fail_master(5_500_000);
        assert_eq!(
            n.handle(5_600_000, set(3, 60_000)),
            None,
            "no master until promotion"
        );
        n.promote_replica(6_000_000);
        // The replica had token 1's key but neither the delete nor token 2's SET.
        assert_eq!(
            n.handle(
                6_000_000,
                Cmd::DelIfEq {
                    key: K,
                    token: Token(1)
                }
            ),
            Some(Reply::Int(1))
        );
        assert_eq!(
            n.handle(6_000_000, set(3, 60_000)),
            Some(Reply::Ok),
            "token 2 lost its lock"
        );
    }
}

mod record;
#[cfg(test)]
mod rw_tests;
mod sorted;
