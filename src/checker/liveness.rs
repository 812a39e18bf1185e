//! Liveness after the heal: deadlock freedom, judged from the probe operations.
//!
//! Once every fault has healed and the workload has stopped, one client acquires and
//! releases each lock (`phase: probe`). Keys left behind by crashed or partitioned
//! holders must expire and let the probe in within the bound the `meta` line states,
//! derived from the ttl and the retry parameters.

use crate::history::{Event, LockName, Meta, Op};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LivenessFinding {
    /// A probe waited longer than the bound for a lock (or never got it).
    Deadlock {
        lock: String,
        probe_start_us: u64,
        waited_us: u64,
        bound_us: u64,
        acquired: bool,
    },
    /// The heal happened but the liveness probe never ran: some client never finished
    /// its last operation.
    NoProbe { heal_us: u64 },
    /// An uncontended acquisition failed while a majority of nodes was up and reachable
    /// from its client (see [`super::tolerance`]).
    FaultTolerance {
        client: usize,
        lock: String,
        invoke_us: u64,
        end_us: u64,
        reachable_nodes: Vec<usize>,
    },
    /// After every fault had ended at `heal_us`, clients asked for `lock` but nobody
    /// got it within the bound.
    StuckAfterHeal {
        lock: String,
        heal_us: u64,
        bound_us: u64,
    },
    /// A writer waited longer than the history's `writer_wait_bound_us` while read holds
    /// covered `readers_busy_share` of its wait ([`super::waits`]).
    WriterStarvation {
        lock: String,
        client: usize,
        since_us: u64,
        waited_us: u64,
        bound_us: u64,
        acquired: bool,
        readers_busy_share: f64,
    },
}

impl LivenessFinding {
    /// The finding's kind as summary.json names it (`"fault_tolerance"`).
    pub fn kind(&self) -> &'static str {
        match self {
            LivenessFinding::Deadlock { .. } => "deadlock",
            LivenessFinding::NoProbe { .. } => "no_probe",
            LivenessFinding::FaultTolerance { .. } => "fault_tolerance",
            LivenessFinding::StuckAfterHeal { .. } => "stuck_after_heal",
            LivenessFinding::WriterStarvation { .. } => "writer_starvation",
        }
    }
}

impl LivenessFinding {
    /// The time the finding is about: a harness stall there explains it
    /// ([`set_aside`]). `end_us` is the history's end.
    pub fn window(&self, end_us: u64) -> (u64, u64) {
        match *self {
            LivenessFinding::Deadlock {
                probe_start_us,
                waited_us,
                ..
            } => (probe_start_us, probe_start_us.saturating_add(waited_us)),
            LivenessFinding::NoProbe { heal_us } => (heal_us, end_us),
            LivenessFinding::FaultTolerance {
                invoke_us, end_us, ..
            } => (invoke_us, end_us),
            LivenessFinding::StuckAfterHeal {
                heal_us, bound_us, ..
            } => (heal_us, heal_us.saturating_add(bound_us)),
            LivenessFinding::WriterStarvation {
                since_us, waited_us, ..
            } => (since_us, since_us.saturating_add(waited_us)),
        }
    }
}

/// Splits `findings` into the lock's and those whose window meets a stall of
/// lockstorm's own driver (`stalls`, as `(from, to)`): while the driver did not run,
/// nobody's requests went out or came back, so a wait over that time says nothing
/// about the lock. Returns (kept, set aside).
pub fn set_aside(
    findings: Vec<LivenessFinding>,
    stalls: &[(u64, u64)],
    end_us: u64,
) -> (Vec<LivenessFinding>, Vec<LivenessFinding>) {
    findings.into_iter().partition(|f| {
        let (from, to) = f.window(end_us);
        !stalls.iter().any(|&(s, e)| s <= to && from <= e)
    })
}

#[derive(Default)]
pub struct Probes {
    /// Per lock: first probe invocation and first successful probe acquire.
    locks: BTreeMap<LockName, (u64, Option<u64>)>,
}

impl Probes {
    pub fn invoke(&mut self, op: &Op) {
        self.locks.entry(op.lock.clone()).or_insert((op.t_us, None));
    }

    pub fn complete(&mut self, event: &Event, op: &Op) {
        if let (Event::Ok(_), Some(entry)) = (event, self.locks.get_mut(&op.lock)) {
            entry.1.get_or_insert(op.t_us);
        }
    }
}

pub fn judge(
    meta: Option<&Meta>,
    heal_us: Option<u64>,
    end_us: u64,
    probes: &Probes,
) -> Vec<LivenessFinding> {
    let (Some(meta), Some(heal_us)) = (meta, heal_us) else {
        return Vec::new();
    };
    if probes.locks.is_empty() {
        return vec![LivenessFinding::NoProbe { heal_us }];
    }
    let bound_us = meta.liveness_bound_us;
    probes
        .locks
        .iter()
        .filter_map(|(lock, &(start, ok))| {
            let waited_us = ok.unwrap_or(end_us) - start;
            (ok.is_none() || waited_us > bound_us).then(|| LivenessFinding::Deadlock {
                lock: lock.to_string(),
                probe_start_us: start,
                waited_us,
                bound_us,
                acquired: ok.is_some(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::LivenessFinding;

    #[test]
    fn kind_is_the_tag_summary_json_writes() {
        let lock = || "L0".to_string();
        let findings = [
            LivenessFinding::Deadlock {
                lock: lock(),
                probe_start_us: 0,
                waited_us: 0,
                bound_us: 0,
                acquired: false,
            },
            LivenessFinding::NoProbe { heal_us: 1 },
            LivenessFinding::FaultTolerance {
                client: 0,
                lock: lock(),
                invoke_us: 0,
                end_us: 0,
                reachable_nodes: Vec::new(),
            },
            LivenessFinding::StuckAfterHeal {
                lock: lock(),
                heal_us: 0,
                bound_us: 0,
            },
            LivenessFinding::WriterStarvation {
                lock: lock(),
                client: 0,
                since_us: 0,
                waited_us: 0,
                bound_us: 0,
                acquired: false,
                readers_busy_share: 0.0,
            },
        ];
        for f in &findings {
            let json = serde_json::to_value(f).unwrap();
            assert_eq!(json["kind"], f.kind(), "{json}");
        }
    }
}
