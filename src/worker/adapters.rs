//! The adapter list (`adapters/adapters.toml`): which lock libraries lockstorm can run
//! as workers, how to start each, and on which node layout. `lockstorm matrix` runs
//! every listed adapter against the fault catalogue; `lockstorm scenario FILE --adapter
//! NAME` runs one scenario with an adapter's worker.

use super::{WorkerOrigin, WorkerSpec, DEFAULT_DEADLINE_US};
use serde::{Deserialize, Serialize};
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
    /// its command (`tests/workers/naive_setnx.py` is `naive_setnx`).
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
            promise: String::new(),
            options: String::new(),
            list: None,
            adhoc: true,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct List {
    #[serde(default)]
    adapter: Vec<Adapter>,
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

/// Reads the adapter list.
pub fn load(path: &Path) -> Result<Vec<Adapter>, AdapterError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| AdapterError::Io {
        path: shown.clone(),
        source,
    })?;
    let invalid = |message: String| AdapterError::Invalid {
        path: shown.clone(),
        message,
    };
    let mut list: List = toml::from_str(&text).map_err(|e| invalid(e.message().trim().to_string()))?;
    if path != Path::new(DEFAULT_LIST) {
        for a in &mut list.adapter {
            a.list = Some(shown.clone());
        }
    }
    for (i, a) in list.adapter.iter().enumerate() {
        if a.name.is_empty() || a.command.is_empty() || a.command[0].is_empty() {
            return Err(invalid(format!("adapter[{i}] needs a name and a command")));
        }
        if list.adapter[..i].iter().any(|b| b.name == a.name) {
            return Err(invalid(format!("adapter {:?} is listed twice", a.name)));
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
}
