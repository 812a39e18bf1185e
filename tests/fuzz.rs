//! Fuzzing the two inputs lockstorm reads from people and other programs: scenario files
//! and histories (proptest). Values come from pools of ordinary, boundary and absurd
//! ones (a 1 us nemesis interval, 10^8 nodes, an index of 2^32, a time past u64), keys
//! from the real schema, so most cases get past the parser and reach the checks behind it.
//!
//! For every input: no panic, and work bounded by the input. A scenario either is
//! refused with a message or plans at most [`MAX_DRAWN_FAULTS`] faults, and a small one
//! is simulated within a budget of events linear in its simulated time and processes. A
//! history either is refused or is judged and viewed with every per-node and per-client
//! size within [`lockstorm::limits`]. `LOCKSTORM_FUZZ_CASES` sets the case count
//! (default 512 each: about a second, to keep CI lean).

use lockstorm::checker;
use lockstorm::history::Event;
use lockstorm::lifecycle::Lifecycle;
use lockstorm::limits::{MAX_CLIENTS, MAX_DRAWN_FAULTS, MAX_NODES};
use lockstorm::report::view::RunView;
use lockstorm::scenario::Scenario;
use proptest::prelude::*;
use proptest::strategy::Union;

fn cases() -> u32 {
    std::env::var("LOCKSTORM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        // A generous bound against a hang; the work bounds below are the real checks.
        timeout: 120_000,
        ..ProptestConfig::default()
    }
}

/// One of `items`, as a TOML value.
fn pick(items: &[&'static str]) -> BoxedStrategy<String> {
    prop::sample::select(items.to_vec())
        .prop_map(str::to_string)
        .boxed()
}

/// Mostly `usual`, sometimes `odd`: most cases get past the parser, some do not.
fn mostly(usual: BoxedStrategy<String>, odd: BoxedStrategy<String>) -> BoxedStrategy<String> {
    Union::new_weighted(vec![(20, usual), (1, odd)]).boxed()
}

fn word(usual: &[&'static str], odd: &'static str) -> BoxedStrategy<String> {
    mostly(pick(usual), pick(&[odd]))
}

/// A plain duration.
fn dur() -> BoxedStrategy<String> {
    mostly(
        pick(&[
            "\"0us\"",
            "\"1us\"",
            "\"3ms\"",
            "\"20ms\"",
            "\"250ms\"",
            "\"1.5s\"",
            "\"2s\"",
            "\"30s\"",
        ]),
        pick(&[
            "\"10m\"",
            "\"-1s\"",
            "\"5 parsecs\"",
            "\"1e30s\"",
            "\"999999999h\"",
            "0",
            "7",
            "true",
            "{ min = \"1ms\", max = \"5ms\" }",
        ]),
    )
}

/// A distribution: a duration, a range or an exponential.
fn dist() -> BoxedStrategy<String> {
    mostly(
        pick(&[
            "\"1us\"",
            "\"3ms\"",
            "\"250ms\"",
            "\"1.5s\"",
            "{ min = \"1ms\", max = \"5ms\" }",
            "{ min = \"0us\", max = \"1ms\" }",
            "{ mean = \"2ms\" }",
            "{ mean = \"1s\", max = \"1us\" }",
            "{ mean = \"300ms\", max = \"2s\" }",
        ]),
        pick(&[
            "\"0us\"",
            "{ mean = \"0us\" }",
            "{ min = \"5ms\", max = \"1ms\" }",
            "{ }",
            "{ typo = \"1ms\" }",
            "true",
            "\"10m\"",
            "\"999999999h\"",
        ]),
    )
}

fn int() -> BoxedStrategy<String> {
    mostly(
        (0i64..6).prop_map(|n| n.to_string()).boxed(),
        pick(&[
            "-1",
            "9",
            "64",
            "65",
            "10000",
            "10001",
            "4294967296",
            "9223372036854775807",
            "\"x\"",
            "1.5",
        ]),
    )
}

fn float() -> BoxedStrategy<String> {
    mostly(
        pick(&["0.0", "0.01", "0.5", "1.0", "1.02"]),
        pick(&["1.5", "-0.1", "nan", "inf", "10.0", "1e308", "\"half\""]),
    )
}

fn indices() -> BoxedStrategy<String> {
    mostly(
        pick(&["[0]", "[0, 1]", "[2, 0]", "[1, 2]", "[1, 1, 1]"]),
        pick(&["[]", "[-1]", "[64]", "[4294967296]", "\"all\""]),
    )
}

fn boolean() -> BoxedStrategy<String> {
    mostly(pick(&["true", "false"]), pick(&["1"]))
}

/// `key = value` lines, each key at most once, each present a fifth of the time.
fn table(keys: Vec<(&'static str, BoxedStrategy<String>)>) -> BoxedStrategy<String> {
    table_with(keys.into_iter().map(|(k, v)| (k, v, 0.2)).collect())
}

/// A number from `usual` mostly, else an odd one.
fn num(usual: &[&'static str]) -> BoxedStrategy<String> {
    mostly(pick(usual), int())
}

/// A key, its values, and how often it is there.
type Field = (&'static str, BoxedStrategy<String>, f64);

/// `key = value` lines, each present with its own probability.
fn table_with(keys: Vec<Field>) -> BoxedStrategy<String> {
    let entries: Vec<BoxedStrategy<Option<String>>> = keys
        .into_iter()
        .map(|(k, v, p)| prop::option::weighted(p, v.prop_map(move |v| format!("{k} = {v}"))).boxed())
        .collect();
    entries
        .prop_map(|lines| lines.into_iter().flatten().collect::<Vec<_>>().join("\n"))
        .boxed()
}

/// A scripted fault of one kind, with that kind's fields (and rarely a wrong one).
fn fault() -> BoxedStrategy<String> {
    let by = mostly(
        pick(&["\"+1s\"", "\"-3s\"", "\"12ms\""]),
        pick(&["\"-999999999h\"", "\"--1s\""]),
    );
    let point = word(&["\"after_acquire\"", "\"while_holding\""], "\"never\"");
    let direction = word(&["\"to_nodes\"", "\"to_clients\""], "\"sideways\"");
    // Required fields are there nearly always; `node` or `client` picks the process.
    let (need, may) = (0.97, 0.3);
    let process = || {
        Union::new(vec![
            int().prop_map(|n| format!("node = {n}")).boxed(),
            int().prop_map(|c| format!("client = {c}")).boxed(),
        ])
        .boxed()
    };
    let kinds: Vec<(&'static str, BoxedStrategy<String>, Vec<Field>)> = vec![
        (
            "partition",
            Just(String::new()).boxed(),
            vec![
                ("nodes", indices(), need),
                ("clients", indices(), may),
                ("duration", dur(), may),
                ("direction", direction, may),
            ],
        ),
        (
            "crash",
            Just(String::new()).boxed(),
            vec![
                ("node", int(), need),
                ("restart_after", dur(), may),
                ("power_loss", boolean(), may),
            ],
        ),
        (
            "pause",
            process(),
            vec![("duration", dur(), need), ("point", point, may)],
        ),
        ("clock_jump", process(), vec![("by", by, need)]),
        (
            "clock_rate",
            process(),
            vec![("rate", float(), need), ("duration", dur(), may)],
        ),
        (
            "delay",
            Just(String::new()).boxed(),
            vec![
                ("extra", dur(), need),
                ("nodes", indices(), may),
                ("duration", dur(), may),
            ],
        ),
        (
            "loss",
            Just(String::new()).boxed(),
            vec![
                ("probability", float(), need),
                ("clients", indices(), may),
                ("duration", dur(), may),
            ],
        ),
        (
            "failover",
            Just(String::new()).boxed(),
            vec![("node", int(), may), ("promote_after", dur(), may)],
        ),
    ];
    let by_kind: Vec<(u32, BoxedStrategy<String>)> = kinds
        .into_iter()
        .map(|(kind, head, fields)| {
            let s = (dur(), head, table_with(fields))
                .prop_map(move |(at, head, rest)| {
                    format!("[[faults]]\nkind = \"{kind}\"\nat = {at}\n{head}\n{rest}\n")
                })
                .boxed();
            (8, s)
        })
        .chain([(
            1,
            Just("[[faults]]\nkind = \"meteor\"\nat = \"1s\"\n".to_string()).boxed(),
        )])
        .collect();
    Union::new_weighted(by_kind).boxed()
}

/// A nemesis entry of one kind, with that kind's knobs.
fn nemesis_entry() -> BoxedStrategy<String> {
    let kinds: Vec<(&'static str, &'static [&'static str])> = vec![
        ("partition", &["duration"]),
        ("crash", &["duration", "power_loss = true"]),
        ("pause", &["duration"]),
        ("clock_jump", &["max = \"5s\""]),
        ("clock_rate", &["duration", "max_deviation = 0.05"]),
        ("delay", &["duration", "extra = { min = \"1ms\", max = \"1s\" }"]),
        ("loss", &["duration", "probability = 0.2"]),
        ("failover", &["duration"]),
    ];
    let by_kind: Vec<BoxedStrategy<String>> = kinds
        .into_iter()
        .map(|(kind, knobs)| {
            (dist(), dist())
                .prop_map(move |(interval, duration)| {
                    let knobs: Vec<String> = knobs
                        .iter()
                        .map(|k| {
                            if *k == "duration" {
                                format!("duration = {duration}")
                            } else {
                                k.to_string()
                            }
                        })
                        .collect();
                    format!("{kind} = {{ interval = {interval}, {} }}", knobs.join(", "))
                })
                .boxed()
        })
        .collect();
    Union::new(by_kind).boxed()
}

/// The first entry of each key (TOML refuses a key twice, which is not what is fuzzed).
fn dedup_keys(mut lines: Vec<String>) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    lines.retain(|l| seen.insert(l.split(' ').next().unwrap_or_default().to_string()));
    lines
}

/// A scenario file: any of the schema's tables, with values from the pools.
fn scenario_text() -> impl Strategy<Value = String> {
    let top = table(vec![
        ("seed", int()),
        ("duration", dur()),
        ("expect", word(&["\"safe\"", "\"unsafe\""], "\"maybe\"")),
        (
            "nodes",
            mostly(
                num(&["1", "3", "5", "7"]),
                pick(&["[\"127.0.0.1:6379\"]", "[\"x\"]"]),
            ),
        ),
        (
            "persistence",
            mostly(
                pick(&["\"none\"", "\"aof_always\"", "\"aof_everysec\""]),
                pick(&["\"aof\"", "[\"none\", \"aof_everysec\"]", "3"]),
            ),
        ),
        ("min_availability", mostly(pick(&["0.0", "0.5"]), float())),
    ]);
    let algorithm = table(vec![
        (
            "kind",
            word(
                &[
                    "\"redlock\"",
                    "\"single\"",
                    "\"rw_redlock\"",
                    "\"fair_rw_redlock\"",
                ],
                "\"paxos\"",
            ),
        ),
        (
            "ttl",
            mostly(pick(&["\"50ms\"", "\"500ms\"", "\"2s\"", "\"10s\""]), dur()),
        ),
        ("drift_factor", mostly(pick(&["0.0", "0.01", "0.1"]), float())),
        ("retry_count", num(&["0", "1", "3", "10"])),
        ("retry_delay", dist()),
        (
            "fanout",
            word(&["\"parallel\"", "\"sequential\""], "\"sideways\""),
        ),
        ("request_timeout", dur()),
        ("quorum", num(&["1", "2", "3"])),
        ("check_elapsed", boolean()),
        ("max_extensions", num(&["0", "1", "2"])),
        ("extend_before", mostly(pick(&["\"10ms\"", "\"100ms\""]), dur())),
        ("fencing", boolean()),
        ("fence_rounds", num(&["1", "2"])),
    ]);
    let algorithm = (algorithm, prop::option::weighted(0.02, dur()))
        .prop_map(|(a, fair)| fair.map_or(a.clone(), |f| format!("{a}\nfair_after = {f}")));
    let clients = table(vec![
        ("count", num(&["1", "2", "3", "5", "8"])),
        ("locks", num(&["1", "2", "3"])),
        ("think", dist()),
        ("hold", dist()),
        ("read_share", float()),
        ("writer_wait_bound", dur()),
        ("resource_writes", boolean()),
    ]);
    let network = table(vec![("latency", dist())]);
    let replication = prop::option::weighted(0.5, dur().prop_map(|d| format!("[replication]\nlag = {d}\n")));
    let faults = prop::collection::vec(fault(), 0..4);
    let nemesis = prop::collection::vec(nemesis_entry(), 0..3);
    (top, algorithm, clients, network, replication, faults, nemesis).prop_map(
        |(top, algorithm, clients, network, replication, faults, nemesis)| {
            format!(
                "{top}\n[algorithm]\n{algorithm}\n[clients]\n{clients}\n[network]\n{network}\n{}{}\n[nemesis]\n{}\n",
                replication.unwrap_or_default(),
                faults.concat(),
                dedup_keys(nemesis).join("\n")
            )
        },
    )
}

/// Roughly how many events a run takes: every client acts again after its shortest
/// gap (a request timeout or a message), touching every node.
fn event_estimate(s: &Scenario) -> u64 {
    let min_us = |d: lockstorm::scenario::Dist| match d {
        lockstorm::scenario::Dist::Fixed { us } => us,
        lockstorm::scenario::Dist::Uniform { min_us, .. } => min_us,
        lockstorm::scenario::Dist::Exponential { .. } => 0,
    };
    let gap_us = s
        .algorithm
        .request_timeout_us
        .min(min_us(s.network.latency))
        .max(1);
    Lifecycle::hard_stop_us(s) / gap_us * (s.clients.count * (2 * s.nodes + 2)) as u64
}

/// A small scenario's simulation is bounded: at most this many events per simulated
/// microsecond and client, per node plus a few (requests, replies, timers, writes).
fn event_budget(s: &Scenario, planned_faults: usize) -> u64 {
    let per_us = (s.clients.count * (4 * s.nodes + 16)) as u64;
    (Lifecycle::hard_stop_us(s) + 1) * per_us + 4 * planned_faults as u64 + 1_000
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_scenario_text_is_refused_or_runs_with_bounded_work(text in scenario_text(), seed in any::<u64>()) {
        let scenario = match Scenario::parse(&text, "fuzz.toml", "fuzz") {
            Ok(s) => s,
            Err(e) => {
                let msg = e.to_string();
                prop_assert!(msg.starts_with("fuzz.toml"), "{msg}");
                prop_assert!(!msg.contains('\n'), "one line: {msg}");
                return Ok(());
            }
        };
        prop_assert!((1..=MAX_NODES).contains(&scenario.nodes));
        prop_assert!((1..=MAX_CLIENTS).contains(&scenario.clients.count));
        let plan = scenario.nemesis.plan(seed, scenario.duration_us, scenario.nodes, scenario.clients.count, 0);
        prop_assert!(plan.len() <= MAX_DRAWN_FAULTS, "{} faults planned:\n{text}", plan.len());
        // Simulate at most 2 s of it, with few processes, to stay quick in CI; longer
        // runs are bounded by the same code.
        if scenario.clients.count > 8 || scenario.nodes > 9 {
            return Ok(());
        }
        let mut scenario = scenario;
        scenario.duration_us = scenario.duration_us.min(2_000_000);
        // Scripted faults past the new end keep their ids; the workload is over by then.
        let end = scenario.duration_us;
        let plan = scenario.nemesis.plan(seed, end, scenario.nodes, scenario.clients.count, 0);
        if plan.len() > 20_000 {
            // Legitimate but slow here (a fault every microsecond: the plan stops at
            // MAX_DRAWN_FAULTS): a clock's rate is the product of the rate faults on it,
            // taken anew in start order at every start and end so that it stays the same
            // float, and every message draws once per loss active on its link, so
            // hundreds of thousands of faults in 2 s take seconds to minutes. 20,000
            // rate faults on one node and one client take about a second here.
            return Ok(());
        }
        if event_estimate(&scenario) > 20_000_000 {
            // Legitimate but slow here (say, a 1 us request timeout for the whole
            // liveness phase): its work is as linear as the rest.
            return Ok(());
        }
        let out = lockstorm::sim::run(&scenario, seed);
        let budget = event_budget(&scenario, scenario.faults.len() + plan.len());
        prop_assert!(out.stats.events <= budget, "{} events, budget {budget}, seed {seed}:\n{text}", out.stats.events);
        prop_assert!(out.stats.end_us <= Lifecycle::hard_stop_us(&scenario));
        let findings = checker::check(&out.history);
        prop_assert!(findings.is_ok(), "seed {seed}: the simulator wrote a malformed history: {:?}\n{text}", findings.err());
    }
}

/// A history line as JSON, with fields from the pools.
fn event_value() -> impl Strategy<Value = serde_json::Value> {
    let t = Union::new_weighted(vec![
        (8, (0u64..5_000_000).boxed()),
        (
            1,
            prop::sample::select(vec![u64::MAX, 1_000_000_000_000_001, 1 << 53]).boxed(),
        ),
    ]);
    let index = Union::new_weighted(vec![
        (8, (0u64..4).boxed()),
        (
            1,
            prop::sample::select(vec![63, 64, 9_999, 10_000, 4_294_967_296, u64::MAX]).boxed(),
        ),
    ]);
    let nodes = prop::collection::vec(index.clone(), 0..4);
    let ty = prop::sample::select(vec![
        "invoke", "ok", "fail", "info", "fault", "heal", "write", "meta", "bogus",
    ]);
    let op = prop::sample::select(vec!["acquire", "release", "extend"]);
    let mode = prop::sample::select(vec!["exclusive", "read", "write", "bogus"]);
    let kind = prop::sample::select(vec![
        "partition",
        "crash",
        "pause",
        "clock_jump",
        "clock_rate",
        "delay",
        "loss",
    ]);
    let count = prop::sample::select(vec![0u64, 1, 2, 3, 5, 64, 65, 10_000, 10_001, 100_000_000]);
    (
        (ty, t.clone(), index.clone(), op, mode, prop::bool::ANY, t),
        (nodes.clone(), prop::sample::select(vec![0usize, 1, 2, 7, usize::MAX]), prop::bool::ANY, kind),
        (count.clone(), count, prop::sample::select(vec![0u64, 1, 1_000, u64::MAX]), index),
    )
        .prop_map(|((ty, t, client, op, mode, flag, until), (nodes, id, start, kind), (n, c, ttl, node))| {
            use serde_json::json;
            match ty {
                "meta" => json!({"type": "meta", "t_us": t, "scenario": "f", "seed": 1, "algorithm": "redlock",
                    "nodes": n, "clients": c, "ttl_ms": ttl, "liveness_bound_us": until,
                    "writer_wait_bound_us": if flag { Some(until) } else { None }}),
                "fault" => {
                    let mut v = json!({"type": "fault", "t_us": t, "id": id,
                        "action": if start { "start" } else { "end" }, "origin": "nemesis", "kind": kind});
                    match kind {
                        "partition" | "delay" | "loss" => {
                            v["nodes"] = json!(nodes);
                            v["clients"] = json!([client]);
                            v["extra_us"] = json!(until);
                            v["probability"] = json!(if flag { 0.5 } else { 7.0 });
                        }
                        "clock_jump" => { v["node"] = json!(node); v["by_us"] = json!(if flag { -1 } else { i64::MAX }); }
                        "clock_rate" => { v["client"] = json!(client); v["rate"] = json!(if flag { 1.02 } else { -3.0 }); }
                        _ => v["node"] = json!(node),
                    }
                    v
                }
                "heal" => json!({"type": "heal", "t_us": t}),
                "write" => json!({"type": "write", "t_us": t, "client": client, "lock": "L0", "token": "a",
                    "fence": until, "accepted": flag}),
                _ => {
                    let mut v = json!({"type": ty, "t_us": t, "client": client, "op": op, "lock": "L0", "mode": mode});
                    if flag {
                        v["valid_until_us"] = json!(until);
                        v["nodes"] = json!(nodes);
                        v["token"] = json!("a");
                    }
                    v
                }
            }
        })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_history_is_refused_or_judged_with_sizes_within_the_limits(
        lines in prop::collection::vec(event_value(), 0..40),
        sorted in prop::bool::ANY,
    ) {
        let mut events = Vec::new();
        for v in &lines {
            match serde_json::from_value::<Event>(v.clone()) {
                Ok(e) => events.push(e),
                Err(_) => break,
            }
        }
        if sorted {
            // Mostly-valid histories: times in order and the meta line first.
            events.sort_by_key(|e| (!matches!(e, Event::Meta(_)), e.t_us()));
        }
        let Ok(findings) = checker::check(&events) else { return Ok(()) };
        let view = RunView::new(&events, &findings);
        prop_assert!(view.nodes <= MAX_NODES, "{} node rows", view.nodes);
        prop_assert!(view.clients <= MAX_CLIENTS, "{} client rows", view.clients);
        for v in findings.violations.iter().take(3) {
            lockstorm::report::narrative::explain(&view, v);
        }
    }
}
