//! From a path of the search to evidence: the history of the counterexample, and a
//! scenario that reproduces it on the simulator.
//!
//! Replaying the path with the history recorded gives what the explorer's world did,
//! which the checker judges and the narrative tells, like any run. The reproduction is
//! a scenario whose clients behave as the explorer's do (constant think and hold
//! times, one lock, no resource writes), with the same seed (so the same
//! tokens and retry delays), a fixed latency, and the path's faults as scripted faults.
//! The faults at one boundary become faults a microsecond apart just before it, in the
//! path's order, so the simulator applies them in that order and before anything else
//! that happens at the boundary, as the explorer did.

use super::action::Action;
use super::scope::Scope;
use super::world::World;
use crate::fault::{CutDirection, Fault, Nemesis, Origin, PlannedFault};
use crate::history::Event;
use crate::rng::Dist;
use crate::scenario::{Backend, Clients, Expect, Network, Scenario, Targets};

/// The history of `path` from the start, as the explorer's world lived it.
pub fn history(scope: &Scope, path: &[Action]) -> Vec<Event> {
    let mut w = World::new(scope, true);
    for &a in path {
        match a {
            Action::Tick => w.run_tick(scope),
            fault => w.apply(scope, fault, scope.power_loss),
        }
    }
    w.take_log()
}

/// Each action of `path` with its tick (the boundary it happened at).
fn ticks(path: &[Action]) -> Vec<(u32, Action)> {
    let mut tick = 0;
    path.iter()
        .map(|&a| {
            let at = tick;
            if a == Action::Tick {
                tick += 1;
            }
            (at, a)
        })
        .collect()
}

/// The simulator times of the faults of `path`: boundary `k`'s `m` faults at
/// `k·tick − m + j` µs (j = 0..m), or at `j` µs at the start.
fn fault_times(scope: &Scope, path: &[Action]) -> Vec<(u64, Action)> {
    let timed = ticks(path);
    let mut out = Vec::new();
    let mut i = 0;
    while i < timed.len() {
        let k = timed[i].0;
        let group: Vec<Action> = timed[i..]
            .iter()
            .take_while(|(t, a)| *t == k && *a != Action::Tick)
            .map(|&(_, a)| a)
            .collect();
        let m = group.len() as u64;
        let base = u64::from(k) * scope.tick_us;
        for (j, a) in group.into_iter().enumerate() {
            let at = if k == 0 { j as u64 } else { base - m + j as u64 };
            out.push((at, a));
        }
        i += m as usize + 1;
    }
    out
}

/// The fault an action starts, if it starts one.
fn started(scope: &Scope, a: Action) -> Option<Fault> {
    let (node, client) = (a.node(), a.client());
    Some(match a {
        Action::Crash(_) => Fault::Crash {
            node,
            power_loss: scope.power_loss,
        },
        Action::Failover(_) => Fault::Failover { node },
        Action::Cut(..) => Fault::Partition {
            nodes: vec![node],
            clients: vec![client],
            direction: CutDirection::Both,
        },
        Action::PauseNode(_) => Fault::Pause {
            node: Some(node),
            client: None,
            point: None,
        },
        Action::PauseClient(_) => Fault::Pause {
            node: None,
            client: Some(client),
            point: None,
        },
        Action::Jump(_) => Fault::ClockJump {
            node: Some(node),
            client: None,
            by_us: scope.jump_by_us,
        },
        _ => return None,
    })
}

/// The action that ends what `a` started.
fn ender(a: Action) -> Option<Action> {
    match a {
        Action::Crash(n) => Some(Action::Restart(n)),
        Action::Failover(n) => Some(Action::Promote(n)),
        Action::Cut(c, n) => Some(Action::Heal(c, n)),
        Action::PauseNode(n) => Some(Action::ResumeNode(n)),
        Action::PauseClient(c) => Some(Action::ResumeClient(c)),
        _ => None,
    }
}

/// A scenario that replays `path` on the simulator, named `<name>-explored`. The
/// expectations are the explorer's finding; `comment` is not part of it (see
/// [`Scenario::to_toml`]).
pub fn reproduction(scope: &Scope, path: &[Action], resource: bool) -> Scenario {
    let ticks_run = path.iter().filter(|&&a| a == Action::Tick).count() as u64;
    let duration_us = ticks_run.max(1) * scope.tick_us;
    let timed = fault_times(scope, path);
    let mut faults = Vec::new();
    for (i, &(at_us, a)) in timed.iter().enumerate() {
        let Some(fault) = started(scope, a) else {
            continue;
        };
        let end = ender(a).and_then(|e| timed[i + 1..].iter().find(|&&(_, b)| b == e));
        let duration_us = match (a, end) {
            (Action::Jump(_), _) => Some(0),
            (_, Some(&(end, _))) => Some(end - at_us),
            // A pause needs a length and a failover without one promotes at once: both
            // last to the end of the run instead.
            (Action::PauseNode(_) | Action::PauseClient(_) | Action::Failover(_), None) => {
                Some(duration_us - at_us)
            }
            (_, None) => None,
        };
        faults.push(PlannedFault {
            id: faults.len(),
            at_us,
            duration_us,
            origin: Origin::Script,
            fault,
            aim: None,
            firing: None,
        });
    }
    Scenario {
        name: format!("{}-explored", scope.name),
        path: None,
        seed: scope.seed,
        duration_us,
        expect: if resource { Expect::Safe } else { Expect::Unsafe },
        expect_by: crate::scenario::ExpectBy::Scenario,
        expect_live: true,
        expect_resource: resource.then_some(Expect::Unsafe),
        min_availability: None,
        min_exercised: crate::outcome::MIN_EXERCISED,
        heal_after_faults_us: None,
        grid: Vec::new(),
        nodes: scope.nodes,
        persistence: scope.persistence.clone(),
        replication: scope.replication,
        sentinel: None,
        cluster: None,
        algorithm: scope.algorithm.clone(),
        clients: Clients {
            count: scope.clients,
            locks: 1,
            think: Dist::fixed(scope.think_us),
            hold: Dist::fixed(scope.hold_us),
            read_share: 0.0,
            writer_wait_bound_us: None,
            resource_writes: false,
            worker: None,
            worker_hold_from: Default::default(),
            worker_deadline_us: None,
            probe: None,
        },
        network: Network {
            latency: Dist::fixed(scope.latency_us),
            fifo: true,
        },
        faults,
        nemesis: Nemesis::default(),
        backend: Backend::Sim,
        targets: Targets::Local,
        overrides: Vec::new(),
        node_events: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_at_a_boundary_come_just_before_it_in_path_order() {
        let s = Scenario::parse("nodes = 3\n[clients]\ncount = 2\n", "t.toml", "t").unwrap();
        let scope = Scope::new(&s, &Default::default()).unwrap();
        let q = scope.tick_us;
        let path = [
            Action::Cut(0, 2),
            Action::Tick,
            Action::Tick,
            Action::Crash(1),
            Action::Restart(1),
            Action::Tick,
        ];
        let times: Vec<u64> = fault_times(&scope, &path).iter().map(|&(t, _)| t).collect();
        assert_eq!(times, vec![0, 2 * q - 2, 2 * q - 1]);
        let r = reproduction(&scope, &path, false);
        assert_eq!(r.duration_us, 3 * q);
        assert_eq!(r.faults.len(), 2);
        assert_eq!(r.faults[0].duration_us, None, "never healed");
        assert_eq!(r.faults[1].duration_us, Some(1), "restarted right after");
        let text = r.to_toml("");
        assert_eq!(Scenario::parse(&text, "r.toml", "r").unwrap(), r, "{text}");
    }
}
