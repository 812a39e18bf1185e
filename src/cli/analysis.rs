//! `lockstorm analysis`: runs every scenario of a folder over several seeds and writes
//! the analysis (each scenario's verdict and evidence, with an index).

use anyhow::Result;
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
}

pub fn run(a: Args) -> Result<bool> {
    let Args {
        scenarios,
        out,
        seeds,
    } = a;
    let cases =
        lockstorm::run::analysis::run_all(&scenarios, &out, seeds, &|name| eprintln!("running {name}..."))?;
    for c in &cases {
        println!(
            "{:<32} {:<13} ({}/{} seeds unsafe, {} not exercised, expected {}) {}",
            c.name,
            c.verdict,
            c.unsafe_seeds,
            c.seeds,
            c.not_exercised_seeds,
            c.expect,
            if c.as_expected {
                "as expected"
            } else {
                "NOT as expected"
            }
        );
    }
    println!("analysis in {}", out.join("README.md").display());
    Ok(cases.iter().all(|c| c.as_expected))
}
