//! Which faults explain a finding, and what each did to the party it hit.
//!
//! A finding has parties (the clients involved and the nodes that granted their holds)
//! and a window (from the first party's request to the end of the finding). A fault is
//! *linked* to the finding when it was in effect at some moment of the window (see
//! [`active_within`] for clock jumps) and acted on a party: a node fault (crash,
//! failover, node pause, node clock) on one of the nodes; a client fault (pause, clock)
//! on one of the clients; a link fault (partition, delay, loss) on a link of one of the clients,
//! whichever node it reaches, since a cut link decides which nodes a quorum can have.
//! Faults elsewhere, active at the same time, explain nothing about these holds and
//! are left out. The narrative ([`super::narrative`]) tells the linked faults; the
//! phrases here say what a fault did to a lock key on a node or to a client's belief.

use super::view::{FaultWindow, RunView};
use super::words::span;
use crate::fault::Fault;
use crate::history::Deploy;

/// Who a finding is about.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Parties {
    pub clients: Vec<usize>,
    pub nodes: Vec<usize>,
}

/// Whether `fault` acts on one of `parties` (see the module doc).
pub fn acts_on(fault: &Fault, parties: &Parties) -> bool {
    let client = |c: &usize| parties.clients.contains(c);
    let node = |n: &usize| parties.nodes.contains(n);
    match fault {
        Fault::Partition { clients, .. } | Fault::Delay { clients, .. } | Fault::Loss { clients, .. } => {
            clients.iter().any(client)
        }
        Fault::Crash { node: n, .. } | Fault::Failover { node: n } | Fault::ReplicationCut { node: n } => {
            node(n)
        }
        Fault::Pause {
            node: n, client: c, ..
        }
        | Fault::ClockJump {
            node: n, client: c, ..
        }
        | Fault::ClockRate {
            node: n, client: c, ..
        } => n.iter().any(node) || c.iter().any(client),
    }
}

/// Whether the fault was in effect at some moment of `[from_us, to_us)`. A node's clock
/// jump counts if it happened inside (it moves the expiry of the keys already there); a
/// client's clock jump counts if it happened before the window ended, since the client
/// goes on sending timestamps from the moved clock.
pub fn active_within(w: &FaultWindow, from_us: u64, to_us: u64) -> bool {
    let lasting = matches!(w.fault, Fault::ClockJump { client: Some(_), .. });
    w.start_us < to_us && (lasting || w.end_us.is_none_or(|e| e >= from_us))
}

/// The faults linked to a finding with these parties and window, in history order.
pub fn linked<'v>(view: &'v RunView, parties: &Parties, from_us: u64, to_us: u64) -> Vec<&'v FaultWindow> {
    view.faults
        .iter()
        .filter(|w| active_within(w, from_us, to_us) && acts_on(&w.fault, parties))
        .collect()
}

/// What a node fault did to the keys on `node`, as a clause: "its wall clock jumped
/// +10.000 s, so the key expired at once". `None` if the fault is not on that node's
/// process or clock. `deployment`: the node is a Sentinel deployment or a cluster, whose
/// killed master is replaced by a replica, not by what its persistence kept.
pub fn key_effect(fault: &Fault, node: usize, deployment: Option<Deploy>) -> Option<String> {
    match *fault {
        Fault::Crash { node: n, .. } if n == node && deployment == Some(Deploy::Sentinel) => Some(
            "its master was killed, and a replica the sentinels promote in its place has only the writes it had received"
                .into(),
        ),
        Fault::Crash { node: n, .. } if n == node && deployment == Some(Deploy::Cluster) => Some(
            "its master was killed, and a replica the other masters vote in for its slots has only the writes it had received"
                .into(),
        ),
        Fault::Crash { node: n, power_loss } if n == node => Some(if power_loss {
            "it lost power and came back with only what its AOF had synced".into()
        } else {
            "it was killed and came back with only what its persistence kept".into()
        }),
        Fault::Failover { node: n } if n == node => {
            Some("it failed over to a replica that had not yet received the latest writes".into())
        }
        Fault::ClockJump {
            node: Some(n), by_us, ..
        } if n == node && by_us > 0 => Some(format!(
            "its wall clock jumped +{}, so keys there expired that much early",
            span(by_us.unsigned_abs())
        )),
        Fault::ClockRate {
            node: Some(n), rate, ..
        } if n == node && rate > 1.0 => Some(format!(
            "its clock ran {:.1}% fast, so keys there expired early",
            (rate - 1.0) * 100.0
        )),
        Fault::Pause { node: Some(n), .. } if n == node => Some("it was paused".into()),
        _ => None,
    }
}

/// What a client fault did to `client`'s clocks, as a clause: "its wall clock jumped
/// +2.000 s". `None` if the fault is not on that client's clock.
pub fn clock_effect(fault: &Fault, client: usize) -> Option<String> {
    match *fault {
        Fault::ClockJump {
            client: Some(c),
            by_us,
            ..
        } if c == client => Some(format!(
            "its wall clock jumped {}{}",
            if by_us >= 0 { "+" } else { "-" },
            span(by_us.unsigned_abs())
        )),
        Fault::ClockRate {
            client: Some(c),
            rate,
            ..
        } if c == client => Some(format!(
            "its clock ran {:.1}% {}",
            (rate - 1.0).abs() * 100.0,
            if rate >= 1.0 { "fast" } else { "slow" }
        )),
        _ => None,
    }
}

/// The clock faults among `faults` that moved `client`'s clock ahead (a forward jump, a
/// fast rate) or behind, as "fault #i: clause" notes. `jumps`: whether wall-clock jumps
/// count (they move what a read-write client sends, not an exclusive client's validity,
/// which its monotonic clock measures).
pub fn clock_notes(faults: &[&FaultWindow], client: usize, ahead: bool, jumps: bool) -> Vec<String> {
    faults
        .iter()
        .filter(|w| match w.fault {
            Fault::ClockJump { by_us, .. } => jumps && (by_us > 0) == ahead,
            Fault::ClockRate { rate, .. } => (rate > 1.0) == ahead,
            _ => false,
        })
        .filter_map(|w| clock_effect(&w.fault, client).map(|e| format!("fault #{}: {e}", w.id)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parties() -> Parties {
        Parties {
            clients: vec![0, 1],
            nodes: vec![0, 1, 2],
        }
    }

    fn fault(json: serde_json::Value) -> Fault {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn a_fault_is_linked_only_through_a_party() {
        let p = parties();
        let yes = [
            serde_json::json!({"kind": "crash", "node": 2}),
            serde_json::json!({"kind": "pause", "client": 1}),
            serde_json::json!({"kind": "clock_jump", "node": 0, "by_us": 5}),
            serde_json::json!({"kind": "partition", "nodes": [4], "clients": [0]}),
            serde_json::json!({"kind": "delay", "nodes": [3], "clients": [1, 5], "extra_us": 10}),
        ];
        let no = [
            serde_json::json!({"kind": "crash", "node": 4}),
            serde_json::json!({"kind": "pause", "client": 3}),
            serde_json::json!({"kind": "clock_rate", "node": 3, "rate": 1.1}),
            serde_json::json!({"kind": "partition", "nodes": [0, 1], "clients": [2, 3]}),
            serde_json::json!({"kind": "failover", "node": 3}),
        ];
        for f in yes {
            assert!(acts_on(&fault(f.clone()), &p), "{f}");
        }
        for f in no {
            assert!(!acts_on(&fault(f.clone()), &p), "{f}");
        }
    }

    #[test]
    fn effects_name_what_happened_to_the_key_or_the_clock() {
        let jump = fault(serde_json::json!({"kind": "clock_jump", "node": 2, "by_us": 10_000_000}));
        assert_eq!(
            key_effect(&jump, 2, None).unwrap(),
            "its wall clock jumped +10.000 s, so keys there expired that much early"
        );
        assert_eq!(key_effect(&jump, 1, None), None, "another node");
        let slow = fault(serde_json::json!({"kind": "clock_rate", "client": 3, "rate": 0.9}));
        assert_eq!(clock_effect(&slow, 3).unwrap(), "its clock ran 10.0% slow");
        assert_eq!(
            key_effect(&slow, 3, None),
            None,
            "a client fault is no key effect"
        );
    }
}
