//! Numbers, lists and faults as the reports write them: `1.204 s`, `250.0 ms`, `0,1,2`,
//! `nodes`, "the network cuts nodes 0,1 off from every client"; and text made safe to put
//! in HTML ([`esc`]).

use crate::fault::{CutDirection, Fault, PausePoint};
use crate::history::Deploy;

/// Seconds with millisecond precision, e.g. `1.204 s`.
pub fn secs(us: u64) -> String {
    format!("{:.3} s", us as f64 / 1e6)
}

/// A duration in the unit that reads best.
pub fn span(us: u64) -> String {
    if us >= 1_000_000 {
        format!("{:.3} s", us as f64 / 1e6)
    } else if us >= 1_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{us} µs")
    }
}

pub fn list(items: &[usize]) -> String {
    items.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

/// History lines as a sentence cites them: "line 7", "lines 7 and 9", "lines 7, 9 and 12"
/// (the form [`crate::history::cut::cited_in`] reads back); empty for none.
pub fn lines(lines: &[usize]) -> String {
    match lines {
        [] => String::new(),
        [one] => format!("line {one}"),
        [rest @ .., last] => format!(
            "lines {} and {last}",
            rest.iter().map(usize::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

pub fn plural(word: &str, n: usize) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// What a fault does, as the rest of a sentence that starts with the time.
/// `clients` is how many clients the run has, to say "every client"; `deployment`: node
/// 0 is a Sentinel deployment or a cluster, where a crash kills the master of the moment
/// (the one the sentinels name, or that serves the lock's slot) and a partition cuts that
/// master off from the rest of the deployment as well (docs/sentinel.md,
/// docs/cluster.md).
pub fn fault_sentence(fault: &Fault, clients: usize, deployment: Option<Deploy>) -> String {
    if let Some(d) = deployment {
        let (master, others) = match d {
            Deploy::Sentinel => (
                "the master the sentinels name for node 0",
                "its replicas, the sentinels",
            ),
            Deploy::Cluster => (
                "the master that serves the lock's slot in node 0's cluster",
                "every other node of the cluster (the other masters and every replica)",
            ),
        };
        let reach = match d {
            Deploy::Sentinel => "the sentinels",
            Deploy::Cluster => "the other masters",
        };
        match fault {
            Fault::Partition {
                clients: cut,
                direction: CutDirection::Both,
                ..
            } => {
                let who = if cut.len() >= clients && clients > 0 {
                    "every client".to_string()
                } else {
                    format!("{} {}", plural("client", cut.len()), list(cut))
                };
                return format!(
                    "the network splits node 0's master of the moment off from {others} and {who}"
                );
            }
            Fault::Crash {
                power_loss: false, ..
            } => return format!("{master} is killed"),
            Fault::ReplicationCut { .. } => {
                return format!(
                    "the replication links of node 0's master of the moment are cut: its replicas stop \
                     receiving its writes, while the clients and {reach} still reach it"
                )
            }
            _ => {}
        }
    }
    let links = |nodes: &[usize], cut: &[usize]| {
        let who = if cut.len() >= clients && clients > 0 {
            "every client".to_string()
        } else {
            format!("{} {}", plural("client", cut.len()), list(cut))
        };
        (format!("{} {}", plural("node", nodes.len()), list(nodes)), who)
    };
    let process = |node: &Option<usize>, client: &Option<usize>| match (node, client) {
        (Some(n), _) => format!("node {n}"),
        (None, Some(c)) => format!("client {c}"),
        (None, None) => "no process".to_string(),
    };
    match fault {
        Fault::Partition {
            nodes,
            clients: cut,
            direction,
        } => {
            let (nodes, who) = links(nodes, cut);
            let how = match direction {
                CutDirection::Both => "",
                CutDirection::ToNodes => " (requests are lost, replies would get through)",
                CutDirection::ToClients => " (replies are lost: requests still run on the nodes)",
            };
            format!("the network cuts {nodes} off from {who}{how}")
        }
        Fault::Crash { node, power_loss } => {
            if *power_loss {
                format!(
                    "node {node} loses power: its process dies and the AOF writes not yet synced are lost"
                )
            } else {
                format!("node {node}'s process is killed")
            }
        }
        Fault::Pause { node, client, point } => {
            let when = match point {
                None => "",
                Some(PausePoint::AfterAcquire) => " right after it acquires",
                Some(PausePoint::BeforeValidityCheck) => " before it checks its validity",
                Some(PausePoint::WhileHolding) => " while it holds the lock",
            };
            format!("{} stops the world{when}", process(node, client))
        }
        Fault::ClockJump { node, client, by_us } => format!(
            "{}'s wall clock jumps {}{}",
            process(node, client),
            if *by_us >= 0 { "+" } else { "-" },
            span(by_us.unsigned_abs())
        ),
        Fault::ClockRate { node, client, rate } => {
            format!("{}'s clock runs at {rate} times true time", process(node, client))
        }
        Fault::Delay {
            nodes,
            clients: cut,
            extra_us,
        } => {
            let (nodes, who) = links(nodes, cut);
            format!(
                "messages between {who} and {nodes} take {} longer",
                span(*extra_us)
            )
        }
        Fault::Loss {
            nodes,
            clients: cut,
            probability,
        } => {
            let (nodes, who) = links(nodes, cut);
            format!(
                "{:.0}% of the messages between {who} and {nodes} are lost",
                probability * 100.0
            )
        }
        Fault::Failover { node } => {
            format!("node {node}'s master dies; its asynchronous replica will take over")
        }
        Fault::ReplicationCut { node } => format!(
            "node {node}'s master is cut off from its replica: the replica stops receiving its writes, \
             while the clients still reach it"
        ),
    }
}

/// What happens when a fault ends, as the rest of a sentence; `None` for a fault whose
/// end changes nothing worth telling (an instantaneous clock jump). `deployment`: node 0
/// is a deployment (see [`fault_sentence`]).
pub fn fault_end_sentence(fault: &Fault, id: usize, deployment: Option<Deploy>) -> Option<String> {
    match fault {
        Fault::Crash { .. } if deployment == Some(Deploy::Sentinel) => Some(
            "the killed member starts again (the sentinels demote it to a replica if they promoted another meanwhile)"
                .to_string(),
        ),
        Fault::Crash { .. } if deployment == Some(Deploy::Cluster) => Some(
            "the killed member starts again (it rejoins as a replica if the masters voted another in meanwhile)"
                .to_string(),
        ),
        Fault::Partition { .. } => Some(format!("the cut of fault #{id} heals")),
        Fault::Crash { node, .. } => Some(format!("node {node} restarts with what its persistence kept")),
        Fault::Pause { node, client, .. } => Some(match (node, client) {
            (Some(n), _) => format!("node {n} resumes"),
            (None, Some(c)) => format!("client {c} resumes, unaware of the time that passed"),
            (None, None) => format!("fault #{id} ends"),
        }),
        Fault::ClockJump { .. } => None,
        Fault::ClockRate { .. } => Some(format!("the clock of fault #{id} runs at true rate again")),
        Fault::Delay { .. } => Some(format!("the delay of fault #{id} ends")),
        Fault::Loss { .. } => Some(format!("the message loss of fault #{id} ends")),
        Fault::Failover { node } => Some(format!(
            "node {node}'s replica is promoted and serves as node {node}, with only the writes it had received"
        )),
        Fault::ReplicationCut { node } => Some(format!(
            "the replication cut of fault #{id} heals: node {node}'s replicas catch up with their master"
        )),
    }
}

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
