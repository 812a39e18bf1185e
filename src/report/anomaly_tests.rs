//! Each story kind, checked claim by claim against its history the way a reader would
//! (issue 22): the anomaly it names, the node events and faults it cites, and the times
//! it quotes from them. The scenarios are the committed ones, on the seed the analysis
//! reports (1).

use super::anomaly::{Anomaly, Named};
use super::narrative::{explain, secs, span, Story};
use super::view::RunView;
use crate::checker::{check, Findings, Hold};
use crate::fault::Fault;
use crate::history::{Event, NodeAction, NodeEvent};
use crate::scenario::Scenario;

fn scenario(file: &str) -> Scenario {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    Scenario::from_text(&text, &path, &[]).unwrap()
}

fn run(s: &Scenario) -> (Vec<Event>, Findings) {
    let history = crate::sim::run(s, 1).history;
    let findings = check(&history).unwrap();
    (history, findings)
}

/// The first violation's story.
fn first_story(file: &str) -> (Vec<Event>, Findings, Story) {
    let (history, findings) = run(&scenario(file));
    let story = {
        let view = RunView::new(&history, &findings);
        let v = view
            .violations()
            .first()
            .unwrap_or_else(|| panic!("{file}: no violation"));
        explain(&view, v)
    };
    (history, findings, story)
}

/// The violation a report tells first: the longest ([`super::severity`]).
fn worst(findings: &Findings) -> &crate::checker::Violation {
    super::severity::Worst::of(findings).violations[0]
}

fn node_event(history: &[Event], line: usize) -> Option<&NodeEvent> {
    match &history[line - 1] {
        Event::Node(n) => Some(n),
        _ => None,
    }
}

fn fault_at(history: &[Event], line: usize) -> Option<&Fault> {
    match &history[line - 1] {
        Event::Fault(f) => Some(&f.fault),
        _ => None,
    }
}

/// What every story owes its reader: the lines it cites exist, each "(line N)" of its
/// cause is one of them, and the time quoted just before it is that line's time (or,
/// for an expiry, when the node's clock reached it). No hedge where the cause is named.
pub(super) fn check_claims(history: &[Event], story: &Story) -> Named {
    let named = story.anomaly.clone().expect("every story names its anomaly");
    assert_ne!(named.kind, Anomaly::Unnamed, "{}", story.why);
    for &l in &named.lines {
        assert!(l >= 1 && l <= history.len(), "line {l} of {}", history.len());
    }
    let cause = &named.cause;
    let mut rest = cause.as_str();
    while let Some(at) = rest.find("(line ") {
        let (before, after) = rest.split_at(at);
        let n: usize = after["(line ".len()..]
            .split(')')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            named.lines.contains(&n),
            "line {n} is cited in the cause but not in the evidence: {cause}"
        );
        if let Some(t) = before.rfind("t=") {
            let quoted = before[t + 2..].split(" s").next().unwrap();
            let e = &history[n - 1];
            let mut times = vec![secs(e.t_us())];
            if let Event::Node(node) = e {
                times.extend(node.expired_at_us.map(secs));
            }
            assert!(
                times.iter().any(|s| s == &format!("{quoted} s")),
                "t={quoted} s is not the time of line {n} ({e:?}): {cause}"
            );
        }
        rest = &after[1..];
    }
    if named.from_node_events {
        assert!(
            !story.why.contains("had expired, been lost, or been deleted"),
            "the cause is known, yet the story hedges: {}",
            story.why
        );
        if !matches!(
            named.kind,
            Anomaly::MinorityQuorum | Anomaly::ExtensionWithoutTokenCheck
        ) {
            assert!(story.why.contains(&named.cause), "{}", story.why);
        }
    }
    named
}

/// The cited node events of `kind` about `holder`'s key, on nodes both holds had.
fn cited<'h>(
    history: &'h [Event],
    named: &Named,
    action: NodeAction,
    a: &Hold,
    b: &Hold,
) -> Vec<&'h NodeEvent> {
    let found: Vec<&NodeEvent> = named
        .lines
        .iter()
        .filter_map(|&l| node_event(history, l))
        .filter(|n| n.action == action && n.token.as_deref() == a.token.as_deref())
        .collect();
    for n in &found {
        assert!(
            a.nodes.contains(&n.node) && b.nodes.contains(&n.node),
            "node {} is not shared",
            n.node
        );
    }
    found
}

#[test]
fn replica_failover_names_the_key_lost_and_the_replication_lag() {
    let (history, findings, story) = first_story("replica-failover.toml");
    let named = check_claims(&history, &story);
    assert_eq!(named.kind, Anomaly::KeyLostOnFailover, "{}", named.cause);
    let v = worst(&findings);
    let lost = cited(&history, &named, NodeAction::Unreplicated, &v.first, &v.second);
    assert!(!lost.is_empty(), "{}", named.cause);
    assert_eq!(lost[0].lag_us, Some(5_000_000), "the scenario's lag");
    assert!(
        story.why.contains(&format!("trailed it by {}", span(5_000_000))),
        "{}",
        story.why
    );
}

#[test]
fn node_clock_jump_names_the_early_expiry_and_the_node_the_partitions_leave() {
    let (history, findings, story) = first_story("node-clock-jump.toml");
    let named = check_claims(&history, &story);
    assert_eq!(named.kind, Anomaly::EarlyExpiryByNodeClock, "{}", named.cause);
    let v = worst(&findings);
    let expired = cited(&history, &named, NodeAction::Expired, &v.first, &v.second);
    assert!(!expired.is_empty());
    let until = v.first.end_us;
    for e in &expired {
        assert!(e.expired_at_us.unwrap() < until, "it expired early");
        // The node's clock jumped forward: a cited fault line says so.
        assert!(named.lines.iter().any(|&l| matches!(
            fault_at(&history, l),
            Some(Fault::ClockJump { node: Some(n), by_us, .. }) if *n == e.node && *by_us > 0
        )));
    }
    // The partitions leave exactly the shared node to both: the story says which.
    let shared: Vec<usize> = v
        .first
        .nodes
        .iter()
        .copied()
        .filter(|n| v.second.nodes.contains(n))
        .collect();
    if story.why.contains("as the only") {
        let named_node = format!("left node {} as the only node", shared[0]);
        assert_eq!(shared.len(), 1);
        assert!(story.why.contains(&named_node), "{}", story.why);
    }
}

#[test]
fn client_clock_slow_says_when_the_keys_expired() {
    let (history, findings, story) = first_story("client-clock-slow-during-hold.toml");
    let named = check_claims(&history, &story);
    assert_eq!(named.kind, Anomaly::HolderClockSlow, "{}", named.cause);
    let v = worst(&findings);
    let expired = cited(&history, &named, NodeAction::Expired, &v.first, &v.second);
    assert!(!expired.is_empty());
    for e in expired {
        let at = secs(e.expired_at_us.unwrap());
        assert!(
            story.why.contains(&format!("node {} at t={at} (line", e.node)),
            "{}",
            story.why
        );
    }
    assert!(named.lines.iter().any(|&l| matches!(
        fault_at(&history, l),
        Some(Fault::ClockRate { client: Some(c), rate, .. }) if *c == v.first.client && *rate < 1.0
    )));
}

#[test]
fn a_restart_without_persistence_names_the_key_lost_at_the_crash() {
    let (history, findings, story) = first_story("restart-without-persistence.toml");
    let named = check_claims(&history, &story);
    assert_eq!(named.kind, Anomaly::KeyLostOnRestart, "{}", named.cause);
    let v = worst(&findings);
    let lost = cited(&history, &named, NodeAction::Lost, &v.first, &v.second);
    assert!(!lost.is_empty());
    assert!(named.lines.iter().any(|&l| matches!(
        fault_at(&history, l),
        Some(Fault::Crash { node, .. }) if *node == lost[0].node
    )));
}

#[test]
fn a_plain_del_release_names_the_release_without_a_token_check() {
    let (history, findings, story) = first_story("release-del.toml");
    let named = check_claims(&history, &story);
    assert_eq!(named.kind, Anomaly::ReleaseWithoutTokenCheck, "{}", named.cause);
    let v = worst(&findings);
    let deleted = cited(&history, &named, NodeAction::Deleted, &v.first, &v.second);
    assert!(!deleted.is_empty());
    for d in deleted {
        assert_eq!(d.checked, Some(false));
        assert_ne!(d.client, Some(v.first.client), "another client's release");
    }
}

#[test]
fn no_elapsed_check_names_the_miscomputed_validity() {
    let (history, findings, story) = first_story("network-delay-no-elapsed-check.toml");
    let named = check_claims(&history, &story);
    assert_eq!(named.kind, Anomaly::ValidityMiscomputed, "{}", named.cause);
    let v = worst(&findings);
    // Client 0's replies come 3 s late: its own keys, set first, were the ones gone.
    let (victim, other) = if named.victim == Some(v.first.client) {
        (&v.first, &v.second)
    } else {
        (&v.second, &v.first)
    };
    let expired = cited(&history, &named, NodeAction::Expired, victim, other);
    assert!(!expired.is_empty());
    for e in expired {
        assert!(
            e.expired_at_us.unwrap() < victim.start_us,
            "expired before its ok came"
        );
    }
}

#[test]
fn a_minority_quorum_and_an_unchecked_extension_are_named() {
    let (history, findings, story) = first_story("redlock-minority-quorum.toml");
    assert_eq!(check_claims(&history, &story).kind, Anomaly::MinorityQuorum);
    // Issue 41: "each is too small to be a majority" was said of quorums of 3 of 5. Each
    // story names only the quorums below a majority, with their true size.
    let view = RunView::new(&history, &findings);
    let mut majorities_seen = 0;
    for v in view.violations() {
        let named = super::anomaly::name_violation(&view, v, &[]);
        assert_eq!(named.kind, Anomaly::MinorityQuorum, "{}", named.cause);
        for h in [&v.first, &v.second] {
            let claim = format!("client {}'s has {} of 5", h.client, h.nodes.len());
            let small = h.nodes.len() < 3;
            assert_eq!(named.cause.contains(&claim), small, "{claim}: {}", named.cause);
            majorities_seen += usize::from(!small);
        }
    }
    assert!(
        majorities_seen > 0,
        "the run has a majority quorum beside a minority one"
    );
    let (history, _, story) = first_story("extend-pexpire.toml");
    assert_eq!(
        check_claims(&history, &story).kind,
        Anomaly::ExtensionWithoutTokenCheck
    );
}

#[test]
fn an_unfenced_late_write_is_named_with_the_pause_that_held_it() {
    let (history, findings) = run(&scenario("fencing-pause-unfenced.toml"));
    let view = RunView::new(&history, &findings);
    let rv = view.findings.resource_violations.first().expect("a stale write");
    let story = super::stale::explain(&view, rv);
    let named = story.anomaly.clone().unwrap();
    assert_eq!(named.kind, Anomaly::UnfencedStaleWrite);
    assert!(named.lines.iter().any(|&l| matches!(
        fault_at(&history, l),
        Some(Fault::Pause { client: Some(c), .. }) if *c == rv.client
    )));
    assert!(matches!(&history[*named.lines.last().unwrap() - 1], Event::Write(w) if w.client == rv.client));
}

#[test]
fn every_unsafe_analysis_scenario_gets_a_named_anomaly_whose_claims_hold() {
    for file in [
        "aof-everysec-power-loss.toml",
        "rw-writer-clock-ahead.toml",
        "token-per-client.toml",
    ] {
        let (history, _, story) = first_story(file);
        let named = check_claims(&history, &story);
        assert!(named.from_node_events, "{file}: {}", named.cause);
    }
}

/// A worker client's history, as the real backend writes it: the `ok` names no nodes and
/// carries the library's own value as `worker_token`, and the node lines (from the key
/// watcher) carry that value and no client.
fn as_worker_history(history: &[Event]) -> Vec<Event> {
    let lib = |t: &str| format!("lib-{t}");
    history
        .iter()
        .cloned()
        .map(|e| match e {
            Event::Ok(mut op) => {
                op.nodes = None;
                op.worker_token = op.token.as_deref().map(lib);
                Event::Ok(op)
            }
            Event::Node(mut n) => {
                n.client = None;
                n.token = n.token.as_deref().map(lib).map(Into::into);
                Event::Node(n)
            }
            other => other,
        })
        .collect()
}

#[test]
fn a_worker_clients_story_finds_its_nodes_and_anomaly_from_the_key_events() {
    let (history, findings, story) = first_story("restart-without-persistence.toml");
    let worker = as_worker_history(&history);
    let worker_findings = check(&worker).unwrap();
    let view = RunView::new(&worker, &worker_findings);
    let v = &view.violations()[0];
    let (a, b) = (&worst(&findings).first, &worst(&findings).second);
    // A worker's ok names no nodes: the checker takes them from the lines holding its value.
    assert_eq!(v.first.nodes.to_vec(), a.nodes.to_vec());
    let seen = super::anomaly::violation_with_nodes_seen(&view, v);
    assert_eq!(seen.first.nodes.to_vec(), a.nodes.to_vec());
    assert_eq!(seen.second.nodes.to_vec(), b.nodes.to_vec());
    let told = explain(&view, v);
    let named = check_claims(&worker, &told);
    assert_eq!(named.kind, Anomaly::KeyLostOnRestart, "{}", named.cause);
    assert!(named.from_node_events);
    assert_eq!(named.lines, story.anomaly.unwrap().lines);
}

#[test]
fn a_history_without_node_events_is_named_from_its_faults() {
    let mut s = scenario("restart-without-persistence.toml");
    s.node_events = false;
    let (history, findings) = run(&s);
    assert!(!history.iter().any(|e| matches!(e, Event::Node(_))));
    let view = RunView::new(&history, &findings);
    let story = explain(&view, view.violations()[0]);
    let named = story.anomaly.clone().unwrap();
    assert_eq!(named.kind, Anomaly::KeyLostOnRestart);
    assert!(!named.from_node_events);
    assert!(named.sentence(true).contains("from the faults alone"));
    assert!(
        story.why.contains("had expired, been lost, or been deleted"),
        "{}",
        story.why
    );
    // Node events change nothing else: the same run with them has the same holds.
    let (with, with_findings) = run(&scenario("restart-without-persistence.toml"));
    let ops = |h: &[Event]| {
        h.iter()
            .filter(|e| !matches!(e, Event::Node(_)))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(ops(&with), history);
    let holds = |f: &Findings| {
        f.violations
            .iter()
            .map(|v| {
                (
                    v.first.client,
                    v.first.start_us,
                    v.second.client,
                    v.second.start_us,
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(holds(&with_findings), holds(&findings));
}

#[test]
fn every_acknowledged_acquire_has_its_set_on_each_node_it_names() {
    // The reader's first check of a story's "node 2 granted L0 to both": each node an
    // `ok` names set that client's key with that token, between its invoke and its ok.
    let (history, _) = run(&scenario("redlock-chaos.toml"));
    let mut asked = std::collections::BTreeMap::new();
    let mut sets: Vec<(usize, usize, String, usize)> = Vec::new();
    let mut checked = 0;
    for (i, e) in history.iter().enumerate() {
        match e {
            Event::Invoke(op) => {
                asked.insert(op.client, i);
            }
            Event::Node(n) if n.action == NodeAction::Set => {
                sets.push((i, n.node, n.token.clone().unwrap().to_string(), n.client.unwrap()));
            }
            Event::Ok(op) if op.op == crate::history::OpKind::Acquire => {
                let from = asked[&op.client];
                for &node in op.nodes.iter().flatten() {
                    assert!(
                        sets.iter()
                            .rev()
                            .take_while(|s| s.0 > from)
                            .any(|(_, n, t, c)| *n == node
                                && op.token.as_deref() == Some(t.as_str())
                                && *c == op.client),
                        "line {}: node {node} acknowledged, but no set of client {}'s token there",
                        i + 1,
                        op.client
                    );
                    checked += 1;
                }
            }
            _ => {}
        }
    }
    assert!(checked > 100, "{checked}");
}

/// The first 25 lines of seed 1 of the committed real release-del run
/// (reports/analysis/real/release-del): on the real backend a plain DEL's line comes from
/// its reply, with no token, and client 1's DEL (line 17) was answered before client 0's
/// SET (line 18) although the node applied it after: it is what made room for client 1's
/// own SET (line 23) while client 0 held the lock (lines 19 and 24).
const REAL_RELEASE_DEL: &str = r#"{"type":"meta","t_us":0,"scenario":"release-del","seed":1,"algorithm":"single","nodes":1,"clients":4,"ttl_ms":2000,"liveness_bound_us":2310000}
{"type":"invoke","t_us":2163,"client":1,"op":"acquire","lock":"L0","mode":"exclusive"}
{"type":"node","t_us":3346,"node":0,"lock":"L0","key":"L0","action":"set","client":1,"token":"569d9a0fc8073e94","ttl_ms":2000}
{"type":"ok","t_us":3346,"client":1,"op":"acquire","lock":"L0","mode":"exclusive","token":"569d9a0fc8073e94","valid_until_us":1980163,"nodes":[0],"attempts":1}
{"type":"invoke","t_us":3989,"client":2,"op":"acquire","lock":"L0","mode":"exclusive"}
{"type":"node","t_us":5721,"node":0,"lock":"L0","key":"L0","action":"deleted","client":2,"checked":false}
{"type":"invoke","t_us":8099,"client":3,"op":"acquire","lock":"L0","mode":"exclusive"}
{"type":"node","t_us":8938,"node":0,"lock":"L0","key":"L0","action":"set","client":3,"token":"6ebe44436b141ec4","ttl_ms":2000}
{"type":"ok","t_us":8938,"client":3,"op":"acquire","lock":"L0","mode":"exclusive","token":"6ebe44436b141ec4","valid_until_us":1986099,"nodes":[0],"attempts":1}
{"type":"invoke","t_us":10790,"client":0,"op":"acquire","lock":"L0","mode":"exclusive"}
{"type":"node","t_us":12480,"node":0,"lock":"L0","key":"L0","action":"deleted","client":0,"checked":false}
{"type":"node","t_us":16311,"node":0,"lock":"L0","key":"L0","action":"set","client":2,"token":"c060ebd04c77da24","ttl_ms":2000}
{"type":"ok","t_us":16311,"client":2,"op":"acquire","lock":"L0","mode":"exclusive","token":"c060ebd04c77da24","valid_until_us":1992820,"nodes":[0],"attempts":2}
{"type":"node","t_us":16790,"node":0,"lock":"L0","key":"L0","action":"deleted","client":0,"checked":false}
{"type":"invoke","t_us":22960,"client":1,"op":"release","lock":"L0","mode":"exclusive"}
{"type":"ok","t_us":22960,"client":1,"op":"release","lock":"L0","mode":"exclusive","token":"569d9a0fc8073e94"}
{"type":"node","t_us":23598,"node":0,"lock":"L0","key":"L0","action":"deleted","client":1,"checked":false}
{"type":"node","t_us":23607,"node":0,"lock":"L0","key":"L0","action":"set","client":0,"token":"39c5ce0a1c4fdf63","ttl_ms":2000}
{"type":"ok","t_us":23607,"client":0,"op":"acquire","lock":"L0","mode":"exclusive","token":"39c5ce0a1c4fdf63","valid_until_us":2000960,"nodes":[0],"attempts":3}
{"type":"invoke","t_us":30831,"client":1,"op":"acquire","lock":"L0","mode":"exclusive"}
{"type":"invoke","t_us":32217,"client":2,"op":"release","lock":"L0","mode":"exclusive"}
{"type":"ok","t_us":32217,"client":2,"op":"release","lock":"L0","mode":"exclusive","token":"c060ebd04c77da24"}
{"type":"node","t_us":33158,"node":0,"lock":"L0","key":"L0","action":"set","client":1,"token":"26601a4310013960","ttl_ms":2000}
{"type":"ok","t_us":33158,"client":1,"op":"acquire","lock":"L0","mode":"exclusive","token":"26601a4310013960","valid_until_us":2008831,"nodes":[0],"attempts":1}
{"type":"node","t_us":33308,"node":0,"lock":"L0","key":"L0","action":"deleted","client":2,"checked":false}"#;

#[test]
fn a_real_plain_del_answered_before_the_set_it_removed_is_named_from_the_nodes_order() {
    let history: Vec<Event> = REAL_RELEASE_DEL
        .lines()
        .map(|l| crate::history::parse_line(l).unwrap())
        .collect();
    let findings = check(&history).unwrap();
    let view = RunView::new(&history, &findings);
    let v = view
        .violations()
        .iter()
        .find(|v| v.first.ok_line == 19 && v.second.ok_line == 24)
        .cloned()
        .expect("client 0 (line 19) and client 1 (line 24) held L0 at once");
    let story = explain(&view, v);
    let named = check_claims(&history, &story);
    assert_eq!(named.kind, Anomaly::ReleaseWithoutTokenCheck, "{}", named.cause);
    for line in [17, 18, 23] {
        assert!(
            named.lines.contains(&line),
            "line {line} not cited: {:?} {}",
            named.lines,
            named.cause
        );
    }
    assert!(
        named.cause.contains("client 1's release, a plain DEL")
            && named.cause.contains("client 0's SET (line 18)"),
        "{}",
        named.cause
    );
}

#[test]
fn a_finding_no_kind_fits_reads_as_what_the_history_tells_never_as_a_name() {
    let named = |from_node_events| Named {
        kind: Anomaly::Unnamed,
        cause: "the history does not show why client 0's key was gone when client 1 got the lock".into(),
        lines: vec![3, 5],
        from_node_events,
        victim: None,
    };
    let faults_alone = named(false);
    assert_eq!(
        faults_alone.name(),
        "not named (the history does not show why the key was gone)"
    );
    assert!(faults_alone
        .sentence(true)
        .starts_with("Anomaly: not named (the history"));
    assert_eq!(
        named(true).name(),
        "not named (what the nodes did fits no named anomaly)"
    );
    for n in [faults_alone.name(), named(true).name()] {
        assert!(!n.to_lowercase().contains("unnamed"), "{n}");
    }
    let lost = Named {
        kind: Anomaly::KeyLostOnRestart,
        ..named(true)
    };
    assert_eq!(lost.name(), "key lost on restart");
}
