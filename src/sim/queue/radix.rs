//! A radix heap with a sorted front: the queue's entries, smallest key first.
//!
//! The simulator pops keys that never go down (time only moves on, and sequence numbers
//! only grow), which is what a radix heap is built for: an entry with a key above
//! `last` waits in the bucket of the highest bit in which its key differs from `last`,
//! filed in a few instructions, where a comparison heap walks a path of comparisons on
//! every push and pop.
//!
//! Entries with a key at or below `last` wait in `ready`, sorted, and pop first. When
//! `ready` runs empty, the lowest non-empty bucket is emptied into it: whole and sorted
//! if it holds at most [`WHOLE`] entries (its largest key becomes `last`), else only
//! its smallest key (which becomes `last`), the others going to lower buckets (an entry
//! only ever moves down). Once a bucket went whole, a new event usually falls below
//! `last` and joins `ready` by a binary search: `ready` works as a short sorted list of
//! what happens next, and the buckets hold what happens later. On partition.toml's run
//! (callgrind, seed 1): 2.92 G instructions with a 4-ary heap, 2.73 G with a radix heap
//! alone, 2.46 G with buckets going whole (2.48 G at 8 entries, 2.52 G at 32).
//!
//! Two entries can have the same key (a retimed event's stale entries keep its key);
//! they pop one after the other, in either order.

use super::Entry;

/// Bucket `b` holds the entries whose key is above `last` and differs from it first in
/// bit `b` (0 the lowest).
const BUCKETS: usize = 128;

/// A bucket this small is emptied into `ready` whole (see the module doc).
const WHOLE: usize = 16;

pub(super) struct RadixHeap {
    /// No entry of a bucket has a key below it.
    last: u128,
    buckets: [Vec<Entry>; BUCKETS],
    /// Bit `b` set: bucket `b` holds an entry.
    occupied: u128,
    /// Entries with a key at or below `last`, largest key first (popped from the end).
    ready: Vec<Entry>,
    len: usize,
}

impl RadixHeap {
    pub fn new() -> Self {
        RadixHeap {
            last: 0,
            buckets: std::array::from_fn(|_| Vec::new()),
            occupied: 0,
            ready: Vec::new(),
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn push(&mut self, entry: Entry) {
        self.len += 1;
        let key = entry.key();
        if key <= self.last {
            self.push_ready(entry);
            return;
        }
        let b = bucket(self.last, key);
        self.buckets[b].push(entry);
        self.occupied |= 1 << b;
    }

    /// Files `entry` (at or below `last`) in `ready`, in key order.
    fn push_ready(&mut self, entry: Entry) {
        let key = entry.key();
        let at = self.ready.partition_point(|e| e.key() > key);
        self.ready.insert(at, entry);
    }

    /// The entry with the smallest key, if any (left in place).
    #[inline(always)]
    pub fn peek(&mut self) -> Option<&Entry> {
        if self.ready.is_empty() && self.occupied != 0 {
            self.refill();
        }
        self.ready.last()
    }

    /// Takes out the entry with the smallest key.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<Entry> {
        self.peek()?;
        self.len -= 1;
        self.ready.pop()
    }

    /// Empties the lowest bucket into `ready`: whole if it is small, else its smallest
    /// key (which becomes `last`), the rest going to lower buckets.
    fn refill(&mut self) {
        let b = self.occupied.trailing_zeros() as usize;
        self.occupied &= !(1 << b);
        let (lower, from) = self.buckets.split_at_mut(b);
        let from = &mut from[0];
        if from.len() <= WHOLE {
            // All of it is ready, and its largest key the new `last`: the keys of higher
            // buckets still differ from that first in the bit they did.
            from.sort_unstable_by_key(|e| std::cmp::Reverse(e.key()));
            self.last = from[0].key();
            self.ready.extend_from_slice(from);
            from.clear();
            return;
        }
        let (mut min_at, mut min) = (0, from[0].key());
        for (i, entry) in from.iter().enumerate().skip(1) {
            let key = entry.key();
            if key < min {
                (min_at, min) = (i, key);
            }
        }
        self.last = min;
        self.ready.push(from.swap_remove(min_at));
        // Every other key differs from the new `last` below bit `b`, or equals it: a
        // retimed event's stale entries keep its key.
        for &entry in from.iter() {
            let key = entry.key();
            if key == min {
                self.ready.push(entry);
                continue;
            }
            let to = bucket(min, key);
            lower[to].push(entry);
            self.occupied |= 1 << to;
        }
        from.clear();
    }

    /// Keeps only the entries `keep` says so.
    pub fn retain(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
        self.ready.retain(&mut keep);
        let mut len = self.ready.len();
        for (b, bucket) in self.buckets.iter_mut().enumerate() {
            bucket.retain(&mut keep);
            len += bucket.len();
            if bucket.is_empty() {
                self.occupied &= !(1 << b);
            }
        }
        self.len = len;
    }
}

/// The bucket of `key`, above `last`: the highest bit in which they differ.
#[inline(always)]
fn bucket(last: u128, key: u128) -> usize {
    debug_assert!(key > last);
    (127 - (key ^ last).leading_zeros()) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(at_us: u64, seq: u64) -> Entry {
        Entry {
            at_us,
            seq,
            slot: 0,
            version: 0,
        }
    }

    #[test]
    fn pops_in_key_order_with_keys_below_the_last_and_twins_among_them() {
        // Pushes of keys mostly above what was popped, some below it (as a retime to
        // the present makes) and some already queued (as a retime leaves), against a
        // list sorted at every pop; times from an LCG.
        let mut heap = RadixHeap::new();
        let mut model: Vec<u128> = Vec::new();
        let (mut x, mut seq, mut now, mut below, mut twins) = (5u64, 0u64, 0u64, 0, 0);
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        for _ in 0..50_000 {
            match next() % 5 {
                0 if next() % 10 == 0 && !model.is_empty() => {
                    // A key already queued, as a retimed event's stale entry has.
                    let key = model[next() as usize % model.len()];
                    heap.push(entry((key >> 64) as u64, key as u64));
                    model.push(key);
                    twins += 1;
                }
                0..=2 => {
                    seq += 1;
                    // Now and then a time at or before the last popped one.
                    let at = match next() % 20 {
                        0 => now.saturating_sub(next() % 3),
                        _ => now + next() % 5_000,
                    };
                    below += usize::from(entry(at, seq).key() <= heap.last);
                    heap.push(entry(at, seq));
                    model.push(entry(at, seq).key());
                }
                _ => {
                    model.sort_unstable_by(|a, b| b.cmp(a));
                    let got = heap.pop().map(|e| e.key());
                    assert_eq!(got, model.pop());
                    if let Some(key) = got {
                        now = (key >> 64) as u64;
                    }
                }
            }
            assert_eq!(heap.len(), model.len());
        }
        assert!(below > 100, "{below} keys came in below the last");
        assert!(twins > 100, "{twins} keys came in twice");
        model.sort_unstable();
        let rest: Vec<u128> = std::iter::from_fn(|| heap.pop().map(|e| e.key())).collect();
        assert_eq!(rest, model);
    }

    #[test]
    fn a_small_bucket_goes_ready_whole_a_large_one_by_its_least() {
        // Times 64-127 differ from 0 first in the same bit: one bucket.
        let mut heap = RadixHeap::new();
        for (at, seq) in [(120, 1), (100, 2), (101, 3)] {
            heap.push(entry(at, seq));
        }
        assert_eq!(heap.pop().map(|e| e.at_us), Some(100));
        assert_eq!(heap.ready.len(), 2, "the bucket went ready whole");
        assert_eq!(heap.last, entry(120, 1).key());
        // Below the new `last`: it joins `ready` in order.
        heap.push(entry(110, 4));
        let rest: Vec<u64> = std::iter::from_fn(|| heap.pop().map(|e| e.at_us)).collect();
        assert_eq!(rest, [101, 110, 120]);

        let mut heap = RadixHeap::new();
        for seq in 0..=WHOLE as u64 {
            heap.push(entry(127 - seq, seq));
        }
        assert_eq!(heap.pop().map(|e| e.at_us), Some(127 - WHOLE as u64));
        assert_eq!(heap.ready.len(), 0, "only the least went ready");
        assert_eq!(heap.last, entry(127 - WHOLE as u64, WHOLE as u64).key());
        let rest: Vec<u64> = std::iter::from_fn(|| heap.pop().map(|e| e.at_us)).collect();
        assert_eq!(rest, (128 - WHOLE as u64..=127).collect::<Vec<_>>());
    }

    #[test]
    fn retain_drops_entries_wherever_they_wait() {
        let mut heap = RadixHeap::new();
        for seq in 1..=1_000 {
            heap.push(entry(seq * 37 % 101, seq));
        }
        // Some in `ready` and some in buckets when the drop comes.
        let popped: Vec<u64> = (0..10).filter_map(|_| heap.pop().map(|e| e.seq)).collect();
        heap.push(entry(0, 2_000));
        heap.retain(|e| e.seq % 3 != 0);
        let mut expected: Vec<(u64, u64)> = (1..=1_000)
            .chain([2_000])
            .filter(|s| s % 3 != 0 && !popped.contains(s))
            .map(|s| (if s == 2_000 { 0 } else { s * 37 % 101 }, s))
            .collect();
        expected.sort_unstable();
        assert_eq!(heap.len(), expected.len());
        let rest: Vec<(u64, u64)> = std::iter::from_fn(|| heap.pop().map(|e| (e.at_us, e.seq))).collect();
        assert_eq!(rest, expected);
        assert_eq!(heap.len(), 0);
    }
}
