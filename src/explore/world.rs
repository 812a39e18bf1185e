//! The explored world: the lock clients and the nodes, run event by event between tick
//! boundaries, with the adversary's faults applied at the boundaries.
//!
//! This is a third driver of the same sans-IO state machines: the clients run
//! [`Redlock`] from `algorithm/` and the nodes are the simulator's [`Node`]s, unchanged.
//! Between two boundaries the world runs as the simulator would with a fixed latency:
//! events in order of (time, scheduling order), a message lost if its link is cut when
//! it is sent or when it arrives, a paused process's events held back and replayed when
//! it resumes. Each client does what a simulator client with constant think and hold
//! times does: ask for lock `L0`, hold it (until its validity ends, if that comes
//! first), release, think, ask again (the reproduction scenario sets exactly that). So
//! the only choices are the adversary's, and every state is a value that can be
//! cloned, hashed and deduplicated.
//!
//! The world checks the lock's promises as it goes, the way the checker would judge
//! the history: when a client acquires while another client's hold (acquisition to
//! release, capped by its validity) is still running, that is a mutual exclusion
//! violation; with fencing, a token not above that of a hold that has ended is a
//! regression. A replay can record the history (`log`), which the checker then judges.

use super::action::Action;
use super::queue::{Commands, Queue};
use super::scope::{Budget, Least, Scope};
use crate::algorithm::{LockAlgorithm, Mode, NodeSet, Now, Output, Redlock, ReqId, TimerId};
use crate::client::{Record, RecordKind};
use crate::command::{Cmd, LockId, Reply, Token};
use crate::history::{Event, Meta, OpKind, Phase};
use crate::sim::clock::Clock;
use crate::sim::node::Node;
use smallvec::SmallVec;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

/// The only lock the explorer's clients take.
const LOCK: LockId = LockId(0);

/// The scope's bounds (`scope.rs`: at most 5 nodes and 3 clients), so that a world's
/// per-node, per-client and per-link state sits inline (nodes and clients as shared
/// pointers, [`Shared`]) and cloning a world allocates nothing. Past them a `SmallVec`
/// spills to the heap: slower, never wrong.
pub(super) const MAX_NODES: usize = 5;
pub(super) const MAX_CLIENTS: usize = 3;
const MAX_LINKS: usize = MAX_NODES * MAX_CLIENTS;

#[derive(Clone, Copy, Debug, Hash)]
pub(super) enum Ev {
    /// `cmd` names the world's command in flight (`World::commands`).
    ToNode {
        client: u8,
        node: u8,
        cmd: u32,
        req: ReqId,
    },
    ToClient {
        client: u8,
        node: u8,
        req: ReqId,
        reply: Reply,
    },
    Wake {
        client: u8,
    },
    Timer {
        client: u8,
        id: TimerId,
    },
}

/// A lock held, in true time.
#[derive(Clone, Copy, Debug, Hash)]
struct Hold {
    token: Token,
    start_us: u64,
    /// When the client's own clock says its validity ends.
    until_us: u64,
    fence: Option<u64>,
}

#[derive(Clone, Copy, Debug, Hash)]
enum Cycle {
    Thinking,
    Acquiring,
    Holding(Hold),
}

/// A lock client: the algorithm, its clock, and where it is in its cycle.
#[derive(Clone)]
pub(super) struct Peer {
    algo: Redlock,
    clock: Clock,
    phase: Cycle,
    /// Paused since this tick, by fault `id`.
    pub(super) paused: Option<Since>,
    /// Empty unless paused (an empty `Vec` clones without allocating).
    pub(super) deferred: Vec<Ev>,
}

/// What a client feeds the fingerprint: all but when its pause began, which the world
/// feeds in canonical form (the ticks it must still last).
impl Hash for Peer {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.algo.hash(h);
        self.clock.hash(h);
        self.phase.hash(h);
        self.deferred.hash(h);
    }
}

/// When a fault started (its tick) and its id in the history.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Since {
    pub tick: u32,
    pub id: u32,
}

/// What the explorer found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// `second` acquired at `at_us` while `first` still held the lock.
    MutualExclusion { first: usize, second: usize, at_us: u64 },
    /// `client` acquired at `at_us` with fencing token `token`, not above `floor`, the
    /// token of a hold that had ended.
    FenceRegression {
        client: usize,
        at_us: u64,
        token: u64,
        floor: u64,
    },
}

pub struct World {
    /// The boundary the world stands at; true time `tick * tick_us`.
    pub tick: u32,
    pub(super) now_us: u64,
    pub(super) nodes: SmallVec<[Shared<Node>; MAX_NODES]>,
    pub(super) peers: SmallVec<[Shared<Peer>; MAX_CLIENTS]>,
    /// Events in flight.
    queue: Queue<Ev>,
    /// The commands of the messages to the nodes in flight or held back.
    commands: Commands<Cmd>,
    /// Per link (`client * nodes + node`): cut (both ways) since. The fault state is in
    /// arrays of the scope's bounds (`scope.rs` refuses more); past the scope's own
    /// nodes and links they stay `None`.
    pub cut: [Option<Since>; MAX_LINKS],
    pub node_paused: [Option<Since>; MAX_NODES],
    pub(super) node_deferred: [Vec<Ev>; MAX_NODES],
    pub crashed: [Option<Since>; MAX_NODES],
    pub failed: [Option<Since>; MAX_NODES],
    /// Faults the adversary may still start.
    pub left: Budget,
    pub(super) next_fault: u32,
    /// The last fault applied at this boundary, for the partial-order reduction.
    pub last: Option<Action>,
    /// The largest fencing token of a hold that has ended.
    fence_floor: Option<u64>,
    pub found: Option<Found>,
    /// The history, when replaying (left out of the fingerprint).
    pub(super) log: Option<Vec<Event>>,
}

/// Field by field, the plain parts copied in one piece each (a derived clone copies a
/// `SmallVec` entry by entry).
impl Clone for World {
    fn clone(&self) -> Self {
        World {
            tick: self.tick,
            now_us: self.now_us,
            nodes: self.nodes.clone(),
            peers: self.peers.clone(),
            queue: self.queue.clone(),
            commands: self.commands.clone(),
            cut: self.cut,
            node_paused: self.node_paused,
            node_deferred: self.node_deferred.clone(),
            crashed: self.crashed,
            failed: self.failed,
            left: self.left,
            next_fault: self.next_fault,
            last: self.last,
            fence_floor: self.fence_floor,
            found: self.found,
            log: self.log.clone(),
        }
    }

    /// In place, field by field: the search makes most worlds in the box of one it
    /// dropped, and a clone assigned whole was built aside and copied in.
    /// The source is taken apart whole, so a field added to `World` and not copied
    /// here does not compile.
    fn clone_from(&mut self, w: &Self) {
        let World {
            tick,
            now_us,
            nodes,
            peers,
            queue,
            commands,
            cut,
            node_paused,
            node_deferred,
            crashed,
            failed,
            left,
            next_fault,
            last,
            fence_floor,
            found,
            log,
        } = w;
        self.tick = *tick;
        self.now_us = *now_us;
        self.nodes.clone_from(nodes);
        self.peers.clone_from(peers);
        self.queue.clone_from(queue);
        self.commands.clone_from(commands);
        self.cut = *cut;
        self.node_paused = *node_paused;
        self.node_deferred.clone_from(node_deferred);
        self.crashed = *crashed;
        self.failed = *failed;
        self.left = *left;
        self.next_fault = *next_fault;
        self.last = *last;
        self.fence_floor = *fence_floor;
        self.found = *found;
        self.log.clone_from(log);
    }
}

/// Feeds a world to a hasher in canonical form: only what can change its future. A
/// fault's id and its start tick are history, not state: the id only names the fault's
/// end in a replayed history (the replay numbers its faults itself), and the start tick
/// matters only through the ticks left before the fault may end, and not at all for a
/// fault of a kind that never ends within the scope. So two worlds that reach the same
/// nodes, clients, messages and faults by different orders are one state. A node or a
/// client is fed as the digest it keeps ([`Shared`]).
struct Canonical<'a> {
    world: &'a World,
    least: &'a Least,
}

impl Canonical<'_> {
    /// What a fault that started at `since` still means for the future, as one number:
    /// 0 inactive, 1 active for good (its kind never ends within the scope), 2 + the
    /// ticks it must still last before it may end. Counted in u64: a least duration
    /// may be `u32::MAX` ticks (scope.rs saturates there), and 2 + that must not wrap.
    fn since<H: Hasher>(&self, since: &Option<Since>, least: Option<u32>, h: &mut H) {
        small(
            h,
            match (since, least) {
                (None, _) => 0,
                (Some(_), None) => 1,
                (Some(s), Some(l)) => {
                    let until = u64::from(s.tick) + u64::from(l);
                    2 + until.saturating_sub(u64::from(self.world.tick))
                }
            },
        );
    }

    /// An event, with the command of a message to a node itself, not its index.
    fn event<H: Hasher>(&self, ev: &Ev, h: &mut H) {
        match *ev {
            Ev::ToNode {
                client,
                node,
                cmd,
                req,
            } => {
                h.write_isize(-1);
                (client, node, req, self.world.commands.get(cmd)).hash(h);
            }
            _ => ev.hash(h),
        }
    }
}

impl Hash for Canonical<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        let (w, least) = (self.world, self.least);
        w.tick.hash(h);
        for node in &w.nodes {
            h.write_u128(node.digest());
        }
        for p in &w.peers {
            h.write_u128(p.digest());
            self.since(&p.paused, least.resume, h);
        }
        // As the slice of events in order it was.
        h.write_usize(w.queue.len());
        for (t, ev) in w.queue.in_order() {
            t.hash(h);
            self.event(&ev, h);
        }
        let (links, nodes) = (w.peers.len() * w.nodes.len(), w.nodes.len());
        for cut in &w.cut[..links] {
            self.since(cut, least.heal, h);
        }
        for paused in &w.node_paused[..nodes] {
            self.since(paused, least.resume, h);
        }
        for deferred in &w.node_deferred[..nodes] {
            small(h, deferred.len() as u64);
            for ev in deferred {
                self.event(ev, h);
            }
        }
        for crashed in &w.crashed[..nodes] {
            self.since(crashed, least.restart, h);
        }
        for failed in &w.failed[..nodes] {
            self.since(failed, least.promote, h);
        }
        // `next_fault` follows from the budget left, and names faults only in a replay.
        w.left.hash(h);
        w.last.hash(h);
        w.fence_floor.hash(h);
    }
}

/// A number that is nearly always small, in one byte if below 255, else 255 and its
/// eight bytes (prefix-free, so the canonical form still tells fields apart). A world
/// feeds a few dozen of them (its faults' states); in eight bytes each they made the
/// canonical form too long for XXH3's short path.
fn small<H: Hasher>(h: &mut H, v: u64) {
    match u8::try_from(v) {
        Ok(b) if b < u8::MAX => h.write_u8(b),
        _ => {
            h.write_u8(u8::MAX);
            h.write_u64(v);
        }
    }
}

/// Collects what [`Hash`] feeds it as bytes, so the canonical form is hashed in one
/// call of XXH3 over one buffer instead of a streaming update per field (a world feeds
/// a few hundred small fields; the streaming state's bookkeeping per field cost more
/// than the hash itself).
struct Bytes<'a>(&'a mut Vec<u8>);

impl Hasher for Bytes<'_> {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    fn finish(&self) -> u64 {
        unreachable!("only collects bytes for the fingerprint")
    }
}

type Buffer = std::cell::RefCell<Vec<u8>>;

thread_local! {
    /// The canonical form's bytes, kept between fingerprints for its capacity.
    static CANONICAL: Buffer = const { std::cell::RefCell::new(Vec::new()) };
    /// A shared part's bytes, for its digest: apart, since a world's fingerprint may
    /// digest a part that was not sealed while it fills `CANONICAL`.
    static PART_BYTES: Buffer = const { std::cell::RefCell::new(Vec::new()) };
}

/// XXH3-128 of what `value` feeds a hasher, collected in `buffer`.
fn xxh3_of(buffer: &'static std::thread::LocalKey<Buffer>, value: &impl Hash) -> u128 {
    buffer.with_borrow_mut(|buf| {
        buf.clear();
        value.hash(&mut Bytes(buf));
        xxhash_rust::xxh3::xxh3_128(buf)
    })
}

thread_local! {
    /// What an algorithm asks for in one step, kept between steps for its capacity.
    static OUTPUTS: std::cell::RefCell<Vec<Output>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `f` with this thread's empty output buffer. Steps never nest (a resumed
/// process's held-back events are stepped one after another), so one buffer serves.
fn with_outputs<R>(f: impl FnOnce(&mut Vec<Output>) -> R) -> R {
    OUTPUTS.with_borrow_mut(|out| {
        out.clear();
        let r = f(out);
        out.clear();
        r
    })
}

/// A node or a client of a world, shared with the worlds it came from until a step
/// changes it (`Arc::make_mut`): a fault at a boundary touches one node or none and
/// no client, and a node or a client is hundreds of bytes to copy. It keeps the
/// digest of what it feeds the fingerprint (XXH3-128 of its [`Hash`] bytes), so that
/// its bytes are read once per change, not once per world. The digest sits behind the
/// pointer with the value, so that a world holds one pointer per part and copies
/// that much less.
pub(super) struct Shared<T>(Arc<Sealed<T>>);

impl<T> Clone for Shared<T> {
    fn clone(&self) -> Self {
        Shared(Arc::clone(&self.0))
    }

    /// A world made in the box of a sibling mostly holds the same parts already: those
    /// are left alone, without touching their counts.
    fn clone_from(&mut self, from: &Self) {
        if !Arc::ptr_eq(&self.0, &from.0) {
            self.0 = Arc::clone(&from.0);
        }
    }
}

#[derive(Clone)]
struct Sealed<T> {
    value: T,
    /// `None` once changed, until [`Shared::seal`].
    digest: Option<u128>,
}

impl<T: Clone + Hash> Shared<T> {
    fn new(value: T) -> Self {
        let mut s = Shared(Arc::new(Sealed { value, digest: None }));
        s.seal();
        s
    }

    /// The value, to change: copied first if another world shares it.
    fn get_mut(&mut self) -> &mut T {
        let sealed = Arc::make_mut(&mut self.0);
        sealed.digest = None;
        &mut sealed.value
    }

    /// Digests the value if it changed. A changed value is this world's alone (it was
    /// copied to be changed), so this copies nothing.
    fn seal(&mut self) {
        if self.0.digest.is_none() {
            let digest = self.digest();
            Arc::make_mut(&mut self.0).digest = Some(digest);
        }
    }

    fn digest(&self) -> u128 {
        self.0
            .digest
            .unwrap_or_else(|| xxh3_of(&PART_BYTES, &self.0.value))
    }
}

impl<T> std::ops::Deref for Shared<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0.value
    }
}

/// A 128-bit fingerprint of the world's canonical form, in one pass of XXH3, so that
/// telling states apart does not rest on 64 bits.
pub fn fingerprint(w: &World, scope: &Scope) -> u128 {
    let canonical = Canonical {
        world: w,
        least: &scope.least,
    };
    xxh3_of(&CANONICAL, &canonical)
}

impl World {
    /// The world at time 0: every client about to think, every node up and empty.
    pub fn new(scope: &Scope, record: bool) -> World {
        let mut w = World {
            tick: 0,
            now_us: 0,
            nodes: scope
                .persistence
                .iter()
                .map(|&p| Shared::new(Node::new(p, scope.replication)))
                .collect(),
            peers: (0..scope.clients)
                .map(|i| {
                    Shared::new(Peer {
                        algo: crate::algorithm::redlock(
                            &scope.algorithm,
                            scope.nodes,
                            crate::rng::split(scope.seed, "algorithm", i as u64),
                        ),
                        clock: Clock::default(),
                        phase: Cycle::Thinking,
                        paused: None,
                        deferred: Vec::new(),
                    })
                })
                .collect(),
            queue: Queue::new(),
            commands: Commands::new(),
            cut: [None; MAX_LINKS],
            node_paused: [None; MAX_NODES],
            node_deferred: Default::default(),
            crashed: [None; MAX_NODES],
            failed: [None; MAX_NODES],
            left: scope.budget,
            next_fault: 0,
            last: None,
            fence_floor: None,
            found: None,
            log: record.then(Vec::new),
        };
        if let Some(log) = &mut w.log {
            log.push(Event::Meta(Meta {
                t_us: 0,
                scenario: format!("{}-explored", scope.name),
                seed: scope.seed,
                algorithm: serde_json::to_value(scope.algorithm.kind)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default(),
                nodes: scope.nodes,
                clients: scope.clients,
                ttl_ms: scope.algorithm.ttl_ms,
                liveness_bound_us: scope.algorithm.liveness_bound_us(scope.nodes),
                writer_wait_bound_us: None,
                worker: None,
                probe_client: None,
                cut: None,
                deployment: None,
                mitigations: None,
            }));
        }
        // As a simulator client starts: think first.
        for c in 0..scope.clients {
            let at = w.peers[c].clock.true_at_mono(scope.think_us);
            w.push(at, Ev::Wake { client: c as u8 });
        }
        w.seal();
        w
    }

    pub fn now_us(&self) -> u64 {
        self.now_us
    }

    pub fn take_log(&mut self) -> Vec<Event> {
        self.log.take().unwrap_or_default()
    }

    pub fn link(&self, scope: &Scope, client: usize, node: usize) -> usize {
        client * scope.nodes + node
    }

    pub fn client_paused(&self, c: usize) -> Option<Since> {
        self.peers[c].paused
    }

    /// Schedules `ev` at `at`, after whatever is already scheduled at or before `at`.
    #[inline(always)]
    fn push(&mut self, at: u64, ev: Ev) {
        match ev {
            Ev::ToNode { .. } | Ev::ToClient { .. } => self.queue.push_message(at, ev),
            Ev::Wake { .. } | Ev::Timer { .. } => self.queue.push_timer(at, ev),
        }
    }

    fn now(&self, c: usize, t: u64) -> Now {
        let clock = &self.peers[c].clock;
        Now {
            mono_us: clock.mono(t),
            wall_us: clock.wall(t),
        }
    }

    /// Runs the world to the next boundary.
    pub fn run_tick(&mut self, scope: &Scope) {
        let end = (u64::from(self.tick) + 1) * scope.tick_us;
        with_outputs(|out| {
            while self.found.is_none() {
                let Some((t, ev)) = self.queue.pop_before(end) else {
                    break;
                };
                self.step_in(scope, t, ev, out);
            }
        });
        self.now_us = end;
        self.tick += 1;
        self.last = None;
    }

    fn is_cut(&self, scope: &Scope, client: u8, node: u8) -> bool {
        self.cut[self.link(scope, client.into(), node.into())].is_some()
    }

    pub(super) fn step(&mut self, scope: &Scope, t: u64, ev: Ev) {
        with_outputs(|out| self.step_in(scope, t, ev, out));
    }

    /// [`World::step`] with this thread's output buffer, `out`, taken once per tick
    /// rather than once per event.
    fn step_in(&mut self, scope: &Scope, t: u64, ev: Ev, out: &mut Vec<Output>) {
        out.clear();
        match ev {
            Ev::ToNode {
                client,
                node,
                req,
                cmd,
            } => {
                if self.is_cut(scope, client, node) {
                    self.commands.take(cmd);
                    return;
                }
                let n = usize::from(node);
                if self.node_paused[n].is_some() {
                    self.node_deferred[n].push(ev);
                    return;
                }
                let cmd = self.commands.take(cmd);
                let Some(reply) = self.node_mut(n).handle(t, cmd) else {
                    return;
                };
                if !self.is_cut(scope, client, node) {
                    self.push(
                        t + scope.latency_us,
                        Ev::ToClient {
                            client,
                            node,
                            req,
                            reply,
                        },
                    );
                }
            }
            Ev::ToClient { client, node, .. } if self.is_cut(scope, client, node) => {}
            Ev::ToClient { client, .. } | Ev::Wake { client } | Ev::Timer { client, .. }
                if self.peers[usize::from(client)].paused.is_some() =>
            {
                self.peer_mut(usize::from(client)).deferred.push(ev);
            }
            Ev::ToClient {
                client, req, reply, ..
            } => {
                let c = usize::from(client);
                let now = self.now(c, t);
                self.peer_mut(c).algo.on_reply(now, req, reply, out);
                self.outputs(scope, t, c, out);
            }
            Ev::Timer { client, id } => {
                let c = usize::from(client);
                let now = self.now(c, t);
                self.peer_mut(c).algo.on_timer(now, id, out);
                self.outputs(scope, t, c, out);
            }
            Ev::Wake { client } => self.wake(scope, t, usize::from(client), out),
        }
    }

    fn record(&mut self, t: u64, c: usize, r: Record) {
        let clock = &self.peers[c].clock;
        if let Some(log) = &mut self.log {
            let until = r.valid_until_mono_us.map(|m| clock.true_at_mono(m));
            // Only a replay keeps a log: naming each lock afresh costs nothing there.
            log.push(r.to_event(&mut Default::default(), t, c, until));
        }
    }

    fn op(kind: RecordKind, op: OpKind, token: Option<Token>) -> Record {
        Record {
            kind,
            op,
            lock: LOCK,
            mode: Mode::Exclusive,
            phase: Phase::Workload,
            token,
            valid_until_mono_us: None,
            nodes: None,
            attempts: None,
            fence: None,
        }
    }

    /// A client's wake-up: ask for the lock after thinking, release when the validity
    /// of its hold is over.
    fn wake(&mut self, scope: &Scope, t: u64, c: usize, out: &mut Vec<Output>) {
        let now = self.now(c, t);
        match self.peers[c].phase {
            Cycle::Thinking => {
                self.record(t, c, Self::op(RecordKind::Invoke, OpKind::Acquire, None));
                let peer = self.peer_mut(c);
                peer.phase = Cycle::Acquiring;
                peer.algo.acquire(now, LOCK, Mode::Exclusive, out);
            }
            Cycle::Holding(hold) => {
                self.record(t, c, Self::op(RecordKind::Invoke, OpKind::Release, None));
                let end = hold.until_us.min(t);
                if hold.fence.is_some() && hold.start_us < end {
                    self.fence_floor = self.fence_floor.max(hold.fence);
                }
                self.peer_mut(c).algo.release(now, out);
            }
            Cycle::Acquiring => {}
        }
        self.outputs(scope, t, c, out);
    }

    /// Think, then ask again.
    fn think(&mut self, scope: &Scope, t: u64, c: usize) {
        self.peer_mut(c).phase = Cycle::Thinking;
        let clock = &self.peers[c].clock;
        let at = clock.true_at_mono(clock.mono(t) + scope.think_us).max(t);
        self.push(at, Ev::Wake { client: c as u8 });
    }

    /// Carries out what client `c`'s algorithm asked for, as a simulator client would.
    fn outputs(&mut self, scope: &Scope, t: u64, c: usize, out: &[Output]) {
        for &o in out {
            match o {
                Output::Send { node, req, cmd } => {
                    let (client, node) = (c as u8, node as u8);
                    if !self.is_cut(scope, client, node) {
                        let cmd = self.commands.add(cmd);
                        self.push(
                            t + scope.latency_us,
                            Ev::ToNode {
                                client,
                                node,
                                cmd,
                                req,
                            },
                        );
                    }
                }
                Output::Timer { id, at_mono_us } => {
                    let at = self.peers[c].clock.true_at_mono(at_mono_us).max(t);
                    self.push(at, Ev::Timer { client: c as u8, id });
                }
                Output::Acquired {
                    token,
                    valid_until_mono_us,
                    nodes,
                    attempts,
                    fence,
                } => self.acquired(scope, t, c, token, valid_until_mono_us, nodes, attempts, fence),
                Output::NotAcquired {
                    token,
                    unknown,
                    attempts,
                } => {
                    if !matches!(self.peers[c].phase, Cycle::Acquiring) {
                        continue;
                    }
                    let kind = if unknown {
                        RecordKind::Info
                    } else {
                        RecordKind::Fail
                    };
                    let mut r = Self::op(kind, OpKind::Acquire, Some(token));
                    r.attempts = Some(attempts);
                    self.record(t, c, r);
                    self.think(scope, t, c);
                }
                Output::Released { token } => {
                    self.record(t, c, Self::op(RecordKind::Ok, OpKind::Release, Some(token)));
                    self.think(scope, t, c);
                }
                // Clients never extend in the explorer (the scope sets no extensions).
                Output::Extended { .. } | Output::NotExtended { .. } => {}
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn acquired(
        &mut self,
        scope: &Scope,
        t: u64,
        c: usize,
        token: Token,
        valid_until_mono_us: u64,
        nodes: NodeSet,
        attempts: u32,
        fence: Option<u64>,
    ) {
        if !matches!(self.peers[c].phase, Cycle::Acquiring) {
            return;
        }
        let mut r = Self::op(RecordKind::Ok, OpKind::Acquire, Some(token));
        r.valid_until_mono_us = Some(valid_until_mono_us);
        r.nodes = Some(nodes);
        r.attempts = Some(attempts);
        r.fence = fence;
        self.record(t, c, r);
        let until_us = self.peers[c].clock.true_at_mono(valid_until_mono_us);
        let hold = Hold {
            token,
            start_us: t,
            until_us,
            fence,
        };
        self.judge(c, &hold);
        self.peer_mut(c).phase = Cycle::Holding(hold);
        // Release when the work is done, or when the validity ends if that is sooner.
        let clock = &self.peers[c].clock;
        let work_end = clock.mono(t) + scope.hold_us;
        let at = clock.true_at_mono(work_end.min(valid_until_mono_us)).max(t);
        self.push(at, Ev::Wake { client: c as u8 });
    }

    /// The lock's promises, checked at each acquisition.
    fn judge(&mut self, c: usize, hold: &Hold) {
        let t = hold.start_us;
        if hold.until_us <= t {
            return;
        }
        let mut floor = self.fence_floor;
        for (d, p) in self.peers.iter().enumerate() {
            let Cycle::Holding(other) = p.phase else { continue };
            if d == c {
                continue;
            }
            if other.until_us > t {
                self.found.get_or_insert(Found::MutualExclusion {
                    first: d,
                    second: c,
                    at_us: t,
                });
            } else if other.fence.is_some() {
                floor = floor.max(other.fence);
            }
        }
        if let (Some(token), Some(floor)) = (hold.fence, floor) {
            if token <= floor {
                self.found.get_or_insert(Found::FenceRegression {
                    client: c,
                    at_us: t,
                    token,
                    floor,
                });
            }
        }
    }

    /// Client `c`, to change: copied first if another world shares it.
    pub(super) fn peer_mut(&mut self, c: usize) -> &mut Peer {
        self.peers[c].get_mut()
    }

    /// Node `n`, to change: copied first if another world shares it.
    pub(super) fn node_mut(&mut self, n: usize) -> &mut Node {
        self.nodes[n].get_mut()
    }

    /// Digests the nodes and clients changed since the last call, for the
    /// fingerprints to come (which digest a part themselves where this was not called).
    pub(super) fn seal(&mut self) {
        self.nodes.iter_mut().for_each(Shared::seal);
        self.peers.iter_mut().for_each(Shared::seal);
    }

    pub fn node_up(&self, n: usize) -> bool {
        self.crashed[n].is_none() && self.failed[n].is_none()
    }
}
