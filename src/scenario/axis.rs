//! One axis of a sweep: a scenario key and the values it takes, parsed from
//! `--vary KEY=SPEC`.
//!
//! SPEC is a range `FROM..TO:N` (N values spaced linearly, both ends included) of
//! durations (`10ms..2s:20`), numbers (`0..0.05:11`) or integers (`1..9:5`), or a list
//! `A,B,...` of any values (`false,true`, `parallel,sequential`). Each value is applied
//! to the scenario as an [`Override`], so every key works and the file's validation
//! judges the value. Values are rounded to what their label says (microseconds for
//! durations, a few significant digits for numbers), so a cell's rerun command, which
//! carries the labels, runs exactly that cell.

use crate::scenario::overrides::parse_value;
use crate::scenario::{Dur, Override};
use serde::{Deserialize, Serialize};
use toml_edit::Value;

/// At most this many values on one axis.
pub const MAX_VALUES: usize = 1_000;

/// What an axis's values are, for plotting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AxisKind {
    /// Durations, plotted in milliseconds.
    Duration,
    /// Numbers, plotted as they are.
    Number,
    /// Anything else (a list of booleans or words), plotted one slot per value.
    Category,
}

/// A swept key and its values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// The `--vary` argument, as given.
    pub arg: String,
    pub key: String,
    pub kind: AxisKind,
    /// Each value as written into the scenario and shown in sweep.csv.
    pub labels: Vec<String>,
    /// Each value's position on the plot: milliseconds, the number, or its index.
    pub xs: Vec<f64>,
}

impl Axis {
    /// Parses `KEY=SPEC`.
    pub fn parse(arg: &str) -> Result<Axis, String> {
        let (key, spec) = arg
            .split_once('=')
            .ok_or_else(|| format!("--vary {arg:?}: write KEY=FROM..TO:N or KEY=A,B,..."))?;
        let key = key.trim().to_string();
        let spec = spec.trim();
        // The key must be one an override can take.
        Override::new(&key, Value::from(0)).map_err(|e| format!("--vary {arg}: {e}"))?;
        let (kind, labels, xs) = match spec.split_once("..") {
            Some((from, rest)) => {
                let (to, n) = rest
                    .rsplit_once(':')
                    .ok_or_else(|| format!("--vary {arg}: a range needs a count, e.g. {from}..{rest}:10"))?;
                let n: usize = n
                    .trim()
                    .parse()
                    .map_err(|_| format!("--vary {arg}: {n:?} is not a count of values"))?;
                range(from.trim(), to.trim(), n).map_err(|e| format!("--vary {arg}: {e}"))?
            }
            None => list(spec),
        };
        if labels.len() < 2 {
            return Err(format!(
                "--vary {arg}: an axis needs at least 2 values (--set sets one)"
            ));
        }
        if labels.len() > MAX_VALUES {
            return Err(format!(
                "--vary {arg}: {} values; at most {MAX_VALUES}",
                labels.len()
            ));
        }
        Ok(Axis {
            arg: arg.to_string(),
            key,
            kind,
            labels,
            xs,
        })
    }

    /// The setting that gives the axis its `i`-th value.
    pub fn value(&self, i: usize) -> Override {
        Override::new(&self.key, parse_value(&self.labels[i])).expect("the key was checked")
    }

    /// The axis title on a plot.
    pub fn title(&self) -> String {
        match self.kind {
            AxisKind::Duration => format!("{} (ms)", self.key),
            _ => self.key.clone(),
        }
    }
}

type Values = (AxisKind, Vec<String>, Vec<f64>);

fn list(spec: &str) -> Values {
    let labels: Vec<String> = spec.split(',').map(|s| s.trim().to_string()).collect();
    let numbers: Option<Vec<f64>> = labels
        .iter()
        .map(|l| {
            parse_value(l)
                .as_float()
                .or(parse_value(l).as_integer().map(|i| i as f64))
        })
        .collect();
    let durations: Option<Vec<f64>> = labels
        .iter()
        .map(|l| Dur::parse(l).ok().map(|d| d.us() as f64 / 1e3))
        .collect();
    match (numbers, durations) {
        (Some(xs), _) => (AxisKind::Number, labels, xs),
        (None, Some(xs)) => (AxisKind::Duration, labels, xs),
        _ => {
            let xs = (0..labels.len()).map(|i| i as f64).collect();
            (AxisKind::Category, labels, xs)
        }
    }
}

fn range(from: &str, to: &str, n: usize) -> Result<Values, String> {
    if n < 2 {
        return Err(format!("a range needs at least 2 values, not {n}"));
    }
    if n > MAX_VALUES {
        return Err(format!("{n} values; at most {MAX_VALUES}"));
    }
    let at = |i: usize, a: f64, b: f64| a + (b - a) * i as f64 / (n - 1) as f64;
    let (kind, labels, xs): Values = match (parse_value(from), parse_value(to)) {
        (Value::Integer(a), Value::Integer(b)) => {
            let (a, b) = (*a.value(), *b.value());
            if (b - a).unsigned_abs() < (n - 1) as u64 {
                return Err(format!("{a}..{b} holds fewer than {n} integers"));
            }
            let values: Vec<i64> = (0..n).map(|i| at(i, a as f64, b as f64).round() as i64).collect();
            let labels = values.iter().map(i64::to_string).collect();
            (
                AxisKind::Number,
                labels,
                values.iter().map(|&v| v as f64).collect(),
            )
        }
        (a, b) if number(&a).is_some() && number(&b).is_some() => {
            let (a, b) = (number(&a).unwrap_or(0.0), number(&b).unwrap_or(0.0));
            let step = (b - a).abs() / (n - 1) as f64;
            // Three significant digits of the step, at least.
            let decimals = (3.0 - step.log10().floor()).clamp(0.0, 12.0) as usize;
            let labels: Vec<String> = (0..n)
                .map(|i| trim_zeros(format!("{:.decimals$}", at(i, a, b))))
                .collect();
            let xs = labels.iter().map(|l| l.parse().unwrap_or(0.0)).collect();
            (AxisKind::Number, labels, xs)
        }
        _ => {
            let (a, b) = match (Dur::parse(from), Dur::parse(to)) {
                (Ok(a), Ok(b)) => (a.us() as f64, b.us() as f64),
                _ => {
                    return Err(format!(
                        "{from}..{to}: a range is of two numbers or two durations (10ms..2s)"
                    ))
                }
            };
            let us: Vec<u64> = (0..n).map(|i| at(i, a, b).round() as u64).collect();
            let labels = us.iter().map(|&u| duration_label(u)).collect();
            (
                AxisKind::Duration,
                labels,
                us.iter().map(|&u| u as f64 / 1e3).collect(),
            )
        }
    };
    if xs.windows(2).any(|w| w[0] == w[1]) {
        return Err(format!("{from}..{to} is too narrow for {n} distinct values"));
    }
    Ok((kind, labels, xs))
}

/// `0.050000` → `0.05`, `1.000` → `1.0` (still a float to TOML).
fn trim_zeros(mut label: String) -> String {
    if label.contains('.') {
        label.truncate(label.trim_end_matches('0').len());
        if label.ends_with('.') {
            label.push('0');
        }
    }
    label
}

fn number(v: &Value) -> Option<f64> {
    v.as_float().or(v.as_integer().map(|i| i as f64))
}

/// A duration in the largest unit that writes it exactly.
fn duration_label(us: u64) -> String {
    if us.is_multiple_of(1_000_000) {
        format!("{}s", us / 1_000_000)
    } else if us.is_multiple_of(1_000) {
        format!("{}ms", us / 1_000)
    } else {
        format!("{}.{:03}ms", us / 1_000, us % 1_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_ranges_are_exact_microseconds() {
        let a = Axis::parse("clients.hold=10ms..2s:20").unwrap();
        assert_eq!(a.kind, AxisKind::Duration);
        assert_eq!(a.labels.len(), 20);
        assert_eq!(a.labels[0], "10ms");
        assert_eq!(a.labels[1], "114.737ms");
        assert_eq!(a.labels[19], "2s");
        for (label, x) in a.labels.iter().zip(&a.xs) {
            assert_eq!(Dur::parse(label).unwrap().us() as f64 / 1e3, *x, "{label}");
        }
        assert_eq!(a.value(1).to_string(), "clients.hold=114.737ms");
    }

    #[test]
    fn number_ranges_round_to_their_labels() {
        let a = Axis::parse("algorithm.drift_factor=0..0.05:10").unwrap();
        assert_eq!(a.kind, AxisKind::Number);
        assert_eq!(a.labels[1], "0.005556");
        assert_eq!(a.xs[1], 0.005556);
        assert_eq!(a.labels[0], "0.0");
        assert_eq!(a.labels[9], "0.05");
        assert_eq!(a.value(9).value.as_float(), Some(0.05));
        let i = Axis::parse("clients.count=2..20:4").unwrap();
        assert_eq!(i.labels, ["2", "8", "14", "20"]);
        assert_eq!(i.value(1).value.as_integer(), Some(8));
    }

    #[test]
    fn lists_take_any_values() {
        let a = Axis::parse("algorithm.fencing=false,true").unwrap();
        assert_eq!(a.kind, AxisKind::Category);
        assert_eq!(a.value(1).value.as_bool(), Some(true));
        let d = Axis::parse("algorithm.ttl=500ms,1s,2s").unwrap();
        assert_eq!(
            (d.kind, d.xs.clone()),
            (AxisKind::Duration, vec![500.0, 1000.0, 2000.0])
        );
        let n = Axis::parse("nodes=3,5,7").unwrap();
        assert_eq!(n.kind, AxisKind::Number);
        assert_eq!(n.value(2).value.as_integer(), Some(7));
    }

    #[test]
    fn impossible_axes_are_one_line_errors() {
        let cases = [
            ("clients.hold", "KEY=FROM..TO:N"),
            ("clients.hold=1ms..2s", "needs a count"),
            ("clients.hold=1ms..2s:1", "at least 2"),
            ("clients.hold=1ms..2s:x", "not a count"),
            ("clients.hold=1ms..2s:5000", "at most"),
            ("clients.count=1..3:5", "fewer than 5 integers"),
            ("clients.hold=1ms..fast:3", "two numbers or two durations"),
            ("clients.hold=1us..2us:3", "too narrow"),
            ("0.x=1,2", "must start with a name"),
            ("algorithm.fencing=true", "at least 2 values"),
        ];
        for (arg, needle) in cases {
            let err = Axis::parse(arg).unwrap_err();
            assert!(err.contains(needle) && !err.contains('\n'), "{arg}: {err}");
        }
    }
}
