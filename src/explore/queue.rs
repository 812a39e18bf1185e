//! The explored world's events in flight, in the order they happen: by time, and among
//! events at one time in the order they were scheduled (as the simulator's queue).
//!
//! Messages and timers are kept apart. A message arrives a fixed latency after it is
//! sent and the world's time never goes back, so messages arrive in the order they are
//! sent: a FIFO, appended at the end and popped at `head`. Timers (a client's wake-ups
//! and its algorithm's timeouts) come at any time and are few: kept sorted, latest
//! first, popped off the end. (In one sorted queue, each message went in front of the
//! timers already waiting and moved them.) A number drawn in scheduling order breaks
//! ties between the two; it is not state, only the order it gives is
//! ([`Queue::in_order`]).

use smallvec::SmallVec;

/// Messages in flight that fit inline; a world with more spills to the heap.
const MESSAGES: usize = 10;
/// Timers waiting that fit inline.
const TIMERS: usize = 4;

/// An event at a time (µs), with its place in scheduling order.
type Entry<T> = (u64, u32, T);

pub(super) struct Queue<T> {
    /// Earliest first from `head` on; those before `head` are popped.
    messages: SmallVec<[Entry<T>; MESSAGES]>,
    head: usize,
    /// Latest first: the next one is at the end.
    timers: SmallVec<[Entry<T>; TIMERS]>,
    /// The scheduling order of the next event.
    next: u32,
}

impl<T: Copy> Queue<T> {
    pub(super) fn new() -> Self {
        Queue {
            messages: SmallVec::new(),
            head: 0,
            timers: SmallVec::new(),
            next: 0,
        }
    }

    fn order(&mut self) -> u32 {
        let n = self.next;
        self.next += 1;
        n
    }

    /// Schedules message `ev` at `at`. A message never arrives before one sent earlier
    /// (fixed latency); if one did, it would go in its place all the same.
    #[inline(always)]
    pub(super) fn push_message(&mut self, at: u64, ev: T) {
        if self.head > 0 && self.messages.len() == self.messages.inline_size() {
            // Full inline: drop the popped messages before growing onto the heap.
            self.messages.drain(..self.head);
            self.head = 0;
        }
        let n = self.order();
        // Nearly always: no later message is waiting (fixed latency), so it goes last.
        if self.messages.last().is_none_or(|m| m.0 <= at) {
            self.messages.push((at, n, ev));
            return;
        }
        // A later message is waiting (the last one, at least): go before those.
        let live = &self.messages[self.head..];
        let mut i = live.len();
        while i > 0 && live[i - 1].0 > at {
            i -= 1;
        }
        self.messages.insert(self.head + i, (at, n, ev));
    }

    /// Schedules timer `ev` at `at`, after whatever is already scheduled at or before.
    #[inline(always)]
    pub(super) fn push_timer(&mut self, at: u64, ev: T) {
        let n = self.order();
        let i = self.timers.partition_point(|&(t, _, _)| t > at);
        self.timers.insert(i, (at, n, ev));
    }

    /// The next event, if it happens before `end`.
    #[inline(always)]
    pub(super) fn pop_before(&mut self, end: u64) -> Option<(u64, T)> {
        let message = self.messages.get(self.head).copied();
        let timer = self.timers.last().copied();
        let (from_messages, (t, _, ev)) = match (message, timer) {
            (Some(m), Some(t)) if (m.0, m.1) < (t.0, t.1) => (true, m),
            (_, Some(t)) => (false, t),
            (Some(m), None) => (true, m),
            (None, None) => return None,
        };
        if t >= end {
            return None;
        }
        if from_messages {
            self.head += 1;
            if self.head == self.messages.len() {
                self.messages.clear();
                self.head = 0;
            }
        } else {
            self.timers.pop();
        }
        Some((t, ev))
    }

    /// The events in flight in the order they will happen.
    pub(super) fn in_order(&self) -> impl Iterator<Item = (u64, T)> + '_ {
        let mut messages = self.messages[self.head..].iter().peekable();
        let mut timers = self.timers.iter().rev().peekable();
        std::iter::from_fn(move || {
            let first = match (messages.peek(), timers.peek()) {
                (Some(m), Some(t)) => (m.0, m.1) < (t.0, t.1),
                (m, _) => m.is_some(),
            };
            let &(t, _, ev) = if first { messages.next() } else { timers.next() }?;
            Some((t, ev))
        })
    }

    /// How many events are in flight.
    pub(super) fn len(&self) -> usize {
        self.messages.len() - self.head + self.timers.len()
    }
}

impl<T: Copy> Clone for Queue<T> {
    fn clone(&self) -> Self {
        Queue {
            messages: SmallVec::from_slice(&self.messages[self.head..]),
            head: 0,
            timers: SmallVec::from_slice(&self.timers),
            next: self.next,
        }
    }

    fn clone_from(&mut self, q: &Self) {
        self.messages.clear();
        self.messages.extend_from_slice(&q.messages[q.head..]);
        self.head = 0;
        self.timers.clear();
        self.timers.extend_from_slice(&q.timers);
        self.next = q.next;
    }
}

/// The commands of the messages in flight to the nodes, each kept once: a message
/// names its command by index, so that an event is 32 bytes, not the 88 a command
/// inline makes it (a client sends one command to every node, and a world's events
/// are copied with it). A slot is free again once no message names it. Which slot a
/// command is in is not state: the fingerprint feeds the command itself.
pub(super) struct Commands<C> {
    /// A command and how many messages name it. (A node paused for long holds back
    /// every message sent to it: hundreds of commands may be named at once.)
    slots: SmallVec<[(C, u32); COMMANDS]>,
}

/// Plain data is copied in one piece, not entry by entry.
impl<C: Copy> Clone for Commands<C> {
    fn clone(&self) -> Self {
        Commands {
            slots: SmallVec::from_slice(&self.slots),
        }
    }

    fn clone_from(&mut self, c: &Self) {
        self.slots.clear();
        self.slots.extend_from_slice(&c.slots);
    }
}

/// Commands in flight that fit inline (one or two rounds of each client).
const COMMANDS: usize = 3;

impl<C: Copy + PartialEq> Commands<C> {
    pub(super) fn new() -> Self {
        Commands {
            slots: SmallVec::new(),
        }
    }

    /// The index of `cmd`, for one more message that names it.
    pub(super) fn add(&mut self, cmd: C) -> u32 {
        let i = match self.slots.iter().position(|&(c, n)| n > 0 && c == cmd) {
            Some(i) => i,
            None => match self.slots.iter().position(|&(_, n)| n == 0) {
                Some(i) => {
                    self.slots[i].0 = cmd;
                    i
                }
                None => {
                    self.slots.push((cmd, 0));
                    self.slots.len() - 1
                }
            },
        };
        self.slots[i].1 += 1;
        u32::try_from(i).expect("at most 2^32 commands in flight")
    }

    /// The command at `i`, for a message that still names it.
    pub(super) fn get(&self, i: u32) -> C {
        self.slots[i as usize].0
    }

    /// The command at `i`, for a message that is delivered or lost: it names it no
    /// more.
    pub(super) fn take(&mut self, i: u32) -> C {
        let slot = &mut self.slots[i as usize];
        slot.1 -= 1;
        slot.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_pop_by_time_then_in_the_order_scheduled() {
        let mut q = Queue::new();
        q.push_timer(5, 'a');
        q.push_message(3, 'b');
        q.push_timer(5, 'c');
        q.push_timer(1, 'd');
        q.push_message(3, 'e');
        let all: Vec<_> = q.in_order().collect();
        assert_eq!(all, [(1, 'd'), (3, 'b'), (3, 'e'), (5, 'a'), (5, 'c')]);
        assert_eq!(q.pop_before(3), Some((1, 'd')));
        assert_eq!(q.pop_before(3), None);
        q.push_message(4, 'f');
        let order: Vec<_> = std::iter::from_fn(|| q.pop_before(u64::MAX)).collect();
        assert_eq!(order, [(3, 'b'), (3, 'e'), (4, 'f'), (5, 'a'), (5, 'c')]);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn a_command_is_kept_once_while_messages_name_it() {
        let mut c = Commands::new();
        let a = c.add('a');
        assert_eq!((c.add('a'), c.add('b')), (a, 1));
        assert_eq!(c.take(a), 'a');
        assert_eq!(c.take(a), 'a');
        // Slot 0 is free again.
        assert_eq!(c.add('c'), 0);
        assert_eq!((c.get(0), c.get(1)), ('c', 'b'));
    }

    #[test]
    fn a_long_queue_spills_and_keeps_its_order() {
        let mut q = Queue::new();
        for i in 0..40u64 {
            if i % 4 == 0 {
                q.push_timer(i / 3 + 1, i);
            } else {
                q.push_message(i / 3, i);
            }
            if i % 5 == 0 {
                q.pop_before(u64::MAX);
            }
        }
        let rest: Vec<_> = std::iter::from_fn(|| q.pop_before(u64::MAX)).collect();
        assert!(rest.windows(2).all(|w| w[0].0 <= w[1].0), "{rest:?}");
        assert_eq!(rest.len(), 40 - 8);
    }
}
