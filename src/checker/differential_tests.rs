//! The checker's findings must not change when its insides do (issue 24): every shipped
//! scenario that runs on the simulator, on three seeds, is checked and its findings are
//! compared two ways.
//!
//! - With what the checker of before the online sweep found, committed in
//!   `differential.digests`: per scenario and seed, a 128-bit digest (xxh3) of the
//!   history as JSONL and one of `lockstorm check`'s output on it. A history that
//!   changed is reported as such: the digests then say nothing about the checker.
//! - With the reference paths kept beside the online ones: the batch safety sweep over
//!   every hold (sorted as before), and the fencing-token check over them.
//!
//! The digests were computed by the checker before it judged online (`lockstorm
//! scenario` then `lockstorm check`, at commit 3d723bd). Regenerate them
//! (`LOCKSTORM_BLESS_DIGESTS=1`) only for a change of findings that is meant and
//! reviewed, never to make this test pass.

use super::*;
use crate::scenario::{Backend, Scenario};
use std::path::{Path, PathBuf};

const SEEDS: u64 = 3;
const DIGESTS: &str = "src/checker/differential.digests";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every scenario file under scenarios/, sorted, with paths relative to the crate.
fn scenario_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("scenarios/ is readable")
        .map(|e| e.expect("a readable entry").path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scenario_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

/// The shipped scenarios that run on the simulator.
fn sim_scenarios() -> Vec<(String, Scenario)> {
    let mut files = Vec::new();
    scenario_files(&root().join("scenarios"), &mut files);
    files
        .into_iter()
        .filter_map(|p| {
            let s = Scenario::load(&p).unwrap_or_else(|e| panic!("{e}"));
            let name = p
                .strip_prefix(root())
                .expect("under the crate")
                .display()
                .to_string();
            (s.backend == Backend::Sim && s.clients.worker.is_none()).then_some((name, s))
        })
        .collect()
}

fn digest(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

/// Everything the findings say, as `lockstorm check` prints it (summary.json takes its
/// parts from the same fields). The holds and faults the report draws are not in it:
/// the holds come from the same code as before, and [`reference_check`] checks their
/// order.
fn findings_digest(f: &Findings) -> String {
    digest(
        serde_json::to_string_pretty(f)
            .expect("findings serialize")
            .as_bytes(),
    )
}

fn history_digest(history: &[Event]) -> String {
    let mut bytes = Vec::new();
    crate::history::write_jsonl(history, &mut bytes).expect("writes to memory");
    digest(&bytes)
}

/// The reference paths: the batch sweep over every hold, as the checker judged before.
fn reference_check(f: &Findings) {
    let mut holds = f.holds.clone();
    let violations = safety::sweep(&mut holds, &f.faults);
    assert_eq!(holds, f.holds, "the holds keep the batch sweep's order");
    assert_eq!(violations, f.violations, "safety: online and batch sweeps differ");
    let fences = resource::fence_regressions(&holds);
    assert_eq!(
        fences, f.fence_regressions,
        "fencing tokens: online and batch differ"
    );
}

#[test]
fn every_sim_scenario_is_judged_as_the_checker_before_the_online_sweep_judged_it() {
    let scenarios = sim_scenarios();
    assert!(scenarios.len() >= 20, "found only {}", scenarios.len());
    let mut lines = Vec::new();
    for (name, scenario) in &scenarios {
        for seed in scenario.seed..scenario.seed + SEEDS {
            let history = crate::sim::run(scenario, seed).history;
            let f = check(&history).unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
            reference_check(&f);
            lines.push(format!(
                "{name} {seed} {} {}",
                history_digest(&history),
                findings_digest(&f)
            ));
        }
    }
    let path = root().join(DIGESTS);
    if std::env::var_os("LOCKSTORM_BLESS_DIGESTS").is_some() {
        std::fs::write(&path, lines.join("\n") + "\n").expect("writes the digests");
        return;
    }
    let committed = std::fs::read_to_string(&path).expect("the committed digests");
    let committed: Vec<&str> = committed.lines().collect();
    let mut misses = Vec::new();
    for line in &lines {
        let mut it = line.split(' ');
        let (name, seed, history) = (it.next(), it.next(), it.next());
        let old = committed.iter().find(|l| {
            let mut c = l.split(' ');
            (c.next(), c.next()) == (name, seed)
        });
        match old {
            None => misses.push(format!("{line}: no committed digest")),
            Some(old) if old.split(' ').nth(2) != history => {
                misses.push(format!("{line}: the history changed, so the digests say nothing"))
            }
            Some(old) if old != line => misses.push(format!("{line}: the findings changed (was {old})")),
            Some(_) => {}
        }
    }
    assert!(misses.is_empty(), "{}", misses.join("\n"));
}

/// One step of a random history: who does what, how much later.
#[derive(Clone, Debug)]
struct Step {
    client: usize,
    lock: usize,
    action: u8,
    mode: u8,
    dt_us: u64,
    valid_us: Option<u64>,
    fence: Option<u64>,
}

fn arb_step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    (
        0..4usize,
        0..2usize,
        0..6u8,
        0..3u8,
        prop::sample::select(vec![0u64, 0, 1, 3, 10, 40]),
        prop::option::weighted(0.9, 0..120u64),
        prop::option::weighted(0.5, 0..8u64),
    )
        .prop_map(|(client, lock, action, mode, dt_us, valid_us, fence)| Step {
            client,
            lock,
            action,
            mode,
            dt_us,
            valid_us,
            fence,
        })
}

/// A well-formed history from `steps`: acquisitions (some failed), releases,
/// extensions, beliefs and losses, at times with many ties.
fn history_of(steps: &[Step]) -> Vec<Event> {
    use crate::history::{Belief, Lost};
    let mut t = 0;
    let mut out = Vec::new();
    // The token each client holds each lock with.
    let mut held: BTreeMap<(usize, usize), String> = BTreeMap::new();
    for (n, s) in steps.iter().enumerate() {
        t += s.dt_us;
        let lock = format!("L{}", s.lock);
        let mode = [Mode::Exclusive, Mode::Read, Mode::Write][s.mode as usize];
        let key = (s.client, s.lock);
        let op = |kind| Op::new(t, s.client, kind, lock.clone(), mode);
        let token = held.get(&key).cloned();
        match (s.action, token) {
            (0 | 1, _) => {
                out.push(Event::Invoke(op(OpKind::Acquire)));
                let mut ok = op(OpKind::Acquire);
                ok.token = Some(format!("t{n}"));
                ok.valid_until_us = s.valid_us.map(|v| t + v);
                ok.fence = s.fence;
                ok.nodes = Some(vec![s.client % 3]);
                out.push(Event::Ok(ok));
                held.insert(key, format!("t{n}"));
            }
            (2, _) => {
                out.push(Event::Invoke(op(OpKind::Acquire)));
                out.push(Event::Fail(op(OpKind::Acquire)));
            }
            (3, Some(token)) => {
                let mut ext = op(OpKind::Extend);
                ext.token = Some(token.clone());
                out.push(Event::Invoke(ext.clone()));
                ext.valid_until_us = s.valid_us.map(|v| t + v);
                out.push(Event::Ok(ext));
            }
            (4, Some(token)) => out.push(Event::Belief(Belief {
                t_us: t,
                client: s.client,
                lock,
                token: Some(token),
                valid_until_us: t + s.valid_us.unwrap_or(0) / 2,
            })),
            (5, Some(token)) if s.mode == 0 => {
                out.push(Event::Lost(Lost {
                    t_us: t,
                    client: s.client,
                    lock,
                    token: Some(token),
                }));
                held.remove(&key);
            }
            _ => {
                out.push(Event::Invoke(op(OpKind::Release)));
                out.push(Event::Ok(op(OpKind::Release)));
                held.remove(&key);
            }
        }
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 512, ..Default::default() })]

    /// On any history, the online sweep finds what the batch sweep over every hold
    /// finds, in the same order.
    #[test]
    fn the_online_sweep_finds_what_the_batch_sweep_finds(steps in proptest::collection::vec(arb_step(), 0..60)) {
        let history = history_of(&steps);
        let f = check(&history).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
        reference_check(&f);
    }
}
