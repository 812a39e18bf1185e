//! lockstorm finds out, with evidence, whether a Redis-based distributed lock is safe.
//!
//! The flow runs one way: a [`scenario`] file is run by a driver (the deterministic
//! simulator in [`sim`], or real redis-servers, local or in containers, in [`real`]),
//! which drives sans-IO [`client`]s running the lock [`algorithm`]s (or any lock library in a
//! [`worker`] process, on the real backend) on a [`workload`], applies
//! [`fault`]s (those aimed at a hold fired by the [`aimer`]) and keeps the guarded
//! [`resource`]; the run is recorded as a [`history`],
//! pushed event by event into a [`sink`] (memory, a file written as the run goes);
//! the [`checker`] judges the history against the reference lock model; [`report`]
//! renders the verdict and the evidence. [`run`] is the orchestration: it runs seeds and
//! scenarios through the steps and decides; `report` only renders what it is given. What
//! a run decided ([`outcome`]: each seed's result, the verdict, a sweep's cells) sits
//! below both, so `report` never imports from `run`.
//! [`command`] is the vocabulary between clients and nodes; [`lifecycle`] the phases of
//! a run that both drivers follow; [`children`] every process lockstorm starts,
//! [`shutdown`] how it stops on a signal, [`reaper`] what cleans up after a SIGKILL;
//! [`limits`] the largest numbers any input may set. From a finding back to the
//! smallest evidence: [`shrink`] reruns the simulator on smaller scenarios, and
//! [`explore`] searches every fault schedule of a small scope, driving the same
//! algorithm state machines and simulated nodes directly.
//!
//! The simulator is fully deterministic: every random choice comes from one `u64` seed
//! ([`rng`]), time is virtual, and the algorithms never read a clock or a socket, so a
//! seed reproduces a history byte for byte.

/// `eprintln!` that does not panic when stderr is closed or full (its reader went away:
/// a test harness that was stopped, `2>&-`, a full disk behind `2> file`): a warning or a
/// note is a copy for whoever watches, so losing it loses nothing of the run. A panic
/// there would end a run midway, or leave it waiting on the thread that printed.
#[macro_export]
macro_rules! errln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

pub mod aimer;
pub mod algorithm;
pub mod checker;
pub mod children;
pub mod client;
pub mod command;
pub mod explore;
pub mod fault;
pub mod history;
pub mod lifecycle;
pub mod limits;
pub mod outcome;
pub mod real;
pub mod reaper;
pub mod report;
pub mod resource;
pub mod rng;
pub mod run;
pub mod scenario;
pub mod shrink;
pub mod shutdown;
pub mod sim;
pub mod sink;
pub mod worker;
pub mod workload;
