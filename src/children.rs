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
//!
//! What a child starts in turn (a worker's helper process, one that calls `setsid` to
//! leave its group) gets neither the group signal nor the parent-death signal. Every
//! child gets [`OWNER_ENV`] in its environment, which its own children inherit; the
//! binary makes lockstorm the subreaper of its descendants ([`become_subreaper`], so an
//! orphan is re-parented to lockstorm, not to init, and lockstorm reaps it), and
//! [`kill_strays`] kills and reaps every process that carries lockstorm's mark and is
//! no listed child nor in a listed child's group: at the end of a worker run, on an
//! interrupt, and, through the reaper, after a SIGKILL.

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

use crate::reaper::marked;
pub use crate::reaper::OWNER_ENV;

/// This process's mark: its pid and a time, so a reused pid never matches.
pub fn owner_mark() -> &'static str {
    static MARK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARK.get_or_init(|| {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{}-{nanos}", std::process::id())
    })
}

/// Makes this process the subreaper of its descendants (Linux
/// `PR_SET_CHILD_SUBREAPER`): a process whose parent exits is re-parented here, where
/// [`kill_strays`] reaps it. Only the binary calls it: a subreaper must reap.
pub fn become_subreaper() -> std::io::Result<()> {
    // SAFETY: prctl with an integer argument; it touches no memory.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Starts `cmd` as a child that dies with lockstorm, and lists it for [`kill_all`].
/// The caller reaps it and then calls [`forget`].
pub fn spawn(cmd: &mut Command) -> std::io::Result<Child> {
    static WATCHED: std::sync::Once = std::sync::Once::new();
    WATCHED.call_once(|| crate::reaper::watch(crate::reaper::Task::KillMarked(owner_mark().to_string())));
    cmd.env(OWNER_ENV, owner_mark());
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
    // The list stays locked from fork to push, so a stray hunt on another thread (runs
    // go in parallel) never takes a child that is starting for one of ours.
    let mut live = LIVE.lock().expect("pid list");
    let child = cmd.spawn()?;
    live.push(child.id());
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

/// A process's parent pid, process group, and whether it is a zombie; `None` once it
/// is gone.
fn proc_stat(pid: u32) -> Option<(u32, i32, bool)> {
    crate::reaper::stat(pid).map(|s| (s.ppid, s.pgrp, s.zombie))
}

/// Whether `pid` is one of `listed` or a descendant of one (a live worker's helper is
/// that worker's business until the worker is gone).
fn descends_from(pid: u32, listed: &[u32]) -> bool {
    let me = std::process::id();
    let mut at = pid;
    for _ in 0..64 {
        if listed.contains(&at) {
            return true;
        }
        match proc_stat(at) {
            Some((ppid, _, _)) if ppid > 1 && ppid != me => at = ppid,
            _ => return false,
        }
    }
    false
}

/// The orphans lockstorm adopted as the subreaper of its descendants: its children that
/// it did not start, seen as a child in a group other than lockstorm's own that is no
/// listed child nor the reaper (what lockstorm starts itself and does not list, a
/// `redis-server --version`, stays in its group). They carry no mark when they cleared
/// it (`env -u`) or overwrote it (a redis-server's process title): a worker's helper
/// that daemonized, a wrapper's redis-server.
fn orphans(me: u32, listed: &[u32]) -> Vec<u32> {
    let Some((_, my_group, _)) = proc_stat(me) else {
        return Vec::new();
    };
    let found: Vec<u32> = crate::reaper::all_processes()
        .into_iter()
        .filter(|&(pid, st)| !listed.contains(&pid) && st.ppid == me && st.pgrp != my_group && !st.zombie)
        .map(|(pid, _)| pid)
        .collect();
    // Asked after the look: a reaper started while it looked is excluded too.
    let reaper = crate::reaper::pid();
    found.into_iter().filter(|&pid| Some(pid) != reaper).collect()
}

/// Kills every process that carries this process's mark, and every orphan lockstorm
/// adopted ([`orphans`]), that is neither a listed child nor in a listed child's process
/// group (a worker's helper, left after the worker exited or escaped its group with
/// `setsid`), then reaps those that were re-parented here. Returns how many it killed.
pub fn kill_strays() -> usize {
    let me = std::process::id();
    // Locked while it looks and kills: no child is being started meanwhile (see spawn).
    // Nothing below may panic while it is held: the panic hook's kill_all takes it too.
    let live = LIVE.lock();
    let listed = live.as_ref().map(|v| v.to_vec()).unwrap_or_default();
    let mut killed = Vec::new();
    // A stray may start another before it dies: look again until none is left.
    for _ in 0..10 {
        let mut candidates = marked(owner_mark());
        candidates.extend(orphans(me, &listed));
        candidates.sort_unstable();
        candidates.dedup();
        let strays: Vec<u32> = candidates
            .into_iter()
            .filter(|&pid| {
                proc_stat(pid).is_some_and(|(_, group, zombie)| {
                    !zombie && !listed.iter().any(|&l| l as i32 == group) && !descends_from(pid, &listed)
                })
            })
            .collect();
        if strays.is_empty() {
            break;
        }
        for &pid in &strays {
            // SAFETY: kill(2) on a process that carries this process's mark.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
        killed.extend(strays);
    }
    drop(live);
    // Reap what was re-parented here (this process is the subreaper); a stray whose
    // parent is another process is that parent's to reap.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    for &pid in &killed {
        while let Some((ppid, _, _)) = proc_stat(pid) {
            if ppid == me {
                // SAFETY: waitpid on a child of ours that we killed.
                unsafe {
                    libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
                }
                break;
            }
            if std::time::Instant::now() > deadline {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
    killed.len()
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
    kill_strays();
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
