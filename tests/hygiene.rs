//! Issue 21, on the simulator and on files: nothing overwritten, no summary that lies,
//! no panic from input. Each test names the item of the issue it covers. The items that
//! need redis-server and worker processes are in tests/signals.rs.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn lockstorm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("lockstorm runs")
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Exit 2 with one line that contains `needle`, and no panic.
fn refused(out: &Output, needle: &str) {
    let e = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains(needle), "{e}");
    assert_eq!(e.trim().lines().count(), 1, "{e}");
    assert!(!e.contains("panicked"), "{e}");
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).expect("summary.json"))
        .expect("summary.json is JSON")
}

const DEADLINE: Duration = Duration::from_secs(120);

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < DEADLINE, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Item 6: a scenario name is one folder name, nothing that leaves reports/.
#[test]
fn a_scenario_name_that_is_a_path_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let victim = tmp.path().join("victim");
    std::fs::create_dir(&victim).unwrap();
    write(&victim, "index.html", "the user's page");
    for name in ["../../../x", "a/b", "..", victim.to_str().unwrap()] {
        write(
            tmp.path(),
            "s.toml",
            &format!("name = {name:?}\nduration = \"1s\"\nnodes = 3\n"),
        );
        let out = lockstorm(tmp.path(), &["scenario", "s.toml", "--quiet"]);
        refused(&out, "name");
    }
    assert_eq!(
        std::fs::read_to_string(victim.join("index.html")).unwrap(),
        "the user's page"
    );
    assert!(!tmp.path().join("x").exists() && !tmp.path().join("reports").exists());
}

/// Item 6: files that merely have lockstorm's names are the user's without a manifest.
#[test]
fn a_folder_without_lockstorms_manifest_is_never_cleaned() {
    let tmp = tempfile::tempdir().unwrap();
    let out_dir = tmp.path().join("out");
    std::fs::create_dir_all(out_dir.join("workers")).unwrap();
    write(&out_dir.join("workers"), "main.py", "print('mine')");
    write(&out_dir, "summary.json", "{}");
    write(tmp.path(), "s.toml", "duration = \"1s\"\nnodes = 3\n");
    let out = lockstorm(tmp.path(), &["scenario", "s.toml", "--quiet", "--out", "out"]);
    refused(&out, "did not write");
    assert_eq!(
        std::fs::read_to_string(out_dir.join("workers/main.py")).unwrap(),
        "print('mine')"
    );
    // A folder lockstorm wrote is cleaned and reused.
    let out = lockstorm(tmp.path(), &["scenario", "s.toml", "--quiet", "--out", "fresh"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = lockstorm(tmp.path(), &["scenario", "s.toml", "--quiet", "--out", "fresh"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// Item 7: a ttl at the time limit passes validation only if everything derived from
/// it stays under the limit too.
#[test]
fn a_ttl_at_the_time_limit_is_refused_not_a_panic() {
    let tmp = tempfile::tempdir().unwrap();
    for ttl in ["999999999s", "16666666m", "1000000000000000us"] {
        write(
            tmp.path(),
            "s.toml",
            &format!("duration = \"1s\"\nnodes = 3\n[algorithm]\nttl = {ttl:?}\n"),
        );
        let out = lockstorm(tmp.path(), &["scenario", "s.toml", "--quiet"]);
        refused(&out, "algorithm.ttl");
    }
}

/// Item 7: `check H | head` ends quietly when the reader goes away.
#[test]
fn check_into_a_closed_pipe_exits_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    // A history whose findings are long: many overlapping holds.
    let mut h = String::new();
    for i in 0..2_000u64 {
        let t = i * 10;
        h += &format!(
            "{{\"type\":\"invoke\",\"t_us\":{t},\"client\":{c},\"op\":\"acquire\",\"lock\":\"a\",\"mode\":\"exclusive\"}}\n{{\"type\":\"ok\",\"t_us\":{},\"client\":{c},\"op\":\"acquire\",\"lock\":\"a\",\"mode\":\"exclusive\",\"valid_until_us\":{}}}\n",
            t + 1,
            t + 1_000_000,
            c = i % 2
        );
    }
    write(tmp.path(), "h.jsonl", &h);
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .args(["check", "h.jsonl"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The reader reads nothing and goes away, as `head -0` would.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let e = stderr(&out);
    assert!(!e.contains("panicked"), "{e}");
    assert!(e.is_empty(), "{e}");
    assert!(matches!(out.status.code(), Some(0 | 1)), "{:?} {e}", out.status);
}

/// Issue 40: every command that prints carries on when its stdout is closed (`| true`,
/// `| head -1`) or full (`> /dev/full`): the run, its report and its exit status are the
/// same as with a reader; only the printed copy is lost.
#[test]
fn a_closed_or_full_stdout_loses_the_printed_copy_not_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/partition.toml");
    let scenario = scenario.to_str().unwrap();
    let run = |out: &str, stdout: Stdio, close: bool| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
            .current_dir(tmp.path())
            .args(["scenario", scenario, "--seeds", "2", "--out", out])
            .stdout(stdout)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if close {
            drop(child.stdout.take());
        }
        child.wait_with_output().unwrap()
    };
    let open = run("open", Stdio::piped(), false);
    assert!(!String::from_utf8_lossy(&open.stdout).is_empty());
    let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    for (out, o) in [
        ("closed", run("closed", Stdio::piped(), true)),
        ("full", run("full", full.into(), false)),
    ] {
        let e = stderr(&o);
        assert!(!e.contains("panicked"), "{out}: {e}");
        assert_eq!(o.status.code(), open.status.code(), "{out}: {e}");
        let a = summary(&tmp.path().join("open"));
        let b = summary(&tmp.path().join(out));
        assert_eq!(b["partial"], false, "{out}: {b}");
        assert_eq!(a["as_expected"], b["as_expected"], "{out}");
        assert_eq!(a["seeds"], b["seeds"], "{out}");
    }
    // A command that prints a line per state, read by `head -1`.
    let mut child = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .args(["explore", scenario])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert!(!e.contains("panicked") && o.status.code() != Some(101), "{e}");
}

/// A closed stderr (its reader went away: a stopped test harness, `2>&-`) loses the
/// warnings and notes, not the run: `analysis` prints a line per scenario there, and
/// with nobody reading it writes the same index and exits as it does with a reader.
/// (Found when a stopped test suite left a cluster run panicked on a warning and
/// waiting for ever on the thread that printed it.)
#[test]
fn a_closed_stderr_loses_the_notes_not_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let scenarios = tmp.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/partition.toml"),
        scenarios.join("partition.toml"),
    )
    .unwrap();
    let run = |out: &str, close: bool| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
            .current_dir(tmp.path())
            .args([
                "analysis",
                "--scenarios",
                "scenarios",
                "--seeds",
                "1",
                "--out",
                out,
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if close {
            drop(child.stderr.take());
        }
        child.wait_with_output().unwrap()
    };
    let open = run("open", false);
    assert!(stderr(&open).contains("running partition"), "{}", stderr(&open));
    let closed = run("closed", true);
    assert_eq!(
        closed.status.code(),
        open.status.code(),
        "exit with stderr closed"
    );
    for out in ["open", "closed"] {
        let summary = summary(&tmp.path().join(out).join("partition"));
        assert_eq!(summary["partial"], false, "{out}: {summary}");
        assert!(
            tmp.path().join(out).join("README.md").is_file(),
            "{out}: the index"
        );
    }
}

/// Issue 40: inputs that would exhaust the machine are refused before anything is sized
/// by them: a scenario that is no regular file or larger than a scenario can be, and a
/// count of lock names past the limit.
#[test]
fn a_scenario_too_large_or_endless_and_too_many_locks_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    refused(
        &lockstorm(tmp.path(), &["scenario", "/dev/zero"]),
        "/dev/zero: cannot read: not a regular file",
    );
    let mut big = String::from("name = \"big\"\n");
    while big.len() <= 1 << 20 {
        big.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    write(tmp.path(), "big.toml", &big);
    refused(
        &lockstorm(tmp.path(), &["scenario", "big.toml"]),
        "larger than 1 MiB",
    );
    let scenario = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/partition.toml");
    refused(
        &lockstorm(
            tmp.path(),
            &[
                "scenario",
                scenario.to_str().unwrap(),
                "--set",
                "clients.locks=4294967295",
            ],
        ),
        "clients.locks = 4294967295: at most 1000000 lock names",
    );
}

/// Issue 40: `check` on a history with no acquisition (an empty file) is refused, not
/// read as "no findings".
#[test]
fn check_refuses_a_history_with_nothing_to_check() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "empty.jsonl", "");
    refused(
        &lockstorm(tmp.path(), &["check", "empty.jsonl"]),
        "no acquire in the history: nothing to check",
    );
}

/// Issue 40: a history.jsonl that is a FIFO (whose open blocks until a writer comes) is
/// refused at once by `report` and `check`, not waited on for ever.
#[test]
fn a_history_that_is_a_fifo_is_refused_not_waited_on() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("history.jsonl");
    let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
    for args in [vec!["report", "."], vec!["check", "history.jsonl"]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
            .current_dir(tmp.path())
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut status = None;
        wait_for(&format!("{args:?} to end"), || {
            status = child.try_wait().unwrap();
            status.is_some()
        });
        let mut e = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut e).unwrap();
        assert_eq!(status.unwrap().code(), Some(2), "{args:?}: {e}");
        assert!(e.contains("not a regular file"), "{args:?}: {e}");
    }
}

/// Issue 40: a second run into the folder a run is writing is refused (exit 2, one line)
/// instead of mixing its files into the first run's report.
#[test]
fn a_second_run_into_a_folder_in_use_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "long.toml", "duration = \"12h\"\nnodes = 3\n");
    write(tmp.path(), "short.toml", "duration = \"1s\"\nnodes = 3\n");
    let mut first = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .args(["scenario", "long.toml", "--quiet", "--out", "r"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let placeholder = tmp.path().join("r/summary.json");
    wait_for("the first run's placeholder summary", || placeholder.is_file());
    let second = lockstorm(tmp.path(), &["scenario", "short.toml", "--quiet", "--out", "r"]);
    first.kill().unwrap();
    first.wait().unwrap();
    refused(&second, "another lockstorm run is writing into this folder");
    // The folder is the first run's: its partial summary names its scenario.
    assert_eq!(
        summary(&tmp.path().join("r"))["scenario"],
        "long",
        "{}",
        stderr(&second)
    );
}

/// Item 7: tampered shard.json files give exit 2, not an abort.
#[test]
fn merge_refuses_tampered_shard_descriptions() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "s.toml", "duration = \"1s\"\nnodes = 3\n");
    for (i, shard) in ["0/2", "1/2"].iter().enumerate() {
        let out = lockstorm(
            tmp.path(),
            &[
                "scenario",
                "s.toml",
                "--seeds",
                "4",
                "--shard",
                shard,
                "--out",
                &format!("s{i}"),
                "-q",
            ],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let original = std::fs::read_to_string(tmp.path().join("s0/shard.json")).unwrap();
    let cases = [
        (
            original.replace("\"seeds\": 4", "\"seeds\": 18446744073709551615"),
            "the shards hold 4 seeds",
        ),
        (
            original.replace("\"count\": 2", "\"count\": 1000000000000"),
            "is missing (got 2 of 1000000000000 folders)",
        ),
        (original.replace("\"count\": 2", "\"count\": 0"), "is not a shard"),
    ];
    for (text, needle) in cases {
        assert_ne!(text, original, "the tampering applies");
        write(&tmp.path().join("s0"), "shard.json", &text);
        if text.contains("18446744073709551615") {
            let other = std::fs::read_to_string(tmp.path().join("s1/shard.json")).unwrap();
            write(
                &tmp.path().join("s1"),
                "shard.json",
                &other.replace("\"seeds\": 4", "\"seeds\": 18446744073709551615"),
            );
        }
        let out = lockstorm(tmp.path(), &["merge", "s0", "s1", "--out", "m"]);
        refused(&out, needle);
        write(&tmp.path().join("s0"), "shard.json", &original);
        let other = std::fs::read_to_string(tmp.path().join("s1/shard.json")).unwrap();
        write(
            &tmp.path().join("s1"),
            "shard.json",
            &other.replace("\"seeds\": 18446744073709551615", "\"seeds\": 4"),
        );
    }
}

/// Items 8 and 11: a line past the limit, a lock name past the limit and a line that is
/// not UTF-8 are each refused naming the line, without reading the line whole.
#[test]
fn a_history_line_too_long_or_not_utf8_is_refused_naming_the_line() {
    let tmp = tempfile::tempdir().unwrap();
    let ok = r#"{"type":"invoke","t_us":0,"client":1,"op":"acquire","lock":"a","mode":"exclusive"}"#;
    let long_name = ok.replace(r#""lock":"a""#, &format!(r#""lock":"{}""#, "n".repeat(4 << 20)));
    let name_300 = ok.replace(r#""lock":"a""#, &format!(r#""lock":"{}""#, "n".repeat(300)));
    let cases: [(Vec<u8>, &str); 3] = [
        (
            format!("{ok}\n{long_name}\n").into_bytes(),
            "h.jsonl:2: not a history event: the line is longer than",
        ),
        (
            format!("{ok}\n{name_300}\n").into_bytes(),
            "line 2: lock name of 300 bytes",
        ),
        (
            [
                ok.as_bytes(),
                b"\n",
                &ok.as_bytes()[..40],
                b"\xff\xfe",
                &ok.as_bytes()[40..],
                b"\n",
            ]
            .concat(),
            "h.jsonl:2: not a history event: not UTF-8",
        ),
    ];
    for (bytes, needle) in cases {
        std::fs::write(tmp.path().join("h.jsonl"), bytes).unwrap();
        let out = lockstorm(tmp.path(), &["check", "h.jsonl"]);
        refused(&out, needle);
    }
}

/// Item 10: narrative.md carries a hostile history's text escaped, as index.html does.
#[test]
fn narrative_md_escapes_a_hostile_lock_name() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "broken.toml",
        "duration = \"5s\"\nnodes = 3\n[algorithm]\nquorum = 1\n[clients]\ncount = 4\n",
    );
    let out = lockstorm(tmp.path(), &["scenario", "broken.toml", "--quiet", "--out", "r"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let history = std::fs::read_to_string(tmp.path().join("r/history.jsonl")).unwrap();
    let lock = history
        .split(r#""lock":""#)
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("a lock name")
        .to_string();
    let hostile = "<script>alert(1)</script>[x](javascript:alert(1))\n# Safe";
    write(
        &tmp.path().join("r"),
        "history.jsonl",
        &history.replace(
            &format!(r#""lock":"{lock}""#),
            &format!(r#""lock":{}"#, serde_json::to_string(hostile).unwrap()),
        ),
    );
    let out = lockstorm(tmp.path(), &["report", "r"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = std::fs::read_to_string(tmp.path().join("r/narrative.md")).unwrap();
    assert!(md.contains("&lt;script&gt;"), "the name is told, escaped:\n{md}");
    assert!(!md.contains("<script>"), "{md}");
    // No link: its target is cut off from its text.
    assert!(md.contains(r"[x]\(javascript"), "{md}");
    assert!(!md.contains("[x](javascript"), "{md}");
    assert!(!md.lines().any(|l| l.starts_with("# Safe")), "{md}");
    let page = std::fs::read_to_string(tmp.path().join("r/index.html")).unwrap();
    assert!(!page.contains("<script>alert"), "index.html escapes it too");
}

/// Item 4: a multi-seed run stopped before its reported seed recorded a history does
/// not recommend `lockstorm report DIR`, which would have nothing to draw from.
#[test]
fn a_stopped_multi_seed_run_recommends_only_what_works() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "s.toml", "duration = \"12h\"\nnodes = 3\n");
    let child = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .args(["scenario", "s.toml", "--seeds", "40", "--jobs", "2", "--out", "r"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let placeholder = tmp.path().join("r/summary.json");
    wait_for("the placeholder summary", || placeholder.is_file());
    // SAFETY: kill(2) on our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGHUP) }, 0);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(129), "{}", stderr(&out));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let s = summary(&tmp.path().join("r"));
    assert_eq!(s["partial"], true, "{s}");
    // Issue 40: the reason is the signal that stopped the run, said as it happened.
    let reason = s["partial_reason"].as_str().unwrap();
    assert!(reason.starts_with("stopped by SIGHUP after "), "{reason}");
    assert!(!reason.contains("as the report was written"), "{reason}");
    let has_history = tmp.path().join("r/history.jsonl").is_file();
    let recommends = stdout.contains("lockstorm report");
    assert_eq!(recommends, has_history, "{stdout}");
    if recommends {
        let out = lockstorm(tmp.path(), &["report", "r"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
}

/// Item 5: a signal that comes while the report is being written (the run itself
/// ended) leaves a summary that says the run is partial, as the exit status does.
#[test]
fn a_signal_during_report_writing_leaves_a_partial_summary() {
    let tmp = tempfile::tempdir().unwrap();
    // Long enough that drawing the report takes a while after the run ends.
    write(
        tmp.path(),
        "s.toml",
        "duration = \"600s\"\nnodes = 3\n[clients]\ncount = 8\n",
    );
    let child = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(tmp.path())
        .args(["scenario", "s.toml", "--quiet", "--out", "r"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first plot on disk: the run has ended and the report is being drawn.
    let dir = tmp.path().join("r");
    wait_for("the first plot", || {
        std::fs::read_dir(&dir).is_ok_and(|d| {
            d.flatten()
                .any(|e| e.file_name().to_string_lossy().ends_with(".svg"))
        })
    });
    // SAFETY: kill(2) on our own child process.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) }, 0);
    let out = child.wait_with_output().unwrap();
    let s = summary(&dir);
    match out.status.code() {
        Some(143) => {
            assert_eq!(s["partial"], true, "exit 143 with {s}");
            assert!(
                s["partial_reason"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("SIGTERM"),
                "{s}"
            );
        }
        // The signal came after the summary was final: it changed nothing.
        Some(0) => assert_eq!(s["partial"], false, "{s}"),
        other => panic!("exit {other:?}: {}", stderr(&out)),
    }
}

/// Item 8: a run whose history would fill the disk is refused before it starts, and
/// the limit can be raised.
#[test]
fn a_run_that_would_write_too_much_history_is_refused_before_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "s.toml", "duration = \"1000000000s\"\nnodes = 3\n");
    let out = lockstorm(tmp.path(), &["scenario", "s.toml", "--quiet", "--out", "r"]);
    refused(&out, "--max-history-mb");
    assert!(
        !tmp.path().join("r").exists(),
        "refused before anything was written"
    );
    write(tmp.path(), "t.toml", "duration = \"60s\"\nnodes = 3\n");
    let out = lockstorm(
        tmp.path(),
        &[
            "scenario",
            "t.toml",
            "--quiet",
            "--out",
            "r",
            "--max-history-mb",
            "1",
        ],
    );
    refused(&out, "over the limit of 1 MB");
}

/// Item 5: a report that cannot be written whole (a full disk, here a file size limit)
/// leaves a summary that says the run is partial, never one that vouches for files
/// that are missing or cut short.
#[test]
fn a_report_cut_short_by_a_full_disk_leaves_a_partial_summary() {
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    // Its history (about 4 KB, without node lines) fits; its latency plot (about 6.8 KB)
    // does not.
    write(
        tmp.path(),
        "s.toml",
        "duration = \"300ms\"\nnodes = 3\nnode_events = false\n[clients]\ncount = 1\n",
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lockstorm"));
    cmd.current_dir(tmp.path())
        .args(["scenario", "s.toml", "--quiet", "--out", "r"]);
    // SAFETY: setrlimit and signal are async-signal-safe; the closure touches no memory
    // of the parent's.
    unsafe {
        cmd.pre_exec(|| {
            // Writes past 6 KB fail with EFBIG, as writes to a full disk fail.
            let limit = libc::rlimit {
                rlim_cur: 6 << 10,
                rlim_max: 6 << 10,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(!e.contains("panicked"), "{e}");
    assert!(
        e.contains("File too large"),
        "the report failed, not the run: {e}"
    );
    let s = summary(&tmp.path().join("r"));
    assert_eq!(s["partial"], true, "{s}");
    assert!(
        s["partial_reason"]
            .as_str()
            .unwrap_or_default()
            .contains("report could not be written"),
        "{s}"
    );
}

/// Issue 40: a folder of the user's is never written into unless a lockstorm manifest
/// vouches for the names written. An analysis into a folder holding the user's README.md
/// and index.html is refused before anything runs; a sweep into a folder of a `reports`
/// tree leaves the user's files there and the user's site index as they are, and a
/// second sweep into the same folder replaces the first one's files (no plot of the
/// other scenario is kept).
#[test]
fn analysis_and_sweep_leave_the_users_files_as_they_are() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let user = tmp.path().join("u");
    std::fs::create_dir_all(tmp.path().join("sc")).unwrap();
    std::fs::copy(
        repo.join("scenarios/single.toml"),
        tmp.path().join("sc/single.toml"),
    )
    .unwrap();
    std::fs::create_dir_all(&user).unwrap();
    write(&user, "README.md", "mine");
    write(&user, "index.html", "mine");
    refused(
        &lockstorm(
            tmp.path(),
            &["analysis", "--scenarios", "sc", "--seeds", "1", "--out", "u"],
        ),
        "which no lockstorm manifest lists",
    );
    assert_eq!(std::fs::read_to_string(user.join("README.md")).unwrap(), "mine");
    assert!(!user.join("single").exists(), "refused before anything ran");

    let site = tmp.path().join("p/reports");
    std::fs::create_dir_all(site.join("s")).unwrap();
    write(&site, "README.md", "mine");
    write(&site.join("s"), "notes.md", "mine");
    let single = repo.join("scenarios/single.toml");
    let sweep = |file: &Path, vary: &str| {
        lockstorm(
            tmp.path(),
            &[
                "sweep",
                file.to_str().unwrap(),
                "--vary",
                vary,
                "--seeds",
                "1",
                "--quiet",
                "--out",
                "p/reports/s",
            ],
        )
    };
    let out = sweep(&single, "clients.count=2,3");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("was left as it is"), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(site.join("README.md")).unwrap(), "mine");
    assert!(!site.join("index.html").exists());
    assert_eq!(std::fs::read_to_string(site.join("s/notes.md")).unwrap(), "mine");
    assert!(site.join("s/sweep.json").is_file());
    // The second sweep replaces the first's files; a user's sweep.csv is refused.
    std::fs::write(site.join("s/sweep-stale-writes.svg"), "old").unwrap();
    let listed = std::fs::read_to_string(site.join("s/.lockstorm-files")).unwrap();
    std::fs::write(
        site.join("s/.lockstorm-files"),
        listed + "sweep-stale-writes.svg\n",
    )
    .unwrap();
    let out = sweep(&single, "clients.count=2,4");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        !site.join("s/sweep-stale-writes.svg").exists(),
        "the earlier sweep's plot went"
    );
    std::fs::remove_file(site.join("s/.lockstorm-files")).unwrap();
    // The sweep's page is one of its files now: the refusal may name it first.
    refused(
        &sweep(&single, "clients.count=2,3"),
        "which no lockstorm manifest lists",
    );
    assert_eq!(std::fs::read_to_string(site.join("s/notes.md")).unwrap(), "mine");
}

/// Issue 40: an adapter's name is its folder in the matrix: a name that is a path out of
/// it (`../../evil-escape`) is refused before anything runs, and nothing is written.
#[test]
fn an_adapter_named_like_a_path_out_of_the_matrix_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    write(
        tmp.path(),
        "list.toml",
        "[[adapter]]\nname = \"../../evil-escape\"\ncommand = [\"lockstorm\", \"worker\"]\nruntime = \"rust\"\n\
         kind = \"single\"\nfaketime = false\npromise = \"none\"\noptions = \"none\"\n",
    );
    std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
    let catalogue = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/matrix");
    refused(
        &lockstorm(
            tmp.path(),
            &[
                "matrix",
                "--list",
                "list.toml",
                "--catalogue",
                catalogue.to_str().unwrap(),
                "--faults",
                "01-clean",
                "--seeds",
                "1",
                "--out",
                "a/b/out",
            ],
        ),
        "one folder name",
    );
    assert!(!tmp.path().join("a/evil-escape").exists());
    assert!(!tmp.path().join("a/b/out").exists());
}
