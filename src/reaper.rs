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
//! reaper kills it by its mark.
//!
//! On a normal exit nothing is left watched and lockstorm waits for the reaper
//! ([`stop`]), so no process outlives lockstorm; only after a SIGKILL does the reaper
//! run on its own, for as long as its cleanup takes. Without [`enable`] (the library in
//! another program, the unit tests) watching does nothing.

use serde::{Deserialize, Serialize};
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
                eprintln!("lockstorm: warning: cannot start the reaper ({e}); a SIGKILL would leave temporary files behind");
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
        eprintln!(
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
}
