//! Random durations: think times, hold times, network latency, retry delays.
//!
//! A scenario writes a distribution as a fixed duration (`"5ms"`), a uniform range
//! (`{ min = "1ms", max = "5ms" }`) or an exponential with a mean, optionally capped
//! (`{ mean = "5ms", max = "50ms" }`).

use super::duration::Dur;
use crate::rng::Rng;
use rand::Rng as _;
use serde::{Deserialize, Serialize};

/// A resolved distribution over microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
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

    /// The largest value this distribution can produce.
    pub fn max_us(&self) -> u64 {
        match *self {
            Dist::Fixed { us } => us,
            Dist::Uniform { max_us, .. } | Dist::Exponential { max_us, .. } => max_us,
        }
    }
}

/// A distribution as written in a scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum RawDist {
    Fixed(Dur),
    Table(RawDistTable),
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawDistTable {
    pub min: Option<Dur>,
    pub max: Option<Dur>,
    pub mean: Option<Dur>,
}

impl RawDist {
    /// Resolves to a [`Dist`], or explains why the table is not one.
    pub fn resolve(&self, what: &str) -> Result<Dist, String> {
        match self {
            RawDist::Fixed(d) => Ok(Dist::fixed(d.us())),
            RawDist::Table(t) => match (t.min, t.max, t.mean) {
                (min, Some(max), None) => {
                    let min = min.unwrap_or_default();
                    if min > max {
                        return Err(format!("{what}: min {min} is above max {max}"));
                    }
                    Ok(Dist::uniform(min.us(), max.us()))
                }
                (None, max, Some(mean)) => Ok(Dist::Exponential {
                    mean_us: mean.us(),
                    max_us: max.map_or(mean.us().saturating_mul(20), Dur::us),
                }),
                _ => Err(format!(
                    "{what}: write a duration, {{ min = .., max = .. }} or {{ mean = .., max = .. }}"
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn resolve_rejects_inverted_ranges() {
        let raw = RawDist::Table(RawDistTable {
            min: Some(Dur(5)),
            max: Some(Dur(1)),
            mean: None,
        });
        assert!(raw.resolve("think").unwrap_err().contains("above max"));
    }
}
