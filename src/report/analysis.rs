//! The analysis index: one page (README.md and index.html) that states the verdict and
//! the evidence for every scenario of a folder: lockstorm's measured answer to the
//! Redlock debate (Kleppmann, antirez). `crate::run::analysis` runs the scenarios and
//! hands each one's [`Case`] here.

use super::html::esc;
use super::narrative::{span, Story};
use super::ReportError;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One scenario's result in the analysis.
pub struct Case {
    pub name: String,
    pub file: PathBuf,
    /// The comment at the top of the scenario file: what it shows and its source.
    pub about: String,
    pub expect: String,
    /// `unsafe`, `safe`, `not_exercised` or `unknown`, as summary.json says it.
    pub verdict: &'static str,
    /// Why the verdict is not exercised, when it is.
    pub not_exercised: Option<String>,
    pub live: bool,
    /// The guarded resource's verdict over all seeds ("no writes" when clients wrote none).
    pub resource: &'static str,
    /// Stale writes accepted by the guarded resource in the reported seed.
    pub stale_writes: usize,
    /// Fencing tokens smaller than an earlier hold's, in the reported seed.
    pub fence_regressions: usize,
    /// Liveness findings of the reported seed, counted by kind (e.g. "writer_starvation ×3").
    pub liveness: String,
    pub as_expected: bool,
    pub seeds: usize,
    pub unsafe_seeds: usize,
    /// Seeds with no violation that proved nothing (no hold met their faults, or too few
    /// acquisitions).
    pub not_exercised_seeds: usize,
    pub reported_seed: u64,
    pub violations: usize,
    pub availability: f64,
    pub latency_p99_us: u64,
    pub story: Option<Story>,
    /// The timeline to show: the report's first plot (around the first violation, else the
    /// first stale write, else the first fault), or the overview.
    pub timeline: String,
    pub rerun: String,
}

/// Where an analysis came from: the scenario folder, the command that regenerates it,
/// and whether its scenarios ran on real Redis.
#[derive(Clone, Debug)]
pub struct Source {
    pub folder: String,
    pub command: String,
    pub real: bool,
}

impl Source {
    fn ran_on(&self) -> &'static str {
        if self.real {
            "on local redis-servers (the real backend: wall-clock timing, so runs differ)"
        } else {
            "on the deterministic simulator"
        }
    }
}

/// Writes the index (README.md and index.html) of `cases` into `out`; an analysis of
/// real-server runs kept in `out/real/` is linked.
pub fn write_index(out: &Path, cases: &[Case], seeds: u64, source: &Source) -> Result<(), ReportError> {
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(super::io_err(&path))
    };
    let real = out.join("real").join("README.md").is_file();
    write("README.md", markdown(cases, seeds, source, real))?;
    write("index.html", html(cases, seeds, source, real))
}

/// The verdict as a sentence says it (`not exercised`, not `not_exercised`).
fn verdict_words(c: &Case) -> String {
    c.verdict.replace('_', " ")
}

fn verdict_line(c: &Case) -> String {
    let mut line = format!(
        "{} over {} seed(s) ({} unsafe, {} not exercised), {}; expected {} — {}",
        verdict_words(c),
        c.seeds,
        c.unsafe_seeds,
        c.not_exercised_seeds,
        if c.live { "live" } else { "NOT live" },
        c.expect,
        if c.as_expected {
            "as expected"
        } else {
            "NOT as expected"
        }
    );
    if let Some(why) = &c.not_exercised {
        line.push_str(&format!(" (not exercised: {why})"));
    }
    line
}

fn markdown(cases: &[Case], seeds: u64, source: &Source, real: bool) -> String {
    let mut md = String::from("# lockstorm's measured answer to Kleppmann and antirez\n\n");
    let _ = writeln!(
        md,
        "Every scenario in `{}` run {} over {seeds} seed(s) each, \
         checked against the reference lock model, and reported in full in its own folder. \
         Regenerate this folder with:\n\n```sh\n{}\n```\n\n\
         Safe means no two clients ever held a lock at the same true time in any seed, and \
         every seed was exercised: each scripted fault (and at least one random fault) met a \
         hold in force on what it targets, and at least {} acquisitions succeeded. A seed \
         with no violation that does not meet that is *not exercised*: it proved nothing. \
         The figures are of the reported seed (the first with a finding, else the first not \
         exercised, else the first).\n",
        source.folder,
        source.ran_on(),
        source.command,
        crate::checker::exercise::MIN_ACQUISITIONS
    );
    if real {
        md.push_str(
            "The same questions on real Redis (scenarios/real/, local redis-servers with lockstorm's \
             proxies and libfaketime): [real/](real/README.md).\n\n",
        );
    }
    md.push_str(&in_short(cases));
    md.push_str("\n| scenario | expected | verdict | unsafe seeds | as expected | violations (reported seed) | guarded resource | liveness findings | availability | p99 acquire | report |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in cases {
        let _ = writeln!(
            md,
            "| {} | {} | **{}** | {}/{} | {} | {} | {} | {} | {:.1}% | {} | [{}/index.html]({}/index.html) |",
            c.name,
            c.expect,
            verdict_words(c),
            c.unsafe_seeds,
            c.seeds,
            if c.as_expected { "yes" } else { "**no**" },
            c.violations,
            match c.resource {
                "unsafe" => format!(
                    "**unsafe** ({} stale writes accepted, {} fencing tokens went backwards)",
                    c.stale_writes, c.fence_regressions
                ),
                other => other.to_string(),
            },
            c.liveness,
            c.availability * 100.0,
            span(c.latency_p99_us),
            c.name,
            c.name
        );
    }
    for c in cases {
        let _ = writeln!(
            md,
            "\n## {}\n\n`{}`: {}\n\n**Verdict:** {}.\n",
            c.name,
            c.file.display(),
            c.about,
            verdict_line(c)
        );
        match &c.story {
            Some(s) => {
                let _ = writeln!(
                    md,
                    "How the first violation of seed {} happened:\n\n{}",
                    c.reported_seed,
                    s.markdown()
                );
            }
            None => md.push_str("No violation: every hold of every lock was alone in true time.\n"),
        }
        let _ = writeln!(
            md,
            "\n![holder timeline of {0}]({0}/{1}.svg)\n\nRerun: `{2}` · [full report]({0}/index.html) · [availability]({0}/availability.svg) · [latency CDF]({0}/latency-cdf.svg)",
            c.name, c.timeline, c.rerun
        );
    }
    md
}

/// The answer in a few lines: which scenarios broke mutual exclusion, which held it,
/// and which did not do what their files expect.
fn short_answer(cases: &[Case]) -> [(&'static str, Vec<&str>); 6] {
    let names = |f: &dyn Fn(&Case) -> bool| cases.iter().filter(|c| f(c)).map(|c| c.name.as_str()).collect();
    [
        (
            "two clients held a lock at once in",
            names(&|c| c.verdict == "unsafe"),
        ),
        (
            "mutual exclusion held in every seed of",
            names(&|c| c.verdict == "safe"),
        ),
        (
            "no violation, but not exercised (it proved nothing) in",
            names(&|c| c.verdict == "not_exercised"),
        ),
        (
            "a stale write reached the guarded resource in",
            names(&|c| c.resource == "unsafe"),
        ),
        ("a liveness finding in", names(&|c| c.liveness != "none")),
        ("not as the scenario expects", names(&|c| !c.as_expected)),
    ]
}

fn in_short(cases: &[Case]) -> String {
    let mut md = String::from("In short:\n\n");
    for (label, names) in short_answer(cases) {
        let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(
            md,
            "- {label}: {}",
            if list.is_empty() {
                "none".into()
            } else {
                list.join(", ")
            }
        );
    }
    md
}

fn html(cases: &[Case], seeds: u64, source: &Source, real: bool) -> String {
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>lockstorm analysis</title><style>body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.45}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em}img{max-width:100%;border:1px solid #ddd}.no{color:#b00;font-weight:bold}.notex{background:#fff1cc;color:#6b4a00}code{background:#f6f6f6}</style></head><body>\n<h1>lockstorm's measured answer to Kleppmann and antirez</h1>\n",
    );
    let _ = writeln!(
        h,
        "<p>Every scenario in <code>{}</code> run {} over {seeds} seed(s) each. Regenerate with <code>{}</code>.{}</p><table><tr><th>scenario</th><th>expected</th><th>verdict</th><th>unsafe seeds</th><th>as expected</th><th>report</th></tr>",
        esc(&source.folder),
        source.ran_on(),
        esc(&source.command),
        if real {
            " The same questions on real Redis: <a href=\"real/index.html\">real/</a>."
        } else {
            ""
        }
    );
    for c in cases {
        let _ = write!(
            h,
            "<tr><td>{0}</td><td>{1}</td><td{7}><b>{2}</b></td><td>{3}/{4}</td><td{5}>{6}</td><td><a href=\"{0}/index.html\">report</a></td></tr>",
            esc(&c.name),
            esc(&c.expect),
            verdict_words(c),
            c.unsafe_seeds,
            c.seeds,
            if c.as_expected { "" } else { " class=no" },
            if c.as_expected { "yes" } else { "no" },
            if c.verdict == "not_exercised" {
                " class=notex"
            } else {
                ""
            }
        );
    }
    h.push_str("</table>\n<ul>");
    for (label, names) in short_answer(cases) {
        let list = if names.is_empty() {
            "none".to_string()
        } else {
            esc(&names.join(", "))
        };
        let _ = write!(h, "<li>{label}: <b>{list}</b></li>");
    }
    h.push_str("</ul>\n");
    for c in cases {
        let _ = write!(
            h,
            "<h2>{0}</h2><p>{1}</p><p><b>Verdict:</b> {2}.</p>",
            esc(&c.name),
            esc(&c.about),
            esc(&verdict_line(c))
        );
        if let Some(s) = &c.story {
            h.push_str("<ol>");
            for step in &s.steps {
                let _ = write!(
                    h,
                    "<li>t={} {}</li>",
                    super::narrative::secs(step.t_us),
                    esc(&step.text)
                );
            }
            let _ = write!(
                h,
                "<li>{}</li></ol><p><i>{}</i></p>",
                esc(&s.overlap),
                esc(&s.why)
            );
        }
        let _ = writeln!(
            h,
            "<p><a href=\"{0}/index.html\"><img src=\"{0}/{1}.svg\" alt=\"holder timeline of {0}\"></a></p><p>Rerun: <code>{2}</code></p>",
            esc(&c.name),
            esc(&c.timeline),
            esc(&c.rerun)
        );
    }
    h.push_str("</body></html>\n");
    h
}
