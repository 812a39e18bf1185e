//! `lockstorm report DIR`: re-renders a folder from its data: a run's report from its
//! history.jsonl, a sweep's from its sweep.json, the library matrix from matrix.json,
//! the reports site (reports/index.html and README.md) from the folders under it.

use anyhow::{Context, Result};
use lockstorm::outcome::sweep::Sweep;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The folder holding history.jsonl, e.g. reports/partition; or a sweep's, a
    /// matrix's, or the reports site's root (reports/, whose index it rewrites).
    dir: PathBuf,
    /// A library matrix only: judge its cells again against the predictions and the
    /// documentation claims of this adapter list as it is now (say, after a prediction
    /// was corrected from the library's source); the verdicts and tallies stay the run's,
    /// and the page says the claims were read after the run.
    #[arg(long, value_name = "FILE")]
    list: Option<PathBuf>,
    /// A run's report only: keep of history.jsonl only the windows its stories cite,
    /// each with 20 lines either side, at their own line numbers (the other lines blank),
    /// as the committed analysis and library matrix do; with no story to cite it,
    /// history.jsonl is removed. Use it to commit a report; `check` and `report` refuse
    /// the cut file afterwards, since a verdict needs every line.
    #[arg(long)]
    cut: bool,
}

pub fn run(a: Args) -> Result<bool> {
    let dir = a.dir.as_path();
    /// The data file `name` in `dir`, parsed, if it is there.
    fn data<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Result<Option<T>> {
        let path = dir.join(name);
        if !path.exists() {
            return Ok(None);
        }
        let text =
            std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
        let value =
            serde_json::from_str(&text).with_context(|| format!("{} is malformed", path.display()))?;
        Ok(Some(value))
    }
    if a.cut && !dir.join("history.jsonl").is_file() {
        anyhow::bail!(
            "{}: --cut cuts a run's history.jsonl, and this folder has none",
            dir.display()
        );
    }
    if a.list.is_some() && !dir.join(lockstorm::report::matrix::JSON).is_file() {
        anyhow::bail!(
            "{}: --list judges a library matrix again, and this folder has no matrix.json",
            dir.display()
        );
    }
    if let Some(sweep) = data::<Sweep>(dir, lockstorm::report::sweep::JSON)? {
        // The page is new to sweeps written before it: listed once written, and a
        // user's index.html there refused, not overwritten.
        let drawn =
            lockstorm::report::folder::rerender_shared(dir, &[lockstorm::report::sweep::PAGE], || {
                lockstorm::report::sweep::write(dir, &sweep)
            })?;
        lockstorm::report::site::refresh(dir)?;
        out!(
            "{}: redrew sweep.csv, index.html and {}",
            dir.display(),
            drawn.join(", ")
        );
        return Ok(true);
    }
    if let Some(mut matrix) = data::<lockstorm::report::matrix::Matrix>(dir, lockstorm::report::matrix::JSON)?
    {
        if let Some(list) = &a.list {
            let read = lockstorm::run::matrix::rejudge(&mut matrix, list)?;
            out!(
                "{}: judged {} row(s) again against {}",
                dir.display(),
                read.len(),
                list.display()
            );
        }
        lockstorm::report::matrix::write(dir, &matrix)?;
        out!(
            "{}: rendered README.md and index.html from matrix.json",
            dir.display()
        );
        return Ok(true);
    }
    // The reports site's root (reports/): its index and README, from its folders.
    let history = dir.join("history.jsonl");
    if !history.exists() && !lockstorm::report::site::entries(dir).is_empty() {
        lockstorm::report::site::write(dir)?;
        out!(
            "{}: rewrote index.html and README.md, the way in to its report folders",
            dir.display()
        );
        return Ok(true);
    }
    let keep = match a.cut {
        true => lockstorm::report::Keep::Cited,
        false => lockstorm::report::Keep::Whole,
    };
    let findings = lockstorm::report::rerender(dir, keep)?;
    out!(
        "{}: {} violation(s), {} liveness finding(s); report in {}",
        dir.display(),
        findings.violations.len(),
        findings.liveness.len(),
        dir.join("index.html").display()
    );
    if a.cut {
        let kept = match dir.join("history.jsonl").is_file() {
            true => "cut to the windows its stories cite",
            false => "removed: no story cites a line of it",
        };
        out!("{}: history.jsonl {kept}", dir.display());
    }
    Ok(true)
}
