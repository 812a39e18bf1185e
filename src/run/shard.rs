//! Sharding: `--shard i/n` runs every n-th seed (of `scenario`), grid cell (of `sweep`)
//! or library cell (of `matrix`), starting with the i-th (counted from 0), so n machines of an existing
//! engine (a CI matrix, a Kubernetes Indexed Job) split one run with no scheduler of
//! lockstorm's own; `lockstorm merge` ([`super::merge`]) puts the shards back together.
//!
//! Besides its usual output, a shard's folder holds `shard.json` ([`ShardFile`]): which
//! shard it is and everything needed to rebuild the whole run's configuration without
//! the original files: the scenario file's text, the `--set` overrides, the backend,
//! the seeds and the sweep axes. Merge refuses shards that disagree on any of it.

use crate::scenario::{Backend, Override, Scenario, ScenarioError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The file name of a shard's description, in its output folder.
pub const FILE: &str = "shard.json";

/// Version of the shard.json layout; merge refuses other versions.
pub const FORMAT: u32 = 1;

/// Shard `index` of `count`: positions `index`, `index + count`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl Shard {
    /// The whole run as one shard.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// Whether the item at `position` belongs to this shard.
    pub fn picks(&self, position: usize) -> bool {
        position as u64 % self.count == self.index
    }

    /// This shard's items, in order.
    pub fn select<T: Clone>(&self, items: &[T]) -> Vec<T> {
        items
            .iter()
            .enumerate()
            .filter(|(i, _)| self.picks(*i))
            .map(|(_, t)| t.clone())
            .collect()
    }

    /// Checks that no shard of `count` would be empty for `items` items.
    pub fn check_fits(&self, items: usize, what: &str) -> Result<(), String> {
        if self.count as usize > items {
            return Err(format!(
                "--shard {self}: only {items} {what}, so some of {} shards would have nothing to run; use at most {items} shards",
                self.count
            ));
        }
        Ok(())
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl FromStr for Shard {
    type Err = String;

    /// `i/n` with 0 <= i < n.
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || format!("{s:?} is not a shard: write INDEX/COUNT, e.g. 0/4 (indices from 0)");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u64 = i.trim().parse().map_err(|_| bad())?;
        let count: u64 = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || count > 100_000 {
            return Err(format!("{s:?}: the shard count is from 1 to 100000"));
        }
        if index >= count {
            return Err(format!("{s:?}: shard indices are from 0 to {}", count - 1));
        }
        Ok(Shard { index, count })
    }
}

/// A scenario as a run was configured: enough to rebuild it anywhere.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The file as named on the command line (rerun commands print it).
    pub path: PathBuf,
    /// The file's text when the run read it.
    pub text: String,
    /// `--set` overrides, in order, as `key=value`.
    pub overrides: Vec<String>,
    /// `--backend`, if given.
    pub backend: Option<Backend>,
}

impl Source {
    /// Reads the file at `path`.
    pub fn read(
        path: &Path,
        overrides: &[Override],
        backend: Option<Backend>,
    ) -> Result<Source, ScenarioError> {
        Ok(Source {
            path: path.to_path_buf(),
            text: crate::scenario::read_text(path)?,
            overrides: overrides.iter().map(Override::to_string).collect(),
            backend,
        })
    }

    /// The scenario with its overrides, then `more` (a sweep cell's values), applied.
    pub fn scenario(&self, more: &[Override]) -> Result<Scenario, ScenarioError> {
        let mut all: Vec<Override> = self
            .overrides
            .iter()
            .map(|o| {
                Override::parse(o).map_err(|message| ScenarioError::Invalid {
                    path: self.path.display().to_string(),
                    line: None,
                    message,
                })
            })
            .collect::<Result<_, _>>()?;
        all.extend_from_slice(more);
        let mut scenario = Scenario::from_text(&self.text, &self.path, &all)?;
        if let Some(b) = self.backend {
            scenario.backend = b;
        }
        Ok(scenario)
    }
}

/// Which command wrote a shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Scenario,
    Sweep,
    Matrix,
}

/// What a matrix shard was asked besides its adapter list (the shard file's `source`):
/// merge refuses shards that disagree on any of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatrixRun {
    pub catalogue: PathBuf,
    /// `--adapters` and `--faults` (empty: all).
    pub adapters: Vec<String>,
    pub faults: Vec<String>,
    /// `--worker` (as its rerun arguments), `--worker-kind` and `--algorithm`.
    pub worker: Option<String>,
    pub algorithm: Option<String>,
    /// `--worker-options` and the text of `--predicts FILE`.
    #[serde(default)]
    pub worker_options: String,
    /// `--worker-read-write`.
    #[serde(default)]
    pub worker_read_write: bool,
    #[serde(default)]
    pub predicts: Option<String>,
}

/// shard.json: what `merge` needs besides the shard's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardFile {
    pub format: u32,
    pub kind: Kind,
    pub shard: Shard,
    pub source: Source,
    pub first_seed: u64,
    /// Seeds of the whole run (per cell for a sweep).
    pub seeds: u64,
    /// A sweep's `--vary` arguments, as given.
    #[serde(default)]
    pub vary: Vec<String>,
    /// A matrix's options (its `source` is the adapter list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<MatrixRun>,
}

impl ShardFile {
    /// Whether two shards belong to the same run (all but the index agree).
    pub fn same_run(&self, other: &ShardFile) -> bool {
        let mut o = other.clone();
        o.shard.index = self.shard.index;
        *self == o
    }

    pub fn write(&self, dir: &Path) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(dir.join(FILE), text + "\n")
    }

    pub fn read(dir: &Path) -> Result<ShardFile, String> {
        let path = dir.join(FILE);
        let text = crate::limits::read_bounded(&path, crate::limits::MAX_JSON_BYTES).map_err(|e| {
            format!(
                "{}: {e} (is {} a shard's output folder?)",
                path.display(),
                dir.display()
            )
        })?;
        let file: ShardFile = serde_json::from_str(&text)
            .map_err(|e| format!("{}: not a shard description: {e}", path.display()))?;
        if file.format != FORMAT {
            return Err(format!(
                "{}: format {} (this lockstorm reads format {FORMAT})",
                path.display(),
                file.format
            ));
        }
        Ok(file)
    }
}

/// Every seed of a run: `count` consecutive seeds from `first`.
pub fn seed_list(first: u64, count: u64) -> Vec<u64> {
    (0..count).map(|i| first.wrapping_add(i)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_positions_round_robin_and_cover_them_once() {
        let items: Vec<u32> = (0..10).collect();
        let mut seen: Vec<u32> = (0..4)
            .flat_map(|i| Shard { index: i, count: 4 }.select(&items))
            .collect();
        assert_eq!(Shard { index: 1, count: 4 }.select(&items), [1, 5, 9]);
        seen.sort_unstable();
        assert_eq!(seen, items);
        assert_eq!(Shard::WHOLE.select(&items), items);
    }

    #[test]
    fn shard_arguments_are_checked() {
        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        assert!("4/4".parse::<Shard>().unwrap_err().contains("from 0 to 3"));
        assert!("1/0".parse::<Shard>().unwrap_err().contains("from 1"));
        assert!("x".parse::<Shard>().unwrap_err().contains("INDEX/COUNT"));
        assert!(Shard { index: 0, count: 5 }
            .check_fits(4, "seeds")
            .unwrap_err()
            .contains("at most 4"));
        assert!(Shard { index: 0, count: 4 }.check_fits(4, "seeds").is_ok());
    }
}
