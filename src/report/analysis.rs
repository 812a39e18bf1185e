//! The analysis index: one page (README.md and index.html) that states the verdict and
//! the evidence for every scenario of a folder: lockstorm's measured answer to the
//! Redlock debate (Kleppmann, antirez). `crate::run::analysis` runs the scenarios and
//! hands each one's [`Case`] here.

use super::narrative::{span, Story};
use super::words::esc;
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
    /// The share of the workload's time a lock was held or could be acquired (what
    /// faults took away; contention does not count against it).
    pub availability: f64,
    /// The share of acquire calls that succeeded: contention counts against it.
    pub acquire_success: f64,
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
    // What made it, at the foot of both pages (src/report/provenance.rs).
    let made = super::provenance::Provenance::now(source.command.clone(), source.real);
    write(
        "README.md",
        format!("{}\n{}", markdown(cases, seeds, source, real), made.markdown()),
    )?;
    let page = html(cases, seeds, source, real);
    let body = page.strip_suffix("</body></html>\n").unwrap_or(&page);
    write("index.html", format!("{body}{}</body></html>\n", made.html()))?;
    super::site::refresh(out)
}

/// The verdict as a sentence says it (`not exercised`, not `not_exercised`), with the
/// named anomaly of the reported seed's first violation: "unsafe: key lost on restart".
fn verdict_words(c: &Case) -> String {
    let words = c.verdict.replace('_', " ");
    match c.story.as_ref().and_then(|s| s.anomaly.as_ref()) {
        Some(named) if c.verdict == "unsafe" => format!("{words}: {}", named.kind.name()),
        // The one rule's words: "safe (9 of 10 seeds exercised)".
        _ if c.verdict == "safe" && c.not_exercised_seeds > 0 => format!(
            "safe ({} of {} seeds exercised)",
            c.seeds - c.not_exercised_seeds,
            c.seeds
        ),
        _ => words,
    }
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

/// What made the guarded resource unsafe, in the reported seed.
fn resource_detail(c: &Case) -> String {
    match (c.stale_writes, c.fence_regressions) {
        (0, 0) => "on a seed other than the reported one".into(),
        (s, r) => format!("reported seed: {s} stale writes accepted, {r} fencing tokens went backwards"),
    }
}

fn markdown(cases: &[Case], seeds: u64, source: &Source, real: bool) -> String {
    let mut md = format!(
        "# lockstorm's measured answer to Kleppmann and antirez, {}\n\n[↑ all reports](../README.md)\n\n",
        if source.real {
            "on real Redis"
        } else {
            "on the simulator"
        }
    );
    let _ = writeln!(
        md,
        "Every scenario in `{}` run {} over {seeds} seed(s) each, \
         checked against the reference lock model, and reported in full in its own folder. \
         Regenerate this folder with:\n\n```sh\n{}\n```\n\n\
         Safe means no two clients ever held a lock at the same true time in any seed, and \
         enough seeds were exercised (by default 4 in 5; a scenario's `min_exercised`): in \
         an exercised seed each scripted fault (and at least one random fault) touched the \
         lock where a broken lock would break (a live key it took down or whose expiry it \
         moved, a lock message it dropped or delayed, a hold or an acquisition it stopped), \
         and at least {} acquisitions succeeded. A seed with no violation that does not \
         meet that is *not exercised*: it proved nothing. \
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
    md.push_str("\n| scenario | expected | verdict | unsafe seeds | as expected | violations (reported seed) | guarded resource | liveness findings | availability (time) | acquires that succeeded | p99 acquire | report |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in cases {
        let _ = writeln!(
            md,
            "| {} | {} | **{}** | {}/{} | {} | {} | {} | {} | {:.1}% | {:.1}% | {} | [{}/index.html]({}/index.html) |",
            c.name,
            c.expect,
            verdict_words(c),
            c.unsafe_seeds,
            c.seeds,
            if c.as_expected { "yes" } else { "**no**" },
            c.violations,
            match c.resource {
                "unsafe" => format!("**unsafe** ({})", resource_detail(c)),
                other => other.to_string(),
            },
            c.liveness,
            c.availability * 100.0,
            c.acquire_success * 100.0,
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

/// A sentence of the index's short answer: which scenarios it names. Each is decided
/// from the [`Case`] and can be checked against the summary.json it cites
/// ([`Claim::of_summary`]), so the index never says what the reports do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claim {
    Unsafe,
    Safe,
    NotExercised,
    StaleWrite,
    FenceBackwards,
    Liveness,
    NotAsExpected,
}

impl Claim {
    pub const ALL: [Claim; 7] = [
        Claim::Unsafe,
        Claim::Safe,
        Claim::NotExercised,
        Claim::StaleWrite,
        Claim::FenceBackwards,
        Claim::Liveness,
        Claim::NotAsExpected,
    ];

    /// The sentence, up to the list of names.
    pub fn label(self) -> &'static str {
        match self {
            Claim::Unsafe => "two clients held a lock at once in",
            Claim::Safe => "mutual exclusion held in every seed of",
            Claim::NotExercised => "no violation, but not exercised (it proved nothing) in",
            Claim::StaleWrite => "the guarded resource accepted a stale write (reported seed) in",
            Claim::FenceBackwards => "fencing tokens went backwards (reported seed) in",
            Claim::Liveness => "a liveness finding (reported seed) in",
            Claim::NotAsExpected => "not as the scenario expects",
        }
    }

    fn of_case(self, c: &Case) -> bool {
        match self {
            Claim::Unsafe => c.verdict == "unsafe",
            Claim::Safe => c.verdict == "safe",
            Claim::NotExercised => c.verdict == "not_exercised",
            Claim::StaleWrite => c.stale_writes > 0,
            Claim::FenceBackwards => c.fence_regressions > 0,
            Claim::Liveness => c.liveness != "none",
            Claim::NotAsExpected => !c.as_expected,
        }
    }

    /// Whether the claim holds of a run, read from its summary.json.
    pub fn of_summary(self, s: &serde_json::Value) -> bool {
        let any = |key: &str| s[key].as_array().is_some_and(|a| !a.is_empty());
        match self {
            Claim::Unsafe => s["verdict"] == "unsafe",
            Claim::Safe => s["verdict"] == "safe",
            Claim::NotExercised => s["verdict"] == "not_exercised",
            Claim::StaleWrite => any("resource_violations"),
            Claim::FenceBackwards => any("fence_regressions"),
            Claim::Liveness => any("liveness"),
            Claim::NotAsExpected => s["as_expected"] == false,
        }
    }
}

/// The answer in a few lines: which scenarios broke mutual exclusion, which held it,
/// what happened to the guarded resource and to liveness, and which did not do what
/// their files expect.
pub fn short_answer(cases: &[Case]) -> Vec<(Claim, Vec<&str>)> {
    Claim::ALL
        .iter()
        .map(|&claim| {
            let names = cases
                .iter()
                .filter(|c| claim.of_case(c))
                .map(|c| c.name.as_str())
                .collect();
            (claim, names)
        })
        .collect()
}

fn in_short(cases: &[Case]) -> String {
    let mut md = String::from("In short:\n\n");
    for (claim, names) in short_answer(cases) {
        let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(
            md,
            "- {}: {}",
            claim.label(),
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
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{TITLE}</title><style>body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.45}.bad{background:#fbe0e0;color:#8a1414}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em}img{max-width:100%;border:1px solid #ddd}.no{color:#b00;font-weight:bold}.notex{background:#fff1cc;color:#6b4a00}code{background:#f6f6f6}</style></head><body>\n<nav><a href=\"../index.html\">↑ up: all reports</a></nav>\n<h1>{TITLE}</h1>\n",
    )
    .replace("{TITLE}", if source.real {
        "lockstorm's measured answer to Kleppmann and antirez, on real Redis"
    } else {
        "lockstorm's measured answer to Kleppmann and antirez, on the simulator"
    });
    let _ = writeln!(
        h,
        "<p>Every scenario in <code>{}</code> run {} over {seeds} seed(s) each. Regenerate with <code>{}</code>.{}</p><table><tr><th>scenario</th><th>expected</th><th>lock safety</th><th>unsafe seeds</th><th>guarded resource</th><th>liveness</th><th>as expected</th><th>availability (time)</th><th>acquires that succeeded</th><th>report</th></tr>",
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
            "<tr><td>{0}</td><td>{1}</td><td{7}><b>{2}</b></td><td>{3}/{4}</td><td{9}>{8}</td><td{11}>{10}</td><td{5}>{6}</td><td>{12:.1}%</td><td>{13:.1}%</td><td><a href=\"{0}/index.html\">report</a></td></tr>",
            esc(&c.name),
            esc(&c.expect),
            verdict_words(c),
            c.unsafe_seeds,
            c.seeds,
            if c.as_expected { "" } else { " class=no" },
            if c.as_expected { "yes" } else { "no" },
            match c.verdict {
                "not_exercised" => " class=notex",
                "unsafe" => " class=bad",
                _ => "",
            },
            match c.resource {
                "unsafe" => format!("unsafe ({})", esc(&resource_detail(c))),
                other => esc(other),
            },
            if c.resource == "unsafe" { " class=bad" } else { "" },
            if c.live {
                "live".to_string()
            } else {
                format!("NOT live ({})", esc(&c.liveness))
            },
            if c.live { "" } else { " class=bad" },
            c.availability * 100.0,
            c.acquire_success * 100.0
        );
    }
    h.push_str("</table>\n<ul>");
    for (claim, names) in short_answer(cases) {
        let list = if names.is_empty() {
            "none".to_string()
        } else {
            names
                .iter()
                .map(|n| format!("<a href=\"{0}/index.html\">{0}</a>", esc(n)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = write!(h, "<li>{}: <b>{list}</b></li>", claim.label());
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

#[cfg(test)]
mod tests {
    use super::*;

    fn case(name: &str) -> Case {
        Case {
            name: name.into(),
            file: PathBuf::from(format!("scenarios/{name}.toml")),
            about: String::new(),
            expect: "safe".into(),
            verdict: "safe",
            not_exercised: None,
            live: true,
            resource: "no writes",
            stale_writes: 0,
            fence_regressions: 0,
            liveness: "none".into(),
            as_expected: true,
            seeds: 10,
            unsafe_seeds: 0,
            not_exercised_seeds: 0,
            reported_seed: 1,
            violations: 0,
            availability: 1.0,
            acquire_success: 0.5,
            latency_p99_us: 1_000,
            story: None,
            timeline: "timeline".into(),
            rerun: String::new(),
        }
    }

    fn named(cases: &[Case], claim: Claim) -> Vec<&str> {
        short_answer(cases)
            .into_iter()
            .find(|(c, _)| *c == claim)
            .map(|(_, names)| names)
            .unwrap()
    }

    #[test]
    fn tokens_that_went_backwards_are_not_called_a_stale_write() {
        // Issue 23: fencing-one-round's resource was unsafe for 9 token regressions and
        // 0 accepted stale writes, and the index said a stale write reached it.
        let mut fencing = case("fencing-one-round");
        fencing.resource = "unsafe";
        fencing.fence_regressions = 9;
        let mut unfenced = case("fencing-pause-unfenced");
        unfenced.resource = "unsafe";
        unfenced.stale_writes = 2;
        let cases = [fencing, unfenced];
        assert_eq!(named(&cases, Claim::StaleWrite), ["fencing-pause-unfenced"]);
        assert_eq!(named(&cases, Claim::FenceBackwards), ["fencing-one-round"]);
        let page = html(
            &cases,
            10,
            &Source {
                folder: "s/".into(),
                command: "c".into(),
                real: false,
            },
            false,
        );
        assert!(
            page.contains("reported seed: 0 stale writes accepted, 9 fencing tokens went backwards"),
            "{page}"
        );
    }

    #[test]
    fn the_html_index_has_the_resource_and_liveness_columns_of_the_markdown() {
        let mut starved = case("rw-writer-starvation");
        starved.live = false;
        starved.liveness = "writer_starvation ×20".into();
        let source = Source {
            folder: "s/".into(),
            command: "c".into(),
            real: false,
        };
        let page = html(&[starved], 10, &source, false);
        for column in [
            "<th>guarded resource</th>",
            "<th>liveness</th>",
            "<th>availability (time)</th>",
        ] {
            assert!(page.contains(column), "{column}");
        }
        assert!(page.contains("NOT live (writer_starvation ×20)"), "{page}");
    }

    #[test]
    fn both_pages_of_the_index_say_what_made_them() {
        let dir = tempfile::tempdir().unwrap();
        let source = Source {
            folder: "scenarios/".into(),
            command: "cargo run --release -- analysis scenarios --seeds 10".into(),
            real: false,
        };
        write_index(dir.path(), &[case("partition")], 10, &source).unwrap();
        let made = format!("Made by {}, on ", crate::report::provenance::lockstorm());
        // Then the date, "2026-11-29T12:55:03Z".
        let dated = |text: &str| {
            text.find(&made)
                .map(|i| &text[i + made.len()..])
                .is_some_and(|d| d.len() > 20 && d.as_bytes()[10] == b'T' && d.as_bytes()[19] == b'Z')
        };
        let md = std::fs::read_to_string(dir.path().join("README.md")).unwrap();
        assert!(dated(&md), "{md}");
        assert!(md.ends_with(
            ", the simulator (no redis-server). Made again by `cargo run --release -- analysis scenarios --seeds 10`.\n"
        ));
        let page = std::fs::read_to_string(dir.path().join("index.html")).unwrap();
        assert!(dated(&page), "{page}");
        assert!(page.ends_with(
            "Made again by <code>cargo run --release -- analysis scenarios --seeds 10</code>.</small></p>\n</body></html>\n"
        ));
    }
}
