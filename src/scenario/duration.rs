//! Durations as scenario files write them: `"250ms"`, `"2s"`, `"1.5s"`, `"10m"`, `"500us"`.
//!
//! Internally every time in lockstorm is an integer number of microseconds; this type is
//! only the parsing edge.

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A non-negative duration in microseconds, parsed from a string with a unit suffix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Dur(pub u64);

impl Dur {
    pub fn us(self) -> u64 {
        self.0
    }

    pub fn from_ms(ms: u64) -> Self {
        Dur(ms * 1_000)
    }

    /// A bare number: only 0 needs no unit.
    pub fn from_int(v: i64) -> Result<Dur, String> {
        if v == 0 {
            Ok(Dur(0))
        } else {
            Err(format!(
                "duration {v} has no unit: write it as a string, e.g. \"{v}ms\""
            ))
        }
    }

    pub fn parse(text: &str) -> Result<Dur, String> {
        let t = text.trim();
        if t.starts_with('-') {
            return Err(format!("duration {text:?} is negative"));
        }
        let split = t
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| format!("duration {text:?} has no unit (use us, ms, s or m)"))?;
        let (num, unit) = t.split_at(split);
        let value: f64 = num
            .parse()
            .map_err(|_| format!("duration {text:?} does not start with a number"))?;
        let scale = match unit.trim() {
            "us" | "µs" => 1.0,
            "ms" => 1e3,
            "s" => 1e6,
            "m" | "min" => 60e6,
            "h" => 3600e6,
            other => {
                return Err(format!(
                    "duration {text:?} has unknown unit {other:?} (use us, ms, s or m)"
                ))
            }
        };
        let us = value * scale;
        if !us.is_finite() || us > 1e15 {
            return Err(format!("duration {text:?} is too large"));
        }
        Ok(Dur(us.round() as u64))
    }
}

impl fmt::Display for Dur {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_us(self.0, f)
    }
}

/// Formats microseconds in the largest unit that keeps it exact-ish: `1.5s`, `250ms`.
pub fn fmt_us(us: u64, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    if us >= 1_000_000 {
        write!(f, "{}s", us as f64 / 1e6)
    } else if us >= 1_000 {
        write!(f, "{}ms", us as f64 / 1e3)
    } else {
        write!(f, "{us}us")
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a duration string such as \"250ms\", \"2s\" or \"10m\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Dur, E> {
                Dur::parse(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Dur, E> {
                Dur::from_int(v).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

/// A signed duration for clock jumps: `"+12s"`, `"-3s"`, or `"12s"` (forward).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SignedDur(pub i64);

impl SignedDur {
    pub fn parse(text: &str) -> Result<SignedDur, String> {
        let t = text.trim();
        let (sign, rest) = match t.strip_prefix('-') {
            Some(rest) => (-1, rest),
            None => (1, t.strip_prefix('+').unwrap_or(t)),
        };
        let d = Dur::parse(rest).map_err(|e| e.replace(&format!("{rest:?}"), &format!("{text:?}")))?;
        Ok(SignedDur(sign * d.us().min(i64::MAX as u64) as i64))
    }
}

impl<'de> Deserialize<'de> for SignedDur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        SignedDur::parse(&text).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit() {
        assert_eq!(Dur::parse("250ms"), Ok(Dur(250_000)));
        assert_eq!(Dur::parse("2s"), Ok(Dur(2_000_000)));
        assert_eq!(Dur::parse("1.5s"), Ok(Dur(1_500_000)));
        assert_eq!(Dur::parse("10m"), Ok(Dur(600_000_000)));
        assert_eq!(Dur::parse("500us"), Ok(Dur(500)));
        assert_eq!(Dur::parse("0s"), Ok(Dur(0)));
    }

    #[test]
    fn rejects_negative_unitless_and_unknown_units() {
        assert!(Dur::parse("-1s").unwrap_err().contains("negative"));
        assert!(Dur::parse("10").unwrap_err().contains("no unit"));
        assert!(Dur::parse("10 parsecs").unwrap_err().contains("unknown unit"));
        assert!(Dur::parse("ms").is_err());
    }

    #[test]
    fn signed_durations_take_a_sign() {
        assert_eq!(SignedDur::parse("+12s"), Ok(SignedDur(12_000_000)));
        assert_eq!(SignedDur::parse("-3s"), Ok(SignedDur(-3_000_000)));
        assert_eq!(SignedDur::parse("250ms"), Ok(SignedDur(250_000)));
        assert!(SignedDur::parse("--3s").is_err());
        assert!(SignedDur::parse("-3").unwrap_err().contains("no unit"));
    }

    #[test]
    fn displays_in_a_readable_unit() {
        assert_eq!(Dur(1_500_000).to_string(), "1.5s");
        assert_eq!(Dur(250_000).to_string(), "250ms");
        assert_eq!(Dur(7).to_string(), "7us");
    }
}
