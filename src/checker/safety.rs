//! Mutual exclusion: no two holds of the same lock overlap in true time.
//!
//! One sort and one sweep: holds sorted by (lock, start); for each hold, the earlier
//! hold of the same lock that ends last is the one it could overlap. Intervals are
//! half-open, so a hold that starts exactly when another ends does not overlap it.

use super::{FaultSpan, Hold};
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

/// Sorts `holds` and returns every hold that overlaps an earlier one.
pub fn sweep(holds: &mut [Hold], faults: &[FaultSpan]) -> Vec<Violation> {
    holds.sort_by(|a, b| (&a.lock, a.start_us, a.client).cmp(&(&b.lock, b.start_us, b.client)));
    let mut out = Vec::new();
    let mut latest: Option<usize> = None;
    for i in 0..holds.len() {
        let h = &holds[i];
        let prev = latest.filter(|&p| holds[p].lock == h.lock);
        if let Some(p) = prev {
            let q = &holds[p];
            if h.start_us < q.end_us && h.start_us < h.end_us {
                let overlap_end_us = q.end_us.min(h.end_us);
                out.push(Violation {
                    lock: h.lock.clone(),
                    first: q.clone(),
                    second: h.clone(),
                    overlap_start_us: h.start_us,
                    overlap_end_us,
                    faults: faults
                        .iter()
                        .filter(|f| f.start_us < overlap_end_us && f.end_us.is_none_or(|e| e > q.start_us))
                        .map(|f| f.id)
                        .collect(),
                });
            }
            if h.end_us > q.end_us {
                latest = Some(i);
            }
        } else {
            latest = Some(i);
        }
    }
    out
}
