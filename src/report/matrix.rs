//! The library matrix page: every adapter (a lock library behind the worker protocol)
//! against every fault of the catalogue, in one table (index.html, README.md) and as
//! data (matrix.json). `crate::run::matrix` runs the cells and hands the [`Matrix`]
//! here; this module holds it and words its cells, and [`super::matrix_page`] lays
//! out the pages.

use super::ReportError;
use crate::outcome::sweep::Rate;
use crate::worker::adapters::{Documented, Predicted, Prediction};
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
    /// A merged matrix (`lockstorm merge`): each shard's wall seconds, by shard; its
    /// `wall_secs` is the longest (the shards on machines of their own).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shard_secs: Vec<f64>,
    /// The command that regenerates the matrix.
    pub command: String,
    /// The fault catalogue it ran (`--catalogue`).
    #[serde(default = "default_catalogue")]
    pub catalogue: String,
    /// Set when the cells were judged again after the run against claims read later
    /// (`lockstorm report DIR --list FILE`): where they came from. The verdicts and
    /// every seed's tally are the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejudged: Option<String>,
    /// Cells run again after the run, with the same command at a later lockstorm (a
    /// defect fixed in between), and why; their tallies replace the run's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rerun: Option<Rerun>,
    pub faults: Vec<FaultColumn>,
    pub adapters: Vec<AdapterRow>,
    /// What made it: lockstorm's version and commit, the date, the redis-server
    /// ([`super::provenance`]); of merged shards, the earliest shard's date. `None` in a
    /// matrix.json from before lockstorm recorded it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<super::provenance::Provenance>,
}

impl Matrix {
    /// The provenance line at the foot of its pages, in HTML.
    pub fn provenance_html(&self) -> String {
        match &self.provenance {
            Some(p) => p.html(),
            None => format!(
                "<p class=\"provenance\"><small>Made by a lockstorm that did not record its version, commit or date. Made again by <code>{}</code>.</small></p>\n",
                super::words::esc(&self.command)
            ),
        }
    }

    /// The provenance line at the foot of README.md.
    pub fn provenance_markdown(&self) -> String {
        match &self.provenance {
            Some(p) => p.markdown(),
            None => format!(
                "Made by a lockstorm that did not record its version, commit or date. Made again by `{}`.\n",
                self.command
            ),
        }
    }
}

fn one() -> u64 {
    1
}
fn default_catalogue() -> String {
    DEFAULT_CATALOGUE.into()
}

/// The fault catalogue `lockstorm matrix` runs unless told another (`--catalogue`).
pub const DEFAULT_CATALOGUE: &str = "scenarios/matrix";
fn one_usize() -> usize {
    1
}

/// Cells of a matrix run again after it (see [`Matrix::rerun`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Rerun {
    /// Why, and with which lockstorm.
    pub why: String,
    /// "adapter/fault" of each cell run again.
    pub cells: Vec<String>,
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
    /// Per fault column, what the library's documentation says (from the adapter list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub documents: Vec<Option<Documented>>,
    pub cells: Vec<Cell>,
}

impl AdapterRow {
    /// Where the cell of fault column `i` contradicts what the library's documentation
    /// says: the documentation's claim, its words and where, then what was found.
    pub fn contradicts_docs(&self, i: usize) -> Option<String> {
        let doc = self.documents.get(i)?.as_ref()?;
        let Some(Cell::Ran(r)) = self.cells.get(i) else {
            return None;
        };
        // A claim the cell did not test (too few seeds exercised, too few probe
        // acquisitions judged) is not contradicted.
        if r.verdict() == "not exercised" || (doc.says == Predicted::Tolerant && r.tolerant().is_none()) {
            return None;
        }
        let found = r.departure(doc.says, "its documentation says")?;
        Some(format!("{found} (\"{}\", {})", doc.quote, doc.source))
    }
}

/// What one adapter did under one fault.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Cell {
    /// The fault has no template for this adapter's node layout, or it takes read and
    /// write locks and the adapter's lock is exclusive only.
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
    /// Acquire calls that succeeded: the probe's share, or with no probe every client's.
    pub availability: f64,
    /// The acquire calls `availability` is a share of, over every seed (0 in a
    /// matrix.json from before it was kept).
    #[serde(default)]
    pub calls: u64,
    /// With a probe: the other (contending) clients' success share, shown apart.
    pub contended_availability: Option<f64>,
    /// The success share of the workload acquires (the probe's not counted) that
    /// overlapped a fault, over every seed; `None` when none did.
    #[serde(default)]
    pub fault_availability: Option<f64>,
    /// The acquires `fault_availability` is a share of (0 in a matrix.json from before
    /// it was kept).
    #[serde(default)]
    pub fault_calls: u64,
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
    /// Why the finding departs from `predicted` (a library's prediction, or what its
    /// documentation says), or `None` when it does not.
    pub fn departs_from(&self, predicted: Predicted) -> Option<String> {
        self.departure(predicted, "predicted")
    }

    /// [`Ran::departs_from`] a claim that `by` made ("predicted", "its documentation
    /// says"), in those words.
    pub fn departure(&self, predicted: Predicted, by: &str) -> Option<String> {
        let r = self;
        let exercised = r.seeds - r.not_exercised_seeds;
        if r.verdict() == "not exercised" {
            if predicted == Predicted::NotExercised {
                return None;
            }
            // The whole cell's count, or, where that passes, the setting that falls short
            // (each setting of a grid must be exercised on its own).
            let short = r
                .settings
                .iter()
                .find(|s| s.verdict() != "safe" && s.unsafe_seeds == 0);
            let why = match short {
                Some(s)
                    if exercised as usize >= crate::outcome::needed(r.seeds as usize, r.min_exercised) =>
                {
                    format!(
                        "setting \"{}\": {} of {} seeds exercised, {} needed",
                        s.name,
                        s.seeds - s.not_exercised_seeds,
                        s.seeds,
                        crate::outcome::needed(s.seeds as usize, s.min_exercised)
                    )
                }
                _ => format!(
                    "{exercised} of {}, {} needed",
                    r.seeds,
                    crate::outcome::needed(r.seeds as usize, r.min_exercised)
                ),
            };
            return Some(format!(
                "{by} {}, but too few seeds were exercised ({why}): the prediction is untested",
                predicted.name()
            ));
        }
        let safe_on = || format!("safe on all {exercised} exercised seeds");
        match predicted {
            // The fault touches nothing this lock relies on: it should read not exercised.
            Predicted::NotExercised if r.unsafe_seeds > 0 => Some(format!(
                "{by} not exercised, found two holders at once on {}/{exercised} seeds",
                r.unsafe_seeds
            )),
            Predicted::NotExercised => Some(format!(
                "{by} not exercised (the fault touches nothing this lock relies on), but {exercised} of {} seeds were",
                r.seeds
            )),
            Predicted::Unsafe if r.unsafe_seeds == 0 => Some(format!("{by} unsafe, found {}", safe_on())),
            Predicted::Safe | Predicted::Tolerant | Predicted::StaleWrite if r.unsafe_seeds > 0 => Some(format!(
                "{by} {}, found two holders at once on {}/{} seeds",
                predicted.name(),
                r.unsafe_seeds,
                exercised
            )),
            Predicted::Tolerant => match (&r.tolerance, r.tolerant()) {
                (Some(t), Some(false)) => Some(format!(
                    "{by} fault-tolerant, found {} of {} uncontended acquisitions failed while a majority was reachable",
                    t.failed, t.judged
                )),
                (Some(t), None) => Some(format!(
                    "{by} fault-tolerant, but only {} uncontended acquisitions were judged during the faults (at least {} needed): the prediction is untested",
                    t.judged_during_faults,
                    MIN_TOLERANCE_JUDGED
                )),
                _ => None,
            },
            Predicted::StaleWrite if r.stale_seeds == 0 => {
                Some(format!("{by} a stale write, found none on {} seeds", r.seeds))
            }
            _ => None,
        }
    }

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
                    " · {:.0}% of {}acquires during the faults succeeded",
                    a * 100.0,
                    if r.fault_calls > 0 {
                        format!("{} ", r.fault_calls)
                    } else {
                        String::new()
                    }
                );
            }
            let of_calls = if r.calls > 0 {
                format!(" of {}", r.calls)
            } else {
                String::new()
            };
            match r.contended_availability {
                Some(c) => {
                    let _ = write!(
                        line,
                        " · acquire calls that succeeded: {:.0}%{of_calls} (probe; contending clients {:.0}%)",
                        r.availability * 100.0,
                        c * 100.0
                    );
                }
                None => {
                    let _ = write!(
                        line,
                        " · acquire calls that succeeded: {:.0}%{of_calls}",
                        r.availability * 100.0
                    );
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

/// The matrix's data file, from which `lockstorm report DIR` renders the pages again.
pub const JSON: &str = "matrix.json";

/// What a matrix writes at the top of its folder (its cells have folders of their own,
/// each with its manifest): the data file, the two pages, a shard's description.
pub const PAGES: [&str; 4] = [JSON, "README.md", "index.html", "shard.json"];

/// Writes matrix.json, README.md and index.html into `out`.
pub fn write(out: &Path, m: &Matrix) -> Result<(), ReportError> {
    std::fs::create_dir_all(out).map_err(super::io_err(out))?;
    let write = |name: &str, text: String| {
        let path = out.join(name);
        std::fs::write(&path, text).map_err(super::io_err(&path))
    };
    let json = serde_json::to_string(m).expect("the matrix serialises");
    write(JSON, json)?;
    write("README.md", super::matrix_page::markdown(m))?;
    write("index.html", super::matrix_page::html(m))?;
    for a in &m.adapters {
        // Each cell's run page links up to its library's page, which links up here.
        let dir = out.join(&a.name);
        if dir.is_dir() {
            let path = dir.join("index.html");
            std::fs::write(&path, super::matrix_page::library_page(a, m)).map_err(super::io_err(&path))?;
        }
    }
    super::site::refresh(out)
}
