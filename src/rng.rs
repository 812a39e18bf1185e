//! Seed splitting: one `u64` run seed derives every random stream of a run.
//!
//! Each component (a client's workload, a client's algorithm, the network, the nemesis)
//! gets its own ChaCha stream, derived from the run seed, a component name and an index.
//! Adding a draw to one component therefore never shifts the draws of another, which
//! keeps histories comparable across small code changes.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

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
}
