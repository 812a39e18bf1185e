//! The event queue: events ordered by (virtual time, sequence number).
//!
//! The sequence number breaks ties in insertion order, so two events at the same
//! microsecond always run in the same order: the queue is where determinism is decided.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    at_us: u64,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        (self.at_us, self.seq) == (other.at_us, other.seq)
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so the max-heap pops the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at_us, other.seq).cmp(&(self.at_us, self.seq))
    }
}

pub struct Queue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
}

impl<E> Queue<E> {
    pub fn new() -> Self {
        Queue {
            heap: BinaryHeap::with_capacity(1024),
            seq: 0,
        }
    }

    pub fn push(&mut self, at_us: u64, event: E) {
        self.seq += 1;
        self.heap.push(Entry {
            at_us,
            seq: self.seq,
            event,
        });
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        self.heap.pop().map(|e| (e.at_us, e.event))
    }

    /// Moves every event for which `new_time` says so, keeping sequence numbers, so
    /// events at the same time keep their order. Rebuilds the heap: for rare changes
    /// such as a clock-rate fault.
    pub fn retime(&mut self, mut new_time: impl FnMut(&E) -> Option<u64>) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        for e in &mut entries {
            if let Some(at_us) = new_time(&e.event) {
                e.at_us = at_us;
            }
        }
        self.heap = BinaryHeap::from(entries);
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
}
