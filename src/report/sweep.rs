//! A sweep's folder: sweep.json (the whole [`Sweep`], which `merge` reads back),
//! sweep.csv (one row per cell), the phase diagrams (SVG): `sweep-violations` always,
//! `sweep-stale-writes` when clients write to the guarded resource, and index.html, the
//! page a browser opens (the diagrams, then every cell's rates with their n). Everything
//! here follows from the cells' results, so the same sweep writes the same bytes however
//! it was run (threads, shards merged); wall-clock figures go to timing.json.

use super::plots::sweep::{Metric, Phase};
use super::plots::{self};
use super::{io_err, ReportError};
use crate::outcome::sweep::{Cell, Sweep};
pub use crate::outcome::sweep::{CSV, JSON};
use std::fmt::Write as _;
use std::path::Path;

/// The sweep's page, which the reports site links.
pub const PAGE: &str = "index.html";

/// Every name a sweep writes into its folder (what its manifest vouches for while it
/// runs): the two files, the phase diagrams, the wall-clock figures, a shard's
/// description.
pub const FILES: &[&str] = &[
    JSON,
    CSV,
    PAGE,
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
    let path = dir.join(PAGE);
    let notes = dir.join("README.md").is_file();
    std::fs::write(&path, page(sweep, &drawn, notes)).map_err(io_err(&path))?;
    Ok(drawn)
}

/// "3/20 (15.0%, 95% CI 5.2–36.0%)": a rate with its n and its Wilson interval.
fn rate(hits: u64, n: u64, r: crate::outcome::sweep::Rate) -> String {
    format!(
        "{hits}/{n} ({:.1}%, 95% CI {:.1}–{:.1}%)",
        r.rate * 100.0,
        r.low * 100.0,
        r.high * 100.0
    )
}

/// The sweep's page: what was swept, the phase diagrams, then one row per cell with
/// every rate's n. `notes`: the folder has a README.md of the user's (what the sweep
/// shows, in words), which the page links.
pub fn page(sweep: &Sweep, drawn: &[String], notes: bool) -> String {
    use super::words::esc;
    let axes: Vec<String> = sweep.axes.iter().map(|a| esc(&a.key)).collect();
    let title = format!("Sweep of {} over {}", esc(&sweep.scenario), axes.join(" × "));
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>body{{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.45}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .5em}}td.n{{text-align:right}}.bad{{background:#fbe0e0}}img{{max-width:100%;border:1px solid #ddd}}code{{background:#f6f6f6}}</style></head><body>\n<nav><a href=\"../../index.html\">↑ up: all reports</a></nav>\n<h1>{title}</h1>\n"
    );
    let _ = write!(
        h,
        "<p><code>{}</code>{}: {} cells × {} seeds each (from seed {}).{}</p>",
        esc(&sweep.file),
        if sweep.overrides.is_empty() {
            String::new()
        } else {
            format!(
                " with <code>--set {}</code>",
                esc(&sweep.overrides.join(" --set "))
            )
        },
        sweep.cells.len(),
        sweep.seeds,
        sweep.first_seed,
        if notes {
            " What it shows, in words: <a href=\"README.md\">README.md</a>."
        } else {
            ""
        }
    );
    for stem in drawn {
        let _ = write!(
            h,
            "<p><a href=\"{stem}.svg\"><img src=\"{stem}.svg\" alt=\"{}\"></a></p>",
            match stem.as_str() {
                "sweep-stale-writes" => "share of seeds with a stale write, per cell",
                _ => "share of seeds with a violation, per cell",
            }
        );
    }
    h.push_str("<h2>Every cell</h2><table><tr>");
    for a in &axes {
        let _ = write!(h, "<th>{a}</th>");
    }
    h.push_str(
        "<th>seeds with a violation</th><th>seeds with a stale write</th><th>seeds not live</th>\
         <th>acquire calls that succeeded</th><th>p99 acquire (mean over seeds)</th><th>first seed with a finding</th></tr>",
    );
    for c in &sweep.cells {
        let bad = c.unsafe_seeds > 0 || c.stale_seeds > 0;
        let _ = write!(h, "<tr{}>", if bad { " class=bad" } else { "" });
        for v in &c.values {
            let _ = write!(h, "<td>{}</td>", esc(v));
        }
        let _ = write!(
            h,
            "<td class=n>{}</td><td class=n>{}</td><td class=n>{}/{}</td><td class=n>{:.1}% of {}</td><td class=n>{:.1} ms</td><td>{}</td></tr>",
            rate(c.unsafe_seeds, c.seeds, c.violation),
            rate(c.stale_seeds, c.seeds, c.stale_write),
            c.not_live_seeds,
            c.seeds,
            c.availability * 100.0,
            c.acquires,
            c.p99_acquire_us as f64 / 1e3,
            match (&c.reported_seed, &c.rerun) {
                (Some(seed), Some(rerun)) => format!("{seed}: <code>{}</code>", esc(rerun)),
                _ => "none".into(),
            }
        );
    }
    h.push_str(
        "</table><p>Rates over each cell's seeds with their 95% Wilson intervals; acquire calls that \
         succeeded are summed over the seeds (contention counts against them). The same rows: \
         <a href=\"sweep.csv\">sweep.csv</a>; everything: <a href=\"sweep.json\">sweep.json</a>.</p>\n</body></html>\n",
    );
    h
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
    use super::*;

    #[test]
    fn csv_fields_are_quoted_only_when_needed() {
        assert_eq!(field("10ms"), "10ms");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"x\""), "\"say \"\"x\"\"\"");
    }

    #[test]
    fn the_sweep_page_shows_its_diagrams_and_every_rate_with_its_n() {
        let tmp = tempfile::tempdir().unwrap();
        let axis = crate::scenario::axis::Axis::parse("algorithm.ttl=1s,2s").unwrap();
        let cell = |index: usize, unsafe_seeds: u64| Cell {
            index,
            values: vec![axis.labels[index].clone()],
            seeds: 10,
            unsafe_seeds,
            not_live_seeds: 0,
            stale_seeds: 0,
            violation: crate::outcome::sweep::wilson(unsafe_seeds, 10),
            stale_write: crate::outcome::sweep::wilson(0, 10),
            acquires: 200,
            acquired: 50,
            availability: 0.25,
            p99_acquire_us: 1_500,
            reported_seed: (unsafe_seeds > 0).then_some(3),
            rerun: (unsafe_seeds > 0).then(|| "cargo run -- scenario s.toml --seed 3".into()),
        };
        let sweep = Sweep {
            scenario: "s".into(),
            file: "scenarios/s.toml".into(),
            overrides: Vec::new(),
            axes: vec![axis.clone()],
            first_seed: 1,
            seeds: 10,
            resource_writes: false,
            cells: vec![cell(0, 3), cell(1, 0)],
        };
        std::fs::write(tmp.path().join("README.md"), "notes").unwrap();
        let drawn = write(tmp.path(), &sweep).unwrap();
        assert_eq!(drawn, ["sweep-violations"]);
        let page = std::fs::read_to_string(tmp.path().join(PAGE)).unwrap();
        assert!(page.contains("<img src=\"sweep-violations.svg\""), "{page}");
        assert!(page.contains("<a href=\"README.md\">README.md</a>"), "{page}");
        assert!(page.contains("<td class=n>3/10 (30.0%, 95% CI"), "{page}");
        assert!(page.contains("<td class=n>25.0% of 200</td>"), "{page}");
        assert!(
            page.contains("3: <code>cargo run -- scenario s.toml --seed 3</code>"),
            "{page}"
        );
        assert_eq!(page.matches("<tr class=bad>").count(), 1, "{page}");
    }
}
