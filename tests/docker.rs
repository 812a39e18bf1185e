//! Containers as nodes (`cargo test --features docker`): every scenario of
//! scenarios/docker/ through the CLI with its expected verdict, nothing labelled left
//! behind after a run, a Ctrl-C, or a SIGKILL followed by `lockstorm clean`, a clear
//! error without a Docker engine, and docker/compose.yaml brought up, run against and
//! taken down.
//!
//! Needs a Docker engine (no registry: the image is built from this machine's
//! redis-server). Where none answers, each test prints that it was skipped and why.

#![cfg(feature = "docker")]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

fn lockstorm() -> Command {
    Command::new(env!("CARGO_BIN_EXE_lockstorm"))
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Why the container tests cannot run here, if they cannot.
fn no_docker() -> Option<String> {
    match Command::new("docker")
        .args(["version", "--format", "{{.Server.Version}}"])
        .output()
    {
        Err(e) => Some(format!("the docker command is missing ({e})")),
        Ok(o) if !o.status.success() => Some(format!(
            "no Docker engine answers: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(_) => None,
    }
}

/// Returns true (after saying so) when the test must be skipped.
fn skip(test: &str) -> bool {
    match no_docker() {
        Some(why) => {
            println!("SKIPPED {test}: {why}");
            eprintln!("SKIPPED {test}: {why}");
            true
        }
        None => false,
    }
}

/// Ids of containers and volumes whose owner label names process `pid`.
fn labelled_by(pid: u32) -> Vec<String> {
    let prefix = format!("lockstorm.owner={pid}:");
    let mut found = Vec::new();
    for (what, format) in [("ps", "{{.ID}} {{.Labels}}"), ("volume", "{{.Name}} {{.Labels}}")] {
        let mut cmd = Command::new("docker");
        if what == "ps" {
            cmd.args([
                "ps",
                "-a",
                "--no-trunc",
                "--filter",
                "label=lockstorm.owner",
                "--format",
                format,
            ]);
        } else {
            cmd.args([
                "volume",
                "ls",
                "--filter",
                "label=lockstorm.owner",
                "--format",
                format,
            ]);
        }
        let out = cmd.output().expect("docker");
        for line in String::from_utf8_lossy(&out.stdout).lines() {
            if line.contains(&prefix) {
                found.push(format!("{what} {}", line.split(' ').next().unwrap_or("")));
            }
        }
    }
    found
}

fn run_file(file: &Path, extra: &[&str]) -> (Output, u32) {
    let out_dir = tempfile::tempdir().expect("temp dir");
    let child = lockstorm()
        .arg("scenario")
        .arg(file)
        .args(["--quiet", "--out"])
        .arg(out_dir.path())
        .args(extra)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lockstorm");
    let pid = child.id();
    (child.wait_with_output().expect("wait for lockstorm"), pid)
}

fn run_docker_scenario(name: &str) {
    if skip(name) {
        return;
    }
    let file = root().join("scenarios/docker").join(format!("{name}.toml"));
    let (out, pid) = run_file(&file, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{name}: verdict not as expected\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        labelled_by(pid),
        Vec::<String>::new(),
        "{name} left containers or volumes"
    );
}

#[test]
fn docker_partition_of_a_minority_keeps_redlock_safe_and_available() {
    run_docker_scenario("partition");
}

#[test]
fn docker_delay_beyond_the_request_timeout_on_a_minority_keeps_redlock_safe() {
    run_docker_scenario("delay");
}

#[test]
fn docker_crash_and_restart_on_the_same_volume_without_persistence_breaks_redlock() {
    run_docker_scenario("crash-restart");
}

#[test]
fn docker_crash_and_restart_with_aof_always_on_the_volume_keeps_redlock_safe() {
    run_docker_scenario("crash-restart-aof");
}

#[test]
fn docker_pause_of_a_minority_keeps_redlock_safe() {
    run_docker_scenario("node-pause");
}

#[test]
fn docker_clock_jump_through_libfaketime_in_the_container_breaks_redlock() {
    run_docker_scenario("clock-jump");
}

#[test]
fn docker_fast_clock_through_libfaketime_in_the_container_breaks_redlock() {
    run_docker_scenario("clock-rate");
}

#[test]
fn docker_replica_failover_loses_the_lock_as_in_seed_002() {
    run_docker_scenario("replica-failover");
}

#[test]
fn every_docker_scenario_file_has_a_test() {
    let mut names: Vec<String> = std::fs::read_dir(root().join("scenarios/docker"))
        .expect("scenarios/docker")
        .map(|e| {
            e.expect("entry")
                .path()
                .file_stem()
                .expect("stem")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    names.sort();
    let tested = [
        "clock-jump",
        "clock-rate",
        "crash-restart",
        "crash-restart-aof",
        "delay",
        "node-pause",
        "partition",
        "replica-failover",
    ];
    assert_eq!(
        names, tested,
        "add a test for each new scenario in scenarios/docker/"
    );
}

#[test]
fn without_a_docker_engine_the_error_is_one_line_and_exit_2() {
    let file = root().join("scenarios/docker/partition.toml");
    let out_dir = tempfile::tempdir().expect("temp dir");
    let out = lockstorm()
        .env("DOCKER_HOST", "unix:///nonexistent/docker.sock")
        .arg("scenario")
        .arg(&file)
        .arg("--out")
        .arg(out_dir.path())
        .output()
        .expect("run lockstorm");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("no Docker engine answers"), "{err}");
}

/// Starts a long container run and waits until its containers exist.
fn start_long_run(dir: &Path) -> Child {
    let file = dir.join("long.toml");
    std::fs::write(
        &file,
        "backend = \"docker\"\nduration = \"60s\"\nnodes = 3\n[algorithm]\nkind = \"redlock\"\nttl = \"500ms\"\n",
    )
    .expect("write");
    let child = lockstorm()
        .arg("scenario")
        .arg(&file)
        .args(["--quiet", "--out"])
        .arg(dir.join("out"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("run lockstorm");
    let deadline = Instant::now() + Duration::from_secs(120);
    // Three nodes: three containers and three volumes.
    while labelled_by(child.id()).len() < 6 {
        assert!(Instant::now() < deadline, "the run's containers never appeared");
        std::thread::sleep(Duration::from_millis(100));
    }
    child
}

#[test]
fn ctrl_c_mid_run_leaves_no_container_or_volume() {
    if skip("ctrl_c") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = start_long_run(dir.path());
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    let status = child.wait().expect("wait");
    assert!(!status.success(), "an interrupted run exits non-zero: {status}");
    assert_eq!(labelled_by(child.id()), Vec::<String>::new());
}

#[test]
fn after_sigkill_lockstorm_clean_removes_what_the_run_left() {
    if skip("sigkill_then_clean") {
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let mut child = start_long_run(dir.path());
    let pid = child.id();
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    assert!(
        !labelled_by(pid).is_empty(),
        "a SIGKILLed run cannot clean up after itself"
    );
    let out = lockstorm().arg("clean").output().expect("run lockstorm clean");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(labelled_by(pid), Vec::<String>::new());
}

/// `docker compose` if the plugin is there, else Debian's `docker-compose` (v1).
fn compose() -> Option<Vec<String>> {
    let works = |cmd: &[&str]| {
        Command::new(cmd[0])
            .args(&cmd[1..])
            .arg("version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    [vec!["docker", "compose"], vec!["docker-compose"]]
        .into_iter()
        .find(|c| works(c))
        .map(|c| c.into_iter().map(String::from).collect())
}

#[test]
fn compose_file_brings_up_five_masters_that_redlock_external_runs_against() {
    if skip("compose") {
        return;
    }
    let Some(compose) = compose() else {
        println!("SKIPPED compose: neither `docker compose` nor `docker-compose` is installed");
        eprintln!("SKIPPED compose: neither `docker compose` nor `docker-compose` is installed");
        return;
    };
    let docker_dir = root().join("docker");
    let rootfs = tempfile::tempdir().expect("temp dir");
    let built = Command::new("bash")
        .arg(docker_dir.join("build-rootfs.sh"))
        .arg(rootfs.path().join("rootfs"))
        .output()
        .expect("run build-rootfs.sh");
    assert!(
        built.status.success(),
        "{}",
        String::from_utf8_lossy(&built.stderr)
    );
    // The compose project builds from a copy of docker/ with its own rootfs, under its
    // own project name, so it stays out of other runs' way; its ports are left to Docker
    // (empty LOCKSTORM_PORTn), which binds them as it picks them: a port picked here and
    // handed over could be taken meanwhile by any of the connections other tests open.
    let context = rootfs.path();
    for f in ["Dockerfile", "compose.yaml"] {
        std::fs::copy(docker_dir.join(f), context.join(f)).expect("copy");
    }
    let project = format!("lockstorm-test-{}", std::process::id());
    let run = |args: &[&str]| {
        let mut cmd = Command::new(&compose[0]);
        cmd.args(&compose[1..])
            .args(["-p", &project, "-f"])
            .arg(context.join("compose.yaml"))
            .args(args);
        for i in 1..=5 {
            cmd.env(format!("LOCKSTORM_PORT{i}"), "");
        }
        cmd.output().expect("run compose")
    };
    struct Down<'a>(&'a dyn Fn(&[&str]) -> Output);
    impl Drop for Down<'_> {
        fn drop(&mut self) {
            (self.0)(&["down", "-v", "--rmi", "local"]);
        }
    }
    let _down = Down(&run);
    let up = run(&["up", "-d", "--build"]);
    assert!(
        up.status.success(),
        "compose up: {}",
        String::from_utf8_lossy(&up.stderr)
    );

    let ports: Vec<u16> = (1..=5)
        .map(|i| {
            let out = run(&["port", &format!("redis{i}"), "6379"]);
            let text = String::from_utf8_lossy(&out.stdout);
            let port = text.trim().rsplit_once(':').and_then(|(_, p)| p.parse().ok());
            port.unwrap_or_else(|| {
                panic!(
                    "compose port redis{i}: {text}{}",
                    String::from_utf8_lossy(&out.stderr)
                )
            })
        })
        .collect();
    let text = std::fs::read_to_string(docker_dir.join("redlock-external.toml")).expect("read");
    let nodes: Vec<String> = ports.iter().map(|p| format!("\"127.0.0.1:{p}\"")).collect();
    let text: String = text
        .lines()
        .map(|l| {
            // The servers' addresses, not the partition's node indices.
            if l.starts_with("nodes = [\"") {
                format!("nodes = [{}]", nodes.join(", "))
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    let file: PathBuf = context.join("redlock-external.toml");
    std::fs::write(&file, text).expect("write");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ports.iter().all(|p| ping(*p)) {
        assert!(Instant::now() < deadline, "the compose servers never answered");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (out, _) = run_file(&file, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "redlock-external.toml against compose: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn ping(port: u16) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    let mut buf = [0u8; 7];
    s.write_all(b"PING\r\n").is_ok() && s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

/// One scenario on the simulator, on local redis-servers and on containers: the verdict
/// tables must agree. The failover pair tells apart the two knobs real Redis can express
/// (the replication lag and the promotion delay); the crash pair, persistence.
#[test]
fn the_simulator_local_servers_and_containers_give_the_same_verdicts() {
    use lockstorm::real::RealOptions;
    use lockstorm::run;
    use lockstorm::scenario::{Backend, Scenario};
    if skip("differential") {
        return;
    }
    let files = [
        "scenarios/real/replica-failover.toml",
        "scenarios/real/replica-failover-late-promotion.toml",
        "scenarios/docker/crash-restart.toml",
        "scenarios/docker/crash-restart-aof.toml",
    ];
    let mut table = vec![format!(
        "{:<52} {:>8} {:>8} {:>8}",
        "scenario", "sim", "redis", "docker"
    )];
    let mut disagree = Vec::new();
    for f in files {
        let mut scenario = Scenario::load(&root().join(f)).unwrap_or_else(|e| panic!("{e}"));
        let verdicts: Vec<&str> = [Backend::Sim, Backend::Redis, Backend::Docker]
            .into_iter()
            .map(|backend| {
                scenario.backend = backend;
                let outcome = run::run(&scenario, &[scenario.seed], 1, &RealOptions::default(), &|_| {})
                    .unwrap_or_else(|e| panic!("{f} on {backend:?}: {e}"));
                if outcome.safe {
                    "safe"
                } else {
                    "unsafe"
                }
            })
            .collect();
        table.push(format!(
            "{f:<52} {:>8} {:>8} {:>8}",
            verdicts[0], verdicts[1], verdicts[2]
        ));
        if verdicts.iter().any(|v| *v != verdicts[0]) {
            disagree.push(f);
        }
    }
    println!("{}", table.join("\n"));
    assert!(
        disagree.is_empty(),
        "verdicts disagree on {disagree:?}:\n{}",
        table.join("\n")
    );
}
