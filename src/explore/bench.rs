//! `lockstorm bench --sim --explore FILE`: how fast the explorer searches a scope, in
//! distinct states per second. Not a timed test: numbers depend on the machine and its
//! load.

use std::time::Instant;

/// How fast the explorer searches one scope, on one thread.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ExploreBench {
    pub rounds: usize,
    /// Distinct states and transitions per search (the same every round).
    pub states: u64,
    pub transitions: u64,
    /// What the search answered: "found at depth N", "clear" or why it stopped.
    pub answer: String,
    /// Distinct states per wall second, the median round.
    pub states_per_sec: f64,
}

/// Searches `scope` `rounds` times on one thread with the default limits.
pub fn explore(scope: &super::Scope, rounds: usize) -> ExploreBench {
    let limits = super::Limits {
        threads: Some(1),
        ..Default::default()
    };
    let mut secs = Vec::new();
    let mut last = None;
    for _ in 0..rounds.max(1) {
        let started = Instant::now();
        let searched = super::search::bfs(scope, &limits, &|_| {});
        secs.push(started.elapsed().as_secs_f64());
        last = Some(searched);
    }
    let s = last.expect("at least one round");
    let answer = match &s.verdict {
        super::Verdict::Found { path, .. } => format!("found at depth {}", path.len()),
        super::Verdict::Clear => "clear".into(),
        super::Verdict::Stopped { why } => format!("stopped: {why}"),
    };
    ExploreBench {
        rounds: secs.len(),
        states: s.states,
        transitions: s.transitions,
        answer,
        states_per_sec: s.states as f64 / crate::run::sim_bench::median(&mut secs).max(1e-9),
    }
}
