//! Random durations as a scenario writes them; [`Dist`] is what they resolve to.
//!
//! A scenario writes a distribution as a fixed duration (`"5ms"`), a uniform range
//! (`{ min = "1ms", max = "5ms" }`) or an exponential with a mean, optionally capped
//! (`{ mean = "5ms", max = "50ms" }`).

use super::duration::Dur;
use crate::rng::Dist;
use serde::Deserialize;

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
    fn resolve_rejects_inverted_ranges() {
        let raw = RawDist::Table(RawDistTable {
            min: Some(Dur(5)),
            max: Some(Dur(1)),
            mean: None,
        });
        assert!(raw.resolve("think").unwrap_err().contains("above max"));
    }
}
