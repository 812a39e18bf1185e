//! A workload acquisition as [`super::tolerance`] keeps it while it may still matter
//! (24 bytes, [`Attempt`]), whether another client's interval reaches a time ([`Top2`]),
//! and the interval arithmetic of the availability penalty.

use crate::history::compact::LockId;

/// A completed workload acquisition.
#[derive(Clone, Copy, Debug)]
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
pub(super) fn union(sorted: impl Iterator<Item = (u64, u64)>) -> impl Iterator<Item = (u64, u64)> {
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

/// Merges intervals into sorted, disjoint ones.
pub(super) fn merge(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.sort_unstable();
    union(v.into_iter()).collect()
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
