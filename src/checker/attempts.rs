//! The workload's acquisitions, kept compactly for [`super::tolerance`], and the
//! availability penalty worked out from them.
//!
//! A long run has millions of acquisitions: each is 24 bytes ([`Attempt`]), and
//! [`ByLock`] orders them per lock with one `u32` each, beside the holds (which
//! [`super::safety::sweep`] has sorted by lock and start). The questions asked of them
//! are answered by sweeping both in order of start, not by building an index per
//! interval.

use super::compact::{LockId, Locks};
use super::Hold;
use std::ops::Range;

/// A completed workload acquisition.
pub(super) struct Attempt {
    pub invoke_us: u64,
    pub end_us: u64,
    /// The client, shifted left one bit, with whether it acquired in the lowest bit.
    client_ok: u32,
    pub lock: LockId,
}

impl Attempt {
    pub fn new(client: usize, lock: LockId, invoke_us: u64, end_us: u64, ok: bool) -> Self {
        // Clients are below `limits::MAX_CLIENTS` (the bounds check refuses others).
        let client = u32::try_from(client)
            .ok()
            .filter(|&c| c < 1 << 31)
            .expect("a client index below 2^31");
        Attempt {
            invoke_us,
            end_us,
            client_ok: client << 1 | ok as u32,
            lock,
        }
    }

    pub fn client(&self) -> usize {
        (self.client_ok >> 1) as usize
    }

    pub fn ok(&self) -> bool {
        self.client_ok & 1 == 1
    }
}

/// The attempts and the holds of each lock, each in order of start.
pub(super) struct ByLock<'a> {
    pub attempts: &'a [Attempt],
    pub holds: &'a [Hold],
    /// Attempt indices by (lock, invoke time).
    order: Vec<u32>,
    /// Per lock id: its part of `order`, and of `holds`.
    attempt_ranges: Vec<Range<usize>>,
    hold_ranges: Vec<Range<usize>>,
}

impl<'a> ByLock<'a> {
    /// `holds` sorted by lock and start; every lock named in either is in `locks`.
    pub fn new(attempts: &'a [Attempt], holds: &'a [Hold], locks: &Locks) -> Self {
        let mut order: Vec<u32> = (0..attempts.len())
            .map(|i| u32::try_from(i).expect("fewer than 2^32 acquisitions"))
            .collect();
        order.sort_unstable_by_key(|&i| {
            let a = &attempts[i as usize];
            (a.lock, a.invoke_us, i)
        });
        let mut attempt_ranges = vec![0..0; locks.len()];
        let mut i = 0;
        while i < order.len() {
            let lock = attempts[order[i] as usize].lock;
            let n = order[i..].partition_point(|&j| attempts[j as usize].lock == lock);
            attempt_ranges[lock as usize] = i..i + n;
            i += n;
        }
        let mut hold_ranges = vec![0..0; locks.len()];
        let mut i = 0;
        while i < holds.len() {
            let lock = &holds[i].lock;
            let n = holds[i..].partition_point(|h| h.lock == *lock);
            let id = locks.id(lock).expect("every hold's lock is interned");
            hold_ranges[id as usize] = i..i + n;
            i += n;
        }
        ByLock {
            attempts,
            holds,
            order,
            attempt_ranges,
            hold_ranges,
        }
    }

    /// The indices of the attempts at `lock`, by invoke time.
    pub fn attempts_of(&self, lock: LockId) -> &[u32] {
        &self.order[self.attempt_ranges[lock as usize].clone()]
    }

    /// The holds of `lock`, by start.
    pub fn holds_of(&self, lock: LockId) -> &'a [Hold] {
        &self.holds[self.hold_ranges[lock as usize].clone()]
    }

    pub fn attempt(&self, i: u32) -> &'a Attempt {
        &self.attempts[i as usize]
    }
}

/// Of intervals added in any order, the latest-ending one and the latest-ending one of
/// another client: whether one of a client other than a given one reaches a time.
#[derive(Clone, Copy, Default)]
pub(super) struct Top2 {
    best: [Option<(u64, usize)>; 2],
}

impl Top2 {
    pub fn push(&mut self, end: u64, client: usize) {
        let cur = &mut self.best;
        match cur[0] {
            Some((e0, c0)) if c0 == client => cur[0] = Some((e0.max(end), c0)),
            Some((e0, _)) if end > e0 => *cur = [Some((end, client)), cur[0]],
            Some(_) => {
                if cur[1].is_none_or(|(e1, _)| end > e1) {
                    cur[1] = Some((end, client));
                }
            }
            None => cur[0] = Some((end, client)),
        }
    }

    /// Whether an interval added so far ends at or after `from`, of a client other than
    /// `except`.
    pub fn reaches(&self, from: u64, except: Option<usize>) -> bool {
        self.best
            .iter()
            .flatten()
            .any(|&(end, client)| end >= from && Some(client) != except)
    }
}

/// Intervals sorted by start, as sorted disjoint ones (touching ones joined, empty
/// ones dropped).
fn union(sorted: impl Iterator<Item = (u64, u64)>) -> impl Iterator<Item = (u64, u64)> {
    let mut it = sorted.filter(|&(s, e)| e > s).peekable();
    std::iter::from_fn(move || {
        let (s, mut e) = it.next()?;
        while let Some(&(s2, e2)) = it.peek() {
            if s2 > e {
                break;
            }
            e = e.max(e2);
            it.next();
        }
        Some((s, e))
    })
}

/// Two interval streams sorted by start, as one.
fn merge_by_start(
    a: impl Iterator<Item = (u64, u64)>,
    b: impl Iterator<Item = (u64, u64)>,
) -> impl Iterator<Item = (u64, u64)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if y.0 < x.0 => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

/// Merges intervals into sorted, disjoint ones.
fn merge(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    union(v.into_iter()).collect()
}

/// The availability penalty: the time during which some lock was free and wanted, yet
/// every attempt at it failed (failed attempts, minus the time the lock was held or
/// being successfully acquired), up to `workload_end_us`.
pub(super) fn unavailable_us(by_lock: &ByLock, locks: &Locks, workload_end_us: u64) -> u64 {
    let w = workload_end_us;
    // Per lock, free-but-failing time; then the union over locks, so two locks
    // unavailable at once count once.
    let mut free_failing = Vec::new();
    for lock in 0..locks.len() as LockId {
        let mine = by_lock.attempts_of(lock);
        if mine.is_empty() {
            continue;
        }
        let spans = |ok: bool| {
            mine.iter()
                .map(|&i| by_lock.attempt(i))
                .filter(move |a| a.ok() == ok)
                .map(move |a| (a.invoke_us.min(w), a.end_us.min(w)))
        };
        let held = by_lock
            .holds_of(lock)
            .iter()
            .map(|h| (h.start_us, h.end_us.min(w)));
        let mut busy = union(merge_by_start(spans(true), held)).peekable();
        // Both are sorted and disjoint: one pass subtracts busy from failed.
        for (s, e) in union(spans(false)) {
            while busy.next_if(|&(_, be)| be <= s).is_some() {}
            let mut cur = s;
            while let Some(&(bs, be)) = busy.peek() {
                if bs >= e {
                    break;
                }
                if bs > cur {
                    free_failing.push((cur, bs));
                }
                cur = cur.max(be);
                if be > e {
                    // It may cover the next failed span too.
                    break;
                }
                busy.next();
            }
            if cur < e {
                free_failing.push((cur, e));
            }
        }
    }
    merge(free_failing).iter().map(|&(s, e)| e - s).sum()
}

#[cfg(test)]
mod tests {
    use super::{merge, union, Attempt, Top2};

    #[test]
    fn intervals_merge() {
        assert_eq!(
            merge(vec![(5, 9), (1, 3), (2, 4), (9, 10), (7, 7)]),
            vec![(1, 4), (5, 10)]
        );
    }

    /// Whether an interval with start ≤ `to` and end ≥ `from` exists, of a client other
    /// than `except`, as the sweeps ask it: adding the intervals by start up to `to`.
    fn meets(v: &[(u64, u64, usize)], from: u64, to: u64, except: Option<usize>) -> bool {
        let mut v = v.to_vec();
        v.sort_unstable();
        let mut top = Top2::default();
        for &(_, end, client) in v.iter().take_while(|x| x.0 <= to) {
            top.push(end, client);
        }
        top.reaches(from, except)
    }

    #[test]
    fn meets_finds_an_interval_of_another_client_in_the_window() {
        let b = [(0, 10, 1), (20, 30, 2), (5, 50, 1)];
        assert!(meets(&b, 40, 45, None), "client 1's long interval");
        assert!(!meets(&b, 40, 45, Some(1)), "only client 1 reaches that late");
        assert!(meets(&b, 25, 26, Some(1)), "client 2 inside");
        assert!(!meets(&b, 60, 70, None), "nothing after 50");
        assert!(meets(&b, 0, 100, Some(9)));
        assert!(meets(&b, 50, 50, None), "closed at both ends");
        assert!(!meets(&[], 0, 1, None));
    }

    #[test]
    fn union_joins_touching_and_drops_empty_intervals() {
        let got: Vec<_> = union([(0, 5), (3, 4), (5, 7), (8, 8), (9, 12)].into_iter()).collect();
        assert_eq!(got, vec![(0, 7), (9, 12)]);
    }

    #[test]
    fn an_attempt_packs_its_client_and_outcome() {
        let a = Attempt::new(9_999, 3, 10, 20, true);
        assert_eq!((a.client(), a.ok(), a.lock), (9_999, true, 3));
        assert!(!Attempt::new(0, 0, 0, 0, false).ok());
        assert_eq!(std::mem::size_of::<Attempt>(), 24);
    }
}
