//! Mutual exclusion: no two conflicting holds of the same lock overlap in true time.
//!
//! The read-write model: readers may overlap readers; a writer (or an exclusive holder)
//! overlaps no one. One sort and one sweep: holds sorted by (lock, start); for each hold,
//! the earlier conflicting hold of the same lock that ends last is the one it could
//! overlap. Two of those are tracked: the latest-ending earlier writer (conflicts with
//! everyone) and the latest-ending earlier reader (conflicts with writers). Intervals are
//! half-open, so a hold that starts exactly when another ends does not overlap it.

use super::{FaultSpan, Hold};
use crate::algorithm::Mode;
use serde::Serialize;

/// Two clients held the same lock at once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Violation {
    pub lock: String,
    pub first: Hold,
    pub second: Hold,
    pub overlap_start_us: u64,
    pub overlap_end_us: u64,
    /// Faults active at some point between the first acquire and the overlap's end.
    pub faults: Vec<usize>,
}

impl Violation {
    pub fn overlap_us(&self) -> u64 {
        self.overlap_end_us - self.overlap_start_us
    }
}

/// Sorts `holds` and returns every hold that overlaps an earlier conflicting one: the
/// batch sweep over every hold at once. The checker sweeps online ([`super::sweep`]),
/// in the same order with the same answer; this is the reference it is tested against.
pub fn sweep(holds: &mut [Hold], faults: &[FaultSpan]) -> Vec<Violation> {
    sort(holds);
    let mut out = Vec::new();
    // Latest-ending earlier hold of the current lock: by writers, by readers.
    let mut writer: Option<usize> = None;
    let mut reader: Option<usize> = None;
    for i in 0..holds.len() {
        let h = &holds[i];
        if i > 0 && holds[i - 1].lock != h.lock {
            writer = None;
            reader = None;
        }
        let candidates = [Some(writer), (h.mode != Mode::Read).then_some(reader)];
        for p in candidates.into_iter().flatten().flatten() {
            let q = &holds[p];
            if h.start_us < q.end_us && h.start_us < h.end_us {
                out.push(violation(q, h, faults));
            }
        }
        let slot = if h.mode == Mode::Read {
            &mut reader
        } else {
            &mut writer
        };
        if slot.is_none_or(|p| h.end_us > holds[p].end_us) {
            *slot = Some(i);
        }
    }
    out
}

pub(super) fn violation(q: &Hold, h: &Hold, faults: &[FaultSpan]) -> Violation {
    let overlap_end_us = q.end_us.min(h.end_us);
    Violation {
        lock: h.lock.to_string(),
        first: q.clone(),
        second: h.clone(),
        overlap_start_us: h.start_us,
        overlap_end_us,
        faults: faults
            .iter()
            .filter(|f| f.start_us < overlap_end_us && f.end_us.is_none_or(|e| e > q.start_us))
            .map(|f| f.id)
            .collect(),
    }
}

/// Sorts `holds` into the sweep's order.
pub fn sort(holds: &mut [Hold]) {
    // By (lock, start, client), then by the line that began the hold: the holds of one
    // client and lock end one after another, in the order they began, so this is the
    // order of ending among equals, as a stable sort of the holds as they ended would
    // give; and the sort needs no memory beside the holds. Holds of one lock share their
    // name, so comparing names is mostly comparing pointers.
    holds.sort_unstable_by(|a, b| {
        a.lock
            .cmp(&b.lock)
            .then(a.start_us.cmp(&b.start_us))
            .then(a.client.cmp(&b.client))
            .then(a.ok_line.cmp(&b.ok_line))
    });
}
