//! The simulated network: one link per client↔node pair, with latency, partitions
//! (both ways or one way), delay spikes and message loss.
//!
//! Links are FIFO in each direction, like the TCP connection a Redis client holds: a
//! message never overtakes an earlier one on the same link, so a delay spike also holds
//! back what is sent after it. A scenario can turn that off (`[network] fifo = false`):
//! then every message takes its own latency, as when a client spreads its commands over
//! a pool of connections or reconnects after a timeout, and a message sent later can
//! arrive first. A message is lost if its direction of the link is cut
//! when it is sent or when it would arrive, or by a loss fault's draw when it is sent.
//! Loss draws come from their own stream, so a run without loss faults draws exactly the
//! latencies it always did. Which faults are in force on a link, and how overlapping
//! ones compose, is kept in [`LinkFaults`].

use crate::fault::links::LinkFaults;
use crate::rng::Dist;
use crate::rng::Rng;
use rand::Rng as _;

pub use crate::fault::links::Direction;

pub struct Network {
    latency: Dist,
    rng: Rng,
    loss_rng: Rng,
    /// The partitions, delays and losses in force on each link (they may overlap).
    pub faults: LinkFaults,
    /// Per link and direction, the latest arrival scheduled so far.
    last_to_node: Vec<u64>,
    last_to_client: Vec<u64>,
    /// Whether links keep their order (see the module doc).
    fifo: bool,
}

impl Network {
    pub fn new(latency: Dist, rng: Rng, loss_rng: Rng, clients: usize, nodes: usize) -> Self {
        let links = clients * nodes;
        Network {
            latency,
            rng,
            loss_rng,
            faults: LinkFaults::new(clients, nodes),
            last_to_node: vec![0; links],
            last_to_client: vec![0; links],
            fifo: true,
        }
    }

    /// Makes links keep their order (the default) or not.
    pub fn with_fifo(mut self, fifo: bool) -> Self {
        self.fifo = fifo;
        self
    }

    pub fn is_cut(&self, client: usize, node: usize, dir: Direction) -> bool {
        self.faults.is_cut(self.faults.link(client, node), dir)
    }

    /// The extra latency the active delays add to the link between `client` and `node`.
    pub fn extra_us(&self, client: usize, node: usize) -> u64 {
        self.faults.extra_us(self.faults.link(client, node))
    }

    /// When a message sent at `now_us` arrives, or `None` if it is lost.
    pub fn send(&mut self, now_us: u64, client: usize, node: usize, dir: Direction) -> Option<u64> {
        let link = self.faults.link(client, node);
        if self.faults.is_cut(link, dir) {
            return None;
        }
        let lost = self
            .faults
            .loss(link)
            .fold(false, |lost, p| lost | self.loss_rng.gen_bool(p));
        if lost {
            return None;
        }
        let latency = self.latency.sample(&mut self.rng) + self.faults.extra_us(link);
        if !self.fifo {
            return Some(now_us + latency);
        }
        let last = match dir {
            Direction::ToNode => &mut self.last_to_node[link],
            Direction::ToClient => &mut self.last_to_client[link],
        };
        let at = (now_us + latency).max(*last);
        *last = at;
        Some(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::CutDirection;

    fn net() -> Network {
        Network::new(
            Dist::fixed(100),
            crate::rng::split(1, "network", 0),
            crate::rng::split(1, "loss", 0),
            2,
            2,
        )
    }

    #[test]
    fn a_one_way_cut_loses_only_its_direction() {
        let mut n = net();
        n.faults.cut(&[0], &[1], CutDirection::ToNodes, true);
        assert_eq!(n.send(0, 0, 1, Direction::ToNode), None);
        assert_eq!(n.send(0, 0, 1, Direction::ToClient), Some(100));
        assert_eq!(n.send(0, 1, 1, Direction::ToNode), Some(100), "other client");
        n.faults.cut(&[0], &[1], CutDirection::ToNodes, false);
        assert_eq!(n.send(10, 0, 1, Direction::ToNode), Some(110));
    }

    #[test]
    fn a_delay_spike_holds_back_later_messages_on_the_link() {
        let mut n = net();
        n.faults.delay(&[0], &[0], 5_000, true);
        assert_eq!(n.send(0, 0, 0, Direction::ToNode), Some(5_100));
        n.faults.delay(&[0], &[0], 5_000, false);
        assert_eq!(n.send(10, 0, 0, Direction::ToNode), Some(5_100), "FIFO");
        assert_eq!(n.send(10, 0, 1, Direction::ToNode), Some(110), "other link");
    }

    #[test]
    fn without_fifo_a_message_sent_after_a_delay_spike_overtakes() {
        let mut n = net().with_fifo(false);
        n.faults.delay(&[0], &[0], 5_000, true);
        assert_eq!(n.send(0, 0, 0, Direction::ToNode), Some(5_100));
        n.faults.delay(&[0], &[0], 5_000, false);
        assert_eq!(n.send(10, 0, 0, Direction::ToNode), Some(110), "overtakes");
    }

    #[test]
    fn loss_drops_about_its_share() {
        let mut n = net();
        n.faults.lose(&[0, 1], &[0, 1], 0.3, true);
        let delivered = (0..10_000)
            .filter(|&i| n.send(i, 0, 0, Direction::ToNode).is_some())
            .count();
        assert!((6_500..7_500).contains(&delivered), "{delivered}");
        n.faults.lose(&[0, 1], &[0, 1], 0.3, false);
        assert!((0..100).all(|i| n.send(20_000 + i, 0, 0, Direction::ToNode).is_some()));
    }

    #[test]
    fn overlapping_faults_on_a_link_compose() {
        let mut n = net();
        // Two losses of 50% each: a message gets through only if neither loses it.
        n.faults.lose(&[0], &[0], 0.5, true);
        n.faults.lose(&[0], &[0], 0.5, true);
        let delivered = (0..10_000)
            .filter(|&i| n.send(i, 0, 0, Direction::ToNode).is_some())
            .count();
        assert!((2_200..2_800).contains(&delivered), "{delivered}");
        // Two delays add up; two cuts need two heals.
        n.faults.delay(&[1], &[1], 1_000, true);
        n.faults.delay(&[1], &[1], 2_000, true);
        assert_eq!(n.send(0, 1, 1, Direction::ToNode), Some(3_100));
        n.faults.cut(&[1], &[1], CutDirection::Both, true);
        n.faults.cut(&[1], &[1], CutDirection::ToClients, true);
        n.faults.cut(&[1], &[1], CutDirection::Both, false);
        assert!(n.is_cut(1, 1, Direction::ToClient) && !n.is_cut(1, 1, Direction::ToNode));
        n.faults.cut(&[1], &[1], CutDirection::ToClients, false);
        assert!(!n.is_cut(1, 1, Direction::ToClient));
    }
}
