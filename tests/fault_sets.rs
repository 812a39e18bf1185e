//! Faults are sets (issue 10): over random fault plans, scripted and random, that
//! overlap on purpose (several faults of several kinds on the same node and client), the
//! simulated world agrees with its history at every event: a node is down exactly while
//! a crash or failover of it is active, a process is paused exactly while a pause on it
//! is, and a clock runs at the product of its active rate faults.
//!
//! A failing case prints its seed and the scenario; save the text as a file and run
//! `lockstorm scenario FILE --seed N` to see it.

use lockstorm::checker;
use lockstorm::fault::Fault;
use lockstorm::history::{Event, FaultAction};
use lockstorm::scenario::Scenario;
use lockstorm::sim::{self, Inspect};
use proptest::prelude::*;

/// One scripted fault, drawn so that faults pile up on node 0/1 and client 0/1.
#[derive(Clone, Debug)]
struct Scripted {
    kind: u8,
    at_ms: u64,
    duration_ms: Option<u64>,
    target: usize,
    rate: f64,
    by_ms: i64,
    point: u8,
    power_loss: bool,
}

fn scripted() -> impl Strategy<Value = Scripted> {
    (
        (0u8..10, 0u64..2_500, prop::option::weighted(0.85, 1u64..1_500)),
        (0usize..2, 1u32..3_000, -400i64..400, 0u8..4, any::<bool>()),
    )
        .prop_map(
            |((kind, at_ms, duration_ms), (target, rate, by_ms, point, power_loss))| Scripted {
                kind,
                at_ms,
                duration_ms,
                target,
                rate: f64::from(rate) / 1_000.0,
                by_ms,
                point,
                power_loss,
            },
        )
}

fn toml(f: &Scripted, nodes: usize, clients: usize) -> String {
    let node = f.target % nodes;
    let client = f.target % clients;
    let at = format!("[[faults]]\nat = \"{}ms\"\n", f.at_ms);
    let lasting = |key: &str| {
        f.duration_ms
            .map_or(String::new(), |d| format!("{key} = \"{d}ms\"\n"))
    };
    // Pauses need a duration; the rest may last until the heal.
    let pause_ms = f.duration_ms.unwrap_or(700);
    let body = match f.kind {
        0 => format!(
            "kind = \"crash\"\nnode = {node}\npower_loss = {}\n{}",
            f.power_loss,
            lasting("restart_after")
        ),
        1 => format!("kind = \"failover\"\nnode = {node}\n{}", lasting("promote_after")),
        2 => format!("kind = \"pause\"\nnode = {node}\nduration = \"{pause_ms}ms\"\n"),
        3 => {
            let point = [
                "",
                "point = \"after_acquire\"\n",
                "point = \"before_validity_check\"\n",
                "point = \"while_holding\"\n",
            ][f.point as usize];
            format!("kind = \"pause\"\nclient = {client}\nduration = \"{pause_ms}ms\"\n{point}")
        }
        4 => format!(
            "kind = \"clock_rate\"\nnode = {node}\nrate = {}\n{}",
            f.rate,
            lasting("duration")
        ),
        5 => format!(
            "kind = \"clock_rate\"\nclient = {client}\nrate = {}\n{}",
            f.rate,
            lasting("duration")
        ),
        6 => format!(
            "kind = \"clock_jump\"\nclient = {client}\nby = \"{}ms\"\n",
            f.by_ms
        ),
        7 => format!(
            "kind = \"partition\"\nnodes = [{node}]\nclients = [{client}]\n{}",
            lasting("duration")
        ),
        8 => format!(
            "kind = \"delay\"\nnodes = [{node}]\nextra = \"30ms\"\n{}",
            lasting("duration")
        ),
        _ => format!(
            "kind = \"loss\"\nnodes = [{node}]\nprobability = 0.3\n{}",
            lasting("duration")
        ),
    };
    at + &body
}

fn scenario_text(nodes: usize, clients: usize, rw: bool, nemesis: bool, faults: &[Scripted]) -> String {
    let kind = if rw { "rw_redlock" } else { "redlock" };
    let mut text = format!(
        r#"
duration = "3s"
nodes = {nodes}
persistence = "aof_everysec"
[replication]
lag = "20ms"
[algorithm]
kind = "{kind}"
ttl = "300ms"
request_timeout = "10ms"
retry_delay = {{ min = "0ms", max = "20ms" }}
[clients]
count = {clients}
think = {{ min = "0ms", max = "20ms" }}
hold = {{ min = "1ms", max = "100ms" }}
"#
    );
    for f in faults {
        text.push_str(&toml(f, nodes, clients));
    }
    if nemesis {
        text.push_str(
            r#"
[nemesis]
crash = { interval = { mean = "300ms" }, duration = { min = "10ms", max = "600ms" }, power_loss = true }
failover = { interval = { mean = "700ms" }, duration = { min = "10ms", max = "400ms" } }
pause = { interval = { mean = "250ms" }, duration = { min = "10ms", max = "500ms" } }
clock_rate = { interval = { mean = "200ms" }, duration = { min = "10ms", max = "900ms" }, max_deviation = 0.5 }
clock_jump = { interval = { mean = "400ms" }, max = "200ms" }
partition = { interval = { mean = "300ms" }, duration = { min = "10ms", max = "500ms" } }
"#,
        );
    }
    text
}

/// The faults active at an event, as the history says, in the order they started.
#[derive(Default)]
struct Active(Vec<(usize, Fault)>);

impl Active {
    fn follow(&mut self, e: &Event) {
        if let Event::Fault(f) = e {
            match f.action {
                FaultAction::Start => self.0.push((f.id, f.fault.clone())),
                FaultAction::End => self.0.retain(|(id, _)| *id != f.id),
            }
        }
    }

    fn node_down(&self, n: usize) -> bool {
        self.0
            .iter()
            .any(|(_, f)| matches!(f, Fault::Crash { node, .. } | Fault::Failover { node } if *node == n))
    }

    fn paused(&self, n: Option<usize>, c: Option<usize>) -> bool {
        self.0
            .iter()
            .any(|(_, f)| matches!(f, Fault::Pause { node, client, .. } if (*node, *client) == (n, c)))
    }

    /// The documented composition: the product of the active rates, in whole ppm.
    fn rate_ppm(&self, n: Option<usize>, c: Option<usize>) -> i64 {
        let product: f64 = self
            .0
            .iter()
            .filter_map(|(_, f)| match f {
                Fault::ClockRate { node, client, rate } if (*node, *client) == (n, c) => Some(*rate),
                _ => None,
            })
            .product();
        ((product - 1.0) * 1e6).round().max(-999_999.0) as i64
    }

    /// The first way the world disagrees with these faults, if any.
    fn disagreement(&self, w: &Inspect<'_>, nodes: usize, clients: usize) -> Option<String> {
        for n in 0..nodes {
            if w.node_up(n) == self.node_down(n) {
                return Some(format!("node {n} up = {}", w.node_up(n)));
            }
            if w.node_paused(n) != self.paused(Some(n), None) {
                return Some(format!("node {n} paused = {}", w.node_paused(n)));
            }
            if w.node_rate_ppm(n) != self.rate_ppm(Some(n), None) {
                return Some(format!(
                    "node {n} runs at {} ppm, the active rates make {}",
                    w.node_rate_ppm(n),
                    self.rate_ppm(Some(n), None)
                ));
            }
        }
        for c in 0..clients {
            if w.client_paused(c) != self.paused(None, Some(c)) {
                return Some(format!("client {c} paused = {}", w.client_paused(c)));
            }
            if w.client_rate_ppm(c) != self.rate_ppm(None, Some(c)) {
                return Some(format!(
                    "client {c} runs at {} ppm, the active rates make {}",
                    w.client_rate_ppm(c),
                    self.rate_ppm(None, Some(c))
                ));
            }
        }
        None
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn the_world_is_what_the_active_faults_compose_to_at_every_event(
        nodes in prop::sample::select(vec![1usize, 3, 5]),
        clients in 1usize..4,
        rw in any::<bool>(),
        nemesis in any::<bool>(),
        faults in prop::collection::vec(scripted(), 0..14),
        seed in any::<u64>(),
    ) {
        let text = scenario_text(nodes, clients, rw, nemesis, &faults);
        let scenario = Scenario::parse(&text, "fault-sets.toml", "fault-sets")
            .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        let mut active = Active::default();
        let mut first: Option<String> = None;
        let mut starts = 0;
        let mut line = 0;
        let out = sim::run_inspected(&scenario, seed, &mut |w| {
            let e = w.event();
            line += 1;
            active.follow(e);
            starts += usize::from(matches!(e, Event::Fault(f) if f.action == FaultAction::Start));
            if first.is_none() {
                first = active
                    .disagreement(w, nodes, clients)
                    .map(|d| format!("at history line {line} ({e:?}): {d}"));
            }
        });
        prop_assert!(first.is_none(), "seed {seed}: {}\n{text}", first.unwrap_or_default());
        prop_assert!(active.0.is_empty(), "seed {seed}: faults still active at the end\n{text}");
        prop_assert!(starts > 0 || (faults.is_empty() && !nemesis), "seed {seed}: no fault ran");
        checker::check(&out.history)
            .map_err(|e| TestCaseError::fail(format!("seed {seed}: malformed history: {e}\n{text}")))?;
    }
}
