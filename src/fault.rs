//! Faults: a typed enum, the schedule a run applies, and the random nemesis that plans one.
//!
//! A scenario's `[[faults]]` (scripted) and `[nemesis]` (random) both become a list of
//! [`PlannedFault`]s before the run starts. The plan is fixed by the seed, written to
//! summary.json next to it, and every start and end is recorded in the history, so a
//! reader sees exactly which faults a seed exercised.

use crate::command::NodeId;
use crate::rng::Rng;
use crate::scenario::Dist;
use rand::seq::SliceRandom;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// Index of a client in the scenario (0-based).
pub type ClientId = usize;

/// What goes wrong.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fault {
    /// Messages between any of `clients` and any of `nodes` are lost, both ways.
    Partition {
        nodes: Vec<NodeId>,
        clients: Vec<ClientId>,
    },
    /// `client` stops the world (a GC pause, SIGSTOP): nothing it would do happens and
    /// nothing it receives is seen until the pause ends; then everything runs, late.
    /// With `point = after_acquire`, the pause begins right after the client's first
    /// successful acquisition from the fault's start time on. (A minimal client pause with
    /// the same names and serialisation as issue 3's richer `Pause`, which supersedes it.)
    Pause {
        client: ClientId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        point: Option<PausePoint>,
    },
}

/// Where in its lock cycle a paused client stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PausePoint {
    /// Right after the acquisition succeeds, before the client does anything with it.
    AfterAcquire,
}

/// Where a planned fault came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    Script,
    Nemesis,
}

/// A fault with its time: it starts at `at_us` and heals `duration_us` later, or at the
/// end of the workload phase when the duration is `None`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedFault {
    pub id: usize,
    pub at_us: u64,
    pub duration_us: Option<u64>,
    pub origin: Origin,
    #[serde(flatten)]
    pub fault: Fault,
}

/// Random fault injection: for each fault kind, how often it starts and how long it lasts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Nemesis {
    pub partition: Option<NemesisRate>,
}

/// Gaps between starts and durations of one random fault kind.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NemesisRate {
    pub interval: Dist,
    pub duration: Dist,
}

impl Nemesis {
    /// Draws the random faults of a run of `duration_us`, numbered from `first_id`.
    pub fn plan(
        &self,
        rng: &mut Rng,
        duration_us: u64,
        nodes: usize,
        clients: usize,
        first_id: usize,
    ) -> Vec<PlannedFault> {
        let mut out = Vec::new();
        if let Some(rate) = self.partition {
            let mut t = rate.interval.sample(rng);
            while t < duration_us {
                let fault = random_partition(rng, nodes, clients);
                out.push(PlannedFault {
                    id: first_id + out.len(),
                    at_us: t,
                    duration_us: Some(rate.duration.sample(rng).max(1)),
                    origin: Origin::Nemesis,
                    fault,
                });
                t += rate.interval.sample(rng).max(1);
            }
        }
        out
    }
}

/// A random cut: a random non-empty set of nodes away from a random non-empty set of
/// clients. Sets are sorted so the history reads the same for the same draw.
fn random_partition(rng: &mut Rng, nodes: usize, clients: usize) -> Fault {
    let mut pick = |n: usize| {
        let mut all: Vec<usize> = (0..n).collect();
        all.shuffle(rng);
        let k = rng.gen_range(1..=n);
        let mut chosen = all[..k].to_vec();
        chosen.sort_unstable();
        chosen
    };
    let nodes = pick(nodes);
    let clients = pick(clients);
    Fault::Partition { nodes, clients }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nemesis_plan_is_seeded_and_inside_the_run() {
        let nemesis = Nemesis {
            partition: Some(NemesisRate {
                interval: Dist::uniform(1_000, 5_000),
                duration: Dist::fixed(2_000),
            }),
        };
        let plan = |seed| nemesis.plan(&mut crate::rng::split(seed, "nemesis", 0), 100_000, 5, 3, 0);
        let a = plan(1);
        assert_eq!(a, plan(1));
        assert_ne!(a, plan(2));
        assert!(a.len() >= 19, "{} faults", a.len());
        for f in &a {
            assert!(f.at_us < 100_000);
            let Fault::Partition { nodes, clients } = &f.fault else {
                panic!("the nemesis only plans partitions");
            };
            assert!(!nodes.is_empty() && nodes.iter().all(|&n| n < 5));
            assert!(!clients.is_empty() && clients.iter().all(|&c| c < 3));
        }
    }
}
