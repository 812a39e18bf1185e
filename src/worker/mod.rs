//! Workers: any lock library as a lockstorm client.
//!
//! A client is either the built-in sans-IO algorithm or a worker process that speaks
//! the JSON-lines protocol of [`protocol`] on its stdin and stdout (the public page is
//! docs/worker-protocol.md). lockstorm keeps the workload, the nodes, the proxies, the
//! faults, the clocks and the history; the worker only takes and releases locks with
//! its library. In the flow (scenario → run → history → checker → report) a worker
//! sits inside the real driver's run: [`lock`] is the client's sans-IO side (requests
//! out, answers in, the caller's hold counted from the library's return), [`process`] starts, feeds, pauses
//! and stops the processes, and `real/driver/workers.rs` ties them to the run. The
//! worker is faulted as a process: SIGSTOP for a client pause, libfaketime for its
//! clock, its own proxies for partitions and delays. lockstorm stamps every event with
//! its own clock.
//!
//! A scenario names its worker in `[clients]`: `worker = ["python3",
//! "adapters/python/pottery_redlock.py"]`, an argv run from the directory lockstorm is
//! started in; `["lockstorm", "worker"]` is this lockstorm binary's own algorithms
//! behind the protocol (`real/serve.rs`). On the command line, `--adapter NAME` takes a
//! worker from the adapter list ([`adapters`]) and `--worker ARGV` runs any command
//! ([`WorkerSpec::from_command_line`]); [`WorkerOrigin`] remembers which, so every rerun
//! command names the same worker again.

pub mod adapters;
pub mod lock;
pub mod process;
pub mod protocol;

pub use lock::{AnswerKind, Answered, WorkerLock, UNTIL_RELEASED};
pub use protocol::Request;

use serde::Serialize;

/// How long a request may go unanswered unless the scenario says (`worker_deadline`).
pub const DEFAULT_DEADLINE_US: u64 = 30_000_000;

/// How the command line chose a run's worker, so that a printed rerun command chooses
/// the same one again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "from", rename_all = "snake_case")]
pub enum WorkerOrigin {
    /// `[clients] worker` in the scenario file: the file says it again.
    File,
    /// `--adapter NAME`, from the adapter list `list` when it is not the default one.
    Adapter { name: String, list: Option<String> },
    /// `--worker ARGV`: any command, not in the adapter list.
    Argv,
}

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
    pub origin: WorkerOrigin,
}

/// When lockstorm starts believing a worker's hold (`[clients] worker_hold_from`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldFrom {
    /// From the moment the `ok` arrives, for the validity it reports (else the ttl): as
    /// the library's user holds the lock once acquire returns. The default.
    #[default]
    Answer,
    /// From the moment the acquire was sent, which counts every try the library made
    /// inside it against the hold: a lower bound of what the caller believes (it hides
    /// an overlap a caller's hold would show, never invents one).
    Send,
}

impl HoldFrom {
    pub fn name(self) -> &'static str {
        match self {
            HoldFrom::Answer => "answer",
            HoldFrom::Send => "send",
        }
    }
}

impl WorkerSpec {
    /// The worker `--worker ARGV` names: `argv` is split as a POSIX shell would
    /// (`"python3 'my worker.py'"`), and runs with the defaults of a scenario's
    /// `[clients] worker` (no libfaketime, the default deadline).
    pub fn from_command_line(argv: &str) -> Result<WorkerSpec, String> {
        let words = shlex::split(argv)
            .filter(|w| !w.is_empty() && !w[0].is_empty())
            .ok_or_else(|| {
                format!("--worker {argv:?}: give a command and its arguments, quoted as a shell would")
            })?;
        Ok(WorkerSpec {
            argv: words,
            faketime: false,
            deadline_us: DEFAULT_DEADLINE_US,
            origin: WorkerOrigin::Argv,
        })
    }

    /// The command as a person would type it, for messages.
    pub fn command_line(&self) -> String {
        self.argv.join(" ")
    }

    /// The options that choose this worker again on `lockstorm scenario` (empty when
    /// the scenario file names it), each word quoted for a shell.
    pub fn rerun_args(&self) -> String {
        match &self.origin {
            WorkerOrigin::File => String::new(),
            WorkerOrigin::Adapter { name, list } => {
                let list = list
                    .as_ref()
                    .map(|l| format!(" --adapter-list {}", shell_word(l)))
                    .unwrap_or_default();
                format!(" --adapter {}{list}", shell_word(name))
            }
            WorkerOrigin::Argv => {
                let line: Vec<String> = self.argv.iter().map(|w| shell_word(w)).collect();
                format!(" --worker {}", shell_word(&line.join(" ")))
            }
        }
    }
}

/// `word` quoted for a POSIX shell when it needs to be.
pub fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "._-=:/+,@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// The words of a command line [`shell_word`] wrote: split at blanks outside single
/// quotes, each quote's text taken as it is, a backslash taking the next character.
pub fn shell_words(line: &str) -> Vec<String> {
    let (mut words, mut word, mut open) = (Vec::new(), None::<String>, false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match (c, open) {
            ('\'', _) => {
                open = !open;
                word.get_or_insert_with(String::new);
            }
            (c, true) => word.get_or_insert_with(String::new).push(c),
            ('\\', false) => word.get_or_insert_with(String::new).extend(chars.next()),
            (c, false) if c.is_whitespace() => words.extend(word.take()),
            (c, false) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_read_back_what_shell_word_wrote() {
        let words = ["--set", "a={ x = 1 }", "it's", "clients.hold=1.5s", ""];
        let line: Vec<String> = words.iter().map(|w| shell_word(w)).collect();
        assert_eq!(shell_words(&line.join(" ")), words);
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("clients.hold=1.5s"), "clients.hold=1.5s");
        assert_eq!(shell_word("a={ x = 1 }"), "'a={ x = 1 }'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }

    #[test]
    fn a_worker_command_line_splits_as_a_shell_would_and_prints_back_the_same() {
        let w = WorkerSpec::from_command_line("python3 'tests/my worker.py' --fast").unwrap();
        assert_eq!(w.argv, ["python3", "tests/my worker.py", "--fast"]);
        let args = w.rerun_args();
        let back = args.strip_prefix(" --worker ").unwrap();
        let again = WorkerSpec::from_command_line(&shlex::split(back).unwrap()[0]).unwrap();
        assert_eq!(again.argv, w.argv, "{args}");
        assert!(WorkerSpec::from_command_line("").is_err());
        assert!(WorkerSpec::from_command_line("python3 'unclosed").is_err());
        let plain = WorkerSpec::from_command_line("python3 w.py").unwrap();
        assert_eq!(plain.rerun_args(), " --worker 'python3 w.py'");
    }
}
