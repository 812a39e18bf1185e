//! Stopping lockstorm as CI runners and people do, on the real backend: SIGINT, SIGTERM
//! and SIGHUP stop a run cleanly (exit 130, 143, 129) and keep what it recorded; after
//! any of them, and after SIGKILL, no process lockstorm started is left and its
//! temporary directories are gone. Needs redis-server (`apt-get install -y redis-server`).
//!
//! Each test runs its own lockstorm with its own TMPDIR and report folder, and finds
//! lockstorm's children by their parent pid before the signal (other tests run
//! redis-servers on this machine at the same time). Nothing sleeps to let a race pass:
//! every wait is for a condition, with a deadline.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Long enough that no signal comes after it ended: the test stops it in seconds.
const LONG_REAL_RUN: &str = r#"
backend = "redis"
duration = "300s"
nodes = 3
[clients]
count = 2
[[faults]]
at = "500ms"
kind = "partition"
nodes = [2]
duration = "1s"
"#;

const DEADLINE: Duration = Duration::from_secs(60);

/// Polls `done` every 20 ms until it holds, or fails the test after [`DEADLINE`].
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < DEADLINE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A process as /proc shows it: its parent and its start time (which tells a reused
/// pid from the original), or `None` once it is gone. A zombie is gone: it has exited
/// and holds nothing but its exit status.
fn stat(pid: u32) -> Option<(u32, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name, which is in parentheses and may hold spaces.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    if fields[0] == "Z" || fields[0] == "X" {
        return None;
    }
    Some((fields[1].parse().ok()?, fields[19].parse().ok()?))
}

/// Every live child of `parent`, with its start time.
fn children_of(parent: u32) -> Vec<(u32, u64, String)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc") {
        let Ok(pid) = entry.expect("entry").file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Some((ppid, start)) = stat(pid) {
            if ppid == parent {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
                out.push((pid, start, comm.trim().to_string()));
            }
        }
    }
    out
}

struct Run {
    child: Child,
    tmp: tempfile::TempDir,
    out: PathBuf,
    tmpdir: PathBuf,
}

/// Starts `lockstorm scenario` on `text` and waits until its history has some lines.
fn start(text: &str, extra: &[&str]) -> Run {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("redis-server").is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "redis-server is not installed (apt-get install -y redis-server)"
    );
    let tmp = tempfile::tempdir().expect("temp dir");
    let tmpdir = tmp.path().join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    std::fs::write(tmp.path().join("long.toml"), text).unwrap();
    let out = tmp.path().join("report");
    let child = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .env("TMPDIR", &tmpdir)
        .args(["scenario", "long.toml", "--quiet", "--out"])
        .arg(&out)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("lockstorm starts");
    let history = out.join("history.jsonl");
    wait_for("the first lines of history.jsonl", || {
        std::fs::read_to_string(&history).is_ok_and(|h| h.lines().count() >= 10)
    });
    Run {
        child,
        tmp,
        out,
        tmpdir,
    }
}

/// Sends `sig`, waits for lockstorm to exit; returns its status, stderr and the
/// children it had before the signal.
fn stop(run: &mut Run, sig: libc::c_int) -> (ExitStatus, String, Vec<(u32, u64, String)>) {
    let pid = run.child.id();
    let children = children_of(pid);
    let servers = children.iter().filter(|c| c.2 == "redis-server").count();
    assert_eq!(servers, 3, "lockstorm runs a redis-server per node: {children:?}");
    // SAFETY: kill(2) on our own child process.
    assert_eq!(unsafe { libc::kill(pid as libc::pid_t, sig) }, 0);
    let mut status = None;
    wait_for("lockstorm to exit", || {
        status = run.child.try_wait().expect("wait");
        status.is_some()
    });
    let mut stderr = String::new();
    use std::io::Read;
    run.child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .unwrap();
    (status.expect("exited"), stderr, children)
}

fn assert_nothing_left(run: &Run, children: &[(u32, u64, String)]) {
    for (pid, start, comm) in children {
        wait_for(&format!("{comm} {pid} to be gone"), || {
            stat(*pid).is_none_or(|(_, s)| s != *start)
        });
    }
    wait_for("the temporary directories to be removed", || {
        std::fs::read_dir(&run.tmpdir).unwrap().next().is_none()
    });
}

fn assert_partial_report_kept(out: &Path, signal: &str) {
    let history = lockstorm::history::read_jsonl(&out.join("history.jsonl")).expect("a readable history");
    assert!(history.len() >= 10, "{} events", history.len());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["partial"], true, "{summary}");
    let reason = summary["partial_reason"].as_str().unwrap_or_default();
    assert!(reason.contains(signal), "{reason}");
    // The report renders it, saying it is partial.
    let status = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .arg("report")
        .arg(out)
        .output()
        .unwrap();
    assert_eq!(
        status.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    let page = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(page.contains("Partial run"), "index.html does not say partial");
}

fn stopped_cleanly_by(sig: libc::c_int, name: &str, code: i32) {
    let mut run = start(LONG_REAL_RUN, &[]);
    let (status, stderr, children) = stop(&mut run, sig);
    assert_eq!(status.code(), Some(code), "{name}: {stderr}");
    assert_nothing_left(&run, &children);
    assert_partial_report_kept(&run.out, name);
    drop(run.tmp);
}

#[test]
fn sigint_stops_a_real_run_cleanly_and_keeps_what_it_recorded() {
    stopped_cleanly_by(libc::SIGINT, "SIGINT", 130);
}

#[test]
fn sigterm_stops_a_real_run_cleanly_and_keeps_what_it_recorded() {
    stopped_cleanly_by(libc::SIGTERM, "SIGTERM", 143);
}

#[test]
fn sighup_stops_a_real_run_cleanly_and_keeps_what_it_recorded() {
    stopped_cleanly_by(libc::SIGHUP, "SIGHUP", 129);
}

#[test]
fn after_sigkill_no_child_and_no_temporary_directory_is_left() {
    use std::os::unix::process::ExitStatusExt;
    let mut run = start(LONG_REAL_RUN, &[]);
    let (status, _, children) = stop(&mut run, libc::SIGKILL);
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert_nothing_left(&run, &children);
    // What was streamed stays readable; the placeholder summary says the run is partial.
    assert_partial_report_kept(&run.out, "killed");
}

#[test]
fn keep_keeps_the_nodes_directories_on_ctrl_c() {
    let mut run = start(LONG_REAL_RUN, &["--keep"]);
    let (status, stderr, children) = stop(&mut run, libc::SIGINT);
    assert_eq!(status.code(), Some(130), "{stderr}");
    for (pid, start, comm) in &children {
        wait_for(&format!("{comm} {pid} to be gone"), || {
            stat(*pid).is_none_or(|(_, s)| s != *start)
        });
    }
    let kept: Vec<PathBuf> = std::fs::read_dir(&run.tmpdir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].join("node0/redis.log").is_file(), "{stderr}");
    assert!(stderr.contains("kept the nodes' directories"), "{stderr}");
}

#[test]
fn a_server_that_fails_to_start_keeps_the_log_the_error_names() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = tmp.path().join("fake-redis-server");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'FATAL: cannot open the fake config' > redis.log\nexit 3\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let tmpdir = tmp.path().join("tmp");
    std::fs::create_dir(&tmpdir).unwrap();
    std::fs::write(
        tmp.path().join("s.toml"),
        "backend = \"redis\"\nduration = \"1s\"\nnodes = 1\n[algorithm]\nkind = \"single\"\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .env("TMPDIR", &tmpdir)
        .env("LOCKSTORM_REDIS_SERVER", &fake)
        .args(["scenario", "s.toml", "--out", "report"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let error = stderr
        .lines()
        .find(|l| l.contains("error:"))
        .expect("an error line");
    let log = error
        .rsplit("see ")
        .next()
        .expect("the error names the log")
        .trim();
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{log}: {e} ({stderr})"));
    assert!(text.contains("FATAL"), "{text}");
    // The report folder says why the run is partial.
    let summary = std::fs::read_to_string(tmp.path().join("report/summary.json")).unwrap();
    assert!(summary.contains("exited at start"), "{summary}");
}

#[test]
fn sigint_stops_a_long_simulation_too() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("sim.toml"), "duration = \"12h\"\nnodes = 3\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .args([
            "scenario", "sim.toml", "--quiet", "--seeds", "2", "--out", "report",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The placeholder summary is written before the simulation starts.
    let summary = tmp.path().join("report/summary.json");
    wait_for("the placeholder summary", || summary.is_file());
    // SAFETY: kill(2) on our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) }, 0);
    let mut status = None;
    wait_for("lockstorm to exit", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    assert_eq!(status.unwrap().code(), Some(130));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(summary).unwrap()).unwrap();
    assert_eq!(summary["partial"], true);
    assert!(
        summary["partial_reason"].as_str().unwrap().contains("SIGINT"),
        "{summary}"
    );
}

// Issue 21: what a worker starts, the worker logs and the temporary directories.

fn leaves_things() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/workers/leaves_things.py")
        .display()
        .to_string()
}

/// A real run of one worker client doing `actions` at its hello.
fn worker_scenario(duration: &str, actions: &[String]) -> String {
    let mut argv = vec!["python3".to_string(), leaves_things()];
    argv.extend(actions.iter().cloned());
    format!(
        "backend = \"redis\"\nduration = {duration:?}\nnodes = 1\n[algorithm]\nkind = \"single\"\n[clients]\ncount = 1\nworker = {}\n",
        serde_json::to_string(&argv).unwrap()
    )
}

/// The pids the worker's helpers wrote to `path`, once there are `n`.
fn helper_pids(path: &Path, n: usize) -> Vec<u32> {
    let mut pids = Vec::new();
    wait_for("the worker's helpers to start", || {
        pids = std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.parse().ok())
            .collect();
        pids.len() >= n
    });
    pids
}

fn assert_gone(pids: &[u32]) {
    for &pid in pids {
        wait_for(&format!("the worker's helper {pid} to be gone"), || {
            stat(pid).is_none()
        });
    }
}

/// Items 2 and 13: a worker's helpers, in its group or escaped with setsid, do not
/// outlive a normal run; the run prints no rate it did not measure.
#[test]
fn a_workers_helpers_do_not_outlive_a_normal_run() {
    let tmp = tempfile::tempdir().unwrap();
    let pids = tmp.path().join("pids");
    let text = worker_scenario(
        "2s",
        &[
            format!("fork:{}", pids.display()),
            format!("setsid:{}", pids.display()),
        ],
    );
    std::fs::write(tmp.path().join("w.toml"), text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .args(["scenario", "w.toml", "--out", "r"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stdout}\n{stderr}");
    let helpers = helper_pids(&pids, 2);
    assert_gone(&helpers);
    assert!(!stdout.contains(" 0 node commands/s"), "{stdout}");
}

/// Issue 40: a helper that left its group and dropped lockstorm's mark from its
/// environment (`env -u`, a daemon; a redis-server overwrites it with its title) is an
/// orphan lockstorm adopted as the subreaper: it does not outlive a normal run either.
#[test]
fn an_unmarked_helper_does_not_outlive_a_normal_run() {
    let tmp = tempfile::tempdir().unwrap();
    let pids = tmp.path().join("pids");
    let text = worker_scenario("2s", &[format!("unmarked:{}", pids.display())]);
    std::fs::write(tmp.path().join("w.toml"), text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .args(["scenario", "w.toml", "--quiet", "--out", "r"])
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let helpers = helper_pids(&pids, 1);
    // It really carried no mark (else the mark hunt, not the orphan rule, found it).
    assert_gone(&helpers);
}

/// Items 1 and 2: after a SIGKILL of lockstorm, the worker's helpers are gone, and so
/// is every directory the run made, the worker log folder included.
#[test]
fn after_sigkill_a_workers_helpers_and_log_folder_are_gone() {
    use std::os::unix::process::ExitStatusExt;
    let tmp = tempfile::tempdir().unwrap();
    let pids = tmp.path().join("pids");
    let text = worker_scenario(
        "300s",
        &[
            format!("fork:{}", pids.display()),
            format!("setsid:{}", pids.display()),
        ],
    );
    let mut run = start(&text, &[]);
    let helpers = helper_pids(&pids, 2);
    // SAFETY: kill(2) on our own child process.
    assert_eq!(
        unsafe { libc::kill(run.child.id() as libc::pid_t, libc::SIGKILL) },
        0
    );
    let status = run.child.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert_gone(&helpers);
    wait_for("the temporary directories to be removed", || {
        std::fs::read_dir(&run.tmpdir).unwrap().next().is_none()
    });
    drop(run.tmp);
}

/// Item 9: the run's temporary directories are this user's alone.
#[test]
fn temporary_directories_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let pids = tmp.path().join("pids");
    let text = worker_scenario("300s", &[format!("fork:{}", pids.display())]);
    let mut run = start(&text, &[]);
    helper_pids(&pids, 1);
    let dirs: Vec<(String, u32)> = std::fs::read_dir(&run.tmpdir)
        .unwrap()
        .flatten()
        .map(|e| {
            let mode = e.metadata().unwrap().permissions().mode() & 0o777;
            (e.file_name().to_string_lossy().into_owned(), mode)
        })
        .collect();
    // SAFETY: kill(2) on our own child process.
    unsafe { libc::kill(run.child.id() as libc::pid_t, libc::SIGTERM) };
    let _ = run.child.wait();
    assert!(
        dirs.len() >= 2,
        "the nodes' and the workers' directories: {dirs:?}"
    );
    for (name, mode) in dirs {
        assert_eq!(mode, 0o700, "{name} is {mode:o}");
    }
}

/// Item 3: a worker that floods its stderr leaves a capped log that keeps the start,
/// the end and says how much was dropped (issue 41: what the capture dropped and what
/// the report cut, in one count).
#[test]
fn a_flooded_worker_log_is_capped() {
    let tmp = tempfile::tempdir().unwrap();
    let flood: u64 = 24 << 20;
    let text = worker_scenario("1s", &[format!("flood:{flood}")]);
    std::fs::write(tmp.path().join("w.toml"), text).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .args(["scenario", "w.toml", "--quiet", "--out", "r"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    let log = std::fs::read(tmp.path().join("r/workers/client-0.log")).unwrap();
    let keep = lockstorm::report::logs::KEEP_BYTES;
    assert!(log.len() < keep + 200, "the log is {} bytes", log.len());
    let text = String::from_utf8_lossy(&log);
    assert!(text.starts_with("FIRST-LINE\n"), "the start is kept");
    assert!(text.trim_end().ends_with("LAST-LINE"), "the end is kept");
    let said = text
        .lines()
        .find_map(|l| {
            l.strip_prefix("[lockstorm: ")?
                .split_once(" bytes of this log cut here")
        })
        .map(|(n, _)| n.parse::<u64>().unwrap())
        .expect("the cut is said");
    assert!(
        said + keep as u64 >= flood && said <= flood,
        "{said} bytes said cut of a {flood}-byte flood"
    );
    let page = std::fs::read_to_string(tmp.path().join("r/index.html")).unwrap();
    assert!(
        page.contains(" too long to keep whole"),
        "the page says it was cut"
    );
}

/// Issue 40: a node whose port another process took while it was down cannot restart.
/// That is the machine's doing, not the lock's: the run stops with one error line
/// that says so and what redis-server said, exit 2, and keeps its history (it read
/// "deadlock, stuck after heal", exit 1, naming a log that was already gone).
#[test]
fn a_node_whose_port_was_taken_during_its_crash_is_an_environment_error() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("port.toml");
    std::fs::write(
        &file,
        "backend = \"redis\"\nduration = \"8s\"\nnodes = 1\n[algorithm]\nkind = \"single\"\nttl = \"500ms\"\n\
         [clients]\ncount = 2\n[[faults]]\nat = \"1s\"\nkind = \"crash\"\nnode = 0\nrestart_after = \"2s\"\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let mut run = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .args([
            "scenario",
            file.to_str().unwrap(),
            "--quiet",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The node's redis-server titles itself with its address.
    let mut server = None;
    wait_for("the node's redis-server", || {
        server = children_of(run.id()).into_iter().find_map(|(pid, _, _)| {
            let title = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let port = title
                .split_whitespace()
                .find_map(|w| w.strip_prefix("127.0.0.1:"))?;
            Some((pid, port.trim_end_matches('\0').parse::<u16>().ok()?))
        });
        server.is_some()
    });
    let (pid, port) = server.unwrap();
    wait_for("the crash", || stat(pid).is_none());
    let taken =
        std::net::TcpListener::bind(("127.0.0.1", port)).expect("the port is free while the node is down");
    let status = run.wait().unwrap();
    drop(taken);
    let mut err = String::new();
    std::io::Read::read_to_string(run.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("node 0 could not be restarted") && err.contains("it said"),
        "{err}"
    );
    assert!(out.join("history.jsonl").is_file(), "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["partial"], true, "{summary}");
}
