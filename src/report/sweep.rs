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

/// The sweep's page: what was swept, the phase diagrams, then for each of them the
/// grid of cells as "k/n" (seeds with a finding of the cell's seeds, the Wilson interval
/// on hover), rows the first axis, columns the second. Compact on purpose: the page of
/// a 160-cell sweep is committed, and sweep.csv has every figure of every cell. `notes`:
/// the folder has a README.md of the user's (what the sweep shows, in words).
pub fn page(sweep: &Sweep, drawn: &[String], notes: bool) -> String {
    use super::words::esc;
    let axes: Vec<String> = sweep.axes.iter().map(|a| esc(&a.key)).collect();
    let title = format!("Sweep of {} over {}", esc(&sweep.scenario), axes.join(" × "));
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title><style>body{{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.45}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.1em .3em;text-align:right;font-size:.85em}}.bad{{background:#fbe0e0}}img{{max-width:100%;border:1px solid #ddd}}code{{background:#f6f6f6}}</style></head><body>\n<nav><a href=\"../../index.html\">↑ up: all reports</a></nav>\n<h1>{title}</h1>\n"
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
    // The diagram with findings first: the first screen shows where the boundary is.
    let mut shown: Vec<(&str, &str, Hits)> = drawn
        .iter()
        .map(|stem| -> (&str, &str, Hits) {
            match stem.as_str() {
                "sweep-stale-writes" => (stem, "Seeds with a stale write", |c| {
                    (c.stale_seeds, c.stale_write)
                }),
                _ => (stem, "Seeds with a violation", |c| (c.unsafe_seeds, c.violation)),
            }
        })
        .collect();
    shown.sort_by_key(|(_, _, hits)| !sweep.cells.iter().any(|c| hits(c).0 > 0));
    for (stem, what, hits) in shown {
        let _ = write!(
            h,
            "<h2>{what}, per cell</h2><p><a href=\"{stem}.svg\"><img src=\"{stem}.svg\" alt=\"{what}, per cell\"></a></p>"
        );
        grid(&mut h, sweep, hits);
    }
    h.push_str(
        "<p>Each cell: seeds with the finding of the cell's seeds (hover for the 95% Wilson interval). \
         Every cell's rates with their intervals, acquire calls that succeeded, p99 acquire and the rerun \
         command of its first seed with a finding: <a href=\"sweep.csv\">sweep.csv</a>; everything: \
         <a href=\"sweep.json\">sweep.json</a>.</p>\n",
    );
    if let Some(p) = &sweep.provenance {
        h.push_str(&p.html());
    }
    h.push_str("</body></html>\n");
    h
}

/// A cell's seeds with a finding, and their rate.
type Hits = fn(&Cell) -> (u64, crate::outcome::sweep::Rate);

/// The cells as a table laid out as the phase diagram is: columns the first axis's
/// values, rows the second's from the largest down (one row for a one-axis sweep),
/// each cell "k/n".
fn grid(h: &mut String, sweep: &Sweep, hits: Hits) {
    use super::words::esc;
    let cols: &[String] = sweep.axes.first().map_or(&[], |a| &a.labels);
    let rows: Vec<Option<&String>> = match sweep.axes.get(1) {
        Some(a) => a.labels.iter().rev().map(Some).collect(),
        None => vec![None],
    };
    let _ = write!(
        h,
        "<table><tr><th>{} \\ {}</th>",
        esc(sweep.axes.get(1).map_or("", |a| &a.key)),
        esc(sweep.axes.first().map_or("", |a| &a.key))
    );
    for c in cols {
        let _ = write!(h, "<th>{}</th>", esc(c));
    }
    h.push_str("</tr>");
    for row in rows {
        let _ = write!(h, "<tr><th>{}</th>", row.map_or(String::new(), |r| esc(r)));
        for col in cols {
            let cell = sweep
                .cells
                .iter()
                .find(|c| c.values.first() == Some(col) && c.values.get(1) == row);
            match cell {
                Some(c) => {
                    let (k, r) = hits(c);
                    let _ = write!(
                        h,
                        "<td{} title=\"{:.0}–{:.0}%\">{k}/{}</td>",
                        if k > 0 { " class=bad" } else { "" },
                        r.low * 100.0,
                        r.high * 100.0,
                        c.seeds
                    );
                }
                // A shard's sweep holds only its own cells.
                None => h.push_str("<td></td>"),
            }
        }
        h.push_str("</tr>");
    }
    h.push_str("</table>");
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
            provenance: None,
        };
        std::fs::write(tmp.path().join("README.md"), "notes").unwrap();
        let drawn = write(tmp.path(), &sweep).unwrap();
        assert_eq!(drawn, ["sweep-violations"]);
        let page = std::fs::read_to_string(tmp.path().join(PAGE)).unwrap();
        assert!(page.contains("<img src=\"sweep-violations.svg\""), "{page}");
        assert!(page.contains("<a href=\"README.md\">README.md</a>"), "{page}");
        // One row (one axis), a column per ttl, each cell k/n with its interval on hover.
        assert!(
            page.contains(
                "<tr><th> \\ algorithm.ttl</th><th>1s</th><th>2s</th></tr><tr><th></th><td class=bad \
                 title=\"11–60%\">3/10</td><td title=\"0–28%\">0/10</td></tr>"
            ),
            "{page}"
        );
        assert!(
            !page.contains("Seeds with a stale write"),
            "no resource writes: {page}"
        );
    }

    #[test]
    fn a_two_axis_page_is_laid_out_as_its_diagram_with_the_diagram_that_found_something_first() {
        let ttl = crate::scenario::axis::Axis::parse("algorithm.ttl=1s,2s").unwrap();
        let count = crate::scenario::axis::Axis::parse("clients.count=2,3").unwrap();
        let cell = |index: usize, values: [&str; 2], stale_seeds: u64| Cell {
            index,
            values: values.iter().map(|v| v.to_string()).collect(),
            seeds: 5,
            unsafe_seeds: 0,
            not_live_seeds: 0,
            stale_seeds,
            violation: crate::outcome::sweep::wilson(0, 5),
            stale_write: crate::outcome::sweep::wilson(stale_seeds, 5),
            acquires: 10,
            acquired: 5,
            availability: 0.5,
            p99_acquire_us: 1_000,
            reported_seed: None,
            rerun: None,
        };
        let sweep = Sweep {
            scenario: "s".into(),
            file: "s.toml".into(),
            overrides: Vec::new(),
            axes: vec![ttl, count],
            first_seed: 1,
            seeds: 5,
            resource_writes: true,
            cells: vec![
                cell(0, ["1s", "2"], 0),
                cell(1, ["1s", "3"], 4),
                cell(2, ["2s", "2"], 0),
                cell(3, ["2s", "3"], 1),
            ],
            provenance: None,
        };
        let page = page(
            &sweep,
            &["sweep-violations".into(), "sweep-stale-writes".into()],
            false,
        );
        assert!(
            page.find("Seeds with a stale write").unwrap() < page.find("Seeds with a violation").unwrap(),
            "the diagram with findings first"
        );
        // Columns the ttls (x), rows the client counts from the largest down (y).
        let stale = &page[page.find("Seeds with a stale write").unwrap()..];
        assert!(
            stale.contains(
                "<tr><th>clients.count \\ algorithm.ttl</th><th>1s</th><th>2s</th></tr><tr><th>3</th><td \
                 class=bad"
            ),
            "{stale}"
        );
        assert!(stale.contains(">4/5</td><td class=bad title="), "{stale}");
        assert!(!page.contains("README.md"), "no notes, no link");
    }
}
