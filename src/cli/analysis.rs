//! `lockstorm analysis`: runs every scenario of a folder over several seeds and writes
//! the analysis (each scenario's verdict and evidence, with an index).

use super::write_junit;
use anyhow::Result;
use lockstorm::report::junit;
use lockstorm::run;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The folder of scenario files.
    #[arg(long, default_value = run::analysis::DEFAULT_SCENARIOS)]
    scenarios: PathBuf,
    /// Where the analysis goes.
    #[arg(long, default_value = run::analysis::DEFAULT_OUT)]
    out: PathBuf,
    /// Seeds per scenario, from each file's own seed.
    #[arg(long, default_value_t = run::analysis::DEFAULT_SEEDS, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    seeds: u64,
    /// Also write the result as JUnit XML to FILE, a test suite per scenario and a case
    /// per seed, for CI systems to show.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
}

pub fn run(a: Args) -> Result<bool> {
    let Args {
        scenarios,
        out,
        seeds,
        junit: junit_file,
    } = a;
    let mut suites = Vec::new();
    let cases = lockstorm::run::analysis::run_all_with(
        &scenarios,
        &out,
        seeds,
        &|name| lockstorm::errln!("running {name}..."),
        &mut |scenario, outcome, rendered| {
            if junit_file.is_some() {
                let dir = out.join(&scenario.name);
                suites.push(junit::run_suite(
                    scenario,
                    outcome,
                    rendered.stories.first(),
                    &dir,
                ));
            }
        },
    )?;
    if let Some(path) = &junit_file {
        write_junit(path, "lockstorm analysis", suites)?;
    }
    for c in &cases {
        out!(
            "{:<32} {:<13} ({}/{} seeds unsafe, {} not exercised; the scenario expects {}) {}",
            c.name,
            c.verdict,
            c.unsafe_seeds,
            c.seeds,
            c.not_exercised_seeds,
            c.expect,
            lockstorm::report::analysis::against_scenario(c.as_expected)
        );
    }
    out!("analysis in {}", out.join("README.md").display());
    Ok(cases.iter().all(|c| c.as_expected))
}
