//! index.html: the page a person reads. Self-contained: inline CSS, one small inline
//! script (the interactive timeline, [`super::interactive`]), no network; the plots are the SVG files next to it (relative links). Everything shown comes from summary.json (the verdict over all seeds)
//! and the reported seed's history with its findings: the violations with their
//! stories, the stale writes to the guarded resource in their own table with theirs,
//! the liveness findings and the faults.

use super::narrative::Story;
use super::view::{Outcome, RunView};
use super::words::{esc, fault_sentence, secs, span};
use super::{Kept, PlotInfo};
use crate::checker::stats::percentile;
use serde_json::Value;
use std::fmt::Write as _;

/// The stories a page tells, each list worst first ([`super::severity`]).
pub struct Told<'s> {
    pub violations: &'s [Story],
    pub stale: &'s [Story],
    pub regressions: &'s [Story],
    pub waits: &'s [Story],
}

/// Which list's first story the first screen tells ("What happened"): the sections below
/// point to it rather than tell it twice.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lead {
    Violation,
    Stale,
    Regression,
    Wait,
}

/// How many violation stories the page tells in full (narrative.md has more).
pub const STORIES_ON_PAGE: usize = 20;
const SEED_ROWS: usize = 50;
const FAULT_ROWS: usize = 100;

const STYLE: &str = "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f3f3f3}td.n{text-align:right}.verdict{font-size:1.4em;font-weight:bold;padding:.4em .8em;display:inline-block;border-radius:4px}
.safe{background:#e3f4e3;color:#1d5e1d}.unsafe{background:#fbe0e0;color:#8a1414}.notex{background:#fff1cc;color:#6b4a00}.miss{outline:3px solid #d62728}
figure{margin:1.5em 0}figure img{max-width:100%;border:1px solid #ddd}figcaption{color:#555;font-size:.9em}
code,pre{background:#f6f6f6;padding:.1em .3em}ol.steps li{margin:.2em 0}.why{font-style:italic}
nav{font-size:.9em;margin-bottom:.5em}.banner{padding:.5em 1em;border-radius:4px;margin:.5em 0}.banner p{margin:.2em 0}
.banner .headline{font-size:1.4em}.banner .expect{font-size:.7em;font-weight:normal}.banner .what{font-size:1.05em}
ul.judges{margin:.3em 0;padding-left:1.2em;font-size:.92em}ul.judges li.safe,ul.judges li.unsafe,ul.judges li.notex{background:none}
ul.judges li.unsafe b{color:#8a1414}ul.judges li.notex b{color:#6b4a00}
figure.interactive svg{max-width:100%;height:auto;border:1px solid #ddd;cursor:grab;user-select:none}figure.interactive rect:hover{stroke:#000;stroke-width:1.5}.tlbar button{font-size:.85em}.tlwin{color:#555;font-size:.9em}pre.lines{font-size:.8em;white-space:pre-wrap;word-break:break-all}pre.lines span:target{background:#ffe08a}.opinfo{display:block;font-family:monospace;color:#222}.banner .aside{font-size:.9em;color:#444}";

fn text(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn pct(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// Renders the page up to its Files section ([`files`] ends it). `anomaly` names the
/// first finding's anomaly in the banner, when the caller has classified it; `timing`
/// says the folder has a timing.json (which dates the run).
pub fn page(
    summary: &Value,
    view: &RunView,
    plots: &[PlotInfo],
    told: &Told,
    anomaly: Option<&str>,
    timing: bool,
    budget: super::interactive::Budget,
) -> String {
    let scenario = text(summary, "scenario");
    let banner = super::banner::judge(summary, view, anomaly);
    // Distinct titles: a library matrix runs the same case names for every library.
    let library = worker_title(summary, view)
        .map(|w| format!(" with {w}"))
        .unwrap_or_default();
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{} — {}{} (lockstorm run)</title><style>{STYLE}</style></head><body>\n",
        banner.severity.word(),
        esc(&scenario),
        esc(&library)
    );
    h.push_str("<nav><a href=\"../index.html\">↑ up: the index of these reports</a></nav>\n");
    let _ = writeln!(h, "<h1>{}{}</h1>", esc(&scenario), esc(&library));
    if summary["partial"].as_bool() == Some(true) {
        let _ = writeln!(
            h,
            "<p class=\"verdict unsafe miss\">Partial run: {}. What follows covers the history up to where it stopped.</p>",
            esc(&text(summary, "partial_reason"))
        );
    }
    h.push_str(&banner.html());
    let seeds = summary["seeds"].as_array().map_or(&[][..], Vec::as_slice);

    // The first screen: the zoomed timeline and the first story, before any table.
    let (first, rest): (Vec<&PlotInfo>, Vec<&PlotInfo>) =
        plots.iter().partition(|p| p.stem.starts_with("timeline-"));
    for p in first.iter().take(1) {
        figure(&mut h, p);
    }
    let lead = if let (Some(v), Some(s)) = (view.violations().first(), told.violations.first()) {
        Some((
            Lead::Violation,
            format!(
                "Clients {} and {} on {} for {}",
                v.first.client,
                v.second.client,
                esc(&v.lock),
                span(v.overlap_us())
            ),
            s,
        ))
    } else if let (Some(rv), Some(s)) = (view.worst.stale.first(), told.stale.first()) {
        Some((
            Lead::Stale,
            format!(
                "Stale write: client {} on {}, {}",
                rv.client,
                esc(&rv.lock),
                esc(&super::stale::against(rv))
            ),
            s,
        ))
    } else if let (Some(r), Some(s)) = (view.worst.regressions.first(), told.regressions.first()) {
        Some((Lead::Regression, regression_heading(r), s))
    } else if let (Some(l), Some(s)) = (view.worst.liveness.first(), told.waits.first()) {
        Some((Lead::Wait, wait_heading(l), s))
    } else {
        None
    };
    if let Some((_, heading, s)) = &lead {
        let _ = write!(h, "<h2 id=\"what-happened\">What happened</h2><h3>{heading}</h3>");
        story(&mut h, s);
    }
    let lead = lead.map(|(kind, _, _)| kind);

    // Below the story, so the first screen keeps it: the whole run, to zoom and hover,
    // opening on the finding.
    let around = |from: u64, to: u64| {
        let pad = (to - from) / 5 + 1;
        (from.saturating_sub(pad), to + pad)
    };
    let zoom = match lead {
        Some(Lead::Violation) => view.violations().first().map(|v| {
            (
                v.lock.to_string(),
                around(v.first.start_us.min(v.second.start_us), v.overlap_end_us),
                (v.overlap_start_us, v.overlap_end_us),
            )
        }),
        Some(Lead::Stale) => view.worst.stale.first().map(|rv| {
            let start = rv.hold_end_us.unwrap_or(rv.write_us).min(rv.holder.start_us);
            (
                rv.lock.clone(),
                around(start, rv.write_us + 1),
                (rv.write_us, rv.write_us + 1),
            )
        }),
        Some(Lead::Regression) => view.worst.regressions.first().map(|r| {
            (
                r.lock.clone(),
                around(r.earlier.start_us, r.later.start_us + 1),
                (r.earlier.end_us, r.later.start_us.max(r.earlier.end_us + 1)),
            )
        }),
        Some(Lead::Wait) => view.worst.liveness.first().and_then(|l| {
            let (lock, from, to) = super::waits::window(view, l);
            (!lock.is_empty()).then(|| (lock, around(from, to.max(from + 1)), (from, to.max(from + 1))))
        }),
        None => None,
    };
    let focus = zoom.map(|(lock, (from_us, to_us), band)| super::interactive::Focus {
        lock,
        from_us,
        to_us,
        band,
    });
    h.push_str(&super::interactive::timeline(view, focus.as_ref(), budget));
    h.push_str("<h2>The run</h2>");
    facts(&mut h, summary, view, timing);
    seeds_table(&mut h, seeds, summary["reported_seed"].as_u64());
    mode_table(&mut h, view);
    for p in first.iter().skip(1).chain(&rest) {
        figure(&mut h, p);
    }
    violations(&mut h, view, told.violations, lead == Some(Lead::Violation));
    stale_writes(&mut h, view, told, lead);
    liveness(&mut h, view, told.waits, lead == Some(Lead::Wait));
    faults(&mut h, view);
    h
}

/// The heading of a fencing token's story.
fn regression_heading(r: &crate::checker::resource::FenceRegression) -> String {
    format!(
        "Fencing token {} for client {} on {}, after client {}'s {}",
        r.later.fence.unwrap_or(0),
        r.later.client,
        esc(&r.lock),
        r.earlier.client,
        r.earlier.fence.unwrap_or(0)
    )
}

/// The heading of a liveness finding's story.
fn wait_heading(l: &crate::checker::LivenessFinding) -> String {
    let (got, waited) = super::severity::wait(l);
    use crate::checker::LivenessFinding as L;
    let what = match l {
        L::WriterStarvation { client, lock, .. } => format!("Writer client {client} on {}", esc(lock)),
        L::Deadlock { lock, .. } => format!("The probe on {} after the heal", esc(lock)),
        L::FaultTolerance { client, lock, .. } => {
            format!("Client {client} on {}, a majority reachable", esc(lock))
        }
        L::StuckAfterHeal { lock, .. } => format!("{} after the heal", esc(lock)),
        L::NoProbe { .. } => return "The liveness probe never ran".into(),
    };
    match got {
        true => format!("{what}: got it after {}", span(waited)),
        false => format!("{what}: did not get it in {}", span(waited)),
    }
}

/// The line that stands for a story the first screen told.
fn told_above(h: &mut String) {
    h.push_str("<p>Told above, under <a href=\"#what-happened\">What happened</a>.</p>");
}

/// The end of the page [`page`] begins: its Files section, which says what history.jsonl
/// keeps (decided from what the rest of the page cites), which logs the folder keeps
/// and whether it has a timing.json.
pub fn files(summary: &Value, history: &Kept, logs: &[super::logs::KeptLog], timing: bool) -> String {
    let mut h = String::new();
    h.push_str("<h2>Files</h2><ul><li><a href=\"summary.json\">summary.json</a>: the verdict per seed and the reported seed's findings</li>");
    if timing {
        h.push_str("<li><a href=\"timing.json\">timing.json</a>: when the run was made (UTC) and how long its seeds took, kept apart so that the same seeds write the same summary.json and page</li>");
    }
    let sim = text(summary, "backend") == "sim" || summary["backend"].is_null();
    let rerun = match sim {
        true => "the rerun command above writes it again, byte for byte",
        false => "the rerun command above runs the seed again on real servers, which writes a new history, not the same one",
    };
    match history {
        Kept::Whole => h.push_str("<li><a href=\"history.jsonl\">history.jsonl</a>: every event of the reported seed (format: src/history.rs)</li>"),
        Kept::Cut { windows, lines } => {
            let spans: Vec<String> = windows
                .iter()
                .map(|w| match w.start() == w.end() {
                    true => w.start().to_string(),
                    false => format!("{}–{}", w.start(), w.end()),
                })
                .collect();
            let meta = match windows.first().is_some_and(|w| *w.start() == 1) {
                true => "its first line, the meta line, says so",
                false => "and the meta line (line 1), which says so",
            };
            let _ = write!(
                h,
                "<li><a href=\"history.jsonl\">history.jsonl</a>: cut to what this page cites, each window with {} lines either side: lines {} of {lines}, {meta} (<code>cut</code>). Every other line is blank, so each line keeps its number. <code>lockstorm check</code> refuses it, since a verdict needs every line; {rerun}</li>",
                crate::history::cut::CONTEXT_LINES,
                spans.join(", "),
            );
        }
        Kept::Not => {
            let _ = write!(
                h,
                "<li>history.jsonl is not kept here: no story on this page cites its lines, and the committed reports have a size budget; {rerun}</li>"
            );
        }
    }
    h.push_str(&super::logs::html(logs));
    if !sim && !logs.iter().any(|l| l.path.starts_with(super::logs::NODES)) {
        h.push_str("<li>No redis-server log is kept here: lockstorm keeps the logs of the servers it starts as processes, where the report keeps their history; the rerun command writes them again</li>");
    }
    h.push_str("<li><a href=\"narrative.md\">narrative.md</a>: the story of each violation and stale write</li></ul>\n</body></html>\n");
    h
}

/// A plot with its caption.
fn figure(h: &mut String, p: &PlotInfo) {
    let _ = writeln!(
        h,
        "<figure><img src=\"{0}.svg\" alt=\"{1}\" width=\"{2}\"><figcaption>{3} (<a href=\"{0}.svg\">SVG</a>)</figcaption></figure>",
        esc(&p.stem),
        esc(&p.title),
        p.width,
        esc(&p.caption)
    );
}

fn facts(h: &mut String, summary: &Value, view: &RunView, timing: bool) {
    h.push_str("<table>");
    let mut row = |k: &str, v: String| {
        if !v.is_empty() {
            let _ = write!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), v);
        }
    };
    row("scenario file", esc(&text(summary, "file")));
    if let Some(m) = &view.meta {
        // A worker run names the library it ran; the algorithm is then the scenario's.
        let lock = m.worker.as_ref().map_or_else(
            || m.algorithm.clone(),
            |w| {
                format!(
                    "{} (worker `{}`, scenario algorithm {})",
                    w.name(),
                    w.command.join(" "),
                    m.algorithm
                )
            },
        );
        row(
            "setup",
            esc(&format!(
                "{lock} on {} node(s), {} client(s), ttl {} ms",
                m.nodes, m.clients, m.ttl_ms
            )),
        );
    }
    row("reported seed", esc(&text(summary, "reported_seed")));
    row("versions tested", esc(&versions(summary, view)));
    row("date", date(summary, timing));
    let whole = text(summary, "command");
    if !whole.is_empty() {
        row("every seed", format!("<code>{}</code>", esc(&whole)));
    }
    let rerun = text(summary, "rerun");
    if !rerun.is_empty() {
        row("rerun", format!("<code>{}</code>", esc(&rerun)));
    }
    let shrink = text(summary, "shrink");
    if !shrink.is_empty() {
        // A real run's seed shrinks on the simulator (its command says `--backend sim`):
        // the same scenario and seed, not a replay of this history.
        let label = match text(summary, "backend").as_str() {
            "" | "sim" => "shrink",
            _ => "shrink (on the simulator)",
        };
        row(label, format!("<code>{}</code>", esc(&shrink)));
    }
    let stats = &summary["stats"];
    row("fault tolerance (probe)", esc(&probe_text(stats)));
    row("stalls", esc(&stalls_text(stats)));
    row(
        "history",
        esc(&format!(
            "{} events over {} of true time ({} faults)",
            view.history.len(),
            secs(view.end_us),
            view.faults.len()
        )),
    );
    h.push_str("</table>\n");
}

/// When the run was made: a real run's summary.json says; a simulated run's page must
/// be the same bytes for the same seeds, so its date is in timing.json, when the folder
/// has one (an analysis's scenario has none: its index is dated).
fn date(summary: &Value, timing: bool) -> String {
    match (summary["versions"]["date_utc"].as_str(), timing) {
        (Some(d), _) => format!("{} (UTC)", esc(d)),
        (None, true) => "in <a href=\"timing.json\">timing.json</a> (UTC), beside the run's wall-clock figures, so that the same seeds write the same page".into(),
        (None, false) => String::new(),
    }
}

/// The worker's name in a title: the adapter's, as the library matrix and
/// adapters.toml know it (`redlock-rs`), else what its `hello_ok` named (`redlock
/// 2.0.0`, the crate's name), else its command.
fn worker_title(summary: &Value, view: &RunView) -> Option<String> {
    let origin = &summary["worker"]["origin"];
    match (origin["from"].as_str(), origin["name"].as_str()) {
        (Some("adapter"), Some(name)) => Some(name.to_string()),
        _ => view.meta.as_ref()?.worker.as_ref().map(|w| w.name()),
    }
}

/// lockstorm (its version and commit), redis-server and the worker library, as
/// summary.json recorded them (a summary from before it did names what the history
/// says).
fn versions(summary: &Value, view: &RunView) -> String {
    let v = &summary["versions"];
    let mut parts = Vec::new();
    if let Some(l) = v["lockstorm"].as_str() {
        parts.push(match v["commit"].as_str() {
            Some(c) => super::provenance::named(l, c),
            None => format!("lockstorm {l} (commit not recorded)"),
        });
    }
    match v["redis_server"].as_str() {
        Some(r) => parts.push(format!("redis-server {r}")),
        None if summary["backend"] == "sim" => parts.push("the simulator (no redis-server)".into()),
        None => {}
    }
    let library = v["library"]
        .as_str()
        .map(str::to_string)
        .or_else(|| view.meta.as_ref()?.worker.as_ref().map(|w| w.name()));
    if let Some(l) = library {
        let adapter = match &summary["worker"]["origin"] {
            o if o["from"] == "adapter" => o["name"].as_str().filter(|n| !l.starts_with(&format!("{n} "))),
            _ => None,
        };
        parts.push(match adapter {
            Some(a) => format!("library {l} (adapter {a})"),
            None => format!("library {l}"),
        });
    }
    parts.join(", ")
}

/// The probe's row, worded as the matrix's fault-tolerance column: empty without a probe.
/// "ok" only with an uncontended acquisition judged during the faults (the matrix asks
/// for [`crate::report::matrix::MIN_TOLERANCE_JUDGED`] over a cell's seeds); a failure
/// is told however few were judged.
fn probe_text(stats: &Value) -> String {
    let p = &stats["probe"];
    if !p.is_object() {
        return String::new();
    }
    let n = |k: &str| p[k].as_u64().unwrap_or(0);
    let verdict = match (n("judged"), n("judged_failed"), n("judged_during_faults")) {
        (judged, failed @ 1.., _) => {
            format!("{failed} of {judged} uncontended acquisitions failed while a majority was reachable")
        }
        (judged, 0, 0) => format!(
            "not judged ({judged} uncontended acquisitions while a majority was reachable, none during the faults)"
        ),
        (judged, 0, during) => format!("ok ({during} uncontended during the faults, {judged} in all)"),
    };
    let acquires = n("acquires");
    let share = |a: u64, of: u64| if of == 0 { 0.0 } else { a as f64 / of as f64 };
    let others = stats["acquires"].as_u64().unwrap_or(0).saturating_sub(acquires);
    let others_ok = stats["acquired"]
        .as_u64()
        .unwrap_or(0)
        .saturating_sub(n("acquired"));
    format!(
        "{verdict}; the probe (client {}) acquired {} of {acquires} ({}); the contending clients {}",
        n("client"),
        n("acquired"),
        pct(share(n("acquired"), acquires)),
        pct(share(others_ok, others))
    )
}

/// The stalls row: acquires that outlasted the ttl while a fault was active.
fn stalls_text(stats: &Value) -> String {
    match stats["stalls"].as_u64() {
        None => String::new(),
        Some(0) => "none (no acquire outlasted the ttl while a fault was active)".into(),
        Some(n) => format!(
            "{n} acquire(s) outlasted the ttl while a fault was active (longest {})",
            secs(stats["stall_max_us"].as_u64().unwrap_or(0))
        ),
    }
}

fn seeds_table(h: &mut String, seeds: &[Value], reported: Option<u64>) {
    if seeds.len() < 2 {
        return;
    }
    let failing = seeds.iter().filter(|s| s["safe"] == Value::Bool(false)).count();
    let idle = |s: &&Value| s["verdict"] == "not_exercised";
    let _ = writeln!(
        h,
        "<h2>Seeds</h2><p>{} seeds, {failing} unsafe, {} not exercised. The plots and stories below are of seed {}.</p>",
        seeds.len(),
        seeds.iter().filter(idle).count(),
        reported.map_or("?".into(), |s| s.to_string())
    );
    let _ = write!(
        h,
        "<details{}><summary>verdict per seed</summary><table><tr><th>seed</th><th>verdict</th><th>live</th><th>violations</th><th>availability (time)</th></tr>",
        if seeds.len() <= 10 { " open" } else { "" }
    );
    // Unsafe seeds first so a long sweep shows its failures, then those not exercised.
    let unsafe_seed = |s: &&Value| s["safe"] == Value::Bool(false);
    let mut shown: Vec<&Value> = seeds.iter().filter(unsafe_seed).collect();
    shown.extend(seeds.iter().filter(|s| !unsafe_seed(s) && idle(s)));
    shown.extend(seeds.iter().filter(|s| !unsafe_seed(s) && !idle(s)));
    for s in shown.iter().take(SEED_ROWS) {
        let _ = write!(
            h,
            "<tr><td class=n>{}</td><td>{}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            esc(&text(s, "seed")),
            match (s["verdict"].as_str(), s["not_exercised"].as_str()) {
                (Some("not_exercised"), Some(why)) => format!("not exercised: {}", esc(why)),
                (Some(v), _) => esc(&v.replace('_', " ")),
                // A summary from before seeds had three verdicts.
                (None, _) if s["safe"] == Value::Bool(false) => "unsafe".into(),
                (None, _) => "safe".into(),
            },
            if s["live"] == Value::Bool(false) {
                "no"
            } else {
                "yes"
            },
            esc(&text(s, "violations")),
            pct(1.0 - s["stats"]["unavailable_share"].as_f64().unwrap_or(0.0))
        );
    }
    h.push_str("</table>");
    if seeds.len() > SEED_ROWS {
        let _ = write!(
            h,
            "<p>{} more seeds in summary.json.</p>",
            seeds.len() - SEED_ROWS
        );
    }
    h.push_str("</details>\n");
}

fn mode_table(h: &mut String, view: &RunView) {
    h.push_str("<h2>Acquisitions by mode</h2><table><tr><th>mode</th><th>acquires</th><th>acquired</th><th>failed</th><th>unknown</th><th>acquire calls that succeeded</th><th>latency p50 / p99 / max</th><th>wait p50 / p99 / max</th></tr>");
    for mode in view.modes() {
        let count = |o: Outcome| {
            view.acquires
                .iter()
                .filter(|a| a.mode.name() == mode && a.outcome == o)
                .count()
        };
        let (ok, failed, unknown) = (
            count(Outcome::Acquired),
            count(Outcome::Failed),
            count(Outcome::Unknown),
        );
        let total = ok + failed + unknown;
        let three = |v: &[u64]| {
            format!(
                "{} / {} / {}",
                span(percentile(v, 50.0)),
                span(percentile(v, 99.0)),
                span(v.last().copied().unwrap_or(0))
            )
        };
        let _ = write!(
            h,
            "<tr><td>{}</td><td class=n>{total}</td><td class=n>{ok}</td><td class=n>{failed}</td><td class=n>{unknown}</td><td class=n>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&mode),
            pct(if total == 0 { 0.0 } else { ok as f64 / total as f64 }),
            three(&view.latencies_us(&mode)),
            three(&view.waits_us(&mode))
        );
    }
    let stats = &view.findings.stats;
    let spent = view.time_spent();
    let workload_us = view.workload_end_us().max(1);
    let share = |us: u64| us as f64 / workload_us as f64;
    let _ = writeln!(
        h,
        "</table><p><b>Availability (time): {}</b> of the workload's time ({}) a lock was held or could be acquired: only time during which some lock was free and wanted and every attempt at it failed counts against it ({}, {}). Apart from it, <b>contention</b>: {} of the time ({}) some attempt failed because the lock was held or being taken by another client, which is the lock doing its job. A third figure, <b>acquire calls that succeeded: {}</b> of {} calls, counts every call that found the lock taken against it, so contention lowers it. Definitions: docs/availability.md.</p><p>Latency: one acquire call, invoke to ok. Wait: from a client's first attempt to its acquisition, across failed attempts. Workload phase only.</p>",
        pct(1.0 - share(spent.unavailable_us())),
        span(workload_us),
        pct(share(spent.unavailable_us())),
        span(spent.unavailable_us()),
        pct(share(spent.contended_us())),
        span(spent.contended_us()),
        pct(stats.availability),
        stats.acquires
    );
    if let Some(a) = stats.availability_during_faults() {
        let _ = writeln!(
            h,
            "<p>During the faults: {} of the {} workload acquire calls that overlapped a fault succeeded (the probe's not counted), against {} over the whole run.</p>",
            pct(a),
            stats.fault_acquires,
            pct(stats.availability)
        );
    }
}

fn violations(h: &mut String, view: &RunView, stories: &[Story], first_told: bool) {
    let vs = view.violations();
    let _ = writeln!(h, "<h2>Violations ({})</h2>", vs.len());
    if vs.is_empty() {
        h.push_str("<p>None: no two holds of the same lock overlapped in true time.</p>\n");
        return;
    }
    let total_us: u64 = vs.iter().map(|v| v.overlap_us()).sum();
    let _ = writeln!(
        h,
        "<p>Two clients held the same lock at once {} time(s), for {} in all, the longest first. Each story is the shortest stretch of the history that explains one violation.</p>",
        vs.len(),
        span(total_us)
    );
    for (i, (v, s)) in vs.iter().zip(stories).take(STORIES_ON_PAGE).enumerate() {
        let _ = write!(
            h,
            "<h3>Violation {}: clients {} and {} on {} for {}</h3>",
            i + 1,
            v.first.client,
            v.second.client,
            esc(&v.lock),
            span(v.overlap_us())
        );
        match i == 0 && first_told {
            true => told_above(h),
            false => story(h, s),
        }
    }
    if vs.len() > STORIES_ON_PAGE {
        let _ = writeln!(
            h,
            "<p>{} more violations: see <a href=\"narrative.md\">narrative.md</a> and summary.json.</p>",
            vs.len() - STORIES_ON_PAGE
        );
    }
}

/// One story as an ordered list of its steps, then the closing line and the why.
fn story(h: &mut String, s: &Story) {
    h.push_str("<ol class=steps>");
    for step in &s.steps {
        let _ = write!(h, "<li><b>t={}</b> {}</li>", secs(step.t_us), esc(&step.text));
    }
    let _ = writeln!(
        h,
        "<li>{}</li></ol><p class=why>{} ({}.)</p>",
        esc(&s.overlap),
        esc(&s.why),
        s.lines()
    );
}

/// The guarded resource: every stale write it accepted (a table, then the first stories),
/// the fencing tokens that did not grow, and how many writes fencing rejected.
fn stale_writes(h: &mut String, view: &RunView, told: &Told, lead: Option<Lead>) {
    let f = view.findings;
    if f.resource.writes == 0 && f.resource_violations.is_empty() && f.fence_regressions.is_empty() {
        return;
    }
    let rvs = &view.worst.stale;
    let _ = writeln!(
        h,
        "<h2 id=\"stale-writes\">Stale writes ({})</h2><p>The guarded resource judged {} writes: {} accepted, {} rejected for a stale fencing token. A stale write is one it accepted from a client whose hold had ended, over the write of another client's later hold: the lock may be safe and the data it guards not. {} write(s) arrived after their hold ended but before any later holder wrote; they took effect in hold order and are not counted as stale.</p>",
        rvs.len(),
        f.resource.writes,
        f.resource.accepted,
        f.resource.rejected,
        f.resource.late
    );
    if !rvs.is_empty() {
        h.push_str("<p>The latest after its hold ended first.</p><table><tr><th>write at</th><th>writer</th><th>lock</th><th>fencing token</th><th>writer's hold ended</th><th>overwrote</th><th>its hold</th><th>its token</th></tr>");
        for rv in rvs.iter().take(FAULT_ROWS) {
            let fence = |f: Option<u64>| f.map_or("none".to_string(), |f| f.to_string());
            let _ = write!(
                h,
                "<tr><td class=n>{}</td><td>client {}</td><td>{}</td><td class=n>{}</td><td class=n>{}</td><td>client {}'s write {}</td><td>{} – {}</td><td class=n>{}</td></tr>",
                secs(rv.write_us),
                rv.client,
                esc(&rv.lock),
                fence(rv.fence),
                rv.hold_end_us.map_or("no such hold".into(), secs),
                rv.holder.client,
                rv.overwritten_us.map_or("(none: held then)".into(), |t| format!("of {}", secs(t))),
                secs(rv.holder.start_us),
                secs(rv.holder.end_us),
                fence(rv.holder.fence)
            );
        }
        h.push_str("</table>");
        if rvs.len() > FAULT_ROWS {
            let _ = write!(h, "<p>{} more in summary.json.</p>", rvs.len() - FAULT_ROWS);
        }
        for (i, (rv, s)) in rvs.iter().zip(told.stale).take(STORIES_ON_PAGE).enumerate() {
            let _ = write!(
                h,
                "<h3>Stale write {}: client {} on {}, {}</h3>",
                i + 1,
                rv.client,
                esc(&rv.lock),
                esc(&super::stale::against(rv))
            );
            match i == 0 && lead == Some(Lead::Stale) {
                true => told_above(h),
                false => story(h, s),
            }
        }
    }
    let regressions = &view.worst.regressions;
    if !regressions.is_empty() {
        let _ = write!(
            h,
            "<h3 id=\"tokens\">Fencing tokens that did not grow ({})</h3><p>A hold that started after another had ended got a token not above that hold's: the earlier holder's late writes would get through. The largest step back first.</p><table><tr><th>lock</th><th>earlier hold</th><th>its token</th><th>later hold</th><th>its token</th></tr>",
            regressions.len()
        );
        for r in regressions.iter().take(FAULT_ROWS) {
            let _ = write!(
                h,
                "<tr><td>{}</td><td>client {}, {} – {}</td><td class=n>{}</td><td>client {}, from {}</td><td class=n>{}</td></tr>",
                esc(&r.lock),
                r.earlier.client,
                secs(r.earlier.start_us),
                secs(r.earlier.end_us),
                r.earlier.fence.unwrap_or(0),
                r.later.client,
                secs(r.later.start_us),
                r.later.fence.unwrap_or(0)
            );
        }
        h.push_str("</table>\n");
        for (i, (r, s)) in regressions
            .iter()
            .zip(told.regressions)
            .take(STORIES_ON_PAGE)
            .enumerate()
        {
            let _ = write!(h, "<h4>Token {}: {}</h4>", i + 1, regression_heading(r));
            match i == 0 && lead == Some(Lead::Regression) {
                true => told_above(h),
                false => story(h, s),
            }
        }
    }
}

/// The liveness findings, worst first: each with its story (the first screen's is
/// pointed to).
fn liveness(h: &mut String, view: &RunView, stories: &[Story], first_told: bool) {
    let all = &view.worst.liveness;
    if all.is_empty() {
        return;
    }
    let _ = write!(
        h,
        "<h2 id=\"liveness\">Liveness findings ({})</h2><p>Those that never got the lock first, then the longest wait.</p>",
        all.len()
    );
    for (i, (l, s)) in all.iter().zip(stories).take(STORIES_ON_PAGE).enumerate() {
        let _ = write!(h, "<h3>{}. {}</h3>", i + 1, wait_heading(l));
        match i == 0 && first_told {
            true => told_above(h),
            false => story(h, s),
        }
    }
    if all.len() > STORIES_ON_PAGE {
        let _ = write!(h, "<ul>");
        for l in all.iter().skip(STORIES_ON_PAGE).take(FAULT_ROWS) {
            let _ = write!(h, "<li>{}</li>", esc(&super::banner::liveness_sentence(l)));
        }
        if all.len() > STORIES_ON_PAGE + FAULT_ROWS {
            let _ = write!(
                h,
                "<li>{} more in summary.json</li>",
                all.len() - STORIES_ON_PAGE - FAULT_ROWS
            );
        }
        h.push_str("</ul>\n");
    }
}

/// What fault `id` (started at `start_us`) touched of the lock, from the checker's
/// record ([`crate::checker::touch`]), and whether that exercised it.
fn touched(view: &RunView, id: usize, start_us: u64) -> String {
    let record = view
        .findings
        .exercise
        .faults
        .iter()
        .find(|f| f.id == id && f.start_us == start_us);
    match record {
        None => String::new(),
        Some(f) => {
            let what = esc(&f.touched.describe());
            match (f.exercised, f.joined) {
                (true, _) if !f.touched.is_empty() => what,
                (true, Some(first)) => format!("{what} (part of #{first}'s outage, which did)"),
                (true, None) => what,
                (false, _) => format!("{what}: <b>not exercised</b>"),
            }
        }
    }
}

fn faults(h: &mut String, view: &RunView) {
    let _ = writeln!(h, "<h2>Faults ({})</h2>", view.faults.len());
    if view.faults.is_empty() {
        h.push_str("<p>No fault was injected.</p>\n");
        return;
    }
    h.push_str(
        "<table><tr><th>#</th><th>origin</th><th>from</th><th>to</th><th>what</th><th>what it touched</th></tr>",
    );
    for w in view.faults.iter().take(FAULT_ROWS) {
        let _ = write!(
            h,
            "<tr><td class=n>{}</td><td>{:?}</td><td class=n>{}</td><td class=n>{}</td><td>{}</td><td>{}</td></tr>",
            w.id,
            w.origin,
            secs(w.start_us),
            w.end_us.map_or("never healed".into(), secs),
            esc(&fault_sentence(&w.fault, view.clients, view.deployment)),
            touched(view, w.id, w.start_us)
        );
    }
    h.push_str("</table>");
    if view.faults.len() > FAULT_ROWS {
        let _ = write!(
            h,
            "<p>{} more in history.jsonl.</p>",
            view.faults.len() - FAULT_ROWS
        );
    }
    h.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_facts_show_the_probes_fault_tolerance_and_the_stalls_as_the_matrix_does() {
        let stats = json!({
            "acquires": 30, "acquired": 24, "stalls": 2, "stall_max_us": 1_805_790,
            "probe": {"client": 4, "acquires": 10, "acquired": 9, "judged": 8,
                      "judged_during_faults": 3, "judged_failed": 1}
        });
        assert_eq!(
            probe_text(&stats),
            "1 of 8 uncontended acquisitions failed while a majority was reachable; the probe (client 4) acquired 9 of 10 (90.0%); the contending clients 75.0%"
        );
        assert_eq!(
            stalls_text(&stats),
            "2 acquire(s) outlasted the ttl while a fault was active (longest 1.806 s)"
        );
        let mut ok = stats.clone();
        ok["probe"]["judged_failed"] = json!(0);
        assert!(probe_text(&ok).starts_with("ok (3 uncontended during the faults, 8 in all);"));
        ok["probe"]["judged_during_faults"] = json!(0);
        assert!(
            probe_text(&ok).starts_with("not judged (8 uncontended"),
            "none during the faults"
        );
        ok["stalls"] = json!(0);
        assert!(stalls_text(&ok).starts_with("none"));
        assert_eq!(probe_text(&json!({"acquires": 3})), "", "no probe, no row");
    }

    /// Issue 41: a library's run page is titled with the adapter's name (the matrix's),
    /// and its versions name lockstorm's commit and the library's own name and version.
    #[test]
    fn a_worker_run_is_titled_by_its_adapter_and_its_versions_name_the_commit() {
        let findings = crate::checker::check(&[]).unwrap();
        let view = RunView::new(&[], &findings);
        let summary = json!({
            "scenario": "01-clean",
            "backend": "redis",
            "rerun": "cargo run --release -- scenario s.toml --seed 1 --backend redis --adapter redlock-rs",
            "worker": {"origin": {"from": "adapter", "name": "redlock-rs", "list": null},
                       "library": "redlock", "version": "2.0.0"},
            "versions": {"lockstorm": "0.1.0", "commit": "0123456789ab-dirty",
                         "date_utc": "2026-11-29T12:55:03Z", "redis_server": "7.0.15",
                         "library": "redlock 2.0.0"},
        });
        let told = Told {
            violations: &[],
            stale: &[],
            regressions: &[],
            waits: &[],
        };
        let page = page(
            &summary,
            &view,
            &[],
            &told,
            None,
            false,
            crate::report::interactive::Budget::FULL,
        );
        assert!(page.contains("<h1>01-clean with redlock-rs</h1>"), "{page}");
        assert!(
            page.contains(" — 01-clean with redlock-rs (lockstorm run)</title>"),
            "{page}"
        );
        assert!(
            page.contains(
                "<th>versions tested</th><td>lockstorm 0.1.0 (commit 0123456789ab-dirty), redis-server 7.0.15, \
                 library redlock 2.0.0 (adapter redlock-rs)</td>"
            ),
            "{page}"
        );
        assert!(
            page.contains("<th>date</th><td>2026-11-29T12:55:03Z (UTC)</td>"),
            "{page}"
        );
        // A simulated run's date is in timing.json, when the folder has one; a summary
        // from before the commit was recorded says so.
        let sim = json!({"scenario": "s", "backend": "sim", "versions": {"lockstorm": "0.1.0"}});
        assert_eq!(date(&sim, false), "");
        assert!(date(&sim, true).starts_with("in <a href=\"timing.json\">timing.json</a> (UTC)"));
        assert_eq!(
            versions(&sim, &view),
            "lockstorm 0.1.0 (commit not recorded), the simulator (no redis-server)"
        );
        // A worker named by its command keeps the name its hello gave.
        let mut argv = summary.clone();
        argv["worker"]["origin"] = json!({"from": "argv"});
        assert_eq!(
            worker_title(&argv, &view),
            None,
            "no meta line: nothing to name it by"
        );
        assert!(versions(&argv, &view).ends_with("library redlock 2.0.0"));
    }

    #[test]
    fn the_files_list_names_timing_and_says_when_no_server_log_is_kept() {
        let real = json!({"backend": "redis"});
        let h = files(&real, &Kept::Whole, &[], true);
        assert!(
            h.contains("<a href=\"timing.json\">timing.json</a>: when the run was made (UTC)"),
            "{h}"
        );
        assert!(h.contains("No redis-server log is kept here"), "{h}");
        let logs = [crate::report::logs::KeptLog {
            path: "nodes/node0.log".into(),
            bytes: 969,
            cut: false,
        }];
        let h = files(&real, &Kept::Whole, &logs, false);
        assert!(
            !h.contains("timing.json") && !h.contains("No redis-server log"),
            "{h}"
        );
        assert!(
            h.contains("<a href=\"nodes/node0.log\">node0.log</a> (969 bytes)"),
            "{h}"
        );
        let sim = files(&json!({"backend": "sim"}), &Kept::Whole, &[], false);
        assert!(!sim.contains("redis-server log"), "{sim}");
    }
}
