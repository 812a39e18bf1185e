//! What "the same violation" means while shrinking: the kind of finding a run shows.
//!
//! A smaller scenario is kept only if its run shows a finding of the same kind as the
//! original run, not necessarily between the same clients or at the same time: two
//! clients holding a lock at once stays two clients holding a lock at once, whoever
//! they are. The kinds follow the checker's findings: the lock-level mutual exclusion
//! violation, the resource-level stale write and fencing-token regression, and each
//! kind of liveness finding. When a run shows several, the first in this order is the
//! one shrinking keeps: the lock's own guarantee first, liveness last.

use crate::checker::{Findings, LivenessFinding};
use serde::Serialize;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
#[value(rename_all = "snake_case")]
pub enum Kind {
    /// Two conflicting holds of one lock overlapped in true time.
    MutualExclusion,
    /// The guarded resource accepted a write from a client whose hold had ended, over
    /// the write of another client's later hold.
    StaleWrite,
    /// A hold's fencing token was not above that of an earlier, finished hold.
    FenceRegression,
    /// A liveness probe after the heal waited past the bound (or never acquired).
    Deadlock,
    /// The heal came but the liveness probe never ran.
    NoProbe,
    /// An uncontended acquisition failed while a majority was reachable.
    FaultTolerance,
    /// Nobody could take a lock again within the bound after every fault had healed.
    StuckAfterHeal,
    /// A writer waited past the bound while readers kept the lock.
    WriterStarvation,
}

impl Kind {
    fn of_liveness(f: &LivenessFinding) -> Kind {
        match f {
            LivenessFinding::Deadlock { .. } => Kind::Deadlock,
            LivenessFinding::NoProbe { .. } => Kind::NoProbe,
            LivenessFinding::FaultTolerance { .. } => Kind::FaultTolerance,
            LivenessFinding::StuckAfterHeal { .. } => Kind::StuckAfterHeal,
            LivenessFinding::WriterStarvation { .. } => Kind::WriterStarvation,
        }
    }

    /// Every kind the findings show, most important first.
    pub fn all_in(findings: &Findings) -> Vec<Kind> {
        let mut kinds = Vec::new();
        if !findings.violations.is_empty() {
            kinds.push(Kind::MutualExclusion);
        }
        if !findings.resource_violations.is_empty() {
            kinds.push(Kind::StaleWrite);
        }
        if !findings.fence_regressions.is_empty() {
            kinds.push(Kind::FenceRegression);
        }
        kinds.extend(findings.liveness.iter().map(Kind::of_liveness));
        kinds.sort();
        kinds.dedup();
        kinds
    }

    /// The most important kind the findings show, if any.
    pub fn first_in(findings: &Findings) -> Option<Kind> {
        Kind::all_in(findings).into_iter().next()
    }

    /// Whether the findings show this kind.
    pub fn shows(self, findings: &Findings) -> bool {
        match self {
            Kind::MutualExclusion => !findings.violations.is_empty(),
            Kind::StaleWrite => !findings.resource_violations.is_empty(),
            Kind::FenceRegression => !findings.fence_regressions.is_empty(),
            _ => findings.liveness.iter().any(|f| Kind::of_liveness(f) == self),
        }
    }

    /// When the first finding of this kind happened (true time), for kinds that happen
    /// at a moment of the workload; liveness is judged over the whole run.
    pub fn first_at_us(self, findings: &Findings) -> Option<u64> {
        match self {
            Kind::MutualExclusion => findings.violations.iter().map(|v| v.overlap_start_us).min(),
            Kind::StaleWrite => findings.resource_violations.iter().map(|v| v.write_us).min(),
            Kind::FenceRegression => findings.fence_regressions.iter().map(|r| r.later.start_us).min(),
            _ => None,
        }
    }

    /// When the first finding of this kind was over (for a violation, the end of the
    /// overlap; otherwise its moment).
    pub fn first_end_us(self, findings: &Findings) -> Option<u64> {
        match self {
            Kind::MutualExclusion => findings
                .violations
                .iter()
                .min_by_key(|v| v.overlap_start_us)
                .map(|v| v.overlap_end_us),
            _ => self.first_at_us(findings),
        }
    }

    /// Whether this kind is a liveness finding (the others are safety).
    pub fn is_liveness(self) -> bool {
        self >= Kind::Deadlock
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            Kind::MutualExclusion => "mutual exclusion violation",
            Kind::StaleWrite => "stale write",
            Kind::FenceRegression => "fencing-token regression",
            Kind::Deadlock => "deadlock after the heal",
            Kind::NoProbe => "no liveness probe",
            Kind::FaultTolerance => "fault-tolerance failure",
            Kind::StuckAfterHeal => "lock stuck after the heal",
            Kind::WriterStarvation => "writer starvation",
        };
        f.write_str(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn findings(text: &str) -> Findings {
        let s = Scenario::parse(text, "t.toml", "t").unwrap();
        crate::run::run_seed(&s, s.seed, &mut |_, _| {}).2
    }

    #[test]
    fn a_minority_quorum_shows_mutual_exclusion_first() {
        let f = findings("duration = \"3s\"\nnodes = 3\n[algorithm]\nquorum = 1\n[clients]\ncount = 3\n");
        assert_eq!(Kind::first_in(&f), Some(Kind::MutualExclusion));
        assert!(Kind::MutualExclusion.shows(&f));
        let at = Kind::MutualExclusion.first_at_us(&f).unwrap();
        assert!(at < 3_000_000, "{at}");
    }

    #[test]
    fn a_quiet_run_shows_no_kind() {
        let f = findings("duration = \"2s\"\nnodes = 3\n[clients]\ncount = 2\n");
        assert_eq!(Kind::all_in(&f), vec![]);
        assert!(!Kind::Deadlock.shows(&f));
        assert!(Kind::Deadlock.is_liveness() && !Kind::FenceRegression.is_liveness());
    }
}
