//! The order a report tells its findings in: the worst first (issue 41). A banner leads
//! with the first of each list and every list on a page, in narrative.md and in
//! summary.json is in this order, so the headline is never a 1 ms overlap when the same
//! run has one of a second, nor a writer who waited a little past its bound when another
//! never got the lock.
//!
//! - Violations: the longest overlap first.
//! - Stale writes: a write with no hold of its own first, then the latest after its
//!   hold ended.
//! - Fencing tokens that did not grow: the largest step back first.
//! - Liveness findings: those that never got the lock first, then the longest wait.
//!
//! Ties keep the checker's order (by time), so the order is a function of the history.

use crate::checker::resource::FenceRegression;
use crate::checker::{Findings, LivenessFinding, ResourceViolation, Violation};
use std::cmp::Reverse;

/// A run's findings, each list worst first.
pub struct Worst<'a> {
    pub violations: Vec<&'a Violation>,
    pub stale: Vec<&'a ResourceViolation>,
    pub regressions: Vec<&'a FenceRegression>,
    pub liveness: Vec<&'a LivenessFinding>,
}

impl<'a> Worst<'a> {
    pub fn of(f: &'a Findings) -> Worst<'a> {
        Worst {
            violations: sorted(&f.violations, |v| Reverse(v.overlap_us())),
            stale: sorted(&f.resource_violations, |rv| {
                Reverse(
                    rv.hold_end_us
                        .map_or(u64::MAX, |end| rv.write_us.saturating_sub(end)),
                )
            }),
            regressions: sorted(&f.fence_regressions, |r| {
                Reverse(
                    r.earlier
                        .fence
                        .unwrap_or(0)
                        .saturating_sub(r.later.fence.unwrap_or(0)),
                )
            }),
            liveness: sorted(&f.liveness, |l| {
                let (got, waited) = wait(l);
                (got, Reverse(waited))
            }),
        }
    }
}

/// `items` by `key`, ties in their own order.
fn sorted<T, K: Ord>(items: &[T], key: impl Fn(&T) -> K) -> Vec<&T> {
    let mut out: Vec<&T> = items.iter().collect();
    out.sort_by_key(|t| key(t));
    out
}

/// Whether a liveness finding's client got the lock in the end, and how long it waited
/// (for a finding with no wait of its own, the bound it was judged by).
pub fn wait(l: &LivenessFinding) -> (bool, u64) {
    match l {
        LivenessFinding::Deadlock {
            waited_us, acquired, ..
        }
        | LivenessFinding::WriterStarvation {
            waited_us, acquired, ..
        } => (*acquired, *waited_us),
        LivenessFinding::StuckAfterHeal { bound_us, .. } => (false, *bound_us),
        LivenessFinding::FaultTolerance {
            invoke_us, end_us, ..
        } => (false, end_us.saturating_sub(*invoke_us)),
        LivenessFinding::NoProbe { .. } => (false, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Mode;
    use crate::checker::{Hold, HoldEnd};

    fn hold(client: usize, start_us: u64, end_us: u64, fence: Option<u64>) -> Hold {
        Hold {
            client,
            lock: "L0".into(),
            mode: Mode::Exclusive,
            token: None,
            fence,
            start_us,
            end_us,
            ended_by: HoldEnd::Release,
            nodes: Default::default(),
            ok_line: 1,
        }
    }

    fn starved(client: usize, waited_us: u64, acquired: bool) -> LivenessFinding {
        LivenessFinding::WriterStarvation {
            lock: "L0".into(),
            client,
            since_us: 0,
            waited_us,
            bound_us: 2_000_000,
            acquired,
            readers_busy_share: 0.9,
        }
    }

    #[test]
    fn each_list_leads_with_its_worst_and_keeps_time_order_on_ties() {
        let overlap = |start: u64, len: u64| Violation {
            lock: "L0".into(),
            first: hold(0, 0, start + len, None),
            second: hold(1, start, start + len, None),
            overlap_start_us: start,
            overlap_end_us: start + len,
            faults: Vec::new(),
        };
        let stale = |write_us: u64, hold_end_us: Option<u64>| ResourceViolation {
            lock: "L0".into(),
            client: 0,
            token: "t".into(),
            fence: None,
            write_us,
            hold_end_us,
            holder: hold(1, 0, 1, None),
            overwritten_us: None,
        };
        let regression = |earlier: u64, later: u64| FenceRegression {
            lock: "L0".into(),
            earlier: hold(0, 0, 1, Some(earlier)),
            later: hold(1, 2, 3, Some(later)),
        };
        let mut f = crate::checker::Checker::new().finish();
        f.violations = vec![overlap(10, 1_000), overlap(20, 900_000), overlap(30, 1_000)];
        f.resource_violations = vec![stale(100, Some(90)), stale(200, Some(50)), stale(300, None)];
        f.fence_regressions = vec![regression(10, 9), regression(222, 219)];
        f.liveness = vec![
            starved(5, 2_143_000, true),
            starved(4, 15_878_000, true),
            starved(3, 3_000_000, false),
            starved(2, 9_000_000, false),
        ];
        let w = Worst::of(&f);
        let starts: Vec<u64> = w.violations.iter().map(|v| v.overlap_start_us).collect();
        assert_eq!(starts, [20, 10, 30], "the longest overlap first, ties by time");
        let writes: Vec<u64> = w.stale.iter().map(|rv| rv.write_us).collect();
        assert_eq!(writes, [300, 200, 100], "no hold at all, then the latest");
        assert_eq!(w.regressions[0].earlier.fence, Some(222));
        let clients: Vec<usize> = w
            .liveness
            .iter()
            .map(|l| match l {
                LivenessFinding::WriterStarvation { client, .. } => *client,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            clients,
            [2, 3, 4, 5],
            "never acquired first (longest wait first), then the longest wait"
        );
    }
}
