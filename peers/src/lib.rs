//! Peer benchmarks for lockstorm: the workloads of two shipped scenarios written for
//! the tools a Rust engineer would pick instead, so that `lockstorm bench --sim --peer`
//! can print lockstorm's speed beside theirs on the same machine in one run.
//!
//! - `turmoil_partition` (turmoil 0.7): scenarios/partition.toml's workload: 5 nodes,
//!   20 Redlock clients on 2 locks, random partitions between clients and nodes.
//!   Prints lock operations simulated per wall second.
//! - `stateright_clock_jump` (Stateright 0.31): the scope `lockstorm explore` takes
//!   from scenarios/node-clock-jump.toml, as a Stateright model. Prints distinct
//!   states per wall second, and the states and counterexample it found.
//!
//! Each binary prints one JSON line on stdout. The Redlock rules both follow (seed
//! 002, as lockstorm's `algorithm/redlock.rs` implements them) are here, once.
//!
//! This crate is outside lockstorm's build (its own workspace and lock file), so
//! lockstorm's build and CI never compile turmoil or Stateright.

/// `drift = ttl·drift_factor + 2 ms` (seed 002), in microseconds.
pub fn drift_us(ttl_us: u64, drift_factor: f64) -> u64 {
    (ttl_us as f64 * drift_factor) as u64 + 2_000
}

/// A Redlock attempt that began at `t1_us` and ended at `now_us` with `granted`
/// nodes: the client's validity deadline if it holds the lock (a quorum granted and
/// `validity = ttl − elapsed − drift` is positive), else `None`.
pub fn acquired_until(
    t1_us: u64,
    now_us: u64,
    granted: usize,
    quorum: usize,
    ttl_us: u64,
    drift_us: u64,
) -> Option<u64> {
    let elapsed = now_us - t1_us;
    let validity = ttl_us as i64 - elapsed as i64 - drift_us as i64;
    (granted >= quorum && validity > 0).then_some(t1_us + ttl_us - drift_us)
}

/// The median of `samples` (the upper one of an even count).
pub fn median(samples: &mut [f64]) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// `--name VALUE` from the command line, parsed, or `default`; a bad value exits 2.
pub fn flag<T: std::str::FromStr>(name: &str, default: T) -> T {
    let args: Vec<String> = std::env::args().collect();
    match args.iter().position(|a| a == name) {
        None => default,
        Some(i) => match args.get(i + 1).and_then(|v| v.parse().ok()) {
            Some(v) => v,
            None => {
                eprintln!("error: {name} needs a number");
                std::process::exit(2);
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity_follows_seed_002() {
        let drift = drift_us(10_000_000, 0.01);
        assert_eq!(drift, 102_000);
        // Timed out on two nodes: 20 ms elapsed, as lockstorm's explorer's client 0.
        assert_eq!(
            acquired_until(2_500_000, 2_520_000, 3, 3, 10_000_000, drift),
            Some(12_398_000)
        );
        assert_eq!(acquired_until(0, 20_000, 2, 3, 10_000_000, drift), None);
        assert_eq!(acquired_until(0, 9_898_000, 3, 3, 10_000_000, drift), None);
    }
}
