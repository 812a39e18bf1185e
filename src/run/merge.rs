//! `lockstorm merge DIR...`: the shards of one run put back together into what the
//! unsharded run would have decided and written.
//!
//! Each folder holds a shard's shard.json ([`super::shard`]) and its results (the
//! per-seed results in summary.json for a scenario, the cells in sweep.json for a sweep).
//! Merge checks that the folders are every shard of the same run, once each, and that
//! each holds exactly the seeds or cells its index picks. For a scenario it orders the
//! per-seed results, picks the reported seed as a single run does, and simulates that
//! seed again for its history and findings (the simulator is deterministic), so the
//! merged summary.json, history.jsonl, narrative.md and index.html are the bytes one
//! unsharded run writes. Wall-clock figures are summed from the shards' timing.json.
//!
//! A matrix's shards ([`merge_matrix`]) each hold the whole table with the other
//! shards' cells marked as theirs: merge takes every cell from the one shard that ran
//! it (checking that it is the shard its position picks), and names the cell folders to
//! copy. The merged matrix.json and README.md are one run's, all but its wall time
//! (the longest shard's: the time on that many machines).

use super::shard::{seed_list, Kind, ShardFile};
use super::sweep::Sweep;
use super::{reported_outcome, reported_seed, Outcome, SeedResult};
use crate::report::matrix::{Cell, Matrix};
use crate::report::timing::{self, Timing};
use crate::scenario::{Backend, Scenario, ScenarioError};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
}

/// What the merged shards add up to.
pub enum Merged {
    Scenario {
        scenario: Box<Scenario>,
        outcome: Box<Outcome>,
        timing: Timing,
    },
    Sweep {
        sweep: Box<Sweep>,
        timing: Timing,
    },
    Matrix {
        matrix: Box<Matrix>,
        /// Each cell's folder (relative to the matrix folder) and the shard folder
        /// that holds it.
        folders: Vec<(String, PathBuf)>,
    },
}

/// Merges the shard folders `dirs` (in any order).
pub fn merge(dirs: &[PathBuf]) -> Result<Merged, MergeError> {
    let invalid = |m: String| MergeError::Invalid(m);
    let Some(first_dir) = dirs.first() else {
        return Err(invalid("merge needs the shards' folders".into()));
    };
    let files: Vec<ShardFile> = dirs
        .iter()
        .map(|d| ShardFile::read(d))
        .collect::<Result<_, _>>()
        .map_err(invalid)?;
    let first = &files[0];
    // Nothing is sized by a number from shard.json before it is checked against what
    // is on disk: a shard count is at most the folders given.
    for (file, dir) in files.iter().zip(dirs) {
        if file.shard.count == 0 || file.shard.index >= file.shard.count {
            return Err(invalid(format!(
                "{}: shard {} is not a shard (indices are from 0 to the count less 1)",
                dir.join(super::shard::FILE).display(),
                file.shard
            )));
        }
    }
    if first.shard.count > dirs.len() as u64 {
        // The first index no folder holds: at most the number of folders.
        let missing = (0..)
            .find(|i| !files.iter().any(|f| f.shard.index == *i))
            .unwrap_or(0);
        return Err(invalid(format!(
            "shard {missing}/{} is missing (got {} of {} folders)",
            first.shard.count,
            dirs.len(),
            first.shard.count
        )));
    }
    let mut slots: Vec<Option<&Path>> = vec![None; first.shard.count as usize];
    for (file, dir) in files.iter().zip(dirs) {
        if !first.same_run(file) {
            return Err(invalid(format!(
                "{} and {} are shards of different runs (scenario, overrides, seeds, axes or shard count differ)",
                first_dir.display(),
                dir.display()
            )));
        }
        let slot = &mut slots[file.shard.index as usize];
        if let Some(other) = slot {
            return Err(invalid(format!(
                "{} and {} are both shard {}",
                other.display(),
                dir.display(),
                file.shard
            )));
        }
        *slot = Some(dir);
    }
    if let Some(missing) = slots.iter().position(Option::is_none) {
        return Err(invalid(format!(
            "shard {missing}/{} is missing (got {} of {} folders)",
            first.shard.count,
            dirs.len(),
            first.shard.count
        )));
    }
    let timing = dirs
        .iter()
        .filter_map(|d| timing::read(d))
        .fold(Timing::default(), |a, t| a.plus(&t));
    match first.kind {
        Kind::Scenario => {
            let (scenario, outcome) = merge_seeds(first, &files, dirs)?;
            Ok(Merged::Scenario {
                scenario: Box::new(scenario),
                outcome: Box::new(outcome),
                timing,
            })
        }
        Kind::Sweep => Ok(Merged::Sweep {
            sweep: Box::new(merge_cells(&files, dirs)?),
            timing,
        }),
        Kind::Matrix => {
            let (matrix, folders) = merge_matrix(&files, dirs)?;
            Ok(Merged::Matrix {
                matrix: Box::new(matrix),
                folders,
            })
        }
    }
}

/// The shards' matrix.json put together: every cell from the shard that ran it.
fn merge_matrix(
    files: &[ShardFile],
    dirs: &[PathBuf],
) -> Result<(Matrix, Vec<(String, PathBuf)>), MergeError> {
    let invalid = |m: String| MergeError::Invalid(m);
    let mut parts: Vec<(PathBuf, Matrix)> = Vec::new();
    for dir in dirs {
        let path = dir.join("matrix.json");
        let m: Matrix = serde_json::from_value(read_json(&path)?)
            .map_err(|e| invalid(format!("{}: not a matrix: {e}", path.display())))?;
        parts.push((path, m));
    }
    let (first_path, first) = &parts[0];
    let shape = |m: &Matrix| {
        (
            m.seed,
            m.seeds,
            m.command.clone(),
            m.faults.iter().map(|f| f.id.clone()).collect::<Vec<_>>(),
            m.adapters
                .iter()
                .map(|a| (a.name.clone(), a.cells.len()))
                .collect::<Vec<_>>(),
        )
    };
    for (path, m) in &parts[1..] {
        if shape(m) != shape(first) || m.adapters.iter().any(|a| a.cells.len() != m.faults.len()) {
            return Err(invalid(format!(
                "{} and {} are not shards of one matrix (seeds, faults or adapters differ)",
                first_path.display(),
                path.display()
            )));
        }
    }
    let mut merged = first.clone();
    merged.wall_secs = parts.iter().map(|(_, m)| m.wall_secs).fold(0.0, f64::max);
    // By shard, whatever order the folders came in.
    let mut by_shard: Vec<(u64, f64)> = files
        .iter()
        .zip(&parts)
        .map(|(f, (_, m))| (f.shard.index, m.wall_secs))
        .collect();
    by_shard.sort_by_key(|(i, _)| *i);
    merged.shard_secs = by_shard.into_iter().map(|(_, s)| s).collect();
    // Dated as its earliest shard (ISO 8601 dates sort as text).
    let earliest = parts
        .iter()
        .filter_map(|(_, m)| m.provenance.as_ref()?.date_utc.clone())
        .min();
    if let Some(p) = merged.provenance.as_mut() {
        p.date_utc = earliest;
    }
    let mut folders = Vec::new();
    // Planned cells (those with a template) are numbered across rows, as the matrix
    // numbered them for --shard.
    let mut planned = 0usize;
    for (ai, row) in merged.adapters.iter_mut().enumerate() {
        for (fi, cell) in row.cells.iter_mut().enumerate() {
            let here: Vec<&Cell> = parts.iter().map(|(_, m)| &m.adapters[ai].cells[fi]).collect();
            if here.iter().all(|c| matches!(c, Cell::NotApplicable)) {
                *cell = Cell::NotApplicable;
                continue;
            }
            let Some(owner) = files.iter().position(|f| f.shard.picks(planned)) else {
                unreachable!("one of every shard index picks each position");
            };
            for (si, c) in here.iter().enumerate() {
                let theirs = matches!(c, Cell::OtherShard);
                if (si == owner) == theirs || matches!(c, Cell::NotApplicable) {
                    return Err(invalid(format!(
                        "{}: cell {}/{} is not where shard {} puts it",
                        parts[si].0.display(),
                        row.name,
                        merged.faults[fi].id,
                        files[si].shard
                    )));
                }
            }
            *cell = here[owner].clone();
            let has_folder = match &*cell {
                Cell::Ran(_) => true,
                Cell::Error { report, .. } => !report.is_empty(),
                _ => false,
            };
            if has_folder {
                folders.push((
                    format!("{}/{}", row.name, merged.faults[fi].id),
                    dirs[owner].clone(),
                ));
            }
            planned += 1;
        }
        row.library = row.cells.iter().find_map(|c| match c {
            Cell::Ran(r) => r.library.clone(),
            _ => None,
        });
    }
    Ok((merged, folders))
}

fn read_json(path: &Path) -> Result<serde_json::Value, MergeError> {
    let text = crate::limits::read_bounded(path, crate::limits::MAX_JSON_BYTES)
        .map_err(|e| MergeError::Invalid(format!("{}: {e}", path.display())))?;
    serde_json::from_str(&text).map_err(|e| MergeError::Invalid(format!("{}: {e}", path.display())))
}

fn merge_seeds(
    first: &ShardFile,
    files: &[ShardFile],
    dirs: &[PathBuf],
) -> Result<(Scenario, Outcome), MergeError> {
    let scenario = first.source.scenario(&[])?;
    if scenario.backend != Backend::Sim {
        return Err(MergeError::Invalid(format!(
            "{}: merge simulates the reported seed again, which a run on real Redis cannot do; merge simulator runs only",
            first.source.path.display()
        )));
    }
    // Each shard's seeds, read first: the run's seed count is checked against them
    // before anything is sized by it.
    let mut read = Vec::new();
    for dir in dirs {
        let path = dir.join("summary.json");
        let summary = read_json(&path)?;
        if summary["partial"].as_bool() == Some(true) {
            return Err(MergeError::Invalid(format!(
                "{}: this shard's run did not finish ({}); run the shard again before merging",
                path.display(),
                summary["partial_reason"].as_str().unwrap_or("partial")
            )));
        }
        let seeds: Vec<SeedResult> = serde_json::from_value(summary["seeds"].clone())
            .map_err(|e| MergeError::Invalid(format!("{}: seeds: {e}", path.display())))?;
        read.push((path, seeds));
    }
    let held: usize = read.iter().map(|(_, s)| s.len()).sum();
    if held as u64 != first.seeds {
        return Err(MergeError::Invalid(format!(
            "the shards hold {held} seeds, but their shard.json says the run has {}",
            first.seeds
        )));
    }
    let all = seed_list(first.first_seed, first.seeds);
    let positions: Vec<usize> = (0..all.len()).collect();
    let mut results: Vec<Option<SeedResult>> = vec![None; all.len()];
    for (file, (path, seeds)) in files.iter().zip(read) {
        let mine = file.shard.select(&positions);
        if seeds.len() != mine.len() || mine.iter().zip(&seeds).any(|(&p, r)| all[p] != r.seed) {
            return Err(MergeError::Invalid(format!(
                "{}: does not hold the seeds of shard {}",
                path.display(),
                file.shard
            )));
        }
        for (p, r) in mine.into_iter().zip(seeds) {
            results[p] = Some(r);
        }
    }
    let results: Vec<SeedResult> = results
        .into_iter()
        .map(|r| r.expect("every shard placed"))
        .collect();
    let reported = reported_seed(&results, scenario.min_exercised);
    let outcome = reported_outcome(&scenario, results, reported);
    Ok((scenario, outcome))
}

fn merge_cells(files: &[ShardFile], dirs: &[PathBuf]) -> Result<Sweep, MergeError> {
    let mut merged: Option<Sweep> = None;
    let mut cells = Vec::new();
    for (file, dir) in files.iter().zip(dirs) {
        let path = dir.join(crate::report::sweep::JSON);
        let sweep: Sweep = serde_json::from_value(read_json(&path)?)
            .map_err(|e| MergeError::Invalid(format!("{}: {e}", path.display())))?;
        if sweep.cells.iter().any(|c| !file.shard.picks(c.index)) {
            return Err(MergeError::Invalid(format!(
                "{}: holds cells of another shard than {}",
                path.display(),
                file.shard
            )));
        }
        cells.extend(sweep.cells.iter().cloned());
        merged.get_or_insert(sweep);
    }
    let mut sweep = merged.expect("at least one shard");
    cells.sort_by_key(|c| c.index);
    if cells.len() != sweep.grid_cells() || cells.iter().enumerate().any(|(i, c)| c.index != i) {
        return Err(MergeError::Invalid(format!(
            "the shards hold {} of the grid's {} cells",
            cells.len(),
            sweep.grid_cells()
        )));
    }
    sweep.cells = cells;
    Ok(sweep)
}
