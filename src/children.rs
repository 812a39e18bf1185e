//! Every process lockstorm starts (redis-servers, worker processes), started so that it
//! cannot outlive lockstorm.
//!
//! [`spawn`] starts a child in its own process group (a Ctrl-C at the terminal reaches
//! lockstorm alone, which then stops its children in order) with a parent-death signal
//! (Linux `PR_SET_PDEATHSIG`): if lockstorm dies, even by SIGKILL, the kernel kills the
//! child. The pid is listed until the child is reaped, so [`kill_all`] (the signal
//! handler and the panic hook, see [`install_cleanup`]) can kill whatever is left.
//!
//! One caveat of the parent-death signal: it fires when the *thread* that spawned the
//! child ends, not only the process. Spawn children from a thread that lives as long as
//! they must (the main thread, or the thread driving the run), never from a short-lived
//! helper thread.
//!
//! Temporary directories of runs in progress are listed here too, so an interrupted run
//! removes them (a normal exit or an unwinding panic removes them through their guards).
//! What is not a process or a directory (a run's containers and volumes) registers a
//! cleanup with [`on_kill_all`], which [`kill_all`] runs after killing the children.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Mutex;

/// Pids of every child this process started and has not reaped yet.
static LIVE: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Temporary directories of runs in progress, removed on an interrupt.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A cleanup [`kill_all`] runs, with the id that takes it off the list.
type Cleanup = (u64, std::sync::Arc<dyn Fn() + Send + Sync>);

/// Cleanups of things that are not child processes, run by [`kill_all`].
static CLEANUPS: Mutex<Vec<Cleanup>> = Mutex::new(Vec::new());

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
    let cleanups: Vec<_> = CLEANUPS
        .lock()
        .map(|v| v.iter().map(|(_, f)| f.clone()).collect())
        .unwrap_or_default();
    for f in cleanups {
        f();
    }
}

/// Lists a cleanup for [`kill_all`] (an interrupt or a panic); returns the id that
/// [`forget_cleanup`] takes once the run has cleaned up by itself.
pub fn on_kill_all(f: impl Fn() + Send + Sync + 'static) -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Ok(mut v) = CLEANUPS.lock() {
        v.push((id, std::sync::Arc::new(f)));
    }
    id
}

/// Takes a cleanup off the [`kill_all`] list.
pub fn forget_cleanup(id: u64) {
    if let Ok(mut v) = CLEANUPS.lock() {
        v.retain(|(i, _)| *i != id);
    }
}

/// Lists a run's temporary directory for removal on an interrupt.
pub fn register_dir(dir: &Path) {
    if let Ok(mut v) = DIRS.lock() {
        v.push(dir.to_path_buf());
    }
}

/// Takes a directory off the interrupt list (the run ended, or `--keep` keeps it).
pub fn unregister_dir(dir: &Path) {
    if let Ok(mut v) = DIRS.lock() {
        v.retain(|d| d != dir);
    }
}

/// Installs the Ctrl-C handler and the panic hook that call [`kill_all`] (once per
/// process).
pub fn install_cleanup() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // An error here means another handler is installed (e.g. by an embedding
        // program); the guards' Drop still cleans up on every normal path.
        let _ = ctrlc::set_handler(|| {
            kill_all();
            for dir in DIRS.lock().map(|v| v.clone()).unwrap_or_default() {
                let _ = std::fs::remove_dir_all(dir);
            }
            std::process::exit(130);
        });
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            kill_all();
            previous(info);
        }));
    });
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
