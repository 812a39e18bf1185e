//! The library matrix: every adapter of the list (`adapters/adapters.toml`) run against
//! every fault of the catalogue (`scenarios/matrix/multi/` for libraries that lock over
//! several nodes, `scenarios/matrix/single/` for single-instance ones), each cell on
//! `seeds` seeds, and the table of verdicts rendered by `crate::report::matrix`.
//!
//! A catalogue template is an ordinary real-backend scenario; the matrix gives its
//! clients the adapter's worker, and in a multi-node cell one more client, the probe
//! (`clients.probe`), which takes a lock of its own throughout the run: its failures
//! while a majority was reachable are the library's, not contention's. Every (cell,
//! seed) is one real run with its own redis-servers on ports of its own
//! (`crate::real::server::free_port`), so `jobs` of them run at once. A cell tallies
//! its seeds ("k/N unsafe" with a Wilson interval, [`super::sweep::wilson`]) and
//! keeps the report of one seed: the first unsafe one, else the first. Only that
//! seed's history is kept in memory until its cell is done.
//!
//! A library that cannot start or answer its hello gets "cannot run here" with the
//! reason in every cell; a fault the real backend cannot carry out yet gets its refusal;
//! a seed whose worker breaks the protocol mid-run is counted apart (a cell whose every
//! seed did gets the error, with that history kept in the cell's folder).
//!
//! Each library's algorithm predicts a finding per fault (`predicts` in the adapter
//! list); a cell whose finding departs from it is flagged with what was found, and
//! `lockstorm matrix` exits 1 when any cell departs.

use super::shard::{MatrixRun, Shard, ShardFile};
use super::{Outcome, SeedResult};
use crate::checker::Findings;
use crate::lifecycle::RunOutput;
use crate::real::{RealError, RealOptions};
use crate::report::folder::RunFolder;
use crate::report::matrix::{AdapterRow, Cell, FaultColumn, Matrix, Ran, Tolerance};
use crate::scenario::{GridSetting, Override, Scenario, ScenarioError};
use crate::worker::adapters::{self, Adapter, AdapterError, AdapterKind, Prediction};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// The arguments of a regenerating command that choose what ran and where it went,
/// where they are not the defaults: the catalogue, the adapters and faults and the
/// first seed.
fn selection_args(options: &MatrixOptions) -> String {
    use crate::worker::shell_word;
    let mut args = String::new();
    if options.catalogue != Path::new(crate::report::matrix::DEFAULT_CATALOGUE) {
        args += &format!(
            " --catalogue {}",
            shell_word(&options.catalogue.display().to_string())
        );
    }
    if !options.adapters.is_empty() {
        args += &format!(" --adapters {}", shell_word(&options.adapters.join(",")));
    }
    if !options.faults.is_empty() {
        args += &format!(" --faults {}", shell_word(&options.faults.join(",")));
    }
    if options.seed != 1 {
        args += &format!(" --seed {}", options.seed);
    }
    args
}

/// Where a matrix of `catalogue` goes unless told (`--out`): reports/libraries, or for
/// a catalogue named matrix-NAME (scenarios/matrix-sentinel) reports/libraries-NAME, so
/// the regenerating command, which leaves `--out` out (the shards of one matrix write to
/// folders of their own), writes it where it was.
pub fn default_out(catalogue: &Path) -> PathBuf {
    let name = catalogue.file_name().unwrap_or_default().to_string_lossy();
    match name.strip_prefix("matrix-").filter(|n| !n.is_empty()) {
        Some(n) => PathBuf::from(format!("reports/libraries-{n}")),
        None => PathBuf::from("reports/libraries"),
    }
}

/// What `lockstorm matrix` was asked.
#[derive(Clone, Debug)]
pub struct MatrixOptions {
    /// The adapter list.
    pub list: PathBuf,
    /// The catalogue folder, holding `multi/` and `single/`.
    pub catalogue: PathBuf,
    pub out: PathBuf,
    /// Adapters to run (all when empty).
    pub adapters: Vec<String>,
    /// Fault ids (template stems) to run (all when empty).
    pub faults: Vec<String>,
    /// The first seed of every cell.
    pub seed: u64,
    /// `--worker ARGV --worker-kind KIND`: this worker alone, instead of the list.
    pub worker: Option<(crate::worker::WorkerSpec, adapters::AdapterKind)>,
    /// `--algorithm FAMILY` (with `worker`): the family whose predictions the worker's
    /// row takes from the list's `[predictions.FAMILY]`.
    pub algorithm: Option<String>,
    /// `--worker-options TEXT` (with `worker`): the row's options line, the settings the
    /// worker chose where it does not keep its library's defaults.
    pub worker_options: String,
    /// `--worker-read-write` (with `worker`): its lock has read and write modes, so it
    /// runs the catalogue's read-write templates too.
    pub worker_read_write: bool,
    /// `--predicts FILE` (with `worker`): the worker's own predictions, over its family's,
    /// and what its library's documentation says.
    pub predicts: Option<PathBuf>,
    /// Seeds per cell.
    pub seeds: u64,
    /// Runs at once.
    pub jobs: usize,
    /// `--shard I/N`: every N-th cell that runs (an adapter's fault with a template), from
    /// the I-th; `lockstorm merge` puts the shards' folders together.
    pub shard: Option<Shard>,
}

/// The default number of seeds per cell.
pub const DEFAULT_SEEDS: u64 = 10;

#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    #[error(transparent)]
    Adapters(#[from] AdapterError),
    #[error("cannot list {path}: {source}")]
    List { path: String, source: std::io::Error },
    #[error("no fault template (*.toml) in {0}/multi or {0}/single")]
    Empty(String),
    #[error("no fault {0:?} in the catalogue")]
    UnknownFault(String),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    #[error(transparent)]
    Report(#[from] crate::report::ReportError),
    /// The environment cannot run real Redis at all.
    #[error(transparent)]
    Real(RealError),
    #[error("stopped by a signal before the matrix was done")]
    Stopped,
    #[error("{0}")]
    Invalid(String),
}

/// The fault columns: every template stem of both layouts, in name order, with the
/// first comment line as the title and the next paragraph as its description.
fn columns(catalogue: &Path, wanted: &[String]) -> Result<Vec<FaultColumn>, MatrixError> {
    let mut stems = std::collections::BTreeMap::new();
    for layout in ["multi", "single"] {
        let dir = catalogue.join(layout);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries {
            let path = e
                .map_err(|source| MatrixError::List {
                    path: dir.display().to_string(),
                    source,
                })?
                .path();
            if path.extension().is_some_and(|x| x == "toml") {
                let stem = path
                    .file_stem()
                    .unwrap_or_default()
                    .to_string_lossy()
                    .into_owned();
                stems.entry(stem).or_insert(path);
            }
        }
    }
    if stems.is_empty() {
        return Err(MatrixError::Empty(catalogue.display().to_string()));
    }
    if let Some(f) = wanted.iter().find(|f| !stems.contains_key(*f)) {
        return Err(MatrixError::UnknownFault(f.clone()));
    }
    Ok(stems
        .into_iter()
        .filter(|(id, _)| wanted.is_empty() || wanted.contains(id))
        .map(|(id, path)| {
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let comment: Vec<&str> = text
                .lines()
                .take_while(|l| l.starts_with('#'))
                .map(|l| l.trim_start_matches('#').trim())
                .collect();
            let title = comment
                .first()
                .map_or_else(|| id.clone(), |t| t.trim_end_matches('.').to_string());
            let about = comment
                .iter()
                .skip(1)
                .take_while(|l| !l.starts_with("Part of the library matrix"))
                .copied()
                .collect::<Vec<_>>()
                .join(" ");
            FaultColumn { id, title, about }
        })
        .collect())
}

/// Whether a seed's faults met what they aim at (an unsafe seed always counts).
fn exercised(seed: &SeedResult) -> bool {
    seed.verdict != super::Verdict::NotExercised
}

/// One cell to run: an adapter on one fault's template, over the template's grid.
struct Plan {
    adapter: usize,
    /// The cell's folder, relative to the matrix folder.
    rel: String,
    /// The cell's scenario per setting of the template's grid (`[matrix] grid`); one,
    /// unnamed, for a template without a grid.
    settings: Vec<(Option<GridSetting>, Scenario)>,
    prediction: Option<Prediction>,
}

/// What a cell's settings gave so far, and how many runs it still waits for.
#[derive(Default)]
struct CellAcc {
    remaining: usize,
    settings: Vec<Acc>,
}

/// A seed's run kept as a cell's possible report.
struct Kept {
    result: SeedResult,
    output: RunOutput,
    findings: Findings,
}

/// What one setting of a cell's seeds gave so far.
#[derive(Default)]
struct Acc {
    results: Vec<SeedResult>,
    /// Per seed that ran, the few figures the tally needs beyond its result.
    figures: Vec<Figures>,
    /// The first seed's run of each rank (by seed, not by finish): exercised, not
    /// exercised, another finding ([`SeedResult::report_rank`]), and unsafe. The cell
    /// reports its first unsafe seed, else the scenario's rule
    /// ([`super::reported_seed`]), picked when every seed has run.
    first: [Option<Kept>; 4],
    /// Seeds whose worker broke the protocol: (seed, message), and the lowest one's run.
    errors: Vec<(u64, String)>,
    error_run: Option<(u64, RunOutput)>,
    refused: Option<String>,
    cannot_run: Option<String>,
}

/// What a seed's findings say that its result does not keep.
#[derive(Default)]
struct Figures {
    stuck: bool,
    liveness: Vec<&'static str>,
    /// Writes the guarded resource received.
    writes: u64,
}

/// A lock, whether or not another thread panicked holding it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The rank of an unsafe seed among [`Acc::first`]'s slots (above the report ranks).
const UNSAFE: usize = 3;

fn keep_lower(slot: &mut Option<Kept>, kept: Kept) {
    if slot.as_ref().is_none_or(|k| kept.result.seed < k.result.seed) {
        *slot = Some(kept);
    }
}

/// Runs the matrix and writes it into `options.out`; `progress` hears of each cell.
/// Returns the matrix and whether every cell's finding is as its library predicts.
pub fn run_matrix(options: &MatrixOptions, progress: &(dyn Fn(&str) + Sync)) -> Result<Matrix, MatrixError> {
    let started = Instant::now();
    let chosen = match &options.worker {
        Some((spec, kind)) => {
            let mut adapter = Adapter::from_worker(spec, *kind);
            adapter.options = options.worker_options.clone();
            if let Some(family) = &options.algorithm {
                let predicts = adapters::family(&options.list, family)?;
                adapter = adapter.with_family(family, predicts);
            }
            adapter.read_write = options.worker_read_write;
            if let Some(path) = &options.predicts {
                let own = adapters::predicts_file(path)?;
                adapter.predicts.extend(own.predicts);
                adapter.documents = own.documents;
            }
            vec![adapter]
        }
        None => adapters::select(adapters::load(&options.list)?, &options.adapters, &options.list)?,
    };
    let faults = columns(&options.catalogue, &options.faults)?;
    if let Some(path) = &options.predicts {
        // The file's own ids: a family's come from the list, not from this file.
        let all = columns(&options.catalogue, &[])?;
        let own = adapters::predicts_file(path)?;
        let unknown = own.faults().find(|id| !all.iter().any(|f| &f.id == *id)).cloned();
        if let Some(id) = unknown {
            return Err(MatrixError::Invalid(format!(
                "{}: names fault {id:?}, which the catalogue has not (its faults: {})",
                path.display(),
                all.iter().map(|f| f.id.as_str()).collect::<Vec<_>>().join(", ")
            )));
        }
    }
    let seeds = options.seeds.max(1);
    // Every cell: its plan, or None where the adapter's layout has no such fault, or
    // where the fault is a read-write one (its clients take read and write locks) and
    // the adapter's lock has no such modes: its family's prediction does not apply there.
    let mut cells: Vec<Option<Plan>> = Vec::with_capacity(chosen.len() * faults.len());
    for (ai, a) in chosen.iter().enumerate() {
        for f in &faults {
            let template = options
                .catalogue
                .join(a.kind.folder())
                .join(format!("{}.toml", f.id));
            if !template.is_file() {
                cells.push(None);
                continue;
            }
            let settings = cell_scenarios(&template, a)?;
            if !applies(a, &settings) {
                // Its row claims nothing there (`claims`): the cell is not applicable.
                cells.push(None);
                continue;
            }
            cells.push(Some(Plan {
                adapter: ai,
                rel: format!("{}/{}", a.name, f.id),
                settings,
                prediction: a.predicts.get(&f.id).cloned(),
            }));
        }
    }
    // A shard's description is read before anything runs (the adapter list may be gone
    // or unreadable by the end, and a shard without one cannot be merged).
    let shard_file = match options.shard {
        Some(shard) => Some(shard_file(options, shard, seeds)?),
        None => None,
    };
    // A shard runs every count-th planned cell; the others are another shard's.
    let mut elsewhere = vec![false; cells.len()];
    if let Some(shard) = options.shard {
        let planned = cells.iter().filter(|c| c.is_some()).count();
        shard.check_fits(planned, "cells").map_err(MatrixError::Invalid)?;
        let mut k = 0;
        for (cell, other) in cells.iter_mut().zip(&mut elsewhere) {
            if cell.is_some() {
                if !shard.picks(k) {
                    *cell = None;
                    *other = true;
                }
                k += 1;
            }
        }
    }
    // The last matrix's pages go first (a run stopped before it writes its own leaves
    // none that link the cells emptied below); a user's file of their names is refused.
    // The manifest lists the pages alone: the cells' folders have their own.
    // So does each library's own page, which links its cells; its folder keeps the
    // cells of other faults.
    let _pages = claim_pages(
        &options.out,
        cells
            .iter()
            .flatten()
            .filter_map(|plan| plan.rel.split_once('/').map(|(library, _)| library)),
    )?;
    // Each cell's folder is checked, and emptied of what the last matrix wrote there,
    // before any seed runs: a folder holding files lockstorm did not write stops the
    // matrix now, not after an hour of runs.
    for plan in cells.iter().flatten() {
        RunFolder::prepare(&options.out.join(&plan.rel))?;
    }
    let jobs: Vec<(usize, usize, u64)> = cells
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.as_ref().map(|c| (i, c.settings.len())))
        .flat_map(|(i, n)| (0..n).flat_map(move |s| (0..seeds).map(move |k| (i, s, options.seed + k))))
        .collect();
    let accs: Vec<Mutex<CellAcc>> = cells
        .iter()
        .map(|c| {
            let n = c.as_ref().map_or(0, |c| c.settings.len());
            Mutex::new(CellAcc {
                remaining: n * seeds as usize,
                settings: (0..n).map(|_| Acc::default()).collect(),
            })
        })
        .collect();
    let done: Vec<Mutex<Option<Cell>>> = cells.iter().map(|_| Mutex::new(None)).collect();
    let cannot_run: Vec<Mutex<Option<String>>> = chosen.iter().map(|_| Mutex::new(None)).collect();
    let fatal: Mutex<Option<MatrixError>> = Mutex::new(None);
    let abort = AtomicBool::new(false);
    let cells_done = AtomicUsize::new(0);
    let cell_count = cells.iter().filter(|c| c.is_some()).count();
    super::pool::map(
        &jobs,
        options.jobs,
        |_, &(cell, setting, seed)| {
            let plan = cells[cell].as_ref().expect("jobs are planned cells");
            let skip = abort.load(Ordering::Relaxed) || crate::shutdown::requested().is_some();
            let known = cannot_run[plan.adapter]
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            let run = match (skip, known) {
                (true, _) => None,
                (false, Some(why)) => Some(Err(RealError::Worker(why))),
                (false, None) => Some(super::run_seed_real(
                    &plan.settings[setting].1,
                    seed,
                    &RealOptions::default(),
                )),
            };
            let mut cell_acc = lock(&accs[cell]);
            let acc = &mut cell_acc.settings[setting];
            match run {
                None => {}
                Some(Ok((result, output, findings))) => {
                    let kinds: Vec<&'static str> = findings.liveness.iter().map(|l| l.kind()).collect();
                    acc.figures.push(Figures {
                        stuck: kinds
                            .iter()
                            .any(|k| matches!(*k, "deadlock" | "no_probe" | "stuck_after_heal")),
                        liveness: kinds,
                        writes: findings.resource.writes,
                    });
                    acc.results.push(result.clone());
                    let rank = if result.safe {
                        usize::from(result.report_rank())
                    } else {
                        UNSAFE
                    };
                    let kept = Kept {
                        result,
                        output,
                        findings,
                    };
                    if acc.first[UNSAFE].is_none() || rank == UNSAFE {
                        keep_lower(&mut acc.first[rank], kept);
                    }
                    if rank == UNSAFE {
                        // An unsafe seed is reported: the others' runs are not needed.
                        acc.first[..UNSAFE].fill_with(|| None);
                    }
                }
                Some(Err(RealError::Worker(why))) => {
                    *cannot_run[plan.adapter].lock().unwrap_or_else(|e| e.into_inner()) = Some(why.clone());
                    acc.cannot_run = Some(why);
                }
                Some(Err(RealError::WorkerFailed(failure))) => {
                    acc.errors.push((seed, failure.message));
                    if acc.error_run.as_ref().is_none_or(|(s, _)| seed < *s) {
                        acc.error_run = Some((seed, failure.output));
                    }
                }
                Some(Err(e @ RealError::Unsupported { .. })) => acc.refused = Some(e.to_string()),
                // A node that stops answering lockstorm's own connections mid-run, or a
                // restarted server that does not come back, ends that seed, not the whole
                // matrix: the cell says how many seeds it cost and why,
                // and every finished cell is kept.
                Some(Err(
                    e @ (RealError::Node { .. }
                    | RealError::ServerNotReady { .. }
                    | RealError::ServerExited { .. }),
                )) => acc.errors.push((seed, e.to_string())),
                Some(Err(e)) => {
                    fatal
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_or_insert(MatrixError::Real(e));
                    abort.store(true, Ordering::Relaxed);
                }
            }
            cell_acc.remaining -= 1;
            if cell_acc.remaining > 0 {
                return;
            }
            let acc = std::mem::take(&mut cell_acc.settings);
            if abort.load(Ordering::Relaxed) || crate::shutdown::requested().is_some() {
                return;
            }
            match finish_cell(options, plan, acc, seeds) {
                Ok(c) => {
                    progress(&format!(
                        "[{}/{cell_count}] {}: {}",
                        cells_done.fetch_add(1, Ordering::Relaxed) + 1,
                        plan.rel,
                        crate::report::matrix::summary(&c)
                    ));
                    *done[cell].lock().unwrap_or_else(|e| e.into_inner()) = Some(c);
                }
                Err(e) => {
                    fatal.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
                    abort.store(true, Ordering::Relaxed);
                }
            }
        },
        |_| {},
    );
    if let Some(e) = fatal.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
    if crate::shutdown::requested().is_some() {
        return Err(MatrixError::Stopped);
    }
    let mut done = done.into_iter().zip(elsewhere).map(|(m, other)| match other {
        true => Some(Cell::OtherShard),
        false => m.into_inner().unwrap_or_else(|e| e.into_inner()),
    });
    let rows = chosen
        .iter()
        .map(|a| {
            let cells: Vec<Cell> = faults
                .iter()
                .map(|_| done.next().flatten().unwrap_or(Cell::NotApplicable))
                .collect();
            AdapterRow {
                name: a.name.clone(),
                runtime: a.runtime.clone(),
                kind: a.kind.folder().into(),
                family: a.algorithm.clone(),
                command: a.command.join(" "),
                promise: a.promise.clone(),
                options: a.options.clone(),
                library: None,
                predicts: claims(&faults, &cells, &a.predicts),
                documents: documented(&faults, &cells, &a.documents),
                cells,
            }
        })
        .map(|mut row| {
            row.library = row.cells.iter().find_map(|c| match c {
                Cell::Ran(r) => r.library.clone(),
                _ => None,
            });
            row
        })
        .collect();
    let matrix = Matrix {
        seed: options.seed,
        seeds,
        jobs: options.jobs,
        wall_secs: started.elapsed().as_secs_f64(),
        command: match &options.worker {
            Some((spec, kind)) => format!(
                "cargo run --release -- matrix --seeds {seeds}{}{} --worker-kind {}{}{}{}{}",
                selection_args(options),
                spec.rerun_args(),
                kind.folder(),
                if options.worker_read_write {
                    " --worker-read-write"
                } else {
                    ""
                },
                options
                    .algorithm
                    .as_ref()
                    .map(|f| format!(" --algorithm {f}"))
                    .unwrap_or_default(),
                match options.worker_options.as_str() {
                    "" => String::new(),
                    o => format!(" --worker-options {}", crate::worker::shell_word(o)),
                },
                options
                    .predicts
                    .as_ref()
                    .map(|p| format!(
                        " --predicts {}",
                        crate::worker::shell_word(&p.display().to_string())
                    ))
                    .unwrap_or_default()
            ),
            None => format!(
                "cargo run --release -- matrix --seeds {seeds}{}",
                selection_args(options)
            ),
        },
        catalogue: options.catalogue.display().to_string(),
        faults,
        rejudged: None,
        rerun: None,
        shard_secs: Vec::new(),
        adapters: rows,
        provenance: None,
    };
    // Dated as it is written; the redis-server is the local one every cell ran on.
    let matrix = Matrix {
        provenance: Some(crate::report::provenance::Provenance::now(
            matrix.command.clone(),
            true,
        )),
        ..matrix
    };
    crate::report::matrix::write(&options.out, &matrix)?;
    if let Some(file) = shard_file {
        file.write(&options.out).map_err(|e| {
            MatrixError::Real(RealError::Io(
                format!("write {}", options.out.join(super::shard::FILE).display()),
                e,
            ))
        })?;
    }
    Ok(matrix)
}

/// A matrix shard's shard.json: the adapter list's text and every option that decides
/// the cells, so merge refuses shards of different matrices.
fn shard_file(options: &MatrixOptions, shard: Shard, seeds: u64) -> Result<ShardFile, MatrixError> {
    let text = std::fs::read_to_string(&options.list).map_err(|source| MatrixError::List {
        path: options.list.display().to_string(),
        source,
    })?;
    Ok(ShardFile {
        format: super::shard::FORMAT,
        kind: super::shard::Kind::Matrix,
        shard,
        source: super::shard::Source {
            path: options.list.clone(),
            text,
            overrides: Vec::new(),
            backend: Some(crate::scenario::Backend::Redis),
        },
        first_seed: options.seed,
        seeds,
        vary: Vec::new(),
        matrix: Some(MatrixRun {
            catalogue: options.catalogue.clone(),
            adapters: options.adapters.clone(),
            faults: options.faults.clone(),
            worker: options
                .worker
                .as_ref()
                .map(|(spec, kind)| format!("{} --worker-kind {}", spec.rerun_args(), kind.folder())),
            algorithm: options.algorithm.clone(),
            worker_options: options.worker_options.clone(),
            worker_read_write: options.worker_read_write,
            predicts: match &options.predicts {
                Some(p) => Some(std::fs::read_to_string(p).map_err(|source| MatrixError::List {
                    path: p.display().to_string(),
                    source,
                })?),
                None => None,
            },
        }),
    })
}

/// Judges a matrix's cells again against the claims of the adapter list at `list` as it
/// is now: each listed row takes the list's family, predictions and documentation
/// (where its cell ran, as the run would have), and every cell's departure is worked
/// out anew from its tally. The verdicts, tallies and options are the run's; rows the
/// list no longer has keep the run's claims. Returns the rows it re-read.
pub fn rejudge(m: &mut Matrix, list: &Path) -> Result<Vec<String>, MatrixError> {
    let listed = adapters::load(list)?;
    let mut read = Vec::new();
    for row in &mut m.adapters {
        let Some(a) = listed
            .iter()
            .find(|a| a.name == row.name && a.kind.folder() == row.kind)
        else {
            continue;
        };
        let predicts = claims(&m.faults, &row.cells, &a.predicts);
        row.family = a.algorithm.clone();
        row.documents = documented(&m.faults, &row.cells, &a.documents);
        for (cell, p) in row.cells.iter_mut().zip(&predicts) {
            if let Cell::Ran(r) = cell {
                r.departs = p.as_ref().and_then(|p| r.departs_from(p.verdict));
            }
        }
        row.predicts = predicts;
        read.push(row.name.clone());
    }
    m.rejudged = Some(format!(
        "predictions and documentation read from {} after the run (lockstorm report --list); the verdicts and tallies are the run's",
        list.display()
    ));
    Ok(read)
}

/// A row's claims per fault column, from the adapter's claims by fault id: none where
/// the cell is not applicable (the fault is not for this lock).
fn claims<T: Clone>(faults: &[FaultColumn], cells: &[Cell], by_id: &BTreeMap<String, T>) -> Vec<Option<T>> {
    faults
        .iter()
        .zip(cells)
        .map(|(f, c)| match c {
            Cell::NotApplicable => None,
            _ => by_id.get(&f.id).cloned(),
        })
        .collect()
}

/// [`claims`] of the library's documentation: empty when it says nothing anywhere.
fn documented(
    faults: &[FaultColumn],
    cells: &[Cell],
    by_id: &BTreeMap<String, adapters::Documented>,
) -> Vec<Option<adapters::Documented>> {
    let documents = claims(faults, cells, by_id);
    match documents.iter().any(Option::is_some) {
        true => documents,
        false => Vec::new(),
    }
}

/// A cell's scenarios, one per setting of the template's grid: the template with the
/// setting's overrides, the adapter's worker, and the probe client in a multi-node cell
/// (all set as overrides, so each rerun command carries them).
fn cell_scenarios(template: &Path, a: &Adapter) -> Result<Vec<(Option<GridSetting>, Scenario)>, MatrixError> {
    let text = crate::scenario::read_text(template)?;
    let base = match a.kind {
        AdapterKind::Multi => vec![Override::parse("clients.probe=true").expect("a valid override")],
        AdapterKind::Single => Vec::new(),
    };
    let grid = Scenario::from_text(&text, template, &base)?.grid;
    let settings: Vec<Option<GridSetting>> = match grid.is_empty() {
        true => vec![None],
        false => grid.into_iter().map(Some).collect(),
    };
    let fault = template.file_stem().map(|s| s.to_string_lossy().into_owned());
    let mut out = Vec::with_capacity(settings.len());
    for setting in settings {
        let mut sets = base.clone();
        for s in setting.iter().flat_map(|g| &g.set) {
            sets.push(Override::parse(s).map_err(|message| ScenarioError::Invalid {
                path: template.display().to_string(),
                line: None,
                message: format!("matrix.grid: {message}"),
            })?);
        }
        let mut scenario = Scenario::from_text(&text, template, &sets)?;
        scenario.clients.attach_worker(a.spec());
        if let Some(p) = fault.as_ref().and_then(|f| a.predicts.get(f)) {
            expect_prediction(&mut scenario, p);
        }
        out.push((setting, scenario));
    }
    Ok(out)
}

/// Claims the matrix's pages in `out` (matrix.json, README.md, index.html, shard.json)
/// and each of `libraries`' index.html, refusing a user's file of those names; the
/// folders stay locked while the returned guards live.
pub fn claim_pages<'l>(
    out: &Path,
    libraries: impl IntoIterator<Item = &'l str>,
) -> Result<Vec<RunFolder>, crate::report::ReportError> {
    let libraries: std::collections::BTreeSet<&str> = libraries.into_iter().collect();
    let root = RunFolder::prepare_shared(out, &crate::report::matrix::PAGES.map(String::from))?;
    std::iter::once(Ok(root))
        .chain(
            libraries
                .into_iter()
                .map(|library| RunFolder::prepare_shared(&out.join(library), &["index.html".to_string()])),
        )
        .collect()
}

/// Whether a cell's template applies to adapter `a`'s lock: a read-write template (its
/// clients take read locks, `clients.read_share` above 0) only to a lock with read and
/// write modes (the adapter's `read_write`).
fn applies(a: &Adapter, settings: &[(Option<GridSetting>, Scenario)]) -> bool {
    a.read_write || settings.iter().all(|(_, s)| s.clients.read_share == 0.0)
}

/// A catalogue template's `expect` is the built-in lock's: under a library, its own
/// prediction for that fault is the expected verdict (the run's banner, its exit status).
pub fn expect_prediction(scenario: &mut Scenario, p: &crate::worker::adapters::Prediction) {
    use crate::worker::adapters::Predicted;
    scenario.expect_by = crate::scenario::ExpectBy::Prediction;
    scenario.expect = match p.verdict {
        Predicted::Unsafe => crate::scenario::Expect::Unsafe,
        _ => crate::scenario::Expect::Safe,
    };
    if p.verdict == Predicted::StaleWrite {
        scenario.expect_resource = Some(crate::scenario::Expect::Unsafe);
    }
}

/// The command that reruns one seed of a cell's setting exactly: the scenario's own
/// rerun command carries the adapter (or `--worker`), the probe, the setting's
/// overrides and the seed.
fn rerun(scenario: &Scenario, seed: u64) -> String {
    scenario.rerun_command(seed)
}

/// Turns a finished cell's seeds (per setting of its grid) into its tally, writing the
/// reported seed's report: the first unsafe seed of the first setting that had one,
/// else the first seed of the first setting that ran.
fn finish_cell(
    options: &MatrixOptions,
    plan: &Plan,
    accs: Vec<Acc>,
    seeds: u64,
) -> Result<Cell, MatrixError> {
    let dir = options.out.join(&plan.rel);
    // A cell's folder holds one run, as a report folder does: what the last matrix wrote
    // there goes first (a cell that was unsafe and is now safe keeps no violation
    // timeline), and its manifest lists what this one wrote.
    // A cell that keeps nothing leaves no folder (`RunFolder::discard`).
    let folder = RunFolder::prepare(&dir)?;
    let first_scenario = &plan.settings[0].1;
    if let Some(why) = accs.iter().find_map(|a| a.cannot_run.clone()) {
        folder.discard();
        return Ok(Cell::CannotRun { why });
    }
    if let Some(why) = accs.iter().find_map(|a| a.refused.clone()) {
        folder.discard();
        return Ok(Cell::Refused {
            why,
            rerun: rerun(first_scenario, options.seed),
        });
    }
    let mut errors: Vec<(u64, String)> = accs.iter().flat_map(|a| a.errors.iter().cloned()).collect();
    errors.sort();
    let reported = accs
        .iter()
        .position(|a| a.results.iter().any(|r| !r.safe))
        .or_else(|| accs.iter().position(|a| a.first[2].is_some()))
        .or_else(|| accs.iter().position(|a| a.first.iter().any(Option::is_some)));
    let Some(reported) = reported else {
        // Every seed ended in an error: keep the lowest one's history, where a worker's
        // breach recorded one (a node that stopped answering leaves none).
        let (seed, why) = errors
            .first()
            .cloned()
            .unwrap_or((options.seed, "no seed ran".into()));
        let error_run = accs
            .iter()
            .enumerate()
            .filter_map(|(i, a)| a.error_run.as_ref().map(|(s, o)| (*s, i, o)))
            .min_by_key(|(s, i, _)| (*s, *i));
        if let Some((_, _, output)) = &error_run {
            std::fs::create_dir_all(&dir)
                .and_then(|()| std::fs::File::create(dir.join("history.jsonl")))
                .and_then(|f| crate::history::write_jsonl(&output.history, std::io::BufWriter::new(f)))
                .map_err(|e| {
                    MatrixError::Real(RealError::Io(format!("keep the history in {}", dir.display()), e))
                })?;
            let _ = crate::report::logs::write(
                &dir,
                output.worker_logs.as_ref(),
                &output.node_logs,
                crate::report::logs::KEEP_BYTES_COMMITTED,
            );
            folder.finish()?;
        } else {
            folder.discard();
        }
        let scenario = error_run.map_or(first_scenario, |(_, i, _)| &plan.settings[i].1);
        return Ok(Cell::Error {
            why,
            report: if error_run.is_some() {
                format!("{}/history.jsonl", plan.rel)
            } else {
                String::new()
            },
            rerun: rerun(scenario, seed),
        });
    };
    let probe = first_scenario.clients.probe.is_some();
    // Per setting, the results in seed order, as a run of these seeds would give them.
    let mut all_results = Vec::new();
    let mut all_figures = Vec::new();
    let mut settings = Vec::new();
    let mut seeds_touched = Vec::new();
    let mut kept = None;
    for (i, mut acc) in accs.into_iter().enumerate() {
        let (setting, scenario) = &plan.settings[i];
        let mut order: Vec<usize> = (0..acc.results.len()).collect();
        order.sort_by_key(|&k| acc.results[k].seed);
        let results: Vec<SeedResult> = order.iter().map(|&k| acc.results[k].clone()).collect();
        let figures: Vec<Figures> = order
            .iter()
            .map(|&k| std::mem::take(&mut acc.figures[k]))
            .collect();
        if let Some(g) = setting {
            let t = tally(&results, &figures.iter().collect::<Vec<_>>(), probe);
            settings.push(crate::report::matrix::Setting {
                name: g.name.clone(),
                set: g.set.clone(),
                seeds: t.seeds,
                unsafe_seeds: t.unsafe_seeds,
                not_exercised_seeds: t.not_exercised_seeds,
                min_exercised: scenario.min_exercised,
                rate: t.rate,
                stale_seeds: t.stale_seeds,
                stuck_seeds: t.stuck_seeds,
                rerun_all: format!("{} --seeds {}", rerun(scenario, options.seed), seeds),
            });
        }
        seeds_touched.extend(results.iter().map(|r| crate::report::matrix::SeedTouched {
            setting: setting.as_ref().map(|g| g.name.clone()),
            seed: r.seed,
            verdict: r.verdict,
            touched: r.touched.clone(),
        }));
        if i == reported {
            // The first unsafe seed; else the scenario's rule: a seed with another
            // finding, else, when the setting reads not exercised, its first seed not
            // exercised (its page shows what the faults missed), else its first exercised
            // seed.
            let wanted = match results.iter().find(|r| !r.safe) {
                Some(r) => r.seed,
                None => super::reported_seed(&results, scenario.min_exercised),
            };
            let run = acc
                .first
                .iter_mut()
                .filter_map(Option::take)
                .find(|k| k.result.seed == wanted);
            kept = Some((results.clone(), run));
        }
        all_results.extend(results);
        all_figures.extend(figures);
    }
    let (results, Some(kept)) = kept.expect("the reported setting ran") else {
        unreachable!("the reported setting kept a run");
    };
    let scenario = &plan.settings[reported].1;
    let reported_seed = kept.result.seed;
    let Kept { output, findings, .. } = kept;
    let mut outcome: Outcome = super::decide(
        scenario,
        results,
        reported_seed,
        super::History::Memory(output.history),
        output.plan,
        findings,
        None,
    );
    outcome.worker_logs = output.worker_logs;
    outcome.node_logs = output.node_logs;
    // A cell's history is kept as far as its report cites it (the cited windows): real
    // histories are long (node lines with the libraries' 40-digit values), and the
    // committed matrix has a size budget (tests/committed_reports.rs).
    let keep = super::analysis::keep_cited(&outcome);
    let rendered = crate::report::write_with(
        &dir,
        scenario,
        &outcome,
        keep,
        crate::report::Plots::Timelines,
        crate::report::interactive::Budget::COMMITTED,
    )?;
    // The logs went with the report (capped for the committed reports' budget).
    let library = outcome
        .worker_logs
        .as_ref()
        .and_then(|logs| logs.library.as_ref())
        .map(|(l, v)| format!("{l} {v}"));
    folder.finish()?;
    let figures: Vec<&Figures> = all_figures.iter().collect();
    let mut ran = tally(&all_results, &figures, probe);
    ran.min_exercised = scenario.min_exercised;
    ran.seeds_asked = seeds * plan.settings.len() as u64;
    ran.worker_errors = errors.len() as u64;
    ran.worker_error = errors.first().map(|(s, why)| format!("seed {s}: {why}"));
    ran.reported_seed = reported_seed;
    ran.report = format!("{}/index.html", plan.rel);
    ran.rerun = rerun(scenario, reported_seed);
    ran.rerun_all = match settings.is_empty() {
        true => format!("{} --seeds {}", rerun(scenario, options.seed), seeds),
        false => settings
            .iter()
            .map(|s| s.rerun_all.clone())
            .collect::<Vec<_>>()
            .join("; "),
    };
    ran.library = library;
    ran.anomalies = anomaly_names(&rendered);
    ran.liveness = liveness(&figures);
    ran.settings = settings;
    ran.seeds_touched = seeds_touched;
    if let Some(p) = &plan.prediction {
        ran.departs = ran.departs_from(p.verdict);
    }
    Ok(Cell::Ran(Box::new(ran)))
}

/// The anomalies the reported seed's stories name, each once, in the order first told.
fn anomaly_names(rendered: &crate::report::Rendered) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for story in rendered.stories.iter().chain(&rendered.stale) {
        if let Some(named) = &story.anomaly {
            let name = named.name();
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names
}

/// The liveness findings of every seed, by kind, with how many seeds had each.
fn liveness(figures: &[&Figures]) -> String {
    let mut seeds: std::collections::BTreeMap<&str, usize> = Default::default();
    for f in figures {
        let mut kinds = f.liveness.clone();
        kinds.sort_unstable();
        kinds.dedup();
        for k in kinds {
            *seeds.entry(k).or_default() += 1;
        }
    }
    if seeds.is_empty() {
        return "none".into();
    }
    seeds
        .iter()
        .map(|(k, n)| format!("{k} ({n}/{} seeds)", figures.len()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A cell's tally over the seeds that ran (in seed order). The verdict counts through
/// [`exercised`]: unsafe seeds, seeds not exercised, and the rest safe; the rate is
/// over the exercised seeds.
fn tally(results: &[SeedResult], figures: &[&Figures], probe: bool) -> Ran {
    let n = results.len() as u64;
    let unsafe_seeds = results.iter().filter(|r| !r.safe).count() as u64;
    let not_exercised = results.iter().filter(|r| r.safe && !exercised(r)).count() as u64;
    let exercised_seeds = n - not_exercised;
    let sum = |f: &dyn Fn(&SeedResult) -> u64| results.iter().map(f).sum::<u64>();
    let acquires = sum(&|r| r.stats.acquires);
    let share = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            part as f64 / whole as f64
        }
    };
    let probes: Vec<&crate::checker::stats::ProbeStats> =
        results.iter().filter_map(|r| r.stats.probe.as_ref()).collect();
    let probe_sum =
        |f: &dyn Fn(&crate::checker::stats::ProbeStats) -> u64| probes.iter().map(|p| f(p)).sum::<u64>();
    let calls = if probe {
        probe_sum(&|p| p.acquires)
    } else {
        acquires
    };
    let (availability, contended_availability, tolerance) = if probe {
        let others = acquires - probe_sum(&|p| p.acquires);
        (
            share(probe_sum(&|p| p.acquired), probe_sum(&|p| p.acquires)),
            Some(share(
                sum(&|r| r.stats.acquired) - probe_sum(&|p| p.acquired),
                others,
            )),
            Some(Tolerance {
                judged: probe_sum(&|p| p.judged),
                failed: probe_sum(&|p| p.judged_failed),
                judged_during_faults: probe_sum(&|p| p.judged_during_faults),
                attempts: probe_sum(&|p| p.acquires),
            }),
        )
    } else {
        (share(sum(&|r| r.stats.acquired), acquires), None, None)
    };
    let stale_seeds = results.iter().filter(|r| r.resource_violations > 0).count() as u64;
    Ran {
        seeds: n,
        seeds_asked: n,
        unsafe_seeds,
        not_exercised_seeds: not_exercised,
        min_exercised: crate::outcome::MIN_EXERCISED,
        rate: super::sweep::wilson(unsafe_seeds, exercised_seeds),
        violations: results.iter().map(|r| r.violations as u64).sum(),
        stale_seeds,
        stale_writes: results.iter().map(|r| r.resource_violations as u64).sum(),
        resource_writes: figures.iter().map(|f| f.writes).sum(),
        stuck_seeds: figures.iter().filter(|f| f.stuck).count() as u64,
        tolerance,
        availability,
        calls,
        contended_availability,
        fault_availability: {
            let tried = sum(&|r| r.stats.fault_acquires);
            (tried > 0).then(|| share(sum(&|r| r.stats.fault_acquired), tried))
        },
        fault_calls: sum(&|r| r.stats.fault_acquires),
        unknown: share(sum(&|r| r.stats.unknown), acquires),
        stalls: sum(&|r| r.stats.stalls),
        stall_seeds: results.iter().filter(|r| r.stats.stalls > 0).count() as u64,
        stall_max_us: results.iter().map(|r| r.stats.stall_max_us).max().unwrap_or(0),
        liveness: String::new(),
        worker_errors: 0,
        worker_error: None,
        reported_seed: results.first().map_or(0, |r| r.seed),
        report: String::new(),
        rerun: String::new(),
        rerun_all: String::new(),
        library: None,
        departs: None,
        anomalies: Vec::new(),
        settings: Vec::new(),
        seeds_touched: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::worker::adapters::Predicted;

    fn seed(seed: u64, safe: bool) -> SeedResult {
        SeedResult {
            seed,
            safe,
            live: true,
            violations: usize::from(!safe),
            liveness_findings: 0,
            resource_violations: 0,
            stats: Default::default(),
            sim: Default::default(),
            sim_secs: 0.0,
            partial: false,
            verdict: if safe {
                crate::run::Verdict::Safe
            } else {
                crate::run::Verdict::Unsafe
            },
            not_exercised: None,
            touched: Vec::new(),
        }
    }

    fn tally_of(results: &[SeedResult]) -> Ran {
        let figures: Vec<Figures> = results
            .iter()
            .map(|_| Figures {
                stuck: false,
                liveness: Vec::new(),
                writes: 0,
            })
            .collect();
        tally(results, &figures.iter().collect::<Vec<_>>(), false)
    }

    #[test]
    fn a_cells_line_gives_its_acquire_shares_with_their_n() {
        let results: Vec<SeedResult> = (1..=2)
            .map(|s| {
                let mut r = seed(s, true);
                r.stats.acquires = 10;
                r.stats.acquired = 4;
                r.stats.fault_acquires = 5;
                r.stats.fault_acquired = 1;
                r
            })
            .collect();
        let r = tally_of(&results);
        assert_eq!((r.calls, r.fault_calls), (20, 10));
        let line = crate::report::matrix::summary(&Cell::Ran(Box::new(r)));
        assert!(
            line.contains(" · 20% of 10 acquires during the faults succeeded"),
            "{line}"
        );
        assert!(
            line.contains(" · acquire calls that succeeded: 40% of 20"),
            "{line}"
        );
        assert!(!line.contains("available"), "{line}");
    }

    #[test]
    fn a_cell_reads_k_of_n_unsafe_with_its_wilson_interval() {
        let results: Vec<SeedResult> = (1..=10).map(|s| seed(s, s % 5 != 0)).collect();
        let r = tally_of(&results);
        assert_eq!((r.seeds, r.unsafe_seeds, r.not_exercised_seeds), (10, 2, 0));
        assert_eq!(r.verdict(), "unsafe");
        // Wilson 95% for 2 of 10: [5.7%, 51.0%].
        assert_eq!(r.tally_text(), "2/10 unsafe (20%, 95% CI 6%–51%)");
        let safe = tally_of(&(1..=10).map(|s| seed(s, true)).collect::<Vec<_>>());
        assert_eq!(safe.verdict(), "safe");
        // 0 of 10: the upper bound is 27.8%.
        assert_eq!(safe.tally_text(), "0/10 (rate <= 28% at 95%)");
        assert!(exercised(&results[0]));
        let mut idle = seed(11, true);
        idle.verdict = crate::run::Verdict::NotExercised;
        assert!(
            !exercised(&idle),
            "a seed whose faults met no hold is not exercised"
        );
    }

    #[test]
    fn a_cell_with_too_few_seeds_exercised_is_never_safe() {
        let mut r = tally_of(&(1..=10).map(|s| seed(s, true)).collect::<Vec<_>>());
        r.not_exercised_seeds = 10;
        assert_eq!(r.verdict(), "not exercised");
        assert_eq!(
            r.tally_text(),
            "not exercised (0 of 10 seeds exercised, 8 needed)"
        );
        assert!(r
            .departs_from(Predicted::Safe)
            .is_some_and(|d| d.contains("untested")));
        // A fault that touches nothing the lock relies on is predicted so: no departure,
        // and one where it was exercised after all.
        assert_eq!(r.departs_from(Predicted::NotExercised), None);
        let exercised = tally_of(&(1..=10).map(|s| seed(s, true)).collect::<Vec<_>>());
        assert!(exercised
            .departs_from(Predicted::NotExercised)
            .is_some_and(|d| d.contains("10 of 10 seeds were")));
        // The one rule: 8 of 10 (the default share, 0.8) is enough, 7 is not.
        r.not_exercised_seeds = 3;
        assert_eq!(r.verdict(), "not exercised");
        r.not_exercised_seeds = 2;
        r.rate = crate::run::sweep::wilson(0, 8);
        assert_eq!(r.verdict(), "safe");
        assert!(
            r.tally_text().ends_with(" · 2/10 seeds not exercised"),
            "{}",
            r.tally_text()
        );
    }

    #[test]
    fn a_finding_departs_from_its_prediction_with_the_reason() {
        let safe = tally_of(&(1..=4).map(|s| seed(s, true)).collect::<Vec<_>>());
        let unsafe_ = tally_of(&(1..=4).map(|s| seed(s, s != 2)).collect::<Vec<_>>());
        assert_eq!(safe.departs_from(Predicted::Safe), None);
        assert_eq!(
            safe.departs_from(Predicted::Unsafe).as_deref(),
            Some("predicted unsafe, found safe on all 4 exercised seeds")
        );
        assert_eq!(unsafe_.departs_from(Predicted::Unsafe), None);
        assert_eq!(
            unsafe_.departs_from(Predicted::Safe).as_deref(),
            Some("predicted safe, found two holders at once on 1/4 seeds")
        );
        let mut tolerant = safe.clone();
        tolerant.tolerance = Some(Tolerance {
            attempts: 50,
            judged: 40,
            judged_during_faults: 12,
            failed: 3,
        });
        assert_eq!(
            tolerant.tolerance_text(),
            "3 of 40 uncontended acquisitions failed while a majority was reachable"
        );
        assert!(tolerant
            .departs_from(Predicted::Tolerant)
            .is_some_and(|d| d.contains("3 of 40")));
        tolerant.tolerance.as_mut().unwrap().failed = 0;
        assert_eq!(tolerant.departs_from(Predicted::Tolerant), None);
        assert!(tolerant.tolerance_text().starts_with("ok"));
        // "ok" needs enough acquisitions judged during the faults; fewer is untested.
        tolerant.tolerance.as_mut().unwrap().judged_during_faults = 3;
        assert!(tolerant
            .tolerance_text()
            .starts_with("not judged (3 uncontended acquisitions during the faults"));
        assert!(tolerant
            .departs_from(Predicted::Tolerant)
            .is_some_and(|d| d.contains("untested")));
        assert!(safe.departs_from(Predicted::StaleWrite).is_some());
    }

    #[test]
    fn a_cell_expects_what_its_library_predicts_not_the_templates_expect() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let list = root.join("adapters/adapters.toml");
        let a = adapters::select(adapters::load(&list).unwrap(), &["redlock-rs".into()], &list).unwrap();
        let template = root.join("scenarios/matrix/multi/12-slow-acquisition.toml");
        let own =
            Scenario::from_text(&crate::scenario::read_text(&template).unwrap(), &template, &[]).unwrap();
        assert_eq!(own.expect, crate::scenario::Expect::Safe, "the built-in lock's");
        let cells = cell_scenarios(&template, &a[0]).unwrap();
        assert!(!cells.is_empty());
        for (_, cell) in &cells {
            assert_eq!(
                cell.expect,
                crate::scenario::Expect::Unsafe,
                "the redlock crate's prediction"
            );
        }
    }

    #[test]
    fn every_catalogue_template_is_a_real_scenario_and_has_a_title() {
        let catalogue = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/matrix");
        let cols = columns(&catalogue, &[]).unwrap();
        assert!(cols.len() >= 11, "{cols:?}");
        for layout in ["multi", "single"] {
            for c in &cols {
                let path = catalogue.join(layout).join(format!("{}.toml", c.id));
                if path.is_file() {
                    let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
                    assert_eq!(s.backend, crate::scenario::Backend::Redis, "{}", path.display());
                    assert!(s.clients.worker.is_none(), "the matrix sets the worker");
                }
            }
        }
        assert!(
            cols.iter().all(|c| !c.title.is_empty() && !c.about.is_empty()),
            "every fault says what it does: {cols:?}"
        );
        assert!(columns(&catalogue, &["nope".into()]).is_err());
    }

    #[test]
    fn a_catalogue_named_after_the_matrix_gets_a_folder_of_its_own() {
        assert_eq!(
            default_out(Path::new("scenarios/matrix")),
            Path::new("reports/libraries")
        );
        assert_eq!(
            default_out(Path::new("scenarios/matrix-sentinel")),
            Path::new("reports/libraries-sentinel")
        );
        assert_eq!(default_out(Path::new("my/cat")), Path::new("reports/libraries"));
        assert_eq!(default_out(Path::new("matrix-")), Path::new("reports/libraries"));
    }

    #[test]
    fn a_read_write_template_applies_only_to_a_read_write_lock() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let list = root.join("adapters/adapters.toml");
        let all = adapters::load(&list).unwrap();
        let named = |n: &str| all.iter().find(|a| a.name == n).unwrap().clone();
        let (own, exclusive) = (named("lockstorm-single"), named("redis-py-lock"));
        assert!(own.read_write && !exclusive.read_write);
        let single = root.join("scenarios/matrix/single");
        let flood = cell_scenarios(&single.join("23-reader-flood.toml"), &exclusive).unwrap();
        assert!(applies(&own, &flood));
        assert!(
            !applies(&exclusive, &flood),
            "an exclusive lock takes no read locks"
        );
        let clean = cell_scenarios(&single.join("01-clean.toml"), &exclusive).unwrap();
        assert!(applies(&own, &clean) && applies(&exclusive, &clean));
        // Every template from 20 on is a read-write one, in both layouts.
        for layout in ["multi", "single"] {
            for e in std::fs::read_dir(root.join("scenarios/matrix").join(layout)).unwrap() {
                let path = e.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().into_owned();
                let cells = cell_scenarios(&path, &exclusive).unwrap();
                assert_eq!(
                    applies(&exclusive, &cells),
                    name.as_str() < "20",
                    "{layout}/{name}"
                );
            }
        }
    }

    #[test]
    fn a_matrix_is_judged_again_against_the_lists_claims_as_they_are_now() {
        let ran = |unsafe_seeds: u64| {
            serde_json::json!({
                "status": "ran", "seeds": 10, "seeds_asked": 10, "unsafe_seeds": unsafe_seeds,
                "not_exercised_seeds": 0, "rate": {"rate": 0.0, "low": 0.0, "high": 0.3},
                "violations": unsafe_seeds, "stale_seeds": 0, "stale_writes": 0,
                "resource_writes": 0, "stuck_seeds": 0, "availability": 1.0, "unknown": 0.0,
                "stalls": 0, "stall_seeds": 0, "stall_max_us": 0, "liveness": "none",
                "worker_errors": 0, "reported_seed": 1, "report": "x/index.html",
                "rerun": "", "rerun_all": "",
                "departs": "predicted unsafe, found safe on all 10 exercised seeds",
            })
        };
        let row = |name: &str| {
            serde_json::json!({
                "name": name, "runtime": "python", "kind": "single", "command": name, "promise": "",
                "predicts": [{"verdict": "unsafe", "why": "a claim of the run's"}, null],
                "cells": [ran(0), {"status": "not_applicable"}],
            })
        };
        let mut m: Matrix = serde_json::from_value(serde_json::json!({
            "seed": 1, "seeds": 10, "command": "lockstorm matrix",
            "faults": [
                {"id": "01-clean", "title": "Clean", "about": ""},
                {"id": "20-writer-clock-ahead", "title": "Writer ahead", "about": ""},
            ],
            "adapters": [row("listed"), row("gone")],
        }))
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let list = dir.path().join("list.toml");
        std::fs::write(
            &list,
            r#"
            [[adapter]]
            name = "listed"
            command = ["x"]
            runtime = "python"
            kind = "single"
            predicts = { "01-clean" = { verdict = "safe", why = "corrected from the source (x.py:1)" }, "20-writer-clock-ahead" = { verdict = "unsafe", why = "not applicable here" } }
            [adapter.documents]
            "01-clean" = { says = "unsafe", quote = "never safe", source = "README:1" }
            "#,
        )
        .unwrap();
        assert_eq!(rejudge(&mut m, &list).unwrap(), ["listed"]);
        let listed = &m.adapters[0];
        assert_eq!(listed.predicts[0].as_ref().unwrap().verdict, Predicted::Safe);
        assert_eq!(listed.predicts[1], None, "no claim where the cell did not apply");
        let Cell::Ran(r) = &listed.cells[0] else { panic!() };
        assert_eq!(r.departs, None, "as the corrected prediction says");
        assert!(listed.contradicts_docs(0).is_some());
        // A row the list no longer has keeps the run's claims and their judgement.
        let gone = &m.adapters[1];
        assert_eq!(gone.predicts[0].as_ref().unwrap().verdict, Predicted::Unsafe);
        let Cell::Ran(r) = &gone.cells[0] else { panic!() };
        assert!(r.departs.is_some());
        assert!(m.rejudged.as_deref().unwrap().contains("list.toml after the run"));
    }
}
