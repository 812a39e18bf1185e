//! Whether a seed exercised the lock: the difference between "safe" and "not exercised"
//! (DESIGN.md, "A verdict is evidence").
//!
//! What each fault touched is gathered in [`super::touch`]. A fault is **exercised** when
//! what it touched is where a broken lock would break:
//!
//! - a crash, a failover or a node's pause: it took down a live key of the lock (the
//!   holder's key gone, or frozen, with the node: a lock without persistence breaks
//!   there), or an acquisition was granted while the node was out (a lock that counts a
//!   node it cannot reach, or a quorum too small, breaks there);
//! - a node's clock: it moved the expiry of a live key, or keys were set under its moved
//!   clock (a lock that trusts the nodes' clocks breaks there);
//! - a client's pause or clock: it stopped, or moved the clock of, a hold in force or an
//!   acquisition in progress (a lock that does not subtract the time an acquisition took,
//!   or trusts its holder's clock, breaks there; a pause before the validity check that the
//!   elapsed-time check then refuses is exactly that defence at work);
//! - a partition or a loss: it dropped or held back a lock message; a delay: it delayed
//!   one (a lock whose quorum or validity does not account for a lost or slow message
//!   breaks there).
//!
//! The rule over a seed: every scripted fault (each was aimed by the scenario's author)
//! must be exercised, and so must at least one of the random nemesis's faults, if it
//! started any; a scripted fault that never started met nothing. A seed with no fault at
//! all is judged on its acquisitions alone. Either way at least [`MIN_ACQUISITIONS`]
//! workload acquisitions (the probe's not counted) must succeed: with fewer, no two holds
//! could conflict. How many exercised seeds a run needs is the scenario's
//! `min_exercised` ([`crate::outcome`]).

use super::touch::{ClientHit, FaultTouch, LinkHit, NodeHit, Target, Touched};
use crate::fault::{Firing, Origin, PlannedFault};
use serde::Serialize;

/// Successful workload acquisitions a seed needs to be exercised: fewer than two holds
/// cannot conflict, so one acquisition proves nothing about mutual exclusion.
pub const MIN_ACQUISITIONS: u64 = 2;

/// What the faults of a seed touched: one record per fault that started, in start
/// order, and the workload's successful acquisitions.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Exercise {
    pub faults: Vec<FaultTouch>,
    /// Successful workload acquisitions (the probe's not counted).
    pub acquired: u64,
}

/// Whether `touched` is where a broken lock would break, for a fault on `target`.
fn exercises(target: &Target, t: &Touched) -> bool {
    match target {
        Target::Node {
            hit: NodeHit::Out, ..
        } => t.keys_down > 0 || t.keys_wiped > 0 || t.granted_around > 0,
        Target::Node {
            hit: NodeHit::Clock { .. },
            ..
        } => t.keys_moved > 0,
        Target::Node {
            hit: NodeHit::Replication,
            ..
        } => t.set_while_cut > 0,
        Target::Client {
            hit: ClientHit::Pause | ClientHit::Clock { .. },
            ..
        } => t.holds > 0 || t.acquisitions > 0,
        Target::Links {
            hit: LinkHit::Cut(_) | LinkHit::Loss,
            ..
        } => t.dropped > 0 || t.held > 0,
        Target::Links {
            hit: LinkHit::Delay, ..
        } => t.delayed > 0,
        Target::None => false,
    }
}

impl super::touch::Collector {
    /// What the seed's faults touched, each judged (an outage by all its faults).
    pub(super) fn finish(self) -> Exercise {
        let mut faults = self.faults;
        let mut outage = vec![false; faults.len()];
        for ((f, target), &first) in faults.iter().zip(&self.targets).zip(&self.outages) {
            outage[first] |= exercises(target, &f.touched);
        }
        for (f, &first) in faults.iter_mut().zip(&self.outages) {
            f.exercised = outage[first];
        }
        Exercise {
            faults,
            acquired: self.acquired,
        }
    }
}

impl Exercise {
    /// Why a seed that ran the fault `plan` proved nothing, or `None` when it was
    /// exercised (the rule of the module doc). Without a plan (a history checked on its
    /// own) only the faults that started are judged.
    pub fn not_exercised(&self, plan: Option<&[PlannedFault]>) -> Option<String> {
        let mut why = Vec::new();
        if self.acquired < MIN_ACQUISITIONS {
            why.push(format!(
                "too few acquisitions: {} of at least {MIN_ACQUISITIONS}",
                self.acquired
            ));
        }
        let plan = plan.unwrap_or_default();
        // A fault an aimed nemesis entry became is one of the nemesis's faults, judged
        // by the nemesis's rule (one of them exercised is enough).
        let random = |f: &FaultTouch| {
            f.origin == Origin::Nemesis
                || plan.iter().any(|p| {
                    p.id == f.id
                        && matches!(&p.firing, Some(Firing::FiredFrom { entry, .. })
                            if plan.iter().any(|e| e.id == *entry && e.origin == Origin::Nemesis))
                })
        };
        let mut missed: Vec<String> = self
            .faults
            .iter()
            .filter(|f| !random(f) && !f.exercised)
            .map(|f| {
                format!(
                    "#{} {} of {} at {:.3}s touched {}",
                    f.id,
                    f.kind,
                    f.target,
                    f.start_us as f64 / 1e6,
                    f.touched.describe()
                )
            })
            .collect();
        for p in plan {
            if p.origin == Origin::Nemesis || self.faults.iter().any(|f| f.id == p.id) {
                continue;
            }
            match (&p.aim, &p.firing) {
                // An aimed entry that fired is judged by the faults it became.
                (Some(_), Some(Firing::Fired { .. })) => {}
                (Some(_), _) => missed.push(format!(
                    "#{} aimed {} (its trigger never came)",
                    p.id,
                    p.fault.kind()
                )),
                (None, _) => missed.push(format!(
                    "#{} {} of {} (never started)",
                    p.id,
                    p.fault.kind(),
                    Target::of(&p.fault).describe()
                )),
            }
        }
        if !missed.is_empty() {
            const SHOWN: usize = 3;
            let more = missed.len().saturating_sub(SHOWN);
            missed.truncate(SHOWN);
            let mut line = format!(
                "fault(s) that touched no lock where it could break: {}",
                missed.join(", ")
            );
            if more > 0 {
                line.push_str(&format!(" and {more} more"));
            }
            why.push(line);
        }
        let random: Vec<&FaultTouch> = self.faults.iter().filter(|f| random(f)).collect();
        if !random.is_empty() && random.iter().all(|f| !f.exercised) {
            why.push(format!(
                "none of the nemesis's {} fault(s) touched the lock where it could break",
                random.len()
            ));
        }
        (!why.is_empty()).then(|| why.join("; "))
    }

    /// How many faults were exercised, of how many started.
    pub fn exercised(&self) -> (usize, usize) {
        let n = self.faults.iter().filter(|f| f.exercised).count();
        (n, self.faults.len())
    }
}

#[cfg(test)]
#[path = "exercise_tests.rs"]
mod tests;
