//! The simulated network: one link per client↔node pair, with latency and partitions.
//!
//! Links are FIFO in each direction, like the TCP connection a Redis client holds: a
//! message never overtakes an earlier one on the same link. A message is lost if its
//! link is cut when it is sent or when it would arrive.

use crate::rng::Rng;
use crate::scenario::Dist;

pub struct Network {
    latency: Dist,
    rng: Rng,
    nodes: usize,
    /// Per link, how many active partitions cut it (partitions may overlap).
    cuts: Vec<u16>,
    /// Per link and direction, the latest arrival scheduled so far.
    last_to_node: Vec<u64>,
    last_to_client: Vec<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    ToNode,
    ToClient,
}

impl Network {
    pub fn new(latency: Dist, rng: Rng, clients: usize, nodes: usize) -> Self {
        Network {
            latency,
            rng,
            nodes,
            cuts: vec![0; clients * nodes],
            last_to_node: vec![0; clients * nodes],
            last_to_client: vec![0; clients * nodes],
        }
    }

    fn link(&self, client: usize, node: usize) -> usize {
        client * self.nodes + node
    }

    pub fn is_cut(&self, client: usize, node: usize) -> bool {
        self.cuts[self.link(client, node)] > 0
    }

    /// When a message sent at `now_us` arrives, or `None` if the link is cut.
    pub fn send(&mut self, now_us: u64, client: usize, node: usize, dir: Direction) -> Option<u64> {
        let link = self.link(client, node);
        if self.cuts[link] > 0 {
            return None;
        }
        let last = match dir {
            Direction::ToNode => &mut self.last_to_node[link],
            Direction::ToClient => &mut self.last_to_client[link],
        };
        let at = (now_us + self.latency.sample(&mut self.rng)).max(*last);
        *last = at;
        Some(at)
    }

    pub fn cut(&mut self, clients: &[usize], nodes: &[usize]) {
        for &c in clients {
            for &n in nodes {
                let link = self.link(c, n);
                self.cuts[link] += 1;
            }
        }
    }

    pub fn uncut(&mut self, clients: &[usize], nodes: &[usize]) {
        for &c in clients {
            for &n in nodes {
                let link = self.link(c, n);
                self.cuts[link] = self.cuts[link].saturating_sub(1);
            }
        }
    }

    pub fn heal(&mut self) {
        self.cuts.fill(0);
    }
}
