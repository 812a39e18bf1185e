//! A sweep's folder: sweep.json (the whole [`Sweep`], which `merge` reads back),
//! sweep.csv (one row per cell) and the phase diagrams (SVG): `sweep-violations`
//! always, `sweep-stale-writes` when clients write to the guarded resource. Everything
//! here follows from the cells' results, so the same sweep writes the same bytes however
//! it was run (threads, shards merged); wall-clock figures go to timing.json.

use super::plots::sweep::{Metric, Phase};
use super::plots::{self};
use super::{io_err, ReportError};
use crate::outcome::sweep::{Cell, Sweep};
pub use crate::outcome::sweep::{CSV, JSON};
use std::fmt::Write as _;
use std::path::Path;

/// The diagrams drawn, by file stem.
/// Every name a sweep writes into its folder (what its manifest vouches for while it
/// runs): the two files, the phase diagrams, the wall-clock figures, a shard's
/// description.
pub const FILES: &[&str] = &[
    JSON,
    CSV,
    "sweep-violations.svg",
    "sweep-stale-writes.svg",
    "timing.json",
    "shard.json",
];

/// Prepares `dir` for a sweep before it runs: an earlier sweep's files go (a plot of
/// another scenario with them), a file of the sweep's names that no manifest vouches
/// for is refused, and the rest of the folder (a README.md of the user's) stays.
pub fn folder(dir: &Path) -> Result<super::folder::RunFolder, ReportError> {
    let names: Vec<String> = FILES.iter().map(|n| n.to_string()).collect();
    super::folder::RunFolder::prepare_shared(dir, &names)
}

pub fn write(dir: &Path, sweep: &Sweep) -> Result<Vec<String>, ReportError> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))?;
    let path = dir.join(JSON);
    let text = serde_json::to_string_pretty(sweep).expect("a sweep serializes");
    std::fs::write(&path, text + "\n").map_err(io_err(&path))?;
    let path = dir.join(CSV);
    std::fs::write(&path, csv(sweep)).map_err(io_err(&path))?;
    let mut drawn = Vec::new();
    let stale = sweep.resource_writes || sweep.cells.iter().any(|c| c.stale_seeds > 0);
    for (metric, stem, wanted) in [
        (Metric::Violation, "sweep-violations", true),
        (Metric::StaleWrite, "sweep-stale-writes", stale),
    ] {
        if wanted {
            plots::save(&Phase { sweep, metric }, dir, stem)?;
            drawn.push(stem.to_string());
        }
    }
    Ok(drawn)
}

/// One row per cell: the axis values, then the rates with their 95% Wilson intervals,
/// availability, the mean of the seeds' p99 acquire latencies, and the first seed with
/// a finding with the command that reruns it.
pub fn csv(sweep: &Sweep) -> String {
    let mut out = String::new();
    for a in &sweep.axes {
        let _ = write!(out, "{},", field(&a.key));
    }
    out.push_str(
        "seeds,unsafe_seeds,violation_rate,violation_low,violation_high,\
         stale_seeds,stale_write_rate,stale_write_low,stale_write_high,\
         not_live_seeds,availability,p99_acquire_ms,reported_seed,rerun\n",
    );
    for c in &sweep.cells {
        row(&mut out, c);
    }
    out
}

fn row(out: &mut String, c: &Cell) {
    for v in &c.values {
        let _ = write!(out, "{},", field(v));
    }
    let (v, s) = (c.violation, c.stale_write);
    let _ = writeln!(
        out,
        "{},{},{:.4},{:.4},{:.4},{},{:.4},{:.4},{:.4},{},{:.4},{:.3},{},{}",
        c.seeds,
        c.unsafe_seeds,
        v.rate,
        v.low,
        v.high,
        c.stale_seeds,
        s.rate,
        s.low,
        s.high,
        c.not_live_seeds,
        c.availability,
        c.p99_acquire_us as f64 / 1e3,
        c.reported_seed.map_or(String::new(), |s| s.to_string()),
        c.rerun.as_deref().map_or(String::new(), field),
    );
}

/// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
fn field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::field;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(field("10ms"), "10ms");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
    }
}
