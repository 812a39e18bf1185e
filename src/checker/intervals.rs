//! Interval helpers for the checks over time windows: per-lock intervals sorted by start
//! with a window query, and merging into disjoint intervals.

/// Intervals `(start, end, client)` of one lock, sorted by start, to find those that
/// touch a window without scanning the whole history.
#[derive(Default)]
pub struct Intervals {
    sorted: Vec<(u64, u64, usize)>,
    max_len_us: u64,
}

impl Intervals {
    pub fn push(&mut self, start_us: u64, end_us: u64, client: usize) {
        self.sorted.push((start_us, end_us.max(start_us), client));
    }

    pub fn seal(&mut self) {
        self.sorted.sort_unstable();
        self.max_len_us = self.sorted.iter().map(|&(s, e, _)| e - s).max().unwrap_or(0);
    }

    /// Whether an interval of a client other than `except` touches `[from, to]`.
    pub fn any_other(&self, from: u64, to: u64, except: Option<usize>) -> bool {
        let first = self
            .sorted
            .partition_point(|&(s, _, _)| s < from.saturating_sub(self.max_len_us));
        self.sorted[first..]
            .iter()
            .take_while(|&&(s, _, _)| s <= to)
            .any(|&(_, e, c)| e >= from && Some(c) != except)
    }
}

/// Merges intervals into sorted, disjoint ones.
pub fn merge(mut v: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
    v.retain(|&(s, e)| e > s);
    v.sort_unstable();
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (s, e) in v {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_merge() {
        assert_eq!(
            merge(vec![(5, 9), (1, 3), (2, 4), (9, 10), (7, 7)]),
            vec![(1, 4), (5, 10)]
        );
    }

    #[test]
    fn a_window_query_finds_touching_intervals_of_other_clients() {
        let mut v = Intervals::default();
        v.push(0, 100, 1);
        v.push(500, 510, 2);
        v.push(200, 300, 1);
        v.seal();
        assert!(
            v.any_other(50, 60, None),
            "inside a long interval that started before"
        );
        assert!(!v.any_other(50, 60, Some(1)), "only client 1's");
        assert!(v.any_other(300, 400, Some(2)), "touching at the end");
        assert!(!v.any_other(301, 499, None));
        assert!(v.any_other(510, 600, Some(1)));
    }
}
