//! The library matrix as pages, from the [`Matrix`] that [`super::matrix`] holds: the
//! grid a reader takes in at once (index.html: a short coloured cell per library and
//! fault, the libraries grouped by language and family), each library's own page with
//! the full line of every cell, README.md with the same facts, and the headline the
//! reports index (`super::site`) shows.
//!
//! Nothing is told only in the grid: a cell's short text and marks are a view of the
//! line [`summary`] writes, which the library's page and README.md give in full.

use super::matrix::{summary, AdapterRow, Cell, FaultColumn, Matrix, Ran};
use super::words::esc;
use crate::worker::adapters::{Documented, Prediction};
use std::fmt::Write as _;

/// A fault's number, from its id: "03" of "03-majority-crash-restart" (the whole id
/// when it has none).
pub fn number(f: &FaultColumn) -> &str {
    match f.id.split_once('-') {
        Some((n, _)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => n,
        _ => &f.id,
    }
}

/// A fault's short name, from its id: "majority crash restart" of
/// "03-majority-crash-restart".
pub fn short_title(f: &FaultColumn) -> String {
    let n = number(f);
    let rest = if n == f.id {
        f.id.as_str()
    } else {
        &f.id[n.len() + 1..]
    };
    rest.replace(['-', '_'], " ")
}

/// What a row's group says after its language: its algorithm family, or with none
/// known (a matrix.json from before rows kept it) its node layout.
fn family(a: &AdapterRow) -> String {
    match &a.family {
        Some(f) => f.clone(),
        None if a.kind == "multi" => "multi-node".into(),
        None if a.kind == "single" => "single-node".into(),
        None => a.kind.clone(),
    }
}

/// The rows grouped by language, then by family within it, each group in the order its
/// first row comes in the matrix, and rows in matrix order within a group.
pub fn groups(m: &Matrix) -> Vec<(String, Vec<&AdapterRow>)> {
    let mut out: Vec<(String, String, Vec<&AdapterRow>)> = Vec::new();
    for a in &m.adapters {
        let fam = family(a);
        match out.iter_mut().find(|(r, f, _)| *r == a.runtime && *f == fam) {
            Some((_, _, rows)) => rows.push(a),
            None => out.push((a.runtime.clone(), fam, vec![a])),
        }
    }
    // Stable: groups of one language together, languages in order of first appearance.
    let languages: Vec<String> = out.iter().fold(Vec::new(), |mut seen, (r, _, _)| {
        if !seen.contains(r) {
            seen.push(r.clone());
        }
        seen
    });
    out.sort_by_key(|(r, _, _)| languages.iter().position(|l| l == r));
    out.into_iter()
        .map(|(r, f, rows)| (format!("{r} · {f}"), rows))
        .collect()
}

/// A mark beside a cell's tally, and what it means there (its tooltip).
struct Mark {
    sign: &'static str,
    title: String,
}

/// The departure from the prediction.
pub const DEPARTS: &str = "≠";
/// Some seeds were not exercised (the cell's verdict still stands).
pub const UNEXERCISED: &str = "◦";
/// The guarded resource took a stale write.
pub const STALE: &str = "✎";
/// A lock stuck after the heal, or seeds that ended in an error.
pub const TROUBLE: &str = "!";
/// The finding contradicts what the library's own documentation says.
pub const CONTRADICTS_DOCS: &str = "¶";

/// A cell as the grid shows it: its colour class, a few characters, its marks, the page
/// it links and the full line as its tooltip.
struct Short {
    class: &'static str,
    text: String,
    marks: Vec<Mark>,
    link: Option<String>,
    title: String,
}

fn short(cell: &Cell, predicted: Option<&Prediction>) -> Short {
    let plain = |class, text: &str, title: String| Short {
        class,
        text: text.into(),
        marks: Vec::new(),
        link: None,
        title,
    };
    match cell {
        Cell::NotApplicable => plain(
            "na",
            "n/a",
            "no template for this node layout, or a read-write fault and an exclusive lock".into(),
        ),
        Cell::OtherShard => plain("na", "shard", summary(cell)),
        Cell::CannotRun { why } => plain("err", "can't run", format!("cannot run here: {why}")),
        Cell::Refused { why, .. } => plain("err", "not yet", format!("not on this backend yet: {why}")),
        Cell::Error { why, report, .. } => Short {
            link: (!report.is_empty()).then(|| report.clone()),
            ..plain("err", "error", format!("every seed ended in an error: {why}"))
        },
        Cell::Ran(r) => ran_short(r, cell, predicted),
    }
}

fn ran_short(r: &Ran, cell: &Cell, predicted: Option<&Prediction>) -> Short {
    let exercised = r.seeds - r.not_exercised_seeds;
    let (class, text) = match r.verdict() {
        "unsafe" => ("unsafe", format!("{}/{exercised}", r.unsafe_seeds)),
        "safe" if r.stale_seeds > 0 => ("unsafe", format!("0/{exercised}")),
        "safe" => ("safe", format!("0/{exercised}")),
        _ => ("ne", "n.e.".to_string()),
    };
    let mut marks = Vec::new();
    if let Some(d) = &r.departs {
        marks.push(Mark {
            sign: DEPARTS,
            title: match predicted {
                Some(p) => format!("not as predicted: {d} (the prediction: {})", p.why),
                None => format!("not as predicted: {d}"),
            },
        });
    }
    if r.not_exercised_seeds > 0 && r.verdict() != "not exercised" {
        marks.push(Mark {
            sign: UNEXERCISED,
            title: format!(
                "{} of {} seeds not exercised (their faults touched nothing where the lock could break)",
                r.not_exercised_seeds, r.seeds
            ),
        });
    }
    if r.stale_seeds > 0 {
        marks.push(Mark {
            sign: STALE,
            title: format!(
                "the guarded resource took a stale write on {}/{} seeds",
                r.stale_seeds, r.seeds
            ),
        });
    }
    if r.stuck_seeds > 0 || r.worker_errors > 0 {
        let mut why = Vec::new();
        if r.stuck_seeds > 0 {
            why.push(format!(
                "stuck after the heal on {}/{} seeds",
                r.stuck_seeds, r.seeds
            ));
        }
        if r.worker_errors > 0 {
            why.push(format!("{} seed(s) ended in an error", r.worker_errors));
        }
        marks.push(Mark {
            sign: TROUBLE,
            title: why.join("; "),
        });
    }
    Short {
        class,
        text,
        marks,
        link: Some(r.report.clone()),
        title: summary(cell),
    }
}

/// Row `a`'s cell of fault column `i`, marked where it contradicts the library's
/// documentation.
fn row_short(a: &AdapterRow, i: usize) -> Short {
    let mut sh = short(&a.cells[i], a.predicts.get(i).and_then(Option::as_ref));
    if let Some(c) = a.contradicts_docs(i) {
        sh.marks.push(Mark {
            sign: CONTRADICTS_DOCS,
            title: format!("contradicts its documentation: {c}"),
        });
    }
    sh
}

/// The cell as a table cell: the tally linking `link` (made relative by the caller),
/// then its marks, each with its meaning as a tooltip.
fn short_td(s: &Short, link: Option<&str>, fault: &FaultColumn) -> String {
    let departs = if s.marks.iter().any(|m| m.sign == DEPARTS) {
        " departs"
    } else {
        ""
    };
    let text = match link {
        Some(l) => format!("<a href=\"{}\">{}</a>", esc(l), esc(&s.text)),
        None => esc(&s.text),
    };
    let marks: String = s
        .marks
        .iter()
        .map(|m| {
            format!(
                "<span class=\"mark\" title=\"{}\">{}</span>",
                esc(&m.title),
                m.sign
            )
        })
        .collect();
    format!(
        "<td class=\"{}{departs}\" title=\"{}: {}\">{text}{marks}</td>",
        s.class,
        esc(&f_title(fault)),
        esc(&s.title)
    )
}

fn f_title(f: &FaultColumn) -> String {
    format!("{} {}", number(f), f.title)
}

/// Whether the library has a page of its own: a cell of it wrote its folder.
fn has_page(a: &AdapterRow) -> bool {
    a.cells.iter().any(|c| match c {
        Cell::Ran(_) => true,
        Cell::Error { report, .. } => !report.is_empty(),
        _ => false,
    })
}

/// Faults as a reader names them: "majority crash restart, node clock jump", or with
/// more than `most`, "8 of 11 faults".
fn fault_list(names: &[String], ran: usize, most: usize) -> String {
    if names.len() > most {
        format!("{} of {ran} faults", names.len())
    } else {
        names.join(", ")
    }
}

/// Names, the first three of them and how many more: "a, b, c and 4 more".
fn few(names: &[&str]) -> String {
    match names.len() {
        0..=4 => names.join(", "),
        n => format!("{} and {} more", names[..3].join(", "), n - 3),
    }
}

/// The cells of `a` that ran, with their faults.
fn ran_cells<'a>(faults: &'a [FaultColumn], a: &'a AdapterRow) -> Vec<(&'a FaultColumn, &'a Ran)> {
    faults
        .iter()
        .zip(&a.cells)
        .filter_map(|(f, c)| match c {
            Cell::Ran(r) => Some((f, r.as_ref())),
            _ => None,
        })
        .collect()
}

/// The matrix in a few short sentences: how many libraries held under every fault they
/// ran; which broke mutual exclusion, under which faults (libraries that broke under the
/// same faults named together); where the guarded resource took stale writes; and which
/// cells depart from their library's prediction. The reports index shows it.
pub fn headline(m: &Matrix) -> String {
    let names_under = |a: &AdapterRow, pick: &dyn Fn(&Ran) -> bool| -> Vec<String> {
        ran_cells(&m.faults, a)
            .into_iter()
            .filter(|(_, r)| pick(r))
            .map(|(f, _)| short_title(f))
            .collect()
    };
    // Libraries with the same fault list, in order of first appearance.
    let grouped = |pick: &dyn Fn(&Ran) -> bool| -> Vec<(String, Vec<&str>)> {
        let mut out: Vec<(String, Vec<&str>)> = Vec::new();
        for a in &m.adapters {
            let names = names_under(a, pick);
            if names.is_empty() {
                continue;
            }
            let list = fault_list(&names, ran_cells(&m.faults, a).len(), 4);
            match out.iter_mut().find(|(l, _)| *l == list) {
                Some((_, libs)) => libs.push(&a.name),
                None => out.push((list, vec![&a.name])),
            }
        }
        out
    };
    let total = m.adapters.len();
    let held: Vec<&str> = m
        .adapters
        .iter()
        .filter(|a| {
            let cells = ran_cells(&m.faults, a);
            !cells.is_empty()
                && cells
                    .iter()
                    .all(|(_, r)| r.verdict() == "safe" && r.stale_seeds == 0)
        })
        .map(|a| a.name.as_str())
        .collect();
    let mut s = format!(
        "{} of {total} {} safe under every fault {} ran",
        held.len(),
        if total == 1 { "library" } else { "libraries" },
        if total == 1 { "it" } else { "they" }
    );
    if !held.is_empty() {
        let _ = write!(s, " ({})", few(&held));
    }
    let named = |groups: Vec<(String, Vec<&str>)>| -> String {
        groups
            .iter()
            .map(|(faults, libs)| {
                if libs.len() == total && total > 1 {
                    format!("all {total} ({faults})")
                } else {
                    format!("{} ({faults})", few(libs))
                }
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    let lock = grouped(&|r| r.unsafe_seeds > 0);
    if !lock.is_empty() {
        let _ = write!(s, "; two clients held the lock at once: {}", named(lock));
    }
    s.push('.');
    let stale = grouped(&|r| r.stale_seeds > 0);
    if !stale.is_empty() {
        let _ = write!(s, " Stale writes reached the resource: {}.", named(stale));
    }
    let unproven: Vec<&str> = m
        .adapters
        .iter()
        .filter(|a| !held.contains(&a.name.as_str()))
        .filter(|a| {
            let cells = ran_cells(&m.faults, a);
            cells.is_empty()
                || cells
                    .iter()
                    .all(|(_, r)| r.unsafe_seeds == 0 && r.stale_seeds == 0)
        })
        .map(|a| a.name.as_str())
        .collect();
    if !unproven.is_empty() {
        let _ = write!(
            s,
            " Not shown safe (a fault not exercised, or no run): {}.",
            unproven.join(", ")
        );
    }
    let departed: Vec<String> = m
        .adapters
        .iter()
        .flat_map(|a| {
            m.faults.iter().zip(&a.cells).filter_map(move |(f, c)| match c {
                Cell::Ran(r) if r.departs.is_some() => Some(format!("{} under {}", a.name, short_title(f))),
                _ => None,
            })
        })
        .collect();
    let predicted = m.adapters.iter().any(|a| a.predicts.iter().any(Option::is_some));
    match departed.len() {
        0 if predicted => s.push_str(" Every cell as the library's prediction."),
        0 => {}
        1..=3 => {
            let _ = write!(s, " NOT as the library's prediction: {}.", departed.join("; "));
        }
        n => {
            let _ = write!(s, " {n} cells NOT as the library's prediction.");
        }
    }
    let broke = m
        .adapters
        .iter()
        .flat_map(|a| &a.cells)
        .filter(|c| matches!(c, Cell::CannotRun { .. } | Cell::Error { .. }))
        .count();
    if broke > 0 {
        let _ = write!(s, " {broke} cell(s) could not run or ended in an error.");
    }
    s
}

/// What lockstorm found for one library, from its cells: the faults under which it broke
/// mutual exclusion, let a stale write through, failed a liveness check, or left most
/// acquisitions unknown or failed.
pub(super) fn found(faults: &[FaultColumn], a: &AdapterRow) -> String {
    let ran = ran_cells(faults, a);
    let under = |pick: &dyn Fn(&Ran) -> bool| -> Vec<String> {
        ran.iter()
            .filter(|(_, r)| pick(r))
            .map(|(f, _)| f.title.to_lowercase())
            .collect()
    };
    // With the anomalies the reported seed's stories name: "node clock jump (early
    // expiry by a node clock)".
    let named = |pick: &dyn Fn(&Ran) -> bool| -> Vec<String> {
        ran.iter()
            .filter(|(_, r)| pick(r))
            .map(|(f, r)| match r.anomalies.as_slice() {
                [] => f.title.to_lowercase(),
                kinds => {
                    // A matrix.json written before findings no kind fits were said whole
                    // holds "unnamed", which reads as a name: it says "not named".
                    let kinds: Vec<&str> = kinds
                        .iter()
                        .map(|k| if k == "unnamed" { "not named" } else { k.as_str() })
                        .collect();
                    format!("{} ({})", f.title.to_lowercase(), kinds.join(", "))
                }
            })
            .collect()
    };
    let mut parts = Vec::new();
    let mut say = |what: &str, list: Vec<String>| {
        if !list.is_empty() {
            parts.push(format!("{what} under: {}", list.join("; ")));
        }
    };
    say(
        "two clients held the lock at once",
        named(&|r| r.unsafe_seeds > 0),
    );
    say(
        "the guarded resource took a stale write",
        named(&|r| r.stale_seeds > 0),
    );
    say(
        "a lock stayed out of reach after the heal",
        under(&|r| r.stuck_seeds > 0),
    );
    say(
        "an uncontended acquisition failed with a majority reachable",
        under(&|r| r.tolerance.as_ref().is_some_and(|t| t.failed > 0)),
    );
    say(
        "no seed was exercised",
        under(&|r| r.verdict() == "not exercised"),
    );
    say(
        "an acquire outlasted the ttl during a fault (a stall)",
        under(&|r| r.stalls > 0),
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
        parts.push(format!("{broke} cell(s) could not run or ended in an error"));
    }
    if parts.is_empty() {
        return "Safe, live and available under every fault it ran, on every seed.".into();
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

/// Wall seconds as "1 h 02 min", "3 min 20 s" or "12.3 s".
/// How long the matrix took: its wall time, and for a merged one each shard's and their
/// sum (the time on one machine, the shards one after another).
fn took(m: &Matrix) -> String {
    match m.shard_secs.as_slice() {
        [] | [_] => wall(m.wall_secs),
        shards => {
            let each: Vec<String> = shards.iter().map(|&s| wall(s)).collect();
            format!(
                "{} as {} shards, the longest (their wall times: {}; {} one after another)",
                wall(m.wall_secs),
                shards.len(),
                each.join(", "),
                wall(shards.iter().sum())
            )
        }
    }
}

fn wall(secs: f64) -> String {
    let whole = secs.round() as u64;
    if whole >= 3_600 {
        format!("{} h {:02} min", whole / 3_600, whole % 3_600 / 60)
    } else if whole >= 60 {
        format!("{} min {:02} s", whole / 60, whole % 60)
    } else {
        format!("{secs:.1} s")
    }
}

/// The colours and marks, in words: the legend under the grid (and README.md's).
const LEGEND: [(&str, &str, &str); 5] = [
    ("safe", "0/10", "no seed broke mutual exclusion (of the 10 exercised)"),
    (
        "unsafe",
        "7/10",
        "two clients held the lock at once on 7 of the 10 exercised seeds, or (✎) the guarded resource took a stale write",
    ),
    (
        "ne",
        "n.e.",
        "not exercised: too few seeds' faults touched anything where the lock could break, so the cell proves nothing",
    ),
    ("na", "n/a", "the fault has no template for the library's node layout, or it needs read and write modes the lock has not"),
    (
        "err",
        "error",
        "every seed ended in an error, the library cannot run here, or lockstorm cannot carry out the fault yet",
    ),
];

const MARKS: [(&str, &str); 5] = [
    (
        DEPARTS,
        "the finding departs from what the library's algorithm predicts",
    ),
    (
        UNEXERCISED,
        "some seeds were not exercised (the verdict rests on the others)",
    ),
    (STALE, "the guarded resource took a stale write"),
    (
        TROUBLE,
        "a lock stuck after the heal, or seeds that ended in an error",
    ),
    (
        CONTRADICTS_DOCS,
        "the finding contradicts what the library's own documentation says (hover it for the words and where)",
    ),
];

const GRID_CSS: &str = "body{font-family:sans-serif;margin:1em;font-size:14px;line-height:1.4}\
     p{max-width:75em}p.headline{font-size:15px;margin:.5em 0 1em}\
     table.grid{table-layout:fixed;width:100%;border-collapse:collapse;font-size:12px;line-height:1.2}\
     .grid col.lib{width:10.5em}\
     .grid td,.grid th{border:1px solid #fff;padding:2px;overflow:hidden}\
     .grid thead th{font-weight:normal;font-size:11px;vertical-align:bottom;text-align:left;overflow-wrap:anywhere;background:#f3f3f3}\
     .grid thead th b{display:block;font-size:12px}\
     .grid tbody th{text-align:left;font-weight:normal;white-space:nowrap;text-overflow:ellipsis;background:#f7f7f7}\
     .grid tbody th small{display:block;font-size:10px;color:#666;overflow:hidden;text-overflow:ellipsis}\
     .grid tr.group th{background:#444;color:#fff;font-weight:bold;padding:3px 6px}\
     .grid td{text-align:center;white-space:nowrap;font-variant-numeric:tabular-nums}\
     .grid td a{color:inherit;text-decoration:none}.grid td a:hover{text-decoration:underline}\
     .mark{font-weight:bold;margin-left:2px}\
     .safe{background:#bfe5bf}.unsafe{background:#f3a9a9}.ne{background:#ebe3b3}.na{background:#e4e4e4;color:#777}.err{background:#ffc76b}\
     td.departs{outline:2px solid #222;outline-offset:-2px}\
     .legend span.key{display:inline-block;min-width:3.5em;text-align:center;padding:0 3px;margin-right:.4em}\
     dl.faults dt{font-weight:bold;margin-top:.4em}dl.faults dd{margin-left:2em}code{font-size:85%}";

/// index.html: the headline, the grid, the legend, the faults.
pub(super) fn html(m: &Matrix) -> String {
    let mut s = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Lock libraries under lockstorm's faults</title><style>{GRID_CSS}</style></head><body>\
         <nav><a href=\"../index.html\">↑ up: all reports</a></nav>\
         <h1>Lock libraries under lockstorm's faults</h1><p class=\"headline\">{}</p>",
        esc(&headline(m))
    );
    s.push_str("<table class=\"grid\"><colgroup><col class=\"lib\">");
    for _ in &m.faults {
        s.push_str("<col>");
    }
    s.push_str("</colgroup><thead><tr><th>library</th>");
    for f in &m.faults {
        let _ = write!(
            s,
            "<th title=\"{}: {}\"><b>{}</b>{}</th>",
            esc(&f.title),
            esc(&f.about),
            esc(number(f)),
            esc(&short_title(f))
        );
    }
    s.push_str("</tr></thead><tbody>");
    for (group, rows) in groups(m) {
        let _ = write!(
            s,
            "<tr class=\"group\"><th colspan=\"{}\">{}</th></tr>",
            m.faults.len() + 1,
            esc(&group)
        );
        for a in rows {
            let name = if has_page(a) {
                format!("<a href=\"{0}/index.html\">{0}</a>", esc(&a.name))
            } else {
                esc(&a.name)
            };
            let tip = match (a.promise.is_empty(), a.options.is_empty()) {
                (_, true) => a.promise.clone(),
                (true, false) => format!("Options: {}", a.options),
                (false, false) => format!("{} Options: {}", a.promise, a.options),
            };
            let _ = write!(
                s,
                "<tr><th title=\"{}\">{name}<small>{}</small></th>",
                esc(&tip),
                esc(a.library.as_deref().unwrap_or(&a.kind))
            );
            for (i, f) in m.faults.iter().enumerate().take(a.cells.len()) {
                let cell = row_short(a, i);
                s.push_str(&short_td(&cell, cell.link.as_deref(), f));
            }
            s.push_str("</tr>");
        }
    }
    let _ = write!(
        s,
        "</tbody></table><p>{} seed(s) per cell from seed {}, {} run(s) at once; the matrix took {}; \
         regenerate with <code>{}</code>. A cell counts the seeds on which two clients held the lock \
         at once, of those exercised; it links the report of one seed (the first unsafe, else the \
         first), and its tooltip gives the whole line. A library's name opens its page: every cell \
         in full, what its algorithm predicts, the rerun commands.</p>\
         <h2>Reading the grid</h2><ul class=\"legend\">",
        m.seeds,
        m.seed,
        m.jobs,
        took(m),
        esc(&m.command)
    );
    if let Some(r) = &m.rejudged {
        let _ = write!(s, "<p>The cells were judged again: {}.</p>", esc(r));
    }
    if let Some(r) = &m.rerun {
        let _ = write!(
            s,
            "<p>{} cell(s) were run again after the run: {} ({}).</p>",
            r.cells.len(),
            esc(&r.why),
            esc(&r.cells.join(", "))
        );
    }
    for (class, text, what) in LEGEND {
        let _ = write!(
            s,
            "<li><span class=\"key {class}\">{}</span>{}</li>",
            esc(text),
            esc(what)
        );
    }
    for (sign, what) in MARKS {
        let _ = write!(
            s,
            "<li><span class=\"key\"><b>{sign}</b></span>{}</li>",
            esc(what)
        );
    }
    s.push_str(
        "</ul><p>A cell with a black frame is NOT as the library's prediction; hover its ≠ for \
         what was predicted and found. A cell's own page measures its run against the library's \
         prediction where the library has one for that fault (\"as the library's prediction\"), else \
         against the template's expectation, which is the built-in lock's (\"as the scenario expects\"). \
         README.md gives every cell in full as well.</p>\
         <h2>The faults</h2><dl class=\"faults\">",
    );
    for f in &m.faults {
        let _ = write!(
            s,
            "<dt>{} {} <code>{}</code></dt><dd>{}</dd>",
            esc(number(f)),
            esc(&f.title),
            esc(&f.id),
            esc(&f.about)
        );
    }
    s.push_str("</dl>");
    s.push_str(&m.provenance_html());
    s.push_str("</body></html>\n");
    s
}

/// A library's own page: one row per fault with what its algorithm predicts, the cell's
/// whole line, where it departs, and its report and rerun commands.
pub(super) fn library_page(a: &AdapterRow, m: &Matrix) -> String {
    let faults = &m.faults;
    // Titled as the matrix knows it (`redlock-rs`); the library's own name and version
    // (`redlock 2.0.0`, the crate's) come after.
    let own = a
        .library
        .as_ref()
        .filter(|l| *l != &a.name)
        .map(|l| format!("Library {}. ", esc(l)))
        .unwrap_or_default();
    let mut s = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0} under lockstorm's faults</title>\
         <style>body{{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.4}}\
         table{{border-collapse:collapse;font-size:90%}}td,th{{border:1px solid #ccc;padding:.4em;vertical-align:top;text-align:left}}\
         td.short{{text-align:center;white-space:nowrap;font-weight:bold}}.mark{{margin-left:2px}}\
         .safe{{background:#bfe5bf}}.unsafe{{background:#f3a9a9}}.ne{{background:#ebe3b3}}.na{{background:#e4e4e4;color:#777}}.err{{background:#ffc76b}}\
         td.departs{{outline:2px solid #222;outline-offset:-2px}}code{{font-size:85%}}</style></head><body>\
         <nav><a href=\"../index.html\">↑ up: the library matrix</a></nav><h1>{0} under lockstorm's faults</h1>\
         <p>{own}Adapter <code>{1}</code> ({2}, {3}{4}): <code>{5}</code>. {6}</p>",
        esc(&a.name),
        esc(&a.name),
        esc(&a.runtime),
        esc(&a.kind),
        a.family
            .as_ref()
            .map(|f| format!(", {} family", esc(f)))
            .unwrap_or_default(),
        esc(&a.command),
        esc(&a.promise)
    );
    if !a.options.is_empty() {
        let _ = write!(s, "<p>Adapter options (every cell): {}</p>", esc(&a.options));
    }
    let _ = write!(
        s,
        "<p><b>Found:</b> {}</p><table><colgroup><col style=\"width:13%\"><col style=\"width:27%\">\
         <col><col style=\"width:33%\"><col style=\"width:22%\"></colgroup><tr><th>fault</th><th>its algorithm predicts</th>\
         <th colspan=\"2\">found</th><th>report and reruns</th></tr>",
        esc(&found(faults, a))
    );
    let local = |r: &str| r.strip_prefix(&format!("{}/", a.name)).unwrap_or(r).to_string();
    for (i, (f, cell)) in faults.iter().zip(&a.cells).enumerate() {
        let predicted = a.predicts.get(i).and_then(Option::as_ref);
        let mut sh = row_short(a, i);
        sh.class = match sh.class {
            "safe" => "short safe",
            "unsafe" => "short unsafe",
            "ne" => "short ne",
            "na" => "short na",
            _ => "short err",
        };
        let link = sh.link.as_deref().map(local);
        let badge = short_td(&sh, link.as_deref(), f);
        let mut prediction = predicted
            .map(|p| format!("<b>{}</b>: {}", esc(p.verdict.name()), esc(&p.why)))
            .unwrap_or_default();
        if let Some(d) = a.documents.get(i).and_then(Option::as_ref) {
            let _ = write!(
                prediction,
                "<br>Its documentation says <b>{}</b>: “{}” ({})",
                esc(d.says.name()),
                esc(&d.quote),
                esc(&d.source)
            );
        }
        let mut line = esc(&summary(cell));
        let mut reruns = String::new();
        match cell {
            Cell::Ran(r) => {
                let _ = write!(line, "; liveness findings: {}", esc(&r.liveness));
                if let Some(d) = &r.departs {
                    let _ = write!(line, "<br><b>NOT as the library's prediction</b>: {}", esc(d));
                }
                if let Some(c) = a.contradicts_docs(i) {
                    let _ = write!(line, "<br><b>Contradicts its documentation</b>: {}", esc(&c));
                }
                if let Some(e) = &r.worker_error {
                    let _ = write!(line, "<br>error: {}", esc(e));
                }
                let _ = write!(
                    reruns,
                    "<a href=\"{}\">report of seed {}</a><br>this seed: <code>{}</code><br>every seed: <code>{}</code>",
                    esc(&local(&r.report)),
                    r.reported_seed,
                    esc(&r.rerun),
                    esc(&r.rerun_all)
                );
            }
            Cell::CannotRun { why } => {
                let _ = write!(line, ": {}", esc(why));
            }
            Cell::Refused { why, rerun } => {
                let _ = write!(line, ": {}", esc(why));
                let _ = write!(reruns, "<code>{}</code>", esc(rerun));
            }
            Cell::Error { why, report, rerun } => {
                let _ = write!(line, ": {}", esc(why));
                if !report.is_empty() {
                    let _ = write!(reruns, "<a href=\"{}\">history</a><br>", esc(&local(report)));
                }
                let _ = write!(reruns, "<code>{}</code>", esc(rerun));
            }
            Cell::NotApplicable | Cell::OtherShard => {}
        }
        let _ = write!(
            s,
            "<tr><td><b>{}</b> {}</td><td>{prediction}</td>{badge}<td>{line}</td><td>{reruns}</td></tr>",
            esc(number(f)),
            esc(&f.title)
        );
    }
    s.push_str("</table>");
    s.push_str(&m.provenance_html());
    s.push_str("</body></html>\n");
    s
}

/// A cell in README.md's grid: the tally, linking the report, and its marks.
fn markdown_cell(a: &AdapterRow, i: usize) -> String {
    let sh = row_short(a, i);
    let marks: String = sh.marks.iter().map(|m| m.sign).collect();
    let text = match &sh.link {
        Some(l) => format!("[{}]({l})", sh.text),
        None => sh.text.clone(),
    };
    let text = match sh.class {
        "unsafe" => format!("**{text}**"),
        _ => text,
    };
    if marks.is_empty() {
        text
    } else {
        format!("{text} {marks}")
    }
}

/// README.md: the headline, the grid by language and family, the legend and the faults,
/// then every library with its predictions and every cell's whole line.
pub(super) fn markdown(m: &Matrix) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Lock libraries under lockstorm's faults\n");
    let _ = writeln!(s, "**{}**\n", headline(m));
    let _ = writeln!(
        s,
        "Every adapter (a lock library behind lockstorm's worker protocol, docs/worker-protocol.md) \
         against every fault of the catalogue ({}/), {} seed(s) per cell from seed {}, \
         on local redis-servers, {} run(s) at once; the whole matrix took {}. Regenerate with `{}`.\n",
        m.catalogue,
        m.seeds,
        m.seed,
        m.jobs,
        took(m),
        m.command
    );
    if let Some(r) = &m.rejudged {
        let _ = writeln!(s, "The cells were judged again: {r}.\n");
    }
    if let Some(r) = &m.rerun {
        let _ = writeln!(
            s,
            "{} cell(s) were run again after the run: {} ({}).\n",
            r.cells.len(),
            r.why,
            r.cells.join(", ")
        );
    }
    let _ = writeln!(
        s,
        "A cell is the seeds on which two clients held the lock at once, of those exercised \
         (bold where any did), linking the report of one seed (the first unsafe, else the first); \
         its marks and the whole line of each cell (stale writes, fault tolerance, availability, \
         stalls, each setting of its grid) follow under [The libraries](#the-libraries). \
         index.html shows the same grid in colour.\n"
    );
    for (class, text, what) in LEGEND {
        let _ = writeln!(
            s,
            "- {}: {what}",
            if class == "unsafe" {
                format!("**{text}**")
            } else {
                text.to_string()
            }
        );
    }
    for (sign, what) in MARKS {
        let _ = writeln!(s, "- {sign}: {what}");
    }
    s.push('\n');
    let faults: Vec<String> = m
        .faults
        .iter()
        .map(|f| format!("{} {}", number(f), short_title(f)))
        .collect();
    let _ = writeln!(
        s,
        "Faults: {} (described under [The faults](#the-faults)).\n",
        faults.join(" · ")
    );
    for (group, rows) in groups(m) {
        let _ = write!(s, "**{group}**\n\n| library |");
        for f in &m.faults {
            let _ = write!(s, " {} |", number(f));
        }
        let _ = write!(s, "\n| --- |");
        for _ in &m.faults {
            let _ = write!(s, " --- |");
        }
        s.push('\n');
        for a in rows {
            let _ = write!(s, "| [{0}](#{0}) |", a.name);
            for i in 0..a.cells.len() {
                let _ = write!(s, " {} |", markdown_cell(a, i));
            }
            s.push('\n');
        }
        s.push('\n');
    }
    let departed: usize = m
        .adapters
        .iter()
        .flat_map(|a| &a.cells)
        .filter(|c| matches!(c, Cell::Ran(r) if r.departs.is_some()))
        .count();
    let _ = writeln!(
        s,
        "{departed} cell(s) NOT as the library's prediction (a cell's own page says \"as the scenario expects\" where the library predicts nothing for its fault: it then measures against the template's expectation, the built-in lock's).\n\n## The libraries\n"
    );
    for a in &m.adapters {
        let _ = writeln!(s, "### {}\n", a.name);
        let _ = writeln!(
            s,
            "`{}` ({}, {}{}){}\n",
            a.command,
            a.runtime,
            a.kind,
            a.family
                .as_ref()
                .map(|f| format!(", {f} family"))
                .unwrap_or_default(),
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
        let predicted: Vec<(&FaultColumn, &Prediction)> = m
            .faults
            .iter()
            .zip(&a.predicts)
            .filter_map(|(f, p)| Some((f, p.as_ref()?)))
            .collect();
        if !predicted.is_empty() {
            let _ = writeln!(s, "Its algorithm predicts:\n");
            for (f, p) in predicted {
                let _ = writeln!(s, "- {}: **{}**: {}", f.title, p.verdict.name(), p.why);
            }
            s.push('\n');
        }
        let documented: Vec<(&FaultColumn, &Documented)> = m
            .faults
            .iter()
            .zip(&a.documents)
            .filter_map(|(f, d)| Some((f, d.as_ref()?)))
            .collect();
        if !documented.is_empty() {
            let _ = writeln!(s, "Its documentation says:\n");
            for (f, d) in documented {
                let _ = writeln!(
                    s,
                    "- {}: **{}**: \"{}\" ({})",
                    f.title,
                    d.says.name(),
                    d.quote,
                    d.source
                );
            }
            s.push('\n');
        }
        let _ = writeln!(s, "Per fault:\n");
        for (f, c) in m.faults.iter().zip(&a.cells) {
            match c {
                Cell::NotApplicable => {}
                Cell::OtherShard => {
                    let _ = writeln!(
                        s,
                        "- {}: in another shard (`lockstorm merge` puts it in)",
                        f.title
                    );
                }
                Cell::CannotRun { why } => {
                    let _ = writeln!(s, "- {}: cannot run here: {why}", f.title);
                }
                Cell::Refused { why, rerun } | Cell::Error { why, rerun, .. } => {
                    let _ = writeln!(s, "- {}: {}: {why} (`{rerun}`)", f.title, summary(c));
                }
                Cell::Ran(r) => {
                    let _ = writeln!(
                        s,
                        "- {}: {}; liveness findings: {}; report of seed {} (`{}`; every seed: `{}`){}{}",
                        f.title,
                        summary(c),
                        r.liveness,
                        r.reported_seed,
                        r.rerun,
                        r.rerun_all,
                        r.departs
                            .as_ref()
                            .map(|d| format!("\n  - **NOT as the library's prediction**: {d}"))
                            .unwrap_or_default(),
                        r.worker_error
                            .as_ref()
                            .map(|e| format!("\n  - error: {e}"))
                            .unwrap_or_default()
                    );
                }
            }
        }
        s.push('\n');
    }
    let _ = writeln!(s, "## The faults\n");
    for f in &m.faults {
        let _ = writeln!(s, "- **{} {}** (`{}`): {}", number(f), f.title, f.id, f.about);
    }
    let _ = write!(s, "\n{}", m.provenance_markdown());
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cell that ran `seeds` seeds, `unsafe_seeds` of them unsafe.
    fn ran(adapter: &str, fault: &str, unsafe_seeds: u64, anomalies: &[&str]) -> serde_json::Value {
        serde_json::json!({
            "status": "ran", "seeds": 2, "seeds_asked": 2, "unsafe_seeds": unsafe_seeds,
            "not_exercised_seeds": 0, "rate": {"rate": 0.0, "low": 0.0, "high": 0.66},
            "violations": unsafe_seeds, "stale_seeds": 0, "stale_writes": 0,
            "resource_writes": 0, "stuck_seeds": 0, "availability": 1.0, "unknown": 0.0,
            "stalls": 0, "stall_seeds": 0, "stall_max_us": 0, "liveness": "none",
            "worker_errors": 0, "reported_seed": 1,
            "report": format!("{adapter}/{fault}/index.html"),
            "rerun": "", "rerun_all": "", "anomalies": anomalies,
        })
    }

    fn fault(id: &str) -> serde_json::Value {
        serde_json::json!({"id": id, "title": format!("The {id} fault"), "about": "what it does"})
    }

    fn row(
        name: &str,
        runtime: &str,
        family: Option<&str>,
        cells: Vec<serde_json::Value>,
    ) -> serde_json::Value {
        let mut row = serde_json::json!({
            "name": name, "runtime": runtime, "kind": "multi", "command": name,
            "promise": "", "cells": cells,
        });
        if let Some(f) = family {
            row["family"] = f.into();
        }
        row
    }

    /// 25 libraries in three languages and two families, 15 faults: every kind of cell.
    fn big() -> Matrix {
        let faults: Vec<serde_json::Value> = (1..=15)
            .map(|i| fault(&format!("{i:02}-a-rather-long-fault-name-{i}")))
            .collect();
        let adapters: Vec<serde_json::Value> = (0..25)
            .map(|n| {
                let name = format!("library-with-a-long-name-{n}");
                let cells: Vec<serde_json::Value> = (1..=15)
                    .map(|i| {
                        let id = format!("{i:02}-a-rather-long-fault-name-{i}");
                        match (n + i) % 7 {
                            0 => serde_json::json!({"status": "not_applicable"}),
                            1 => serde_json::json!({"status": "cannot_run", "why": "no such command, and a long explanation of it"}),
                            2 => serde_json::json!({"status": "error", "why": "a long error", "report": format!("{name}/{id}/index.html"), "rerun": "lockstorm ..."}),
                            3 => {
                                let mut c = ran(&name, &id, 0, &[]);
                                c["not_exercised_seeds"] = 1.into();
                                c["stale_seeds"] = 2.into();
                                c["resource_writes"] = 9.into();
                                c["stuck_seeds"] = 1.into();
                                c["departs"] = "predicted safe, found a stale write".into();
                                c["seeds"] = 120.into();
                                c
                            }
                            4 => ran(&name, &id, 2, &["early expiry"]),
                            _ => ran(&name, &id, 0, &[]),
                        }
                    })
                    .collect();
                row(
                    &name,
                    ["python", "rust", "php"][n % 3],
                    Some(["redlock", "single"][n % 2]),
                    cells,
                )
            })
            .collect();
        serde_json::from_value(serde_json::json!({
            "seed": 1, "seeds": 2, "command": "lockstorm matrix", "faults": faults,
            "adapters": adapters,
        }))
        .unwrap()
    }

    /// The visible text of every `<td>` of the grid, and the cell's first link.
    fn grid_cells(page: &str) -> Vec<(String, Option<String>)> {
        let grid = &page[page.find("<table class=\"grid\"").unwrap()..];
        let grid = &grid[..grid.find("</table>").unwrap()];
        grid.split("<td")
            .skip(1)
            .map(|td| {
                let td = &td[..td.find("</td>").unwrap()];
                let inner = &td[td.find('>').unwrap() + 1..];
                let mut text = String::new();
                let mut in_tag = false;
                for ch in inner.chars() {
                    match ch {
                        '<' => in_tag = true,
                        '>' => in_tag = false,
                        c if !in_tag => text.push(c),
                        _ => {}
                    }
                }
                let link = inner
                    .split_once("href=\"")
                    .map(|(_, rest)| rest[..rest.find('"').unwrap()].to_string());
                (text, link)
            })
            .collect()
    }

    #[test]
    fn the_grid_cells_are_short_and_every_cell_that_ran_links_its_report() {
        let m = big();
        let page = html(&m);
        let cells = grid_cells(&page);
        assert_eq!(cells.len(), 25 * 15);
        for (text, _) in &cells {
            // &amp; and the like count as one character each in the browser.
            let shown = text.replace("&amp;", "&").replace("&#39;", "'");
            assert!(shown.chars().count() <= 12, "a long cell: {shown:?}");
        }
        let mut at = 0;
        for a in groups(&m).into_iter().flat_map(|(_, rows)| rows) {
            for (c, (text, link)) in a.cells.iter().zip(&cells[at..at + a.cells.len()]) {
                if let Cell::Ran(r) = c {
                    assert_eq!(link.as_deref(), Some(r.report.as_str()), "{text}");
                }
            }
            at += a.cells.len();
        }
        // The marks are there, each with what it means.
        for mark in [DEPARTS, UNEXERCISED, STALE, TROUBLE] {
            assert!(page.contains(&format!("\">{mark}</span>")), "{mark}");
        }
        assert!(page.contains("title=\"not as predicted: predicted safe, found a stale write"));
        assert!(page.contains("table-layout:fixed;width:100%"));
        // The headers are short, the long titles their tooltips.
        assert!(page.contains("<th title=\"The 03-a-rather-long-fault-name-3 fault: what it does\"><b>03</b>a rather long fault name 3</th>"));
    }

    #[test]
    fn the_grid_groups_libraries_by_language_then_family() {
        let m = big();
        let labels: Vec<String> = groups(&m).into_iter().map(|(g, _)| g).collect();
        assert_eq!(
            labels,
            [
                "python · redlock",
                "python · single",
                "rust · single",
                "rust · redlock",
                "php · redlock",
                "php · single"
            ]
        );
        let page = html(&m);
        let at = |s: &str| page.find(s).unwrap();
        assert!(at(">python · single<") < at(">rust · single<"));
        // With no family (a matrix.json from before rows kept one), the node layout.
        let mut old = m.clone();
        for a in &mut old.adapters {
            a.family = None;
        }
        assert_eq!(groups(&old)[0].0, "python · multi-node");
    }

    #[test]
    fn the_headline_names_who_held_and_who_broke_under_what() {
        let m: Matrix = serde_json::from_value(serde_json::json!({
            "seed": 1, "seeds": 2, "command": "lockstorm matrix",
            "faults": [fault("01-clean"), fault("02-node-clock-jump"), fault("03-client-pause")],
            "adapters": [
                row("good", "rust", None, vec![ran("good", "01", 0, &[]), ran("good", "02", 0, &[]), ran("good", "03", 0, &[])]),
                row("a", "python", None, vec![ran("a", "01", 0, &[]), ran("a", "02", 1, &[]), ran("a", "03", 0, &[])]),
                row("b", "python", None, vec![ran("b", "01", 0, &[]), ran("b", "02", 2, &[]), ran("b", "03", 0, &[])]),
                row("c", "php", None, vec![ran("c", "01", 0, &[]), ran("c", "02", 0, &[]), ran("c", "03", 2, &[])]),
            ],
        }))
        .unwrap();
        let line = headline(&m);
        assert!(
            line.starts_with(
                "1 of 4 libraries safe under every fault they ran (good); two clients held the lock at once: a, b (node clock jump); c (client pause)."
            ),
            "{line}"
        );
        assert!(line.ends_with("c (client pause)."), "{line}");
    }

    #[test]
    fn the_found_line_names_the_anomalies_of_each_unsafe_cell() {
        let m: Matrix = serde_json::from_value(serde_json::json!({
            "seed": 1, "seeds": 2, "command": "lockstorm matrix",
            "faults": [fault("clean"), fault("crash"), fault("jump")],
            "adapters": [row("lib", "python", None, vec![
                ran("lib", "clean", 0, &[]),
                ran("lib", "crash", 2, &["key lost on restart"]),
                ran("lib", "jump", 1, &["unnamed"]),
            ])],
        }))
        .unwrap();
        let line = found(&m.faults, &m.adapters[0]);
        assert!(
            line.starts_with(
                "Two clients held the lock at once under: the crash fault (key lost on restart); the jump fault \
                 (not named)"
            ),
            "{line}"
        );
        assert!(
            !line.contains("unnamed"),
            "an older matrix.json's 'unnamed' is not shown as a name"
        );
    }

    #[test]
    fn a_library_page_is_titled_as_the_matrix_names_it_and_says_what_made_it() {
        let mut m = big();
        m.adapters[3].name = "redlock-rs".into();
        m.adapters[3].library = Some("redlock 2.0.0".into());
        let old = library_page(&m.adapters[3], &m);
        assert!(
            old.contains("<title>redlock-rs under lockstorm's faults</title>"),
            "{old}"
        );
        assert!(old.contains("<h1>redlock-rs under lockstorm's faults</h1><p>Library redlock 2.0.0. Adapter <code>redlock-rs</code>"));
        assert!(old.contains(
            "did not record its version, commit or date. Made again by <code>lockstorm matrix</code>"
        ));
        m.provenance = Some(crate::report::provenance::Provenance {
            lockstorm: "0.1.0".into(),
            commit: "0123456789ab".into(),
            date_utc: Some("2026-11-29T12:55:03Z".into()),
            redis_server: Some("7.0.15".into()),
            real: true,
            command: m.command.clone(),
        });
        let made =
            "Made by lockstorm 0.1.0 (commit 0123456789ab), on 2026-11-29T12:55:03Z, redis-server 7.0.15. \
                    Made again by <code>lockstorm matrix</code>.";
        for page in [library_page(&m.adapters[3], &m), html(&m)] {
            assert!(page.contains(made), "{page}");
        }
        assert!(markdown(&m).contains(
            "Made by lockstorm 0.1.0 (commit 0123456789ab), on 2026-11-29T12:55:03Z, redis-server 7.0.15. \
             Made again by `lockstorm matrix`."
        ));
    }

    #[test]
    fn the_library_page_keeps_every_cell_in_full() {
        let m = big();
        let a = &m.adapters[3];
        let page = library_page(a, &m);
        for (c, f) in a.cells.iter().zip(&m.faults) {
            assert!(page.contains(&esc(&summary(c))), "{}", f.id);
            if let Cell::Ran(r) = c {
                let local = r.report.strip_prefix(&format!("{}/", a.name)).unwrap();
                assert!(page.contains(&format!("href=\"{local}\"")), "{}", f.id);
            }
        }
        assert!(page.contains("<b>NOT as the library's prediction</b>: predicted safe, found a stale write"));
    }

    #[test]
    fn a_cell_that_contradicts_the_librarys_documentation_is_marked_and_says_where() {
        let doc =
            |says: &str| serde_json::json!({"says": says, "quote": "the docs' words", "source": "README:7"});
        let mut r = row(
            "lib",
            "python",
            None,
            vec![
                ran("lib", "clean", 0, &[]),
                ran("lib", "crash", 2, &[]),
                ran("lib", "jump", 0, &[]),
            ],
        );
        // Claimed safe and safe; claimed safe and unsafe; claimed tolerant with no probe
        // judged (untested: no contradiction).
        r["documents"] = serde_json::json!([doc("safe"), doc("safe"), doc("tolerant")]);
        let m: Matrix = serde_json::from_value(serde_json::json!({
            "seed": 1, "seeds": 2, "command": "lockstorm matrix",
            "faults": [fault("clean"), fault("crash"), fault("jump")],
            "adapters": [r],
        }))
        .unwrap();
        let a = &m.adapters[0];
        let marked: Vec<bool> = (0..3).map(|i| a.contradicts_docs(i).is_some()).collect();
        assert_eq!(marked, [false, true, false]);
        let why = a.contradicts_docs(1).unwrap();
        assert!(
            why.starts_with("its documentation says safe, found two holders at once on 2/2 seeds (\"the docs' words\", README:7)"),
            "{why}"
        );
        let cells = grid_cells(&html(&m));
        let with_mark: Vec<&str> = cells
            .iter()
            .filter(|(text, _)| text.contains(CONTRADICTS_DOCS))
            .map(|(text, _)| text.as_str())
            .collect();
        assert_eq!(with_mark.len(), 1, "{cells:?}");
        assert!(with_mark[0].starts_with("2/2"), "{with_mark:?}");
        let page = library_page(a, &m);
        assert!(
            page.contains("<b>Contradicts its documentation</b>: its documentation says safe"),
            "{page}"
        );
        assert!(
            page.contains("Its documentation says <b>safe and fault-tolerant</b>: “"),
            "{page}"
        );
        assert!(page.contains("” (README:7)"), "{page}");
        let md = markdown(&m);
        assert!(
            md.contains(&format!("2/2](lib/crash/index.html)** {CONTRADICTS_DOCS}")),
            "{md}"
        );
        assert!(md.contains("Its documentation says:"), "{md}");
    }

    #[test]
    fn cells_run_again_after_the_run_are_named_with_why() {
        let mut m: Matrix = serde_json::from_value(serde_json::json!({
            "seed": 1, "seeds": 2, "command": "lockstorm matrix",
            "faults": [fault("clean")],
            "adapters": [row("lib", "python", None, vec![ran("lib", "clean", 0, &[])])],
        }))
        .unwrap();
        assert!(!markdown(&m).contains("run again"));
        m.rerun = Some(super::super::matrix::Rerun {
            why: "after the hold fix".into(),
            cells: vec!["lib/clean".into()],
        });
        assert!(
            markdown(&m).contains("1 cell(s) were run again after the run: after the hold fix (lib/clean).")
        );
        assert!(html(&m).contains("1 cell(s) were run again after the run: after the hold fix (lib/clean)."));
    }
}
