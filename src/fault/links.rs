//! The faults active on each client↔node link, counted so that overlapping ones compose:
//! a direction of a link is cut while any partition cuts it, the extra latency is the
//! sum of the active delays, and every active loss fault draws on its own (a message
//! gets through only if no draw loses it).
//!
//! Both drivers keep their link faults here: the simulator's network reads it for every
//! message ([`crate::sim::network`]); the real driver pushes a link's state to its proxy
//! after every change.

use super::{ClientId, CutDirection};
use crate::command::NodeId;
use std::collections::{BTreeMap, VecDeque};

/// Which way a message goes on a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    ToNode,
    ToClient,
}

#[derive(Clone, Debug)]
pub struct LinkFaults {
    nodes: usize,
    /// Per link: how many active partitions cut it, indexed by [`Direction`].
    cuts: Vec<[u32; 2]>,
    /// Per link, the sum of the active delays.
    extra_us: Vec<u64>,
    /// Per link, the loss probabilities of the active loss faults.
    loss: Vec<Losses>,
}

/// The loss probabilities of one link's active loss faults, in the order they started:
/// the order their draws are made in, so it must not change. An end takes out the
/// earliest active one with its probability, found by key rather than by a scan (a
/// nemesis may keep a hundred thousand losses active on a link).
#[derive(Clone, Debug, Default)]
struct Losses {
    /// In start order, `None` where a loss ended (squeezed out once they are the most).
    started: Vec<Option<f64>>,
    /// Per probability ([`Losses::key`]), where its active losses sit in `started`,
    /// earliest first.
    at: BTreeMap<u64, VecDeque<usize>>,
    ended: usize,
}

impl Losses {
    /// Probabilities equal as `f64`s have one key (0.0 and -0.0 included); NaN equals
    /// nothing, so an end never takes one out.
    fn key(p: f64) -> Option<u64> {
        if p.is_nan() {
            None
        } else if p == 0.0 {
            Some(0)
        } else {
            Some(p.to_bits())
        }
    }

    fn push(&mut self, p: f64) {
        if let Some(key) = Self::key(p) {
            self.at.entry(key).or_default().push_back(self.started.len());
        }
        self.started.push(Some(p));
    }

    /// Ends the earliest active loss with probability `p`, if there is one.
    fn end(&mut self, p: f64) {
        let Some(key) = Self::key(p) else {
            return;
        };
        let Some(at) = self.at.get_mut(&key) else {
            return;
        };
        let i = at.pop_front().expect("a probability's list is never left empty");
        if at.is_empty() {
            self.at.remove(&key);
        }
        self.started[i] = None;
        self.ended += 1;
        if self.ended * 2 > self.started.len() {
            self.squeeze();
        }
    }

    /// Drops the ended losses, keeping the order of the rest.
    fn squeeze(&mut self) {
        self.started.retain(Option::is_some);
        self.ended = 0;
        self.at.clear();
        for (i, p) in self.started.iter().enumerate() {
            if let Some(key) = p.and_then(Self::key) {
                self.at.entry(key).or_default().push_back(i);
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = f64> + '_ {
        self.started.iter().flatten().copied()
    }

    fn clear(&mut self) {
        self.started.clear();
        self.at.clear();
        self.ended = 0;
    }
}

impl LinkFaults {
    pub fn new(clients: usize, nodes: usize) -> Self {
        let links = clients * nodes;
        LinkFaults {
            nodes,
            cuts: vec![[0; 2]; links],
            extra_us: vec![0; links],
            loss: vec![Losses::default(); links],
        }
    }

    /// The index of the link between `client` and `node`.
    pub fn link(&self, client: ClientId, node: NodeId) -> usize {
        client * self.nodes + node
    }

    pub fn is_cut(&self, link: usize, dir: Direction) -> bool {
        self.cuts[link][dir as usize] > 0
    }

    pub fn extra_us(&self, link: usize) -> u64 {
        self.extra_us[link]
    }

    /// The probabilities of the active loss faults on `link`, one draw each, in the
    /// order the faults started.
    pub fn loss(&self, link: usize) -> impl Iterator<Item = f64> + '_ {
        self.loss[link].iter()
    }

    fn each_link(&mut self, clients: &[ClientId], nodes: &[NodeId], mut f: impl FnMut(&mut Self, usize)) {
        for &c in clients {
            for &n in nodes {
                let link = self.link(c, n);
                f(self, link);
            }
        }
    }

    /// A partition between `clients` and `nodes` starts (`on`) or ends.
    pub fn cut(&mut self, clients: &[ClientId], nodes: &[NodeId], dir: CutDirection, on: bool) {
        let ways = [
            (Direction::ToNode, dir != CutDirection::ToClients),
            (Direction::ToClient, dir != CutDirection::ToNodes),
        ];
        self.each_link(clients, nodes, |f, link| {
            for (way, cuts) in ways {
                let count = &mut f.cuts[link][way as usize];
                if cuts && on {
                    *count += 1;
                } else if cuts {
                    *count = count.saturating_sub(1);
                }
            }
        });
    }

    /// A delay of `extra_us` on the links between `clients` and `nodes` starts or ends.
    pub fn delay(&mut self, clients: &[ClientId], nodes: &[NodeId], extra_us: u64, on: bool) {
        self.each_link(clients, nodes, |f, link| {
            let d = &mut f.extra_us[link];
            *d = if on {
                *d + extra_us
            } else {
                d.saturating_sub(extra_us)
            };
        });
    }

    /// A loss fault with `probability` on the links between `clients` and `nodes` starts
    /// or ends.
    pub fn lose(&mut self, clients: &[ClientId], nodes: &[NodeId], probability: f64, on: bool) {
        self.each_link(clients, nodes, |f, link| {
            let active = &mut f.loss[link];
            if on {
                active.push(probability);
            } else {
                active.end(probability);
            }
        });
    }

    /// Ends every link fault.
    pub fn clear(&mut self) {
        self.cuts.fill([0; 2]);
        self.extra_us.fill(0);
        self.loss.iter_mut().for_each(Losses::clear);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_stays_cut_until_the_last_overlapping_partition_heals() {
        let mut f = LinkFaults::new(2, 3);
        let l = f.link(1, 2);
        f.cut(&[0, 1], &[2], CutDirection::Both, true);
        f.cut(&[1], &[1, 2], CutDirection::ToNodes, true);
        assert!(f.is_cut(l, Direction::ToNode) && f.is_cut(l, Direction::ToClient));
        f.cut(&[0, 1], &[2], CutDirection::Both, false);
        assert!(f.is_cut(l, Direction::ToNode), "the one-way cut is still active");
        assert!(!f.is_cut(l, Direction::ToClient));
        assert!(
            !f.is_cut(f.link(0, 2), Direction::ToNode),
            "client 0 was only in the first"
        );
        f.cut(&[1], &[1, 2], CutDirection::ToNodes, false);
        assert!(!f.is_cut(l, Direction::ToNode));
        f.cut(&[1], &[2], CutDirection::Both, false);
        assert!(
            !f.is_cut(l, Direction::ToNode),
            "an end without a start cuts nothing"
        );
    }

    #[test]
    fn overlapping_delays_add_and_losses_stack() {
        let mut f = LinkFaults::new(1, 2);
        let l = f.link(0, 1);
        f.delay(&[0], &[0, 1], 500, true);
        f.delay(&[0], &[1], 2_000, true);
        assert_eq!((f.extra_us(f.link(0, 0)), f.extra_us(l)), (500, 2_500));
        f.delay(&[0], &[0, 1], 500, false);
        assert_eq!((f.extra_us(f.link(0, 0)), f.extra_us(l)), (0, 2_000));
        f.lose(&[0], &[1], 0.2, true);
        f.lose(&[0], &[1], 0.5, true);
        f.lose(&[0], &[1], 0.2, true);
        f.lose(&[0], &[1], 0.2, false);
        assert_eq!(f.loss(l).collect::<Vec<_>>(), [0.5, 0.2]);
        f.clear();
        assert_eq!((f.extra_us(l), f.loss(l).count()), (0, 0));
    }

    #[test]
    fn a_loss_end_takes_out_the_earliest_equal_one_as_a_scan_would() {
        // Against the list a scan kept: push, and remove the first equal probability.
        let mut f = LinkFaults::new(1, 1);
        let mut model: Vec<f64> = Vec::new();
        let probabilities = [0.1, 0.2, 0.0, -0.0, 0.5, f64::NAN];
        let mut x = 3u64;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let p = probabilities[(x >> 33) as usize % probabilities.len()];
            // More starts than ends early on, more ends later: the list grows, then
            // shrinks through many squeezes.
            let on = (x >> 20) % 100 < if model.len() < 3_000 { 60 } else { 35 };
            f.lose(&[0], &[0], p, on);
            if on {
                model.push(p);
            } else if let Some(i) = model.iter().position(|&m| m == p) {
                model.remove(i);
            }
            let got: Vec<u64> = f.loss(0).map(f64::to_bits).collect();
            assert_eq!(got, model.iter().map(|p| p.to_bits()).collect::<Vec<_>>());
        }
    }
}
