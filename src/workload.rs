//! What a client wants to do: which lock, and how long to think and to hold.
//!
//! Each client has its own workload stream, so the choices of one client never depend
//! on how many random draws another made.

use crate::command::LockId;
use crate::rng::Rng;
use crate::scenario::Clients;
use rand::Rng as _;

pub struct Workload {
    rng: Rng,
    locks: u32,
    think: crate::scenario::Dist,
    hold: crate::scenario::Dist,
}

impl Workload {
    pub fn new(config: &Clients, rng: Rng) -> Self {
        Workload {
            rng,
            locks: config.locks,
            think: config.think,
            hold: config.hold,
        }
    }

    pub fn think_us(&mut self) -> u64 {
        self.think.sample(&mut self.rng)
    }

    pub fn hold_us(&mut self) -> u64 {
        self.hold.sample(&mut self.rng)
    }

    pub fn pick_lock(&mut self) -> LockId {
        LockId(self.rng.gen_range(0..self.locks))
    }
}
