//! What the faults active on a process compose to: the bookkeeping both drivers keep so
//! that a node's or client's state follows from the set of faults on it, never from the
//! last fault event (DESIGN: "faults are sets").
//!
//! - A node is down while any outage of it is active: a crash, or a failover (its master
//!   dead until the replica is promoted). The outage that takes it down decides what it
//!   comes back with (a crash: what its persistence kept, killed or with a power loss; a
//!   failover: what the replica had received); an outage that starts while the node is
//!   already down only makes it stay down longer. The node comes back once, when the
//!   last outage ends.
//! - A node or client is paused while any pause on it is active; what it missed replays
//!   once, when the last pause ends.
//! - A node's replicas are cut off from its master while any replication cut of it is
//!   active; they catch up once, when the last one ends.
//! - Clock rates multiply, as independent drifts do: a clock that one fault runs at 1.02
//!   and another at 0.9 runs at 1.02 × 0.9 = 0.918 while both are active, and at 1.02
//!   again when the second ends. With no rate fault a clock runs at 1.
//! - Clock jumps need no bookkeeping: each moves the clock's offset by its size, so they
//!   add up, and the clock stays where they moved it.
//!
//! Link faults (partitions, delays, loss) are counted per link in [`super::links`].
//! The drivers ask these methods whether a start or end changes the target's state and
//! carry out only the transitions: the simulator on its nodes and clocks, the real
//! driver on its processes and libfaketime.

use crate::command::NodeId;
use crate::fault::ClientId;

/// A node's or a client's process: what a pause or a clock fault acts on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    Node(NodeId),
    Client(ClientId),
}

impl Process {
    /// The process a pause or clock fault names (a fault names exactly one).
    pub fn of(node: Option<NodeId>, client: Option<ClientId>) -> Option<Process> {
        node.map(Process::Node).or(client.map(Process::Client))
    }
}

/// The outages, pauses and clock rates in force per process.
#[derive(Clone, Debug)]
pub struct ProcessFaults {
    nodes: usize,
    /// Per node: active crashes and failovers.
    outages: Vec<u32>,
    /// Per node: active replication cuts.
    replication_cuts: Vec<u32>,
    /// Per process, nodes first, then clients: active pauses.
    pauses: Vec<u32>,
    /// Per process: the active rate faults as (fault id, rate), so an end removes exactly
    /// the fault that ends.
    rates: Vec<Vec<(usize, f64)>>,
}

/// The composition rule of clock rates: the product of the active ones.
pub fn compose_rates(rates: impl IntoIterator<Item = f64>) -> f64 {
    rates.into_iter().product()
}

impl ProcessFaults {
    pub fn new(nodes: usize, clients: usize) -> Self {
        ProcessFaults {
            nodes,
            outages: vec![0; nodes],
            replication_cuts: vec![0; nodes],
            pauses: vec![0; nodes + clients],
            rates: vec![Vec::new(); nodes + clients],
        }
    }

    fn index(&self, p: Process) -> usize {
        match p {
            Process::Node(n) => n,
            Process::Client(c) => self.nodes + c,
        }
    }

    /// An outage of `node` starts (`on`) or ends. True when the node's state changes: the
    /// first outage takes it down, the end of the last one brings it back.
    pub fn outage(&mut self, node: NodeId, on: bool) -> bool {
        flip(&mut self.outages[node], on)
    }

    /// A replication cut of `node` starts or ends. True when its replicas' link to the
    /// master changes: the first cut cuts it, the end of the last one heals it.
    pub fn replication_cut(&mut self, node: NodeId, on: bool) -> bool {
        flip(&mut self.replication_cuts[node], on)
    }

    /// A pause of `p` starts or ends. True when `p` stops (first pause) or resumes (last).
    pub fn pause(&mut self, p: Process, on: bool) -> bool {
        let i = self.index(p);
        flip(&mut self.pauses[i], on)
    }

    /// Rate fault `id` on `p` starts (at `rate`) or ends; returns the rate now in force.
    pub fn rate(&mut self, p: Process, id: usize, rate: f64, on: bool) -> f64 {
        let i = self.index(p);
        let active = &mut self.rates[i];
        if on {
            active.push((id, rate));
        } else if let Some(k) = active.iter().position(|&(f, _)| f == id) {
            active.remove(k);
        }
        self.rate_of(p)
    }

    pub fn is_down(&self, node: NodeId) -> bool {
        self.outages[node] > 0
    }

    pub fn is_paused(&self, p: Process) -> bool {
        self.pauses[self.index(p)] > 0
    }

    /// The rate `p`'s clock runs at: the composition of its active rate faults.
    pub fn rate_of(&self, p: Process) -> f64 {
        compose_rates(self.rates[self.index(p)].iter().map(|&(_, r)| r))
    }
}

/// Counts one more (`on`) or one fewer; true when the count leaves or reaches zero.
fn flip(count: &mut u32, on: bool) -> bool {
    if on {
        *count += 1;
        *count == 1
    } else if *count > 0 {
        *count -= 1;
        *count == 0
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_goes_down_with_the_first_outage_and_comes_back_with_the_last() {
        let mut f = ProcessFaults::new(2, 1);
        assert!(f.outage(1, true), "the first crash takes node 1 down");
        assert!(!f.outage(1, true), "a second one changes nothing");
        assert!(f.is_down(1) && !f.is_down(0));
        assert!(!f.outage(1, false), "one crash is still active");
        assert!(f.is_down(1));
        assert!(f.outage(1, false), "the last end restarts it");
        assert!(!f.is_down(1));
        assert!(!f.outage(1, false), "an end without a start is ignored");
        assert!(!f.is_down(1));
    }

    #[test]
    fn replicas_stay_cut_off_until_the_last_replication_cut_ends() {
        let mut f = ProcessFaults::new(2, 1);
        assert!(f.replication_cut(0, true), "the first cut cuts the link");
        assert!(!f.replication_cut(0, true), "a second one changes nothing");
        assert!(!f.replication_cut(1, false), "another node's link is its own");
        assert!(!f.replication_cut(0, false), "one cut is still active");
        assert!(f.replication_cut(0, false), "the last end heals it");
        assert!(!f.is_down(0), "a replication cut is no outage");
    }

    #[test]
    fn a_process_stays_paused_until_its_last_pause_ends() {
        let mut f = ProcessFaults::new(1, 2);
        let c = Process::Client(1);
        assert!(f.pause(c, true));
        assert!(!f.pause(c, true));
        assert!(!f.is_paused(Process::Client(0)) && !f.is_paused(Process::Node(0)));
        assert!(!f.pause(c, false));
        assert!(f.is_paused(c));
        assert!(f.pause(c, false));
        assert!(!f.is_paused(c));
    }

    #[test]
    fn overlapping_rates_multiply_and_each_end_takes_its_own_factor_out() {
        let mut f = ProcessFaults::new(1, 1);
        let n = Process::Node(0);
        assert_eq!(f.rate_of(n), 1.0);
        assert_eq!(f.rate(n, 3, 1.02, true), 1.02);
        assert!((f.rate(n, 5, 0.9, true) - 0.918).abs() < 1e-12);
        // Two faults with the same rate: the end of one leaves the other.
        assert!((f.rate(n, 7, 0.9, true) - 0.8262).abs() < 1e-12);
        assert!((f.rate(n, 5, 0.9, false) - 0.918).abs() < 1e-12);
        assert_eq!(f.rate(n, 3, 1.02, false), 0.9);
        assert_eq!(f.rate(n, 7, 0.9, false), 1.0);
        assert_eq!(f.rate_of(Process::Client(0)), 1.0, "other processes untouched");
    }

    #[test]
    fn a_fault_names_one_process() {
        assert_eq!(Process::of(Some(2), None), Some(Process::Node(2)));
        assert_eq!(Process::of(None, Some(1)), Some(Process::Client(1)));
        assert_eq!(Process::of(None, None), None);
    }
}
