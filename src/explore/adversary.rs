//! The adversary's moves: a fault starting or ending at a tick boundary, applied to the
//! explored [`World`] as the simulator applies the same fault (`sim/faults.rs`), and
//! recorded as a `fault` event when a replay keeps the history. Each fault starts with
//! the next id; its end names the same id. The adversary never hits a target twice at
//! once, so every fault here is the only one of its kind on its target.
//!
//! Which moves are enabled follows the scope: a fault starts while its kind has budget
//! left, ends once it has lasted its least number of ticks, and the same target is not
//! hit twice at once (a crashed node is not paused, a paused node is not crashed); the
//! partial-order reduction of `action.rs` prunes orders of faults at one boundary.

use super::action::Action;
use super::scope::Scope;
use super::world::{Since, World};
use crate::fault::{CutDirection, Fault, Origin};
use crate::history::{Event, FaultAction, FaultEvent};

impl World {
    /// Records a fault event when replaying. The fault is made only then: a cut names
    /// its link in two vectors, and the search makes thousands of cuts it never logs.
    fn fault_event(&mut self, id: u32, action: FaultAction, fault: impl FnOnce() -> Fault) {
        if let Some(log) = &mut self.log {
            log.push(Event::Fault(FaultEvent {
                t_us: self.now_us,
                id: id as usize,
                action,
                origin: Origin::Script,
                fault: fault(),
            }));
        }
    }

    fn start(&mut self, fault: impl FnOnce() -> Fault) -> Since {
        let since = Since {
            tick: self.tick,
            id: self.next_fault,
        };
        self.next_fault += 1;
        self.fault_event(since.id, FaultAction::Start, fault);
        since
    }

    fn end(&mut self, since: Option<Since>, fault: impl FnOnce() -> Fault) {
        let id = since.expect("only started faults end").id;
        self.fault_event(id, FaultAction::End, fault);
    }

    /// Applies a fault at the current boundary.
    pub fn apply(&mut self, scope: &Scope, action: Action, power_loss: bool) {
        let t = self.now_us;
        let (node, client) = (action.node(), action.client());
        let cut = |n: usize, c: usize| Fault::Partition {
            nodes: vec![n],
            clients: vec![c],
            direction: CutDirection::Both,
        };
        let pause = || Fault::Pause {
            node: (!action.is_client_pause()).then_some(node),
            client: action.is_client_pause().then_some(client),
            point: None,
        };
        match action {
            Action::Tick => unreachable!("a tick is run, not applied"),
            Action::Crash(_) => {
                self.left.crashes -= 1;
                self.node_mut(node).crash(t, power_loss);
                self.crashed[node] = Some(self.start(|| Fault::Crash { node, power_loss }));
            }
            Action::Restart(_) => {
                self.node_mut(node).restart(t);
                let since = self.crashed[node].take();
                self.end(since, || Fault::Crash { node, power_loss });
            }
            Action::Failover(_) => {
                self.left.failovers -= 1;
                self.node_mut(node).fail_master(t);
                self.failed[node] = Some(self.start(|| Fault::Failover { node }));
            }
            Action::Promote(_) => {
                self.node_mut(node).promote_replica(t);
                let since = self.failed[node].take();
                self.end(since, || Fault::Failover { node });
            }
            Action::Cut(..) => {
                self.left.partitions -= 1;
                let l = self.link(scope, client, node);
                self.cut[l] = Some(self.start(|| cut(node, client)));
            }
            Action::Heal(..) => {
                let l = self.link(scope, client, node);
                let since = self.cut[l].take();
                self.end(since, || cut(node, client));
            }
            Action::Jump(_) => {
                self.left.clock_jumps -= 1;
                self.node_mut(node).clock.jump(scope.jump_by_us);
                let fault = || Fault::ClockJump {
                    node: Some(node),
                    client: None,
                    by_us: scope.jump_by_us,
                };
                let since = self.start(fault);
                self.end(Some(since), fault);
            }
            Action::PauseNode(_) => {
                self.left.pauses -= 1;
                self.node_paused[node] = Some(self.start(pause));
            }
            Action::PauseClient(_) => {
                self.left.pauses -= 1;
                let since = self.start(pause);
                self.peer_mut(client).paused = Some(since);
            }
            Action::ResumeNode(_) => {
                let since = self.node_paused[node].take();
                self.end(since, pause);
                for ev in std::mem::take(&mut self.node_deferred[node]) {
                    self.step(scope, t, ev);
                }
            }
            Action::ResumeClient(_) => {
                let since = self.peer_mut(client).paused.take();
                self.end(since, pause);
                for ev in std::mem::take(&mut self.peer_mut(client).deferred) {
                    self.step(scope, t, ev);
                }
            }
        }
        self.last = Some(action);
    }
}

/// Whether a fault that started at `since` may end now, `least` ticks being its least.
fn may_end(world: &World, since: u32, least: Option<u32>) -> bool {
    least.is_some_and(|l| world.tick >= since + l)
}

/// The transitions enabled in a world: a few dozen at most within the scope's bounds,
/// so they sit inline, not in an allocation per world expanded.
pub type Actions = smallvec::SmallVec<[Action; 32]>;

/// Every transition enabled in `world`, in [`Action`] order.
pub fn enabled(world: &World, scope: &Scope, out: &mut Actions) {
    out.clear();
    if world.found.is_some() || world.tick >= scope.ticks {
        return;
    }
    let left = &world.left;
    let least = &scope.least;
    let mut push = |a: Action| {
        // The partial-order reduction: one order per set of faults at a boundary.
        if !scope.reduce || world.last.is_none_or(|last| a > last || a.depends_on(last)) {
            out.push(a);
        }
    };
    for n in 0..scope.nodes {
        let id = n as u8;
        let up = world.node_up(n);
        let paused = world.node_paused[n].is_some();
        if left.crashes > 0 && up && !paused {
            push(Action::Crash(id));
        }
        if left.failovers > 0 && up && !paused && scope.replication.is_some() {
            push(Action::Failover(id));
        }
    }
    for c in 0..scope.clients {
        for n in 0..scope.nodes {
            if left.partitions > 0 && world.cut[world.link(scope, c, n)].is_none() {
                push(Action::Cut(c as u8, n as u8));
            }
        }
    }
    for n in 0..scope.nodes {
        if left.pauses > 0 && world.node_up(n) && world.node_paused[n].is_none() {
            push(Action::PauseNode(n as u8));
        }
    }
    for c in 0..scope.clients {
        if left.pauses > 0 && world.client_paused(c).is_none() {
            push(Action::PauseClient(c as u8));
        }
    }
    for n in 0..scope.nodes {
        if left.clock_jumps > 0 {
            push(Action::Jump(n as u8));
        }
    }
    for n in 0..scope.nodes {
        if let Some(s) = world.crashed[n] {
            if may_end(world, s.tick, least.restart) {
                push(Action::Restart(n as u8));
            }
        }
        if let Some(s) = world.failed[n] {
            if may_end(world, s.tick, least.promote) {
                push(Action::Promote(n as u8));
            }
        }
    }
    for c in 0..scope.clients {
        for n in 0..scope.nodes {
            if let Some(s) = world.cut[world.link(scope, c, n)] {
                if may_end(world, s.tick, least.heal) {
                    push(Action::Heal(c as u8, n as u8));
                }
            }
        }
    }
    for n in 0..scope.nodes {
        if let Some(s) = world.node_paused[n] {
            if may_end(world, s.tick, least.resume) {
                push(Action::ResumeNode(n as u8));
            }
        }
    }
    for c in 0..scope.clients {
        if let Some(s) = world.client_paused(c) {
            if may_end(world, s.tick, least.resume) {
                push(Action::ResumeClient(c as u8));
            }
        }
    }
    out.push(Action::Tick);
}

/// [`next_in`] in a new box.
#[cfg(test)]
pub fn next(world: &World, scope: &Scope, action: Action) -> Box<World> {
    next_in(world, scope, action, None)
}

/// The world after `action`, on the heap: the search keeps the worlds it has not seen
/// boxed, and a world is kilobytes, so it is made in its box, not copied into one. The
/// box is `spare` when given: that of a successor the search dropped (most lead to a
/// world already seen), so that such a successor allocates nothing.
pub fn next_in(world: &World, scope: &Scope, action: Action, spare: Option<Box<World>>) -> Box<World> {
    let mut w = match spare {
        Some(mut w) => {
            World::clone_from(&mut w, world);
            w
        }
        None => Box::new(world.clone()),
    };
    take(&mut w, scope, action);
    w
}

/// Takes `action` in `world` itself: for a world's last successor, when the world is
/// not needed after it (no copy, and the nodes and clients it alone holds are changed
/// in place).
pub fn take(world: &mut World, scope: &Scope, action: Action) {
    match action {
        Action::Tick => world.run_tick(scope),
        fault => world.apply(scope, fault, scope.power_loss),
    }
    world.seal();
}
