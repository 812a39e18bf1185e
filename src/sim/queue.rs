//! The event queue: events ordered by (virtual time, sequence number).
//!
//! The sequence number breaks ties in insertion order, so two events at the same
//! microsecond always run in the same order: the queue is where determinism is decided.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// A heap entry: the ordering key and the slot holding the event. Kept small (24 bytes)
/// because the heap moves entries on every push and pop; events stay put in the slab.
struct Entry {
    at_us: u64,
    seq: u64,
    slot: u32,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.at_us, self.seq) == (other.at_us, other.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Entry {
    /// Reversed, so the max-heap pops the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at_us, other.seq).cmp(&(self.at_us, self.seq))
    }
}

pub struct Queue<E> {
    heap: BinaryHeap<Entry>,
    slab: Vec<Option<E>>,
    free: Vec<u32>,
    seq: u64,
}

impl<E> Queue<E> {
    pub fn new() -> Self {
        Queue {
            heap: BinaryHeap::with_capacity(1024),
            slab: Vec::with_capacity(1024),
            free: Vec::new(),
            seq: 0,
        }
    }

    pub fn push(&mut self, at_us: u64, event: E) {
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
        self.heap.push(Entry {
            at_us,
            seq: self.seq,
            slot,
        });
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        let entry = self.heap.pop()?;
        self.free.push(entry.slot);
        let event = self.slab[entry.slot as usize]
            .take()
            .expect("a queued slot holds its event");
        Some((entry.at_us, event))
    }

    /// Moves every event for which `new_time` says so, keeping sequence numbers, so
    /// events at the same time keep their order. Rebuilds the heap: for rare changes
    /// such as a clock-rate fault.
    pub fn retime(&mut self, mut new_time: impl FnMut(&E) -> Option<u64>) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        for e in &mut entries {
            let event = self.slab[e.slot as usize]
                .as_ref()
                .expect("a queued slot holds its event");
            if let Some(at_us) = new_time(event) {
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
