//! The library matrix page: every adapter (a lock library behind the worker protocol)
//! against every fault of the catalogue, in one table (index.html, README.md) and as
//! data (matrix.json). `crate::run::matrix` runs the cells and hands the [`Matrix`]
//! here; this module only renders it.

use super::words::esc;
use super::ReportError;
use crate::outcome::sweep::Rate;
use crate::worker::adapters::Prediction;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// The whole matrix: fault columns, adapter rows.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Matrix {
    /// The first seed of every cell.
    pub seed: u64,
    /// Seeds per cell.
    #[serde(default = "one")]
    pub seeds: u64,
    /// Runs at once.
    #[serde(default = "one_usize")]
    pub jobs: usize,
    /// How long the whole matrix took, in wall seconds.
    #[serde(default)]
    pub wall_secs: f64,
    /// The command that regenerates the matrix.
    pub command: String,
    pub faults: Vec<FaultColumn>,
    pub adapters: Vec<AdapterRow>,
}

fn one() -> u64 {
    1
}
fn one_usize() -> usize {
    1
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
    /// The lock's algorithm family (the adapter list's `algorithm`: "redlock", "single",
    /// ...), by which the page groups rows within a language. None in a matrix.json from
    /// before rows kept it, or for a worker given no family.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub family: Option<String>,
    pub command: String,
    /// What the library promises, from the adapter list.
    pub promise: String,
    /// The client settings its adapter chooses where it does not keep the library's
    /// defaults (from the adapter list; part of every cell of the row).
    #[serde(default)]
    pub options: String,
    /// "library version", as its worker's hello named it.
    pub library: Option<String>,
    /// Per fault column, what the library's algorithm predicts (from the adapter list).
    #[serde(default)]
    pub predicts: Vec<Option<Prediction>>,
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
    /// Every seed ended in an error: the worker broke the protocol, or a node stopped
    /// answering lockstorm. `report` is the lowest seed's history where one was kept
    /// (empty where none was).
    Error {
        why: String,
        report: String,
        rerun: String,
    },
    Ran(Box<Ran>),
    /// A sharded matrix (`--shard`): another shard runs this cell; `lockstorm merge`
    /// puts it in.
    OtherShard,
}

/// A cell that ran: its seeds' tally.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ran {
    /// Seeds that ran to the end (`seeds_asked` less those whose worker broke the
    /// protocol).
    pub seeds: u64,
    pub seeds_asked: u64,
    /// Seeds on which two clients held the lock at once.
    pub unsafe_seeds: u64,
    /// Safe seeds whose faults touched nothing where the lock could break: they prove
    /// nothing.
    pub not_exercised_seeds: u64,
    /// The share of seeds that must be exercised for the cell to read safe (its
    /// template's `min_exercised`; `crate::outcome`'s one rule).
    #[serde(default = "default_min_exercised")]
    pub min_exercised: f64,
    /// The unsafe rate over the exercised seeds, with its 95% Wilson interval.
    pub rate: Rate,
    /// Violations over every seed.
    pub violations: u64,
    /// Seeds on which the guarded resource took a stale write, and the stale writes.
    pub stale_seeds: u64,
    pub stale_writes: u64,
    /// Writes the guarded resource received over every seed (0: the fault writes nothing).
    pub resource_writes: u64,
    /// Seeds on which a lock stayed out of reach after the heal.
    pub stuck_seeds: u64,
    /// The probe's uncontended acquisitions (multi-node cells; `None` without a probe).
    pub tolerance: Option<Tolerance>,
    /// The probe's success share, or with no probe every client's.
    pub availability: f64,
    /// With a probe: the other (contending) clients' success share, shown apart.
    pub contended_availability: Option<f64>,
    /// The success share of the workload acquires (the probe's not counted) that
    /// overlapped a fault, over every seed; `None` when none did.
    #[serde(default)]
    pub fault_availability: Option<f64>,
    /// Share of acquisitions whose outcome the library left unknown (an `error`
    /// answer: the library could not say whether it got the lock).
    pub unknown: f64,
    /// Acquires that outlasted the ttl while a fault was active, over every seed; the
    /// seeds with one; the longest.
    pub stalls: u64,
    pub stall_seeds: u64,
    pub stall_max_us: u64,
    /// Liveness findings by kind, with how many seeds had each, or "none".
    pub liveness: String,
    /// Seeds that ended in an error (a worker that broke the protocol, a node that stopped
    /// answering lockstorm), and the first one's error.
    pub worker_errors: u64,
    pub worker_error: Option<String>,
    /// The seed whose report the cell keeps: the first unsafe, else the first.
    pub reported_seed: u64,
    /// The cell's run report, relative to the matrix folder.
    pub report: String,
    /// Reruns the reported seed; `rerun_all` every seed of the cell.
    pub rerun: String,
    pub rerun_all: String,
    /// "library version", as the reported seed's worker named it.
    pub library: Option<String>,
    /// How the finding departs from the library's prediction, if it does.
    pub departs: Option<String>,
    /// The anomalies named in the reported seed's stories (violations and stale
    /// writes), each once, in the order first told.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub anomalies: Vec<String>,
    /// The cell's grid: each setting of what decides the fault's outcome, with its own
    /// tally (the figures above are over every setting). Empty: the template has no
    /// grid, and the cell is its one setting.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<Setting>,
    /// Every seed of every setting: its verdict and what its faults touched, the
    /// evidence a safe verdict rests on (the cell's report shows one seed in full).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub seeds_touched: Vec<SeedTouched>,
}

/// One seed of a cell, as `seeds_touched` lists it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SeedTouched {
    /// The setting of the grid it ran (none without a grid).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setting: Option<String>,
    pub seed: u64,
    pub verdict: crate::outcome::Verdict,
    /// What its faults touched, a line each.
    pub touched: Vec<String>,
}

/// One setting of a cell's grid and its seeds' tally.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Setting {
    pub name: String,
    /// The overrides that make it (`--set` on the rerun command).
    pub set: Vec<String>,
    pub seeds: u64,
    pub unsafe_seeds: u64,
    pub not_exercised_seeds: u64,
    pub min_exercised: f64,
    pub rate: Rate,
    /// Seeds with a stale write, or stuck after the heal.
    pub stale_seeds: u64,
    pub stuck_seeds: u64,
    /// Reruns every seed of the setting.
    pub rerun_all: String,
}

impl Setting {
    /// The one rule of [`crate::outcome`] over this setting's seeds.
    pub fn verdict(&self) -> &'static str {
        verdict(
            self.seeds,
            self.unsafe_seeds,
            self.not_exercised_seeds,
            self.min_exercised,
        )
    }

    /// "2 clients: 0/10 (rate <= 28% at 95%)", "... 3/10 unsafe", "... not exercised (6 of 10)".
    pub fn text(&self) -> String {
        let exercised = self.seeds - self.not_exercised_seeds;
        let tally = match self.verdict() {
            "unsafe" => format!("{}/{exercised} unsafe", self.unsafe_seeds),
            "safe" => format!("0/{exercised} (rate <= {:.0}% at 95%)", self.rate.high * 100.0),
            _ => format!("not exercised ({exercised} of {} seeds)", self.seeds),
        };
        format!("{}: {tally}", self.name)
    }
}

/// "unsafe", "safe" or "not exercised" of `seeds` seeds.
fn verdict(seeds: u64, unsafe_seeds: u64, not_exercised: u64, min_exercised: f64) -> &'static str {
    let exercised = (seeds - not_exercised) as usize;
    if unsafe_seeds > 0 {
        "unsafe"
    } else if seeds > 0 && exercised >= crate::outcome::needed(seeds as usize, min_exercised) {
        "safe"
    } else {
        "not exercised"
    }
}

/// Uncontended acquisitions a cell's probe must have had judged during the faults (a
/// majority reachable, the probe undisturbed), over its seeds, before the cell says its
/// library is fault-tolerant: with fewer, "ok" would rest on nothing (an outage no probe
/// acquisition met). Ten is one a seed in a 10-seed cell.
pub const MIN_TOLERANCE_JUDGED: u64 = 10;

/// The probe's uncontended acquisitions over every seed of a cell.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Tolerance {
    /// Its acquisitions, those judged (a majority reachable, the probe undisturbed),
    /// those judged while a fault was active, and the judged ones that failed.
    pub attempts: u64,
    pub judged: u64,
    #[serde(alias = "during_faults")]
    pub judged_during_faults: u64,
    pub failed: u64,
}

fn default_min_exercised() -> f64 {
    crate::outcome::MIN_EXERCISED
}

impl Ran {
    /// "unsafe", "safe" or "not exercised", by the one rule of [`crate::outcome`]: safe
    /// needs the share `min_exercised` of its seeds exercised, in each setting of its
    /// grid; unsafe if any setting is.
    pub fn verdict(&self) -> &'static str {
        let own = verdict(
            self.seeds,
            self.unsafe_seeds,
            self.not_exercised_seeds,
            self.min_exercised,
        );
        if own == "safe" && self.settings.iter().any(|s| s.verdict() != "safe") {
            return "not exercised";
        }
        own
    }

    /// The seeds' verdict as a rate: "k/N unsafe (x%, 95% CI a–b%)", "0/N (rate <= x%
    /// at 95%)", or "not exercised (N/N seeds)"; then how many seeds were not exercised.
    pub fn tally_text(&self) -> String {
        let exercised = self.seeds - self.not_exercised_seeds;
        let pct = |x: f64| format!("{:.0}%", x * 100.0);
        let mut line = match self.verdict() {
            "unsafe" => format!(
                "{}/{exercised} unsafe ({}, 95% CI {}–{})",
                self.unsafe_seeds,
                pct(self.rate.rate),
                pct(self.rate.low),
                pct(self.rate.high)
            ),
            "safe" => format!("0/{exercised} (rate <= {} at 95%)", pct(self.rate.high)),
            _ => match self.settings.iter().find(|s| s.verdict() == "not exercised") {
                // The cell's seeds together would do; a setting of its grid does not.
                Some(s)
                    if self.seeds - self.not_exercised_seeds
                        >= crate::outcome::needed(self.seeds as usize, self.min_exercised) as u64 =>
                {
                    format!(
                        "not exercised (setting \"{}\": {} of {} seeds exercised, {} needed)",
                        s.name,
                        s.seeds - s.not_exercised_seeds,
                        s.seeds,
                        crate::outcome::needed(s.seeds as usize, s.min_exercised)
                    )
                }
                _ => format!(
                    "not exercised ({exercised} of {} seeds exercised, {} needed)",
                    self.seeds,
                    crate::outcome::needed(self.seeds as usize, self.min_exercised)
                ),
            },
        };
        if self.not_exercised_seeds > 0 && self.verdict() != "not exercised" {
            let _ = write!(
                line,
                " · {}/{} seeds not exercised",
                self.not_exercised_seeds, self.seeds
            );
        }
        line
    }

    /// The fault-tolerance column: "ok", "n of m uncontended acquisitions failed while
    /// a majority was reachable", "not judged", or "n/a" with no probe.
    /// "ok" only when at least [`MIN_TOLERANCE_JUDGED`] uncontended acquisitions were
    /// judged during the faults; a failure is told however few were.
    pub fn tolerance_text(&self) -> String {
        match &self.tolerance {
            None => "n/a (no probe)".into(),
            Some(t) if t.failed > 0 => format!(
                "{} of {} uncontended acquisitions failed while a majority was reachable",
                t.failed, t.judged
            ),
            Some(t) if t.judged_during_faults < MIN_TOLERANCE_JUDGED => format!(
                "not judged ({} uncontended {} during the faults with a majority reachable, at least {MIN_TOLERANCE_JUDGED} needed)",
                t.judged_during_faults,
                if t.judged_during_faults == 1 { "acquisition" } else { "acquisitions" }
            ),
            Some(t) => format!(
                "ok ({} uncontended during the faults, {} in all)",
                t.judged_during_faults, t.judged
            ),
        }
    }

    /// Whether fault tolerance was shown: enough uncontended acquisitions judged during
    /// the faults, none failed.
    pub fn tolerant(&self) -> Option<bool> {
        let t = self.tolerance.as_ref()?;
        if t.failed > 0 {
            Some(false)
        } else {
            (t.judged_during_faults >= MIN_TOLERANCE_JUDGED).then_some(true)
        }
    }
}

/// One line for a cell, the same in README.md and index.html.
pub fn summary(cell: &Cell) -> String {
    match cell {
        Cell::NotApplicable => "n/a".into(),
        Cell::OtherShard => "in another shard".into(),
        Cell::CannotRun { .. } => "cannot run here".into(),
        Cell::Refused { .. } => "not on this backend yet".into(),
        Cell::Error { .. } => "ended in an error".into(),
        Cell::Ran(r) => {
            let mut line = format!("lock {}", r.tally_text());
            if !r.settings.is_empty() {
                let each: Vec<String> = r.settings.iter().map(Setting::text).collect();
                let _ = write!(line, " ({})", each.join("; "));
            }
            if r.resource_writes > 0 || r.stale_seeds > 0 {
                let _ = write!(line, " · stale writes on {}/{} seeds", r.stale_seeds, r.seeds);
            }
            if r.stuck_seeds > 0 {
                let _ = write!(
                    line,
                    " · stuck after the heal on {}/{} seeds",
                    r.stuck_seeds, r.seeds
                );
            }
            let _ = write!(line, " · fault-tolerant {}", r.tolerance_text());
            if let Some(a) = r.fault_availability {
                let _ = write!(
                    line,
                    " · {:.0}% of acquires during the faults succeeded",
                    a * 100.0
                );
            }
            match r.contended_availability {
                Some(c) => {
                    let _ = write!(
                        line,
                        " · {:.0}% available (probe; contending clients {:.0}%)",
                        r.availability * 100.0,
                        c * 100.0
                    );
                }
                None => {
                    let _ = write!(line, " · {:.0}% available", r.availability * 100.0);
                }
            }
            if r.unknown > 0.0 {
                let _ = write!(line, " · {:.0}% unknown", r.unknown * 100.0);
            }
            if r.stalls > 0 {
                let _ = write!(
                    line,
                    " · {} stall(s) on {}/{} seeds (longest {:.1} s)",
                    r.stalls,
                    r.stall_seeds,
                    r.seeds,
                    r.stall_max_us as f64 / 1e6
                );
            }
            if r.worker_errors > 0 {
                let _ = write!(line, " · {} seed(s) ended in an error", r.worker_errors);
            }
            if r.departs.is_some() {
                line.push_str(" · NOT AS PREDICTED");
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
    // With the anomalies the reported seed's stories name: "node clock jump (early
    // expiry by a node clock)".
    let named = |pick: &dyn Fn(&Ran) -> bool| -> Vec<String> {
        ran.iter()
            .filter(|(_, r)| pick(r))
            .map(|(f, r)| match r.anomalies.as_slice() {
                [] => f.title.to_lowercase(),
                kinds => format!("{} ({})", f.title.to_lowercase(), kinds.join(", ")),
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
    write("index.html", html(m))?;
    for a in &m.adapters {
        // Each cell's run page links up to its library's page, which links up here.
        let dir = out.join(&a.name);
        if dir.is_dir() {
            let path = dir.join("index.html");
            std::fs::write(&path, library_page(a, &m.faults)).map_err(super::io_err(&path))?;
        }
    }
    super::site::refresh(out)
}

/// A library's own page: its cells, one line each, linking their run reports.
fn library_page(a: &AdapterRow, faults: &[FaultColumn]) -> String {
    let name = a.library.clone().unwrap_or_else(|| a.name.clone());
    let mut s = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{0} under lockstorm's faults</title>\
         <style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #ccc;padding:.4em;vertical-align:top}}</style></head><body>\
         <nav><a href=\"../index.html\">↑ up: the library matrix</a></nav><h1>{0} under lockstorm's faults</h1>\
         <p>Adapter <code>{1}</code> ({2}, {3}). {4}</p><table><tr><th>fault</th><th>finding</th><th>report</th></tr>",
        esc(&name),
        esc(&a.name),
        esc(&a.runtime),
        esc(&a.kind),
        esc(&a.promise)
    );
    for (f, cell) in faults.iter().zip(&a.cells) {
        let report = match cell {
            Cell::Ran(r) => Some(r.report.as_str()),
            Cell::Error { report, .. } if !report.is_empty() => Some(report.as_str()),
            _ => None,
        };
        let link = report
            .map(|r| r.strip_prefix(&format!("{}/", a.name)).unwrap_or(r))
            .map_or(String::new(), |r| format!("<a href=\"{}\">report</a>", esc(r)));
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{link}</td></tr>",
            esc(&f.title),
            esc(&summary(cell))
        );
    }
    s.push_str("</table></body></html>\n");
    s
}

fn markdown(m: &Matrix) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Lock libraries under lockstorm's faults\n");
    let _ = writeln!(
        s,
        "Every adapter (a lock library behind lockstorm's worker protocol, docs/worker-protocol.md) \
         against every fault of the catalogue (scenarios/matrix/), {} seed(s) per cell from seed {}, \
         on local redis-servers, {} run(s) at once; the whole matrix took {}. Regenerate with `{}`.\n",
        m.seeds,
        m.seed,
        m.jobs,
        wall(m.wall_secs),
        m.command
    );
    let _ = writeln!(
        s,
        "Each cell: **lock** safety over its seeds, \"k/N unsafe\" with a 95% Wilson interval, or for a \
         safe cell \"0/N (rate <= x% at 95%)\" (a cell whose faults met nothing on any seed is \
         \"not exercised\", never safe); **stale writes** the guarded resource accepted, where the \
         fault writes; locks **stuck** after the heal; **fault-tolerant**: in multi-node cells a probe \
         client takes a lock no other client uses throughout the run, and the cell says \"ok\" or how \
         many of its uncontended acquisitions failed while a majority of nodes was reachable; \
         **available**: the probe's success share, with the contending clients' share apart (what \
         contention took); the share the library left **unknown**; **stalls**, acquires that outlasted \
         the ttl while a fault was active (availability counts only acquires that finished). A cell \
         whose finding departs from what the library's algorithm predicts is marked NOT AS PREDICTED, \
         with the reason below. Each cell links the report of one seed (the first unsafe, else the \
         first); the rerun commands carry that seed.\n"
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
    let departed: usize = m
        .adapters
        .iter()
        .flat_map(|a| &a.cells)
        .filter(|c| matches!(c, Cell::Ran(r) if r.departs.is_some()))
        .count();
    let _ = writeln!(
        s,
        "\n{departed} cell(s) depart from their library's prediction.\n\n## The libraries\n"
    );
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
                            .map(|d| format!("\n  - **Not as predicted**: {d}"))
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
        let _ = writeln!(s, "- **{}** (`{}`): {}", f.title, f.id, f.about);
    }
    s
}

/// Wall seconds as "1 h 02 min", "3 min 20 s" or "12.3 s".
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

fn html(m: &Matrix) -> String {
    let mut s = String::new();
    s.push_str(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>Lock libraries under lockstorm's faults</title>\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}\
         td,th{border:1px solid #ccc;padding:.4em;vertical-align:top;font-size:90%}\
         .safe{background:#e6f4e6}.unsafe{background:#f8d7d7}.na{background:#eee;color:#888}\
         .other{background:#fff3cd}code{font-size:85%}</style></head><body><nav><a href=\"../index.html\">↑ up: all reports</a></nav>",
    );
    let _ = write!(
        s,
        "<h1>Lock libraries under lockstorm's faults</h1><p>{} seed(s) per cell from seed {}, {} run(s) at once; \
         the matrix took {}; regenerate with <code>{}</code>. \
         Each cell: lock safety over its seeds (with a 95% Wilson interval), stale writes, locks stuck after the heal, \
         fault tolerance judged by a probe client on a lock of its own, availability (the probe's, with the \
         contending clients' apart), stalls; it links the report of one seed (the first unsafe, else the first). \
         A cell marked NOT AS PREDICTED departs from what the library's algorithm predicts \
         (README.md says why).</p><table><tr><th>library</th>",
        m.seeds,
        m.seed,
        m.jobs,
        wall(m.wall_secs),
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
                Cell::OtherShard => ("na", "in another shard".to_string()),
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
                        "error: {} (<a href=\"{}\">history</a>)<br><code>{}</code>",
                        esc(why),
                        esc(report),
                        esc(rerun)
                    ),
                ),
                Cell::Ran(r) => (
                    match r.verdict() {
                        "unsafe" => "unsafe",
                        "safe" if r.stale_seeds == 0 => "safe",
                        "safe" => "unsafe",
                        _ => "other",
                    },
                    format!(
                        "<a href=\"{}\">{}</a>{}<br><code>{}</code>",
                        esc(&r.report),
                        esc(&summary(c)),
                        r.departs
                            .as_ref()
                            .map(|d| format!("<br><b>not as predicted</b>: {}", esc(d)))
                            .unwrap_or_default(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_found_line_names_the_anomalies_of_each_unsafe_cell() {
        let ran = |fault: &str, unsafe_seeds: u64, anomalies: &[&str]| {
            serde_json::json!({
                "status": "ran", "seeds": 2, "seeds_asked": 2, "unsafe_seeds": unsafe_seeds,
                "not_exercised_seeds": 0, "rate": {"rate": 0.0, "low": 0.0, "high": 0.66},
                "violations": unsafe_seeds, "stale_seeds": 0, "stale_writes": 0,
                "resource_writes": 0, "stuck_seeds": 0, "availability": 1.0, "unknown": 0.0,
                "stalls": 0, "stall_seeds": 0, "stall_max_us": 0, "liveness": "none",
                "worker_errors": 0, "reported_seed": 1, "report": format!("lib/{fault}/index.html"),
                "rerun": "",
                "rerun_all": "", "anomalies": anomalies,
            })
        };
        let fault = |id: &str| serde_json::json!({"id": id, "title": id, "about": ""});
        let m: Matrix = serde_json::from_value(serde_json::json!({
            "seed": 1, "seeds": 2, "command": "lockstorm matrix",
            "faults": [fault("clean"), fault("crash"), fault("jump")],
            "adapters": [{
                "name": "lib", "runtime": "python", "kind": "multi", "command": "lib",
                "promise": "", "cells": [
                    ran("clean", 0, &[]),
                    ran("crash", 2, &["key lost on restart"]),
                    ran("jump", 1, &[]),
                ],
            }],
        }))
        .unwrap();
        let line = found(&m.faults, &m.adapters[0]);
        assert!(
            line.starts_with("Two clients held the lock at once under: crash (key lost on restart); jump"),
            "{line}"
        );
    }
}
