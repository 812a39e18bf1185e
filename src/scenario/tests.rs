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
            clients: vec![0, 1, 2]
        }
    );
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
            client: 2,
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
