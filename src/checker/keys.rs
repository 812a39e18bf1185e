//! The live keys of each node, followed from the history's `node` lines: what a fault
//! finds on a node when it strikes (a crash takes the keys down, a clock jump moves their
//! expiry), and which nodes hold an acquisition's value (a worker's `ok` names none).
//!
//! A key is live from its `set` (or `promoted`, or a `present` the real backend read as a
//! fault struck) line until a line removes it (`expired`,
//! `deleted`, `lost`, `unreplicated`) or, when the line gave a ttl, until that ttl has
//! passed in true time since the `set` or the last `extended` (expiry lines are lazy, as
//! in Redis: a key nobody touches again gets its line late, or never). A string key
//! holds one value: a `set` replaces whatever was left. A sorted set (`r_{L}`, the fair
//! lock's queues) holds one entry per member, each its own key here, as the node lines
//! name them. A removal that names no value (a real `DEL` from a built-in client) takes
//! every value of the key.
//!
//! Only what the lines say is kept: a history without node lines (`node_events = false`)
//! has no live keys, and the touches that rest on keys are then not seen: a crash or a
//! node clock there touched no key, and only what else it touched can exercise it.

use crate::history::compact::{NodeSet, Token};
use crate::history::{NodeAction, NodeRef};
use std::collections::BTreeMap;

/// One live value of a key on a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiveKey {
    /// The lock the key belongs to, as the node line names it.
    pub lock: Token,
    pub token: Option<Token>,
    /// Whose request set it, when the line says (a built-in client's).
    pub client: Option<usize>,
    /// When it was set (or promoted), and the history line that says so.
    pub set_us: u64,
    pub line: usize,
    /// When its ttl runs out in true time, if a ttl was given.
    pub until_us: Option<u64>,
}

impl LiveKey {
    /// Whether it is still live at `t_us` as far as its ttl goes.
    pub fn live_at(&self, t_us: u64) -> bool {
        self.until_us.is_none_or(|u| u > t_us)
    }
}

/// The live keys of every node (see the module doc).
#[derive(Default)]
pub struct Keys {
    /// (node, key) → its live values, oldest first.
    live: BTreeMap<(usize, Token), Vec<LiveKey>>,
}

/// Whether a key holds several values (a sorted set's members) rather than one.
fn is_set(key: &str) -> bool {
    key.starts_with("r_{") || key.starts_with("fair")
}

impl Keys {
    /// Takes node line `n` (history line `line`); returns the values it removed, for a
    /// caller that relates a removal to a fault (a `lost` to the crash before it).
    pub fn observe(&mut self, line: usize, n: &NodeRef<'_>) -> Vec<LiveKey> {
        let slot = (n.node, Token::new(n.key));
        let token = n.token.map(Token::new);
        let same = |k: &LiveKey| token.is_none() || k.token == token;
        let values = self.live.entry(slot.clone()).or_default();
        let mut removed = Vec::new();
        match n.action {
            // A snapshot as a fault struck: the key is live with this value (already
            // known from its `set`, or a `set` line that has not come in yet).
            NodeAction::Present if values.iter().any(|k| k.token == token) => {}
            NodeAction::Set | NodeAction::Promoted | NodeAction::Present => {
                if is_set(n.key) {
                    values.retain(|k| k.token != token);
                } else {
                    values.clear();
                }
                values.push(LiveKey {
                    lock: Token::new(n.lock),
                    token,
                    client: n.client,
                    set_us: n.t_us,
                    line,
                    until_us: n.ttl_ms.map(|ms| n.t_us.saturating_add(ms.saturating_mul(1_000))),
                });
            }
            NodeAction::Extended => {
                for k in values.iter_mut().filter(|k| same(k)) {
                    k.until_us = n.ttl_ms.map(|ms| n.t_us.saturating_add(ms.saturating_mul(1_000)));
                }
            }
            NodeAction::Replicated => {}
            NodeAction::Expired | NodeAction::Deleted | NodeAction::Lost | NodeAction::Unreplicated => {
                let mut i = 0;
                while i < values.len() {
                    if same(&values[i]) {
                        removed.push(values.remove(i));
                    } else {
                        i += 1;
                    }
                }
            }
        }
        // Values whose ttl ran out long ago go, so a key set once stays one record.
        values.retain(|k| k.live_at(n.t_us));
        if values.is_empty() {
            self.live.remove(&slot);
        }
        removed
    }

    /// The values live on `node` at `t_us`.
    pub fn on_node(&self, node: usize, t_us: u64) -> impl Iterator<Item = &LiveKey> {
        self.on_node_keys(node, t_us).map(|(_, k)| k)
    }

    /// The values live on `node` at `t_us`, each with its key's name.
    pub fn on_node_keys(&self, node: usize, t_us: u64) -> impl Iterator<Item = (&str, &LiveKey)> {
        self.live
            .range((node, Token::new(""))..)
            .take_while(move |((n, _), _)| *n == node)
            .flat_map(|((_, key), values)| values.iter().map(move |v| (key.as_str(), v)))
            .filter(move |(_, k)| k.live_at(t_us))
    }

    /// The nodes where a key of `lock` holds `token` at `t_us`: where an acquisition
    /// whose library named no nodes holds its lock.
    pub fn nodes_holding(&self, lock: &str, token: &str, t_us: u64) -> NodeSet {
        self.live
            .iter()
            .filter(|(_, values)| {
                values
                    .iter()
                    .any(|k| k.lock == lock && k.token.as_deref() == Some(token) && k.live_at(t_us))
            })
            .map(|((node, _), _)| *node)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(
        t_us: u64,
        node: usize,
        key: &'a str,
        action: NodeAction,
        token: Option<&'a str>,
    ) -> NodeRef<'a> {
        NodeRef {
            t_us,
            node,
            lock: "L0",
            key,
            action,
            client: None,
            token,
            ttl_ms: Some(1_000),
        }
    }

    #[test]
    fn a_key_lives_from_its_set_until_a_removal_or_its_ttl() {
        let mut keys = Keys::default();
        keys.observe(2, &line(10, 1, "L0", NodeAction::Set, Some("a")));
        assert_eq!(keys.on_node(1, 500).count(), 1);
        assert_eq!(keys.on_node(0, 500).count(), 0, "another node");
        assert_eq!(keys.on_node(1, 1_000_010).count(), 0, "its ttl ran out");
        assert_eq!(keys.nodes_holding("L0", "a", 20).to_vec(), vec![1]);
        assert!(keys.nodes_holding("L0", "b", 20).is_empty());
        // Extended: the ttl counts from the extension.
        keys.observe(3, &line(900_000, 1, "L0", NodeAction::Extended, Some("a")));
        assert_eq!(keys.on_node(1, 1_500_000).count(), 1);
        let removed = keys.observe(4, &line(1_600_000, 1, "L0", NodeAction::Lost, Some("a")));
        assert_eq!(removed.len(), 1);
        assert_eq!(removed[0].line, 2);
        assert_eq!(keys.on_node(1, 1_600_001).count(), 0);
    }

    #[test]
    fn a_string_holds_one_value_and_a_sorted_set_one_per_member() {
        let mut keys = Keys::default();
        keys.observe(1, &line(10, 0, "L0", NodeAction::Set, Some("a")));
        keys.observe(2, &line(20, 0, "L0", NodeAction::Set, Some("b")));
        let values: Vec<_> = keys.on_node(0, 30).map(|k| k.token.clone()).collect();
        assert_eq!(
            values,
            vec![Some(Token::new("b"))],
            "a set replaces what was left"
        );
        keys.observe(3, &line(10, 0, "r_{L0}", NodeAction::Set, Some("r1")));
        keys.observe(4, &line(20, 0, "r_{L0}", NodeAction::Set, Some("r2")));
        assert_eq!(keys.on_node(0, 30).count(), 3);
        keys.observe(5, &line(40, 0, "r_{L0}", NodeAction::Expired, Some("r1")));
        assert_eq!(keys.on_node(0, 50).count(), 2);
        // A removal naming no value takes every value of the key.
        keys.observe(6, &line(60, 0, "r_{L0}", NodeAction::Deleted, None));
        assert_eq!(keys.on_node(0, 70).count(), 1);
    }
}
