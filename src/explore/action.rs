//! The explorer's transitions: run one tick, or start or end a fault at the boundary.
//!
//! Which faults are enabled follows the scope: a fault starts while its kind has budget
//! left, ends once it has lasted its least number of ticks, and the same target is not
//! hit twice at once (a crashed node is not paused, a paused node is not crashed).
//!
//! Faults at one boundary mostly commute (cutting link a then b gives the world cutting
//! b then a does), and exploring every order would multiply the states for nothing. A
//! partial-order reduction keeps one order: after fault `a`, fault `b` may follow at the
//! same boundary only if `b > a` in the [`Action`] order or `b` depends on `a` (shares a
//! node or a client with it, or either resumes a process, which runs it at once). Every
//! set of faults at a boundary still happens in some allowed order: the order that
//! always takes the least fault whose dependencies are done (if `b < a` followed `a`
//! there without depending on it, `b` would have been taken first).

use super::scope::Scope;
use super::world::World;

/// A transition. Faults carry their target: `u8` node and client indices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    Crash(u8),
    Failover(u8),
    Cut(u8, u8),
    PauseNode(u8),
    PauseClient(u8),
    Jump(u8),
    Restart(u8),
    Promote(u8),
    Heal(u8, u8),
    ResumeNode(u8),
    ResumeClient(u8),
    /// Run the world to the next boundary.
    Tick,
}

impl Action {
    /// The node a fault concerns (0 for client faults; see [`Action::client`]).
    pub fn node(self) -> usize {
        match self {
            Action::Crash(n)
            | Action::Failover(n)
            | Action::PauseNode(n)
            | Action::Jump(n)
            | Action::Restart(n)
            | Action::Promote(n)
            | Action::ResumeNode(n)
            | Action::Cut(_, n)
            | Action::Heal(_, n) => usize::from(n),
            Action::PauseClient(_) | Action::ResumeClient(_) | Action::Tick => 0,
        }
    }

    /// The client a fault concerns (0 for node faults).
    pub fn client(self) -> usize {
        match self {
            Action::Cut(c, _) | Action::Heal(c, _) | Action::PauseClient(c) | Action::ResumeClient(c) => {
                usize::from(c)
            }
            _ => 0,
        }
    }

    pub fn is_client_pause(self) -> bool {
        matches!(self, Action::PauseClient(_) | Action::ResumeClient(_))
    }

    fn nodes_touched(self) -> Option<usize> {
        match self {
            Action::PauseClient(_) | Action::ResumeClient(_) | Action::Tick => None,
            _ => Some(self.node()),
        }
    }

    fn clients_touched(self) -> Option<usize> {
        match self {
            Action::Cut(..) | Action::Heal(..) | Action::PauseClient(_) | Action::ResumeClient(_) => {
                Some(self.client())
            }
            _ => None,
        }
    }

    fn resumes(self) -> bool {
        matches!(self, Action::ResumeNode(_) | Action::ResumeClient(_))
    }

    /// Whether the order of `self` and `other` at one boundary can matter.
    pub fn depends_on(self, other: Action) -> bool {
        let shared = |a: Option<usize>, b: Option<usize>| a.is_some() && a == b;
        self.resumes()
            || other.resumes()
            || shared(self.nodes_touched(), other.nodes_touched())
            || shared(self.clients_touched(), other.clients_touched())
    }
}

/// Whether a fault that started at `since` may end now, `least` ticks being its least.
fn may_end(world: &World, since: u32, least: Option<u32>) -> bool {
    least.is_some_and(|l| world.tick >= since + l)
}

/// Every transition enabled in `world`, in [`Action`] order.
pub fn enabled(world: &World, scope: &Scope, out: &mut Vec<Action>) {
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

/// The world after `action`.
pub fn next(world: &World, scope: &Scope, action: Action) -> World {
    let mut w = world.clone();
    match action {
        Action::Tick => w.run_tick(scope),
        fault => w.apply(scope, fault, scope.power_loss),
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_on_different_targets_commute_and_resumes_depend_on_everything() {
        assert!(!Action::Cut(0, 3).depends_on(Action::Crash(2)));
        assert!(Action::Cut(0, 2).depends_on(Action::Crash(2)));
        assert!(Action::Cut(1, 0).depends_on(Action::PauseClient(1)));
        assert!(Action::Restart(2).depends_on(Action::Crash(2)));
        assert!(Action::ResumeClient(0).depends_on(Action::Jump(4)));
        assert!(
            Action::Crash(0) < Action::Restart(0),
            "a restart may follow its crash"
        );
    }
}
