//! `lockstorm clean`: removes the containers and volumes that runs killed by SIGKILL
//! left in Docker.

use anyhow::Result;

#[derive(clap::Args)]
pub struct Args {
    /// Remove everything lockstorm labelled, also of runs still going.
    #[arg(long)]
    all: bool,
}

pub fn run(a: Args) -> Result<bool> {
    out!("lockstorm clean: {}", lockstorm::real::clean(a.all)?);
    Ok(true)
}
