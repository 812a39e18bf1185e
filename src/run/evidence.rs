//! A scenario that stands as evidence: written as a file with a comment saying where it
//! came from, run once on the simulator, and reported beside it. Shrink and explore both
//! end here, with the minimal scenario and the counterexample's reproduction.

use super::Outcome;
use crate::report::folder::RunFolder;
use crate::report::ReportError;
use crate::scenario::Scenario;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    #[error("{path}: {source}")]
    Io { path: String, source: std::io::Error },
    #[error(transparent)]
    Report(#[from] ReportError),
}

/// Writes `scenario` to `<dir>/<name>.toml` (starting with `comment`), runs `seed` on
/// the simulator and writes the report into `dir`. Returns the scenario with its path
/// (so its rerun command names the file) and the run's outcome.
pub fn save(
    dir: &Path,
    scenario: &Scenario,
    seed: u64,
    comment: &str,
) -> Result<(Scenario, Outcome), SaveError> {
    let mut s = scenario.clone();
    let file = dir.join(format!("{}.toml", s.name));
    s.path = Some(file.clone());
    let io = |source| SaveError::Io {
        path: file.display().to_string(),
        source,
    };
    // A folder of evidence is one run, as a report folder is: an earlier run's files
    // (its scenario among them, through the manifest) go first.
    let folder = RunFolder::prepare(dir)?;
    std::fs::write(&file, s.to_toml(comment)).map_err(io)?;
    let outcome = super::run(&s, &[seed], 1, &Default::default(), &|_| {})
        .expect("the simulator has no environment to fail");
    crate::report::write(dir, &s, &outcome)?;
    folder.finish()?;
    Ok((s, outcome))
}
