//! Worker processes: started, fed one line at a time, read line by line, paused,
//! stopped, and never left behind.
//!
//! Each worker starts through [`crate::children::spawn`] (its own process group, killed
//! if lockstorm dies, listed for the interrupt handler), from lockstorm's working
//! directory, with its stderr going to a log file the report keeps: at most
//! [`LOG_HEAD_BYTES`] from its start and [`LOG_TAIL_BYTES`] from its end, with a line
//! between them that says how much was dropped ([`CappedLog`]). Its stdout is read
//! by a tokio task that forwards every line (at most [`MAX_LINE`] bytes) to the driver
//! as a [`WorkerEvent`]; requests are written to its stdin from the driver's thread,
//! one line each (a client has at most one request open, so the pipe never fills).
//! A client pause is SIGSTOP / SIGCONT to the worker's process group. Shutdown closes
//! every stdin, gives the workers [`EXIT_GRACE`] to exit, then kills what is left;
//! dropping a [`WorkerProcess`] kills and reaps it on every other path. Whatever a
//! worker started is killed with it ([`crate::children::kill_strays`]).

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

/// How much of a worker's stderr its log keeps from the start...
pub const LOG_HEAD_BYTES: usize = 1 << 20;
/// ...and from the end; what lies between is dropped (a chatty library can write
/// gigabytes in seconds).
pub const LOG_TAIL_BYTES: usize = 1 << 20;

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
    log: CappedLog,
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
        let capped = CappedLog::create(log).map_err(err)?;
        let mut cmd = Command::new(program(&spec.argv[0]));
        cmd.args(&spec.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        prepare(&mut cmd);
        let mut child = crate::children::spawn(&mut cmd).map_err(err)?;
        let pid = child.id();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        capped.follow(stderr);
        let mut process = WorkerProcess {
            client,
            pid,
            child: Some(child),
            stdin,
            log: capped,
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
                    crate::children::kill_strays();
                    self.log.finish();
                    return Some(status);
                }
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
                _ => return None,
            }
        }
    }

    /// The last `n` lines of its stderr log, joined with " | " (for error messages).
    pub fn log_tail(&self, n: usize) -> String {
        let text = self.log.text();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..].join(" | ")
    }

    /// SIGKILL to its group, then reap.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            crate::children::signal(self.pid, libc::SIGKILL);
            let _ = child.wait();
            crate::children::forget(self.pid);
            crate::children::kill_strays();
        }
        self.stdin = None;
        self.log.finish();
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
/// copies, capped, as `workers/client-N.log`: [`crate::report::logs`]) and the library
/// the first worker named.
#[derive(Debug)]
pub struct WorkerLogs {
    dir: tempfile::TempDir,
    clients: usize,
    /// (library, version) from the first `hello_ok`.
    pub library: Option<(String, String)>,
}

impl WorkerLogs {
    /// A fresh log folder, readable by this user only, which the reaper removes should
    /// lockstorm be killed.
    pub fn new(clients: usize) -> std::io::Result<WorkerLogs> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::Builder::new()
            .prefix("lockstorm-workers-")
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()?;
        crate::children::register_dir(dir.path());
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

    /// How many clients have a log here (a worker that never started has no file).
    pub fn clients(&self) -> usize {
        self.clients
    }
}

impl Drop for WorkerLogs {
    fn drop(&mut self) {
        // Removed before the reaper forgets it: a SIGKILL in between leaves nothing.
        let _ = std::fs::remove_dir_all(self.dir.path());
        crate::children::unregister_dir(self.dir.path());
    }
}

/// A worker's stderr log, capped: the first [`LOG_HEAD_BYTES`] go to the file as they
/// come, the last [`LOG_TAIL_BYTES`] wait in memory, and [`CappedLog::finish`] writes
/// a line saying how much was dropped, then the tail. A thread copies the pipe; finish
/// does not wait for it (a helper the worker started may hold the pipe open), and
/// what comes after finish is dropped.
#[derive(Clone)]
struct CappedLog {
    state: std::sync::Arc<(std::sync::Mutex<LogState>, std::sync::Condvar)>,
}

/// How long [`CappedLog::finish`] waits for the pipe to close after the worker exited,
/// for the lines it wrote last.
const LOG_DRAIN: Duration = Duration::from_millis(300);

struct LogState {
    file: Option<std::fs::File>,
    path: PathBuf,
    /// Bytes written to the file so far (the head).
    head: usize,
    tail: std::collections::VecDeque<u8>,
    dropped: u64,
    /// The pipe closed: everything the worker wrote has been taken.
    closed: bool,
}

impl LogState {
    fn take(&mut self, mut bytes: &[u8]) {
        let Some(file) = self.file.as_mut() else { return };
        let room = LOG_HEAD_BYTES - self.head;
        let now = bytes.len().min(room);
        if now > 0 {
            if file.write_all(&bytes[..now]).is_err() {
                self.file = None;
                return;
            }
            self.head += now;
            bytes = &bytes[now..];
        }
        self.tail.extend(bytes);
        let over = self.tail.len().saturating_sub(LOG_TAIL_BYTES);
        if over > 0 {
            self.tail.drain(..over);
            self.dropped += over as u64;
        }
    }
}

impl CappedLog {
    fn create(path: &Path) -> std::io::Result<CappedLog> {
        let file = std::fs::File::create(path)?;
        Ok(CappedLog {
            state: std::sync::Arc::new((
                std::sync::Mutex::new(LogState {
                    file: Some(file),
                    path: path.to_path_buf(),
                    head: 0,
                    tail: Default::default(),
                    dropped: 0,
                    closed: false,
                }),
                std::sync::Condvar::new(),
            )),
        })
    }

    /// Copies `pipe` into the log on a thread of its own until it closes.
    fn follow(&self, mut pipe: std::process::ChildStderr) {
        let log = self.clone();
        let _ = std::thread::Builder::new()
            .name("lockstorm-worker-log".into())
            .spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                let (state, closed) = &*log.state;
                while let Ok(n @ 1..) = std::io::Read::read(&mut pipe, &mut buf) {
                    match state.lock() {
                        Ok(mut s) if s.file.is_some() => s.take(&buf[..n]),
                        _ => break,
                    }
                }
                if let Ok(mut s) = state.lock() {
                    s.closed = true;
                }
                closed.notify_all();
            });
    }

    /// What the log holds so far: the head on disk and the tail in memory.
    fn text(&self) -> String {
        let Some(s) = self.drained() else {
            return String::new();
        };
        let mut text = String::from_utf8_lossy(&std::fs::read(&s.path).unwrap_or_default()).into_owned();
        let (a, b) = s.tail.as_slices();
        text.push_str(&String::from_utf8_lossy(a));
        text.push_str(&String::from_utf8_lossy(b));
        text
    }

    /// The state, once the pipe has closed or after [`LOG_DRAIN`].
    fn drained(&self) -> Option<std::sync::MutexGuard<'_, LogState>> {
        let (state, closed) = &*self.state;
        let guard = state.lock().ok()?;
        closed
            .wait_timeout_while(guard, LOG_DRAIN, |s| !s.closed && s.file.is_some())
            .ok()
            .map(|(g, _)| g)
    }

    /// Writes the tail (after a line saying what was dropped) and closes the file.
    fn finish(&self) {
        let Some(mut s) = self.drained() else { return };
        let Some(mut file) = s.file.take() else { return };
        if s.dropped > 0 {
            let _ = writeln!(
                file,
                "\n[lockstorm: {} bytes of this worker's stderr dropped here; the log keeps the first {} and the last {}]",
                s.dropped, LOG_HEAD_BYTES, LOG_TAIL_BYTES
            );
        }
        let tail: Vec<u8> = s.tail.drain(..).collect();
        let _ = file.write_all(&tail);
    }
}
