//! The command line, one file per command (as cargo and ripgrep lay theirs out): each
//! holds its flags, with the `--help` text beside each one, and a `run` that calls the
//! library ([`lockstorm::run`], [`lockstorm::report`] and the rest) and prints. `run`
//! returns whether the verdict was as expected; `main.rs` dispatches and turns that, or
//! an error, into the exit status.
//!
//! What several commands share is here: which seeds to run, progress bars, default
//! output folders and how durations are printed; how a run's verdict is printed (by
//! `scenario` and `merge`) is in [`verdict`].

/// `println!` that does not panic when stdout is closed (`lockstorm ... | head -1`, a
/// full disk behind `> file`): what a command prints is a copy of what it writes into
/// its report folder, so a reader that went away loses the copy, never the run.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

pub mod analysis;
pub mod bench;
pub mod check;
pub mod clean;
pub mod explore;
pub mod matrix;
pub mod merge;
pub mod report;
pub mod scenario;
pub mod shrink;
pub mod sweep;
mod verdict;

use indicatif::{ProgressBar, ProgressStyle};
use lockstorm::run::pool;
use lockstorm::run::shard::Shard;
use std::path::PathBuf;

/// `--jobs`, or every core.
fn jobs_or_all(jobs: Option<u64>) -> usize {
    jobs.map_or_else(pool::all_cores, |j| j as usize)
}

/// A bar of the share of the work done, with `message`.
fn progress_bar(quiet: bool, message: String) -> ProgressBar {
    let bar = styled_bar(
        quiet,
        1_000,
        "{bar:40} {percent:>3}%  {elapsed}  eta {eta}  {msg}",
    );
    bar.set_message(message);
    bar
}

/// A bar drawn only on a terminal and not with --quiet (indicatif hides it otherwise).
fn styled_bar(quiet: bool, len: u64, template: &str) -> ProgressBar {
    let bar = if quiet {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(len)
    };
    bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
    bar
}

/// The default output folder, with the shard in its name.
pub(crate) fn default_out(base: PathBuf, shard: Option<Shard>) -> PathBuf {
    match shard {
        None => base,
        Some(s) => {
            let mut name = base.into_os_string();
            name.push(format!(".shard-{}-of-{}", s.index, s.count));
            name.into()
        }
    }
}

/// Writes a JUnit report (`--junit FILE`).
fn write_junit(
    path: &std::path::Path,
    name: &str,
    suites: Vec<quick_junit::TestSuite>,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    lockstorm::report::junit::write(path, name, suites)
        .with_context(|| format!("cannot write the JUnit report to {}", path.display()))
}

/// Microseconds as milliseconds: `1.25ms`.
fn ms(us: u64) -> String {
    format!("{:.2}ms", us as f64 / 1e3)
}

/// Microseconds as seconds: `1.250s`.
fn secs(us: u64) -> String {
    format!("{:.3}s", us as f64 / 1e6)
}
