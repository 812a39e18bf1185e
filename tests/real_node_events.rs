//! The real backend's own `node` lines (docs/history.md, "How the real backend gets each
//! line"), on local redis-servers: an expiry seen through the node's key events, keys
//! lost at a restart without persistence, a failover's replicated and promoted keys, and
//! the anomaly a restart's violation is then named by. Needs redis-server (`apt-get
//! install -y redis-server`); without it the tests fail and say so.
//!
//! Every assertion is about what must happen, with bounds far from what a loaded machine
//! could reach: an expiry is never seen before its ttl has passed since the client asked.

use lockstorm::history::{Event, FaultAction, NodeAction, NodeEvent, OpKind};
use std::path::Path;
use std::process::Command;

fn require_redis() {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("redis-server").is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "redis-server is not installed: the real-backend tests need it (apt-get install -y redis-server)"
    );
}

/// Runs the scenario file `file` with `extra` arguments; returns its history and
/// summary.json, and checks the exit status is `status`.
fn run(file: &Path, extra: &[&str], status: Option<i32>) -> (Vec<Event>, serde_json::Value) {
    require_redis();
    let out_dir = tempfile::tempdir().expect("temp dir");
    let out = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .arg("scenario")
        .arg(file)
        .arg("--quiet")
        .arg("--out")
        .arg(out_dir.path())
        .args(extra)
        .output()
        .expect("run lockstorm");
    let why = format!(
        "{}: status {:?}\nstdout: {}\nstderr: {}",
        file.display(),
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    match status {
        Some(s) => assert_eq!(out.status.code(), Some(s), "{why}"),
        None => assert!(matches!(out.status.code(), Some(0 | 1)), "{why}"),
    }
    let history =
        lockstorm::history::read_jsonl(&out_dir.path().join("history.jsonl")).expect("history written");
    let summary = std::fs::read_to_string(out_dir.path().join("summary.json")).expect("summary written");
    (history, serde_json::from_str(&summary).expect("summary is JSON"))
}

fn scenario(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios/real")
        .join(format!("{name}.toml"))
}

fn node_lines(history: &[Event]) -> Vec<&NodeEvent> {
    history
        .iter()
        .filter_map(|e| match e {
            Event::Node(n) => Some(n),
            _ => None,
        })
        .collect()
}

#[test]
fn a_key_set_with_a_short_ttl_gives_an_expired_line_with_its_token() {
    // A client paused right after it acquired cannot release: its key expires on the
    // node while it sleeps.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("expiry.toml");
    std::fs::write(
        &file,
        r#"
backend = "redis"
seed = 1
duration = "2s"
nodes = 1

[algorithm]
kind = "single"
ttl = "200ms"
request_timeout = "100ms"

[clients]
count = 1
locks = 1
think = "0ms"
hold = "50ms"

[[faults]]
at = "200ms"
kind = "pause"
client = 0
duration = "800ms"
point = "after_acquire"
"#,
    )
    .unwrap();
    let (history, _) = run(&file, &[], None);
    let lines = node_lines(&history);
    let expired: Vec<&&NodeEvent> = lines.iter().filter(|n| n.action == NodeAction::Expired).collect();
    assert!(!expired.is_empty(), "no expired line in {lines:?}");
    for e in &expired {
        let token = e
            .token
            .as_deref()
            .expect("the watcher read the key's value after its set");
        let set = lines
            .iter()
            .find(|n| n.action == NodeAction::Set && n.token.as_deref() == Some(token))
            .unwrap_or_else(|| panic!("no set line for the expired token {token}"));
        assert_eq!(
            (e.node, e.key.as_str(), e.lock.as_str()),
            (set.node, set.key.as_str(), "L0")
        );
        // The key was set after the client asked, and lives its ttl from then.
        let asked = history
            .iter()
            .filter_map(|ev| match ev {
                Event::Invoke(op) if op.op == OpKind::Acquire && op.t_us <= set.t_us => Some(op.t_us),
                _ => None,
            })
            .max()
            .expect("an acquire before the set");
        assert!(
            e.t_us >= asked + 200_000,
            "expired at {} µs, before the ttl had passed since the client asked at {asked} µs",
            e.t_us
        );
    }
}

#[test]
fn a_crash_without_persistence_loses_the_keys_the_node_held() {
    let (history, _) = run(&scenario("crash-restart"), &[], Some(0));
    let lines = node_lines(&history);
    let (crashed, back) = fault_times(&history, 2);
    let lost: Vec<&&NodeEvent> = lines.iter().filter(|n| n.action == NodeAction::Lost).collect();
    assert!(!lost.is_empty(), "no lost line: {lines:?}");
    for l in &lost {
        assert_eq!((l.node, l.lock.as_str()), (2, "L0"));
        assert!(
            l.t_us >= back,
            "lost at {} µs, before the restart at {back} µs",
            l.t_us
        );
        // The key lost is one a client set on node 2 before the crash, and nothing
        // deleted or expired it before then.
        let token = l.token.as_deref().expect("the token read before the kill");
        let set = lines
            .iter()
            .rfind(|n| n.node == 2 && n.action == NodeAction::Set && n.token.as_deref() == Some(token))
            .expect("a set line for the lost key");
        assert!(set.t_us <= crashed);
        assert!(!lines.iter().any(|n| n.node == 2
            && n.token.as_deref() == Some(token)
            && n.action.removes()
            && n.action != NodeAction::Lost
            && n.t_us <= crashed));
    }
}

/// When node `node`'s first outage started and ended.
fn fault_times(history: &[Event], node: usize) -> (u64, u64) {
    let on_node = |f: &lockstorm::history::FaultEvent| matches!(f.fault, lockstorm::fault::Fault::Crash { node: n, .. } | lockstorm::fault::Fault::Failover { node: n } if n == node);
    let at = |action: FaultAction| {
        history
            .iter()
            .find_map(|e| match e {
                Event::Fault(f) if f.action == action && on_node(f) => Some(f.t_us),
                _ => None,
            })
            .expect("the outage is in the history")
    };
    (at(FaultAction::Start), at(FaultAction::End))
}

#[test]
fn a_violation_that_comes_from_a_restart_is_named_key_lost_on_restart() {
    let (history, summary) = run(&scenario("crash-restart"), &[], Some(0));
    let violations = summary["violations"]
        .as_array()
        .expect("violations in summary.json");
    assert!(!violations.is_empty());
    let anomaly = &violations[0]["anomaly"];
    assert_eq!(anomaly["kind"], "key_lost_on_restart", "{summary:#}");
    // Its evidence cites a `lost` line of the history.
    let cited: Vec<usize> = anomaly["lines"]
        .as_array()
        .expect("evidence lines")
        .iter()
        .filter_map(|l| l.as_u64().map(|l| l as usize))
        .collect();
    assert!(
        cited
            .iter()
            .any(|&l| matches!(&history[l - 1], Event::Node(n) if n.action == NodeAction::Lost)),
        "no lost line among {cited:?}"
    );
}

#[test]
fn a_failover_tells_what_reached_the_replica_and_names_the_loss() {
    let (history, summary) = run(&scenario("replica-failover"), &[], Some(0));
    let lines = node_lines(&history);
    let (died, promoted) = fault_times(&history, 0);
    let at_promotion: Vec<&&NodeEvent> = lines
        .iter()
        .filter(|n| {
            matches!(
                n.action,
                NodeAction::Unreplicated | NodeAction::Replicated | NodeAction::Promoted
            )
        })
        .collect();
    assert!(
        at_promotion
            .iter()
            .any(|n| n.action == NodeAction::Unreplicated && n.lag_us == Some(2_000_000)),
        "the 2 s lag leaves the holder's key behind: {lines:?}"
    );
    for n in &at_promotion {
        assert!(n.t_us >= promoted && promoted > died);
    }
    assert_eq!(
        summary["violations"][0]["anomaly"]["kind"], "key_lost_on_failover",
        "{summary:#}"
    );
}

#[test]
fn a_plain_del_that_took_the_holders_key_is_named_from_its_tokenless_line() {
    let (history, summary) = run(&scenario("release-del"), &[], Some(0));
    let violations = summary["violations"]
        .as_array()
        .expect("violations in summary.json");
    let named: Vec<&serde_json::Value> = violations
        .iter()
        .filter(|v| v["anomaly"]["kind"] == "release_without_token_check")
        .collect();
    assert!(!named.is_empty(), "{summary:#}");
    // Each cites a `deleted` line: a DEL of another client, with no token and unchecked.
    for v in named {
        let cited: Vec<usize> = v["anomaly"]["lines"]
            .as_array()
            .expect("evidence lines")
            .iter()
            .filter_map(|l| l.as_u64().map(|l| l as usize))
            .collect();
        assert!(
            cited.iter().any(|&l| matches!(&history[l - 1], Event::Node(n)
                if n.action == NodeAction::Deleted && n.checked == Some(false))),
            "no unchecked delete among {cited:?}"
        );
    }
}

#[test]
fn node_events_off_leaves_the_real_nodes_lines_out() {
    let (history, _) = run(
        &scenario("crash-restart"),
        &["--set", "node_events=false"],
        Some(0),
    );
    assert!(node_lines(&history).is_empty());
}
