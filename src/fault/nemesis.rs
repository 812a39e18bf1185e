//! The random nemesis: for each fault kind a scenario turns on, when faults of that kind
//! start, how long they last, and whom they hit, all drawn from the run seed.
//!
//! Each kind draws from its own stream (`nemesis`, kind number), so turning one kind on
//! or off never changes the faults another kind plans for the same seed.

use super::{CutDirection, Fault, Origin, PlannedFault};
use crate::limits::MAX_DRAWN_FAULTS;
use crate::rng::Dist;
use crate::rng::Rng;
use rand::seq::SliceRandom;
use rand::Rng as _;
use serde::Serialize;

/// Random fault injection: per fault kind, how often it starts and how long it lasts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Nemesis {
    /// Random nodes cut off from random clients (both ways).
    pub partition: Option<NemesisRate>,
    /// A random node crashes; `duration` is its restart delay.
    pub crash: Option<NemesisRate>,
    /// Whether nemesis crashes are power losses.
    pub crash_power_loss: bool,
    /// A random node or client pauses (clients at once, at no particular point).
    pub pause: Option<NemesisRate>,
    /// A random node's or client's wall clock steps by up to `clock_jump_max_us` either
    /// way (the rate's `duration` is unused: a jump is instantaneous).
    pub clock_jump: Option<NemesisRate>,
    pub clock_jump_max_us: u64,
    /// A random node's or client's clock runs at a rate drawn from
    /// `1 ± clock_rate_max_deviation`.
    pub clock_rate: Option<NemesisRate>,
    pub clock_rate_max_deviation: f64,
    /// Random links get `delay_extra` more latency.
    pub delay: Option<NemesisRate>,
    pub delay_extra: Dist,
    /// Random links lose messages with `loss_probability`.
    pub loss: Option<NemesisRate>,
    pub loss_probability: f64,
    /// A random replicated node fails over (needs `[replication]`); `duration` is the
    /// time until the replica is promoted.
    pub failover: Option<NemesisRate>,
}

/// Gaps between starts and durations of one random fault kind.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct NemesisRate {
    pub interval: Dist,
    pub duration: Dist,
    /// Aimed: each drawn fault waits, from its drawn time, for the aim's trigger, and
    /// takes the aim's relative targets in place of drawn ones ([`super::aim`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aim: Option<super::Aim>,
}

impl Nemesis {
    /// Each kind turned on, with its name, its rate and its stream number.
    fn kinds(&self) -> impl Iterator<Item = (&'static str, NemesisRate, u64)> {
        [
            ("partition", self.partition),
            ("crash", self.crash),
            ("pause", self.pause),
            ("clock_jump", self.clock_jump),
            ("clock_rate", self.clock_rate),
            ("delay", self.delay),
            ("loss", self.loss),
            ("failover", self.failover),
        ]
        .into_iter()
        .zip(0..)
        .filter_map(|((name, rate), kind)| rate.map(|r| (name, r, kind)))
    }

    /// How many faults of each kind turned on a run of `duration_us` plans on average:
    /// the run's length over the mean gap between two starts (at least 1 us).
    pub fn expected_faults(&self, duration_us: u64) -> Vec<(&'static str, f64)> {
        self.kinds()
            .map(|(name, rate, _)| (name, duration_us as f64 / rate.interval.mean_us(1)))
            .collect()
    }

    /// Draws the random faults of a run of `duration_us`, numbered from `first_id`, in
    /// order of kind then time. The work is linear in the faults drawn, and they stop at
    /// [`MAX_DRAWN_FAULTS`] (a scenario is refused long before, see
    /// [`Nemesis::expected_faults`]).
    pub fn plan(
        &self,
        seed: u64,
        duration_us: u64,
        nodes: usize,
        clients: usize,
        first_id: usize,
    ) -> Vec<PlannedFault> {
        let mut out = Vec::new();
        for (_, rate, kind) in self.kinds() {
            let mut rng = crate::rng::split(seed, "nemesis", kind);
            let mut t = rate.interval.sample(&mut rng);
            while t < duration_us && out.len() < MAX_DRAWN_FAULTS {
                let fault = self.draw(kind, &mut rng, nodes, clients);
                let duration_us = match fault {
                    Fault::ClockJump { .. } => Some(0),
                    _ => Some(rate.duration.sample(&mut rng).max(1)),
                };
                out.push(PlannedFault {
                    id: first_id + out.len(),
                    at_us: t,
                    duration_us,
                    origin: Origin::Nemesis,
                    fault,
                    aim: rate.aim,
                    firing: None,
                });
                t = t.saturating_add(rate.interval.sample(&mut rng).max(1));
            }
        }
        out
    }

    fn draw(&self, kind: u64, rng: &mut Rng, nodes: usize, clients: usize) -> Fault {
        match kind {
            0 => Fault::Partition {
                nodes: pick(rng, nodes),
                clients: pick(rng, clients),
                direction: CutDirection::Both,
            },
            1 => Fault::Crash {
                node: rng.gen_range(0..nodes),
                power_loss: self.crash_power_loss,
            },
            2 => {
                let (node, client) = process(rng, nodes, clients);
                Fault::Pause {
                    node,
                    client,
                    point: None,
                }
            }
            3 => {
                let (node, client) = process(rng, nodes, clients);
                let max = self.clock_jump_max_us.min(i64::MAX as u64) as i64;
                Fault::ClockJump {
                    node,
                    client,
                    by_us: rng.gen_range(-max..=max),
                }
            }
            4 => {
                let (node, client) = process(rng, nodes, clients);
                let d = self.clock_rate_max_deviation;
                // Rounded to parts per million so histories print short numbers.
                let rate = (rng.gen_range(1.0 - d..=1.0 + d) * 1e6).round() / 1e6;
                Fault::ClockRate { node, client, rate }
            }
            5 => Fault::Delay {
                nodes: pick(rng, nodes),
                clients: pick(rng, clients),
                extra_us: self.delay_extra.sample(rng),
            },
            6 => Fault::Loss {
                nodes: pick(rng, nodes),
                clients: pick(rng, clients),
                probability: self.loss_probability,
            },
            _ => Fault::Failover {
                node: rng.gen_range(0..nodes),
            },
        }
    }
}

/// A random non-empty subset of `0..n`, sorted so the history reads the same for the
/// same draw.
fn pick(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut all: Vec<usize> = (0..n).collect();
    all.shuffle(rng);
    let k = rng.gen_range(1..=n);
    let mut chosen = all[..k].to_vec();
    chosen.sort_unstable();
    chosen
}

/// A random node or client, each process equally likely.
fn process(rng: &mut Rng, nodes: usize, clients: usize) -> (Option<usize>, Option<usize>) {
    let i = rng.gen_range(0..nodes + clients);
    if i < nodes {
        (Some(i), None)
    } else {
        (None, Some(i - nodes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate() -> Option<NemesisRate> {
        Some(NemesisRate {
            interval: Dist::uniform(1_000, 5_000),
            duration: Dist::fixed(2_000),
            aim: None,
        })
    }

    #[test]
    fn nemesis_plan_is_seeded_and_inside_the_run() {
        let nemesis = Nemesis {
            partition: rate(),
            ..Nemesis::default()
        };
        let plan = |seed| nemesis.plan(seed, 100_000, 5, 3, 0);
        let a = plan(1);
        assert_eq!(a, plan(1));
        assert_ne!(a, plan(2));
        assert!(a.len() >= 19, "{} faults", a.len());
        for f in &a {
            assert!(f.at_us < 100_000);
            let Fault::Partition { nodes, clients, .. } = &f.fault else {
                panic!("only partitions were asked for: {f:?}")
            };
            assert!(!nodes.is_empty() && nodes.iter().all(|&n| n < 5));
            assert!(!clients.is_empty() && clients.iter().all(|&c| c < 3));
        }
    }

    #[test]
    fn turning_a_kind_on_leaves_the_other_kinds_draws_alone() {
        let only = Nemesis {
            partition: rate(),
            ..Nemesis::default()
        };
        let both = Nemesis {
            partition: rate(),
            crash: rate(),
            clock_jump: rate(),
            clock_jump_max_us: 1_000_000,
            ..Nemesis::default()
        };
        let a = only.plan(3, 100_000, 5, 3, 0);
        let b = both.plan(3, 100_000, 5, 3, 0);
        assert_eq!(a[..], b[..a.len()], "partitions come first and are the same");
        assert!(b[a.len()..].iter().any(|f| f.fault.kind() == "crash"));
        for f in &b {
            match &f.fault {
                Fault::Crash { node, .. } => assert!(*node < 5),
                Fault::ClockJump { by_us, node, client } => {
                    assert!(by_us.abs() <= 1_000_000);
                    assert!(node.is_some() != client.is_some());
                    assert_eq!(f.duration_us, Some(0), "a jump is instantaneous");
                }
                Fault::Partition { .. } => {}
                other => panic!("not asked for: {other:?}"),
            }
        }
    }

    #[test]
    fn a_plan_stops_at_the_drawn_fault_limit_and_its_average_is_known() {
        let nemesis = Nemesis {
            partition: Some(NemesisRate {
                interval: Dist::fixed(1),
                duration: Dist::fixed(10),
                aim: None,
            }),
            ..Nemesis::default()
        };
        // A 1 us interval over 10 s would be ten million faults.
        let plan = nemesis.plan(1, 10_000_000, 5, 3, 0);
        assert_eq!(plan.len(), MAX_DRAWN_FAULTS);
        assert_eq!(nemesis.expected_faults(10_000_000), vec![("partition", 1e7)]);
    }
}
