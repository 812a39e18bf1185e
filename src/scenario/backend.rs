//! Where a scenario runs: the simulator, or real Redis (and how those nodes are set up).
//!
//! `backend = "redis"` in the file (or `--backend redis` on the command line) sends the
//! same scenario to real redis-server processes (configured with the scenario's
//! `persistence`), and `nodes = ["127.0.0.1:6379", ...]` points at servers someone else
//! runs. `backend = "docker"` runs the same servers as containers (lockstorm built with
//! the `docker` feature).

use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// The driver that runs a scenario.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// The deterministic simulator (virtual time, simulated nodes).
    #[default]
    Sim,
    /// Real redis-server processes, real sockets, real time.
    Redis,
    /// Real redis-servers in containers (testcontainers; the `docker` feature).
    Docker,
}

/// Which real servers the nodes are.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub enum Targets {
    /// lockstorm starts one redis-server per node.
    #[default]
    Local,
    /// Servers someone else runs, in node order; faults needing the process are refused.
    External(Vec<SocketAddr>),
}
