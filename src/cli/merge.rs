//! `lockstorm merge DIR...`: puts the folders of every shard of a run (`--shard I/N`)
//! back together into the report, the sweep or the library matrix that the unsharded
//! run writes.

use super::scenario::write_report;
use super::sweep::write_sweep;
use super::verdict::{print_table, print_verdict};
use super::write_junit;
use anyhow::{Context, Result};
use lockstorm::report::folder::RunFolder;
use lockstorm::report::junit;
use lockstorm::run::merge::Merged;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// The shards' folders, in any order.
    #[arg(required = true)]
    dirs: Vec<PathBuf>,
    /// Where the merged report goes (default: where the unsharded run writes it).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print one line: the verdict and the report's folder.
    #[arg(long, short)]
    quiet: bool,
    /// Also write the merged run as JUnit XML to FILE, a test case per seed, as the
    /// unsharded run's --junit does (not for a sweep).
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<bool> {
    let Args {
        dirs,
        out,
        quiet,
        junit: junit_file,
    } = a;
    match lockstorm::run::merge::merge(&dirs)? {
        Merged::Scenario {
            scenario,
            outcome,
            timing,
        } => {
            let dir = out.unwrap_or_else(|| Path::new("reports").join(&scenario.name));
            let cannot_write = || format!("cannot write the report to {}", dir.display());
            let folder = RunFolder::prepare(&dir).with_context(cannot_write)?;
            let rendered = write_report(&dir, &scenario, &outcome, &timing)?;
            folder.finish().with_context(cannot_write)?;
            if let Some(path) = &junit_file {
                let suite = junit::run_suite(&scenario, &outcome, rendered.stories.first(), &dir);
                write_junit(path, &scenario.name, vec![suite])?;
            }
            if !quiet {
                print_table(&scenario, &outcome);
            }
            print_verdict(&scenario, &outcome, &dir, quiet);
            Ok(outcome.as_expected)
        }
        Merged::Sweep { .. } if junit_file.is_some() => Err(anyhow::anyhow!(
            "--junit: the shards are a sweep's, which has no test cases (only a run's merge writes JUnit)"
        )),
        Merged::Sweep { sweep, timing } => {
            let dir = out.unwrap_or_else(|| Path::new("reports/sweeps").join(&sweep.scenario));
            let cannot_write = || format!("cannot write the sweep to {}", dir.display());
            let folder = lockstorm::report::sweep::folder(&dir).with_context(cannot_write)?;
            write_sweep(&dir, &sweep, &timing, quiet)?;
            folder.finish().with_context(cannot_write)?;
            Ok(true)
        }
        Merged::Matrix { matrix, folders } => {
            let dir = out.unwrap_or_else(|| PathBuf::from("reports/libraries"));
            let same = |d: &Path| match (d.canonicalize(), dir.canonicalize()) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            };
            if let Some(d) = dirs.iter().find(|d| same(d)) {
                anyhow::bail!(
                    "--out {} is one of the shards' folders; merge into another folder",
                    d.display()
                );
            }
            // The matrix's pages, and each library's, as the matrix writes them: a user's
            // file of their names is refused before anything is copied.
            let cannot_write = || format!("cannot write the matrix to {}", dir.display());
            // A library's page goes into its folder if the folder is there afterwards:
            // one it gets cells in, or one already there.
            let in_use = folders
                .iter()
                .filter_map(|(rel, _)| rel.split_once('/').map(|(library, _)| library));
            let there = matrix
                .adapters
                .iter()
                .map(|a| a.name.as_str())
                .filter(|name| dir.join(name).is_dir());
            let _pages =
                lockstorm::run::matrix::claim_pages(&dir, in_use.chain(there)).with_context(cannot_write)?;
            for (rel, from) in &folders {
                let to = dir.join(rel);
                let cannot = || format!("cannot copy {} to {}", from.join(rel).display(), to.display());
                let folder = RunFolder::prepare(&to).with_context(cannot)?;
                folder.copy_from(&from.join(rel)).with_context(cannot)?;
                folder.finish().with_context(cannot)?;
            }
            lockstorm::report::matrix::write(&dir, &matrix)
                .with_context(|| format!("cannot write the matrix to {}", dir.display()))?;
            if let Some(path) = &junit_file {
                write_junit(path, "lockstorm matrix", junit::matrix_suites(&matrix, &dir))?;
            }
            Ok(super::matrix::print_totals(&matrix, &dir))
        }
    }
}
