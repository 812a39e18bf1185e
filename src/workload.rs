//! What a client wants to do: which lock, in which mode, and how long to think and to hold.
//!
//! Each client has its own workload stream, so the choices of one client never depend
//! on how many random draws another made.

use crate::algorithm::Mode;
use crate::command::LockId;
use crate::rng::Rng;
use crate::scenario::Clients;
use rand::Rng as _;

pub struct Workload {
    rng: Rng,
    locks: u32,
    think: crate::scenario::Dist,
    hold: crate::scenario::Dist,
    /// Read-write lock: the share of read acquisitions; `None` for exclusive locks.
    read_share: Option<f64>,
    /// The probe client's own lock, which it always takes (in the probe mode).
    own_lock: Option<LockId>,
}

impl Workload {
    /// A workload stream; `read_write` says whether the lock has read and write modes.
    pub fn new(config: &Clients, read_write: bool, rng: Rng) -> Self {
        Workload {
            rng,
            locks: config.locks,
            think: config.think,
            hold: config.hold,
            read_share: read_write.then_some(config.read_share),
            own_lock: None,
        }
    }

    /// The probe client's stream: always `lock`, in the mode that conflicts with
    /// everything, with the probe's think and hold times.
    pub fn probe(probe: &crate::scenario::Probe, lock: LockId, read_write: bool, rng: Rng) -> Self {
        Workload {
            rng,
            locks: 1,
            think: probe.think,
            hold: probe.hold,
            read_share: read_write.then_some(0.0),
            own_lock: Some(lock),
        }
    }

    /// The mode of the next acquisition. Exclusive locks draw nothing, so their streams
    /// are the same as before read-write locks existed.
    pub fn pick_mode(&mut self) -> Mode {
        if self.own_lock.is_some() {
            return self.probe_mode();
        }
        match self.read_share {
            None => Mode::Exclusive,
            Some(share) if self.rng.gen_bool(share) => Mode::Read,
            Some(_) => Mode::Write,
        }
    }

    /// The mode a liveness probe takes: the one that conflicts with everything.
    pub fn probe_mode(&self) -> Mode {
        if self.read_share.is_some() {
            Mode::Write
        } else {
            Mode::Exclusive
        }
    }

    pub fn think_us(&mut self) -> u64 {
        self.think.sample(&mut self.rng)
    }

    pub fn hold_us(&mut self) -> u64 {
        self.hold.sample(&mut self.rng)
    }

    pub fn pick_lock(&mut self) -> LockId {
        if let Some(lock) = self.own_lock {
            return lock;
        }
        LockId(self.rng.gen_range(0..self.locks))
    }
}
