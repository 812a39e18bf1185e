//! Exploration: bounded exhaustive search of the lock algorithms themselves.
//!
//! Where the simulator samples one schedule per seed, explore tries them all within a
//! small scope ([`scope`]): two or three clients, one to five nodes, time in ticks of a
//! quarter ttl, and a budget of crashes, partitions (cut links), pauses, node clock
//! jumps and failovers, each ending no sooner than the scenario's own faults do. The
//! adversary acts at tick boundaries; between them the clients and nodes run as the
//! simulator runs them ([`world`]), with the algorithm state machines of `algorithm/`
//! and the nodes of `sim/node.rs`, unchanged; the faults act on them as the simulator's
//! do (`adversary.rs`). Breadth-first search with deduplicated
//! states ([`search`]) makes the first counterexample a shortest one (fewest faults and
//! ticks); with none, the answer is "no violation within bound" with the states seen and
//! the depth reached. A counterexample is replayed into a history, told as a numbered
//! story, and written as a scenario that reproduces it on the simulator ([`replay`]),
//! which is run to confirm it.
//!
//! Why not Stateright: it fits the shape (a model with actions, BFS, fingerprints), but
//! its multi-threaded checker reports whichever counterexample a thread finds first, and
//! determinism is a rule here; it also brings a web explorer and its HTTP server. The
//! search here is a hundred lines: single-threaded, deterministic, with its own limits
//! and progress.

pub mod action;
mod adversary;
pub mod bench;
mod queue;
pub mod replay;
pub mod scope;
pub mod search;
pub mod world;

pub use scope::{Overrides, Scope};
pub use search::{Limits, Verdict};

use crate::checker::Findings;
use crate::history::Event;
use crate::report::narrative::Story;
use crate::scenario::Scenario;
use crate::shrink::Kind;
use world::Found;

/// A counterexample with its evidence.
pub struct Counterexample {
    pub path: Vec<Action>,
    pub found: Found,
    /// The explorer's history of it, and the checker's findings on that history.
    pub history: Vec<Event>,
    pub findings: Findings,
    /// The story of the first violation in that history (mutual exclusion only).
    pub story: Option<Story>,
    /// Whether the checker, judging the explorer's history, finds the same kind (a
    /// cross-check of the explorer's own judgement).
    pub confirmed: bool,
    /// The scenario that replays it on the simulator.
    pub reproduction: Scenario,
    /// Whether the simulator, running the reproduction, shows the same kind.
    pub reproduced: bool,
    /// The story length of the simulator's run of the reproduction.
    pub reproduced_story: Option<usize>,
}

pub use action::Action;

/// What an exploration found.
pub struct Exploration {
    pub scope: Scope,
    pub searched: search::Searched,
    pub counterexample: Option<Counterexample>,
}

impl Counterexample {
    pub fn kind(&self) -> Kind {
        match self.found {
            Found::MutualExclusion { .. } => Kind::MutualExclusion,
            Found::FenceRegression { .. } => Kind::FenceRegression,
        }
    }

    /// Faults (starts and ends) and ticks on the path.
    pub fn counts(&self) -> (usize, usize) {
        let ticks = self.path.iter().filter(|&&a| a == Action::Tick).count();
        (self.path.len() - ticks, ticks)
    }

    /// The numbered story of the violation, or the explorer's trace when it has none.
    pub fn numbered_story(&self) -> String {
        match &self.story {
            Some(story) => story.markdown(),
            None => self
                .trace()
                .iter()
                .enumerate()
                .map(|(i, line)| format!("{}. {line}\n", i + 1))
                .collect(),
        }
    }

    /// The explorer's own account of the path, one line per transition with the
    /// acquisitions and releases of each tick, for when there is no story.
    pub fn trace(&self) -> Vec<String> {
        self.history
            .iter()
            .filter_map(|e| match e {
                Event::Fault(f) => Some(format!(
                    "t={} fault #{} {:?}: {}",
                    crate::report::narrative::secs(f.t_us),
                    f.id,
                    f.action,
                    crate::report::words::fault_sentence(&f.fault, self.reproduction.clients.count, None)
                )),
                Event::Ok(op) => Some(format!(
                    "t={} client {} {:?} ok{}",
                    crate::report::narrative::secs(op.t_us),
                    op.client,
                    op.op,
                    op.fence
                        .map_or(String::new(), |f| format!(" (fencing token {f})"))
                )),
                _ => None,
            })
            .collect()
    }
}

/// Explores `scenario` within the scope it and `overrides` give.
pub fn explore(
    scenario: &Scenario,
    overrides: &Overrides,
    limits: &Limits,
    progress: &dyn Fn(search::Progress),
) -> Result<Exploration, String> {
    let scope = Scope::new(scenario, overrides)?;
    let searched = search::bfs(&scope, limits, progress);
    let counterexample = match &searched.verdict {
        Verdict::Found { path, found } => Some(evidence(&scope, path.clone(), *found)),
        _ => None,
    };
    Ok(Exploration {
        scope,
        searched,
        counterexample,
    })
}

fn evidence(scope: &Scope, path: Vec<Action>, found: Found) -> Counterexample {
    let history = replay::history(scope, &path);
    let findings = crate::checker::check(&history).expect("the explorer writes well-formed histories");
    let story = crate::shrink::first_story(&history, &findings);
    let resource = matches!(found, Found::FenceRegression { .. });
    let reproduction = replay::reproduction(scope, &path, resource);
    let (_, output, sim) = crate::run::run_seed(&reproduction, scope.seed, &mut |_, _| {});
    let kind = if resource {
        Kind::FenceRegression
    } else {
        Kind::MutualExclusion
    };
    Counterexample {
        path,
        found,
        confirmed: kind.shows(&findings),
        reproduced: kind.shows(&sim),
        reproduced_story: crate::shrink::first_story(&output.history, &sim)
            .as_ref()
            .map(crate::shrink::story_len),
        history,
        findings,
        story,
        reproduction,
    }
}

/// Writes the reproduction scenario (`<dir>/<name>.toml`) and the report of its run
/// on the simulator into `dir`; returns the file written.
pub fn write_reproduction(
    done: &Exploration,
    cx: &Counterexample,
    dir: &std::path::Path,
) -> Result<std::path::PathBuf, crate::run::SaveError> {
    let (s, _) = crate::run::save(dir, &cx.reproduction, cx.reproduction.seed, &done.comment(cx))?;
    Ok(s.path.expect("saved with a path"))
}

impl Exploration {
    /// The answer in one line: what was found (or not) and what was covered.
    pub fn headline(&self) -> String {
        let s = &self.searched;
        let covered = format!("{} states, depth {}, {:.1} s", s.states, s.depth, s.secs);
        match (&s.verdict, &self.counterexample) {
            (_, Some(cx)) => {
                let (faults, ticks) = cx.counts();
                let story = cx.story.as_ref().map_or(String::new(), |s| {
                    format!(", a story of {} steps", crate::shrink::story_len(s))
                });
                format!(
                    "{} found at depth {} ({faults} fault steps, {ticks} ticks{story}; {covered})",
                    cx.kind(),
                    cx.path.len()
                )
            }
            (Verdict::Stopped { why }, None) => {
                format!("no violation found before {why} ({covered}); not conclusive")
            }
            _ => format!("no violation within bound ({covered})"),
        }
    }

    /// Whether the answer is what the scenario expects: a reproduced counterexample for
    /// an unsafe scenario (or an unsafe resource), none within bound for a safe one. A
    /// search stopped by a limit agrees with nothing.
    pub fn agrees_with(&self, scenario: &Scenario) -> bool {
        use crate::scenario::Expect;
        let unsafe_expected =
            scenario.expect == Expect::Unsafe || scenario.expect_resource == Some(Expect::Unsafe);
        match (&self.searched.verdict, &self.counterexample) {
            (_, Some(cx)) => unsafe_expected && cx.reproduced,
            (Verdict::Clear, None) => !unsafe_expected,
            _ => false,
        }
    }

    /// The comment a reproduction scenario starts with.
    pub fn comment(&self, cx: &Counterexample) -> String {
        let (faults, ticks) = cx.counts();
        let mut text = format!(
            "Found by `lockstorm explore` on {}: a shortest {} within {}. Depth {} ({faults} fault steps, {ticks} ticks), {} states searched. The clients behave as the explorer's do: ask, hold (at most until the validity ends), release, think one tick.",
            self.scope.name,
            cx.kind(),
            self.scope.describe(),
            cx.path.len(),
            self.searched.states
        );
        if let Some(story) = &cx.story {
            text.push_str("\n\n");
            text.push_str(&story.markdown());
        }
        text
    }
}
