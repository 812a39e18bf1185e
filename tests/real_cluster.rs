//! A real Redis Cluster as node 0 (`[cluster]`, src/real/deployment/cluster.rs): no node
//! outlives lockstorm, whether it is SIGKILLed (the parent-death signal) or stopped by
//! SIGTERM (the interrupt kills every child, and what the run recorded is kept); bad
//! settings, and what the simulator's model leaves out, are one line and exit 2. The failover and the split brain themselves are
//! tested through their scenarios (tests/real_scenarios.rs, `real_cluster_*`). Needs
//! redis-server; without it the tests fail and say so.

use std::process::Command;
use std::time::{Duration, Instant};

fn lockstorm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lockstorm"))
}

/// The redis-server processes whose parent is `pid` (not zombies).
fn servers_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc") {
        let Ok(p) = entry.expect("entry").file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let (state, ppid) = (
            fields.first().copied(),
            fields.get(1).and_then(|f| f.parse::<u32>().ok()),
        );
        if head.contains("(redis-server") && ppid == Some(pid) && state != Some("Z") {
            out.push(p);
        }
    }
    out
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// Starts the cluster split-brain scenario, waits until its six nodes run, sends
/// `signal`, and checks that every node is gone within 10 s; returns the report folder.
fn stopped_by(signal: i32) -> tempfile::TempDir {
    let out = tempfile::tempdir().expect("temp dir");
    let mut run = lockstorm()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "scenario",
            "scenarios/real/cluster-split-brain.toml",
            "--quiet",
            "--out",
        ])
        .arg(out.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("lockstorm starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    let servers = loop {
        let s = servers_of(run.id());
        // Every node up, the cluster formed and the run under way (its meta line written).
        let begun = std::fs::metadata(out.path().join("history.jsonl")).is_ok_and(|m| m.len() > 0);
        if s.len() == 6 && begun {
            break s;
        }
        if let Some(status) = run.try_wait().expect("wait") {
            panic!("lockstorm exited before its cluster was up: {status}");
        }
        assert!(Instant::now() < deadline, "the cluster never came up: {s:?}");
        std::thread::sleep(Duration::from_millis(20));
    };
    eprintln!("cluster up: {servers:?}");
    // SAFETY: a signal to our own child, which has not been reaped.
    unsafe { libc::kill(run.id() as i32, signal) };
    run.wait().expect("lockstorm ends");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<u32> = servers.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "cluster nodes still running 10 s after lockstorm got signal {signal}: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    out
}

#[test]
fn no_cluster_node_outlives_a_sigkilled_run() {
    stopped_by(libc::SIGKILL);
}

#[test]
fn a_sigtermed_cluster_run_kills_every_node_and_keeps_what_it_recorded() {
    let out = stopped_by(libc::SIGTERM);
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.path().join("summary.json")).expect("summary"))
            .expect("json");
    assert_eq!(summary["partial"], true, "{summary}");
    let history = lockstorm::history::read_jsonl(&out.path().join("history.jsonl")).expect("history kept");
    assert!(!history.is_empty());
}

#[test]
fn impossible_cluster_settings_are_one_line_and_exit_2() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (table, needle) in [
        ("[cluster]\nmasters = 2\n", "[cluster] 2 master(s): at least 3"),
        ("[cluster]\nreplicas = 0\n", "0 replicas per master"),
        ("[cluster]\nnode_timeout = \"1500us\"\n", "cluster.node_timeout"),
        ("[cluster]\n[sentinel]\n", "two ways to run node 0"),
        ("[cluster]\nquorum = 2\n", "quorum"),
    ] {
        let file = dir.path().join("bad.toml");
        std::fs::write(
            &file,
            format!(
                "backend = \"redis\"\nduration = \"1s\"\nnodes = 1\n[algorithm]\nkind = \"single\"\n{table}"
            ),
        )
        .unwrap();
        let out = lockstorm().arg("scenario").arg(&file).output().expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{table}: {err}");
        assert!(err.contains(needle), "{table}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{table}: {err}");
    }
    // The simulator's model of a cluster leaves out the split brain: one line, not a plain
    // node instead.
    let out = lockstorm()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "scenario",
            "scenarios/real/cluster-split-brain.toml",
            "--backend",
            "sim",
            "--out",
        ])
        .arg(dir.path().join("sim"))
        .output()
        .expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("model of [cluster] does not model a partition") && err.trim().lines().count() == 1,
        "{err}"
    );
}
