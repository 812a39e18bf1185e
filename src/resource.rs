//! The guarded resource of Kleppmann's analysis: the storage a lock protects.
//!
//! Clients that believe they hold a lock write to it. With fencing, it remembers the
//! largest fencing token it accepted per lock and rejects a write carrying an older one;
//! without fencing it accepts everything. Both drivers (the simulator and the real
//! backend) keep one and record every write it judges as a `write` history event, which
//! the checker's resource-level model then judges.

use crate::command::{LockId, Token};
use crate::history::{Event, Names, ResourceWrite};
use std::collections::BTreeMap;

#[derive(Debug, Default)]
pub struct GuardedResource {
    /// Per lock, the largest fencing token accepted so far.
    last_fence: BTreeMap<LockId, u64>,
}

impl GuardedResource {
    /// Applies or rejects a write arriving at true time `t_us`; the event says which,
    /// naming the lock from the driver's `names`.
    pub fn write(
        &mut self,
        names: &mut Names,
        t_us: u64,
        client: usize,
        lock: LockId,
        token: Token,
        fence: Option<u64>,
    ) -> Event {
        let accepted = match (fence, self.last_fence.get(&lock)) {
            (Some(f), Some(&last)) => f >= last,
            _ => true,
        };
        if let (true, Some(f)) = (accepted, fence) {
            self.last_fence.insert(lock, f);
        }
        Event::Write(ResourceWrite {
            t_us,
            client,
            lock: names.lock(lock),
            token: token.into(),
            fence,
            accepted,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(e: Event) -> bool {
        match e {
            Event::Write(w) => w.accepted,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn rejects_an_older_fencing_token_per_lock_and_accepts_unfenced_writes() {
        let mut r = GuardedResource::default();
        let names = &mut Names::default();
        assert!(accepted(r.write(names, 0, 0, LockId(0), Token(1), Some(5))));
        assert!(
            !accepted(r.write(names, 1, 1, LockId(0), Token(2), Some(4))),
            "stale token"
        );
        assert!(
            accepted(r.write(names, 2, 1, LockId(1), Token(2), Some(4))),
            "another lock"
        );
        assert!(
            accepted(r.write(names, 3, 0, LockId(0), Token(1), Some(5))),
            "the same token again"
        );
        assert!(
            accepted(r.write(names, 4, 2, LockId(0), Token(3), None)),
            "no fencing, no check"
        );
    }
}
