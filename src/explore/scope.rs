//! The bounds of an exploration: how many clients and nodes, how long a tick is, how
//! many ticks, and how many faults of each kind the adversary may inject, with the
//! least time each fault lasts.
//!
//! A scope comes from a scenario: its algorithm and nodes, at most three of its
//! clients, and a fault budget per kind the scenario uses (the count of its scripted
//! faults of that kind, one for a nemesis kind, capped at two; partitions count cut
//! links). Each least duration is the shortest the scenario gives that kind, in whole
//! ticks rounded up, so the explorer never ends a fault sooner than the scenario could.
//! Every number can be overridden ([`Overrides`]).

use crate::algorithm::{AlgorithmConfig, AlgorithmKind};
use crate::fault::{Fault, Nemesis, NemesisRate, Persistence, PlannedFault, Replication};
use crate::scenario::Scenario;

/// How many faults of each kind the adversary may start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Budget {
    pub crashes: u8,
    /// Client↔node links cut (both ways), one at a time.
    pub partitions: u8,
    pub pauses: u8,
    /// Forward jumps of a node's clock by [`Scope::jump_by_us`].
    pub clock_jumps: u8,
    pub failovers: u8,
}

impl Budget {
    pub fn total(&self) -> u32 {
        [
            self.crashes,
            self.partitions,
            self.pauses,
            self.clock_jumps,
            self.failovers,
        ]
        .iter()
        .map(|&n| u32::from(n))
        .sum()
    }
}

/// The least number of ticks a fault of each kind lasts before it may end (`None`:
/// it never ends within the exploration, as a scenario fault that lasts until the heal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Least {
    pub restart: Option<u32>,
    pub heal: Option<u32>,
    pub resume: Option<u32>,
    pub promote: Option<u32>,
}

/// Everything the explorer needs to know, resolved.
#[derive(Clone, Debug)]
pub struct Scope {
    /// The scenario this scope was taken from (for names and the reproduction).
    pub name: String,
    pub seed: u64,
    pub algorithm: AlgorithmConfig,
    pub nodes: usize,
    pub clients: usize,
    pub persistence: Vec<Persistence>,
    pub replication: Option<Replication>,
    /// Faults happen only at tick boundaries; the world runs event by event in between.
    pub tick_us: u64,
    pub ticks: u32,
    /// One-way message latency (fixed, so the only choices are the adversary's).
    pub latency_us: u64,
    /// How long a client waits after an operation before the next (one tick, so a
    /// client asks about once per tick).
    pub think_us: u64,
    /// How long a client holds the lock before releasing (the scenario's longest
    /// hold), unless its validity ends first.
    pub hold_us: u64,
    pub budget: Budget,
    pub least: Least,
    /// How far a node's clock jumps forward.
    pub jump_by_us: i64,
    /// Whether crashes are power losses (AOF everysec loses its last second).
    pub power_loss: bool,
    /// Whether the partial-order reduction is on (off only to test that it loses
    /// nothing).
    pub reduce: bool,
    /// Fault kinds the scenario uses that the explorer does not inject.
    pub ignored: Vec<&'static str>,
}

/// Command-line overrides of a scope; `None` keeps what the scenario gives.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    pub seed: Option<u64>,
    pub clients: Option<usize>,
    pub nodes: Option<usize>,
    pub tick_us: Option<u64>,
    pub ticks: Option<u32>,
    pub crashes: Option<u8>,
    pub partitions: Option<u8>,
    pub pauses: Option<u8>,
    pub clock_jumps: Option<u8>,
    pub failovers: Option<u8>,
}

/// The largest budget per kind a scenario gives by default.
const DEFAULT_CAP: u8 = 2;
/// Ticks per ttl by default.
const TICKS_PER_TTL: u64 = 4;
/// At most this many ticks by default (four ttls).
const DEFAULT_MAX_TICKS: u32 = 16;

fn ceil_div(a: u64, b: u64) -> u32 {
    a.div_ceil(b.max(1)).min(u64::from(u32::MAX)) as u32
}

fn capped(n: usize) -> u8 {
    n.min(usize::from(DEFAULT_CAP)) as u8
}

/// The scripted faults of one kind, and whether the nemesis draws that kind too.
fn of_kind<'a>(s: &'a Scenario, kind: &str) -> Vec<&'a PlannedFault> {
    s.faults.iter().filter(|f| f.fault.kind() == kind).collect()
}

fn nemesis_rate(n: &Nemesis, kind: &str) -> Option<NemesisRate> {
    match kind {
        "partition" => n.partition,
        "crash" => n.crash,
        "pause" => n.pause,
        "clock_jump" => n.clock_jump,
        "failover" => n.failover,
        _ => None,
    }
}

/// The least duration of a kind's faults in ticks (scripted durations and the
/// nemesis's least draw), or `None` if every one lasts until the heal.
fn least_ticks(s: &Scenario, kind: &str, tick_us: u64) -> Option<u32> {
    let scripted = of_kind(s, kind).into_iter().filter_map(|f| f.duration_us);
    let drawn = nemesis_rate(&s.nemesis, kind).map(|r| match r.duration {
        crate::rng::Dist::Fixed { us } => us,
        crate::rng::Dist::Uniform { min_us, .. } => min_us,
        crate::rng::Dist::Exponential { .. } => 1,
    });
    scripted.chain(drawn).min().map(|us| ceil_div(us, tick_us))
}

/// The budget a scenario gives a kind: its scripted faults (or cut links), one for a
/// nemesis kind, capped.
fn budget_of(s: &Scenario, kind: &str) -> u8 {
    let scripted: usize = of_kind(s, kind)
        .iter()
        .map(|f| match &f.fault {
            Fault::Partition { nodes, clients, .. } => nodes.len() * clients.len(),
            _ => 1,
        })
        .sum();
    let drawn = usize::from(nemesis_rate(&s.nemesis, kind).is_some());
    capped(scripted + drawn)
}

/// The fault kinds of `s` the explorer does not inject: delays, losses, clock rates,
/// client clock jumps (an exclusive lock reads no client wall clock) and pause points.
fn ignored(s: &Scenario) -> Vec<&'static str> {
    let mut kinds: Vec<&'static str> = s
        .faults
        .iter()
        .filter_map(|f| match &f.fault {
            Fault::Delay { .. } => Some("delay"),
            Fault::Loss { .. } => Some("loss"),
            Fault::ClockRate { .. } => Some("clock_rate"),
            Fault::ClockJump { client: Some(_), .. } => Some("client clock_jump"),
            Fault::Pause { point: Some(_), .. } => Some("pause point"),
            _ => None,
        })
        .collect();
    let n = &s.nemesis;
    for (on, kind) in [
        (n.delay.is_some(), "delay"),
        (n.loss.is_some(), "loss"),
        (n.clock_rate.is_some(), "clock_rate"),
    ] {
        if on {
            kinds.push(kind);
        }
    }
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

impl Scope {
    /// The scope of `s`, with `o` overriding what it sets. Errors name what the
    /// explorer cannot take.
    pub fn new(s: &Scenario, o: &Overrides) -> Result<Scope, String> {
        if !matches!(s.algorithm.kind, AlgorithmKind::Single | AlgorithmKind::Redlock) {
            return Err(format!(
                "algorithm.kind = {:?}: explore covers the exclusive locks (single, redlock) only",
                s.algorithm.kind
            ));
        }
        if s.algorithm.wait.is_some() {
            // Its nodes answer every command at once, and a WAIT waits for a replica.
            return Err(
                "algorithm.wait_replicas: explore does not model WAIT after SET (run the scenario instead)"
                    .into(),
            );
        }
        let clients = o.clients.unwrap_or(s.clients.count.min(3));
        if !(2..=3).contains(&clients) {
            return Err(format!("--clients {clients}: explore runs 2 or 3 clients"));
        }
        if clients > s.clients.count {
            return Err(format!(
                "--clients {clients}: the scenario has only {} client(s)",
                s.clients.count
            ));
        }
        let nodes = o.nodes.unwrap_or(s.nodes.min(5));
        if !(1..=5).contains(&nodes) {
            return Err(format!("--nodes {nodes}: explore runs 1 to 5 nodes"));
        }
        if s.algorithm.kind == AlgorithmKind::Single && nodes != 1 {
            return Err(format!(
                "--nodes {nodes}: the single-instance lock runs on one node"
            ));
        }
        let mut algorithm = s.algorithm.clone();
        if nodes != s.nodes {
            let majority = s.algorithm.quorum == s.nodes / 2 + 1;
            algorithm.quorum = if majority {
                nodes / 2 + 1
            } else {
                s.algorithm.quorum
            };
            if algorithm.quorum > nodes {
                return Err(format!(
                    "--nodes {nodes}: below the scenario's quorum of {}",
                    algorithm.quorum
                ));
            }
        }
        // Holders hold until their validity ends; extensions are not explored.
        algorithm.max_extensions = 0;
        let ttl_us = algorithm.ttl_ms * 1_000;
        let tick_us = o.tick_us.unwrap_or((ttl_us / TICKS_PER_TTL).max(1));
        if tick_us == 0 {
            return Err("--tick must be above 0".into());
        }
        let ticks = o
            .ticks
            .unwrap_or_else(|| ceil_div(s.duration_us, tick_us).clamp(1, DEFAULT_MAX_TICKS));
        if !(1..=1_000).contains(&ticks) {
            return Err(format!("--ticks {ticks}: 1 to 1000"));
        }
        let budget = Budget {
            crashes: o.crashes.unwrap_or_else(|| budget_of(s, "crash")),
            partitions: o.partitions.unwrap_or_else(|| budget_of(s, "partition")),
            pauses: o.pauses.unwrap_or_else(|| budget_of(s, "pause")),
            clock_jumps: o.clock_jumps.unwrap_or_else(|| budget_of(s, "clock_jump")),
            failovers: o.failovers.unwrap_or_else(|| budget_of(s, "failover")),
        };
        if budget.failovers > 0 && s.replication.is_none() {
            return Err("--failovers: a failover needs a replica: the scenario has no [replication]".into());
        }
        let jump_by_us = of_kind(s, "clock_jump")
            .iter()
            .filter_map(|f| match f.fault {
                Fault::ClockJump {
                    by_us, node: Some(_), ..
                } => Some(by_us),
                _ => None,
            })
            .max_by_key(|b| b.unsigned_abs())
            .or_else(|| s.nemesis.clock_jump.map(|_| s.nemesis.clock_jump_max_us as i64))
            .unwrap_or(ttl_us as i64);
        let power_loss = of_kind(s, "crash")
            .iter()
            .any(|f| matches!(f.fault, Fault::Crash { power_loss: true, .. }))
            || (s.nemesis.crash.is_some() && s.nemesis.crash_power_loss);
        // A fault that never ends in the scenario may still end in the explorer if the
        // budget was given on the command line: then it lasts at least a tick.
        let or_tick = |least: Option<u32>, given: bool| if given { least.or(Some(1)) } else { least };
        let least = Least {
            restart: or_tick(least_ticks(s, "crash", tick_us), o.crashes.is_some()),
            heal: or_tick(least_ticks(s, "partition", tick_us), o.partitions.is_some()).map(|t| t.max(1)),
            resume: or_tick(least_ticks(s, "pause", tick_us), o.pauses.is_some()).map(|t| t.max(1)),
            promote: or_tick(least_ticks(s, "failover", tick_us), o.failovers.is_some()),
        };
        Ok(Scope {
            name: s.name.clone(),
            seed: o.seed.unwrap_or(s.seed),
            algorithm,
            nodes,
            clients,
            persistence: (0..nodes)
                .map(|n| s.persistence.get(n).copied().unwrap_or_default())
                .collect(),
            replication: s.replication,
            tick_us,
            ticks,
            latency_us: s.network.latency.max_us().max(1),
            think_us: tick_us,
            hold_us: s.clients.hold.max_us(),
            budget,
            least,
            jump_by_us,
            power_loss,
            reduce: true,
            ignored: ignored(s),
        })
    }

    /// One line saying what is explored.
    pub fn describe(&self) -> String {
        let b = &self.budget;
        let mut faults = Vec::new();
        let mut kind = |n: u8, what: &str, least: Option<u32>, end: &str| {
            if n > 0 {
                let ends = match least {
                    None => format!("never {end}"),
                    Some(t) => format!("{end} after ≥ {t} tick(s)"),
                };
                faults.push(format!("{n} {what} ({ends})"));
            }
        };
        kind(b.crashes, "crash(es)", self.least.restart, "restart");
        kind(b.partitions, "cut link(s)", self.least.heal, "heal");
        kind(b.pauses, "pause(s)", self.least.resume, "resume");
        kind(b.failovers, "failover(s)", self.least.promote, "promote");
        if b.clock_jumps > 0 {
            faults.push(format!(
                "{} node clock jump(s) of {}",
                b.clock_jumps,
                crate::report::narrative::span(self.jump_by_us.unsigned_abs())
            ));
        }
        let mut text = format!(
            "{} clients, {} node(s), quorum {}, ttl {} ms, {} ticks of {}; faults: {}",
            self.clients,
            self.nodes,
            self.algorithm.quorum,
            self.algorithm.ttl_ms,
            self.ticks,
            crate::report::narrative::span(self.tick_us),
            if faults.is_empty() {
                "none".into()
            } else {
                faults.join(", ")
            }
        );
        if !self.ignored.is_empty() {
            text.push_str(&format!(" (not explored: {})", self.ignored.join(", ")));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(text: &str, o: &Overrides) -> Result<Scope, String> {
        Scope::new(&Scenario::parse(text, "t.toml", "t").unwrap(), o)
    }

    #[test]
    fn the_budget_follows_the_scenarios_faults_capped_at_two() {
        let s = scope(
            r#"
            duration = "20s"
            [algorithm]
            ttl = "10s"
            [clients]
            count = 5
            [[faults]]
            at = "0s"
            kind = "partition"
            nodes = [3, 4]
            clients = [0]
            [[faults]]
            at = "3s"
            kind = "crash"
            node = 2
            restart_after = "11s"
            [nemesis]
            clock_jump = { interval = "5s", max = "4s" }
            "#,
            &Overrides::default(),
        )
        .unwrap();
        assert_eq!((s.clients, s.nodes, s.tick_us, s.ticks), (3, 5, 2_500_000, 8));
        assert_eq!(
            s.budget,
            Budget {
                crashes: 1,
                partitions: 2,
                clock_jumps: 1,
                ..Budget::default()
            }
        );
        assert_eq!(s.least.restart, Some(5), "11 s rounds up to 5 ticks of 2.5 s");
        assert_eq!(s.least.heal, None, "the partition lasts until the heal");
        assert_eq!(s.jump_by_us, 4_000_000);
        assert!(
            s.describe().contains("1 crash(es) (restart after ≥ 5 tick(s))"),
            "{}",
            s.describe()
        );
    }

    #[test]
    fn what_the_explorer_cannot_take_is_refused() {
        let o = Overrides::default();
        assert!(scope("[algorithm]\nkind = \"rw_redlock\"\n", &o)
            .unwrap_err()
            .contains("exclusive"));
        assert!(scope("[clients]\ncount = 1\n", &o)
            .unwrap_err()
            .contains("2 or 3"));
        let six = Overrides {
            nodes: Some(6),
            ..Overrides::default()
        };
        assert!(scope("", &six).unwrap_err().contains("1 to 5"));
        let fail = Overrides {
            failovers: Some(1),
            ..Overrides::default()
        };
        assert!(scope("", &fail).unwrap_err().contains("replica"));
        assert!(scope("[algorithm]\nwait_replicas = 1\n", &o)
            .unwrap_err()
            .contains("WAIT"));
        let three = Overrides {
            nodes: Some(3),
            ..Overrides::default()
        };
        assert_eq!(scope("", &three).unwrap().algorithm.quorum, 2);
    }
}
