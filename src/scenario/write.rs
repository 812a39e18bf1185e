//! A [`Scenario`] written back out as a scenario file, the inverse of parsing.
//!
//! Shrink and explore end with a scenario someone can read, rerun and commit: the
//! smallest one that still shows a violation, or the one that replays a counterexample.
//! [`Scenario::to_toml`] writes every setting explicitly (nothing relies on a default
//! that could change), times in exact units (`"1500ms"`, never a rounded float), and
//! every fault as a scripted `[[faults]]` entry; parsing the text gives the same
//! scenario back (`parse(write(s)) == s`, tested over every file in `scenarios/`).

use super::{Backend, Dist, Expect, Scenario, Targets};
use crate::algorithm::AlgorithmKind;
use crate::fault::{
    Aim, ClientAim, CutDirection, Fault, Nemesis, NemesisRate, NodeAim, PausePoint, Persistence, PlannedFault,
};
use std::fmt::Write as _;

/// Microseconds as an exact duration string: `"2s"`, `"1500ms"`, `"250us"`.
fn dur(us: u64) -> String {
    if us == 0 {
        "\"0s\"".into()
    } else if us.is_multiple_of(1_000_000) {
        format!("\"{}s\"", us / 1_000_000)
    } else if us.is_multiple_of(1_000) {
        format!("\"{}ms\"", us / 1_000)
    } else {
        format!("\"{us}us\"")
    }
}

/// A signed duration: `"+10s"`, `"-3ms"`.
fn signed(us: i64) -> String {
    let sign = if us < 0 { '-' } else { '+' };
    format!("\"{sign}{}", &dur(us.unsigned_abs())[1..])
}

fn float(x: f64) -> String {
    toml::Value::Float(x).to_string()
}

fn string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn dist(d: &Dist) -> String {
    match *d {
        Dist::Fixed { us } => dur(us),
        Dist::Uniform { min_us, max_us } => format!("{{ min = {}, max = {} }}", dur(min_us), dur(max_us)),
        Dist::Exponential { mean_us, max_us } => {
            format!("{{ mean = {}, max = {} }}", dur(mean_us), dur(max_us))
        }
    }
}

fn list(items: &[usize]) -> String {
    let items: Vec<String> = items.iter().map(usize::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The name serde gives a unit variant (`"aof_everysec"`, `"rw_redlock"`).
fn name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(s)) => string(&s),
        _ => unreachable!("unit variants serialize as strings"),
    }
}

fn expect(e: Expect) -> String {
    name(&e)
}

impl Scenario {
    /// The scenario as a scenario file, starting with `comment` (each line prefixed
    /// with `# `). Nemesis-drawn faults in `faults` are written as scripted ones.
    pub fn to_toml(&self, comment: &str) -> String {
        let mut out = String::new();
        for line in comment.lines() {
            if line.is_empty() {
                out.push_str("#\n");
            } else {
                let _ = writeln!(out, "# {line}");
            }
        }
        if !comment.is_empty() {
            out.push('\n');
        }
        self.write_top(&mut out);
        self.write_cluster(&mut out);
        self.write_algorithm(&mut out);
        self.write_clients(&mut out);
        let _ = writeln!(
            out,
            "\n[network]\nlatency = {}\nfifo = {}",
            dist(&self.network.latency),
            self.network.fifo
        );
        for f in &self.faults {
            write_fault(&mut out, f);
        }
        write_nemesis(&mut out, &self.nemesis);
        out
    }

    fn write_top(&self, out: &mut String) {
        let _ = writeln!(out, "name = {}", string(&self.name));
        let _ = writeln!(out, "seed = {}", self.seed);
        let _ = writeln!(out, "duration = {}", dur(self.duration_us));
        let _ = writeln!(out, "expect = {}", expect(self.expect));
        let _ = writeln!(out, "expect_live = {}", self.expect_live);
        if let Some(e) = self.expect_resource {
            let _ = writeln!(out, "expect_resource = {}", expect(e));
        }
        if let Some(m) = self.min_availability {
            let _ = writeln!(out, "min_availability = {}", float(m));
        }
        if self.min_exercised != crate::outcome::MIN_EXERCISED {
            let _ = writeln!(out, "min_exercised = {}", float(self.min_exercised));
        }
        if !self.node_events {
            let _ = writeln!(out, "node_events = false");
        }
        if let Some(us) = self.heal_after_faults_us {
            let _ = writeln!(out, "heal_after_faults = {}", dur(us));
        }
        if !self.grid.is_empty() {
            let settings: Vec<String> = self
                .grid
                .iter()
                .map(|g| {
                    let set: Vec<String> = g.set.iter().map(|s| string(s)).collect();
                    format!("{{ name = {}, set = [{}] }}", string(&g.name), set.join(", "))
                })
                .collect();
            let _ = writeln!(out, "matrix = {{ grid = [{}] }}", settings.join(", "));
        }
        if self.backend != Backend::Sim {
            let _ = writeln!(out, "backend = {}", name(&self.backend));
        }
        match &self.targets {
            Targets::Local => {
                let _ = writeln!(out, "nodes = {}", self.nodes);
            }
            Targets::External(addrs) => {
                let addrs: Vec<String> = addrs.iter().map(|a| string(&a.to_string())).collect();
                let _ = writeln!(out, "nodes = [{}]", addrs.join(", "));
            }
        }
        let first = self.persistence.first().copied().unwrap_or(Persistence::None);
        if self.persistence.iter().all(|&p| p == first) {
            let _ = writeln!(out, "persistence = {}", name(&first));
        } else {
            let all: Vec<String> = self.persistence.iter().map(name).collect();
            let _ = writeln!(out, "persistence = [{}]", all.join(", "));
        }
        if let Some(r) = self.replication {
            let _ = writeln!(out, "\n[replication]\nlag = {}", dur(r.lag_us));
        }
        if let Some(s) = &self.sentinel {
            let _ = writeln!(
                out,
                "\n[sentinel]\nreplicas = {}\nsentinels = {}\nquorum = {}\ndown_after = {}\n\
                 failover_timeout = {}\nparallel_syncs = {}\nmin_replicas_to_write = {}\nmin_replicas_max_lag = {}",
                s.replicas,
                s.sentinels,
                s.quorum,
                dur(s.down_after_ms * 1_000),
                dur(s.failover_timeout_ms * 1_000),
                s.parallel_syncs,
                s.min_replicas_to_write,
                dur(s.min_replicas_max_lag_s * 1_000_000),
            );
        }
    }

    fn write_cluster(&self, out: &mut String) {
        if let Some(c) = &self.cluster {
            let _ = writeln!(
                out,
                "\n[cluster]\nmasters = {}\nreplicas = {}\nnode_timeout = {}\nmin_replicas_to_write = {}\nmin_replicas_max_lag = {}",
                c.masters,
                c.replicas,
                dur(c.node_timeout_ms * 1_000),
                c.min_replicas_to_write,
                dur(c.min_replicas_max_lag_s * 1_000_000),
            );
        }
    }

    fn write_algorithm(&self, out: &mut String) {
        let a = &self.algorithm;
        let _ = writeln!(out, "\n[algorithm]");
        let _ = writeln!(out, "kind = {}", name(&a.kind));
        let _ = writeln!(out, "ttl = {}", dur(a.ttl_ms * 1_000));
        let _ = writeln!(out, "drift_factor = {}", float(a.drift_factor));
        let _ = writeln!(out, "retry_count = {}", a.retry_count);
        let _ = writeln!(out, "retry_delay = {}", dist(&a.retry_delay));
        let _ = writeln!(out, "fanout = {}", name(&a.fanout));
        let _ = writeln!(out, "request_timeout = {}", dur(a.request_timeout_us));
        let _ = writeln!(out, "quorum = {}", a.quorum);
        let _ = writeln!(out, "check_elapsed = {}", a.check_elapsed);
        let _ = writeln!(out, "max_extensions = {}", a.max_extensions);
        let _ = writeln!(out, "extend_before = {}", dur(a.extend_before_us));
        let _ = writeln!(out, "fencing = {}", a.fencing);
        let _ = writeln!(out, "fence_rounds = {}", a.fence_rounds);
        if a.kind == AlgorithmKind::FairRwRedlock {
            let _ = writeln!(out, "fair_after = {}", dur(a.fair_after_us));
        }
        let m = &a.mistakes;
        let _ = writeln!(out, "release = {}", name(&m.release));
        let _ = writeln!(out, "extend = {}", name(&m.extend));
        let _ = writeln!(out, "token = {}", name(&m.token));
        if let Some(w) = a.wait {
            let _ = writeln!(out, "wait_replicas = {}", w.replicas);
            let _ = writeln!(out, "wait_timeout = {}", dur(w.timeout_ms * 1_000));
        }
    }

    fn write_clients(&self, out: &mut String) {
        let c = &self.clients;
        let _ = writeln!(out, "\n[clients]");
        let _ = writeln!(out, "count = {}", c.count);
        let _ = writeln!(out, "locks = {}", c.locks);
        let _ = writeln!(out, "think = {}", dist(&c.think));
        let _ = writeln!(out, "hold = {}", dist(&c.hold));
        if self.algorithm.kind.is_read_write() {
            let _ = writeln!(out, "read_share = {}", float(c.read_share));
        }
        if let Some(b) = c.writer_wait_bound_us {
            let _ = writeln!(out, "writer_wait_bound = {}", dur(b));
        }
        let _ = writeln!(out, "resource_writes = {}", c.resource_writes);
        match c.probe {
            Some(p) if p == super::Probe::default() => {
                let _ = writeln!(out, "probe = true");
            }
            Some(p) => {
                let _ = writeln!(
                    out,
                    "probe = {{ think = {}, hold = {} }}",
                    dist(&p.think),
                    dist(&p.hold)
                );
            }
            None => {}
        }
        if c.worker_hold_from != crate::worker::HoldFrom::Answer {
            let _ = writeln!(out, "worker_hold_from = \"{}\"", c.worker_hold_from.name());
        }
        if let Some(w) = &c.worker {
            let argv: Vec<String> = w.argv.iter().map(|a| string(a)).collect();
            let _ = writeln!(out, "worker = [{}]", argv.join(", "));
            let _ = writeln!(out, "worker_faketime = {}", w.faketime);
            let _ = writeln!(out, "worker_deadline = {}", dur(w.deadline_us));
        } else if let Some(d) = c.worker_deadline_us {
            let _ = writeln!(out, "worker_deadline = {}", dur(d));
        }
    }
}

/// `node = n` or `client = n` for a fault on one process (or its relative target).
fn process(node: Option<usize>, client: Option<usize>, aim: Option<&Aim>) -> String {
    match (node, client) {
        (Some(n), _) => format!("node = {}", one(n, aim.and_then(|a| a.nodes).map(NodeAim::name))),
        (None, Some(c)) => format!(
            "client = {}",
            one(c, aim.and_then(|a| a.clients).map(ClientAim::name))
        ),
        (None, None) => unreachable!("a resolved fault names a node or a client"),
    }
}

/// An index, or the relative target an aim puts in its place.
fn one(i: usize, relative: Option<&str>) -> String {
    relative.map_or_else(|| i.to_string(), string)
}

/// A list of indices, or the relative target an aim puts in its place.
fn set(ids: &[usize], relative: Option<&str>) -> String {
    relative.map_or_else(|| list(ids), string)
}

fn write_fault(out: &mut String, f: &PlannedFault) {
    let _ = writeln!(out, "\n[[faults]]\nat = {}", dur(f.at_us));
    let _ = writeln!(out, "kind = {}", string(f.fault.kind()));
    let aim = f.aim.as_ref();
    if let Some(a) = aim {
        let _ = writeln!(out, "when = {}", super::aim::write_when(&a.when));
        if a.after_us > 0 {
            let _ = writeln!(out, "after = {}", dur(a.after_us));
        }
    }
    let rel_nodes = aim.and_then(|a| a.nodes).map(NodeAim::name);
    let rel_clients = aim.and_then(|a| a.clients).map(ClientAim::name);
    let duration = |key: &str, out: &mut String| {
        if let Some(d) = f.duration_us {
            let _ = writeln!(out, "{key} = {}", dur(d));
        }
    };
    match &f.fault {
        Fault::Partition {
            nodes,
            clients,
            direction,
        } => {
            let _ = writeln!(
                out,
                "nodes = {}\nclients = {}",
                set(nodes, rel_nodes),
                set(clients, rel_clients)
            );
            if *direction != CutDirection::Both {
                let _ = writeln!(out, "direction = {}", name(direction));
            }
            duration("duration", out);
        }
        Fault::Crash { node, power_loss } => {
            let _ = writeln!(out, "node = {}\npower_loss = {power_loss}", one(*node, rel_nodes));
            duration("restart_after", out);
        }
        Fault::Pause { node, client, point } => {
            let _ = writeln!(out, "{}", process(*node, *client, aim));
            if let Some(p) = point {
                let _ = writeln!(out, "point = {}", name::<PausePoint>(p));
            }
            duration("duration", out);
        }
        Fault::ClockJump { node, client, by_us } => {
            let _ = writeln!(out, "{}\nby = {}", process(*node, *client, aim), signed(*by_us));
        }
        Fault::ClockRate { node, client, rate } => {
            let _ = writeln!(out, "{}\nrate = {}", process(*node, *client, aim), float(*rate));
            duration("duration", out);
        }
        Fault::Delay {
            nodes,
            clients,
            extra_us,
        } => {
            let _ = writeln!(
                out,
                "nodes = {}\nclients = {}\nextra = {}",
                set(nodes, rel_nodes),
                set(clients, rel_clients),
                dur(*extra_us)
            );
            duration("duration", out);
        }
        Fault::Loss {
            nodes,
            clients,
            probability,
        } => {
            let _ = writeln!(
                out,
                "nodes = {}\nclients = {}\nprobability = {}",
                set(nodes, rel_nodes),
                set(clients, rel_clients),
                float(*probability)
            );
            duration("duration", out);
        }
        Fault::Failover { node } => {
            let _ = writeln!(out, "node = {}", one(*node, rel_nodes));
            duration("promote_after", out);
        }
        Fault::ReplicationCut { node } => {
            let _ = writeln!(out, "node = {}", one(*node, rel_nodes));
            duration("duration", out);
        }
    }
}

/// A nemesis kind's aim, as keys to append to its entry (empty if it is not aimed).
fn nemesis_aim(r: &NemesisRate) -> String {
    let Some(a) = &r.aim else {
        return String::new();
    };
    let mut keys = format!(", when = {}", super::aim::write_when(&a.when));
    if a.after_us > 0 {
        keys += &format!(", after = {}", dur(a.after_us));
    }
    if let Some(n) = a.nodes {
        keys += &format!(", node = {}", string(n.name()));
    }
    if let Some(c) = a.clients {
        keys += &format!(", client = {}", string(c.name()));
    }
    keys
}

fn write_nemesis(out: &mut String, n: &Nemesis) {
    if *n == Nemesis::default() {
        return;
    }
    let _ = writeln!(out, "\n[nemesis]");
    let rate = |r: &NemesisRate| {
        format!(
            "interval = {}, duration = {}{}",
            dist(&r.interval),
            dist(&r.duration),
            nemesis_aim(r)
        )
    };
    let mut entry = |key: &str, body: String| {
        let _ = writeln!(out, "{key} = {{ {body} }}");
    };
    if let Some(r) = &n.partition {
        entry("partition", rate(r));
    }
    if let Some(r) = &n.crash {
        entry(
            "crash",
            format!("{}, power_loss = {}", rate(r), n.crash_power_loss),
        );
    }
    if let Some(r) = &n.pause {
        entry("pause", rate(r));
    }
    if let Some(r) = &n.clock_jump {
        entry(
            "clock_jump",
            format!(
                "interval = {}, max = {}{}",
                dist(&r.interval),
                dur(n.clock_jump_max_us),
                nemesis_aim(r)
            ),
        );
    }
    if let Some(r) = &n.clock_rate {
        entry(
            "clock_rate",
            format!(
                "{}, max_deviation = {}",
                rate(r),
                float(n.clock_rate_max_deviation)
            ),
        );
    }
    if let Some(r) = &n.delay {
        entry("delay", format!("{}, extra = {}", rate(r), dist(&n.delay_extra)));
    }
    if let Some(r) = &n.loss {
        entry(
            "loss",
            format!("{}, probability = {}", rate(r), float(n.loss_probability)),
        );
    }
    if let Some(r) = &n.failover {
        entry("failover", rate(r));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn round_trip(s: &Scenario) {
        let text = s.to_toml("written back\n\nfor a test");
        let back = Scenario::parse(&text, "written.toml", "other").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let mut s = s.clone();
        s.path = None;
        assert_eq!(back, s, "{text}");
    }

    /// Every scenario file under `dir`, in its subfolders too.
    fn scenario_files(dir: &Path) -> Vec<std::path::PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.extend(scenario_files(&path));
            } else if path.extension().is_some_and(|e| e == "toml") {
                files.push(path);
            }
        }
        files.sort();
        files
    }

    #[test]
    fn every_scenario_file_round_trips() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
        let files = scenario_files(&root);
        assert!(files.len() > 10);
        for file in files {
            round_trip(&Scenario::load(&file).unwrap());
        }
    }

    #[test]
    fn every_fault_kind_knob_and_distribution_round_trips() {
        let text = r#"
            name = "all \"kinds\""
            seed = 7
            duration = "90s"
            expect = "unsafe"
            expect_live = false
            expect_resource = "safe"
            min_availability = 0.25
            nodes = 3
            persistence = ["none", "aof_everysec", "aof_always"]
            [replication]
            lag = "1500us"
            [algorithm]
            kind = "fair_rw_redlock"
            ttl = "1500ms"
            drift_factor = 0.001
            retry_delay = { mean = "3ms", max = "1s" }
            fanout = "sequential"
            quorum = 1
            max_extensions = 2
            extend_before = "100ms"
            fencing = true
            fence_rounds = 1
            fair_after = "7ms"
            wait_replicas = 2
            wait_timeout = "20ms"
            [clients]
            count = 4
            locks = 3
            think = "0s"
            hold = { min = "1ms", max = "2s" }
            read_share = 0.3
            writer_wait_bound = "2s"
            probe = { think = "5ms", hold = { min = "1ms", max = "3ms" } }
            [network]
            latency = { mean = "1ms" }
            [[faults]]
            at = "1s"
            kind = "partition"
            nodes = [2, 0]
            direction = "to_clients"
            [[faults]]
            at = "2s"
            kind = "crash"
            node = 1
            power_loss = true
            [[faults]]
            at = "3s"
            kind = "pause"
            client = 2
            duration = "1.5s"
            point = "before_validity_check"
            [[faults]]
            at = "4s"
            kind = "clock_jump"
            node = 0
            by = "-250ms"
            [[faults]]
            at = "5s"
            kind = "clock_rate"
            client = 0
            rate = 1.02
            duration = "3s"
            [[faults]]
            at = "6s"
            kind = "delay"
            extra = "500ms"
            [[faults]]
            at = "7s"
            kind = "loss"
            clients = [1]
            probability = 0.1
            duration = "1us"
            [[faults]]
            at = "8s"
            kind = "failover"
            node = 2
            [nemesis]
            partition = { interval = { mean = "5s" }, duration = { min = "1s", max = "10s" } }
            crash = { interval = "10s", duration = "1s", power_loss = true }
            pause = { interval = "10s", duration = "2s" }
            clock_jump = { interval = "20s", max = "5s" }
            clock_rate = { interval = "20s", duration = "10s", max_deviation = 0.05 }
            delay = { interval = "5s", duration = "1s", extra = { min = "10ms", max = "1s" } }
            loss = { interval = "5s", duration = "1s", probability = 0.2 }
            failover = { interval = "30s", duration = "1s" }
        "#;
        let s = Scenario::parse(text, "t.toml", "t").unwrap();
        assert_eq!(s.faults.len(), 8);
        round_trip(&s);
    }

    #[test]
    fn the_comment_leads_and_times_stay_exact() {
        let s = Scenario::parse("duration = \"1.000001s\"\n", "t.toml", "t").unwrap();
        let text = s.to_toml("shrunk from t.toml\n\nseed 1");
        assert!(
            text.starts_with("# shrunk from t.toml\n#\n# seed 1\n\nname = \"t\"\n"),
            "{text}"
        );
        assert!(text.contains("duration = \"1000001us\""), "{text}");
        assert_eq!(signed(-3_000), "\"-3ms\"");
        assert_eq!(signed(10_000_000), "\"+10s\"");
    }
}
