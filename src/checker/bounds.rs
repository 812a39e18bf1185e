//! A history's numbers, checked against its `meta` line and [`crate::limits`] before the
//! checker or the report sizes anything by them.
//!
//! A history may come from any client, so it is input like a scenario file: a node
//! index of 2^32 or a meta line with 10^8 nodes must be refused in microseconds, not
//! discovered by allocating a row per node. Checked per event, in order:
//!
//! - the meta line: nodes (1 to [`MAX_NODES`]), clients (1 to [`MAX_CLIENTS`]) and its
//!   times (at most [`MAX_TIME_US`]);
//! - every time in an event, at most [`MAX_TIME_US`]; every lock name, at most
//!   [`MAX_NAME_BYTES`];
//! - every node and client index, below the meta line's counts (below the limits when
//!   the history has no meta line);
//! - faults: an `end` needs an open `start` of the same id, an id is not started twice
//!   while open, and rates and probabilities are in range.
//!
//! A violation is a [`super::Malformed`] naming the line, never a finding.

use crate::fault::Fault;
use crate::history::{Event, FaultAction, Meta, NodeRef};
use crate::limits::{MAX_CLIENTS, MAX_NAME_BYTES, MAX_NODES, MAX_TIME_US};
use std::collections::BTreeSet;

/// What the history has declared so far, to check the next event against.
pub(super) struct Bounds {
    nodes: usize,
    clients: usize,
    /// Whether the counts come from a meta line (for the messages).
    from_meta: bool,
    /// Faults started and not yet ended, by id.
    open_faults: BTreeSet<usize>,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            nodes: MAX_NODES,
            clients: MAX_CLIENTS,
            from_meta: false,
            open_faults: BTreeSet::new(),
        }
    }
}

impl Bounds {
    /// Checks one event; the message says what is out of range.
    pub(super) fn check(&mut self, event: &Event) -> Result<(), String> {
        time("t_us", event.t_us())?;
        match event {
            Event::Meta(m) => self.meta(m),
            Event::Invoke(op) | Event::Ok(op) | Event::Fail(op) | Event::Info(op) => {
                self.client(op.client)?;
                lock_name(&op.lock)?;
                if let Some(t) = op.valid_until_us {
                    time("valid_until_us", t)?;
                }
                op.nodes.iter().flatten().try_for_each(|&n| self.node(n))
            }
            Event::Write(w) => {
                self.client(w.client)?;
                lock_name(&w.lock)
            }
            Event::Lost(l) => {
                self.client(l.client)?;
                lock_name(&l.lock)
            }
            Event::Belief(b) => {
                self.client(b.client)?;
                lock_name(&b.lock)?;
                time("valid_until_us", b.valid_until_us)
            }
            Event::Heal { .. } => Ok(()),
            Event::Node(n) => self.node_line(&NodeRef::from(n)),
            Event::DriverStall(s) => time("lag_us", s.lag_us),
            Event::Sentinel(s) => time("t_us", s.t_us),
            Event::Link(l) => {
                self.client(l.client)?;
                self.node(l.node)?;
                if let Some(lock) = &l.lock {
                    lock_name(lock)?;
                }
                l.by_us.map_or(Ok(()), |t| time("by_us", t))
            }
            Event::Fault(f) => {
                match f.action {
                    FaultAction::Start if !self.open_faults.insert(f.id) => {
                        return Err(format!("fault {} starts again before it ended", f.id))
                    }
                    FaultAction::End if !self.open_faults.remove(&f.id) => {
                        return Err(format!("fault {} ends but never started", f.id))
                    }
                    _ => {}
                }
                self.fault(&f.fault)
            }
        }
    }

    /// Checks a node line (what [`Bounds::check`] checks of an [`Event::Node`]).
    pub(super) fn node_line(&self, n: &NodeRef<'_>) -> Result<(), String> {
        time("t_us", n.t_us)?;
        self.node(n.node)?;
        lock_name(n.lock)?;
        n.client.map_or(Ok(()), |c| self.client(c))
    }

    fn meta(&mut self, m: &Meta) -> Result<(), String> {
        if let Some(cut) = m.cut {
            return Err(format!(
                "meta: cut: this file keeps only the lines its report cites ({} lines either side) of a {}-line history, and a verdict needs every line; the report's rerun command writes the whole history",
                cut.context, cut.lines
            ));
        }
        if !(1..=MAX_NODES).contains(&m.nodes) {
            return Err(format!(
                "meta: nodes = {}: a run has 1 to {MAX_NODES} nodes",
                m.nodes
            ));
        }
        if !(1..=MAX_CLIENTS).contains(&m.clients) {
            return Err(format!(
                "meta: clients = {}: a run has 1 to {MAX_CLIENTS} clients",
                m.clients
            ));
        }
        time("ttl_ms", m.ttl_ms.saturating_mul(1_000))?;
        time("liveness_bound_us", m.liveness_bound_us)?;
        if let Some(t) = m.writer_wait_bound_us {
            time("writer_wait_bound_us", t)?;
        }
        if let Some(p) = m.probe_client.filter(|&p| p >= m.clients) {
            return Err(format!(
                "meta: probe_client = {p}: the run has {} clients (0 to {})",
                m.clients,
                m.clients - 1
            ));
        }
        self.nodes = m.nodes;
        self.clients = m.clients;
        self.from_meta = true;
        Ok(())
    }

    fn node(&self, n: usize) -> Result<(), String> {
        index("node", n, self.nodes, self.from_meta)
    }

    fn client(&self, c: usize) -> Result<(), String> {
        index("client", c, self.clients, self.from_meta)
    }

    fn fault(&self, fault: &Fault) -> Result<(), String> {
        let (nodes, clients) = fault.targets();
        nodes.into_iter().try_for_each(|n| self.node(n))?;
        clients.into_iter().try_for_each(|c| self.client(c))?;
        match *fault {
            Fault::ClockJump { by_us, .. } => time("by_us", by_us.unsigned_abs()),
            Fault::Delay { extra_us, .. } => time("extra_us", extra_us),
            Fault::ClockRate { rate, .. } if !(rate > 0.0 && rate <= 10.0) => {
                Err(format!("rate = {rate}: a clock rate is above 0 and at most 10"))
            }
            Fault::Loss { probability, .. } if !(0.0..=1.0).contains(&probability) => Err(format!(
                "probability = {probability}: a probability is between 0 and 1"
            )),
            _ => Ok(()),
        }
    }
}

fn lock_name(name: &str) -> Result<(), String> {
    if name.len() > MAX_NAME_BYTES {
        return Err(format!(
            "lock name of {} bytes: names are at most {MAX_NAME_BYTES} bytes",
            name.len()
        ));
    }
    Ok(())
}

fn time(field: &str, us: u64) -> Result<(), String> {
    if us > MAX_TIME_US {
        return Err(format!(
            "{field} = {us}: times are at most {MAX_TIME_US} us (about 31 years)"
        ));
    }
    Ok(())
}

fn index(what: &str, i: usize, count: usize, from_meta: bool) -> Result<(), String> {
    if i < count {
        return Ok(());
    }
    let whose = if from_meta {
        "the meta line says"
    } else {
        "without a meta line, a history may have"
    };
    Err(format!(
        "{what} {i} does not exist ({whose} {count} {what}s, numbered 0 to {})",
        count - 1
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Mode;
    use crate::fault::Origin;
    use crate::history::{FaultEvent, Op, OpKind};

    fn meta(nodes: usize, clients: usize) -> Event {
        Event::Meta(Meta {
            t_us: 0,
            scenario: "t".into(),
            seed: 1,
            algorithm: "redlock".into(),
            nodes,
            clients,
            ttl_ms: 1_000,
            liveness_bound_us: 2_000_000,
            writer_wait_bound_us: None,
            worker: None,
            probe_client: None,
            cut: None,
            deployment: None,
            mitigations: None,
        })
    }

    fn fault(id: usize, action: FaultAction, node: usize) -> Event {
        Event::Fault(FaultEvent {
            t_us: 1,
            id,
            action,
            origin: Origin::Script,
            fault: Fault::Crash {
                node,
                power_loss: false,
            },
        })
    }

    fn check_all(events: &[Event]) -> Result<(), String> {
        let mut b = Bounds::default();
        events.iter().try_for_each(|e| b.check(e))
    }

    #[test]
    fn indices_are_checked_against_the_meta_line() {
        let ok = |t, client, nodes: Vec<usize>| {
            let mut op = Op::new(t, client, OpKind::Acquire, "L0", Mode::Exclusive);
            op.nodes = Some(nodes.iter().collect());
            Event::Ok(op)
        };
        assert_eq!(check_all(&[meta(3, 2), ok(1, 1, vec![0, 2])]), Ok(()));
        let e = check_all(&[meta(3, 2), ok(1, 2, vec![0])]).unwrap_err();
        assert!(
            e.contains("client 2 does not exist (the meta line says 2 clients"),
            "{e}"
        );
        let e = check_all(&[meta(3, 2), ok(1, 0, vec![3])]).unwrap_err();
        assert!(e.contains("node 3 does not exist"), "{e}");
        // An acquisition's nodes are a set of at most 64 (a line naming node 64 or more
        // is refused as it is read: `history`'s tests); without a meta line, any will do.
        assert_eq!(check_all(&[ok(1, 9_999, vec![63])]), Ok(()));
    }

    #[test]
    fn absurd_meta_numbers_are_refused() {
        let e = check_all(&[meta(100_000_000, 5)]).unwrap_err();
        assert!(e.contains("nodes = 100000000"), "{e}");
        assert!(check_all(&[meta(5, 0)]).unwrap_err().contains("clients = 0"));
        let Event::Meta(mut m) = meta(5, 5) else {
            unreachable!()
        };
        m.ttl_ms = u64::MAX;
        assert!(check_all(&[Event::Meta(m)]).unwrap_err().contains("ttl_ms"));
    }

    #[test]
    fn a_history_cut_to_its_cited_lines_is_refused_for_a_verdict() {
        let Event::Meta(mut m) = meta(5, 5) else {
            unreachable!()
        };
        m.cut = Some(crate::history::Cut {
            lines: 3_000,
            context: 20,
        });
        let e = check_all(&[Event::Meta(m)]).unwrap_err();
        assert!(
            e.contains("meta: cut") && e.contains("3000-line history") && e.contains("rerun"),
            "{e}"
        );
    }

    #[test]
    fn a_fault_ends_only_after_it_started_and_hits_only_what_exists() {
        use FaultAction::{End, Start};
        assert_eq!(
            check_all(&[meta(3, 2), fault(7, Start, 1), fault(7, End, 1)]),
            Ok(())
        );
        let e = check_all(&[meta(3, 2), fault(7, End, 1)]).unwrap_err();
        assert!(e.contains("fault 7 ends but never started"), "{e}");
        let e = check_all(&[meta(3, 2), fault(7, Start, 1), fault(7, Start, 1)]).unwrap_err();
        assert!(e.contains("starts again"), "{e}");
        let e = check_all(&[meta(3, 2), fault(1, Start, 3)]).unwrap_err();
        assert!(e.contains("node 3 does not exist"), "{e}");
    }
}
