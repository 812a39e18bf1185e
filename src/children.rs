//! Everything a run starts that must not outlive lockstorm: child processes
//! (redis-servers, worker processes), temporary directories, and cleanup work other code
//! registers (removing containers, marking a report partial).
//!
//! [`spawn`] starts a child in its own process group (a Ctrl-C at the terminal reaches
//! lockstorm alone, which then stops its children in order) with a parent-death signal
//! (Linux `PR_SET_PDEATHSIG`): if lockstorm dies, even by SIGKILL, the kernel kills the
//! child. The pid is listed until the child is reaped, so [`kill_all`] can kill whatever
//! is left. [`cleanup_all`] is what an interrupt that cannot wait for the run, and a
//! panic, do ([`crate::shutdown`]): kill every child, run every [`register_cleanup`]
//! callback, remove every [`register_dir`] directory. A normal exit cleans up through
//! the guards' `Drop` instead.
//!
//! One caveat of the parent-death signal: it fires when the *thread* that spawned the
//! child ends, not only the process. Spawn children from a thread that lives as long as
//! they must (the main thread, or the thread driving the run), never from a short-lived
//! helper thread.
//!
//! A registered directory is also handed to the [`crate::reaper`], which removes it if
//! lockstorm is killed by SIGKILL, when nothing in this process runs any more.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Pids of every child this process started and has not reaped yet.
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Temporary directories of runs in progress, removed on an interrupt.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Cleanup work registered by other code, by id; each gets the reason lockstorm stops.
type Callback = Arc<dyn Fn(&str) + Send + Sync>;
static CLEANUPS: Mutex<Vec<(u64, Callback)>> = Mutex::new(Vec::new());
static NEXT_CLEANUP: AtomicU64 = AtomicU64::new(0);

/// Starts `cmd` as a child that dies with lockstorm, and lists it for [`kill_all`].
/// The caller reaps it and then calls [`forget`].
pub fn spawn(cmd: &mut Command) -> std::io::Result<Child> {
    let parent = std::process::id();
    // SAFETY: the closure runs in the forked child before exec and only makes
    // async-signal-safe system calls (setpgid, prctl, getppid); it touches no memory of
    // the parent's.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setpgid(0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // lockstorm died between fork and prctl: the signal will never come.
            if libc::getppid() as u32 != parent {
                return Err(std::io::Error::other(
                    "lockstorm exited while starting this process",
                ));
            }
            Ok(())
        });
    }
    let child = cmd.spawn()?;
    LIVE.lock().expect("pid list").push(child.id());
    Ok(child)
}

/// Takes a reaped child off the list.
pub fn forget(pid: u32) {
    if let Ok(mut v) = LIVE.lock() {
        v.retain(|&p| p != pid);
    }
}

/// Whether a child with this pid is still listed (started and not reaped).
pub fn is_listed(pid: u32) -> bool {
    LIVE.lock().is_ok_and(|v| v.contains(&pid))
}

/// Sends `sig` to a child's whole process group (what it started too).
pub fn signal(pid: u32, sig: libc::c_int) {
    // SAFETY: kill(2) on the process group of a child we spawned and have not reaped;
    // no memory is touched.
    unsafe {
        libc::kill(-(pid as libc::pid_t), sig);
    }
}

/// Kills and reaps every child still listed; for interrupts and panics.
pub fn kill_all() {
    let pids = LIVE.lock().map(|v| v.clone()).unwrap_or_default();
    for &pid in &pids {
        signal(pid, libc::SIGKILL);
    }
    for pid in pids {
        // SAFETY: waitpid on our own child; reaping here means no process is left when
        // lockstorm exits. A child already reaped by its guard gives ECHILD.
        unsafe {
            libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
        }
        forget(pid);
    }
}

/// Lists a run's temporary directory for removal on an interrupt (and by the reaper,
/// should lockstorm be killed).
pub fn register_dir(dir: &Path) {
    if let Ok(mut v) = DIRS.lock() {
        v.push(dir.to_path_buf());
    }
    crate::reaper::watch(crate::reaper::Task::Dir(dir.to_path_buf()));
}

/// Takes a directory off the interrupt list (the run ended, or `--keep` keeps it).
pub fn unregister_dir(dir: &Path) {
    if let Ok(mut v) = DIRS.lock() {
        v.retain(|d| d != dir);
    }
    crate::reaper::unwatch(crate::reaper::Task::Dir(dir.to_path_buf()));
}

/// Runs `cleanup(reason)` if lockstorm must stop without waiting for the run (a second
/// signal, a run that does not stop, a panic), until the guard is dropped. For work a
/// normal exit does through `Drop` anyway: removing a container, marking a report
/// partial. It runs on whichever thread stops lockstorm, after the children are killed.
pub fn register_cleanup(cleanup: impl Fn(&str) + Send + Sync + 'static) -> Cleanup {
    let id = NEXT_CLEANUP.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut v) = CLEANUPS.lock() {
        v.push((id, Arc::new(cleanup)));
    }
    Cleanup(id)
}

/// Keeps a [`register_cleanup`] callback registered.
#[must_use = "the cleanup is unregistered when this is dropped"]
pub struct Cleanup(u64);

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Ok(mut v) = CLEANUPS.lock() {
            v.retain(|(id, _)| *id != self.0);
        }
    }
}

/// Kills every child, runs every registered cleanup with `reason`, removes every
/// registered directory: what must happen before lockstorm exits without unwinding.
pub fn cleanup_all(reason: &str) {
    kill_all();
    let callbacks: Vec<Callback> = CLEANUPS
        .lock()
        .map(|v| v.iter().map(|(_, c)| c.clone()).collect())
        .unwrap_or_default();
    for cleanup in callbacks {
        cleanup(reason);
    }
    for dir in DIRS.lock().map(|v| v.clone()).unwrap_or_default() {
        let _ = std::fs::remove_dir_all(&dir);
        unregister_dir(&dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive(pid: u32) -> bool {
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
    }

    #[test]
    fn a_child_runs_in_its_own_group_and_is_listed_until_forgotten() {
        let mut child = spawn(Command::new("sleep").arg("30")).unwrap();
        let pid = child.id();
        assert!(is_listed(pid));
        // SAFETY: getpgid only reads the process table.
        let group = unsafe { libc::getpgid(pid as libc::pid_t) };
        assert_eq!(group, pid as libc::pid_t, "the child leads its own process group");
        signal(pid, libc::SIGKILL);
        child.wait().unwrap();
        forget(pid);
        assert!(!is_listed(pid));
        assert!(!alive(pid));
    }

    #[test]
    fn a_child_dies_when_the_thread_that_started_it_ends() {
        // The parent-death signal: the same mechanism kills children when lockstorm is
        // SIGKILLed.
        let pid = std::thread::spawn(|| spawn(Command::new("sleep").arg("30")).unwrap().id())
            .join()
            .unwrap();
        // SAFETY: waitpid on our own child; it returns once the kernel has killed it.
        let mut status = 0;
        let r = unsafe { libc::waitpid(pid as libc::pid_t, &mut status, 0) };
        forget(pid);
        assert_eq!(r, pid as libc::pid_t);
        assert!(libc::WIFSIGNALED(status), "status {status}");
        assert_eq!(libc::WTERMSIG(status), libc::SIGKILL);
    }
}
