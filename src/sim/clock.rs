//! A process's clock in the simulator: true time in, the process's readings out.
//!
//! A clock is piecewise linear in true time: from an anchor it advances at `rate_ppm`
//! (parts per million above or below true time). The monotonic reading only follows the
//! rate; the wall reading adds an offset that jumps can move. The inverse
//! ([`Clock::true_at_mono`]) turns a client's timer or validity deadline into true time.

/// Wall clocks start near 2023-11-14 so timestamps look like Unix times in microseconds.
pub const WALL_EPOCH_US: u64 = 1_700_000_000_000_000;

#[derive(Clone, Debug, Hash)]
pub struct Clock {
    anchor_true_us: u64,
    anchor_mono_us: u64,
    /// Rate deviation in parts per million: 20_000 runs 2% fast.
    rate_ppm: i64,
    /// Wall reading minus monotonic reading.
    offset_us: i64,
}

impl Default for Clock {
    fn default() -> Self {
        Clock {
            anchor_true_us: 0,
            anchor_mono_us: 0,
            rate_ppm: 0,
            offset_us: WALL_EPOCH_US as i64,
        }
    }
}

impl Clock {
    pub fn mono(&self, true_us: u64) -> u64 {
        if self.rate_ppm == 0 {
            // The common case, without 128-bit division.
            return self.anchor_mono_us + true_us.saturating_sub(self.anchor_true_us);
        }
        let dt = true_us.saturating_sub(self.anchor_true_us) as i128;
        let scaled = dt * (1_000_000 + self.rate_ppm as i128) / 1_000_000;
        (self.anchor_mono_us as i128 + scaled) as u64
    }

    pub fn wall(&self, true_us: u64) -> u64 {
        (self.mono(true_us) as i64 + self.offset_us).max(0) as u64
    }

    /// The earliest true time at which the monotonic reading is at least `mono_us`.
    pub fn true_at_mono(&self, mono_us: u64) -> u64 {
        if self.rate_ppm == 0 {
            return self.anchor_true_us + mono_us.saturating_sub(self.anchor_mono_us);
        }
        let dm = mono_us.saturating_sub(self.anchor_mono_us) as i128;
        let rate = 1_000_000 + self.rate_ppm as i128;
        let dt = (dm * 1_000_000 + rate - 1) / rate;
        self.anchor_true_us + dt as u64
    }

    /// The earliest true time at which the wall reading is at least `wall_us`, as the
    /// clock now runs (a jump or rate change before that is not undone).
    pub fn true_at_wall(&self, wall_us: u64) -> u64 {
        self.true_at_mono((wall_us as i64 - self.offset_us).max(0) as u64)
    }

    /// The rate the clock runs at, in parts per million above true time.
    pub fn rate_ppm(&self) -> i64 {
        self.rate_ppm
    }

    /// From true time `now_us` on, run at `rate_ppm`.
    pub fn set_rate(&mut self, now_us: u64, rate_ppm: i64) {
        self.anchor_mono_us = self.mono(now_us);
        self.anchor_true_us = now_us;
        self.rate_ppm = rate_ppm;
    }

    /// Moves the wall reading by `delta_us` (a step of NTP, or an operator's mistake).
    pub fn jump(&mut self, delta_us: i64) {
        self.offset_us += delta_us;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_perfect_clock_reads_true_time() {
        let c = Clock::default();
        assert_eq!(c.mono(1_234), 1_234);
        assert_eq!(c.wall(1_234), WALL_EPOCH_US + 1_234);
        assert_eq!(c.true_at_mono(99), 99);
    }

    #[test]
    fn rate_and_jump_move_readings_and_the_inverse_follows() {
        let mut c = Clock::default();
        c.set_rate(1_000_000, 20_000);
        assert_eq!(c.mono(2_000_000), 2_020_000);
        assert_eq!(c.true_at_mono(2_020_000), 2_000_000);
        c.jump(-500);
        assert_eq!(c.wall(2_000_000), WALL_EPOCH_US + 2_019_500);
        assert_eq!(
            c.mono(2_000_000),
            2_020_000,
            "a jump leaves the monotonic clock alone"
        );
        for m in [1_000_001, 1_500_000, 3_333_333] {
            let t = c.true_at_mono(m);
            assert!(c.mono(t) >= m && c.mono(t - 1) < m, "inverse of {m}");
        }
    }
}
