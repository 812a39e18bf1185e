//! The checker's findings must not change when its insides do (issue 24): every shipped
//! scenario that runs on the simulator, on three seeds, is checked and its findings are
//! compared two ways.
//!
//! - With what the checker of before the online sweep found, committed in
//!   `differential.digests`: per scenario and seed, a 128-bit digest (xxh3) of the
//!   history as JSONL and one of `lockstorm check`'s output on it. A history that
//!   changed is reported as such: the digests then say nothing about the checker.
//! - With the batch judges kept beside the online ones as references: the safety sweep
//!   over every hold (sorted as before) and the fencing-token check over them, and
//!   ([`reference`]) the starvation judge over every long wait and every read hold, and
//!   the percentiles from every latency and every wait length.
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

/// Checks `history` and compares every online judge with its batch reference: the
/// sweeps ([`reference_check`]), and the starvation and statistics judges fed what the
/// checker saw (every long wait, latency and wait length, which the test build records).
fn checked(history: &[Event]) -> Result<Findings, Malformed> {
    checked_online(history).map(|(f, _)| f)
}

/// [`checked`], and whether a checker without holds judged it too (its resource judge
/// did not give up), with the same findings but the holds.
fn checked_online(history: &[Event]) -> Result<(Findings, bool), Malformed> {
    let f = checked_with_holds(history)?;
    let mut checker = Checker::without_holds();
    for e in history {
        checker.observe(e)?;
    }
    let Some(online) = checker.try_finish() else {
        return Ok((f, false));
    };
    assert!(online.holds.is_empty());
    assert_eq!(
        serde_json::to_string(&online).unwrap(),
        serde_json::to_string(&f).unwrap(),
        "without holds: the findings differ"
    );
    assert_eq!(online.faults, f.faults);
    Ok((f, true))
}

fn checked_with_holds(history: &[Event]) -> Result<Findings, Malformed> {
    let mut checker = Checker::new();
    for e in history {
        checker.observe(e)?;
    }
    // The same names under the same numbers (the checker keeps its own).
    let mut locks = Locks::default();
    for id in 0..checker.locks.len() {
        locks.intern(checker.locks.name(id as LockId));
    }
    let long = checker.waits.every_long();
    let bound_us = checker.waits.bound_us();
    let latencies_us = checker.stats.every_latency_us.clone();
    let waits_us = checker.waits.every_wait_us.clone();
    let (f, online) = checker.finish_parts().expect("every hold is kept");
    reference_check(&f);
    reference_tolerance(history, &f, &online);

    let starvation = reference::starvation(&long, bound_us, &f.holds, &locks);
    let stalls: Vec<(u64, u64)> = f.driver_stalls.iter().map(|s| s.span()).collect();
    let end_us = history.last().map_or(0, Event::t_us);
    let (kept, set_aside) = liveness::set_aside(starvation, &stalls, end_us);
    let starved = |l: &[LivenessFinding]| -> Vec<LivenessFinding> {
        l.iter()
            .filter(|l| matches!(l, LivenessFinding::WriterStarvation { .. }))
            .cloned()
            .collect()
    };
    assert_eq!(kept, starved(&f.liveness), "starvation: online and batch differ");
    assert_eq!(
        set_aside,
        starved(&f.liveness_set_aside),
        "starvation set aside: online and batch differ"
    );

    let stats = reference::percentiles(&f.stats, &latencies_us, &waits_us);
    assert_eq!(
        stats, f.stats,
        "statistics: counted and sorted percentiles differ"
    );
    Ok(f)
}

#[test]
fn every_sim_scenario_is_judged_as_the_checker_before_the_online_sweep_judged_it() {
    let scenarios = sim_scenarios();
    assert!(scenarios.len() >= 20, "found only {}", scenarios.len());
    let mut lines = Vec::new();
    for (name, scenario) in &scenarios {
        for seed in scenario.seed..scenario.seed + SEEDS {
            let history = crate::sim::run(scenario, seed).history;
            let (f, judged) = checked_online(&history).unwrap_or_else(|e| panic!("{name} seed {seed}: {e}"));
            assert!(
                judged,
                "{name} seed {seed}: a write the online resource judge cannot judge"
            );
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
    /// 0 and 1: that lock; 2 and 3: the client's own (so a client often retries one
    /// lock, and a writer's wait runs long).
    lock: usize,
    action: u8,
    /// 0 to 2: exclusive, read, write; 3 to 5: the client's own mode.
    mode: u8,
    dt_us: u64,
    valid_us: Option<u64>,
    fence: Option<u64>,
    /// Which token a write names, or an acquisition takes (see [`history_of`]).
    pick: u8,
    /// How far back the picked token is.
    back: usize,
    /// What follows a write at its very time: nothing (0), the writer acquiring the
    /// lock with the token it named (1), the writer releasing it (2), or the next
    /// client acquiring it (3).
    then: u8,
}

fn arb_step() -> impl proptest::strategy::Strategy<Value = Step> {
    use proptest::prelude::*;
    (
        (0..4usize, 0..4usize, 0..15u8, 0..6u8),
        prop::sample::select(vec![0u64, 0, 1, 3, 10, 40]),
        prop::option::weighted(0.9, 0..120u64),
        prop::option::weighted(0.5, 0..8u64),
        (0..8u8, prop::sample::select(vec![0usize, 0, 0, 1, 2, 3]), 0..6u8),
    )
        .prop_map(
            |((client, lock, action, mode), dt_us, valid_us, fence, (pick, back, then))| Step {
                client,
                lock,
                action,
                mode,
                dt_us,
                valid_us,
                fence,
                pick,
                back,
                then,
            },
        )
}

/// A well-formed history from `steps`, after a meta line stating `bound_us` as the
/// writers' wait bound: acquisitions (some failed or unknown, some taking a token the
/// client held before), releases, extensions, beliefs and losses, and writes (most
/// accepted) naming the token the client holds, one it held before, one of another
/// client, one that no hold has, or one a later acquisition of the client may take;
/// at times with many ties. With `own_writes`, a write names its client's latest token
/// on the lock, as lockstorm's own clients' do (so the online resource judge judges it).
fn history_of(bound_us: Option<u64>, steps: &[Step], own_writes: bool) -> Vec<Event> {
    use crate::history::{Belief, Lost, ResourceWrite};
    let mut t = 0;
    let mut out = vec![Event::Meta(Meta {
        t_us: 0,
        scenario: "random".into(),
        seed: 0,
        algorithm: "random".into(),
        nodes: 3,
        clients: 4,
        ttl_ms: 1,
        liveness_bound_us: 1,
        writer_wait_bound_us: bound_us,
        worker: None,
        probe_client: None,
        cut: None,
        deployment: None,
        mitigations: None,
    })];
    // The token each client holds each lock with; every token each client took, per lock.
    let mut held: BTreeMap<(usize, usize), String> = BTreeMap::new();
    let mut taken: BTreeMap<(usize, usize), Vec<String>> = BTreeMap::new();
    let mut every: Vec<String> = Vec::new();
    // Tokens each client wrote with on each lock before any hold had them.
    let mut promised: BTreeMap<(usize, usize), Vec<String>> = BTreeMap::new();
    for (n, s) in steps.iter().enumerate() {
        t += s.dt_us;
        let lock_n = if s.lock < 2 { s.lock } else { s.client % 2 };
        let lock = format!("L{lock_n}");
        let mode_n = if s.mode < 3 { s.mode as usize } else { s.client % 3 };
        let mode = [Mode::Exclusive, Mode::Read, Mode::Write][mode_n];
        let key = (s.client, lock_n);
        let op = |kind| Op::new(t, s.client, kind, lock.clone(), mode);
        let token = held.get(&key).cloned();
        let before = taken.get(&key).cloned().unwrap_or_default();
        let back = |list: &[String]| list.len().checked_sub(1 + s.back).map(|i| list[i].clone());
        match (s.action, token) {
            (0..=2, _) => {
                out.push(Event::Invoke(op(OpKind::Acquire)));
                let mut ok = op(OpKind::Acquire);
                // Now and then a token the client held before, or wrote with before.
                let fresh = format!("t{n}");
                let token = match s.pick {
                    0 => back(&before).unwrap_or(fresh),
                    1 | 2 => promised.get_mut(&key).and_then(|p| p.pop()).unwrap_or(fresh),
                    _ => fresh,
                };
                ok.token = Some(token.clone().into());
                ok.valid_until_us = s.valid_us.map(|v| t + v);
                ok.fence = s.fence;
                ok.nodes = Some([s.client % 3].iter().collect());
                out.push(Event::Ok(ok));
                held.insert(key, token.clone());
                taken.entry(key).or_default().push(token.clone());
                every.push(token);
            }
            (3..=5, _) => {
                out.push(Event::Invoke(op(OpKind::Acquire)));
                out.push(if s.pick < 6 {
                    Event::Fail(op(OpKind::Acquire))
                } else {
                    Event::Info(op(OpKind::Acquire))
                });
            }
            (6, Some(token)) => {
                let mut ext = op(OpKind::Extend);
                ext.token = Some(token.clone().into());
                out.push(Event::Invoke(ext.clone()));
                ext.valid_until_us = s.valid_us.map(|v| t + v);
                out.push(Event::Ok(ext));
            }
            (7, Some(token)) => out.push(Event::Belief(Belief {
                t_us: t,
                client: s.client,
                lock: lock.into(),
                token: Some(token.into()),
                valid_until_us: t + s.valid_us.unwrap_or(0) / 2,
            })),
            (8, Some(token)) if s.mode == 0 => {
                out.push(Event::Lost(Lost {
                    t_us: t,
                    client: s.client,
                    lock: lock.into(),
                    token: Some(token.into()),
                }));
                held.remove(&key);
            }
            (9..=12, _) if own_writes && before.is_empty() => {}
            (9..=12, token) => {
                let named = match s.pick {
                    _ if own_writes => before.last().cloned(),
                    0..=2 => token.or_else(|| back(&before)),
                    3 => back(&before),
                    4 => back(&every),
                    5 | 6 => {
                        let token = format!("p{n}");
                        promised.entry(key).or_default().push(token.clone());
                        Some(token)
                    }
                    _ => None,
                }
                .unwrap_or_else(|| "none".into());
                out.push(Event::Write(ResourceWrite {
                    t_us: t,
                    client: s.client,
                    lock: lock.clone().into(),
                    token: named.clone().into(),
                    fence: s.fence,
                    accepted: s.action != 12,
                }));
                // A hold that changes at the write's very time.
                let (client, token) = match s.then {
                    1 => (s.client, named),
                    2 if held.contains_key(&key) => {
                        out.push(Event::Invoke(op(OpKind::Release)));
                        out.push(Event::Ok(op(OpKind::Release)));
                        held.remove(&key);
                        continue;
                    }
                    3 => ((s.client + 1) % 4, format!("t{n}")),
                    _ => continue,
                };
                let acquire = Op::new(t, client, OpKind::Acquire, lock.clone(), mode);
                out.push(Event::Invoke(acquire.clone()));
                let mut ok = acquire;
                ok.token = Some(token.clone().into());
                ok.valid_until_us = s.valid_us.map(|v| t + v);
                ok.nodes = Some([client % 3].iter().collect());
                out.push(Event::Ok(ok));
                held.insert((client, lock_n), token.clone());
                taken.entry((client, lock_n)).or_default().push(token.clone());
                every.push(token);
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
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 2048, ..Default::default() })]

    /// On any history, every online judge finds what its batch reference finds, in
    /// the same order: the safety sweep, the fencing tokens, the starvation of writers
    /// and the statistics.
    #[test]
    fn the_online_judges_find_what_the_batch_ones_find(
        bound_us in proptest::option::weighted(0.8, 0..60u64),
        steps in proptest::collection::vec(arb_step(), 0..80),
        own_writes: bool,
    ) {
        let history = history_of(bound_us, &steps, own_writes);
        checked(&history).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
    }
}

/// The random histories reach every case of the judges they test: stale writes with and
/// without a hold, late ones, writes a later hold takes, holds of several segments,
/// other holders still open at the stale write, and starvation.
#[test]
fn the_random_histories_exercise_every_judge() {
    use proptest::strategy::{Strategy, ValueTree};
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let histories = (
        proptest::option::weighted(0.8, 0..60u64),
        proptest::collection::vec(arb_step(), 0..80),
    );
    let mut seen = BTreeMap::<&str, u64>::new();
    for i in 0..500 {
        let (bound_us, steps) = histories.new_tree(&mut runner).expect("a history").current();
        let history = history_of(bound_us, &steps, i % 2 == 1);
        let (f, judged) = checked_online(&history).expect("well formed");
        assert!(
            judged || i % 2 == 0,
            "a history of own writes the online judge gave up on"
        );
        let mut count = |what, n: usize| *seen.entry(what).or_default() += n as u64;
        let stale = &f.resource_violations;
        count("judged online", usize::from(judged));
        count("judged online, stale", usize::from(judged) * stale.len());
        count(
            "judged online, holder open then",
            usize::from(judged) * stale.iter().filter(|v| v.holder.end_us > v.write_us).count(),
        );
        count(
            "stale, no hold",
            stale.iter().filter(|v| v.overwritten_us.is_none()).count(),
        );
        count(
            "stale, held",
            stale.iter().filter(|v| v.overwritten_us.is_some()).count(),
        );
        count(
            "holder open then",
            stale.iter().filter(|v| v.holder.end_us > v.write_us).count(),
        );
        count("late", f.resource.late as usize);
        let starved = |l: &&LivenessFinding| matches!(l, LivenessFinding::WriterStarvation { .. });
        count("starvation", f.liveness.iter().filter(starved).count());
        let mut segments = BTreeMap::<_, usize>::new();
        for h in &f.holds {
            *segments
                .entry((h.client, h.lock.as_str(), h.token.as_deref()))
                .or_default() += 1;
        }
        count("several segments", segments.values().filter(|&&n| n > 1).count());
        for (i, e) in history.iter().enumerate() {
            let Event::Write(w) = e else { continue };
            let takes = |e: &Event| {
                matches!(e, Event::Ok(o) if o.op == OpKind::Acquire && o.client == w.client
                    && o.lock == w.lock && o.token.as_deref() == Some(w.token.as_str()))
            };
            let later = !history[..i].iter().any(takes) && history[i..].iter().any(takes);
            count("taken later", usize::from(w.accepted && later));
        }
    }
    assert_eq!(seen.len(), 10, "{seen:?}");
    assert!(seen.values().all(|&n| n > 0), "{seen:?}");
}

/// The fault-tolerance judge as it was before it judged online, over every acquisition
/// and hold of `history`, against what the online one found (`online`).
fn reference_tolerance(history: &[Event], f: &Findings, online: &tolerance::Outcome) {
    let mut batch = tolerance::batch::Batch::default();
    let mut locks = crate::history::compact::Locks::default();
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
        cut: None,
        deployment: None,
        mitigations: None,
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
        checked(&history).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
    }
}
