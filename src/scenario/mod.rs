//! Scenario files: the TOML a user writes, parsed strictly and resolved into a [`Scenario`].
//!
//! This is the first step of the flow (scenario → run → history → checker → report).
//! Parsing follows ripgrep's split: serde reads the file into raw structs that reject
//! unknown keys ([`raw`]), then [`resolve`](raw::RawScenario::resolve) checks every value
//! against the others and produces the resolved configuration in microseconds. Errors
//! name the file, and for syntax errors the line, column and key.

mod aim;
pub mod axis;
mod backend;
mod cluster;
mod dist;
mod duration;
mod faults;
mod locate;
pub mod overrides;
mod raw;
mod sentinel;
mod size;
mod write;

pub use crate::rng::Dist;
pub use backend::{Backend, Targets};
pub use dist::RawDist;
pub use duration::{fmt_us, Dur, SignedDur};
pub use overrides::Override;
pub use size::{check_history_size, expected_history_bytes};

use crate::algorithm::AlgorithmConfig;
use crate::fault::{Nemesis, Persistence, PlannedFault, Replication};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// A fully resolved scenario; every time is in microseconds.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Scenario {
    pub name: String,
    /// The file it came from, to print a command that reruns a seed.
    pub path: Option<PathBuf>,
    /// The `--set key=value` overrides applied to the file, in order, as written.
    pub overrides: Vec<String>,
    pub seed: u64,
    /// Virtual length of the workload (fault) phase; the heal and liveness phase follows.
    pub duration_us: u64,
    pub expect: Expect,
    /// Whose expectation `expect` (and `expect_resource`) is: the scenario file's, or a
    /// library's prediction that replaced it for a matrix cell. Pages name the two apart.
    pub expect_by: ExpectBy,
    /// Whether the run must also pass the liveness checks (default true).
    pub expect_live: bool,
    /// The verdict expected about the guarded resource (stale writes accepted over a
    /// later holder's write, `checker::resource`), if the scenario judges it.
    pub expect_resource: Option<Expect>,
    /// Lowest acceptable share of successful acquisitions, if the scenario sets one.
    pub min_availability: Option<f64>,
    /// The share of seeds that must be exercised for a run with no unsafe seed to read
    /// safe (`crate::outcome::MIN_EXERCISED` unless the file says).
    pub min_exercised: f64,
    pub nodes: usize,
    /// Per node, how it keeps its keys across a crash (`none` unless the file says).
    pub persistence: Vec<Persistence>,
    /// Whether every node is a master with an asynchronous replica, and its lag.
    pub replication: Option<Replication>,
    /// `[sentinel]`: the node is a Redis Sentinel deployment (a master, replicas and
    /// sentinels that decide its failovers) instead of one server (real backend only).
    pub sentinel: Option<crate::real::deployment::Settings>,
    /// `[cluster]`: the node is a Redis Cluster (masters sharing the slots, each with
    /// replicas, that vote the failovers) instead of one server (real backend only).
    pub cluster: Option<crate::real::deployment::cluster::Settings>,
    pub algorithm: AlgorithmConfig,
    pub clients: Clients,
    pub network: Network,
    /// Scripted faults, numbered from 0 in file order.
    pub faults: Vec<PlannedFault>,
    pub nemesis: Nemesis,
    /// The simulator unless the file says `backend = "redis"` (or the CLI overrides it).
    pub backend: Backend,
    /// Which real servers the nodes are (real backend only).
    pub targets: Targets,
    /// Whether the simulator records what the nodes did to the lock keys (`node` lines
    /// of the history; `node_events = false` leaves them out, for speed).
    pub node_events: bool,
    /// With `heal_after_faults`: the workload ends this long after the last fault of
    /// the plan is over (`crate::lifecycle`), if that comes before the duration.
    pub heal_after_faults_us: Option<u64>,
    /// `[matrix] grid`: the settings a library matrix cell runs this template over (each
    /// a list of `--set` overrides); a plain run ignores them.
    pub grid: Vec<GridSetting>,
}

/// One setting of a catalogue cell's grid: a name for the reader and the overrides.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GridSetting {
    pub name: String,
    pub set: Vec<String>,
}

/// The verdict a scenario expects about mutual exclusion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Expect {
    Safe,
    Unsafe,
}

/// Whose expectation a run is measured against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectBy {
    /// The scenario file's `expect` (and `expect_resource`, `expect_live`).
    #[default]
    Scenario,
    /// A library's prediction for the fault, in a matrix cell (or `scenario --adapter`
    /// on a catalogue template): the template's `expect` is the built-in lock's.
    Prediction,
}

impl ExpectBy {
    /// Its id in summary.json.
    pub fn id(self) -> &'static str {
        match self {
            ExpectBy::Scenario => "scenario",
            ExpectBy::Prediction => "prediction",
        }
    }

    /// "as the scenario expects", "NOT as the library's prediction": a verdict measured
    /// against this expectation, in the one wording every page and the console use.
    pub fn verdict_words(self, met: bool) -> &'static str {
        match (self, met) {
            (ExpectBy::Scenario, true) => "as the scenario expects",
            (ExpectBy::Scenario, false) => "NOT as the scenario expects",
            (ExpectBy::Prediction, true) => "as the library's prediction",
            (ExpectBy::Prediction, false) => "NOT as the library's prediction",
        }
    }
}

/// The workload: how many clients, how many lock names, and their rhythm.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Clients {
    pub count: usize,
    /// Number of distinct lock names (`L0`, `L1`, ...); each operation picks one uniformly.
    pub locks: u32,
    pub think: Dist,
    pub hold: Dist,
    /// With a read-write algorithm: the share of acquisitions in read mode.
    pub read_share: f64,
    /// A writer waiting longer than this while readers keep the lock busy is a
    /// starvation finding.
    pub writer_wait_bound_us: Option<u64>,
    /// Whether holders write to the guarded resource (default: when fencing is on).
    /// Writes are synchronous, so they lengthen holds by two network delays each.
    pub resource_writes: bool,
    /// A worker process per client running a lock library (real backend only); `None`:
    /// the built-in algorithm.
    pub worker: Option<crate::worker::WorkerSpec>,
    /// When a worker client's hold starts (`worker_hold_from`): at its `ok`, as the
    /// library's caller holds it (the default), or at the send. Read only with a worker,
    /// whether the file names it or `--adapter`/`--worker` does.
    pub worker_hold_from: crate::worker::HoldFrom,
    /// The file's `worker_deadline`, for a worker the command line names
    /// (`--adapter`, `--worker`): [`Clients::attach_worker`] gives it to that worker.
    pub worker_deadline_us: Option<u64>,
    /// One more client, after the `count` others, that takes a lock of its own (no
    /// other client uses it) throughout the workload: what it fails to get while a
    /// majority is reachable is the lock's own failure, not contention's.
    pub probe: Option<Probe>,
}

/// The probe client's rhythm (`[clients] probe = true`, or `probe = { think, hold }`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Probe {
    pub think: Dist,
    pub hold: Dist,
}

impl Default for Probe {
    fn default() -> Self {
        let ms = |from: u64, to: u64| Dist::Uniform {
            min_us: from * 1_000,
            max_us: to * 1_000,
        };
        Probe {
            think: ms(10, 50),
            hold: ms(10, 50),
        }
    }
}

impl Clients {
    /// Makes `spec` the clients' worker, with the file's `worker_deadline` if it gives one.
    pub fn attach_worker(&mut self, mut spec: crate::worker::WorkerSpec) {
        if let Some(d) = self.worker_deadline_us {
            spec.deadline_us = d;
        }
        self.worker = Some(spec);
    }

    /// Every client of a run: the `count` workload clients and the probe.
    pub fn total(&self) -> usize {
        self.count + usize::from(self.probe.is_some())
    }

    /// The probe's client index (after the workload clients), if there is one.
    pub fn probe_client(&self) -> Option<usize> {
        self.probe.map(|_| self.count)
    }

    /// The probe's own lock: the one after the workload's lock names.
    pub fn probe_lock(&self) -> Option<crate::command::LockId> {
        self.probe.map(|_| crate::command::LockId(self.locks))
    }
}

/// The simulated network between clients and nodes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Network {
    /// One-way latency of a message.
    pub latency: Dist,
    /// Whether each client↔node link delivers in order, as one TCP connection does (the
    /// default). `false`: a message sent later may arrive first (simulator only).
    pub fifo: bool,
}

/// Why a scenario could not be loaded. Every variant names the file; a value that
/// parsed but does not fit also names its line (where the file sets it) and its key.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    #[error("{path}: cannot read: {error}")]
    Io { path: String, error: std::io::Error },
    #[error("{path}:{line}:{column}: {message}")]
    Syntax {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{}: {message}", at(path, *line))]
    Invalid {
        path: String,
        /// The line of the key the message is about; `None` when the file leaves it to
        /// its default (and no table around it is written either).
        line: Option<usize>,
        message: String,
    },
}

fn at(path: &str, line: Option<usize>) -> String {
    match line {
        Some(line) => format!("{path}:{line}"),
        None => path.to_string(),
    }
}

/// A value that parsed but does not fit the others: the key it is at, as a path
/// (`algorithm.quorum`, `faults[2].node`, `nemesis.partition.interval`), and why. The
/// message names the key too, so it reads on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Invalid {
    pub key: String,
    pub message: String,
}

pub(crate) fn invalid(key: impl Into<String>, message: impl Into<String>) -> Invalid {
    Invalid {
        key: key.into(),
        message: message.into(),
    }
}

impl Scenario {
    /// Reads and resolves a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
        Scenario::from_text(&read_text(path)?, path, &[])
    }

    /// Resolves the text of the scenario file at `path` (which is not read) with
    /// `overrides` applied ([`overrides`]); errors name the file and the overrides.
    pub fn from_text(text: &str, path: &Path, overrides: &[Override]) -> Result<Scenario, ScenarioError> {
        let mut shown = path.display().to_string();
        let edited;
        let text = if overrides.is_empty() {
            text
        } else {
            let list: Vec<String> = overrides.iter().map(|o| format!("--set {o}")).collect();
            shown = format!("{shown} ({})", list.join(" "));
            edited = overrides::apply(text, overrides).map_err(|message| ScenarioError::Invalid {
                path: path.display().to_string(),
                line: None,
                message,
            })?;
            &edited
        };
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "scenario".into());
        let mut scenario = Scenario::parse(text, &shown, &stem)?;
        scenario.path = Some(path.to_path_buf());
        scenario.overrides = overrides.iter().map(Override::to_string).collect();
        Ok(scenario)
    }

    /// Parses scenario text; `shown` names it in errors, `default_name` is used when the
    /// file sets no `name`.
    pub fn parse(text: &str, shown: &str, default_name: &str) -> Result<Scenario, ScenarioError> {
        let raw: raw::RawScenario = toml::from_str(text).map_err(|e| syntax_error(text, shown, &e))?;
        raw.resolve(default_name).map_err(|e| ScenarioError::Invalid {
            path: shown.to_string(),
            line: locate::line_of(text, &e.key),
            message: e.message,
        })
    }

    /// The mitigations of asynchronous replication in force on the scenario's deployment
    /// (the history's meta line says them); `None` without a deployment.
    pub fn mitigations(&self) -> Option<crate::history::Mitigations> {
        let (min_replicas_to_write, min_replicas_max_lag_s) = match (&self.sentinel, &self.cluster) {
            (Some(s), _) => (s.min_replicas_to_write, s.min_replicas_max_lag_s),
            (None, Some(c)) => (c.min_replicas_to_write, c.min_replicas_max_lag_s),
            (None, None) => return None,
        };
        Some(crate::history::Mitigations {
            min_replicas_to_write,
            min_replicas_max_lag_s,
            wait_replicas: match self.clients.worker {
                Some(_) => None,
                None => Some(self.algorithm.wait.map_or(0, |w| w.replicas)),
            },
        })
    }

    /// `[sentinel]` or `[cluster]`: what node 0 is made of, when it is a deployment (a
    /// cluster with the run's lock keys, which its masters share out around them).
    pub fn deployment(&self) -> Option<crate::real::deployment::Shape> {
        use crate::real::deployment::Shape;
        match (&self.sentinel, &self.cluster) {
            (Some(s), _) => Some(Shape::Sentinel(s.clone())),
            (None, Some(c)) => Some(Shape::Cluster(crate::real::deployment::cluster::Settings {
                // Every lock's key, so that they all live on redis0 (the faults' master).
                keys: (0..self.clients.locks.min(1_000))
                    .map(crate::command::LockId)
                    .chain(self.clients.probe_lock())
                    .map(|l| l.to_string())
                    .collect(),
                ..c.clone()
            })),
            (None, None) => None,
        }
    }

    /// The whole expectation in words, as run pages and indexes show it: "lock safe",
    /// "lock safe, resource unsafe", "lock unsafe, not live".
    pub fn expectation(&self) -> String {
        let word = |e: Expect| match e {
            Expect::Safe => "safe",
            Expect::Unsafe => "unsafe",
        };
        let mut said = format!("lock {}", word(self.expect));
        if let Some(r) = self.expect_resource {
            said.push_str(&format!(", resource {}", word(r)));
        }
        if !self.expect_live {
            said.push_str(", not live");
        }
        said
    }

    /// The faults the scenario injects, each kind once in file order, scripted then
    /// random, in words ("node crashes with power loss (AOF everysec)", "random
    /// partitions"): what a finding of the scenario was found under.
    pub fn fault_kinds(&self) -> Vec<String> {
        use crate::fault::{Fault, Persistence};
        let persistence = |node: usize| match self.persistence.get(node).copied().unwrap_or_default() {
            Persistence::None => "no persistence",
            Persistence::AofEverysec => "AOF everysec",
            Persistence::AofAlways => "AOF always",
        };
        let mut out: Vec<String> = Vec::new();
        let mut push = |s: String| {
            if !out.contains(&s) {
                out.push(s);
            }
        };
        let target = |node: Option<usize>| if node.is_some() { "node" } else { "client" };
        for f in &self.faults {
            push(match &f.fault {
                Fault::Partition { .. } => "partitions".into(),
                Fault::Crash { node, power_loss } => format!(
                    "node crashes{} ({})",
                    if *power_loss { " with power loss" } else { "" },
                    persistence(*node)
                ),
                Fault::Pause { node, .. } => format!("{} pauses", target(*node)),
                Fault::ClockJump { node, .. } => format!("{} clock jumps", target(*node)),
                Fault::ClockRate { node, .. } => format!("{} clock rate changes", target(*node)),
                Fault::Delay { .. } => "network delays".into(),
                Fault::Loss { .. } => "message loss".into(),
                Fault::Failover { .. } => "failovers".into(),
                Fault::ReplicationCut { .. } => "replication cuts".into(),
            });
        }
        let n = &self.nemesis;
        for (on, what) in [
            (n.partition.is_some(), "random partitions".to_string()),
            (
                n.crash.is_some(),
                format!(
                    "random crashes{} ({})",
                    if n.crash_power_loss {
                        " with power loss"
                    } else {
                        ""
                    },
                    persistence(0)
                ),
            ),
            (n.pause.is_some(), "random pauses".into()),
            (n.clock_jump.is_some(), "random clock jumps".into()),
            (n.clock_rate.is_some(), "random clock rates".into()),
            (n.delay.is_some(), "random delays".into()),
            (n.loss.is_some(), "random message loss".into()),
            (n.failover.is_some(), "random failovers".into()),
        ] {
            if on {
                push(what);
            }
        }
        out
    }

    /// The command that reruns this scenario with one seed (and the same worker, when
    /// the command line chose one: `--adapter NAME`, `--worker ARGV`).
    pub fn rerun_command(&self, seed: u64) -> String {
        let file = self.path.as_ref().map_or_else(
            || format!("scenarios/{}.toml", self.name),
            |p| p.display().to_string(),
        );
        let (features, backend) = match self.backend {
            // A `[sentinel]` file says backend = "redis": its simulated run says so.
            Backend::Sim if self.deployment().is_some() => ("", " --backend sim"),
            Backend::Sim => ("", ""),
            Backend::Redis => ("", " --backend redis"),
            Backend::Docker => (" --features docker", " --backend docker"),
        };
        let sets: String = self
            .overrides
            .iter()
            .map(|o| format!(" --set {}", crate::worker::shell_word(o)))
            .collect();
        let worker = self
            .clients
            .worker
            .as_ref()
            .map(crate::worker::WorkerSpec::rerun_args)
            .unwrap_or_default();
        format!("cargo run --release{features} -- scenario {file} --seed {seed}{backend}{worker}{sets}")
    }

    /// The command that runs `seeds` again, when they are consecutive and more than one
    /// (a run of `--seed S --seeds N`); `None` otherwise (one seed: [`Scenario::rerun_command`]
    /// says it; a shard's every n-th seed: its own command line with `--shard`).
    pub fn run_command(&self, seeds: &[u64]) -> Option<String> {
        let first = *seeds.iter().min()?;
        let consecutive = seeds.len() > 1
            && seeds.iter().collect::<std::collections::BTreeSet<_>>().len() == seeds.len()
            && seeds.iter().max() == Some(&(first + seeds.len() as u64 - 1));
        let rerun = self.rerun_command(first);
        let at = format!(" --seed {first}");
        consecutive.then(|| rerun.replacen(&at, &format!("{at} --seeds {}", seeds.len()), 1))
    }

    /// The command that shrinks this scenario's run with `seed` to a minimal scenario;
    /// else why there is none: worker clients ([`SHRINK_NO_WORKER`]) and a Sentinel
    /// deployment the simulator does not model ([`SHRINK_NO_SENTINEL`]) do not run on it.
    /// Shrink reruns the simulator whatever the run ran on: a run on real servers (or a
    /// file that names another backend) gets `--backend sim`, so the command says where
    /// it runs; the `--set` overrides are the run's.
    pub fn shrink_command(&self, seed: u64) -> Result<String, &'static str> {
        if self.clients.worker.is_some() {
            return Err(SHRINK_NO_WORKER);
        }
        if self.deployment_on_simulator().is_err() {
            return Err(SHRINK_NO_SENTINEL);
        }
        let file = self.path.as_ref().map_or_else(
            || format!("scenarios/{}.toml", self.name),
            |p| p.display().to_string(),
        );
        let backend = match self.backend {
            Backend::Sim if self.deployment().is_none() => "",
            _ => " --backend sim",
        };
        let sets: String = self
            .overrides
            .iter()
            .map(|o| format!(" --set {}", crate::worker::shell_word(o)))
            .collect();
        Ok(format!(
            "cargo run --release -- shrink {file} --seed {seed}{backend}{sets}"
        ))
    }
}

/// Why a run of worker clients has no shrink command.
pub const SHRINK_NO_WORKER: &str = "shrink reruns the simulator, which runs lockstorm's own algorithms, \
     not a worker's library: rerun the seed on real Redis instead";

/// Why a `[sentinel]` run has no shrink command.
pub const SHRINK_NO_SENTINEL: &str =
    "shrink reruns the simulator, whose model of a Redis Sentinel deployment or cluster \
     leaves out this scenario's split brain or min-replicas-to-write: rerun the seed on real Redis instead";

/// The text of a scenario file, with an error naming it.
pub fn read_text(path: &Path) -> Result<String, ScenarioError> {
    crate::limits::read_bounded(path, crate::limits::MAX_SCENARIO_BYTES).map_err(|error| ScenarioError::Io {
        path: path.display().to_string(),
        error,
    })
}

/// Turns a toml error into one line: position, the message, and the offending line's key.
fn syntax_error(text: &str, shown: &str, e: &toml::de::Error) -> ScenarioError {
    let (line, column, key) = match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let line_start = before.rfind('\n').map_or(0, |i| i + 1);
            let column = span.start - line_start + 1;
            let line_text = text[line_start..].lines().next().unwrap_or("");
            let key = line_text
                .split_once('=')
                .map(|(k, _)| k.trim().to_string())
                .filter(|k| !k.is_empty() && !k.starts_with('['));
            (line, column, key)
        }
        None => (1, 1, None),
    };
    let mut message = e.message().trim().replace('\n', " ");
    if let Some(key) = key {
        if !message.contains(&format!("`{key}`")) {
            message = format!("key `{key}`: {message}");
        }
    }
    ScenarioError::Syntax {
        path: shown.to_string(),
        line,
        column,
        message,
    }
}

#[cfg(test)]
mod tests;
