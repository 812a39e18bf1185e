//! The library matrix page: every adapter (a lock library behind the worker protocol)
//! against every fault of the catalogue, in one table (index.html, README.md) and as
//! data (matrix.json). `crate::run::matrix` runs the cells and hands the [`Matrix`]
//! here; this module only renders it.

use super::html::esc;
use super::ReportError;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// The whole matrix: fault columns, adapter rows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Matrix {
    pub seed: u64,
    /// The command that regenerates the matrix.
    pub command: String,
    pub faults: Vec<FaultColumn>,
    pub adapters: Vec<AdapterRow>,
}

/// One fault of the catalogue.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FaultColumn {
    /// The template's file stem (e.g. `03-majority-crash-restart`).
    pub id: String,
    pub title: String,
    pub about: String,
}

/// One adapter, with a cell per fault column.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AdapterRow {
    pub name: String,
    pub runtime: String,
    pub kind: String,
    pub command: String,
    /// What the library promises, from the adapter list.
    pub promise: String,
    /// The client settings its adapter chooses where it does not keep the library's
    /// defaults (from the adapter list; part of every cell of the row).
    #[serde(default)]
    pub options: String,
    /// "library version", as its worker's hello named it.
    pub library: Option<String>,
    pub cells: Vec<Cell>,
}

/// What one adapter did under one fault.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Cell {
    /// The fault has no template for this adapter's node layout.
    NotApplicable,
    /// The library cannot run here at all (its command is missing, its hello fails).
    CannotRun {
        why: String,
    },
    /// lockstorm cannot carry out this fault on this backend yet.
    Refused {
        why: String,
        rerun: String,
    },
    /// The worker broke the protocol during the run (the history so far is kept).
    Error {
        why: String,
        report: String,
        rerun: String,
    },
    Ran(Box<Ran>),
}

/// The verdicts of a cell that ran.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ran {
    /// No two conflicting holds overlapped.
    pub lock_safe: bool,
    pub violations: usize,
    /// "safe", "unsafe" or "no writes".
    pub resource: String,
    pub stale_writes: usize,
    /// Locks were acquirable again after the heal.
    pub deadlock_free: bool,
    /// Uncontended acquisitions succeeded while a majority of nodes was reachable;
    /// `None` when no failed acquisition was uncontended and healthy enough to judge
    /// (with several clients on one lock, every attempt may be contended).
    pub fault_tolerant: Option<bool>,
    /// Share of acquisitions whose outcome the library left unknown (an `error`
    /// answer: the library could not say whether it got the lock).
    pub unknown: f64,
    /// Liveness findings by kind, or "none".
    pub liveness: String,
    /// Share of acquisitions that succeeded in the workload.
    pub availability: f64,
    /// The cell's run report, relative to the matrix folder.
    pub report: String,
    pub rerun: String,
}

fn mark(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "FAIL"
    }
}

/// One line for a cell, the same in README.md and index.html.
fn summary(cell: &Cell) -> String {
    match cell {
        Cell::NotApplicable => "n/a".into(),
        Cell::CannotRun { .. } => "cannot run here".into(),
        Cell::Refused { .. } => "not on this backend yet".into(),
        Cell::Error { .. } => "worker error".into(),
        Cell::Ran(r) => {
            let mut line = format!(
                "lock {} · resource {} · deadlock-free {} · fault-tolerant {} · {:.0}% available",
                if r.lock_safe { "safe" } else { "UNSAFE" },
                match r.resource.as_str() {
                    "unsafe" => "UNSAFE",
                    other => other,
                },
                mark(r.deadlock_free),
                r.fault_tolerant.map_or("not judged", mark),
                r.availability * 100.0
            );
            if r.unknown > 0.0 {
                let _ = write!(line, " · {:.0}% unknown", r.unknown * 100.0);
            }
            line
        }
    }
}

/// What lockstorm found for one library, from its cells: the faults under which it broke
/// mutual exclusion, let a stale write through, failed a liveness check, or left most
/// acquisitions unknown or failed.
fn found(faults: &[FaultColumn], a: &AdapterRow) -> String {
    let ran: Vec<(&FaultColumn, &Ran)> = faults
        .iter()
        .zip(&a.cells)
        .filter_map(|(f, c)| match c {
            Cell::Ran(r) => Some((f, r.as_ref())),
            _ => None,
        })
        .collect();
    let under = |pick: &dyn Fn(&Ran) -> bool| -> Vec<String> {
        ran.iter()
            .filter(|(_, r)| pick(r))
            .map(|(f, _)| f.title.to_lowercase())
            .collect()
    };
    let mut parts = Vec::new();
    let mut say = |what: &str, list: Vec<String>| {
        if !list.is_empty() {
            parts.push(format!("{what} under: {}", list.join("; ")));
        }
    };
    say("two clients held the lock at once", under(&|r| !r.lock_safe));
    say(
        "the guarded resource took a stale write",
        under(&|r| r.resource == "unsafe"),
    );
    say(
        "a lock stayed out of reach after the heal",
        under(&|r| !r.deadlock_free),
    );
    say(
        "an uncontended acquisition failed with a majority up",
        under(&|r| r.fault_tolerant == Some(false)),
    );
    say(
        "most acquisitions ended in an error (outcome unknown)",
        under(&|r| r.unknown > 0.5),
    );
    say(
        "fewer than one acquisition in ten succeeded",
        under(&|r| r.availability < 0.1),
    );
    let broke = a
        .cells
        .iter()
        .filter(|c| matches!(c, Cell::CannotRun { .. } | Cell::Error { .. }))
        .count();
    if broke > 0 {
        parts.push(format!(
            "{broke} cell(s) could not run or ended in a worker error"
        ));
    }
    if parts.is_empty() {
        return "Safe, live and available under every fault it ran.".into();
    }
    let sentences: Vec<String> = parts
        .iter()
        .map(|p| {
            let mut chars = p.chars();
            let first = chars.next().map(|c| c.to_uppercase().collect::<String>());
            format!("{}{}.", first.unwrap_or_default(), chars.as_str())
        })
        .collect();
    sentences.join(" ")
}

/// The matrix's data file, from which `lockstorm report DIR` renders the pages again.
pub const JSON: &str = "matrix.json";

/// Writes matrix.json, README.md and index.html into `out`.
pub fn write(out: &Path, m: &Matrix) -> Result<(), ReportError> {
    std::fs::create_dir_all(out).map_err(super::io_err(out))?;
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(super::io_err(&path))
    };
    let json = serde_json::to_string_pretty(m).expect("the matrix serialises");
    write(JSON, json)?;
    write("README.md", markdown(m))?;
    write("index.html", html(m))
}

fn markdown(m: &Matrix) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Lock libraries under lockstorm's faults\n");
    let _ = writeln!(
        s,
        "Every adapter (a lock library behind lockstorm's worker protocol, docs/worker-protocol.md) \
         against every fault of the catalogue (scenarios/matrix/), seed {}, on local redis-servers. \
         Regenerate with `{}`.\n",
        m.seed, m.command
    );
    let _ = writeln!(
        s,
        "Each cell: **lock** safety (no two holds overlap), **resource** safety (no stale write \
         accepted by the guarded resource; \"no writes\" when the fault does not write), \
         **deadlock-free** (locks acquirable again after the heal), **fault-tolerant** (no \
         uncontended acquisition failed while a majority of nodes was reachable; \"not judged\" \
         when no failed acquisition was uncontended, as with several clients on one lock), the \
         share of acquisitions that succeeded, and the share the library left unknown (it \
         answered with an error). Each links its run report; the rerun commands are below.\n"
    );
    let _ = write!(s, "| library |");
    for f in &m.faults {
        let _ = write!(s, " {} |", f.title);
    }
    let _ = write!(s, "\n| --- |");
    for _ in &m.faults {
        let _ = write!(s, " --- |");
    }
    s.push('\n');
    for a in &m.adapters {
        let _ = write!(s, "| **{}** ({}) |", a.name, a.kind);
        for c in &a.cells {
            match c {
                Cell::Ran(r) => {
                    let _ = write!(s, " [{}]({}) |", summary(c), r.report);
                }
                _ => {
                    let _ = write!(s, " {} |", summary(c));
                }
            }
        }
        s.push('\n');
    }
    let _ = writeln!(s, "\n## The libraries\n");
    for a in &m.adapters {
        let _ = writeln!(s, "### {}\n", a.name);
        let _ = writeln!(
            s,
            "`{}` ({}, {}){}\n",
            a.command,
            a.runtime,
            a.kind,
            a.library
                .as_ref()
                .map(|l| format!("; its worker says: {l}"))
                .unwrap_or_default()
        );
        if !a.promise.is_empty() {
            let _ = writeln!(s, "Promises: {}\n", a.promise);
        }
        if !a.options.is_empty() {
            let _ = writeln!(s, "Adapter options (every cell of this row): {}\n", a.options);
        }
        let _ = writeln!(s, "Found: {}\n", found(&m.faults, a));
        for (f, c) in m.faults.iter().zip(&a.cells) {
            match c {
                Cell::NotApplicable => {}
                Cell::CannotRun { why } => {
                    let _ = writeln!(s, "- {}: cannot run here: {why}", f.title);
                }
                Cell::Refused { why, rerun } | Cell::Error { why, rerun, .. } => {
                    let _ = writeln!(s, "- {}: {}: {why} (`{rerun}`)", f.title, summary(c));
                }
                Cell::Ran(r) => {
                    let _ = writeln!(
                        s,
                        "- {}: {}; liveness findings: {} (`{}`)",
                        f.title,
                        summary(c),
                        r.liveness,
                        r.rerun
                    );
                }
            }
        }
        s.push('\n');
    }
    let _ = writeln!(s, "## The faults\n");
    for f in &m.faults {
        let _ = writeln!(s, "- **{}** (`{}`): {}", f.title, f.id, f.about);
    }
    s
}

fn html(m: &Matrix) -> String {
    let mut s = String::new();
    s.push_str(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Lock libraries under lockstorm's faults</title>\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:.4em;vertical-align:top;font-size:90%}\
         .safe{background:#e6f4e6}.unsafe{background:#f8d7d7}.na{background:#eee;color:#888}\
         .other{background:#fff3cd}code{font-size:85%}</style></head><body>",
    );
    let _ = write!(
        s,
        "<h1>Lock libraries under lockstorm's faults</h1><p>Seed {}; regenerate with <code>{}</code>. \
         Each cell: lock safety, guarded-resource safety, deadlock freedom, fault tolerance, availability; \
         it links its run report.</p><table><tr><th>library</th>",
        m.seed,
        esc(&m.command)
    );
    for f in &m.faults {
        let _ = write!(s, "<th title=\"{}\">{}</th>", esc(&f.about), esc(&f.title));
    }
    s.push_str("</tr>");
    for a in &m.adapters {
        let _ = write!(
            s,
            "<tr><th>{}<br><small>{} · {}{}</small></th>",
            esc(&a.name),
            esc(&a.runtime),
            esc(&a.kind),
            a.library
                .as_ref()
                .map(|l| format!("<br>{}", esc(l)))
                .unwrap_or_default()
                + &if a.options.is_empty() {
                    String::new()
                } else {
                    format!("<br><small>options: {}</small>", esc(&a.options))
                }
        );
        for c in &a.cells {
            let (class, body) = match c {
                Cell::NotApplicable => ("na", "n/a".to_string()),
                Cell::CannotRun { why } => ("other", format!("cannot run here: {}", esc(why))),
                Cell::Refused { why, rerun } => (
                    "other",
                    format!(
                        "not on this backend yet: {}<br><code>{}</code>",
                        esc(why),
                        esc(rerun)
                    ),
                ),
                Cell::Error { why, report, rerun } => (
                    "other",
                    format!(
                        "worker error: {} (<a href=\"{}\">history</a>)<br><code>{}</code>",
                        esc(why),
                        esc(report),
                        esc(rerun)
                    ),
                ),
                Cell::Ran(r) => (
                    if r.lock_safe && r.resource != "unsafe" {
                        "safe"
                    } else {
                        "unsafe"
                    },
                    format!(
                        "<a href=\"{}\">{}</a><br><code>{}</code>",
                        esc(&r.report),
                        esc(&summary(c)),
                        esc(&r.rerun)
                    ),
                ),
            };
            let _ = write!(s, "<td class=\"{class}\">{body}</td>");
        }
        s.push_str("</tr>");
    }
    s.push_str("</table><h2>The faults</h2><ul>");
    for f in &m.faults {
        let _ = write!(
            s,
            "<li><b>{}</b> (<code>{}</code>): {}</li>",
            esc(&f.title),
            esc(&f.id),
            esc(&f.about)
        );
    }
    s.push_str("</ul></body></html>\n");
    s
}
