//! The analysis index: one page (README.md and index.html) that opens with lockstorm's
//! measured answer to the Redlock debate (Kleppmann, antirez), derived from the results
//! ([`super::answer`]), then states the verdict, what it rests on and the evidence for
//! every scenario of a folder. `crate::run::analysis` runs the scenarios and hands each
//! one's [`Case`] here.

use super::answer::{answer, Group};
pub use super::case::Case;
use super::narrative::span;
use super::words::esc;
use super::ReportError;
use std::fmt::Write as _;
use std::path::Path;

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
/// named anomaly of the reported seed's first violation ("unsafe: key lost on
/// restart"), and for a safe run with seeds not exercised how many were.
fn verdict_words(c: &Case) -> String {
    let words = c.verdict.replace('_', " ");
    match c.story.as_ref().and_then(|s| s.anomaly.as_ref()) {
        Some(named) if c.verdict == "unsafe" => format!("{words}: {}", named.name()),
        // The one rule's words: "safe (9 of 10 seeds exercised)"; what the verdict rests
        // on, over every seed, is said beside it.
        _ if c.verdict == "safe" && c.not_exercised_seeds > 0 => {
            format!("safe ({})", c.rests_on.exercised.words())
        }
        _ => words,
    }
}

/// "as the scenario expects" or "NOT as the scenario expects": measured against the
/// scenario's own expectation (a library matrix measures against the library's
/// prediction, and says so).
pub fn against_scenario(as_expected: bool) -> &'static str {
    if as_expected {
        "as the scenario expects"
    } else {
        "NOT as the scenario expects"
    }
}

fn verdict_line(c: &Case) -> String {
    let mut line = format!(
        "{} over {} seed(s) ({} unsafe, {} not exercised), {}; the scenario expects {} — {}",
        verdict_words(c),
        c.seeds,
        c.unsafe_seeds,
        c.not_exercised_seeds,
        if c.live { "live" } else { "NOT live" },
        c.expect,
        against_scenario(c.as_expected)
    );
    if let Some(why) = &c.not_exercised {
        line.push_str(&format!(" (not exercised: {why})"));
    }
    line.push_str(&format!(". It rests on {}", c.rests_on.words()));
    line
}

/// What made the guarded resource unsafe, in the reported seed.
fn resource_detail(c: &Case) -> String {
    match (c.stale_writes, c.fence_regressions) {
        (0, 0) => "on a seed other than the reported one".into(),
        (s, r) => format!("reported seed: {s} stale writes accepted, {r} fencing tokens went backwards"),
    }
}

/// Availability (time) with what it is a share of: "30.8% of 10m 0.0s".
fn availability_cell(c: &Case) -> String {
    format!("{:.1}% of {}", c.availability * 100.0, span(c.workload_us))
}

/// Acquire calls that succeeded with their n: "36.7% of 70845".
fn calls_cell(c: &Case) -> String {
    format!("{:.1}% of {}", c.acquire_success * 100.0, c.acquires)
}

/// The paragraph that says what the words of the index mean.
fn how_to_read(seeds: u64, source: &Source) -> String {
    format!(
        "Every scenario in `{}` run {} over {seeds} seed(s) each, checked against the reference lock \
         model, and reported in full in its own folder. Safe means no two clients ever held a lock at the \
         same true time in any seed, and enough seeds were exercised (by default 4 in 5; a scenario's \
         `min_exercised`): in an exercised seed each scripted fault (and at least one random fault) touched \
         the lock where a broken lock would break (a live key it took down or whose expiry it moved, a lock \
         message it dropped or delayed, a hold or an acquisition it stopped), and at least {} acquisitions \
         succeeded. A seed with no violation that does not meet that is *not exercised*: it proved nothing. \
         *Rests on* says how much a verdict stands on: the seeds exercised, the holds (with the fewest and \
         most of one seed) and the acquire calls over every seed, and the share whose outcome is unknown. \
         *As the scenario expects* measures a verdict against the expectation written in the scenario file \
         (lock, resource, liveness); the library matrix measures its cells against each library's \
         prediction instead. *Availability (time)* is the share of the reported seed's workload time a lock \
         was held or could be acquired; *acquire calls that succeeded* is the share of its acquire calls \
         that did (contention counts against it). Both are of the reported seed (the first with a finding, \
         else the first not exercised, else the first).",
        source.folder,
        source.ran_on(),
        crate::checker::exercise::MIN_ACQUISITIONS
    )
}

/// The answer as markdown: one bullet per clause, each scenario linked to its folder.
fn answer_markdown(cases: &[Case]) -> String {
    let mut md = String::from(
        "## The answer\n\nWhat these runs show of the debate (Kleppmann: Redlock is unsafe under pauses, \
         network delays and clock jumps, and needs fencing tokens; antirez: it is safe under its stated \
         assumptions), clause by clause from the results; each scenario links to its report.\n\n",
    );
    for clause in answer(cases) {
        let items: Vec<String> = clause
            .items
            .iter()
            .map(|i| format!("[{0}]({0}/index.html) ({1})", i.name, i.detail))
            .collect();
        let line = format!("- **{}** {}", clause.lead, items.join("; "));
        let _ = writeln!(md, "{}", line.trim_end());
    }
    md.push('\n');
    md
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
    md.push_str(&answer_markdown(cases));
    let _ = writeln!(
        md,
        "## How to read it\n\n{}\n\nRegenerate this folder with:\n\n```sh\n{}\n```\n",
        how_to_read(seeds, source),
        source.command,
    );
    if real {
        md.push_str(
            "The same questions on real Redis (scenarios/real/, local redis-servers with lockstorm's \
             proxies and libfaketime): [real/](real/README.md).\n\n",
        );
    }
    md.push_str("## Every scenario by finding\n\n");
    md.push_str(&in_short(cases));
    md.push_str("\n| scenario | lock | the scenario expects | verdict | rests on | as the scenario expects | violations (reported seed) | guarded resource | liveness findings | availability (time) | acquire calls that succeeded | p99 acquire | report |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for c in cases {
        let _ = writeln!(
            md,
            "| {} | {} | {} | **{}** | {} | {} | {} | {} | {} | {} | {} | {} | [{}/index.html]({}/index.html) |",
            c.name,
            Group::of(c).words(c),
            c.expect,
            verdict_words(c),
            c.rests_on.words(),
            if c.as_expected { "yes" } else { "**no**" },
            c.violations,
            match c.resource {
                "unsafe" => format!("**unsafe** ({})", resource_detail(c)),
                other => other.to_string(),
            },
            c.liveness,
            availability_cell(c),
            calls_cell(c),
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

/// Markdown's `code` spans of already escaped text as HTML: "`release = "del"`" reads
/// as code on the page too.
fn code_spans(escaped: &str) -> String {
    let mut out = String::new();
    for (i, part) in escaped.split('`').enumerate() {
        match i % 2 {
            1 => out.push_str(&format!("<code>{part}</code>")),
            _ => out.push_str(part),
        }
    }
    out
}

fn html(cases: &[Case], seeds: u64, source: &Source, real: bool) -> String {
    let mut h = String::from(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{TITLE}</title><style>body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;line-height:1.45}.bad{background:#fbe0e0;color:#8a1414}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.25em .6em}img{max-width:100%;border:1px solid #ddd}.no{color:#b00;font-weight:bold}.notex{background:#fff1cc;color:#6b4a00}code{background:#f6f6f6}.answer li{margin:.3em 0}</style></head><body>\n<nav><a href=\"../index.html\">↑ up: all reports</a></nav>\n<h1>{TITLE}</h1>\n",
    )
    .replace("{TITLE}", if source.real {
        "lockstorm's measured answer to Kleppmann and antirez, on real Redis"
    } else {
        "lockstorm's measured answer to Kleppmann and antirez, on the simulator"
    });
    h.push_str(
        "<h2 id=answer>The answer</h2><p>What these runs show of the debate (Kleppmann: Redlock is unsafe under \
         pauses, network delays and clock jumps, and needs fencing tokens; antirez: it is safe under its stated \
         assumptions), clause by clause from the results; each scenario links to its report.</p><ul class=answer>",
    );
    for clause in answer(cases) {
        let items: Vec<String> = clause
            .items
            .iter()
            .map(|i| {
                format!(
                    "<a href=\"{0}/index.html\">{0}</a> ({1})",
                    esc(&i.name),
                    code_spans(&esc(&i.detail))
                )
            })
            .collect();
        let _ = write!(h, "<li><b>{}</b> {}</li>", esc(&clause.lead), items.join("; "));
    }
    h.push_str("</ul>\n");
    let _ = writeln!(
        h,
        "<h2>How to read it</h2><p>{}</p><p>Regenerate with <code>{}</code>.{}</p><h2>Every scenario</h2><table><tr><th>scenario</th><th>lock</th><th>the scenario expects</th><th>lock safety</th><th>rests on</th><th>unsafe seeds</th><th>guarded resource</th><th>liveness</th><th>as the scenario expects</th><th>availability (time)</th><th>acquire calls that succeeded</th><th>report</th></tr>",
        esc(&how_to_read(seeds, source)).replace(['*', '`'], ""),
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
            "<tr><td>{0}</td><td>{14}</td><td>{1}</td><td{7}><b>{2}</b></td><td>{15}</td><td>{3}/{4}</td><td{9}>{8}</td><td{11}>{10}</td><td{5}>{6}</td><td>{12}</td><td>{13}</td><td><a href=\"{0}/index.html\">report</a></td></tr>",
            esc(&c.name),
            esc(&c.expect),
            esc(&verdict_words(c)),
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
            esc(&availability_cell(c)),
            esc(&calls_cell(c)),
            code_spans(&esc(&Group::of(c).words(c))),
            esc(&c.rests_on.words()),
        );
    }
    h.push_str("</table>\n<h2>Every scenario by finding</h2><ul>");
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
pub(super) mod tests {
    use super::*;

    /// A safe Redlock case over 10 seeds, every one exercised.
    pub(crate) fn case(name: &str) -> Case {
        let exercised = crate::outcome::Exercised {
            seeds: 10,
            of: 10,
            needed: 8,
        };
        Case {
            name: name.into(),
            file: std::path::PathBuf::from(format!("scenarios/{name}.toml")),
            about: String::new(),
            expect: "lock safe".into(),
            algorithm: "redlock",
            departures: Vec::new(),
            faults: Vec::new(),
            fence_rounds: None,
            rests_on: crate::outcome::RestsOn::of_counts(exercised, (0..10).map(|_| (8, 4, 1))),
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
            workload_us: 10_000_000,
            acquire_success: 0.5,
            acquires: 8,
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
    fn a_broken_variants_setting_reads_as_code_in_the_html_answer() {
        let mut del = case("release-del");
        del.departures = vec!["release by a plain DEL (`release = \"del\"`)".into()];
        let page = html(
            &[del],
            10,
            &Source {
                folder: "s/".into(),
                command: "c".into(),
                real: false,
            },
            false,
        );
        assert!(
            page.contains("release by a plain DEL (<code>release = &quot;del&quot;</code>)"),
            "{page}"
        );
        assert_eq!(code_spans("a `b` c `d"), "a <code>b</code> c <code>d</code>");
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
