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
//! latencies it always did.

use crate::fault::CutDirection;
use crate::rng::Dist;
use crate::rng::Rng;
use rand::Rng as _;

pub struct Network {
    latency: Dist,
    rng: Rng,
    loss_rng: Rng,
    nodes: usize,
    /// Per link and direction, how many active partitions cut it (they may overlap).
    cuts_to_node: Vec<u16>,
    cuts_to_client: Vec<u16>,
    /// Per link, the sum of the active delay spikes.
    extra_us: Vec<u64>,
    /// Per link, the loss probabilities of the active loss faults.
    loss: Vec<Vec<f64>>,
    /// Per link and direction, the latest arrival scheduled so far.
    last_to_node: Vec<u64>,
    last_to_client: Vec<u64>,
    /// Whether links keep their order (see the module doc).
    fifo: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    ToNode,
    ToClient,
}

impl Network {
    pub fn new(latency: Dist, rng: Rng, loss_rng: Rng, clients: usize, nodes: usize) -> Self {
        let links = clients * nodes;
        Network {
            latency,
            rng,
            loss_rng,
            nodes,
            cuts_to_node: vec![0; links],
            cuts_to_client: vec![0; links],
            extra_us: vec![0; links],
            loss: vec![Vec::new(); links],
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

    fn link(&self, client: usize, node: usize) -> usize {
        client * self.nodes + node
    }

    pub fn is_cut(&self, client: usize, node: usize, dir: Direction) -> bool {
        let link = self.link(client, node);
        match dir {
            Direction::ToNode => self.cuts_to_node[link] > 0,
            Direction::ToClient => self.cuts_to_client[link] > 0,
        }
    }

    /// When a message sent at `now_us` arrives, or `None` if it is lost.
    pub fn send(&mut self, now_us: u64, client: usize, node: usize, dir: Direction) -> Option<u64> {
        if self.is_cut(client, node, dir) {
            return None;
        }
        let link = self.link(client, node);
        let lost = self.loss[link]
            .iter()
            .fold(false, |lost, &p| lost | self.loss_rng.gen_bool(p));
        if lost {
            return None;
        }
        let latency = self.latency.sample(&mut self.rng) + self.extra_us[link];
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

    fn each_link(&mut self, clients: &[usize], nodes: &[usize], mut f: impl FnMut(&mut Self, usize)) {
        for &c in clients {
            for &n in nodes {
                let link = self.link(c, n);
                f(self, link);
            }
        }
    }

    pub fn cut(&mut self, clients: &[usize], nodes: &[usize], dir: CutDirection) {
        self.each_link(clients, nodes, |net, link| {
            if dir != CutDirection::ToClients {
                net.cuts_to_node[link] += 1;
            }
            if dir != CutDirection::ToNodes {
                net.cuts_to_client[link] += 1;
            }
        });
    }

    pub fn uncut(&mut self, clients: &[usize], nodes: &[usize], dir: CutDirection) {
        self.each_link(clients, nodes, |net, link| {
            if dir != CutDirection::ToClients {
                net.cuts_to_node[link] = net.cuts_to_node[link].saturating_sub(1);
            }
            if dir != CutDirection::ToNodes {
                net.cuts_to_client[link] = net.cuts_to_client[link].saturating_sub(1);
            }
        });
    }

    pub fn delay(&mut self, clients: &[usize], nodes: &[usize], extra_us: u64, on: bool) {
        self.each_link(clients, nodes, |net, link| {
            net.extra_us[link] = if on {
                net.extra_us[link] + extra_us
            } else {
                net.extra_us[link].saturating_sub(extra_us)
            };
        });
    }

    pub fn lose(&mut self, clients: &[usize], nodes: &[usize], probability: f64, on: bool) {
        self.each_link(clients, nodes, |net, link| {
            let active = &mut net.loss[link];
            if on {
                active.push(probability);
            } else if let Some(i) = active.iter().position(|&p| p == probability) {
                active.remove(i);
            }
        });
    }

    /// Ends every partition, delay spike and loss fault.
    pub fn heal(&mut self) {
        self.cuts_to_node.fill(0);
        self.cuts_to_client.fill(0);
        self.extra_us.fill(0);
        self.loss.iter_mut().for_each(Vec::clear);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        n.cut(&[0], &[1], CutDirection::ToNodes);
        assert_eq!(n.send(0, 0, 1, Direction::ToNode), None);
        assert_eq!(n.send(0, 0, 1, Direction::ToClient), Some(100));
        assert_eq!(n.send(0, 1, 1, Direction::ToNode), Some(100), "other client");
        n.uncut(&[0], &[1], CutDirection::ToNodes);
        assert_eq!(n.send(10, 0, 1, Direction::ToNode), Some(110));
    }

    #[test]
    fn a_delay_spike_holds_back_later_messages_on_the_link() {
        let mut n = net();
        n.delay(&[0], &[0], 5_000, true);
        assert_eq!(n.send(0, 0, 0, Direction::ToNode), Some(5_100));
        n.delay(&[0], &[0], 5_000, false);
        assert_eq!(n.send(10, 0, 0, Direction::ToNode), Some(5_100), "FIFO");
        assert_eq!(n.send(10, 0, 1, Direction::ToNode), Some(110), "other link");
    }

    #[test]
    fn without_fifo_a_message_sent_after_a_delay_spike_overtakes() {
        let mut n = net().with_fifo(false);
        n.delay(&[0], &[0], 5_000, true);
        assert_eq!(n.send(0, 0, 0, Direction::ToNode), Some(5_100));
        n.delay(&[0], &[0], 5_000, false);
        assert_eq!(n.send(10, 0, 0, Direction::ToNode), Some(110), "overtakes");
    }

    #[test]
    fn loss_drops_about_its_share() {
        let mut n = net();
        n.lose(&[0, 1], &[0, 1], 0.3, true);
        let delivered = (0..10_000)
            .filter(|&i| n.send(i, 0, 0, Direction::ToNode).is_some())
            .count();
        assert!((6_500..7_500).contains(&delivered), "{delivered}");
        n.lose(&[0, 1], &[0, 1], 0.3, false);
        assert!((0..100).all(|i| n.send(20_000 + i, 0, 0, Direction::ToNode).is_some()));
    }
}
