//! Worker processes: started, fed one line at a time, read line by line, paused,
//! stopped, and never left behind.
//!
//! Each worker starts through [`crate::children::spawn`] (its own process group, killed
//! if lockstorm dies, listed for the interrupt handler), from lockstorm's working
//! directory, with its stderr going to a log file the report keeps. Its stdout is read
//! by a tokio task that forwards every line (at most [`MAX_LINE`] bytes) to the driver
//! as a [`WorkerEvent`]; requests are written to its stdin from the driver's thread,
//! one line each (a client has at most one request open, so the pipe never fills).
//! A client pause is SIGSTOP / SIGCONT to the worker's process group. Shutdown closes
//! every stdin, gives the workers [`EXIT_GRACE`] to exit, then kills what is left;
//! dropping a [`WorkerProcess`] kills and reaps it on every other path.

use super::WorkerSpec;
use futures_util::StreamExt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

/// The longest line a worker may write; a longer one is not a protocol message.
pub const MAX_LINE: usize = 1 << 20;

/// How long a worker has to exit after its stdin closes.
pub const EXIT_GRACE: Duration = Duration::from_secs(1);

/// What came out of a worker's stdout.
#[derive(Debug)]
pub enum FromProcess {
    Line(String),
    /// A line longer than [`MAX_LINE`], or not UTF-8.
    Garbage(String),
    /// Its stdout closed: it exited (or closed it).
    Closed,
}

#[derive(Debug)]
pub struct WorkerEvent {
    pub client: usize,
    pub what: FromProcess,
}

/// Why a worker could not be started.
#[derive(Debug, thiserror::Error)]
#[error("client {client}: cannot start worker `{command}`: {source}")]
pub struct StartError {
    pub client: usize,
    pub command: String,
    pub source: std::io::Error,
}

/// One running worker.
pub struct WorkerProcess {
    pub client: usize,
    pub pid: u32,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    log: PathBuf,
    paused: bool,
}

/// The program to run for `argv[0]`: `lockstorm` is this binary (or `LOCKSTORM_EXE`).
fn program(argv0: &str) -> std::ffi::OsString {
    if argv0 == "lockstorm" {
        if let Some(exe) = std::env::var_os("LOCKSTORM_EXE") {
            return exe;
        }
        if let Ok(exe) = std::env::current_exe() {
            return exe.into_os_string();
        }
    }
    argv0.into()
}

impl WorkerProcess {
    /// Starts client `client`'s worker with its stderr in `log`; `prepare` may add to
    /// its environment (libfaketime). Lines it writes go to `events`. Must be called
    /// inside a tokio runtime, from the thread that lives as long as the worker.
    pub fn start(
        spec: &WorkerSpec,
        client: usize,
        log: &Path,
        prepare: impl FnOnce(&mut Command),
        events: mpsc::UnboundedSender<WorkerEvent>,
    ) -> Result<WorkerProcess, StartError> {
        let err = |source| StartError {
            client,
            command: spec.command_line(),
            source,
        };
        let stderr = std::fs::File::create(log).map_err(err)?;
        let mut cmd = Command::new(program(&spec.argv[0]));
        cmd.args(&spec.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr);
        prepare(&mut cmd);
        let mut child = crate::children::spawn(&mut cmd).map_err(err)?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut process = WorkerProcess {
            client,
            pid,
            child: Some(child),
            stdin,
            log: log.to_path_buf(),
            paused: false,
        };
        let stdout = tokio::process::ChildStdout::from_std(stdout).map_err(|e| {
            process.kill();
            err(e)
        })?;
        tokio::spawn(read_lines(client, stdout, events));
        Ok(process)
    }

    /// Writes one message line to the worker's stdin.
    pub fn send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    /// SIGSTOP to the worker's process group.
    pub fn pause(&mut self) {
        if self.child.is_some() && !self.paused {
            crate::children::signal(self.pid, libc::SIGSTOP);
            self.paused = true;
        }
    }

    /// SIGCONT to the worker's process group.
    pub fn resume(&mut self) {
        if self.child.is_some() && self.paused {
            crate::children::signal(self.pid, libc::SIGCONT);
            self.paused = false;
        }
    }

    /// Its exit status once it has exited, waiting up to `grace` for that.
    pub fn exit_status(&mut self, grace: Duration) -> Option<std::process::ExitStatus> {
        let child = self.child.as_mut()?;
        let deadline = Instant::now() + grace;
        loop {
            match child.try_wait() {
                Ok(Some(status)) => {
                    crate::children::forget(self.pid);
                    self.child = None;
                    return Some(status);
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                _ => return None,
            }
        }
    }

    /// The last `n` lines of its stderr log, joined with " | " (for error messages).
    pub fn log_tail(&self, n: usize) -> String {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..].join(" | ")
    }

    /// SIGKILL to its group, then reap.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            crate::children::signal(self.pid, libc::SIGKILL);
            let _ = child.wait();
            crate::children::forget(self.pid);
        }
        self.stdin = None;
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The protocol's shutdown: close every worker's stdin, wait up to [`EXIT_GRACE`] for
/// them all, then kill the rest.
pub fn shutdown(workers: &mut [WorkerProcess]) {
    for w in workers.iter_mut() {
        w.resume();
        w.stdin = None;
    }
    let deadline = Instant::now() + EXIT_GRACE;
    for w in workers.iter_mut() {
        w.exit_status(deadline.saturating_duration_since(Instant::now()));
        w.kill();
    }
}

async fn read_lines(
    client: usize,
    stdout: tokio::process::ChildStdout,
    events: mpsc::UnboundedSender<WorkerEvent>,
) {
    let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE));
    while let Some(item) = lines.next().await {
        let what = match item {
            Ok(line) => FromProcess::Line(line),
            Err(LinesCodecError::MaxLineLengthExceeded) => {
                FromProcess::Garbage(format!("a line longer than {MAX_LINE} bytes"))
            }
            Err(LinesCodecError::Io(e)) => FromProcess::Garbage(format!("unreadable output ({e})")),
        };
        let stop = matches!(what, FromProcess::Garbage(_));
        if events.send(WorkerEvent { client, what }).is_err() || stop {
            return;
        }
    }
    let _ = events.send(WorkerEvent {
        client,
        what: FromProcess::Closed,
    });
}

/// What a run's workers leave behind: their stderr logs (a temporary folder the report
/// copies as `workers/client-N.log`) and the library the first worker named.
#[derive(Debug)]
pub struct WorkerLogs {
    dir: tempfile::TempDir,
    clients: usize,
    /// (library, version) from the first `hello_ok`.
    pub library: Option<(String, String)>,
}

impl WorkerLogs {
    pub fn new(clients: usize) -> std::io::Result<WorkerLogs> {
        let dir = tempfile::Builder::new().prefix("lockstorm-workers-").tempdir()?;
        Ok(WorkerLogs {
            dir,
            clients,
            library: None,
        })
    }

    /// Client `c`'s log file.
    pub fn path(&self, c: usize) -> PathBuf {
        self.dir.path().join(format!("client-{c}.log"))
    }

    /// Copies every log into `report_dir/workers/`.
    pub fn copy_to(&self, report_dir: &Path) -> std::io::Result<()> {
        let dest = report_dir.join("workers");
        std::fs::create_dir_all(&dest)?;
        for c in 0..self.clients {
            let from = self.path(c);
            if from.is_file() {
                std::fs::copy(&from, dest.join(format!("client-{c}.log")))?;
            }
        }
        Ok(())
    }
}
