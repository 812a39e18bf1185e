//! What a run decided: the result of each seed and the verdict over all of them, with
//! the reported seed's evidence. `run/` produces these and `report/` renders them, so
//! they sit below both; nothing here runs. What a sweep produced is in [`sweep`].
//!
//! A seed ends in one of three [`Verdict`]s: unsafe (a violation), safe (no violation,
//! and its faults touched the lock where a broken lock would break:
//! [`crate::checker::exercise`]), or not exercised (no violation, but the seed proved
//! nothing, and `not_exercised` says why). Unsafe wins over not exercised.
//!
//! One rule over many seeds, for every place that states a verdict (the console, the
//! scenario's exit status, summary.json, JUnit, the analysis and the library matrix):
//! unsafe if any seed is; else safe when at least the scenario's `min_exercised` share
//! of the seeds was exercised (see [`MIN_EXERCISED`]), said as "safe (19 of 20 seeds
//! exercised)", and its rate is stated over those seeds only; else not exercised.

pub mod sweep;

use crate::checker::{Findings, Stats};
use crate::history::Event;
use crate::lifecycle::RunStats;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The reported seed's history: in memory, or in the file it went to as it was made
/// (a simulated run given a file keeps none of its events in memory).
#[derive(Debug)]
pub enum History {
    Memory(Vec<Event>),
    File { path: PathBuf, events: usize },
}

impl History {
    /// How many events it has.
    pub fn len(&self) -> usize {
        match self {
            History::Memory(events) => events.len(),
            History::File { events, .. } => *events,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What one seed (or a run) shows about mutual exclusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Two conflicting holds overlapped.
    Unsafe,
    /// No violation, and the faults met what they aim at with enough acquisitions.
    Safe,
    /// No violation, but nothing was exercised: no hold met the faults, or too few
    /// acquisitions succeeded.
    NotExercised,
}

impl Verdict {
    /// As summary.json writes it: `unsafe`, `safe`, `not_exercised`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Unsafe => "unsafe",
            Verdict::Safe => "safe",
            Verdict::NotExercised => "not_exercised",
        }
    }

    /// A seed's verdict from its findings and the fault plan it ran (none: only the
    /// faults the history records are judged), with the reason when not exercised. A
    /// violation is a violation, whatever was exercised.
    pub fn judge(
        findings: &Findings,
        plan: Option<&[crate::fault::PlannedFault]>,
    ) -> (Verdict, Option<String>) {
        if !findings.is_safe() {
            return (Verdict::Unsafe, None);
        }
        match findings.exercise.not_exercised(plan) {
            None => (Verdict::Safe, None),
            Some(why) => (Verdict::NotExercised, Some(why)),
        }
    }

    /// As a sentence says it: `unsafe`, `safe`, `not exercised`.
    pub fn words(&self) -> &'static str {
        match self {
            Verdict::NotExercised => "not exercised",
            v => v.as_str(),
        }
    }
}

/// The outcome of one seed. Everything in it follows from the seed but `sim_secs`, a
/// wall-clock measurement, which is kept out of what is written (summary.json must be
/// byte-identical for the same seeds, however they were run).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeedResult {
    pub seed: u64,
    /// Unsafe, safe, or not exercised (then `not_exercised` says why).
    pub verdict: Verdict,
    /// Why the seed proved nothing, when its verdict is not exercised.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_exercised: Option<String>,
    pub safe: bool,
    pub live: bool,
    pub violations: usize,
    pub liveness_findings: usize,
    /// Stale writes the guarded resource accepted over the write of a later hold, plus
    /// fencing tokens that did not grow.
    pub resource_violations: usize,
    pub stats: Stats,
    /// The driver's work: events, node commands, lock operations, virtual end time.
    pub sim: RunStats,
    /// Wall-clock seconds the run took (not the checker).
    #[serde(skip)]
    pub sim_secs: f64,
    /// The seed was cut short by a stop: its verdict covers the history up to there.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub partial: bool,
    /// What its faults touched, one line each (the first [`TOUCHED_SHOWN`] faults): the
    /// evidence its verdict rests on, kept for every seed, not only the reported one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub touched: Vec<String>,
}

/// How many faults a seed's `touched` lists (a nemesis may start thousands; the
/// reported seed's summary has them all).
pub const TOUCHED_SHOWN: usize = 8;

/// A seed's `touched`: "#3 crash of node 2: took down 1 live key (lines 40)", one per
/// fault, with "not exercised" where it touched nothing where the lock could break.
pub fn touched_lines(e: &crate::checker::Exercise) -> Vec<String> {
    let mut lines: Vec<String> = e
        .faults
        .iter()
        .take(TOUCHED_SHOWN)
        .map(|f| {
            format!(
                "#{} {} of {}: {}{}",
                f.id,
                f.kind,
                f.target,
                f.touched.describe(),
                if f.exercised { "" } else { " (not exercised)" }
            )
        })
        .collect();
    if e.faults.len() > TOUCHED_SHOWN {
        lines.push(format!("and {} more faults", e.faults.len() - TOUCHED_SHOWN));
    }
    lines
}

impl SeedResult {
    /// Whether this seed has something to report: a violation, a liveness finding or
    /// a stale write.
    pub fn has_finding(&self) -> bool {
        !self.safe || !self.live || self.resource_violations > 0
    }

    /// Which seed a run reports in full: the highest rank first, a finding (2) before a
    /// seed that was not exercised (1) before any other (0).
    pub fn report_rank(&self) -> u8 {
        match (self.has_finding(), self.verdict) {
            (true, _) => 2,
            (false, Verdict::NotExercised) => 1,
            (false, _) => 0,
        }
    }
}

/// The share of a run's seeds that must be exercised, by default, for a run with no
/// unsafe seed to read safe (the scenario's `min_exercised`). A safe verdict's rate is a
/// claim about the exercised seeds only ("0/19, rate <= 15% at 95%"), so an unexercised
/// seed only widens its interval; but when more than one seed in five misses, the
/// scenario's faults do not reliably meet the lock (an aim that misses, a fault shorter
/// than the holds), and a "safe" would rest on luck: such a run reads not exercised, so
/// its author fixes the aim instead of counting on the seeds that happened to land.
/// With 1 to 4 seeds every seed must be exercised; with 10, 8; with 20, 16.
pub const MIN_EXERCISED: f64 = 0.8;

/// How many of a run's seeds were exercised, and how many it needed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Exercised {
    /// Seeds whose faults touched the lock where it could break (safe or unsafe).
    pub seeds: usize,
    /// Seeds that ran.
    pub of: usize,
    /// Exercised seeds a safe verdict needs (the share `min_exercised` of `of`, at
    /// least one).
    pub needed: usize,
}

impl Exercised {
    /// Of `seeds`, with the share `min_share` needed.
    pub fn of(seeds: &[SeedResult], min_share: f64) -> Exercised {
        let of = seeds.len();
        Exercised {
            seeds: seeds
                .iter()
                .filter(|s| s.verdict != Verdict::NotExercised)
                .count(),
            of,
            needed: needed(of, min_share),
        }
    }

    /// Whether enough seeds were exercised.
    pub fn enough(&self) -> bool {
        self.of > 0 && self.seeds >= self.needed
    }

    /// "19 of 20 seeds exercised".
    pub fn words(&self) -> String {
        format!(
            "{} of {} seed{} exercised",
            self.seeds,
            self.of,
            if self.of == 1 { "" } else { "s" }
        )
    }
}

/// What a verdict rests on, over every seed of a run: the seeds exercised, the holds
/// (acquisitions that succeeded) with the fewest and most of one seed, the acquire calls,
/// and how many of them ended with an unknown outcome. A safe verdict is only as strong
/// as these numbers: 3 holds per seed prove less than 3,000.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RestsOn {
    pub exercised: Exercised,
    /// Completed workload acquire calls, summed over the seeds.
    pub acquires: u64,
    /// Of those, the ones that succeeded: the holds the checker judged.
    pub holds: u64,
    /// The fewest and the most holds of one seed.
    pub holds_min: u64,
    pub holds_max: u64,
    /// Acquire calls whose outcome is unknown (a timeout: the SET may have been applied).
    pub unknown: u64,
}

impl RestsOn {
    /// Per seed: whether it was exercised, and its acquire calls, holds and unknowns.
    pub fn of_counts(exercised: Exercised, seeds: impl IntoIterator<Item = (u64, u64, u64)>) -> RestsOn {
        let mut r = RestsOn {
            exercised,
            holds_min: u64::MAX,
            ..RestsOn::default()
        };
        for (acquires, holds, unknown) in seeds {
            r.acquires += acquires;
            r.holds += holds;
            r.unknown += unknown;
            r.holds_min = r.holds_min.min(holds);
            r.holds_max = r.holds_max.max(holds);
        }
        if r.holds_min == u64::MAX {
            r.holds_min = 0;
        }
        r
    }

    /// Of a run's seeds, with the share `min_share` of exercised seeds needed.
    pub fn of(seeds: &[SeedResult], min_share: f64) -> RestsOn {
        RestsOn::of_counts(
            Exercised::of(seeds, min_share),
            seeds
                .iter()
                .map(|s| (s.stats.acquires, s.stats.acquired, s.stats.unknown)),
        )
    }

    /// "10 of 10 seeds exercised, 37 holds (3–4 per seed)": the short form.
    pub fn short(&self) -> String {
        format!(
            "{}, {} hold{}{}",
            self.exercised.words(),
            self.holds,
            if self.holds == 1 { "" } else { "s" },
            self.per_seed()
        )
    }

    fn per_seed(&self) -> String {
        if self.exercised.of <= 1 {
            String::new()
        } else if self.holds_min == self.holds_max {
            format!(" ({} per seed)", self.holds_min)
        } else {
            format!(" ({}–{} per seed)", self.holds_min, self.holds_max)
        }
    }

    /// "10 of 10 seeds exercised; 37 holds (3–4 per seed) of 120 acquire calls, 5 of
    /// them (4.2%) of unknown outcome".
    pub fn words(&self) -> String {
        format!("{}; {}", self.exercised.words(), self.calls_words())
    }

    /// The holds and calls alone: "37 holds (3–4 per seed) of 120 acquire calls, 5 of
    /// them (4.2%) of unknown outcome".
    pub fn calls_words(&self) -> String {
        let per_seed = self.per_seed();
        let unknown = if self.acquires == 0 {
            String::new()
        } else {
            format!(
                ", {} of them ({:.1}%) of unknown outcome",
                self.unknown,
                self.unknown as f64 * 100.0 / self.acquires as f64
            )
        };
        format!(
            "{} hold{}{per_seed} of {} acquire call{}{unknown}",
            self.holds,
            if self.holds == 1 { "" } else { "s" },
            self.acquires,
            if self.acquires == 1 { "" } else { "s" },
        )
    }
}

/// Exercised seeds that `n` seeds need at the share `min_share`: at least one.
pub fn needed(n: usize, min_share: f64) -> usize {
    // A share of a few seeds, rounded up, without float noise (0.8 x 10 is 8, not 9).
    let exact = n as f64 * min_share.clamp(0.0, 1.0);
    ((exact - 1e-9).ceil() as usize).clamp(1, n.max(1))
}

/// The verdict over `seeds` (the rule of the module doc), with the share of seeds that
/// must be exercised: unsafe if any seed is; safe when enough seeds were exercised;
/// else not exercised; `None` when no seed finished.
pub fn run_verdict(seeds: &[SeedResult], min_share: f64) -> Option<Verdict> {
    if seeds.iter().any(|s| s.verdict == Verdict::Unsafe) {
        Some(Verdict::Unsafe)
    } else if seeds.is_empty() {
        None
    } else if Exercised::of(seeds, min_share).enough() {
        Some(Verdict::Safe)
    } else {
        Some(Verdict::NotExercised)
    }
}

/// The verdict over `seeds` in words: "unsafe", "safe", "safe (19 of 20 seeds
/// exercised)" (when some seed was not), "not exercised", or "unknown".
pub fn verdict_words(seeds: &[SeedResult], min_share: f64) -> String {
    let exercised = Exercised::of(seeds, min_share);
    match run_verdict(seeds, min_share) {
        None => "unknown".into(),
        Some(Verdict::Safe) if exercised.seeds < exercised.of => format!("safe ({})", exercised.words()),
        Some(v) => v.words().into(),
    }
}

/// Why the seeds' verdict is not exercised: how many were, how many it needed, and the
/// first unexercised seed's reason.
pub fn not_exercised_reason(seeds: &[SeedResult], min_share: f64) -> Option<String> {
    if run_verdict(seeds, min_share) != Some(Verdict::NotExercised) {
        return None;
    }
    let first = seeds.iter().find(|s| s.verdict == Verdict::NotExercised)?;
    let why = first.not_exercised.as_deref().unwrap_or("no reason recorded");
    Some(if seeds.len() == 1 {
        why.to_string()
    } else {
        let e = Exercised::of(seeds, min_share);
        format!("{}, {} needed; seed {}: {why}", e.words(), e.needed, first.seed)
    })
}

/// The outcome of a whole invocation.
pub struct Outcome {
    pub seeds: Vec<SeedResult>,
    /// The seed the report describes, with its full history and findings.
    pub reported_seed: u64,
    pub history: History,
    pub findings: Findings,
    pub plan: Vec<crate::fault::PlannedFault>,
    /// The reported seed's worker logs, when the clients were worker processes.
    pub worker_logs: Option<crate::worker::process::WorkerLogs>,
    /// The reported seed's redis-server logs ([`crate::lifecycle::RunOutput::node_logs`]).
    pub node_logs: Vec<crate::lifecycle::NodeLog>,
    pub safe: bool,
    pub live: bool,
    /// No seed had a resource-level violation.
    pub resource_safe: bool,
    pub as_expected: bool,
    pub availability_ok: bool,
    /// Why the run's verdict is not exercised ("k of N seeds exercised, M needed; seed
    /// S: why"), when no seed was unsafe and too few seeds proved something.
    pub not_exercised: Option<String>,
    /// The share of seeds that must be exercised (the scenario's `min_exercised`).
    pub min_exercised: f64,
    /// Why the run did not finish (a signal), when it did not: the seeds that did not
    /// run are missing, and the reported seed's history may end early or be empty.
    pub partial: Option<String>,
}

impl Outcome {
    /// The verdict on mutual exclusion: `unsafe`, `not_exercised`, `safe`, or `unknown`
    /// when a stop came before any seed finished.
    pub fn verdict(&self) -> &'static str {
        self.run_verdict().map_or("unknown", |v| v.as_str())
    }

    /// The verdict over every seed (the rule of the module doc); `None` when no seed
    /// finished.
    pub fn run_verdict(&self) -> Option<Verdict> {
        run_verdict(&self.seeds, self.min_exercised)
    }

    /// The verdict in words, with how many seeds were exercised when some were not.
    pub fn verdict_words(&self) -> String {
        verdict_words(&self.seeds, self.min_exercised)
    }

    /// How many seeds were exercised, of how many, and how many were needed.
    pub fn exercised(&self) -> Exercised {
        Exercised::of(&self.seeds, self.min_exercised)
    }

    /// What the verdict rests on: seeds exercised, holds, acquire calls, unknowns.
    pub fn rests_on(&self) -> RestsOn {
        RestsOn::of(&self.seeds, self.min_exercised)
    }

    /// Simulated node commands per wall second over all seeds.
    pub fn sim_ops_per_sec(&self) -> f64 {
        let ops: u64 = self.seeds.iter().map(|s| s.sim.node_cmds).sum();
        let secs: f64 = self.seeds.iter().map(|s| s.sim_secs).sum();
        ops as f64 / secs.max(1e-9)
    }

    /// Simulated lock operations (acquire and release calls) per wall second.
    pub fn sim_lock_ops_per_sec(&self) -> f64 {
        let ops: u64 = self.seeds.iter().map(|s| s.sim.lock_ops).sum();
        let secs: f64 = self.seeds.iter().map(|s| s.sim_secs).sum();
        ops as f64 / secs.max(1e-9)
    }
}

#[cfg(test)]
mod rests_on_tests {
    use super::{Exercised, RestsOn};

    #[test]
    fn a_verdict_says_how_many_holds_per_seed_and_how_many_calls_it_rests_on() {
        let exercised = Exercised {
            seeds: 3,
            of: 3,
            needed: 3,
        };
        let r = RestsOn::of_counts(exercised, [(10, 3, 1), (12, 4, 0), (8, 4, 1)]);
        assert_eq!((r.acquires, r.holds, r.unknown), (30, 11, 2));
        assert_eq!((r.holds_min, r.holds_max), (3, 4));
        assert_eq!(
            r.words(),
            "3 of 3 seeds exercised; 11 holds (3–4 per seed) of 30 acquire calls, 2 of them (6.7%) of unknown outcome"
        );
        let one = RestsOn::of_counts(
            Exercised {
                seeds: 1,
                of: 1,
                needed: 1,
            },
            [(1, 1, 0)],
        );
        assert_eq!(
            one.words(),
            "1 of 1 seed exercised; 1 hold of 1 acquire call, 0 of them (0.0%) of unknown outcome"
        );
        assert_eq!(r.short(), "3 of 3 seeds exercised, 11 holds (3–4 per seed)");
        assert_eq!(RestsOn::of_counts(exercised, []).holds_min, 0);
    }
}
