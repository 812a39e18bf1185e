//! `lockstorm check HISTORY`: checks a history (JSONL, from lockstorm or any client)
//! against the lock model and prints the findings as JSON.

use anyhow::{Context, Result};
use lockstorm::checker;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The history file, e.g. reports/partition/history.jsonl.
    history: PathBuf,
}

pub fn run(a: Args) -> Result<bool> {
    check(&a.history)
}

fn check(path: &Path) -> Result<bool> {
    let findings = checker::check_jsonl(path)?.with_context(|| format!("{} is malformed", path.display()))?;
    // A history no client acquired in proves nothing: "no findings" would read as safe.
    if findings.stats.acquires == 0 {
        anyhow::bail!("{}: no acquire in the history: nothing to check", path.display());
    }
    let verdict = findings.is_safe() && findings.is_live() && findings.is_resource_safe();
    let text = serde_json::to_string_pretty(&findings)?;
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        // `check H | head`: the reader has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(verdict),
        written => written.map(|()| verdict).context("cannot write the findings"),
    }
}
