//! Stories of library runs (issue 37, item 8), checked claim by claim against the lines
//! they cite, as a reader would check them. A library run's clients are worker processes:
//! their `ok` lines name no nodes and carry the library's own value (`worker_token`), and
//! their node lines come from the key watcher, with that value and no client. A library
//! may reuse its value across the attempts of one acquire, so a `set` of the value is not
//! by itself a node the acquisition holds.
//!
//! The histories are copies of committed library reports (testdata/README.md). Every
//! claim is checked against an oracle written here from the history alone: each node a
//! story says an acquisition holds had its value at the `ok`; each node it says granted
//! the lock to both had both values; each "(line N)" is a line about the node and the
//! time quoted beside it; each set it cites as the holder's is the one the acquisition
//! kept; each fault it names hit what it says; the banner says no fault acted only when
//! the story tells none; and the timeline of the workload's lock draws no hold of the
//! probe's.

use super::anomaly_tests::check_claims;
use super::banner;
use super::narrative::{explain, secs, Story};
use super::view::RunView;
use crate::checker::{check, Findings, Hold};
use crate::fault::Fault;
use crate::history::{Event, NodeAction, NodeEvent, OpKind};

fn load(name: &str) -> Vec<Event> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/report/testdata")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .map(|l| crate::history::parse_line(l).unwrap())
        .collect()
}

/// One acquisition as its lines place it: its client, the library's value, and the lines
/// of its `invoke`, its `ok` and the client's next `invoke` (1-based).
struct Acq {
    client: usize,
    value: String,
    invoke: usize,
    ok: usize,
    next: usize,
}

fn acq_of(history: &[Event], h: &Hold) -> Acq {
    let Event::Ok(ok) = &history[h.ok_line - 1] else {
        panic!("line {} is not an ok", h.ok_line)
    };
    let invoke = (0..h.ok_line - 1)
        .rev()
        .find(|&i| matches!(&history[i], Event::Invoke(op) if op.client == h.client && op.op == OpKind::Acquire))
        .unwrap()
        + 1;
    let next = (h.ok_line..history.len())
        .find(|&i| matches!(&history[i], Event::Invoke(op) if op.client == h.client))
        .map_or(history.len() + 1, |i| i + 1);
    Acq {
        client: h.client,
        value: ok.worker_token.clone().expect("a library's ok carries its value"),
        invoke,
        ok: h.ok_line,
        next,
    }
}

fn node_line(history: &[Event], line: usize) -> Option<&NodeEvent> {
    match history.get(line.wrapping_sub(1))? {
        Event::Node(n) => Some(n),
        _ => None,
    }
}

/// The lines of `a`'s value on `node` from its invoke to the client's next one.
fn value_lines<'h>(history: &'h [Event], a: &Acq, node: usize) -> Vec<(usize, &'h NodeEvent)> {
    (a.invoke..a.next)
        .filter_map(|l| node_line(history, l).map(|n| (l, n)))
        .filter(|(_, n)| n.node == node && n.token.as_deref() == Some(a.value.as_str()))
        .collect()
}

/// The oracle: the line of the `set` of `a`'s value on `node` that the acquisition kept,
/// read in the node's order (the watcher's lines of one node are). Before the ok, a set
/// puts the value there and a removal takes it away (only a `deleted` when `granted`:
/// a node that removed the key itself had still granted it); after the ok, the first line
/// of the value on the node can only be a set of the acquire that was seen late.
fn kept_set(history: &[Event], a: &Acq, node: usize, granted: bool) -> Option<usize> {
    let lines = value_lines(history, a, node);
    let mut kept = None;
    for (l, n) in lines.iter().filter(|(l, _)| *l < a.ok) {
        match n.action {
            NodeAction::Set => kept = Some(*l),
            NodeAction::Deleted => kept = None,
            x if x.removes() && !granted => kept = None,
            _ => {}
        }
    }
    let before = lines.iter().any(|(l, _)| *l < a.ok);
    match lines.iter().find(|(l, _)| *l > a.ok) {
        Some((l, n)) if kept.is_none() && !before && n.action == NodeAction::Set => Some(*l),
        _ => kept,
    }
}

/// `text`'s numbers after `after` ("nodes 0,1,2" gives [0, 1, 2]).
fn numbers_after(text: &str, after: &str) -> Option<Vec<usize>> {
    let at = text.find(after)? + after.len();
    let list: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .collect();
    Some(list.split(',').filter_map(|n| n.parse().ok()).collect())
}

/// The last "node N" (not "nodes") in `text`.
fn last_node(text: &str) -> Option<usize> {
    text.rmatch_indices("node ")
        .find_map(|(i, _)| numbers_after(&text[i..], "node ").and_then(|v| v.first().copied()))
}

/// Every sentence of a story, one per step, then the overlap, the why and the cause.
fn sentences(story: &Story) -> Vec<String> {
    // A step's own time is the step's, not a claim about the lines it cites.
    let mut out: Vec<String> = story.steps.iter().map(|s| s.text.clone()).collect();
    out.push(story.overlap.clone());
    out.push(story.why.clone());
    if let Some(a) = &story.anomaly {
        out.push(a.cause.clone());
    }
    out
}

/// Checks every claim of the first violation's story and its banner; gives the story.
fn check_story(history: &[Event]) -> Story {
    let findings: Findings = check(history).unwrap();
    let view = RunView::new(history, &findings);
    let v = (*view.violations().first().expect("a violation")).clone();
    let story = explain(&view, &v);
    check_claims(history, &story);
    let acqs = [acq_of(history, &v.first), acq_of(history, &v.second)];
    let of_value = |t: &str| acqs.iter().find(|a| a.value == t);
    let of_client = |c: usize| acqs.iter().find(|a| a.client == c).unwrap();
    let said = sentences(&story);
    for s in &said {
        // "client 3 acquires L0 on nodes 0,1,2,3": each node had the value at the ok.
        for c in [v.first.client, v.second.client] {
            let claim = format!("client {c} acquires {} on ", v.lock);
            if let Some(at) = s.find(&claim) {
                let rest = &s[at + claim.len()..];
                let nodes = numbers_after(rest, "nodes ")
                    .filter(|_| rest.starts_with("nodes "))
                    .or_else(|| numbers_after(rest, "node ").filter(|_| rest.starts_with("node ")))
                    .unwrap_or_default();
                for n in nodes {
                    assert!(
                        kept_set(history, of_client(c), n, false).is_some(),
                        "client {c}'s value was not on node {n} at its ok (line {}): {s}",
                        of_client(c).ok
                    );
                }
            }
        }
        // "Nodes 0,1,2 granted L0 to both clients": both values were set there.
        if let Some(at) = s.find(&format!(" granted {} to both clients", v.lock)) {
            let head = &s[..at];
            let nodes = numbers_after(head, "Nodes ")
                .or_else(|| numbers_after(head, "Node "))
                .unwrap();
            for n in nodes {
                for a in &acqs {
                    assert!(
                        kept_set(history, a, n, true).is_some(),
                        "node {n} never granted client {}'s acquisition (lines {}-{}): {s}",
                        a.client,
                        a.invoke,
                        a.ok
                    );
                }
            }
        }
        // Each "(line N)": the node and the time quoted before it are that line's, and a
        // node line of either value is the key the acquisition kept (a set), a removal
        // of that key, or, where the sentence says so, an attempt's key deleted again.
        let mut from = 0;
        for (i, _) in s.match_indices("(line ") {
            let n: usize = s[i + 6..].split(')').next().unwrap().parse().unwrap();
            let mut before = &s[from..i];
            if let Some(semi) = before.rfind(';') {
                before = &before[semi + 1..];
            }
            from = i + 1;
            assert!(n >= 1 && n <= history.len(), "line {n}: {s}");
            let e = &history[n - 1];
            if let Some(t) = before.rfind("t=") {
                let quoted = before[t + 2..].split(" s").next().unwrap();
                let mut times = vec![secs(e.t_us())];
                if let Event::Node(node) = e {
                    times.extend(node.expired_at_us.map(secs));
                }
                assert!(
                    times.contains(&format!("{quoted} s")),
                    "t={quoted} s is not the time of line {n} ({e:?}): {s}"
                );
            }
            let Event::Node(ne) = e else { continue };
            if let Some(node) = last_node(before) {
                assert_eq!(node, ne.node, "line {n} is about node {}: {s}", ne.node);
            }
            let Some(a) = ne.token.as_deref().and_then(of_value) else {
                continue;
            };
            let kept = kept_set(history, a, ne.node, true);
            match ne.action {
                NodeAction::Set if before.contains("deleted") || s.contains("deleted there") => {
                    assert!(
                        kept != Some(n),
                        "line {n} is client {}'s kept key on node {}, not an undone one: {s}",
                        a.client,
                        ne.node
                    );
                }
                NodeAction::Set => assert_eq!(
                    kept,
                    Some(n),
                    "line {n} is not the set of client {}'s acquisition on node {} (its kept set: {kept:?}): {s}",
                    a.client,
                    ne.node
                ),
                NodeAction::Deleted if n < a.ok => {}
                x if x.removes() => assert!(
                    kept.is_some_and(|k| k < n),
                    "line {n} removes no key client {}'s acquisition kept on node {}: {s}",
                    a.client,
                    ne.node
                ),
                _ => {}
            }
        }
        // "node 2: ... (fault #3)": the fault is on that node.
        for (i, _) in s.match_indices("(fault #") {
            let id: usize = s[i + 8..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let f = fault_by_id(history, id).unwrap_or_else(|| panic!("no fault #{id}: {s}"));
            let clause = &s[s[..i].rfind(';').map_or(0, |k| k + 1)..i];
            if let Some(node) = clause.trim_start().strip_prefix("node ").and_then(|r| {
                r.split(|c: char| !c.is_ascii_digit())
                    .next()
                    .and_then(|d| d.parse::<usize>().ok())
            }) {
                assert!(
                    f.1.targets().0.contains(&node),
                    "fault #{id} is not on node {node}: {s}"
                );
            }
        }
    }
    // "[fault #k]" steps start when the fault's line says.
    for step in &story.steps {
        if let Some(i) = step.text.find("[fault #") {
            let id: usize = step.text[i + 8..].trim_end_matches(']').parse().unwrap();
            let (start, _) = fault_by_id(history, id).unwrap();
            assert_eq!(start, step.t_us, "{}", step.text);
        }
    }
    // The banner: no "no fault acted" beside a story that tells faults.
    let banner = banner::judge(&serde_json::json!({"verdict": "unsafe"}), &view, None);
    let told = story.steps.iter().any(|s| s.text.contains("[fault #"));
    assert!(
        !(told && banner.headline.contains("No fault acted")),
        "the banner says no fault acted, yet the story tells faults: {}\n{}",
        banner.headline,
        story.markdown()
    );
    story
}

/// Fault `id`'s start time and fault.
fn fault_by_id(history: &[Event], id: usize) -> Option<(u64, Fault)> {
    history.iter().find_map(|e| match e {
        Event::Fault(f) if f.id == id && f.action == crate::history::FaultAction::Start => {
            Some((f.t_us, f.fault.clone()))
        }
        _ => None,
    })
}

/// redlock-py reuses its value across the attempts of one acquire: client 3's first
/// attempt set it on nodes 3 and 4 (lines 13, 14), which were deleted again (lines 16,
/// 17) before the attempt that acquired set it on nodes 0-3 (lines 30-33). Node 4 kept
/// client 1's key throughout (line 18).
#[test]
fn redlock_py_node_clock_jump_tells_the_attempt_that_acquired_and_no_other() {
    let history = load("redlock-py-07-node-clock-jump.jsonl");
    let story = check_story(&history);
    let md = story.markdown();
    assert!(
        md.contains("client 3 acquires L0 on nodes 0,1,2,3 "),
        "client 3 held nodes 0-3 at its ok: {md}"
    );
    assert!(
        story.why.starts_with("Nodes 0,1,2 granted L0 to both clients"),
        "{}",
        story.why
    );
    assert!(!story.why.contains("(line 14)"), "{}", story.why);
}

#[test]
fn python_redis_lock_crash_story_holds_claim_by_claim() {
    let story = check_story(&load("python-redis-lock-03-majority-crash-restart.jsonl"));
    assert_eq!(
        story.anomaly.unwrap().kind,
        super::anomaly::Anomaly::KeyLostOnRestart
    );
}

/// rslock's `ok` comes before the watcher's lines of the keys it set (lines 15-18 after
/// the ok on line 7): they are still the acquisition's.
#[test]
fn rslock_crash_story_counts_the_keys_seen_after_the_ok() {
    let story = check_story(&load("rslock-03-majority-crash-restart.jsonl"));
    assert_eq!(
        story.anomaly.unwrap().kind,
        super::anomaly::Anomaly::KeyLostOnRestart
    );
}

#[test]
fn redis_py_lock_failover_story_holds_claim_by_claim() {
    let story = check_story(&load("redis-py-lock-11-replica-failover.jsonl"));
    assert_eq!(
        story.anomaly.unwrap().kind,
        super::anomaly::Anomaly::KeyLostOnFailover
    );
}

/// The probe (meta `probe_client`) takes a lock of its own throughout: the timeline of
/// the violation on L0 draws exactly what it draws for the history without the probe's
/// lock.
#[test]
fn the_timeline_of_the_workload_lock_leaves_the_probes_lock_out() {
    use super::plots::timeline::Timeline;
    let history = load("redlock-py-07-node-clock-jump.jsonl");
    let probe = match &history[0] {
        Event::Meta(m) => m.probe_client.unwrap(),
        _ => unreachable!(),
    };
    let probe_lock = history
        .iter()
        .find_map(|e| match e {
            Event::Invoke(op) if op.client == probe => Some(op.lock.clone()),
            _ => None,
        })
        .unwrap();
    let without: Vec<Event> = history
        .iter()
        .filter(|e| match e {
            Event::Invoke(op) | Event::Ok(op) | Event::Fail(op) | Event::Info(op) => op.lock != probe_lock,
            Event::Node(n) => n.lock != probe_lock,
            _ => true,
        })
        .cloned()
        .collect();
    let svg = |h: &[Event]| {
        let f = check(h).unwrap();
        let view = RunView::new(h, &f);
        let v = view.violations()[0].clone();
        let dir = tempfile::tempdir().unwrap();
        super::plots::save(&Timeline::around(&view, &v), dir.path(), "t").unwrap();
        std::fs::read_to_string(dir.path().join("t.svg")).unwrap()
    };
    assert!(
        svg(&history) == svg(&without),
        "the probe's {probe_lock} is drawn in the chart of the violation on L0"
    );
}

/// A hold whose worker said `expires: false` (its `ok` has no `valid_until_us`) lasts
/// until it is released: its story tells no validity.
#[test]
fn a_hold_without_expiry_is_told_as_held_until_released() {
    let mut history = load("python-redis-lock-03-majority-crash-restart.jsonl");
    let findings = check(&history).unwrap();
    let first = findings.violations[0].first.clone();
    if let Event::Ok(op) = &mut history[first.ok_line - 1] {
        op.valid_until_us = None;
    }
    let story = check_story(&history);
    let md = story.markdown();
    let told = format!("client {} acquires", first.client);
    let step = story.steps.iter().find(|s| s.text.starts_with(&told)).unwrap();
    assert!(step.text.contains("held until released"), "{md}");
    assert!(!step.text.contains("validity"), "{md}");
    assert!(!md.contains("paused past"), "{md}");
    assert!(
        !md.contains(&format!("client {} believed its validity", first.client)),
        "{md}"
    );
}
