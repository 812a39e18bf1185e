//! Breadth-first search over the worlds a scope allows, with state deduplication.
//!
//! Level by level: every world `d` transitions from the start is expanded before any
//! at `d + 1`, so the first violation found is one of the shortest (fewest faults and
//! ticks). A world is kept only if its 128-bit [`fingerprint`] is new; the search keeps
//! the fingerprints of every world seen and the full worlds of one level only, plus a
//! parent link per world from which the path to a violation is rebuilt. Successors come
//! in [`Action`] order and the first violation in that order wins, so the answer does
//! not depend on timing: the successors of a batch of worlds are computed on every core,
//! then merged in order. Only the time limit reads the wall clock.

use super::action::Action;
use super::adversary;
use super::scope::Scope;
use super::world::{fingerprint, Found, World};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::{Duration, Instant};

/// When to stop searching without an answer.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Distinct worlds, at most.
    pub states: u64,
    pub time: Option<Duration>,
    /// Threads expanding worlds (`None`: one per core); the answer does not depend on it.
    pub threads: Option<usize>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            states: 2_000_000,
            time: None,
            threads: None,
        }
    }
}

/// Where a search stands, for a progress display.
#[derive(Clone, Copy, Debug)]
pub struct Progress {
    pub states: u64,
    pub depth: u32,
    pub frontier: usize,
}

#[derive(Clone, Debug)]
pub enum Verdict {
    /// A violation, and the transitions that lead to it from the start.
    Found { path: Vec<Action>, found: Found },
    /// Every world within the bounds was seen: no violation.
    Clear,
    /// A limit ran out first; what was covered is in the counts.
    Stopped { why: String },
}

#[derive(Clone, Debug)]
pub struct Searched {
    pub verdict: Verdict,
    /// Distinct worlds seen.
    pub states: u64,
    /// Transitions taken (successors computed, duplicates included).
    pub transitions: u64,
    /// Levels completed: every world at most this many transitions away was expanded.
    pub depth: u32,
    pub secs: f64,
}

/// Fingerprints are already uniform: use their low bits as the hash.
#[derive(Default)]
struct Identity(u64);

impl Hasher for Identity {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().take(8) {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

/// Worlds expanded per batch: the batch's successors are computed on every core, then
/// merged one by one in order.
const BATCH: usize = 512;

/// A successor: the action, and the world after it with its fingerprint. Worlds are
/// boxed where the search keeps and moves them: a world is kilobytes inline
/// (`world.rs`), and moving it from successor to level to batch copied it each time.
/// A world already seen before the batch began is dropped at once (`None`): most
/// transitions lead to a known world.
type Successor = (Action, Option<Box<World>>, u128);

type Seen = HashSet<u128, BuildHasherDefault<Identity>>;

/// Boxes of worlds the search is done with, for the worlds it makes next: a world is
/// made in a box of its own, and one of kilobytes costs the allocator more than
/// copying it in place does.
type Spares = Vec<Box<World>>;

/// Worlds to expand, boxed as the level kept them: each box goes on to hold the
/// world's last successor.
type Parents = Vec<Box<World>>;

/// Spares kept at most, on each thread: about what a batch frees.
const SPARES: usize = 2 * BATCH;

/// Keeps `w`'s box for a world to come, unless enough are kept.
fn recycle(spares: &mut Spares, w: Box<World>) {
    if spares.len() < SPARES {
        spares.push(w);
    }
}

/// Every successor of `world`, in action order; `seen` holds the worlds known so far.
/// The last successor is made in `world`'s own box: the world is done with then, and
/// a copy of it, made only to be changed, cost as much as taking the action did.
fn expand(mut world: Box<World>, scope: &Scope, seen: &Seen, spares: &mut Spares) -> Vec<Successor> {
    let mut actions = adversary::Actions::new();
    adversary::enabled(&world, scope, &mut actions);
    let Some((&last, rest)) = actions.split_last() else {
        recycle(spares, world);
        return Vec::new();
    };
    let mut successors = Vec::with_capacity(actions.len());
    let mut keep = |a: Action, w: Box<World>, spares: &mut Spares| {
        let fp = fingerprint(&w, scope);
        if w.found.is_some() || !seen.contains(&fp) {
            successors.push((a, Some(w), fp));
        } else {
            recycle(spares, w);
            successors.push((a, None, fp));
        }
    };
    for &a in rest {
        let w = adversary::next_in(&world, scope, a, spares.pop());
        keep(a, w, spares);
    }
    adversary::take(&mut world, scope, last);
    keep(last, world, spares);
    successors
}

/// The successors of each of `worlds` (taken: each is done with once expanded),
/// computed on `threads` threads, each with a share of `spares`.
fn expand_all(
    worlds: Parents,
    scope: &Scope,
    threads: usize,
    seen: &Seen,
    spares: &mut Spares,
) -> Vec<Vec<Successor>> {
    if threads < 2 || worlds.len() < 2 {
        return worlds
            .into_iter()
            .map(|w| expand(w, scope, seen, spares))
            .collect();
    }
    let share = worlds.len().div_ceil(threads);
    let parts = worlds.len().div_ceil(share);
    let each = spares.len() / parts;
    let mut worlds = worlds.into_iter();
    let (successors, left): (Vec<_>, Vec<_>) = std::thread::scope(|sc| {
        let handles: Vec<_> = (0..parts)
            .map(|_| {
                let part: Vec<_> = worlds.by_ref().take(share).collect();
                let mut mine = spares.split_off(spares.len() - each);
                sc.spawn(move || {
                    let succ = part
                        .into_iter()
                        .map(|w| expand(w, scope, seen, &mut mine))
                        .collect::<Vec<_>>();
                    (succ, mine)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("expanding a world does not panic"))
            .unzip()
    });
    for mine in left {
        for w in mine {
            recycle(spares, w);
        }
    }
    successors.into_iter().flatten().collect()
}

/// Searches the worlds of `scope`.
pub fn bfs(scope: &Scope, limits: &Limits, progress: &dyn Fn(Progress)) -> Searched {
    let started = Instant::now();
    let threads = limits
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let root = World::new(scope, false);
    let mut seen: Seen = HashSet::default();
    seen.insert(fingerprint(&root, scope));
    // Per world seen: its parent's index and the action that led to it.
    let mut tree: Vec<(u32, Action)> = vec![(u32::MAX, Action::Tick)];
    // The worlds of the current level, with their index in `tree`.
    let mut frontier: Vec<(u32, Box<World>)> = vec![(0, Box::new(root))];
    let mut transitions = 0u64;
    let mut depth = 0u32;
    let mut spares = Spares::new();
    let done = |verdict, transitions, depth, seen: &HashSet<_, _>| Searched {
        verdict,
        states: seen.len() as u64,
        transitions,
        depth,
        secs: started.elapsed().as_secs_f64(),
    };
    while !frontier.is_empty() {
        let mut next = Vec::new();
        let mut level = frontier.into_iter().peekable();
        while level.peek().is_some() {
            let (indices, batch): (Vec<u32>, Parents) = level.by_ref().take(BATCH).unzip();
            let successors = expand_all(batch, scope, threads, &seen, &mut spares);
            for (index, succ) in indices.into_iter().zip(successors) {
                for (a, w, fp) in succ {
                    transitions += 1;
                    // Not kept: seen before the batch began.
                    let Some(w) = w else { continue };
                    if let Some(found) = w.found {
                        let mut path = vec![a];
                        let mut at = index;
                        while at != 0 {
                            let (up, step) = tree[at as usize];
                            path.push(step);
                            at = up;
                        }
                        path.reverse();
                        return done(Verdict::Found { path, found }, transitions, depth, &seen);
                    }
                    if seen.insert(fp) {
                        tree.push((index, a));
                        next.push(((tree.len() - 1) as u32, w));
                    } else {
                        recycle(&mut spares, w);
                    }
                }
            }
            progress(Progress {
                states: seen.len() as u64,
                depth,
                frontier: next.len(),
            });
            let why = if seen.len() as u64 >= limits.states {
                Some(format!("the limit of {} states ran out", limits.states))
            } else {
                limits
                    .time
                    .filter(|&t| started.elapsed() >= t)
                    .map(|t| format!("the time limit of {} s ran out", t.as_secs()))
            };
            if let Some(why) = why {
                return done(Verdict::Stopped { why }, transitions, depth, &seen);
            }
        }
        if !next.is_empty() {
            depth += 1;
        }
        frontier = next;
    }
    done(Verdict::Clear, transitions, depth, &seen)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn scope(text: &str, o: &super::super::Overrides) -> Scope {
        Scope::new(&Scenario::parse(text, "t.toml", "t").unwrap(), o).unwrap()
    }

    const RESTART: &str = r#"
        duration = "8s"
        nodes = 3
        [algorithm]
        ttl = "4s"
        [clients]
        count = 2
        hold = "8s"
        [[faults]]
        at = "0s"
        kind = "partition"
        nodes = [2]
        clients = [0]
        [[faults]]
        at = "1s"
        kind = "crash"
        node = 1
        restart_after = "0s"
    "#;

    fn depth(s: &Searched) -> Option<usize> {
        match &s.verdict {
            Verdict::Found { path, .. } => Some(path.len()),
            Verdict::Clear => None,
            Verdict::Stopped { why } => panic!("stopped: {why}"),
        }
    }

    #[test]
    fn the_reduction_finds_what_the_full_search_finds_in_fewer_states() {
        // The restart comes after the ttl: safe.
        let delayed = RESTART.replace("restart_after = \"0s\"", "restart_after = \"4s\"");
        for (text, found) in [(RESTART, true), (&delayed[..], false)] {
            let mut full = scope(text, &Default::default());
            let reduced = full.clone();
            full.reduce = false;
            let a = bfs(&reduced, &Limits::default(), &|_| {});
            let b = bfs(&full, &Limits::default(), &|_| {});
            assert_eq!(depth(&a), depth(&b), "{text}");
            assert_eq!(depth(&a).is_some(), found, "{text}");
            assert!(a.states < b.states, "{} vs {}", a.states, b.states);
        }
    }

    #[test]
    fn the_same_scope_gives_the_same_answer() {
        let s = scope(RESTART, &Default::default());
        let a = bfs(&s, &Limits::default(), &|_| {});
        let b = bfs(&s, &Limits::default(), &|_| {});
        match (&a.verdict, &b.verdict) {
            (Verdict::Found { path: p, .. }, Verdict::Found { path: q, .. }) => assert_eq!(p, q),
            other => panic!("{other:?}"),
        }
        assert_eq!((a.states, a.transitions), (b.states, b.transitions));
    }

    #[test]
    fn one_thread_and_many_give_the_same_answer() {
        let s = scope(RESTART, &Default::default());
        let one = Limits {
            threads: Some(1),
            ..Limits::default()
        };
        let four = Limits {
            threads: Some(4),
            ..Limits::default()
        };
        let (a, b) = (bfs(&s, &one, &|_| {}), bfs(&s, &four, &|_| {}));
        match (&a.verdict, &b.verdict) {
            (Verdict::Found { path: p, .. }, Verdict::Found { path: q, .. }) => assert_eq!(p, q),
            other => panic!("{other:?}"),
        }
        assert_eq!((a.states, a.transitions), (b.states, b.transitions));
    }

    #[test]
    fn worlds_that_differ_only_in_fault_ids_are_one_state() {
        // Two cuts that never heal, made at one boundary in either order: their ids
        // differ, their future does not.
        let two_cuts = RESTART.replace(
            "[[faults]]\n        at = \"1s\"",
            "[[faults]]\n        at = \"0s\"\n        kind = \"partition\"\n        nodes = [1]\n        clients = [1]\n        [[faults]]\n        at = \"1s\"",
        );
        let s = scope(&two_cuts, &Default::default());
        assert_eq!((s.budget.partitions, s.least.heal), (2, None), "{two_cuts}");
        let root = World::new(&s, false);
        let (x, y) = (Action::Cut(0, 2), Action::Cut(1, 1));
        let a = adversary::next(
            &adversary::next(&adversary::next(&root, &s, x), &s, y),
            &s,
            Action::Tick,
        );
        let b = adversary::next(
            &adversary::next(&adversary::next(&root, &s, y), &s, x),
            &s,
            Action::Tick,
        );
        assert_ne!(a.cut, b.cut, "the ids differ");
        assert_eq!(fingerprint(&a, &s), fingerprint(&b, &s));
        // Without the second cut, another state.
        let c = adversary::next(&adversary::next(&root, &s, x), &s, Action::Tick);
        assert_ne!(fingerprint(&a, &s), fingerprint(&c, &s));
    }

    #[test]
    fn a_state_limit_stops_the_search_and_says_so() {
        let s = scope(RESTART, &Default::default());
        let limits = Limits {
            states: 10,
            ..Limits::default()
        };
        let r = bfs(&s, &limits, &|_| {});
        assert!(
            matches!(&r.verdict, Verdict::Stopped { why } if why.contains("10 states")),
            "{:?}",
            r.verdict
        );
    }
}
