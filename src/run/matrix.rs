//! The library matrix: every adapter of the list (`adapters/adapters.toml`) run against
//! every fault of the catalogue (`scenarios/matrix/multi/` for libraries that lock over
//! several nodes, `scenarios/matrix/single/` for single-instance ones), one real run per
//! cell, each with its own report, and the table of verdicts rendered by
//! `crate::report::matrix`.
//!
//! A catalogue template is an ordinary real-backend scenario; the matrix gives its
//! clients the adapter's worker. A library that cannot start or answer its hello gets
//! "cannot run here" with the reason in every cell (tried once); a fault the real
//! backend cannot carry out yet gets its refusal; a worker that breaks the protocol
//! mid-run gets its error, with the history so far kept in the cell's folder.

use crate::real::{RealError, RealOptions};
use crate::report::matrix::{AdapterRow, Cell, FaultColumn, Matrix, Ran};
use crate::scenario::{Scenario, ScenarioError};
use crate::worker::adapters::{self, Adapter, AdapterError};
use std::path::{Path, PathBuf};

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
    pub seed: u64,
    /// `--worker ARGV --worker-kind KIND`: this worker alone, instead of the list.
    pub worker: Option<(crate::worker::WorkerSpec, adapters::AdapterKind)>,
}

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

/// Runs the matrix and writes it into `options.out`; `progress` hears of each cell.
pub fn run_matrix(options: &MatrixOptions, progress: &dyn Fn(&str)) -> Result<Matrix, MatrixError> {
    let chosen = match &options.worker {
        Some((spec, kind)) => vec![Adapter::from_worker(spec, *kind)],
        None => adapters::select(adapters::load(&options.list)?, &options.adapters, &options.list)?,
    };
    let faults = columns(&options.catalogue, &options.faults)?;
    let mut rows = Vec::with_capacity(chosen.len());
    for a in &chosen {
        rows.push(run_adapter(options, a, &faults, progress)?);
    }
    let matrix = Matrix {
        seed: options.seed,
        command: match &options.worker {
            Some((spec, kind)) => format!(
                "cargo run --release -- matrix{} --worker-kind {}",
                spec.rerun_args(),
                kind.folder()
            ),
            None => "cargo run --release -- matrix".into(),
        },
        faults,
        adapters: rows,
    };
    crate::report::matrix::write(&options.out, &matrix)?;
    Ok(matrix)
}

fn run_adapter(
    options: &MatrixOptions,
    a: &Adapter,
    faults: &[FaultColumn],
    progress: &dyn Fn(&str),
) -> Result<AdapterRow, MatrixError> {
    let mut row = AdapterRow {
        name: a.name.clone(),
        runtime: a.runtime.clone(),
        kind: a.kind.folder().into(),
        command: a.command.join(" "),
        promise: a.promise.clone(),
        options: a.options.clone(),
        library: None,
        cells: Vec::with_capacity(faults.len()),
    };
    let mut cannot_run: Option<String> = None;
    for f in faults {
        let template = options
            .catalogue
            .join(a.kind.folder())
            .join(format!("{}.toml", f.id));
        if !template.is_file() {
            row.cells.push(Cell::NotApplicable);
            continue;
        }
        if let Some(why) = &cannot_run {
            row.cells.push(Cell::CannotRun { why: why.clone() });
            continue;
        }
        progress(&format!("{} x {}", a.name, f.id));
        let mut scenario = Scenario::load(&template)?;
        scenario.clients.worker = Some(a.spec());
        let rel = format!("{}/{}", a.name, f.id);
        let dir = options.out.join(&rel);
        // With the adapter (or `--worker`) and the seed: the cell exactly.
        let rerun = scenario.rerun_command(options.seed);
        let cell = match super::run(&scenario, &[options.seed], 1, &RealOptions::default(), &|_| {}) {
            Ok(outcome) => {
                crate::report::write(&dir, &scenario, &outcome)?;
                if let Some(logs) = &outcome.worker_logs {
                    logs.copy_to(&dir).map_err(|e| {
                        MatrixError::Real(RealError::Io(
                            format!("copy the worker logs to {}", dir.display()),
                            e,
                        ))
                    })?;
                    if row.library.is_none() {
                        row.library = logs.library.as_ref().map(|(l, v)| format!("{l} {v}"));
                    }
                }
                let l = &outcome.findings.liveness;
                let kind_is = |k: &str| l.iter().any(|f| f.kind() == k);
                Cell::Ran(Box::new(Ran {
                    lock_safe: outcome.safe,
                    violations: outcome.findings.violations.len(),
                    resource: if outcome.findings.resource.writes == 0 {
                        "no writes"
                    } else if outcome.resource_safe {
                        "safe"
                    } else {
                        "unsafe"
                    }
                    .into(),
                    stale_writes: outcome.findings.resource_violations.len(),
                    deadlock_free: !(kind_is("deadlock")
                        || kind_is("no_probe")
                        || kind_is("stuck_after_heal")),
                    // A finding is one of the judged acquisitions.
                    fault_tolerant: (outcome.findings.stats.tolerance_checked > 0)
                        .then(|| !kind_is("fault_tolerance")),
                    unknown: {
                        let s = &outcome.findings.stats;
                        if s.acquires == 0 {
                            0.0
                        } else {
                            s.unknown as f64 / s.acquires as f64
                        }
                    },
                    liveness: super::analysis::liveness_kinds(l),
                    availability: outcome.findings.stats.availability,
                    report: format!("{rel}/index.html"),
                    rerun,
                }))
            }
            Err(RealError::Worker(why)) => {
                cannot_run = Some(why.clone());
                Cell::CannotRun { why }
            }
            Err(RealError::WorkerFailed(failure)) => {
                std::fs::create_dir_all(&dir)
                    .and_then(|()| std::fs::File::create(dir.join("history.jsonl")))
                    .and_then(|f| {
                        crate::history::write_jsonl(&failure.output.history, std::io::BufWriter::new(f))
                    })
                    .map_err(|e| {
                        MatrixError::Real(RealError::Io(format!("keep the history in {}", dir.display()), e))
                    })?;
                if let Some(logs) = &failure.output.worker_logs {
                    let _ = logs.copy_to(&dir);
                }
                Cell::Error {
                    why: failure.message,
                    report: format!("{rel}/history.jsonl"),
                    rerun,
                }
            }
            Err(e @ RealError::Unsupported { .. }) => Cell::Refused {
                why: e.to_string(),
                rerun,
            },
            Err(e) => return Err(MatrixError::Real(e)),
        };
        row.cells.push(cell);
    }
    Ok(row)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
