//! Which nodes held a worker's key, read from the node lines: the nodes a library run's
//! stories name.
//!
//! A built-in client's `ok` names the nodes that granted it. A worker's does not: its
//! library's keys are seen only through the key watcher's lines (docs/history.md, "Worker
//! clients"), which carry the key's value, the library's own (`worker_token` on the
//! `ok`), and no client. A library may keep one value across the attempts of one acquire
//! (redlock-py does): an attempt sets it on some nodes, and when it fails the value is
//! deleted there again before a later attempt sets it anew. So a `set` of the value is
//! not by itself a node the acquisition holds.
//!
//! The watcher reads each node on one connection, so each node's lines come in that
//! node's own order; across nodes, and against the worker's `ok`, they may trail. Node by
//! node, from the acquire's `invoke` to the client's next one:
//! - before the `ok` line, a `set` of the value puts the key there, a `deleted` takes it
//!   away (an attempt undone), and a removal by the node itself (`expired`, `lost`,
//!   `unreplicated`) takes it away too, though the node had granted it;
//! - after the `ok` line, the first line of the value on a node without the key can be a
//!   `set`: the library sets its value only while it acquires, so that set was applied
//!   before the `ok` and seen late. Any other line after the `ok` is the story's, after
//!   the acquisition, except a `deleted` of a key still there, which may be an attempt's
//!   undoing seen late or a deletion after the `ok`: the lines do not say, and the
//!   acquisition's nodes are left untold ([`Seen::Undecided`]), as they are when a line of
//!   the key's name without a value comes while the key is there before the `ok`.
//!
//! Nothing here depends on when the hold began: only on the lines of the acquire.

use super::view::{acquire_lines, RunView};
use crate::checker::Hold;
use crate::history::{Event, LockName, NodeAction, Token};
use std::collections::BTreeMap;

/// A key of the acquisition on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Key {
    pub node: usize,
    /// The line (1-based) of the set that put it there.
    pub set_line: usize,
    /// The line of the node's own removal of it before the `ok` (it expired, or was lost),
    /// if one came: the node granted it, but it was gone when the acquire returned.
    pub gone_line: Option<usize>,
}

/// A key an earlier attempt of the acquire set and that was deleted before the `ok`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Undone {
    pub node: usize,
    pub set_line: usize,
    pub deleted_line: usize,
}

/// A worker's acquisition on the nodes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keys {
    /// The library's value.
    pub value: String,
    /// One per node whose key the acquisition kept, by node.
    pub kept: Vec<Key>,
    /// The keys of attempts undone before the `ok`, in line order.
    pub undone: Vec<Undone>,
}

impl Keys {
    /// The nodes that granted the acquisition (its key there was set and not deleted).
    pub fn nodes(&self) -> Vec<usize> {
        self.kept.iter().map(|k| k.node).collect()
    }

    /// The keys still there when the acquire returned.
    pub fn held(&self) -> Vec<&Key> {
        self.kept.iter().filter(|k| k.gone_line.is_none()).collect()
    }

    /// The kept key's set line on `node`.
    pub fn set_line(&self, node: usize) -> Option<usize> {
        self.kept.iter().find(|k| k.node == node).map(|k| k.set_line)
    }
}

/// What the node lines show of a hold's nodes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Seen {
    /// Not a worker's hold: its `ok` names its nodes, or carries no library value.
    Named,
    /// The lines do not decide which nodes held it.
    Undecided,
    Keys(Keys),
}

/// Where the key of one node stands as the lines come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Absent,
    Set(usize),
    /// Set on the first line, removed by the node on the second.
    Gone(usize, usize),
}

struct NodeKey {
    key: Option<LockName>,
    state: State,
    /// Whether a line of the value on this node came after the `ok` yet.
    after_ok: bool,
}

/// The line of `client`'s first `invoke` after line `from` (1-based), or one past the
/// history's last line.
pub fn next_invoke(view: &RunView, client: usize, from: usize) -> usize {
    let mut line = from;
    let mut next = None;
    view.history.walk_from(from, |e| {
        line += 1;
        if matches!(e, Event::Invoke(op) if op.client == client) {
            next = Some(line);
            return false;
        }
        true
    });
    next.unwrap_or(line + 1)
}

/// A worker's acquisition as the node lines show it (see the module doc).
pub fn worker_keys(view: &RunView, h: &Hold) -> Seen {
    let (ok, invoke) = acquire_lines(view.history, h);
    let Some(value) = ok.filter(|o| o.nodes.is_none()).and_then(|o| o.worker_token) else {
        return Seen::Named;
    };
    let next = next_invoke(view, h.client, h.ok_line);
    let mut nodes: BTreeMap<usize, NodeKey> = BTreeMap::new();
    let mut undone = Vec::new();
    let mut undecided = false;
    let mut line = invoke;
    view.history.walk_from(invoke.saturating_sub(1), |e| {
        if line >= next {
            return false;
        }
        if let Event::Node(n) = e {
            if n.lock == h.lock {
                let mine = n.token.as_deref() == Some(value.as_str());
                let at = nodes.entry(n.node).or_insert(NodeKey {
                    key: None,
                    state: State::Absent,
                    after_ok: false,
                });
                if line < h.ok_line {
                    match (mine, n.action, at.state) {
                        (true, NodeAction::Set, _) => {
                            at.state = State::Set(line);
                            at.key = Some(n.key.clone());
                        }
                        (true, NodeAction::Deleted, State::Set(set_line)) => {
                            undone.push(Undone {
                                node: n.node,
                                set_line,
                                deleted_line: line,
                            });
                            at.state = State::Absent;
                        }
                        (true, a, State::Set(set_line)) if a.removes() => {
                            at.state = State::Gone(set_line, line)
                        }
                        // A line of the key's name that does not say whose value it was.
                        (false, a, State::Set(_))
                            if n.token.is_none()
                                && at.key.as_ref() == Some(&n.key)
                                && (a == NodeAction::Set || a.removes()) =>
                        {
                            undecided = true
                        }
                        _ => {}
                    }
                } else if line > h.ok_line && mine && !at.after_ok {
                    at.after_ok = true;
                    match (n.action, at.state) {
                        (NodeAction::Set, State::Absent) => {
                            at.state = State::Set(line);
                            at.key = Some(n.key.clone());
                        }
                        (NodeAction::Deleted, State::Set(_)) | (NodeAction::Set, State::Gone(..)) => {
                            undecided = true
                        }
                        _ => {}
                    }
                }
            }
        }
        line += 1;
        true
    });
    if undecided {
        return Seen::Undecided;
    }
    let kept = nodes
        .into_iter()
        .filter_map(|(node, k)| match k.state {
            State::Absent => None,
            State::Set(set_line) => Some(Key {
                node,
                set_line,
                gone_line: None,
            }),
            State::Gone(set_line, gone) => Some(Key {
                node,
                set_line,
                gone_line: Some(gone),
            }),
        })
        .collect();
    Seen::Keys(Keys { value, kept, undone })
}

/// The hold with the nodes that granted it: a worker's from the node lines
/// ([`worker_keys`]; none where they do not decide), any other as its `ok` named them.
pub fn with_nodes(view: &RunView, h: &Hold) -> Hold {
    let mut held = h.clone();
    match worker_keys(view, h) {
        Seen::Named => {}
        Seen::Undecided => held.nodes = Default::default(),
        Seen::Keys(k) => held.nodes = k.nodes().into_iter().collect(),
    }
    held
}

/// The line of the set of the hold's key that it kept, by node: a worker's from
/// [`worker_keys`]; a built-in client's, the last set of its token on each node it
/// names, between its `invoke` and its `ok`. A worker whose `ok` names its nodes is
/// matched by its library's value (`worker_token`), and its key events, which reach the
/// history on their own way, may come after its `ok`: the first set of that value on a
/// node before the client's next request counts where none came before the `ok`.
pub fn set_lines(view: &RunView, h: &Hold) -> BTreeMap<usize, usize> {
    match worker_keys(view, h) {
        Seen::Keys(k) => return k.kept.iter().map(|k| (k.node, k.set_line)).collect(),
        Seen::Undecided => return BTreeMap::new(),
        Seen::Named => {}
    }
    let (ok, invoke) = acquire_lines(view.history, h);
    let (token, end) = match ok.and_then(|o| o.worker_token) {
        Some(value) => (Some(Token::new(&value)), next_invoke(view, h.client, h.ok_line)),
        None => (h.token.clone(), h.ok_line + 1),
    };
    let mut out = BTreeMap::new();
    let mut line = invoke;
    view.history.walk_from(invoke.saturating_sub(1), |e| {
        if line >= end {
            return false;
        }
        if let Event::Node(n) = e {
            if n.lock == h.lock
                && n.action == NodeAction::Set
                && token.is_some()
                && n.token == token
                && n.client.is_none_or(|c| c == h.client)
                && h.nodes.contains(&n.node)
                && (line < h.ok_line || !out.contains_key(&n.node))
            {
                out.insert(n.node, line);
            }
        }
        line += 1;
        true
    });
    out
}

/// Whether the hold has an expiry: a worker that said `expires: false` holds until it
/// releases, and its `ok` carries no `valid_until_us`.
pub fn expires(view: &RunView, h: &Hold) -> bool {
    acquire_lines(view.history, h)
        .0
        .is_none_or(|o| o.valid_until_us.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::check;

    const META: &str = r#"{"type":"meta","t_us":0,"scenario":"t","seed":1,"algorithm":"redlock","nodes":5,"clients":2,"ttl_ms":2000,"liveness_bound_us":1}"#;

    fn history(lines: &[&str]) -> Vec<Event> {
        std::iter::once(META)
            .chain(lines.iter().copied())
            .map(|l| crate::history::parse_line(l).unwrap())
            .collect()
    }

    fn node(t: u64, n: usize, action: &str, value: &str) -> String {
        format!(
            r#"{{"type":"node","t_us":{t},"node":{n},"lock":"L0","key":"L0","action":"{action}","token":"{value}"}}"#
        )
    }

    const INVOKE: &str =
        r#"{"type":"invoke","t_us":1,"client":0,"op":"acquire","lock":"L0","mode":"exclusive"}"#;
    const OK: &str = r#"{"type":"ok","t_us":100,"client":0,"op":"acquire","lock":"L0","mode":"exclusive","token":"t0","valid_until_us":2000,"worker_token":"v"}"#;

    /// The keys of client 0's only hold.
    fn seen(lines: &[String]) -> Seen {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let h = history(&refs);
        let f = check(&h).unwrap();
        let view = RunView::new(&h, &f);
        worker_keys(&view, &view.holds()[0])
    }

    fn key(node: usize, set_line: usize, gone_line: Option<usize>) -> Key {
        Key {
            node,
            set_line,
            gone_line,
        }
    }

    #[test]
    fn an_attempt_undone_before_the_ok_is_no_node_of_the_hold() {
        // Lines 3-6: the first attempt sets nodes 3 and 4 and its value is deleted there;
        // lines 7-9: the attempt that acquires sets nodes 0, 1 and 3.
        let lines = [
            INVOKE.to_string(),
            node(10, 3, "set", "v"),
            node(11, 4, "set", "v"),
            node(12, 3, "deleted", "v"),
            node(13, 4, "deleted", "v"),
            node(50, 0, "set", "v"),
            node(51, 1, "set", "v"),
            node(52, 3, "set", "v"),
            OK.to_string(),
        ];
        let Seen::Keys(k) = seen(&lines) else {
            panic!("decided")
        };
        assert_eq!(k.kept, vec![key(0, 7, None), key(1, 8, None), key(3, 9, None)]);
        assert_eq!(
            k.undone,
            vec![
                Undone {
                    node: 3,
                    set_line: 3,
                    deleted_line: 5
                },
                Undone {
                    node: 4,
                    set_line: 4,
                    deleted_line: 6
                }
            ]
        );
    }

    #[test]
    fn a_set_seen_after_the_ok_is_the_acquisitions_and_a_removal_before_it_is_told() {
        let lines = [
            INVOKE.to_string(),
            node(10, 0, "set", "v"),
            node(60, 0, "expired", "v"),
            OK.to_string(),
            node(101, 1, "set", "v"),
            node(102, 1, "expired", "v"),
        ];
        let Seen::Keys(k) = seen(&lines) else {
            panic!("decided")
        };
        assert_eq!(k.kept, vec![key(0, 3, Some(4)), key(1, 6, None)]);
        assert_eq!(k.held(), vec![&key(1, 6, None)]);
    }

    #[test]
    fn a_delete_seen_after_the_ok_leaves_the_nodes_untold() {
        let lines = [
            INVOKE.to_string(),
            node(10, 0, "set", "v"),
            OK.to_string(),
            node(101, 0, "deleted", "v"),
        ];
        assert_eq!(seen(&lines), Seen::Undecided);
    }

    #[test]
    fn an_ok_that_names_its_nodes_is_taken_at_its_word() {
        let ok = r#"{"type":"ok","t_us":100,"client":0,"op":"acquire","lock":"L0","mode":"exclusive","token":"t0","valid_until_us":2000,"nodes":[0,1,2]}"#;
        assert_eq!(seen(&[INVOKE.to_string(), ok.to_string()]), Seen::Named);
    }

    /// `lockstorm worker` names its nodes and its library value differs from lockstorm's
    /// token: its sets are found by the value, and a set whose key event reached the
    /// history after the `ok` (a watcher's) counts, up to the client's next request.
    #[test]
    fn a_worker_that_names_its_nodes_has_its_sets_found_by_its_value_after_the_ok() {
        let ok = r#"{"type":"ok","t_us":100,"client":0,"op":"acquire","lock":"L0","mode":"exclusive","token":"t0","valid_until_us":2000,"nodes":[0,1],"worker_token":"v"}"#;
        let again =
            r#"{"type":"invoke","t_us":300,"client":0,"op":"release","lock":"L0","mode":"exclusive"}"#;
        let lines = [
            INVOKE.to_string(),
            node(50, 0, "set", "v"),
            ok.to_string(),
            node(101, 1, "set", "v"),
            node(102, 0, "set", "v"),
            again.to_string(),
            node(301, 2, "set", "v"),
        ];
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let h = history(&refs);
        let f = check(&h).unwrap();
        let view = RunView::new(&h, &f);
        let sets = set_lines(&view, &view.holds()[0]);
        // Node 0: its set before the ok (line 3), not the later one; node 1: after the
        // ok (line 5); node 2: after the next request, and not one the ok names.
        assert_eq!(sets, BTreeMap::from([(0, 3), (1, 5)]));
    }
}
