//! Workers: any lock library as a lockstorm client.
//!
//! A client is either the built-in sans-IO algorithm or a worker process that speaks
//! the JSON-lines protocol of [`protocol`] on its stdin and stdout (the public page is
//! docs/worker-protocol.md). lockstorm keeps the workload, the nodes, the proxies, the
//! faults, the clocks and the history; the worker only takes and releases locks with
//! its library. In the flow (scenario → run → history → checker → report) a worker
//! sits inside the real driver's run: [`lock`] is the client's sans-IO side (requests
//! out, answers in, validity counted from the send), [`process`] starts, feeds, pauses
//! and stops the processes, and `real/driver/workers.rs` ties them to the run. The
//! worker is faulted as a process: SIGSTOP for a client pause, libfaketime for its
//! clock, its own proxies for partitions and delays. lockstorm stamps every event with
//! its own clock.
//!
//! A scenario names its worker in `[clients]`: `worker = ["python3",
//! "adapters/python/pottery_redlock.py"]`, an argv run from the directory lockstorm is
//! started in; `["lockstorm", "worker"]` is this lockstorm binary's own algorithms
//! behind the protocol (`real/serve.rs`).

pub mod adapters;
pub mod lock;
pub mod process;
pub mod protocol;

pub use lock::{AnswerKind, Answered, WorkerLock};
pub use protocol::Request;

use serde::Serialize;

/// How long a request may go unanswered unless the scenario says (`worker_deadline`).
pub const DEFAULT_DEADLINE_US: u64 = 30_000_000;

/// How a scenario's clients run as worker processes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WorkerSpec {
    /// The command and its arguments, run from lockstorm's working directory.
    pub argv: Vec<String>,
    /// Whether libfaketime reaches the clock the worker's library reads (then client
    /// clock faults move it; else they are refused).
    pub faketime: bool,
    /// How long a request may go unanswered (paused time not counted) before the run
    /// stops with an error.
    pub deadline_us: u64,
}

impl WorkerSpec {
    /// The command as a person would type it, for messages.
    pub fn command_line(&self) -> String {
        self.argv.join(" ")
    }
}
