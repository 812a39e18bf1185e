//! The real backend: the same scenario, run against real redis-servers.
//!
//! A driver like the simulator, but over sockets and real time. lockstorm starts the
//! nodes ([`runtime`]) on one node runtime ([`process`]): local redis-server processes
//! ([`server`]: free loopback port, temporary directory, config with the scenario's
//! persistence, a guard that kills it on every exit path) or, with the `docker` feature,
//! containers (`container`); or it uses servers someone else runs (`nodes =
//! ["127.0.0.1:6379", ...]`). A [`node`] is a master and, with `[replication]`, a
//! replica that follows it through a lagging replication link ([`lagline`]) and that a
//! failover promotes. Each node sits behind an in-process TCP proxy ([`proxy`]) with a
//! link per client, through which partitions and delays are applied; crashes, restarts
//! and pauses go to the node's processes and clock faults through libfaketime
//! ([`faketime`]). The [`driver`] runs the same
//! sans-IO [`crate::client::Client`]s and algorithms the simulator runs, on tokio with
//! one multiplexed redis-crate connection per (client, node), and stamps the history
//! with one monotonic clock of the lockstorm process. The history it returns goes to the
//! same checker and report as a simulated one. Beside its clients, lockstorm watches each
//! node's keys itself ([`keyspace`]: key events, snapshots around a kill) for the
//! history's expiry and loss lines. [`wire`] maps commands to Redis calls;
//! [`bench`] measures lock latency against one `SET NX PX` round trip. [`deployment`] is a
//! real deployment of several processes as node 0: Redis Sentinel (master, replicas,
//! sentinels that decide the failover) or Redis Cluster (masters and replicas that vote),
//! docs/sentinel.md and docs/cluster.md.

pub mod bench;
#[cfg(feature = "docker")]
pub mod container;
pub mod deployment;
pub mod driver;
pub mod faketime;
pub mod keyspace;
pub mod lagline;
pub mod node;
pub mod process;
pub mod proxy;
pub mod runtime;
pub mod serve;
pub mod server;
pub mod wire;
mod workdir;

pub use driver::{run, RealOptions};

use std::path::PathBuf;

/// The last line a process wrote to its log, shown as `: it said "..."` (nothing if it
/// wrote none): what an error can quote when the log itself is not kept.
#[derive(Debug, Clone, Default)]
pub struct LastWords(pub Option<String>);

impl LastWords {
    /// The last non-empty line of the file at `log`, cut to 300 bytes.
    pub fn of(log: &std::path::Path) -> LastWords {
        let text = crate::limits::read_bounded(log, 1 << 20).unwrap_or_default();
        let line = text
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| {
                let mut end = l.len().min(300);
                while !l.is_char_boundary(end) {
                    end -= 1;
                }
                l[..end].to_string()
            });
        LastWords(line)
    }
}

impl std::fmt::Display for LastWords {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(line) => write!(f, ": it said {line:?}"),
            None => Ok(()),
        }
    }
}

/// Why a real run could not be carried out (the environment, not the verdict).
#[derive(Debug, thiserror::Error)]
pub enum RealError {
    #[error("redis-server not found on PATH (install it: apt-get install -y redis-server, or set LOCKSTORM_REDIS_SERVER)")]
    NoRedisServer,
    #[error("libfaketime not found, needed for clock faults (install it: apt-get install -y faketime)")]
    NoFaketime,
    #[error("clock faults on real nodes need the faketime shim, which this build of lockstorm lacks: {0}")]
    Shim(String),
    #[error("redis-server for node {node} exited at start ({status}){said}; see {}", log.display())]
    ServerExited {
        node: usize,
        status: String,
        log: PathBuf,
        /// The log's last line, read when it exited: the log itself goes with the run.
        said: LastWords,
    },
    #[error("redis-server for node {node} did not answer PING within 10s (last try: {last}); see {}", log.display())]
    ServerNotReady { node: usize, log: PathBuf, last: String },
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// A process of a Sentinel deployment ([`sentinel`]) exited while it was starting.
    #[error("{member} exited at start ({status}){said}; see {}", log.display())]
    MemberExited {
        member: String,
        status: String,
        log: PathBuf,
        said: LastWords,
    },
    /// A process of a Sentinel deployment did not answer PING in time.
    #[error("{member} did not answer PING within 10s (last try: {last}); see {}", log.display())]
    MemberNotReady {
        member: String,
        log: PathBuf,
        last: String,
    },
    /// Sentinel settings that cannot work, or a deployment that did not come together.
    #[error("sentinel: {0}")]
    Sentinel(String),
    /// Cluster settings that cannot work, or a cluster that did not come together.
    #[error("cluster: {0}")]
    Cluster(String),
    #[error("node {node} ({addr}): {message}")]
    Node {
        node: usize,
        addr: String,
        message: String,
    },
    #[error("{0}: simulator-only")]
    SimOnly(String),
    #[error("fault {id} ({kind}) cannot run on the real backend: {why}")]
    Unsupported { id: usize, kind: String, why: String },
    #[error("containers need lockstorm built with the `docker` feature: cargo build --features docker (or run with backend = \"redis\")")]
    NoDockerFeature,
    #[error("{0}")]
    Docker(String),
    /// A worker could not be started or greeted.
    #[error("{0}")]
    Worker(String),
    /// A worker broke the protocol during the run; what was recorded is kept.
    #[error("{}", .0.message)]
    WorkerFailed(Box<WorkerFailure>),
    #[error("clients.worker needs the real backend: the simulator runs only the built-in algorithms (use --backend redis)")]
    WorkerOnSimulator,
}

/// A run stopped by a worker's breach of the protocol, with the history recorded until
/// then (the breaching client's open operation closed as an unknown outcome).
pub struct WorkerFailure {
    /// Names the client, the worker command and the offending line.
    pub message: String,
    pub output: crate::lifecycle::RunOutput,
}

impl std::fmt::Debug for WorkerFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "WorkerFailure({:?}, {} events)",
            self.message,
            self.output.history.len()
        )
    }
}

/// `lockstorm clean`: removes the containers, volumes and networks that lockstorm runs
/// left in Docker when they were killed by SIGKILL (or, with `all`, everything lockstorm
/// labelled); says what it removed.
pub fn clean(all: bool) -> Result<String, RealError> {
    #[cfg(feature = "docker")]
    {
        use container::clean::{remove_blocking, Which};
        let r = remove_blocking(if all { Which::All } else { Which::Orphaned })?;
        Ok(format!(
            "removed {} container(s), {} volume(s), {} network(s)",
            r.containers, r.volumes, r.networks
        ))
    }
    #[cfg(not(feature = "docker"))]
    {
        let _ = all;
        Err(RealError::NoDockerFeature)
    }
}

impl RealError {
    /// The node log this error points the user to, if any: its directory must outlive
    /// the run.
    pub fn log(&self) -> Option<&std::path::Path> {
        match self {
            RealError::ServerExited { log, .. }
            | RealError::ServerNotReady { log, .. }
            | RealError::MemberExited { log, .. }
            | RealError::MemberNotReady { log, .. } => Some(log),
            _ => None,
        }
    }
}
