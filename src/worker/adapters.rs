//! The adapter list (`adapters/adapters.toml`): which lock libraries lockstorm can run
//! as workers, how to start each, and on which node layout. `lockstorm matrix` runs
//! every listed adapter against the fault catalogue; `lockstorm scenario FILE --adapter
//! NAME` runs one scenario with an adapter's worker.

use super::{WorkerOrigin, WorkerSpec, DEFAULT_DEADLINE_US};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

/// The default place of the list, relative to the repository root.
pub const DEFAULT_LIST: &str = "adapters/adapters.toml";

/// Which node layout an adapter's library locks on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum AdapterKind {
    /// Several independent nodes (Redlock and kin).
    Multi,
    /// One Redis instance (with a replica for the failover).
    Single,
}

impl AdapterKind {
    /// The catalogue folder of this layout.
    pub fn folder(self) -> &'static str {
        match self {
            AdapterKind::Multi => "multi",
            AdapterKind::Single => "single",
        }
    }
}

/// One entry of the list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Adapter {
    pub name: String,
    pub command: Vec<String>,
    pub runtime: String,
    pub kind: AdapterKind,
    #[serde(default)]
    pub faketime: bool,
    /// Whether the library's lock has read and write modes (a read-write lock): only
    /// such a library runs the catalogue's read-write templates (`clients.read_share`
    /// above 0); for the others those cells are not applicable.
    #[serde(default)]
    pub read_write: bool,
    /// What the library promises, in a sentence or two (shown in the matrix).
    #[serde(default)]
    pub promise: String,
    /// The client settings the adapter chooses where it does not keep the library's
    /// defaults (timeouts, blocking), shown in the matrix beside every cell of the row.
    #[serde(default)]
    pub options: String,
    /// Where the list it came from is, when not [`DEFAULT_LIST`] (for rerun commands).
    #[serde(skip)]
    pub list: Option<String>,
    /// Not from a list: `--worker ARGV`.
    #[serde(skip)]
    pub adhoc: bool,
    /// The algorithm family whose predictions (`[predictions.FAMILY]`) the library
    /// inherits, e.g. "redlock" or "single".
    #[serde(default)]
    pub algorithm: Option<String>,
    /// What the library's algorithm predicts per fault id of the catalogue: its own
    /// entries, then (after [`load`]) its family's for the faults it does not name.
    #[serde(default)]
    pub predicts: BTreeMap<String, Prediction>,
    /// What the library's own documentation says it does under a fault, per fault id
    /// (quoted, with where): the matrix marks the cells whose finding contradicts it.
    #[serde(default)]
    pub documents: BTreeMap<String, Documented>,
}

/// What a library's documentation says of its lock under one fault: the finding it
/// claims (or warns of), in its own words, and where it says so.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Documented {
    pub says: Predicted,
    /// The documentation's words (a short quote).
    pub quote: String,
    /// Where: a file and line of the installed package, or a page and section.
    pub source: String,
}

/// What an algorithm predicts under one fault, and why, in a line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prediction {
    pub verdict: Predicted,
    pub why: String,
}

/// The finding a prediction expects of a cell's seeds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Predicted {
    /// Two clients hold the lock at once on some seed.
    Unsafe,
    /// No seed breaks mutual exclusion.
    Safe,
    /// Safe, and the probe's uncontended acquisitions succeed while a majority is
    /// reachable (fault tolerance).
    Tolerant,
    /// The lock stays safe but the guarded resource takes a stale write (no fencing).
    StaleWrite,
    /// The fault touches nothing the lock relies on (a wall-clock jump on a lock timed
    /// by the monotonic clock): the cell reads not exercised, and that is the finding.
    NotExercised,
}

impl Predicted {
    pub fn name(self) -> &'static str {
        match self {
            Predicted::Unsafe => "unsafe",
            Predicted::Safe => "safe",
            Predicted::Tolerant => "safe and fault-tolerant",
            Predicted::StaleWrite => "a stale write",
            Predicted::NotExercised => "not exercised (the fault touches nothing it relies on)",
        }
    }
}

impl Adapter {
    /// How a scenario's clients run this adapter.
    pub fn spec(&self) -> WorkerSpec {
        WorkerSpec {
            argv: self.command.clone(),
            faketime: self.faketime,
            deadline_us: DEFAULT_DEADLINE_US,
            origin: if self.adhoc {
                WorkerOrigin::Argv
            } else {
                WorkerOrigin::Adapter {
                    name: self.name.clone(),
                    list: self.list.clone(),
                }
            },
        }
    }

    /// The adapter `--worker ARGV --worker-kind KIND` makes: named after the last word of
    /// its command (`tests/workers/naive_setnx.py` is `naive_setnx`), with no predictions
    /// until [`Adapter::with_family`] gives it a family's.
    pub fn from_worker(worker: &WorkerSpec, kind: AdapterKind) -> Adapter {
        let last = worker.argv.last().map(String::as_str).unwrap_or("worker");
        let name = Path::new(last)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "worker".into());
        Adapter {
            name,
            command: worker.argv.clone(),
            runtime: "worker".into(),
            kind,
            faketime: worker.faketime,
            read_write: false,
            promise: String::new(),
            options: String::new(),
            list: None,
            adhoc: true,
            algorithm: None,
            predicts: BTreeMap::new(),
            documents: BTreeMap::new(),
        }
    }

    /// This adapter as a member of the algorithm `family`, whose predictions it takes.
    pub fn with_family(self, family: &str, predicts: BTreeMap<String, Prediction>) -> Adapter {
        Adapter {
            algorithm: Some(family.to_string()),
            predicts,
            ..self
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct List {
    #[serde(default)]
    adapter: Vec<Adapter>,
    /// Per algorithm family, per fault id: what the family predicts.
    #[serde(default)]
    predictions: BTreeMap<String, BTreeMap<String, Prediction>>,
}

#[derive(Debug, thiserror::Error)]
pub enum AdapterError {
    #[error("{path}: cannot read: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("no adapter named {name:?} in {path} (it has: {known})")]
    Unknown {
        name: String,
        path: String,
        known: String,
    },
}

/// Reads and parses the list at `path`.
fn read(path: &Path) -> Result<List, AdapterError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| AdapterError::Io {
        path: shown.clone(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| AdapterError::Invalid {
        path: shown,
        message: e.message().trim().to_string(),
    })
}

/// What the algorithm family `family` predicts per fault id (`[predictions.FAMILY]` of the
/// list at `path`): for a worker that is not in the list (`--worker ARGV --algorithm
/// FAMILY`).
pub fn family(path: &Path, family: &str) -> Result<BTreeMap<String, Prediction>, AdapterError> {
    let mut list = read(path)?;
    list.predictions
        .remove(family)
        .ok_or_else(|| AdapterError::Invalid {
            path: path.display().to_string(),
            message: format!(
                "no algorithm family {family:?} (no [predictions.{family}]; it has: {})",
                list.predictions.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        })
}

/// A worker's own claims (`--predicts FILE`): its predictions and what its library's
/// documentation says, as an adapter's `predicts` and `documents` in the list.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Own {
    #[serde(default)]
    pub predicts: BTreeMap<String, Prediction>,
    #[serde(default)]
    pub documents: BTreeMap<String, Documented>,
}

impl Own {
    /// The fault ids the file names, for the caller to check against the catalogue.
    pub fn faults(&self) -> impl Iterator<Item = &String> {
        self.predicts.keys().chain(self.documents.keys())
    }
}

/// A worker's own predictions (`--predicts FILE`): a TOML file with a `[predicts]` table,
/// per fault id `{ verdict, why }`, and a `[documents]` table, per fault id `{ says,
/// quote, source }`, as an adapter's `predicts` and `documents` in the list.
pub fn predicts_file(path: &Path) -> Result<Own, AdapterError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| AdapterError::Io {
        path: shown.clone(),
        source,
    })?;
    toml::from_str(&text).map_err(|e| AdapterError::Invalid {
        path: shown,
        message: e.message().trim().to_string(),
    })
}

/// Reads the adapter list.
pub fn load(path: &Path) -> Result<Vec<Adapter>, AdapterError> {
    let shown = path.display().to_string();
    let invalid = |message: String| AdapterError::Invalid {
        path: shown.clone(),
        message,
    };
    let mut list = read(path)?;
    if path != Path::new(DEFAULT_LIST) {
        for a in &mut list.adapter {
            a.list = Some(shown.clone());
        }
    }
    for a in &mut list.adapter {
        let Some(family) = &a.algorithm else { continue };
        let Some(predicts) = list.predictions.get(family) else {
            return Err(invalid(format!(
                "adapter {:?}: algorithm = {family:?} has no [predictions.{family}] (it has: {})",
                a.name,
                list.predictions.keys().cloned().collect::<Vec<_>>().join(", ")
            )));
        };
        for (fault, p) in predicts {
            a.predicts.entry(fault.clone()).or_insert_with(|| p.clone());
        }
    }
    for (i, a) in list.adapter.iter().enumerate() {
        if a.name.is_empty() || a.command.is_empty() || a.command[0].is_empty() {
            return Err(invalid(format!("adapter[{i}] needs a name and a command")));
        }
        if list.adapter[..i].iter().any(|b| b.name == a.name) {
            return Err(invalid(format!("adapter {:?} is listed twice", a.name)));
        }
        // The name is the adapter's folder in the matrix: one folder name, never a path
        // that leads out of it (`../../x`).
        if let Err(why) = crate::limits::check_name(&a.name) {
            return Err(invalid(format!("adapter[{i}]: {why}")));
        }
    }
    Ok(list.adapter)
}

/// The adapters named in `names` (all when empty), in list order.
pub fn select(all: Vec<Adapter>, names: &[String], path: &Path) -> Result<Vec<Adapter>, AdapterError> {
    for n in names {
        if !all.iter().any(|a| &a.name == n) {
            return Err(AdapterError::Unknown {
                name: n.clone(),
                path: path.display().to_string(),
                known: all.iter().map(|a| a.name.as_str()).collect::<Vec<_>>().join(", "),
            });
        }
    }
    Ok(all
        .into_iter()
        .filter(|a| names.is_empty() || names.contains(&a.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_list_loads_and_names_are_checked() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_LIST);
        let all = load(&path).unwrap();
        assert!(all.iter().any(|a| a.command == ["lockstorm", "worker"]));
        let one = select(all.clone(), &["lockstorm-single".into()], &path).unwrap();
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].kind, AdapterKind::Single);
        let err = select(all, &["nope".into()], &path).unwrap_err().to_string();
        assert!(err.contains("no adapter named \"nope\""), "{err}");
    }

    #[test]
    fn every_prediction_names_a_fault_of_its_layout_and_gives_a_reason() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        // The fault catalogue and the Sentinel one (`matrix --catalogue`).
        let template = |a: &Adapter, fault: &str| {
            ["scenarios/matrix", "scenarios/matrix-sentinel"]
                .iter()
                .map(|c| root.join(c).join(a.kind.folder()).join(format!("{fault}.toml")))
                .find(|t| t.is_file())
        };
        for a in load(&root.join(DEFAULT_LIST)).unwrap() {
            for (fault, p) in &a.predicts {
                assert!(template(&a, fault).is_some(), "{}: no template {fault}", a.name);
                assert!(!p.why.trim().is_empty(), "{} under {fault}", a.name);
            }
            for (fault, d) in &a.documents {
                assert!(template(&a, fault).is_some(), "{}: documents {fault}", a.name);
                assert!(
                    !d.quote.trim().is_empty() && !d.source.trim().is_empty(),
                    "{} under {fault}",
                    a.name
                );
            }
        }
    }

    #[test]
    fn an_adapter_inherits_its_family_and_overrides_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.toml");
        std::fs::write(
            &path,
            r#"
            [[adapter]]
            name = "x"
            command = ["x"]
            runtime = "rust"
            kind = "multi"
            algorithm = "redlock"
            predicts = { "02-b" = { verdict = "unsafe", why = "its own" } }
            [predictions.redlock]
            "01-a" = { verdict = "safe", why = "the family's" }
            "02-b" = { verdict = "tolerant", why = "the family's" }
            "#,
        )
        .unwrap();
        let a = &load(&path).unwrap()[0];
        assert_eq!(a.predicts["01-a"].verdict, Predicted::Safe);
        assert_eq!(a.predicts["02-b"].verdict, Predicted::Unsafe);
        std::fs::write(
            &path,
            "[[adapter]]\nname = \"x\"\ncommand = [\"x\"]\nruntime = \"r\"\nkind = \"multi\"\nalgorithm = \"nope\"\n",
        )
        .unwrap();
        let err = load(&path).unwrap_err().to_string();
        assert!(
            err.contains("algorithm = \"nope\" has no [predictions.nope]"),
            "{err}"
        );
    }

    #[test]
    fn a_family_is_looked_up_by_name_and_an_unknown_one_names_those_there_are() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_LIST);
        let single = family(&path, "single").unwrap();
        assert_eq!(single["11-replica-failover"].verdict, Predicted::Unsafe);
        let err = family(&path, "zookeeper").unwrap_err().to_string();
        assert!(
            err.contains("no algorithm family \"zookeeper\"") && err.contains("it has: redlock, single"),
            "{err}"
        );
    }
}
