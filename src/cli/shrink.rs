//! `lockstorm shrink INPUT`: shrinks a failing run (a report folder, or a scenario file
//! and seed) to the smallest scenario that still fails the same way, writes it with its
//! report, and prints the result and its rerun command.

use super::styled_bar;
use anyhow::Result;
use lockstorm::scenario::{Backend, Override, Scenario};
use lockstorm::shrink;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// A report folder (its summary.json names the scenario and the seed) or a
    /// scenario file.
    input: PathBuf,
    /// With a scenario file: the seed to shrink (default: the file's `seed`).
    #[arg(long)]
    seed: Option<u64>,
    /// Where the minimal scenario and its report go (default: `<name>-shrunk`
    /// beside the report, or reports/<name>-shrunk).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The kind of finding to keep (default: the most important one the run shows).
    #[arg(long, value_enum)]
    kind: Option<shrink::Kind>,
    /// Candidate runs at most.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    max_runs: u64,
    /// Stop after this many seconds; the result then says it stopped early.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    time: Option<u64>,
    /// Print one line: the result and the report's folder.
    #[arg(long, short)]
    quiet: bool,
    /// With a scenario file: set a scenario key before the file is parsed, as the run
    /// that found the seed did (repeatable; a report's shrink command repeats them).
    #[arg(long = "set", value_name = "KEY=VALUE", value_parser = Override::parse)]
    sets: Vec<Override>,
    /// Where the candidates run: `sim`, the only one. Shrink reruns the simulator
    /// whatever the run ran on; a real run's report names it in its shrink command, so
    /// the command says where it runs.
    #[arg(long, value_enum)]
    backend: Option<Backend>,
}

pub fn run(a: Args) -> Result<bool> {
    if let Some(b @ (Backend::Redis | Backend::Docker)) = a.backend {
        anyhow::bail!(
            "shrink reruns the simulator only, not --backend {}: shrink the seed with --backend sim, then rerun the shrunk scenario on real servers",
            serde_json::to_value(b)?.as_str().unwrap_or("?")
        );
    }
    let (original, seed, report_dir) = if a.input.is_dir() {
        if !a.sets.is_empty() {
            anyhow::bail!(
                "--set goes with a scenario file, not a report folder ({}): its summary.json names the file",
                a.input.display()
            );
        }
        let (s, reported) = shrink::from_report(&a.input)?;
        (s, a.seed.unwrap_or(reported), Some(a.input.as_path()))
    } else {
        let text = lockstorm::scenario::read_text(&a.input)?;
        let s = Scenario::from_text(&text, &a.input, &a.sets)?;
        let seed = a.seed.unwrap_or(s.seed);
        (s, seed, None)
    };
    let budget = shrink::Budget {
        runs: a.max_runs as usize,
        time: a.time.map(std::time::Duration::from_secs),
    };
    let bar = styled_bar(a.quiet, a.max_runs, "{spinner} {pos} runs, {msg}  {elapsed}");
    let shrunk = shrink::shrink(&original, seed, a.kind, &budget, &|p| {
        bar.set_position(p.runs as u64);
        bar.set_message(format!("{} kept; trying {}", p.kept, p.what));
    })?;
    bar.finish_and_clear();
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| shrink::default_out(report_dir, &original));
    let (written, outcome) = shrunk.write(&dir, &original)?;
    if a.quiet {
        let stopped = shrunk
            .stopped
            .as_ref()
            .map_or_else(String::new, |why| format!(" (stopped early: {why})"));
        out!(
            "{} seed {seed}: shrunk to {} ({}) in {} runs{stopped}; report in {}",
            original.name,
            written.name,
            shrunk.kind,
            shrunk.runs,
            dir.display()
        );
        return Ok(outcome.as_expected);
    }
    out!(
        "{} seed {seed}: shrunk to {} ({}) in {} runs",
        original.name,
        written.name,
        shrunk.kind,
        shrunk.runs
    );
    for line in shrunk.summary(&original) {
        out!("  {line}");
    }
    if let Some(story) = shrunk.first_story() {
        out!("\n{}", story.markdown());
    }
    if let Some(why) = &shrunk.stopped {
        out!("  stopped early: {why}");
    }
    let file = written.path.as_ref().expect("written with a path");
    out!("  scenario: {}", file.display());
    out!("  report: {}", dir.join("index.html").display());
    out!("  rerun: {}", written.rerun_command(seed));
    Ok(outcome.as_expected)
}
