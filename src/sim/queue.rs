//! The event queue: events ordered by (virtual time, sequence number).
//!
//! The sequence number breaks ties in insertion order, so two events at the same
//! microsecond always run in the same order: the queue is where determinism is decided.
//!
//! Events known before the run starts (the fault plan: a thousand faults or more for a
//! long run) wait in a sorted list of their own beside the heap, so the heap holds only
//! what the run scheduled and stays small; popping takes the earlier of the two heads,
//! by the same (time, sequence) key, so the order is the one a single heap would give.

/// A heap entry: the ordering key and the slot holding the event. Kept small (24 bytes)
/// because the heap moves entries on every push and pop; events stay put in the slab.
#[derive(Clone, Copy)]
struct Entry {
    at_us: u64,
    seq: u64,
    slot: u32,
}

impl Entry {
    /// The order: time, then insertion. One integer, so comparing is one branch-free
    /// subtraction; sequence numbers are unique, so no two keys are equal.
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.at_us as u128) << 64 | self.seq as u128
    }
}

/// Children per heap node. A 4-ary heap is half as deep as a binary one, and a node's
/// children sit next to each other in memory: popping (the simulator's hottest
/// operation) moves fewer entries.
const ARITY: usize = 4;

pub struct Queue<E> {
    /// A min-heap on [`Entry::key`], `ARITY` children per node.
    heap: Vec<Entry>,
    /// Events pushed with [`Queue::push_planned`], sorted latest first (popped from the end).
    planned: Vec<Entry>,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    seq: u64,
}

impl<E> Queue<E> {
    pub fn new() -> Self {
        Queue {
            heap: Vec::with_capacity(1024),
            planned: Vec::new(),
            slab: Vec::with_capacity(1024),
            free: Vec::new(),
            seq: 0,
        }
    }

    /// Queues events known in advance, in this order (as many `push`es would): kept out
    /// of the heap, for a plan of many events far ahead.
    pub fn push_planned(&mut self, events: impl IntoIterator<Item = (u64, E)>) {
        for (at_us, event) in events {
            let entry = self.entry(at_us, event);
            self.planned.push(entry);
        }
        self.planned.sort_unstable_by_key(|e| std::cmp::Reverse(e.key()));
    }

    /// Takes a sequence number and a slot for `event`.
    fn entry(&mut self, at_us: u64, event: E) -> Entry {
        self.seq += 1;
        let slot = match self.free.pop() {
            Some(slot) => {
                self.slab[slot as usize] = Some(event);
                slot
            }
            None => {
                self.slab.push(Some(event));
                (self.slab.len() - 1) as u32
            }
        };
        Entry {
            at_us,
            seq: self.seq,
            slot,
        }
    }

    pub fn push(&mut self, at_us: u64, event: E) {
        let entry = self.entry(at_us, event);
        // Sift up, moving parents down into the hole until the entry fits.
        let key = entry.key();
        let mut pos = self.heap.len();
        self.heap.push(entry);
        while pos > 0 {
            let parent = (pos - 1) / ARITY;
            if self.heap[parent].key() < key {
                break;
            }
            self.heap[pos] = self.heap[parent];
            pos = parent;
        }
        self.heap[pos] = entry;
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        let planned_first = match (self.planned.last(), self.heap.first()) {
            (Some(p), Some(h)) => p.key() < h.key(),
            (Some(_), None) => true,
            (None, _) => false,
        };
        let top = if planned_first {
            self.planned.pop()?
        } else {
            self.pop_heap()?
        };
        self.free.push(top.slot);
        let event = self.slab[top.slot as usize]
            .take()
            .expect("a queued slot holds its event");
        Some((top.at_us, event))
    }

    fn pop_heap(&mut self) -> Option<Entry> {
        let last = self.heap.pop()?;
        let top = match self.heap.first_mut() {
            Some(root) => std::mem::replace(root, last),
            None => last,
        };
        if !self.heap.is_empty() {
            self.sift_down(last);
        }
        Some(top)
    }

    /// Moves `entry`, which is at the root, down to where it belongs.
    fn sift_down(&mut self, entry: Entry) {
        let key = entry.key();
        let len = self.heap.len();
        let mut pos = 0;
        loop {
            let first = pos * ARITY + 1;
            if first >= len {
                break;
            }
            let mut min = first;
            let mut min_key = self.heap[first].key();
            for c in first + 1..(first + ARITY).min(len) {
                let k = self.heap[c].key();
                if k < min_key {
                    min = c;
                    min_key = k;
                }
            }
            if key < min_key {
                break;
            }
            self.heap[pos] = self.heap[min];
            pos = min;
        }
        self.heap[pos] = entry;
    }

    /// Moves every event for which `new_time` says so, keeping sequence numbers, so
    /// events at the same time keep their order. Rebuilds the heap: for rare changes
    /// such as a clock-rate fault.
    pub fn retime(&mut self, mut new_time: impl FnMut(&E) -> Option<u64>) {
        for e in self.heap.iter_mut().chain(&mut self.planned) {
            let event = self.slab[e.slot as usize]
                .as_ref()
                .expect("a queued slot holds its event");
            if let Some(at_us) = new_time(event) {
                e.at_us = at_us;
            }
        }
        // A sorted array is a heap.
        self.heap.sort_unstable_by_key(Entry::key);
        self.planned.sort_unstable_by_key(|e| std::cmp::Reverse(e.key()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_insertion_order() {
        let mut q = Queue::new();
        q.push(5, 'a');
        q.push(1, 'b');
        q.push(5, 'c');
        q.push(1, 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }

    #[test]
    fn retimed_events_move_and_keep_their_tie_order() {
        let mut q = Queue::new();
        q.push(5, 'a');
        q.push(1, 'b');
        q.push(9, 'c');
        q.retime(|&e| (e != 'b').then_some(1));
        let order: Vec<(u64, char)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(1, 'a'), (1, 'b'), (1, 'c')]);
    }

    #[test]
    fn planned_events_take_their_turn_by_time_and_push_order() {
        let mut q = Queue::new();
        q.push_planned([(5, 'a'), (1, 'b'), (9, 'c')]);
        q.push(1, 'd');
        q.push(5, 'e');
        q.retime(|&e| (e == 'c').then_some(5));
        let order: Vec<(u64, char)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(1, 'b'), (1, 'd'), (5, 'a'), (5, 'c'), (5, 'e')]);
    }

    #[test]
    fn pops_in_key_order_whatever_the_pushes() {
        // Interleaved pushes and pops against a sorted model, times from a small LCG.
        let mut q = Queue::new();
        let mut model: Vec<(u64, u64)> = Vec::new();
        let (mut x, mut seq) = (7u64, 0u64);
        // A plan first, as the simulator queues its faults, out of time order.
        let plan: Vec<(u64, u64)> = (1..=300).map(|s| ((s * 7919) % 61, s)).collect();
        q.push_planned(plan.iter().copied());
        model.extend(&plan);
        seq += plan.len() as u64;
        for step in 0..5_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if step % 3 == 2 {
                model.sort();
                let expected = (!model.is_empty()).then(|| model.remove(0));
                assert_eq!(q.pop(), expected);
            } else {
                seq += 1;
                let t = (x >> 33) % 50;
                q.push(t, seq);
                model.push((t, seq));
            }
        }
        model.sort();
        let rest: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, model);
    }
}
