use super::*;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(text, "t.toml", "t")
}

#[test]
fn an_empty_file_is_a_scenario_with_every_default() {
    let s = parse("").unwrap();
    assert_eq!(s.name, "t");
    assert_eq!(s.nodes, 5);
    assert_eq!(s.algorithm.quorum, 3);
    assert_eq!(s.algorithm.ttl_ms, 10_000);
    assert_eq!(s.expect, Expect::Safe);
    assert!(s.faults.is_empty());
}

#[test]
fn unknown_keys_name_file_line_column_and_key() {
    let e = parse("nodes = 3\n[algorithm]\nttl = \"1s\"\nttl_typo = 4\n").unwrap_err();
    let msg = e.to_string();
    assert!(msg.starts_with("t.toml:4:1: "), "{msg}");
    assert!(msg.contains("ttl_typo"), "{msg}");
    assert!(!msg.contains('\n'), "one line: {msg}");
}

#[test]
fn bad_values_are_located_too() {
    let msg = parse("duration = \"ten\"\n").unwrap_err().to_string();
    assert!(msg.starts_with("t.toml:1:"), "{msg}");
    assert!(msg.contains("duration"), "{msg}");
    let msg = parse("[algorithm]\nkind = \"paxos\"\n").unwrap_err().to_string();
    assert!(msg.contains("t.toml:2:") && msg.contains("paxos"), "{msg}");
}

#[test]
fn impossible_parameters_are_refused() {
    let cases = [
        ("[algorithm]\nquorum = 6\n", "quorum = 6"),
        ("[algorithm]\nttl = \"0s\"\n", "ttl must be above 0"),
        ("[clients]\ncount = 0\n", "at least one client"),
        ("nodes = 0\n", "nodes = 0"),
        ("[algorithm]\nkind = \"single\"\n", "runs on one node"),
        (
            "[[faults]]\nat = \"1s\"\nkind = \"partition\"\nnodes = [7]\n",
            "node 7 does not exist",
        ),
        (
            "duration = \"1s\"\n[[faults]]\nat = \"2s\"\nkind = \"partition\"\nnodes = [1]\n",
            "not before the end",
        ),
        ("[algorithm]\nttl = \"2ms\"\n", "no validity is left"),
    ];
    for (text, needle) in cases {
        let msg = parse(text).unwrap_err().to_string();
        assert!(msg.contains(needle), "{text:?} gave {msg:?}");
    }
}

#[test]
fn a_negative_fault_time_is_an_error() {
    let msg = parse("[[faults]]\nat = \"-1s\"\nkind = \"partition\"\nnodes = [1]\n")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("negative"), "{msg}");
}

#[test]
fn scripted_faults_default_to_all_clients_and_the_heal() {
    let s = parse("[clients]\ncount = 3\n[[faults]]\nat = \"2s\"\nkind = \"partition\"\nnodes = [4, 1]\n")
        .unwrap();
    let f = &s.faults[0];
    assert_eq!(f.at_us, 2_000_000);
    assert_eq!(f.duration_us, None);
    assert_eq!(
        f.fault,
        crate::fault::Fault::Partition {
            nodes: vec![1, 4],
            clients: vec![0, 1, 2],
            direction: Default::default(),
        }
    );
}

#[test]
fn every_fault_kind_parses_into_the_typed_enum() {
    use crate::fault::{CutDirection, Fault, PausePoint, Persistence};
    let s = parse(
        r#"
nodes = 3
persistence = ["none", "aof_everysec", "aof_always"]
[replication]
lag = "100ms"
[clients]
count = 2
[[faults]]
at = "1s"
kind = "partition"
nodes = [0]
direction = "to_clients"
[[faults]]
at = "2s"
kind = "crash"
node = 2
restart_after = "0s"
power_loss = true
[[faults]]
at = "3s"
kind = "pause"
client = 1
duration = "5s"
point = "after_acquire"
[[faults]]
at = "4s"
kind = "clock_jump"
node = 1
by = "-3s"
[[faults]]
at = "5s"
kind = "clock_rate"
client = 0
rate = 1.02
[[faults]]
at = "6s"
kind = "delay"
extra = "500ms"
duration = "1s"
[[faults]]
at = "7s"
kind = "loss"
clients = [1]
probability = 0.5
[[faults]]
at = "8s"
kind = "failover"
promote_after = "1s"
[[faults]]
at = "9s"
kind = "replication_cut"
node = 2
duration = "2s"
"#,
    )
    .unwrap();
    assert_eq!(
        s.persistence,
        vec![
            Persistence::None,
            Persistence::AofEverysec,
            Persistence::AofAlways
        ]
    );
    assert_eq!(s.replication.unwrap().lag_us, 100_000);
    let kinds: Vec<&Fault> = s.faults.iter().map(|f| &f.fault).collect();
    assert_eq!(
        kinds[0],
        &Fault::Partition {
            nodes: vec![0],
            clients: vec![0, 1],
            direction: CutDirection::ToClients
        }
    );
    assert_eq!(
        kinds[1],
        &Fault::Crash {
            node: 2,
            power_loss: true
        }
    );
    assert_eq!(
        s.faults[1].duration_us,
        Some(0),
        "restart_after is the crash's duration"
    );
    assert_eq!(
        kinds[2],
        &Fault::Pause {
            node: None,
            client: Some(1),
            point: Some(PausePoint::AfterAcquire)
        }
    );
    assert_eq!(
        kinds[3],
        &Fault::ClockJump {
            node: Some(1),
            client: None,
            by_us: -3_000_000
        }
    );
    assert_eq!(
        kinds[4],
        &Fault::ClockRate {
            node: None,
            client: Some(0),
            rate: 1.02
        }
    );
    assert_eq!(
        kinds[5],
        &Fault::Delay {
            nodes: vec![0, 1, 2],
            clients: vec![0, 1],
            extra_us: 500_000
        }
    );
    assert_eq!(
        kinds[6],
        &Fault::Loss {
            nodes: vec![0, 1, 2],
            clients: vec![1],
            probability: 0.5
        }
    );
    assert_eq!(kinds[7], &Fault::Failover { node: 0 });
    assert_eq!(s.faults[7].duration_us, Some(1_000_000));
    assert_eq!(kinds[8], &Fault::ReplicationCut { node: 2 });
    assert_eq!(s.faults[8].duration_us, Some(2_000_000));
}

#[test]
fn bad_faults_are_one_line_errors() {
    let cases = [
        ("[[faults]]\nat = \"1s\"\nkind = \"meteor\"\n", "meteor"),
        ("[[faults]]\nat = \"1s\"\nkind = \"crash\"\nnode = 7\n", "node 7 does not exist"),
        ("[[faults]]\nat = \"-1s\"\nkind = \"crash\"\nnode = 0\n", "negative"),
        (
            "[[faults]]\nat = \"1s\"\nkind = \"crash\"\nnode = 0\nrestart_after = \"-2s\"\n",
            "negative",
        ),
        (
            "[clients]\ncount = 2\n[[faults]]\nat = \"1s\"\nkind = \"pause\"\nclient = 2\nduration = \"1s\"\n",
            "client 2 does not exist",
        ),
        (
            "[[faults]]\nat = \"1s\"\nkind = \"pause\"\nnode = 1\nclient = 1\nduration = \"1s\"\n",
            "either `node` or `client`",
        ),
        ("[[faults]]\nat = \"1s\"\nkind = \"failover\"\n", "needs a replica"),
        (
            "[[faults]]\nat = \"1s\"\nkind = \"replication_cut\"\n",
            "a replication cut needs replicas: add `[replication]` with a `lag` (simulator) or `[sentinel]`",
        ),
        (
            "[[faults]]\nat = \"1s\"\nkind = \"loss\"\nprobability = 1.5\n",
            "probability",
        ),
        (
            "[[faults]]\nat = \"1s\"\nkind = \"clock_rate\"\nnode = 0\nrate = -1.0\n",
            "clock rate",
        ),
        ("persistence = [\"none\"]\n", "persistence lists 1 nodes"),
        ("[nemesis]\nfailover = { interval = \"1s\", duration = \"0s\" }\n", "needs a replica"),
        (
            "duration = \"1s\"\n[nemesis]\npartition = { interval = \"1us\", duration = \"1ms\" }\n",
            "t.toml:3: nemesis.partition.interval plans about 1000000 faults in a run of 1s",
        ),
        (
            "duration = \"10m\"\n[nemesis]\ncrash = { interval = { mean = \"1s\", max = \"1ms\" }, duration = \"1ms\" }\n",
            "nemesis.crash.interval plans about 600300 faults",
        ),
        ("[network]\nlatency = \"0ms\"\n", "t.toml:2: network.latency = 0"),
    ];
    for (text, want) in cases {
        let msg = parse(text).unwrap_err().to_string();
        assert!(msg.contains(want), "{text:?} gave {msg:?}, wanted {want:?}");
        assert!(!msg.contains('\n'), "one line: {msg}");
    }
}

#[test]
fn read_write_extension_fencing_and_pause_knobs_resolve() {
    let s = parse(
        "[algorithm]\nkind = \"fair_rw_redlock\"\nttl = \"300ms\"\nmax_extensions = 2\nfencing = true\nfair_after = \"20ms\"\n\
         [clients]\nread_share = 0.8\nwriter_wait_bound = \"2s\"\n\
         [[faults]]\nat = \"1s\"\nkind = \"pause\"\nclient = 2\nduration = \"1s\"\npoint = \"after_acquire\"\n",
    )
    .unwrap();
    let a = &s.algorithm;
    assert_eq!(
        (a.max_extensions, a.extend_before_us, a.fair_after_us),
        (2, 100_000, 20_000)
    );
    assert!(
        a.fencing && s.clients.resource_writes,
        "fencing turns resource writes on"
    );
    assert_eq!(
        (s.clients.read_share, s.clients.writer_wait_bound_us),
        (0.8, Some(2_000_000))
    );
    assert_eq!(
        s.faults[0].fault,
        crate::fault::Fault::Pause {
            node: None,
            client: Some(2),
            point: Some(crate::fault::PausePoint::AfterAcquire)
        }
    );
    let rw = parse("[algorithm]\nkind = \"rw_redlock\"\n").unwrap();
    assert_eq!(
        rw.clients.read_share, 0.5,
        "read-write locks default to half reads"
    );
    assert!(!rw.clients.resource_writes);
}

#[test]
fn read_write_knobs_that_make_no_sense_are_refused() {
    let cases = [
        ("[clients]\nread_share = 0.5\n", "only read-write algorithms"),
        (
            "[algorithm]\nkind = \"rw_redlock\"\n[clients]\nread_share = 1.5\n",
            "between 0 and 1",
        ),
        (
            "[algorithm]\nkind = \"rw_redlock\"\nfair_after = \"1s\"\n",
            "fair_rw_redlock",
        ),
        (
            "[algorithm]\nttl = \"1s\"\nextend_before = \"2s\"\n",
            "below the ttl",
        ),
        ("[algorithm]\nmax_extensions = -1\n", "must not be negative"),
        (
            "[[faults]]\nat = \"1s\"\nkind = \"pause\"\nclient = 9\nduration = \"1s\"\n",
            "client 9 does not exist",
        ),
    ];
    for (text, want) in cases {
        let msg = parse(text).unwrap_err().to_string();
        assert!(msg.contains(want), "{text:?}: {msg}");
    }
}

#[test]
fn client_mistake_knobs_resolve_and_default_to_the_correct_choice() {
    use crate::algorithm::{Extend, Mistakes, Release, TokenScope};
    let s = parse("").unwrap();
    assert_eq!(s.algorithm.mistakes, Mistakes::default());
    assert_eq!(s.algorithm.mistakes.release, Release::Compare);
    assert!(s.network.fifo);
    let s = parse(
        "[algorithm]\nrelease = \"del\"\nextend = \"pexpire\"\nmax_extensions = 1\ntoken = \"per_client\"\n\
         [network]\nfifo = false\n",
    )
    .unwrap();
    let m = s.algorithm.mistakes;
    assert_eq!(
        (m.release, m.extend, m.token),
        (Release::Del, Extend::Pexpire, TokenScope::PerClient)
    );
    assert!(!s.network.fifo);
    let msg = parse("[algorithm]\nextend = \"pexpire\"\n")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("max_extensions"), "{msg}");
    let msg = parse("[algorithm]\nrelease = \"unlink\"\n")
        .unwrap_err()
        .to_string();
    assert!(msg.contains("t.toml:2:") && msg.contains("unlink"), "{msg}");
}

#[test]
fn wait_after_set_resolves_with_the_request_timeout_and_refuses_what_cannot_work() {
    use crate::algorithm::WaitAfterSet;
    assert_eq!(
        parse("").unwrap().algorithm.wait,
        None,
        "no WAIT, as in the seeds"
    );
    let s = parse("[algorithm]\nwait_replicas = 2\nrequest_timeout = \"80ms\"\n").unwrap();
    let wait = WaitAfterSet {
        replicas: 2,
        timeout_ms: 80,
    };
    assert_eq!(s.algorithm.wait, Some(wait));
    let s = parse("[algorithm]\nwait_replicas = 1\nwait_timeout = \"1500us\"\n").unwrap();
    assert_eq!(
        s.algorithm.wait.map(|w| w.timeout_ms),
        Some(2),
        "rounded up to whole ms"
    );
    for (text, want) in [
        (
            "[algorithm]\nwait_timeout = \"1s\"\n",
            "needs wait_replicas above 0",
        ),
        ("[algorithm]\nwait_replicas = -1\n", "between 0 (no WAIT) and 64"),
        ("[algorithm]\nwait_replicas = 65\n", "between 0 (no WAIT) and 64"),
        (
            "[algorithm]\nwait_replicas = 1\nwait_timeout = \"0s\"\n",
            "WAIT's timeout 0 waits forever",
        ),
    ] {
        let msg = parse(text).unwrap_err().to_string();
        assert!(msg.contains(want), "{text:?}: {msg}");
    }
}

#[test]
fn the_docker_backend_parses_and_refuses_servers_it_does_not_run() {
    let s = parse("backend = \"docker\"\nnodes = 3\n").unwrap();
    assert_eq!(s.backend, Backend::Docker);
    assert!(s.rerun_command(7).contains("--features docker -- scenario"));
    let e = parse("backend = \"docker\"\nnodes = [\"127.0.0.1:6379\"]\n").unwrap_err();
    assert!(e.to_string().contains("starts its own containers"), "{e}");
}

#[test]
fn the_probe_client_is_one_more_client_on_a_lock_of_its_own() {
    let s = parse("[clients]\ncount = 3\nlocks = 2\nprobe = true\n").unwrap();
    assert_eq!(s.clients.probe, Some(Probe::default()));
    assert_eq!(
        (
            s.clients.total(),
            s.clients.probe_client(),
            s.clients.probe_lock()
        ),
        (4, Some(3), Some(crate::command::LockId(2)))
    );
    let s = parse("[clients]\nprobe = { think = \"5ms\" }\n").unwrap();
    let p = s.clients.probe.unwrap();
    assert_eq!((p.think, p.hold), (Dist::fixed(5_000), Probe::default().hold));
    let off = parse("[clients]\nprobe = false\n").unwrap();
    assert_eq!((off.clients.probe, off.clients.total()), (None, 5));
    let msg = parse("[clients]\nprobe = { think = \"5ms\", period = \"1s\" }\n")
        .unwrap_err()
        .to_string();
    assert!(msg.starts_with("t.toml:2:") && msg.contains("period"), "{msg}");
    let msg = parse("[clients]\nprobe = \"yes\"\n").unwrap_err().to_string();
    assert!(msg.contains("true, false, or a table"), "{msg}");
}

#[test]
fn a_rerun_command_names_the_worker_the_run_had() {
    let mut s = Scenario::parse("backend = \"redis\"\n", "t.toml", "t").unwrap();
    assert!(!s.rerun_command(3).contains("--adapter"));
    assert!(s.shrink_command(3).is_ok());
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(crate::worker::adapters::DEFAULT_LIST);
    let listed = crate::worker::adapters::load(&path).unwrap();
    let pottery = listed.iter().find(|a| a.name == "pottery").unwrap();
    s.clients.worker = Some(pottery.spec());
    let rerun = s.rerun_command(3);
    assert!(
        rerun.contains(" --seed 3 --backend redis --adapter pottery --adapter-list "),
        "a list named by its full path is not the default one: {rerun}"
    );
    s.clients.worker = Some(crate::worker::WorkerSpec::from_command_line("python3 w.py").unwrap());
    assert!(s
        .rerun_command(3)
        .ends_with("--seed 3 --backend redis --worker 'python3 w.py'"));
    assert_eq!(
        s.shrink_command(3),
        Err(super::SHRINK_NO_WORKER),
        "shrink cannot run a library"
    );
}

#[test]
fn a_hello_round_trips_with_the_exact_configuration() {
    use crate::worker::protocol::*;
    let s = Scenario::parse(
        "[algorithm]\nretry_delay = { mean = \"30ms\", max = \"90ms\" }\nrequest_timeout = \"0.5ms\"\n",
        "t",
        "t",
    )
    .unwrap();
    let a = HelloAlgorithm::from_config(&s.algorithm);
    assert_eq!(a.request_timeout_ms, 1, "rounded up, never to 0");
    assert_eq!(
        a.retry_delay_ms,
        DelayMs {
            min: None,
            mean: Some(30),
            max: 90
        }
    );
    let line = to_line(&ToWorker::Hello(Box::new(Hello {
        id: 0,
        protocol: VERSION,
        client: 1,
        clients: 2,
        nodes: vec!["127.0.0.1:1".into()],
        locks: vec!["L0".into()],
        ttl_ms: 10_000,
        seed: 7,
        algorithm: a,
        sentinel: None,
        cluster: None,
    })));
    assert!(
        line.starts_with(r#"{"type":"hello","id":0,"protocol":2,"client":1"#),
        "{line}"
    );
    let ToWorker::Hello(back) = serde_json::from_str(&line).unwrap() else {
        panic!("{line}")
    };
    assert_eq!(back.algorithm.config.as_ref(), Some(&s.algorithm));
}

const SENTINEL: &str = "backend = \"redis\"\nnodes = 1\n[algorithm]\nkind = \"single\"\n";

#[test]
fn a_sentinel_table_takes_settings_defaults_and_its_own_keys() {
    let s = parse(SENTINEL).unwrap();
    assert_eq!(s.sentinel, None);
    let s = parse(&format!("{SENTINEL}[sentinel]\n")).unwrap();
    assert_eq!(s.sentinel, Some(crate::real::deployment::Settings::default()));
    let s = parse(&format!(
        "{SENTINEL}[sentinel]\nreplicas = 2\nsentinels = 5\nquorum = 3\ndown_after = \"1500ms\"\n\
         failover_timeout = \"5s\"\nmin_replicas_to_write = 1\nmin_replicas_max_lag = \"2s\"\n"
    ))
    .unwrap();
    let st = s.sentinel.unwrap();
    assert_eq!((st.replicas, st.sentinels, st.quorum), (2, 5, 3));
    assert_eq!((st.down_after_ms, st.failover_timeout_ms), (1_500, 5_000));
    assert_eq!((st.min_replicas_to_write, st.min_replicas_max_lag_s), (1, 2));
    // Written back as read (shrink and the matrix write scenarios).
    let again = parse(&s_with_sentinel_written(&format!(
        "{SENTINEL}[sentinel]\nquorum = 3\nsentinels = 4\n"
    )))
    .unwrap();
    assert_eq!(again.sentinel.unwrap().quorum, 3);
}

fn s_with_sentinel_written(text: &str) -> String {
    parse(text).unwrap().to_toml("")
}

#[test]
fn a_sentinel_table_where_it_cannot_work_is_refused_in_one_line_naming_the_key() {
    for (text, needle) in [
        (
            format!("{SENTINEL}[sentinel]\nquorum = 4\n"),
            "quorum 4 with 3 sentinels",
        ),
        (format!("{SENTINEL}[sentinel]\nsentinels = 2\n"), "2 sentinel(s)"),
        (format!("{SENTINEL}[sentinel]\nreplicas = 0\n"), "0 replicas"),
        (
            format!("{SENTINEL}[sentinel]\nmin_replicas_to_write = 2\n"),
            "min_replicas_to_write 2",
        ),
        (
            format!("{SENTINEL}[sentinel]\ndown_after = \"1500us\"\n"),
            "sentinel.down_after",
        ),
        (
            format!("{SENTINEL}[sentinel]\nmin_replicas_max_lag = \"1500ms\"\n"),
            "sentinel.min_replicas_max_lag",
        ),
        (format!("{SENTINEL}[sentinel]\nquorom = 2\n"), "quorom"),
        (
            "nodes = 1\n[algorithm]\nkind = \"single\"\n[sentinel]\n".into(),
            "backend = \"redis\"",
        ),
        (
            "backend = \"redis\"\nnodes = 3\n[algorithm]\nkind = \"single\"\n[sentinel]\n".into(),
            "nodes = 3",
        ),
        (
            "backend = \"redis\"\nnodes = 1\n[algorithm]\nkind = \"redlock\"\n[sentinel]\n".into(),
            "algorithm.kind = \"single\"",
        ),
        (
            format!("{SENTINEL}[replication]\nlag = \"1ms\"\n[sentinel]\n"),
            "leave out [replication]",
        ),
    ] {
        let msg = parse(&text).unwrap_err().to_string();
        assert!(msg.contains(needle), "{needle}: {msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
    }
}

/// The simulator's model of a Sentinel deployment: a replica trailing by 1 ms, a crash
/// that outlasts the sentinels' failover time becomes a failover promoted at down-after
/// plus 1.2 s, a shorter one stays a crash; what the model leaves out is refused.
#[test]
fn the_simulators_model_of_a_sentinel_deployment_times_its_failover() {
    use crate::fault::Fault;
    let file = |faults: &str, sentinel: &str| {
        parse(&format!(
            "{SENTINEL}[sentinel]\ndown_after = \"1s\"\n{sentinel}{faults}"
        ))
        .unwrap()
    };
    let crash = |after: &str| {
        format!("[[faults]]\nat = \"1s\"\nkind = \"crash\"\nnode = 0\nrestart_after = \"{after}\"\n")
    };
    let m = file(&crash("5s"), "").deployment_on_simulator().unwrap();
    assert_eq!(m.sentinel, None);
    assert_eq!(m.replication.map(|r| r.lag_us), Some(1_000));
    assert_eq!(m.faults[0].fault, Fault::Failover { node: 0 });
    assert_eq!(m.faults[0].duration_us, Some(2_200_000), "down-after 1 s + 1.2 s");
    let m = file(&crash("2s"), "").deployment_on_simulator().unwrap();
    assert_eq!(
        m.faults[0].fault,
        Fault::Crash {
            node: 0,
            power_loss: false
        },
        "back before the sentinels fail over"
    );
    let cut = "[[faults]]\nat = \"0s\"\nkind = \"replication_cut\"\n";
    let m = file(cut, "").deployment_on_simulator().unwrap();
    assert_eq!(m.faults[0].fault, Fault::ReplicationCut { node: 0 });
    let split = "[[faults]]\nat = \"1s\"\nkind = \"partition\"\nnodes = [0]\n";
    assert!(file(split, "")
        .deployment_on_simulator()
        .unwrap_err()
        .contains("split brain"));
    let mitigated = file(cut, "min_replicas_to_write = 1\nmin_replicas_max_lag = \"1s\"\n");
    assert!(mitigated
        .deployment_on_simulator()
        .unwrap_err()
        .contains("min-replicas-to-write"));
    let no_restart = "[[faults]]\nat = \"1s\"\nkind = \"crash\"\nnode = 0\n";
    assert!(file(no_restart, "")
        .deployment_on_simulator()
        .unwrap_err()
        .contains("restart_after"));
    let plain = parse(SENTINEL).unwrap();
    assert_eq!(plain.deployment_on_simulator().unwrap(), plain);
}

#[test]
fn a_worker_deadline_waits_for_the_worker_the_command_line_names() {
    let text = "backend = \"redis\"\nnodes = 1\n[algorithm]\nkind = \"single\"\n[clients]\nworker_deadline = \"90s\"\n";
    let mut s = parse(text).unwrap();
    assert_eq!(
        (s.clients.worker.as_ref(), s.clients.worker_deadline_us),
        (None, Some(90_000_000))
    );
    s.clients
        .attach_worker(crate::worker::WorkerSpec::from_command_line("python3 w.py").unwrap());
    assert_eq!(s.clients.worker.as_ref().map(|w| w.deadline_us), Some(90_000_000));
    // Written back, it reads the same.
    assert_eq!(
        parse(&s.to_toml("")).unwrap().clients.worker.unwrap().deadline_us,
        90_000_000
    );
    // Without a deadline in the file a named worker keeps the default.
    let mut plain = parse("backend = \"redis\"\nnodes = 1\n").unwrap();
    plain
        .clients
        .attach_worker(crate::worker::WorkerSpec::from_command_line("python3 w.py").unwrap());
    assert_eq!(
        plain.clients.worker.unwrap().deadline_us,
        crate::worker::DEFAULT_DEADLINE_US
    );
    let err = parse(&text.replace("worker_deadline = \"90s\"", "worker_faketime = true")).unwrap_err();
    assert!(
        err.to_string().contains("worker_faketime needs clients.worker"),
        "{err}"
    );
    let zero = parse(&text.replace("90s", "0s")).unwrap_err();
    assert!(zero.to_string().contains("must be above 0"), "{zero}");
}

#[test]
fn every_command_a_page_prints_says_where_it_runs_and_keeps_the_overrides() {
    let path = std::path::Path::new("scenarios/partition.toml");
    let text = "nodes = 3\n[algorithm]\nttl = \"1s\"\n";
    let sets = [Override::parse("algorithm.ttl=2s").unwrap()];
    let sim = Scenario::from_text(text, path, &sets).unwrap();
    assert_eq!(
        sim.rerun_command(4),
        "cargo run --release -- scenario scenarios/partition.toml --seed 4 --set algorithm.ttl=2s"
    );
    assert_eq!(
        sim.shrink_command(4).unwrap(),
        "cargo run --release -- shrink scenarios/partition.toml --seed 4 --set algorithm.ttl=2s",
        "a simulated run shrinks where it ran"
    );
    // On real servers the rerun names the backend, and the shrink says that it reruns
    // the simulator (it takes no other).
    let mut real = sim.clone();
    real.backend = Backend::Redis;
    assert_eq!(
        real.rerun_command(4),
        "cargo run --release -- scenario scenarios/partition.toml --seed 4 --backend redis --set algorithm.ttl=2s"
    );
    assert_eq!(
        real.shrink_command(4).unwrap(),
        "cargo run --release -- shrink scenarios/partition.toml --seed 4 --backend sim --set algorithm.ttl=2s"
    );
    let mut docker = sim.clone();
    docker.backend = Backend::Docker;
    assert!(docker
        .rerun_command(4)
        .starts_with("cargo run --release --features docker -- scenario scenarios/partition.toml --seed 4 --backend docker"));
    assert!(docker
        .shrink_command(4)
        .unwrap()
        .contains(" --seed 4 --backend sim"));
    // The whole run: its consecutive seeds, else none (one seed, a shard's).
    assert_eq!(
        real.run_command(&[4, 5, 6]).unwrap(),
        "cargo run --release -- scenario scenarios/partition.toml --seed 4 --seeds 3 --backend redis --set algorithm.ttl=2s"
    );
    assert_eq!(real.run_command(&[6, 4, 5]), real.run_command(&[4, 5, 6]));
    assert_eq!(real.run_command(&[4]), None);
    assert_eq!(real.run_command(&[4, 6, 8]), None);
    assert_eq!(real.run_command(&[]), None);
}

#[test]
fn the_expectation_is_said_whole_lock_resource_and_liveness() {
    assert_eq!(parse("").unwrap().expectation(), "lock safe");
    let s = parse("expect = \"safe\"\nexpect_resource = \"unsafe\"\n").unwrap();
    assert_eq!(s.expectation(), "lock safe, resource unsafe");
    let s = parse("expect = \"unsafe\"\nexpect_live = false\n").unwrap();
    assert_eq!(s.expectation(), "lock unsafe, not live");
}

#[test]
fn fault_kinds_name_each_kind_once_with_the_persistence_a_crash_meets() {
    let s = parse(
        "persistence = \"aof_everysec\"\n\
         [[faults]]\nat = \"1s\"\nkind = \"crash\"\nnode = 2\nrestart_after = \"0s\"\npower_loss = true\n\
         [[faults]]\nat = \"2s\"\nkind = \"crash\"\nnode = 2\nrestart_after = \"0s\"\npower_loss = true\n\
         [[faults]]\nat = \"3s\"\nkind = \"clock_jump\"\nnode = 1\nby = \"+1s\"\n\
         [[faults]]\nat = \"3s\"\nkind = \"clock_jump\"\nclient = 0\nby = \"+1s\"\n\
         [nemesis]\npartition = { interval = { mean = \"1s\", max = \"5s\" }, duration = { min = \"50ms\", max = \"1s\" } }\n",
    )
    .unwrap();
    assert_eq!(
        s.fault_kinds(),
        [
            "node crashes with power loss (AOF everysec)",
            "node clock jumps",
            "client clock jumps",
            "random partitions"
        ]
    );
    assert!(parse("").unwrap().fault_kinds().is_empty());
}
