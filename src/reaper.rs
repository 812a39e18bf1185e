//! The reaper: a small watcher process that cleans up after lockstorm when lockstorm
//! cannot, because it was killed by SIGKILL.
//!
//! The `lockstorm` binary starts it on first need (its own hidden `reaper` command) with
//! a pipe as its standard input and in a process group of its own, so a Ctrl-C at the
//! terminal does not reach it. lockstorm tells it, one JSON line at a time, what to clean
//! up ([`watch`]) and what no longer needs it ([`unwatch`]): a temporary directory, a
//! command to run (say, `docker rm -f` of a container), or the processes that carry
//! lockstorm's mark ([`OWNER_ENV`]). When the pipe closes, because
//! lockstorm exited whatever the way, the reaper removes the directories and runs the
//! commands still watched ([`serve`]), then exits. lockstorm's own children die by their
//! parent-death signal (see `children`); what they started in turn does not, and the
//! reaper kills it by its mark. A helper that carries no mark (it cleared it with
//! `env -u`, or overwrote it with its process title, as a redis-server does) is found
//! another way: while lockstorm lives, the reaper notes every process that descends from
//! it, every [`LOOK_EVERY`] ([`Family`]), and when the pipe closes it kills those still
//! alive (the same pid and start time) and what descends from them. A helper started in
//! the last look's interval before a SIGKILL can escape that look, if it also cleared
//! its mark.
//!
//! On a normal exit nothing is left watched and lockstorm waits for the reaper
//! ([`stop`]), so no process outlives lockstorm; only after a SIGKILL does the reaper
//! run on its own, for as long as its cleanup takes. Without [`enable`] (the library in
//! another program, the unit tests) watching does nothing.

use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::io::{BufRead, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The hidden command of the `lockstorm` binary that runs [`serve`].
pub const COMMAND: &str = "reaper";

/// The environment variable that marks every process lockstorm started, and whatever
/// those start in turn: its value is the
/// run's owner mark (pid and start time).
pub const OWNER_ENV: &str = "LOCKSTORM_OWNER";

/// How often the reaper notes lockstorm's descendants.
const LOOK_EVERY: Duration = Duration::from_millis(200);

/// How long the reaper lets one cleanup command run.
const COMMAND_LIMIT: Duration = Duration::from_secs(30);

/// Something to clean up if lockstorm dies.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    /// A directory to remove, with everything in it.
    Dir(PathBuf),
    /// A program and its arguments, run once.
    Command(Vec<String>),
    /// Every process whose environment carries this mark
    /// ([`OWNER_ENV`]): what lockstorm's children started, which
    /// neither a group signal nor a parent-death signal reaches.
    KillMarked(String),
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Message {
    Watch(Task),
    Unwatch(Task),
}

struct Reaper {
    /// The lockstorm binary, which runs the reaper as [`COMMAND`].
    exe: PathBuf,
    /// The running reaper and the write end of its pipe, once started.
    running: Option<(Child, ChildStdin)>,
}

static REAPER: Mutex<Option<Reaper>> = Mutex::new(None);

/// Lets [`watch`] start the reaper: `exe` is the lockstorm binary.
pub fn enable(exe: &Path) {
    if let Ok(mut r) = REAPER.lock() {
        r.get_or_insert(Reaper {
            exe: exe.to_path_buf(),
            running: None,
        });
    }
}

/// Has the reaper clean up `task` should lockstorm die before [`unwatch`].
pub fn watch(task: Task) {
    send(&Message::Watch(task));
}

/// The task is done (or kept on purpose): the reaper forgets it.
pub fn unwatch(task: Task) {
    send(&Message::Unwatch(task));
}

fn send(message: &Message) {
    let Ok(mut guard) = REAPER.lock() else { return };
    let Some(reaper) = guard.as_mut() else { return };
    if reaper.running.is_none() {
        match start(&reaper.exe) {
            Ok(running) => reaper.running = Some(running),
            Err(e) => {
                crate::errln!("lockstorm: warning: cannot start the reaper ({e}); a SIGKILL would leave temporary files behind");
                *guard = None;
                return;
            }
        }
    }
    let Some((_, pipe)) = reaper.running.as_mut() else {
        return;
    };
    let mut line = serde_json::to_vec(message).expect("a message always serializes");
    line.push(b'\n');
    if pipe.write_all(&line).and_then(|()| pipe.flush()).is_err() {
        crate::errln!(
            "lockstorm: warning: the reaper stopped listening; a SIGKILL would leave temporary files behind"
        );
    }
}

fn start(exe: &Path) -> std::io::Result<(Child, ChildStdin)> {
    let mut child = Command::new(exe)
        .arg(COMMAND)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        // Its own group: a Ctrl-C at the terminal is for lockstorm, which then tells it.
        .process_group(0)
        .spawn()?;
    let pipe = child.stdin.take().expect("stdin was piped");
    Ok((child, pipe))
}

/// The reaper's pid while it runs: a child of lockstorm in a group of its own, which
/// the stray hunt must tell from an orphan ([`crate::children::kill_strays`]).
pub fn pid() -> Option<u32> {
    REAPER.lock().ok().and_then(|r| {
        r.as_ref()
            .and_then(|r| r.running.as_ref().map(|(child, _)| child.id()))
    })
}

/// Closes the pipe and waits for the reaper to finish: called as lockstorm exits, when
/// everything it watched is already cleaned up.
pub fn stop() {
    let running = REAPER
        .lock()
        .ok()
        .and_then(|mut r| r.as_mut().and_then(|r| r.running.take()));
    if let Some((mut child, pipe)) = running {
        drop(pipe);
        let _ = child.wait();
    }
}

/// The reaper's work: read what to watch until the pipe closes, then clean up what is
/// still watched. Lines that do not parse are skipped (a half-written last line).
pub fn serve(input: impl BufRead) {
    let family = Family::watch(std::os::unix::process::parent_id());
    let mut tasks: Vec<Task> = Vec::new();
    for line in input.lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str(&line) {
            Ok(Message::Watch(task)) => tasks.push(task),
            Ok(Message::Unwatch(task)) => {
                if let Some(i) = tasks.iter().position(|t| *t == task) {
                    tasks.remove(i);
                }
            }
            Err(_) => {}
        }
    }
    // Processes first: they may be writing into the directories.
    for task in &tasks {
        if let Task::KillMarked(mark) = task {
            kill_marked(mark);
            family.kill();
        }
    }
    for task in tasks {
        match task {
            Task::Dir(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Task::Command(argv) => run(&argv),
            Task::KillMarked(_) => {}
        }
    }
}

/// SIGKILL to every process with `mark`, until none is left (one may start another
/// before it dies), in a bounded number of rounds.
fn kill_marked(mark: &str) {
    for _ in 0..10 {
        let pids = marked(mark);
        if pids.is_empty() {
            return;
        }
        for pid in pids {
            // SAFETY: kill(2) on a process that carries the mark of the lockstorm that
            // started this reaper.
            unsafe {
                libc::kill(pid as libc::pid_t, libc::SIGKILL);
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A process as /proc/PID/stat shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stat {
    pub ppid: u32,
    pub pgrp: i32,
    pub zombie: bool,
    /// When it started, in clock ticks since boot: a pid reused later has another.
    pub start: u64,
}

/// `pid`'s stat, `None` once it is gone.
pub(crate) fn stat(pid: u32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name, which is in parentheses and may hold spaces:
    // state, ppid, pgrp, ..., starttime (the 20th of them).
    let fields: Vec<&str> = text.get(text.rfind(')')? + 2..)?.split(' ').collect();
    let state = *fields.first()?;
    Some(Stat {
        ppid: fields.get(1)?.parse().ok()?,
        pgrp: fields.get(2)?.parse().ok()?,
        zombie: state == "Z" || state == "X",
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Every live process but this one, with its stat.
pub(crate) fn all_processes() -> Vec<(u32, Stat)> {
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != me)
        .filter_map(|pid| Some((pid, stat(pid)?)))
        .collect()
}

/// The processes that descend from `roots` (not the roots themselves), among `procs`.
fn descendants(procs: &[(u32, Stat)], roots: &[u32]) -> Vec<(u32, Stat)> {
    let mut found: Vec<(u32, Stat)> = Vec::new();
    let mut frontier: Vec<u32> = roots.to_vec();
    while let Some(parent) = frontier.pop() {
        for &(pid, st) in procs {
            if st.ppid == parent && !found.iter().any(|&(p, _)| p == pid) {
                found.push((pid, st));
                frontier.push(pid);
            }
        }
    }
    found
}

/// lockstorm's descendants as the reaper last saw them (pid and start time), noted by a
/// thread of its own every [`LOOK_EVERY`] while lockstorm lives.
#[derive(Clone)]
struct Family {
    root: u32,
    seen: std::sync::Arc<Mutex<BTreeSet<(u32, u64)>>>,
}

impl Family {
    /// Notes `root`'s descendants now and then every [`LOOK_EVERY`] until it is gone.
    fn watch(root: u32) -> Family {
        let family = Family {
            root,
            seen: Default::default(),
        };
        let looker = family.clone();
        std::thread::spawn(move || {
            while looker.look() {
                std::thread::sleep(LOOK_EVERY);
            }
        });
        family
    }

    /// Adds the root's descendants as they are now to those seen before that are still
    /// alive (the same start time); `false` once the root is gone or a zombie.
    ///
    /// Seen before, not only now: a root killed while a look reads /proc leaves its
    /// children to another parent at once, so that look finds few descendants or none,
    /// and a last look that replaced the list would forget them (a redis-server helper
    /// outlived a SIGKILL so, in 1 of 8 trials).
    fn look(&self) -> bool {
        let procs = all_processes();
        if !procs.iter().any(|&(pid, st)| pid == self.root && !st.zombie) {
            return false;
        }
        let now = descendants(&procs, &[self.root]);
        if let Ok(mut seen) = self.seen.lock() {
            let alive: BTreeSet<(u32, u64)> = procs
                .iter()
                .filter(|(_, st)| !st.zombie)
                .map(|&(pid, st)| (pid, st.start))
                .collect();
            seen.retain(|p| alive.contains(p));
            seen.extend(now.into_iter().map(|(pid, st)| (pid, st.start)));
        }
        true
    }

    /// SIGKILL to every process of the last look still alive (the same start time) and
    /// to what descends from them now, in a bounded number of rounds.
    fn kill(&self) {
        let seen = self.seen.lock().map(|s| s.clone()).unwrap_or_default();
        for _ in 0..10 {
            let procs = all_processes();
            let alive: Vec<u32> = procs
                .iter()
                .filter(|(pid, st)| !st.zombie && seen.contains(&(*pid, st.start)))
                .map(|&(pid, _)| pid)
                .collect();
            let mut doomed = alive.clone();
            doomed.extend(
                descendants(&procs, &alive)
                    .into_iter()
                    .filter(|(_, st)| !st.zombie)
                    .map(|(p, _)| p),
            );
            if doomed.is_empty() {
                return;
            }
            for pid in doomed {
                // SAFETY: kill(2) on a process that descended from the lockstorm that
                // started this reaper when it last looked (pid and start time), or
                // descends from one of those now.
                unsafe {
                    libc::kill(pid as libc::pid_t, libc::SIGKILL);
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Runs a cleanup command for at most [`COMMAND_LIMIT`].
fn run(argv: &[String]) {
    let Some((program, args)) = argv.split_first() else {
        return;
    };
    let Ok(mut child) = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return;
    };
    let deadline = Instant::now() + COMMAND_LIMIT;
    while matches!(child.try_wait(), Ok(None)) {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Every live process other than this one whose environment carries `mark`.
pub fn marked(mark: &str) -> Vec<u32> {
    let needle = format!("{OWNER_ENV}={mark}");
    let me = std::process::id();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        if environ.split(|&b| b == 0).any(|v| v == needle.as_bytes()) {
            out.push(pid);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(m: &Message) -> String {
        serde_json::to_string(m).unwrap() + "\n"
    }

    #[test]
    fn what_is_still_watched_when_the_pipe_closes_is_cleaned_up() {
        let tmp = tempfile::tempdir().unwrap();
        let (gone, kept, touched) = (tmp.path().join("a"), tmp.path().join("b"), tmp.path().join("c"));
        std::fs::create_dir_all(gone.join("node0")).unwrap();
        std::fs::create_dir_all(&kept).unwrap();
        let touch = vec!["touch".to_string(), touched.display().to_string()];
        let input = [
            line(&Message::Watch(Task::Dir(gone.clone()))),
            line(&Message::Watch(Task::Dir(kept.clone()))),
            line(&Message::Watch(Task::Command(touch))),
            line(&Message::Unwatch(Task::Dir(kept.clone()))),
            "{\"watch\":{\"dir\"".into(),
        ]
        .concat();
        serve(input.as_bytes());
        assert!(!gone.exists(), "a watched directory is removed");
        assert!(kept.exists(), "an unwatched one is left alone");
        assert!(touched.exists(), "a watched command runs");
    }

    fn alive(pid: u32) -> bool {
        stat(pid).is_some_and(|s| !s.zombie)
    }

    /// A helper that left its parent's group and cleared its environment, and the
    /// parent then killed by SIGKILL: the family's last look still names it.
    #[test]
    fn a_helper_without_a_mark_seen_in_the_last_look_dies_with_its_family() {
        let tmp = tempfile::tempdir().unwrap();
        let pid_file = tmp.path().join("helper");
        let script = format!(
            "setsid env -i sleep 600 & echo $! > {}; exec sleep 600",
            pid_file.display()
        );
        let mut root = Command::new("sh").args(["-c", &script]).spawn().unwrap();
        let family = Family {
            root: root.id(),
            seen: Default::default(),
        };
        let started = Instant::now();
        let helper = loop {
            match std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse::<u32>().ok())
            {
                Some(pid) if stat(pid).is_some_and(|s| s.ppid == root.id()) => break pid,
                _ => {
                    assert!(
                        started.elapsed() < Duration::from_secs(10),
                        "the helper never started"
                    );
                    std::thread::yield_now()
                }
            }
        };
        assert!(family.look(), "the root is alive");
        root.kill().unwrap();
        root.wait().unwrap();
        assert!(!family.look(), "the root is gone; the last look is kept");
        assert!(alive(helper), "orphaned, not killed");
        family.kill();
        let deadline = Instant::now() + Duration::from_secs(10);
        while alive(helper) && Instant::now() < deadline {
            std::thread::yield_now();
        }
        assert!(!alive(helper), "the helper {helper} is gone");
    }
}
