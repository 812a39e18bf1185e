//! The event queue: events ordered by (virtual time, sequence number).
//!
//! The sequence number breaks ties in insertion order, so two events at the same
//! microsecond always run in the same order: the queue is where determinism is decided.
//!
//! Events known before the run starts (the fault plan: a thousand faults or more for a
//! long run) wait in a sorted list of their own beside the heap, so the heap holds only
//! what the run scheduled and stays small; popping takes the earlier of the two heads,
//! by the same (time, sequence) key, so the order is the one a single heap would give.
//!
//! An event can be pushed for an *owner* (the simulator's client whose clock times it),
//! and [`Queue::retime`] moves only the events of one owner: a clock-rate fault costs what
//! the client has queued, not what the whole run has. A moved event keeps its sequence
//! number and goes back into the heap as a new entry; the entry it leaves stays behind,
//! *stale* (its slot's version has moved on), and is dropped when it reaches the top, or
//! when stale entries outnumber live ones and the heap is rebuilt without them.

mod radix;

use radix::RadixHeap;

/// A heap entry: the ordering key and the slot holding the event. Kept small (24 bytes)
/// because the heap moves entries around; events stay put in the slab.
#[derive(Clone, Copy)]
struct Entry {
    at_us: u64,
    seq: u64,
    slot: u32,
    /// The slot's version when the entry was made: a retime moves the slot on, which
    /// leaves this entry stale.
    version: u32,
}

impl Entry {
    /// The order: time, then insertion. One integer, so comparing is one branch-free
    /// subtraction; sequence numbers are unique, so no two live entries' keys are equal
    /// (a retimed event's stale entries keep its key).
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.at_us as u128) << 64 | self.seq as u128
    }
}

/// The slot of an event no owner retimes.
const NO_OWNER: u32 = u32::MAX;

/// Stale entries the heap tolerates before it is rebuilt, whatever its size: rebuilding
/// a small heap for a few stale entries would cost more than skipping them.
const STALE_MIN: usize = 1024;

/// A slot of the slab: an event, and what the queue knows of it (kept beside it, so
/// that making and popping an entry reads one place).
struct Slot<E> {
    event: Option<E>,
    /// Bumped when the slot's event is retimed: only the heap entry with the current
    /// version is live. Never reset, so an entry left by an earlier event of a reused
    /// slot is stale too (a slot would need 2^32 retimes to wrap round).
    version: u32,
    /// The owner the event was pushed for, or [`NO_OWNER`].
    owner: u32,
    /// Where the slot sits in its owner's list in [`Queue::owned`].
    index: u32,
}

/// An event in its owner's list: what a retime needs to requeue it.
#[derive(Clone, Copy)]
struct Owned {
    slot: u32,
    seq: u64,
    /// Its time, as its live entry says.
    at_us: u64,
}

pub struct Queue<E> {
    /// The entries pushed, smallest [`Entry::key`] first (a radix heap: see [`radix`]);
    /// some may be stale (see the module doc).
    heap: RadixHeap,
    /// Events pushed with [`Queue::push_planned`], sorted latest first (popped from the end).
    planned: Vec<Entry>,
    slab: Vec<Slot<E>>,
    free: Vec<u32>,
    seq: u64,
    /// Per owner, its queued events (in no particular order).
    owned: Vec<Vec<Owned>>,
    /// How many entries of `heap` are stale.
    stale: usize,
}

impl<E> Queue<E> {
    pub fn new() -> Self {
        Queue {
            heap: RadixHeap::new(),
            planned: Vec::new(),
            slab: Vec::with_capacity(1024),
            free: Vec::new(),
            seq: 0,
            owned: Vec::new(),
            stale: 0,
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
    #[inline]
    fn entry(&mut self, at_us: u64, event: E) -> Entry {
        self.seq += 1;
        let (slot, version) = match self.free.pop() {
            Some(slot) => {
                let s = &mut self.slab[slot as usize];
                s.event = Some(event);
                (slot, s.version)
            }
            None => {
                self.slab.push(Slot {
                    event: Some(event),
                    version: 0,
                    owner: NO_OWNER,
                    index: 0,
                });
                ((self.slab.len() - 1) as u32, 0)
            }
        };
        Entry {
            at_us,
            seq: self.seq,
            slot,
            version,
        }
    }

    pub fn push(&mut self, at_us: u64, event: E) {
        let entry = self.entry(at_us, event);
        self.heap.push(entry);
    }

    /// Queues `event` for `owner`, so that [`Queue::retime`] of that owner can move it.
    pub fn push_for(&mut self, at_us: u64, owner: u32, event: E) {
        let entry = self.entry(at_us, event);
        let o = owner as usize;
        if self.owned.len() <= o {
            self.owned.resize_with(o + 1, Vec::new);
        }
        let slot = &mut self.slab[entry.slot as usize];
        slot.owner = owner;
        slot.index = self.owned[o].len() as u32;
        self.owned[o].push(Owned {
            slot: entry.slot,
            seq: entry.seq,
            at_us,
        });
        self.heap.push(entry);
    }

    pub fn pop(&mut self) -> Option<(u64, E)> {
        let top = loop {
            let planned_first = match (self.planned.last(), self.heap.peek()) {
                (Some(p), Some(h)) => p.key() < h.key(),
                (Some(_), None) => true,
                (None, _) => false,
            };
            if planned_first {
                break self.planned.pop()?;
            }
            let top = self.heap.pop()?;
            if self.stale == 0 || self.is_live(&top) {
                break top;
            }
            self.stale -= 1;
        };
        self.free.push(top.slot);
        // Only a queue that events were pushed for an owner has owners to keep.
        if !self.owned.is_empty() {
            let owner = std::mem::replace(&mut self.slab[top.slot as usize].owner, NO_OWNER);
            if owner != NO_OWNER {
                self.disown(owner, top.slot);
            }
        }
        let event = self.slab[top.slot as usize]
            .event
            .take()
            .expect("a queued slot holds its event");
        Some((top.at_us, event))
    }

    fn is_live(&self, entry: &Entry) -> bool {
        self.slab[entry.slot as usize].version == entry.version
    }

    /// Takes `slot` (popped) out of `owner`'s list.
    fn disown(&mut self, owner: u32, slot: u32) {
        let list = &mut self.owned[owner as usize];
        let index = self.slab[slot as usize].index;
        list.swap_remove(index as usize);
        if let Some(moved) = list.get(index as usize) {
            self.slab[moved.slot as usize].index = index;
        }
    }

    /// Moves every event of `owner` for which `new_time` says so, keeping sequence
    /// numbers, so events at the same time keep their order. Costs what the owner has
    /// queued (and, now and then, a rebuild of the heap that the stale entries it drops
    /// paid for).
    pub fn retime(&mut self, owner: u32, mut new_time: impl FnMut(&E) -> Option<u64>) {
        let Some(list) = self.owned.get_mut(owner as usize) else {
            return;
        };
        let mut moved = std::mem::take(list);
        for o in &mut moved {
            let event = self.slab[o.slot as usize]
                .event
                .as_ref()
                .expect("an owned slot holds its event");
            let Some(at_us) = new_time(event) else {
                continue;
            };
            if at_us == o.at_us {
                continue;
            }
            o.at_us = at_us;
            // The entry the event leaves is stale from here on.
            let slot = &mut self.slab[o.slot as usize];
            slot.version = slot.version.wrapping_add(1);
            let entry = Entry {
                at_us,
                seq: o.seq,
                slot: o.slot,
                version: slot.version,
            };
            self.stale += 1;
            self.heap.push(entry);
        }
        self.owned[owner as usize] = moved;
        if self.stale > STALE_MIN && self.stale > self.heap.len() / 2 {
            self.drop_stale();
        }
    }

    /// Rebuilds the heap from its live entries.
    fn drop_stale(&mut self) {
        let slab = &self.slab;
        self.heap.retain(|e| slab[e.slot as usize].version == e.version);
        self.stale = 0;
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
        q.push_for(5, 0, 'a');
        q.push_for(1, 0, 'b');
        q.push_for(9, 0, 'c');
        q.retime(0, |&e| (e != 'b').then_some(1));
        let order: Vec<(u64, char)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, vec![(1, 'a'), (1, 'b'), (1, 'c')]);
    }

    #[test]
    fn planned_events_take_their_turn_by_time_and_push_order() {
        let mut q = Queue::new();
        q.push_planned([(5, 'a'), (1, 'b')]);
        q.push_for(9, 0, 'c');
        q.push(1, 'd');
        q.push(5, 'e');
        q.retime(0, |&e| (e == 'c').then_some(5));
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

    #[test]
    fn a_retime_looks_only_at_its_owners_events() {
        let mut q = Queue::new();
        // Many events of others (and of no one), a few of owner 1.
        for i in 0..1_000 {
            q.push(i, (0, i));
            q.push_for(i, 0, (0, i));
        }
        q.push_for(50, 1, (1, 0));
        q.push_for(60, 1, (1, 1));
        let mut looked = Vec::new();
        q.retime(1, |&e| {
            looked.push(e);
            Some(2_000 - e.1)
        });
        looked.sort();
        assert_eq!(looked, vec![(1, 0), (1, 1)]);
        let order: Vec<(u64, (u32, u64))> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order.len(), 2_002);
        assert_eq!(&order[2_000..], &[(1_999, (1, 1)), (2_000, (1, 0))]);
        q.retime(1, |_| panic!("owner 1 has nothing queued"));
        q.retime(7, |_| panic!("owner 7 never queued anything"));
    }

    #[test]
    fn retimes_pop_in_key_order_against_a_model() {
        // Pushes (for owners 0..4 or none), pops and retimes of one owner against a
        // list re-sorted at every pop; enough retimes that the heap drops its stale
        // entries many times over.
        let mut q = Queue::new();
        // (at, seq, owner) per queued event; the event is its sequence number.
        let mut model: Vec<(u64, u64, u32)> = Vec::new();
        let (mut x, mut seq) = (11u64, 0u64);
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        };
        let plan: Vec<(u64, u64)> = (1..=200).map(|s| ((s * 7919) % 5_000, s)).collect();
        q.push_planned(plan.iter().copied());
        model.extend(plan.iter().map(|&(t, s)| (t, s, NO_OWNER)));
        seq += plan.len() as u64;
        let (mut now, mut rebuilds) = (0, 0);
        for _ in 0..60_000 {
            // More pushes than pops: the queue grows to thousands of events.
            match next() % 8 {
                0..=3 => {
                    seq += 1;
                    let (t, owner) = (now + next() % 500, (next() % 5) as u32);
                    if owner == 4 {
                        q.push(t, seq);
                        model.push((t, seq, NO_OWNER));
                    } else {
                        q.push_for(t, owner, seq);
                        model.push((t, seq, owner));
                    }
                }
                4..=5 => {
                    // As a clock does, a time per event (some the same as before, some
                    // tied); some events are not moved at all.
                    let (owner, base) = ((next() % 4) as u32, now + next() % 3 * 100);
                    let new_time = |s: u64| (!s.is_multiple_of(5)).then_some(base + s % 97);
                    let stale = q.stale;
                    q.retime(owner, |&s| new_time(s));
                    rebuilds += usize::from(q.stale < stale);
                    assert!(q.stale <= STALE_MIN || q.stale <= q.heap.len() / 2);
                    for e in model.iter_mut().filter(|e| e.2 == owner) {
                        if let Some(t) = new_time(e.1) {
                            e.0 = t;
                        }
                    }
                }
                _ => {
                    model.sort();
                    let expected = (!model.is_empty()).then(|| model.remove(0));
                    let got = q.pop();
                    assert_eq!(got, expected.map(|(t, s, _)| (t, s)));
                    if let Some((t, _)) = got {
                        now = t;
                    }
                }
            }
        }
        assert!(
            rebuilds >= 3,
            "the heap dropped its stale entries {rebuilds} times"
        );
        model.sort();
        let rest: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(rest, model.iter().map(|&(t, s, _)| (t, s)).collect::<Vec<_>>());
    }
}
