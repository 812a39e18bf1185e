//! Random durations as a scenario writes them; [`Dist`] is what they resolve to.
//!
//! A scenario writes a distribution as a fixed duration (`"5ms"`), a uniform range
//! (`{ min = "1ms", max = "5ms" }`) or an exponential with a mean, optionally capped
//! (`{ mean = "5ms", max = "50ms" }`).

use super::duration::Dur;
use super::{invalid, Invalid};
use crate::rng::Dist;
use serde::Deserialize;
use serde_untagged::UntaggedEnumVisitor;

/// A distribution as written in a scenario file.
#[derive(Clone, Debug)]
pub enum RawDist {
    Fixed(Dur),
    Table(RawDistTable),
}

/// Written by hand (with `serde_untagged`) so a wrong type says what is expected.
impl<'de> Deserialize<'de> for RawDist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        UntaggedEnumVisitor::new()
            .expecting(
                "a duration such as \"5ms\", a range { min = \"1ms\", max = \"5ms\" } \
                 or an exponential { mean = \"5ms\", max = \"50ms\" }",
            )
            .string(|s| Dur::parse(s).map(RawDist::Fixed).map_err(Error::custom))
            .i64(|n| Dur::from_int(n).map(RawDist::Fixed).map_err(Error::custom))
            .map(|m| m.deserialize().map(RawDist::Table))
            .deserialize(d)
    }
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
    pub(crate) fn resolve(&self, what: &str) -> Result<Dist, Invalid> {
        match self {
            RawDist::Fixed(d) => Ok(Dist::fixed(d.us())),
            RawDist::Table(t) => match (t.min, t.max, t.mean) {
                (min, Some(max), None) => {
                    let min = min.unwrap_or_default();
                    if min > max {
                        return Err(invalid(what, format!("{what}: min {min} is above max {max}")));
                    }
                    Ok(Dist::uniform(min.us(), max.us()))
                }
                (None, max, Some(mean)) => Ok(Dist::Exponential {
                    mean_us: mean.us(),
                    max_us: max.map_or(mean.us().saturating_mul(20), Dur::us),
                }),
                _ => Err(invalid(
                    what,
                    format!(
                        "{what}: write a duration, {{ min = .., max = .. }} or {{ mean = .., max = .. }}"
                    ),
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
        assert!(raw.resolve("think").unwrap_err().message.contains("above max"));
    }
}
