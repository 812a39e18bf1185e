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
figure.interactive svg{max-width:100%;height:auto;border:1px solid #ddd}.op:hover rect{stroke:#000;stroke-width:2}.opinfo{display:block;font-family:monospace;color:#222}.banner .aside{font-size:.9em;color:#444}";

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
/// first finding's anomaly in the banner, when the caller has classified it.
pub fn page(
    summary: &Value,
    view: &RunView,
    plots: &[PlotInfo],
    stories: &[Story],
    stale: &[Story],
    anomaly: Option<&str>,
) -> String {
    let f = view.findings;
    let scenario = text(summary, "scenario");
    let banner = super::banner::judge(summary, view, anomaly);
    // Distinct titles: a library matrix runs the same case names for every library.
    let library = view
        .meta
        .as_ref()
        .and_then(|m| m.worker.as_ref())
        .map(|w| format!(" with {}", w.name()))
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
    if let (Some(v), Some(s)) = (view.violations().first(), stories.first()) {
        let _ = write!(
            h,
            "<h2>What happened</h2><h3>Clients {} and {} on {} for {}</h3>",
            v.first.client,
            v.second.client,
            esc(&v.lock),
            span(v.overlap_us())
        );
        story(&mut h, s);
    } else if let (Some(rv), Some(s)) = (f.resource_violations.first(), stale.first()) {
        let _ = write!(
            h,
            "<h2>What happened</h2><h3>Stale write: client {} on {}, {}</h3>",
            rv.client,
            esc(&rv.lock),
            esc(&super::stale::against(rv))
        );
        story(&mut h, s);
    } else if !f.liveness.is_empty() {
        liveness(&mut h, f);
    }

    // Below the story, so the first screen keeps it: the same holds, to hover.
    let around = |from: u64, to: u64| {
        let pad = (to - from) / 5 + 1;
        (from.saturating_sub(pad), to + pad)
    };
    if let Some(v) = view.violations().first() {
        let (from, to) = around(v.first.start_us.min(v.second.start_us), v.overlap_end_us);
        h.push_str(&super::interactive::timeline(
            view,
            &v.lock,
            from,
            to,
            (v.overlap_start_us, v.overlap_end_us),
        ));
    } else if let Some(rv) = f.resource_violations.first() {
        let start = rv.hold_end_us.unwrap_or(rv.write_us).min(rv.holder.start_us);
        let (from, to) = around(start, rv.write_us + 1);
        h.push_str(&super::interactive::timeline(
            view,
            &rv.lock,
            from,
            to,
            (rv.write_us, rv.write_us + 1),
        ));
    }
    h.push_str("<h2>The run</h2>");
    facts(&mut h, summary, view);
    seeds_table(&mut h, seeds, summary["reported_seed"].as_u64());
    mode_table(&mut h, view);
    for p in first.iter().skip(1).chain(&rest) {
        figure(&mut h, p);
    }
    violations(&mut h, view, stories);
    stale_writes(&mut h, view, stale);
    // With no violation and no stale write, the first screen told the liveness findings.
    if !view.violations().is_empty() || !f.resource_violations.is_empty() {
        liveness(&mut h, f);
    }
    faults(&mut h, view);
    h
}

/// The end of the page [`page`] begins: its Files section, which says what history.jsonl
/// keeps (decided from what the rest of the page cites).
pub fn files(summary: &Value, history: &Kept) -> String {
    let mut h = String::new();
    h.push_str("<h2>Files</h2><ul><li><a href=\"summary.json\">summary.json</a>: the verdict per seed and the reported seed's findings</li>");
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

fn facts(h: &mut String, summary: &Value, view: &RunView) {
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
    let rerun = text(summary, "rerun");
    if !rerun.is_empty() {
        row("rerun", format!("<code>{}</code>", esc(&rerun)));
    }
    let shrink = text(summary, "shrink");
    if !shrink.is_empty() {
        row("shrink", format!("<code>{}</code>", esc(&shrink)));
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

/// lockstorm, redis-server and the worker library, as summary.json recorded them (a
/// summary from before it did names what the history says).
fn versions(summary: &Value, view: &RunView) -> String {
    let v = &summary["versions"];
    let mut parts = Vec::new();
    if let Some(l) = v["lockstorm"].as_str() {
        parts.push(format!("lockstorm {l}"));
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
        parts.push(format!("library {l}"));
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

fn violations(h: &mut String, view: &RunView, stories: &[Story]) {
    let vs = view.violations();
    let _ = writeln!(h, "<h2>Violations ({})</h2>", vs.len());
    if vs.is_empty() {
        h.push_str("<p>None: no two holds of the same lock overlapped in true time.</p>\n");
        return;
    }
    let total_us: u64 = vs.iter().map(|v| v.overlap_us()).sum();
    let _ = writeln!(
        h,
        "<p>Two clients held the same lock at once {} time(s), for {} in all. Each story below is the shortest stretch of the history that explains one violation.</p>",
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
        story(h, s);
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
        "<li>{}</li></ol><p class=why>{} (history lines {}–{}.)</p>",
        esc(&s.overlap),
        esc(&s.why),
        s.first_line,
        s.last_line
    );
}

/// The guarded resource: every stale write it accepted (a table, then the first stories),
/// the fencing tokens that did not grow, and how many writes fencing rejected.
fn stale_writes(h: &mut String, view: &RunView, stories: &[Story]) {
    let f = view.findings;
    if f.resource.writes == 0 && f.resource_violations.is_empty() {
        return;
    }
    let rvs = &f.resource_violations;
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
        h.push_str("<table><tr><th>write at</th><th>writer</th><th>lock</th><th>fencing token</th><th>writer's hold ended</th><th>overwrote</th><th>its hold</th><th>its token</th></tr>");
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
        for (i, (rv, s)) in rvs.iter().zip(stories).take(STORIES_ON_PAGE).enumerate() {
            let _ = write!(
                h,
                "<h3>Stale write {}: client {} on {}, {}</h3>",
                i + 1,
                rv.client,
                esc(&rv.lock),
                esc(&super::stale::against(rv))
            );
            story(h, s);
        }
    }
    let regressions = &f.fence_regressions;
    if !regressions.is_empty() {
        let _ = write!(
            h,
            "<h3>Fencing tokens that did not grow ({})</h3><p>A hold that started after another had ended got a token not above that hold's: the earlier holder's late writes would get through.</p><table><tr><th>lock</th><th>earlier hold</th><th>its token</th><th>later hold</th><th>its token</th></tr>",
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
        h.push_str(
            "</table>
",
        );
    }
}

fn liveness(h: &mut String, f: &crate::checker::Findings) {
    if f.liveness.is_empty() {
        return;
    }
    let _ = write!(h, "<h2>Liveness findings ({})</h2><ul>", f.liveness.len());
    for l in f.liveness.iter().take(FAULT_ROWS) {
        let _ = write!(h, "<li>{}</li>", esc(&super::banner::liveness_sentence(l)));
    }
    if f.liveness.len() > FAULT_ROWS {
        let _ = write!(
            h,
            "<li>{} more in summary.json</li>",
            f.liveness.len() - FAULT_ROWS
        );
    }
    h.push_str("</ul>\n");
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
}
