//! How a lockstorm process stops: on SIGINT, SIGTERM or SIGHUP, on a panic, and on
//! SIGKILL.
//!
//! The first signal asks the run to stop ([`requested`]): the simulator looks between
//! batches of events, the real driver is woken through [`on_stop`]. The run then ends
//! like any other (its nodes killed and reaped, its temporary directories removed unless
//! `--keep`), the report is written as a partial run, and lockstorm exits with 128 plus
//! the signal's number: 130, 143, 129. If the run has not stopped [`GRACE`] after the
//! signal ([`run_stopped`] was not called), or a second signal comes, lockstorm stops
//! the hard way: [`crate::children::cleanup_all`] kills every child, runs the registered
//! cleanups (the report folder marks itself partial) and removes the temporary
//! directories, then the process exits with the same status. Writing the report after
//! a signal is bounded too: [`GRACE`] plus [`REPORT_GRACE`] after the signal, lockstorm
//! stops the same way. A panic runs the same cleanup before it unwinds.
//!
//! The exit status and summary.json agree: a signal that comes after the run ended but
//! before the summary is written stops the report (the placeholder summary, partial,
//! stays); once the run's command calls [`report_done`], a signal no longer changes
//! anything, and lockstorm exits with the verdict's status.
//!
//! SIGKILL cannot be caught: children die by their parent-death signal
//! ([`crate::children`]) and the [`crate::reaper`] removes what is left on disk.
//!
//! Only the `lockstorm` binary calls [`install`]; a program that uses the library keeps
//! its own signal handling, and the guards' `Drop` still cleans up on every path.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a run has to stop after the first signal before lockstorm kills it.
pub const GRACE: Duration = Duration::from_secs(5);

/// How long writing the report may take after a signal, once the run has stopped.
pub const REPORT_GRACE: Duration = Duration::from_secs(10);

/// The first signal received, 0 before any, [`DONE`] once the report is written.
static REQUESTED: AtomicI32 = AtomicI32::new(0);
/// In [`REQUESTED`]: the report was written before any signal came.
const DONE: i32 = -1;
/// The run returned after a stop was requested: only a second signal forces now.
static STOPPED: AtomicBool = AtomicBool::new(false);
/// Callbacks to wake the run when a stop is requested, by id.
type Listener = Arc<dyn Fn() + Send + Sync>;
static LISTENERS: Mutex<Vec<(u64, Listener)>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A signal that stops lockstorm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signal(pub i32);

impl Signal {
    pub fn name(self) -> String {
        match self.0 {
            SIGINT => "SIGINT".into(),
            SIGTERM => "SIGTERM".into(),
            SIGHUP => "SIGHUP".into(),
            n => format!("signal {n}"),
        }
    }

    /// The exit status of a process the signal stopped, as shells report it.
    pub fn exit_code(self) -> u8 {
        (128 + self.0).clamp(0, 255) as u8
    }
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

/// The signal that asked the run to stop, if one has.
pub fn requested() -> Option<Signal> {
    match REQUESTED.load(Ordering::SeqCst) {
        0 | DONE => None,
        n => Some(Signal(n)),
    }
}

/// The report (summary.json last) is written: from now on a signal changes neither it
/// nor the exit status. Returns the signal that came first, if one did; the caller then
/// marks the summary partial, since lockstorm will exit with that signal's status.
pub fn report_done() -> Option<Signal> {
    match REQUESTED.compare_exchange(0, DONE, Ordering::SeqCst, Ordering::SeqCst) {
        Ok(_) => None,
        Err(n) => (n != DONE).then_some(Signal(n)),
    }
}

/// Calls `wake` when a stop is requested (at once if one already was), until the
/// returned guard is dropped. `wake` runs on the signal thread: it should only notify.
pub fn on_stop(wake: impl Fn() + Send + Sync + 'static) -> OnStop {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let wake: Listener = Arc::new(wake);
    if let Ok(mut v) = LISTENERS.lock() {
        v.push((id, wake.clone()));
    }
    if requested().is_some() {
        wake();
    }
    OnStop(id)
}

/// Keeps an [`on_stop`] callback registered.
#[must_use = "the callback is unregistered when this is dropped"]
pub struct OnStop(u64);

impl Drop for OnStop {
    fn drop(&mut self) {
        if let Ok(mut v) = LISTENERS.lock() {
            v.retain(|(id, _)| *id != self.0);
        }
    }
}

/// The run has returned: what is left is writing the report, which only a second signal
/// interrupts.
pub fn run_stopped() {
    STOPPED.store(true, Ordering::SeqCst);
}

/// Installs the signal thread and the panic hook (once per process).
pub fn install() -> std::io::Result<()> {
    static ONCE: std::sync::Once = std::sync::Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| result = install_once());
    result
}

fn install_once() -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new()
        .name("lockstorm-signals".into())
        .spawn(move || {
            for n in signals.forever() {
                let sig = Signal(n);
                match REQUESTED.compare_exchange(0, n, Ordering::SeqCst, Ordering::SeqCst) {
                    Ok(_) => {}
                    Err(DONE) => {
                        crate::errln!("lockstorm: {sig}: the report is already written");
                        continue;
                    }
                    Err(_) => force(sig, "a second signal came"),
                }
                crate::errln!("lockstorm: {sig}: stopping the run (send it again to stop at once)");
                let listeners: Vec<Listener> = LISTENERS
                    .lock()
                    .map(|v| v.iter().map(|(_, l)| l.clone()).collect())
                    .unwrap_or_default();
                for wake in listeners {
                    wake();
                }
                let _ = std::thread::Builder::new()
                    .name("lockstorm-grace".into())
                    .spawn(move || {
                        std::thread::sleep(GRACE);
                        if !STOPPED.load(Ordering::SeqCst) {
                            force(sig, &format!("the run did not stop within {}s", GRACE.as_secs()));
                        }
                        // The run stopped; the report gets a bounded time too. Were it
                        // done, lockstorm would have exited.
                        std::thread::sleep(REPORT_GRACE);
                        force(
                            sig,
                            &format!(
                                "the report was not written within {}s of the run's end",
                                REPORT_GRACE.as_secs()
                            ),
                        );
                    });
            }
        })?;
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        crate::children::cleanup_all(&format!("lockstorm crashed: {info}"));
        previous(info);
        // A panic on any thread is lockstorm's crash, and the cleanup above has killed
        // what the run started and kept what it recorded. Left to unwind, a panic off
        // the main thread would leave the main thread waiting on it for ever (seen: a
        // warning printed to a stderr whose reader had died, mid-run).
        crate::reaper::stop();
        std::process::exit(101);
    }));
    Ok(())
}

/// Stops the hard way: every child killed, every cleanup run, then exit.
fn force(sig: Signal, why: &str) -> ! {
    crate::errln!("lockstorm: {sig}: {why}; killing what the run started");
    crate::children::cleanup_all(&format!("stopped by {sig} ({why})"));
    crate::reaper::stop();
    std::process::exit(sig.exit_code().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_exit_as_shells_report_them() {
        assert_eq!(Signal(SIGINT).exit_code(), 130);
        assert_eq!(Signal(SIGTERM).exit_code(), 143);
        assert_eq!(Signal(SIGHUP).exit_code(), 129);
        assert_eq!(Signal(SIGTERM).to_string(), "SIGTERM");
    }
}
