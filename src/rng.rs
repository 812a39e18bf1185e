//! Randomness: one `u64` run seed derives every random stream of a run, and the
//! distributions ([`Dist`]) that think, hold, latency and retry times are drawn from.
//!
//! Each component (a client's workload, a client's algorithm, the network, the nemesis)
//! gets its own ChaCha stream, derived from the run seed, a component name and an index.
//! Adding a draw to one component therefore never shifts the draws of another, which
//! keeps histories comparable across small code changes.

use rand::{Rng as _, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The RNG used everywhere in lockstorm.
pub type Rng = ChaCha8Rng;

/// A stream for `component` number `index` of the run seeded with `seed`.
pub fn split(seed: u64, component: &str, index: u64) -> Rng {
    let mut h = splitmix(seed);
    for b in component.bytes() {
        h = splitmix(h ^ u64::from(b));
    }
    h = splitmix(h ^ index);
    Rng::seed_from_u64(h)
}

/// SplitMix64's finaliser: a cheap, well-mixed bijection on u64.
fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A resolved distribution over microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "dist", rename_all = "snake_case")]
pub enum Dist {
    Fixed { us: u64 },
    Uniform { min_us: u64, max_us: u64 },
    Exponential { mean_us: u64, max_us: u64 },
}

/// Zero: the value of a distribution a scenario leaves unused.
impl Default for Dist {
    fn default() -> Self {
        Dist::fixed(0)
    }
}

impl Dist {
    pub fn fixed(us: u64) -> Self {
        Dist::Fixed { us }
    }

    pub fn uniform(min_us: u64, max_us: u64) -> Self {
        Dist::Uniform { min_us, max_us }
    }

    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match *self {
            Dist::Fixed { us } => us,
            Dist::Uniform { min_us, max_us } => rng.gen_range(min_us..=max_us),
            Dist::Exponential { mean_us, max_us } => {
                let u: f64 = rng.gen_range(f64::EPSILON..1.0);
                ((-u.ln() * mean_us as f64) as u64).min(max_us)
            }
        }
    }

    /// The mean of the values drawn, each taken as at least `floor_us` (a draw of 0
    /// where a gap between events must be at least 1 us).
    pub fn mean_us(&self, floor_us: u64) -> f64 {
        let floor = floor_us as f64;
        match *self {
            Dist::Fixed { us } => (us as f64).max(floor),
            Dist::Uniform { min_us, max_us } => (min_us as f64 + max_us as f64) / 2.0,
            Dist::Exponential { mean_us, max_us } => {
                // E[min(X, max)] for an exponential X: mean * (1 - e^(-max/mean)).
                let (mean, max) = (mean_us as f64, max_us as f64);
                if mean == 0.0 {
                    0.0
                } else {
                    mean * (1.0 - (-max / mean).exp())
                }
            }
        }
        .max(floor)
    }

    /// The largest value this distribution can produce.
    pub fn max_us(&self) -> u64 {
        match *self {
            Dist::Fixed { us } => us,
            Dist::Uniform { max_us, .. } | Dist::Exponential { max_us, .. } => max_us,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngCore;

    #[test]
    fn streams_differ_by_component_and_index_but_not_by_call() {
        let a = split(7, "client", 0).next_u64();
        assert_eq!(a, split(7, "client", 0).next_u64());
        assert_ne!(a, split(7, "client", 1).next_u64());
        assert_ne!(a, split(7, "network", 0).next_u64());
        assert_ne!(a, split(8, "client", 0).next_u64());
    }

    #[test]
    fn samples_stay_in_range() {
        let mut rng = crate::rng::split(1, "t", 0);
        let u = Dist::uniform(10, 20);
        let e = Dist::Exponential {
            mean_us: 100,
            max_us: 300,
        };
        for _ in 0..1000 {
            assert!((10..=20).contains(&u.sample(&mut rng)));
            assert!(e.sample(&mut rng) <= 300);
        }
        assert_eq!(Dist::fixed(5).sample(&mut rng), 5);
    }

    #[test]
    fn the_mean_matches_the_draws() {
        let mut rng = crate::rng::split(1, "t", 0);
        for d in [
            Dist::uniform(10, 30),
            Dist::Exponential {
                mean_us: 100,
                max_us: 50,
            },
            Dist::Exponential {
                mean_us: 100,
                max_us: 10_000,
            },
        ] {
            let n = 20_000;
            let drawn = (0..n).map(|_| d.sample(&mut rng) as f64).sum::<f64>() / n as f64;
            let mean = d.mean_us(0);
            assert!(
                (drawn - mean).abs() < mean * 0.05,
                "{d:?}: drew {drawn}, mean {mean}"
            );
        }
        assert_eq!(Dist::fixed(0).mean_us(1), 1.0, "a zero gap counts as the floor");
    }
}
