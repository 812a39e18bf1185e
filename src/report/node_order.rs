//! Which key a blind delete removed. On the real backend a built-in client's `deleted`
//! line comes from its DEL's reply, which says only that a key went, not whose: the line
//! has no token. And every such line is stamped when its reply arrived, so the lines of
//! one key on one node follow the replies, not the order in which the node applied the
//! commands: a DEL's line may come after the SET that the DEL made room for.
//!
//! The node's own order is not free, though:
//! - a SET NX succeeds only on an absent key and every removal takes a present one, so
//!   on each node the sets and the removals of a key alternate, and a removal whose line
//!   names a token took that token's key;
//! - a command was applied after its client sent it, which is after the client's last
//!   line before it (its operation's `invoke`, or its previous command's reply on that
//!   node: a client sends one command at a time to a node), and before its own line;
//! - the lines the nodes themselves gave (expiries, keys lost at a restart) come in the
//!   node's order among themselves.
//!
//! [`removed_by_blind_deletes`] tries every order these rules allow and gives a blind
//! delete the token of the key it removed when every one of them agrees;
//! [`removals_between`] gives the removals that can have come between two SETs,
//! whichever of them came first. Where the lines fit no order at all, they say nothing:
//! nothing is guessed.

use super::view::RunView;
use crate::history::{Event, NodeAction, Token};
use std::collections::{BTreeMap, BTreeSet};

/// How many lines before the first line asked about the order is read from. The key's
/// state there is taken as unknown, which the first set that must come next settles.
const LOOKBACK_LINES: usize = 512;
/// How many lines after the last line asked about are read: a later line's command may
/// have been applied before.
const LOOKAHEAD_LINES: usize = 512;
/// The most lines one stretch of commands that are not ordered among themselves may
/// hold, and the most steps spent trying its orders; beyond either, the deletes in it
/// stay unattributed.
const MAX_STRETCH: usize = 12;
const MAX_STEPS: usize = 100_000;
/// The most orders of one stretch kept to answer [`removals_between`].
const MAX_ORDERS: usize = 1024;

/// The key each blind delete of `key` on `node` removed: by the delete's 1-based line,
/// the removed key's token and the line of the SET that put it there; for the deletes
/// on lines `from..=to` whose key every possible order of the node's commands agrees on.
pub fn removed_by_blind_deletes(
    view: &RunView,
    node: usize,
    key: &str,
    from: usize,
    to: usize,
) -> BTreeMap<usize, Removed> {
    let mut out = BTreeMap::new();
    for solved in solve(view, node, key, from, to) {
        let Some(found) = &solved.found else { continue };
        for (&i, removed) in &found.removed {
            if let [Some(took)] = &removed.iter().collect::<Vec<_>>()[..] {
                let line = solved.items[i].line;
                if (from..=to).contains(&line) {
                    out.insert(line, (*took).clone());
                }
            }
        }
    }
    out
}

/// The removals of `key` on `node` that can have come between the SETs on lines `p` and
/// `q` ([`Between`]). The node applies one stretch of unordered commands after another,
/// so the removal of whichever key came first lies in the stretches from the first SET's
/// to the second's; within one stretch, it is the line right after the first SET in
/// each order the stretch allows (the sets and removals alternate). `None` when the lines
/// of those stretches fit no order.
pub fn removals_between(view: &RunView, node: usize, key: &str, p: usize, q: usize) -> Option<Between> {
    let solved = solve(view, node, key, p.min(q), p.max(q));
    let at = |st: &Solved, line: usize| st.items.iter().position(|i| i.line == line);
    let first = solved.iter().position(|st| at(st, p).or(at(st, q)).is_some())?;
    let last = solved.iter().rposition(|st| at(st, p).or(at(st, q)).is_some())?;
    let removals_in = |st: &Solved| -> Vec<usize> {
        st.items
            .iter()
            .filter(|i| !i.set && !i.reset)
            .map(|i| i.line)
            .collect()
    };
    if first == last {
        let st = &solved[first];
        let found = st.found.as_ref()?;
        let (ip, iq) = (at(st, p)?, at(st, q)?);
        let removals = if found.orders_cut_short {
            removals_in(st)
        } else {
            let mut between = BTreeSet::new();
            for order in &found.orders {
                let pos = |i: usize| order.iter().position(|&x| usize::from(x) == i);
                let next = pos(ip)?.min(pos(iq)?) + 1;
                between.insert(st.items[usize::from(*order.get(next)?)].line);
            }
            between.into_iter().collect()
        };
        return Some(Between {
            removals,
            first: None,
        });
    }
    let mut removals = Vec::new();
    for st in &solved[first..=last] {
        st.found.as_ref()?;
        removals.extend(removals_in(st));
    }
    Some(Between {
        removals,
        first: Some(p.min(q)),
    })
}

/// What [`removals_between`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Between {
    /// The lines of the removals that can have come between the two SETs.
    pub removals: Vec<usize>,
    /// The line of the SET the node surely applied first, where the replies tell (the two
    /// are in different stretches); `None` when either can have come first.
    pub first: Option<usize>,
}

/// One stretch of the key's lines, and what its orders show (`None`: none found).
struct Solved {
    items: Vec<Item>,
    found: Option<Found>,
}

/// The stretches of `key`'s lines on `node` around lines `from..=to`, each solved from
/// the states the stretches before it can have left the key in.
fn solve(view: &RunView, node: usize, key: &str, from: usize, to: usize) -> Vec<Solved> {
    if key.starts_with("r_") {
        // A readers' set holds many entries at once: its adds and removals need not alternate.
        return Vec::new();
    }
    let start = from.saturating_sub(LOOKBACK_LINES).max(1);
    let end = to.saturating_add(LOOKAHEAD_LINES);
    let items = items(view, node, key, start, end);
    let unknown = || BTreeSet::from([State::Absent, State::Held(None)]);
    let mut states = if start == 1 {
        BTreeSet::from([State::Absent])
    } else {
        unknown()
    };
    let mut out = Vec::new();
    for stretch in stretches(&items) {
        match stretch {
            Stretch::Reset => {
                // A promotion: nothing is known across it.
                states = unknown();
                out.push(Solved {
                    items: Vec::new(),
                    found: None,
                });
            }
            Stretch::Items(s) => {
                let found = orders(s, &states);
                states = found.as_ref().map_or_else(unknown, |f| f.ends.clone());
                out.push(Solved {
                    items: s.to_vec(),
                    found,
                });
            }
        }
    }
    out
}

/// One line about the key, as the order sees it.
#[derive(Clone, Debug)]
struct Item {
    line: usize,
    /// A set (the key was absent before it) or a removal (present before it).
    set: bool,
    token: Option<Token>,
    /// A delete whose line names no token.
    blind: bool,
    /// The node applied it after this line (1-based; 0: no bound).
    after: usize,
    /// A failover's promotion: what was on the node before tells nothing after it.
    reset: bool,
}

/// A key that was on the node: its token, and the line of the SET that put it there.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Removed {
    pub token: Token,
    pub set_line: usize,
}

/// Whether the key is there, and whose it is (`None`: not known).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum State {
    Absent,
    Held(Option<Removed>),
}

fn items(view: &RunView, node: usize, key: &str, start: usize, end: usize) -> Vec<Item> {
    let mut out: Vec<Item> = Vec::new();
    let mut last_invoke: BTreeMap<usize, usize> = BTreeMap::new();
    let mut last_on_node: BTreeMap<usize, usize> = BTreeMap::new();
    // The last line about the key that the node gave itself.
    let mut last_from_node: Option<usize> = None;
    let mut line = start;
    view.history.walk_from(start - 1, |e| {
        if line > end {
            return false;
        }
        match e {
            Event::Invoke(op) => {
                last_invoke.insert(op.client, line);
            }
            Event::Node(n) if n.node == node => {
                if n.key == key {
                    let set = match n.action {
                        NodeAction::Set => Some(true),
                        a if a.removes() => Some(false),
                        _ => None,
                    };
                    let reset = n.action == NodeAction::Promoted;
                    if set.is_some() || reset {
                        let after = match n.client {
                            Some(c) => last_invoke
                                .get(&c)
                                .copied()
                                .max(last_on_node.get(&c).copied())
                                .unwrap_or(start - 1),
                            // A node's own line comes after its own lines before it, and
                            // after the set of the key it names.
                            None => out
                                .iter()
                                .rfind(|i| i.set && i.token.is_some() && i.token == n.token)
                                .map(|i| i.line)
                                .max(last_from_node)
                                .unwrap_or(start - 1),
                        };
                        if n.client.is_none() {
                            last_from_node = Some(line);
                        }
                        out.push(Item {
                            line,
                            set: set.unwrap_or(false),
                            token: n.token.clone(),
                            blind: n.action == NodeAction::Deleted && n.token.is_none(),
                            after,
                            reset,
                        });
                    }
                }
                if let Some(c) = n.client {
                    last_on_node.insert(c, line);
                }
            }
            _ => {}
        }
        line += 1;
        true
    });
    out
}

enum Stretch<'a> {
    Items(&'a [Item]),
    Reset,
}

/// Cuts the lines into stretches that the node applied one after the other: every
/// line of a stretch was recorded before any command of the next one was sent.
fn stretches(items: &[Item]) -> Vec<Stretch<'_>> {
    let mut out = Vec::new();
    // The least `after` from each position on.
    let mut least = vec![usize::MAX; items.len() + 1];
    for i in (0..items.len()).rev() {
        least[i] = least[i + 1].min(items[i].after);
    }
    let mut begin = 0;
    for k in 1..=items.len() {
        let cut = k == items.len() || items[k - 1].line <= least[k] || items[k].reset || items[k - 1].reset;
        if cut {
            let s = &items[begin..k];
            if s.len() == 1 && s[0].reset {
                out.push(Stretch::Reset);
            } else {
                out.push(Stretch::Items(s));
            }
            begin = k;
        }
    }
    out
}

/// What the orders of one stretch show.
struct Found {
    /// Per blind delete (by index in the stretch): the keys it removed across the orders.
    removed: BTreeMap<usize, BTreeSet<Option<Removed>>>,
    /// The key's state after the stretch, across the orders.
    ends: BTreeSet<State>,
    /// The orders themselves (indices into the stretch), up to [`MAX_ORDERS`] of them.
    orders: Vec<Vec<u8>>,
    /// There were more orders than `orders` keeps.
    orders_cut_short: bool,
}

/// Every order of `s` the rules allow, from each of `starts`; `None` when there is none
/// or the stretch is too long to try.
fn orders(s: &[Item], starts: &BTreeSet<State>) -> Option<Found> {
    if s.len() > MAX_STRETCH {
        return None;
    }
    // before[j]: the lines of the stretch that must come before line j.
    let before: Vec<u32> = (0..s.len())
        .map(|j| {
            (0..s.len())
                .filter(|&i| i != j && s[i].line <= s[j].after)
                .fold(0u32, |m, i| m | (1 << i))
        })
        .collect();
    let mut search = Search {
        s,
        before,
        removed: vec![None; s.len()],
        path: Vec::with_capacity(s.len()),
        found: Found {
            removed: BTreeMap::new(),
            ends: BTreeSet::new(),
            orders: Vec::new(),
            orders_cut_short: false,
        },
        steps: 0,
    };
    for start in starts {
        if !search.go(0, start.clone()) {
            return None;
        }
    }
    if search.found.ends.is_empty() {
        return None;
    }
    Some(search.found)
}

struct Search<'a> {
    s: &'a [Item],
    before: Vec<u32>,
    /// What each removal took in the order being built.
    removed: Vec<Option<Option<Removed>>>,
    /// The order being built.
    path: Vec<u8>,
    found: Found,
    steps: usize,
}

impl Search<'_> {
    /// Extends the order with `placed` lines placed and the key in `state`; false when
    /// the step budget ran out.
    fn go(&mut self, placed: u32, state: State) -> bool {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return false;
        }
        let all = (1u32 << self.s.len()) - 1;
        if placed == all {
            for (i, item) in self.s.iter().enumerate() {
                if item.blind {
                    let took = self.removed[i].clone().flatten();
                    self.found.removed.entry(i).or_default().insert(took);
                }
            }
            self.found.ends.insert(state);
            if self.found.orders.len() < MAX_ORDERS {
                self.found.orders.push(self.path.clone());
            } else {
                self.found.orders_cut_short = true;
            }
            return true;
        }
        for j in 0..self.s.len() {
            if placed & (1 << j) != 0 || self.before[j] & !placed != 0 {
                continue;
            }
            let item = &self.s[j];
            let next = match (&state, item.set) {
                (State::Absent, true) => State::Held(item.token.clone().map(|token| Removed {
                    token,
                    set_line: item.line,
                })),
                (State::Held(held), false) => {
                    if let (Some(h), Some(t)) = (held, &item.token) {
                        if &h.token != t {
                            continue;
                        }
                    }
                    self.removed[j] = Some(held.clone());
                    State::Absent
                }
                _ => continue,
            };
            self.path.push(j as u8);
            let finished = self.go(placed | (1 << j), next);
            self.path.pop();
            if !finished {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Mode;
    use crate::history::{NodeEvent, Op, OpKind};

    fn invoke(t_us: u64, client: usize) -> Event {
        Event::Invoke(Op::new(t_us, client, OpKind::Acquire, "L0", Mode::Exclusive))
    }

    fn node(t_us: u64, client: usize, action: NodeAction, token: Option<&str>) -> Event {
        Event::Node(NodeEvent {
            t_us,
            node: 0,
            lock: "L0".into(),
            key: "L0".into(),
            action,
            client: Some(client),
            token: token.map(Token::new),
            ttl_ms: None,
            checked: (action == NodeAction::Deleted).then_some(token.is_some()),
            expired_at_us: None,
            expire_at_node_us: None,
            lag_us: None,
            member: None,
        })
    }

    /// Each attributed delete's line, with the token it removed and that key's SET line.
    fn attribute(history: &[Event]) -> BTreeMap<usize, (String, usize)> {
        // Only the lines are read: the findings of an empty history will do.
        let findings = crate::checker::check(&[]).unwrap();
        let view = RunView::new(history, &findings);
        removed_by_blind_deletes(&view, 0, "L0", 1, history.len())
            .into_iter()
            .map(|(line, r)| (line, (r.token.to_string(), r.set_line)))
            .collect()
    }

    /// Client 1's DEL was answered after client 0's SET, yet the key was absent for
    /// client 0's SET and present for the DEL only if the DEL came after it.
    #[test]
    fn a_delete_recorded_before_the_set_it_followed_took_that_sets_key() {
        use NodeAction::*;
        let history = vec![
            invoke(1, 0),                // 1: client 0 asks
            invoke(2, 1),                // 2: client 1 releases (a blind DEL)
            node(3, 1, Deleted, None),   // 3: the DEL's reply
            node(4, 0, Set, Some("aa")), // 4: client 0's SET's reply
            invoke(5, 2),                // 5: client 2 asks
            node(6, 2, Set, Some("bb")), // 6: its SET found the key absent
        ];
        assert_eq!(attribute(&history), BTreeMap::from([(3, ("aa".to_string(), 4))]));
    }

    #[test]
    fn a_delete_that_either_of_two_keys_may_have_met_is_left_unattributed() {
        use NodeAction::*;
        // Clients 0 and 2 both set the key while client 1's DEL was in flight; either
        // order (0, DEL, 2) or (2, DEL, 0) fits the lines.
        let history = vec![
            invoke(1, 0),
            invoke(2, 1),
            invoke(3, 2),
            node(4, 0, Set, Some("aa")),
            node(5, 1, Deleted, None),
            node(6, 2, Set, Some("bb")),
        ];
        assert_eq!(attribute(&history), BTreeMap::new());
    }

    #[test]
    fn a_delete_sent_after_a_set_was_answered_took_that_key() {
        use NodeAction::*;
        let history = vec![
            invoke(1, 0),
            node(2, 0, Set, Some("aa")),
            invoke(3, 1),
            node(4, 1, Deleted, None),
        ];
        assert_eq!(attribute(&history), BTreeMap::from([(4, ("aa".to_string(), 2))]));
    }

    /// Lines 36-50 of seed 1 of the committed real release-del run, renumbered: client
    /// 1's SET may have come before or after client 2's, so the DEL on line 8 took
    /// either key; but in both orders it is the DEL between the two SETs.
    #[test]
    fn a_delete_between_two_unordered_sets_is_named_though_its_key_is_not() {
        use NodeAction::*;
        let history = vec![
            invoke(1, 3),
            node(2, 3, Set, Some("33")),
            invoke(3, 1),
            invoke(4, 0),
            node(5, 0, Deleted, None),
            invoke(6, 2),
            node(7, 2, Set, Some("22")),
            node(8, 0, Deleted, None),
            node(9, 1, Set, Some("11")),
            node(10, 0, Deleted, None),
        ];
        assert_eq!(attribute(&history), BTreeMap::from([(5, ("33".to_string(), 2))]));
        let findings = crate::checker::check(&[]).unwrap();
        let view = RunView::new(&history, &findings);
        let between = |p, q| removals_between(&view, 0, "L0", p, q).unwrap();
        for (p, q) in [(7, 9), (9, 7)] {
            assert_eq!(
                between(p, q),
                Between {
                    removals: vec![8],
                    first: None
                }
            );
        }
        // Client 3's SET and client 2's are known to be in that order (a stretch apart).
        assert_eq!(between(2, 7).first, Some(2));
    }

    #[test]
    fn lines_that_fit_no_order_attribute_nothing() {
        use NodeAction::*;
        // The blind DEL, sent and answered while client 0's key was there, must have
        // removed it; then client 0's own checked DEL cannot have found it.
        let history = vec![
            invoke(1, 0),
            node(2, 0, Set, Some("aa")),
            invoke(3, 1),
            invoke(4, 0),
            node(5, 1, Deleted, None),
            node(6, 0, Deleted, Some("aa")),
        ];
        assert_eq!(attribute(&history), BTreeMap::new());
    }
}
