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
            let f = check_against_references(&history).unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
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
        check_against_references(&history).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
    }
}

/// The fault-tolerance judge as it was before it judged online, over every acquisition
/// and hold of `history`, against what the online one found (`online`).
fn reference_tolerance(history: &[Event], f: &Findings, online: &tolerance::Outcome) {
    let mut batch = tolerance::batch::Batch::default();
    let mut locks = compact::Locks::default();
    let (mut meta, mut heal_us, mut end_us) = (None, None, 0);
    for (i, e) in history.iter().enumerate() {
        let lock = match e {
            Event::Invoke(op) | Event::Ok(op) | Event::Fail(op) | Event::Info(op) => {
                Some(locks.intern(&op.lock))
            }
            _ => None,
        };
        match e {
            Event::Meta(m) if i == 0 => meta = Some(m.clone()),
            Event::Heal { t_us } => heal_us = Some(*t_us),
            _ => {}
        }
        end_us = end_us.max(e.t_us());
        batch.observe(e, lock);
    }
    let expected = batch.finish(meta.as_ref(), heal_us, end_us, &f.holds, &locks);
    assert_eq!(&expected, online, "fault tolerance: online and batch differ");
}

/// Checks `history`, and compares every online judge with its batch reference.
fn check_against_references(history: &[Event]) -> Result<Findings, Malformed> {
    let mut checker = Checker::new();
    for e in history {
        checker.observe(e)?;
    }
    let (f, online) = checker.finish_parts();
    reference_check(&f);
    reference_tolerance(history, &f, &online);
    Ok(f)
}

/// One step of a random history under faults: who does what, how much later.
#[derive(Clone, Debug)]
struct FaultStep {
    client: usize,
    lock: usize,
    action: u8,
    choice: u8,
    dt_us: u64,
    valid_us: u64,
}

fn arb_fault_step() -> impl proptest::strategy::Strategy<Value = FaultStep> {
    use proptest::prelude::*;
    (
        0..4usize,
        0..2usize,
        0..12u8,
        0..6u8,
        prop::sample::select(vec![0u64, 0, 1, 40, 300, 900, 2500]),
        0..4000u64,
    )
        .prop_map(|(client, lock, action, choice, dt_us, valid_us)| FaultStep {
            client,
            lock,
            action,
            choice,
            dt_us,
            valid_us,
        })
}

/// A well-formed history with a `meta` line, interleaved acquisitions of several
/// clients (some open at the end), holds, releases, faults that start, end, overlap or
/// never end, and heals (a history may heal twice, or with faults still open).
fn history_under_faults(probe: bool, bound_us: u64, steps: &[FaultStep]) -> Vec<Event> {
    use crate::fault::{CutDirection, Fault, Origin};
    use crate::history::{FaultEvent, Meta};
    let probe_client = probe.then_some(3);
    let mut out = vec![Event::Meta(Meta {
        t_us: 0,
        scenario: "random".into(),
        seed: 0,
        algorithm: "redlock".into(),
        nodes: 3,
        clients: 4,
        ttl_ms: 1,
        liveness_bound_us: bound_us,
        writer_wait_bound_us: None,
        worker: None,
        probe_client,
    })];
    let mut t = 0;
    // Each client's open acquisition: its lock.
    let mut open: BTreeMap<usize, String> = BTreeMap::new();
    let mut faults_open: Vec<(usize, Fault)> = Vec::new();
    let mut next_fault = 0;
    for s in steps {
        t += s.dt_us;
        let lock = if Some(s.client) == probe_client {
            "P".to_string()
        } else {
            format!("L{}", s.lock)
        };
        let op = |kind, lock: &str| Op::new(t, s.client, kind, lock, Mode::Exclusive);
        match s.action {
            0..=3 => match open.remove(&s.client) {
                None => {
                    out.push(Event::Invoke(op(OpKind::Acquire, &lock)));
                    open.insert(s.client, lock);
                }
                Some(lock) => {
                    let mut done = op(OpKind::Acquire, &lock);
                    out.push(match s.choice {
                        0..=2 => {
                            done.valid_until_us = (s.choice != 2).then_some(t + s.valid_us);
                            Event::Ok(done)
                        }
                        3 | 4 => Event::Fail(done),
                        _ => Event::Info(done),
                    });
                }
            },
            4 if !open.contains_key(&s.client) => {
                out.push(Event::Invoke(op(OpKind::Release, &lock)));
                out.push(Event::Ok(op(OpKind::Release, &lock)));
            }
            5 | 6 => {
                let (node, client) = (s.lock + s.choice as usize % 2, s.client);
                let fault = match s.choice {
                    0 => Fault::Crash {
                        node,
                        power_loss: false,
                    },
                    1 => Fault::Partition {
                        nodes: vec![node],
                        clients: vec![client],
                        direction: CutDirection::Both,
                    },
                    2 => Fault::Pause {
                        node: None,
                        client: Some(client),
                        point: None,
                    },
                    3 => Fault::ClockJump {
                        node: None,
                        client: Some(client),
                        by_us: s.valid_us as i64 - 2000,
                    },
                    4 => Fault::ClockJump {
                        node: Some(node),
                        client: None,
                        by_us: s.valid_us as i64,
                    },
                    _ => Fault::Partition {
                        nodes: vec![0, 1],
                        clients: vec![client, (client + 1) % 4],
                        direction: CutDirection::Both,
                    },
                };
                out.push(Event::Fault(FaultEvent {
                    t_us: t,
                    id: next_fault,
                    action: FaultAction::Start,
                    origin: Origin::Script,
                    fault: fault.clone(),
                }));
                faults_open.push((next_fault, fault));
                next_fault += 1;
            }
            7 | 8 if !faults_open.is_empty() => {
                let (id, fault) = faults_open.remove(s.choice as usize % faults_open.len());
                out.push(Event::Fault(FaultEvent {
                    t_us: t,
                    id,
                    action: FaultAction::End,
                    origin: Origin::Script,
                    fault,
                }));
            }
            9 if s.choice == 0 => out.push(Event::Heal { t_us: t }),
            10 if !open.contains_key(&s.client) => {
                // An acquisition outside the workload: a hold, but not an attempt.
                let mut inv = op(OpKind::Acquire, &lock);
                inv.phase = Phase::Probe;
                out.push(Event::Invoke(inv.clone()));
                inv.valid_until_us = Some(t + s.valid_us);
                out.push(Event::Ok(inv));
            }
            _ => {}
        }
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 1024, ..Default::default() })]

    /// On any history under faults, the online fault-tolerance judge (tolerance,
    /// heals, stalls, the probe and the penalty) finds what the batch one finds.
    #[test]
    fn the_online_tolerance_judge_finds_what_the_batch_one_finds(
        probe in proptest::bool::ANY,
        bound_us in proptest::sample::select(vec![0u64, 500, 3000]),
        steps in proptest::collection::vec(arb_fault_step(), 0..80),
    ) {
        let history = history_under_faults(probe, bound_us, &steps);
        check_against_references(&history).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
    }
}
