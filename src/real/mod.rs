//! The real backend: the same scenario, run against real redis-server processes.
//!
//! A driver like the simulator, but over sockets and real time. lockstorm starts one
//! redis-server per node ([`server`]: free loopback port, temporary directory, config
//! with the scenario's persistence, a guard that kills it on every exit path), or uses
//! servers someone else runs (`nodes = ["127.0.0.1:6379", ...]`). Each node sits behind
//! an in-process TCP proxy ([`proxy`]) with a link per client, through which partitions
//! and delays are applied; crashes, restarts and pauses are signals to the process and
//! clock faults go through libfaketime ([`faketime`]). The [`driver`] runs the same
//! sans-IO [`crate::client::Client`]s and algorithms the simulator runs, on tokio with
//! one multiplexed redis-crate connection per (client, node), and stamps the history
//! with one monotonic clock of the lockstorm process. The history it returns goes to the
//! same checker and report as a simulated one. [`wire`] maps commands to Redis calls;
//! [`bench`] measures lock latency against one `SET NX PX` round trip.

pub mod bench;
pub mod driver;
pub mod faketime;
pub mod proxy;
pub mod server;
pub mod wire;
mod workdir;

pub use driver::{run, RealOptions};

use std::path::PathBuf;

/// Why a real run could not be carried out (the environment, not the verdict).
#[derive(Debug, thiserror::Error)]
pub enum RealError {
    #[error("redis-server not found on PATH (install it: apt-get install -y redis-server, or set LOCKSTORM_REDIS_SERVER)")]
    NoRedisServer,
    #[error("libfaketime not found, needed for clock faults (install it: apt-get install -y faketime)")]
    NoFaketime,
    #[error("clock faults on real nodes need the faketime shim, which this build of lockstorm lacks: {0}")]
    Shim(String),
    #[error("redis-server for node {node} exited at start ({status}); see {}", log.display())]
    ServerExited {
        node: usize,
        status: String,
        log: PathBuf,
    },
    #[error("redis-server for node {node} did not answer PING within 10s; see {}", log.display())]
    ServerNotReady { node: usize, log: PathBuf },
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    #[error("node {node} ({addr}): {message}")]
    Node {
        node: usize,
        addr: String,
        message: String,
    },
    #[error("fault {id} ({kind}) cannot run on the real backend: {why}")]
    Unsupported { id: usize, kind: String, why: String },
}

impl RealError {
    /// The node log this error points the user to, if any: its directory must outlive
    /// the run.
    pub fn log(&self) -> Option<&std::path::Path> {
        match self {
            RealError::ServerExited { log, .. } | RealError::ServerNotReady { log, .. } => Some(log),
            _ => None,
        }
    }
}
