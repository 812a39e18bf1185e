//! Named anomalies: what kind of failure each finding is, as Elle names its anomalies,
//! with the history lines that prove it.
//!
//! A violation is two holds of one lock at once; the later holder got the lock on the
//! nodes the two quorums share because the earlier holder's key was gone there. The
//! nodes' own lines (`node` events, [`crate::history::NodeEvent`]) say how it went:
//! lost when the node crashed, not yet replicated when the master failed over,
//! deleted by a release that does not compare the token, or expired. An expiry is
//! then told apart by the faults linked to the finding ([`super::causes`]): a node
//! clock that jumped or ran fast, the holder's clock that ran slow, a pause of the
//! holder, or none of these (the validity was miscomputed: the client trusted more
//! time than its keys had). A history without node events (an old one, another
//! client's, or a real run whose nodes showed nothing of the cause) is named from the
//! faults alone, and says so.
//!
//! A stale write is named by what the resource could not tell: without fencing
//! tokens, any late write gets in (unfenced stale write); with them, one whose token
//! did not grow.
//!
//! [`Named::cause`] is the sentence the story puts where it would otherwise hedge
//! ("it had expired, been lost, or been deleted ..."): it names the cause and cites
//! its lines. [`Anomaly::name`] gives the one-line name for banners and indexes.

use super::view::{acquire_lines, began, Began, FaultWindow, RunView};
use super::words::{list, plural, secs, span};
use crate::checker::{Hold, HoldEnd, ResourceViolation, Violation};
use crate::fault::{Fault, PausePoint};
use crate::history::{Deploy, Event, LockName, NodeAction, NodeEvent, Token};
use serde::Serialize;
use std::collections::BTreeMap;

/// The kinds of finding lockstorm names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Anomaly {
    /// A node crashed and came back without the holder's key (no or too little persistence).
    KeyLostOnRestart,
    /// A master failed over to a replica that had not yet received the holder's key.
    KeyLostOnFailover,
    /// Two masters of one Redis Sentinel deployment at once: the sentinels had moved the
    /// master away from a node that, not yet demoted, still accepted a holder's SET.
    SplitBrain,
    /// A node's clock jumped or ran fast: the holder's key expired there before the
    /// holder's validity ran out.
    EarlyExpiryByNodeClock,
    /// The holder's clock ran slow: it trusted its validity past its keys' expiry.
    HolderClockSlow,
    /// The holder was paused while it acquired and trusted a validity that had
    /// passed meanwhile.
    HolderPausedPastValidity,
    /// Another client's release deleted the holder's key without comparing the token.
    ReleaseWithoutTokenCheck,
    /// A release compared the token, but the token was not the hold's own (a token
    /// shared across holds).
    TokenReused,
    /// An extension counted on keys of another client (it did not compare the token).
    ExtensionWithoutTokenCheck,
    /// A writer's script dropped a reader's entry, judged by the writer's clock.
    ReaderDroppedByWriterClock,
    /// The keys expired on their own before the validity the client computed ran out:
    /// the validity was miscomputed (no elapsed-time check, no drift allowance).
    ValidityMiscomputed,
    /// The two quorums shared no node: a quorum smaller than a majority.
    MinorityQuorum,
    /// A late write reached a resource that has no fencing tokens.
    UnfencedStaleWrite,
    /// A late write got past the fencing tokens: they did not grow.
    StaleFenceAccepted,
    /// None of the above could be shown from the history.
    Unnamed,
}

impl Anomaly {
    /// The one-line name: "key lost on restart".
    pub fn name(self) -> &'static str {
        match self {
            Anomaly::KeyLostOnRestart => "key lost on restart",
            Anomaly::KeyLostOnFailover => "key lost on failover",
            Anomaly::SplitBrain => "split brain",
            Anomaly::EarlyExpiryByNodeClock => "early expiry by a node clock",
            Anomaly::HolderClockSlow => "holder's clock slow",
            Anomaly::HolderPausedPastValidity => "holder paused past validity",
            Anomaly::ReleaseWithoutTokenCheck => "release without a token check",
            Anomaly::TokenReused => "token reused across holds",
            Anomaly::ExtensionWithoutTokenCheck => "extension without a token check",
            Anomaly::ReaderDroppedByWriterClock => "reader dropped by the writer's clock",
            Anomaly::ValidityMiscomputed => "validity miscomputed",
            Anomaly::MinorityQuorum => "minority quorum",
            Anomaly::UnfencedStaleWrite => "unfenced stale write",
            Anomaly::StaleFenceAccepted => "stale fencing token accepted",
            // Said whole by [`Named::name`], which knows why no kind fits.
            Anomaly::Unnamed => "not named",
        }
    }

    /// Its id in summary.json: `key_lost_on_restart`.
    pub fn id(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()
    }
}

/// A finding's anomaly, its cause in one clause, and the lines that prove it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Named {
    pub kind: Anomaly,
    /// What happened, citing lines: "node 2 crashed at t=3.000 s (fault #1, line 40)
    /// and came back without client 0's key (line 41)".
    pub cause: String,
    /// History lines (1-based) that show it, in order.
    pub lines: Vec<usize>,
    /// Whether node events showed it (else the faults alone suggest it).
    pub from_node_events: bool,
    /// The client whose keys were gone from the shared nodes, when the node events
    /// show it: usually the earlier holder; the later one when its own keys expired
    /// before its acquisition completed.
    pub victim: Option<usize>,
}

impl Named {
    /// The anomaly's name as a reader sees it: the kind's ("key lost on restart"), or
    /// for a finding no kind fits, what the history could and could not tell (never
    /// "unnamed", which reads as a name): from the faults alone, the history does not show
    /// why the key was gone; from the node events, what the nodes did fits no named kind.
    pub fn name(&self) -> String {
        match self.kind {
            Anomaly::Unnamed if self.from_node_events => {
                "not named (what the nodes did fits no named anomaly)".into()
            }
            Anomaly::Unnamed => "not named (the history does not show why the key was gone)".into(),
            kind => kind.name().into(),
        }
    }

    /// "Anomaly: key lost on restart. Node 2 crashed ... (evidence: history lines 40,
    /// 41.)"; without the cause (`with_cause` false) where the story already tells it.
    pub fn sentence(&self, with_cause: bool) -> String {
        let lines: Vec<String> = self.lines.iter().map(usize::to_string).collect();
        // An unnamed finding's cause already says the history does not show it.
        let basis = if self.from_node_events || self.kind == Anomaly::Unnamed {
            String::new()
        } else {
            " No node event in the history shows it: this is read from the faults alone.".into()
        };
        let lines = format!(
            "evidence: history {} {}",
            plural("line", lines.len()),
            lines.join(", ")
        );
        if !with_cause {
            return format!("Anomaly: {} ({lines}).{basis}", self.name());
        }
        format!(
            "Anomaly: {}. {} ({lines}.){basis}",
            self.name(),
            capital(&self.cause),
        )
    }
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

/// A node event and its line (1-based).
#[derive(Clone, Debug)]
pub struct Seen {
    pub line: usize,
    pub event: NodeEvent,
    /// The line named no token; the order the node can have applied the commands in
    /// shows whose key it removed ([`super::node_order`]): `event.token` says it, and
    /// this is the line of the SET that put that key there.
    pub removed_set_line: Option<usize>,
}

/// The node events about `lock` on `nodes` from line `from` (1-based) to line `to`.
pub fn node_events(view: &RunView, lock: &str, nodes: &[usize], from: usize, to: usize) -> Vec<Seen> {
    let mut out = Vec::new();
    let mut line = from.max(1);
    view.history.walk_from(line - 1, |e| {
        if line > to {
            return false;
        }
        if let Event::Node(n) = e {
            if n.lock == lock && nodes.contains(&n.node) {
                out.push(Seen {
                    line,
                    event: n.clone(),
                    removed_set_line: None,
                });
            }
        }
        line += 1;
        true
    });
    out
}

/// Gives each blind delete among `seen` (a `deleted` line without a token: a real
/// node's reply to a plain DEL) the token of the key it removed, where the node's order
/// shows it ([`super::node_order`]).
fn attribute_blind_deletes(view: &RunView, seen: &mut [Seen]) {
    let blind = |s: &Seen| s.event.action == NodeAction::Deleted && s.event.token.is_none();
    let (Some(from), Some(to)) = (
        seen.iter().filter(|s| blind(s)).map(|s| s.line).min(),
        seen.iter().filter(|s| blind(s)).map(|s| s.line).max(),
    ) else {
        return;
    };
    let keys: std::collections::BTreeSet<(usize, LockName)> = seen
        .iter()
        .filter(|s| blind(s))
        .map(|s| (s.event.node, s.event.key.clone()))
        .collect();
    for (node, key) in keys {
        let removed = super::node_order::removed_by_blind_deletes(view, node, &key, from, to);
        for s in seen.iter_mut() {
            if s.event.node == node && s.event.key == key && blind(s) {
                if let Some(r) = removed.get(&s.line) {
                    s.event.token = Some(r.token.clone());
                    s.removed_set_line = Some(r.set_line);
                }
            }
        }
    }
}

/// What a hold's keys hold on the nodes: the library's own value for a worker client
/// (its `ok` line's `worker_token`), else lockstorm's token.
fn key_value(view: &RunView, h: &Hold) -> Option<Token> {
    acquire_lines(view.history, h)
        .0
        .and_then(|o| o.worker_token)
        .map(Token::from)
        .or_else(|| h.token.clone())
}

/// Both holds of a violation with the nodes that granted them: a worker's, which its
/// library does not name, from the node lines ([`super::held::with_nodes`]).
pub fn violation_with_nodes_seen(view: &RunView, v: &Violation) -> Violation {
    Violation {
        first: super::held::with_nodes(view, &v.first),
        second: super::held::with_nodes(view, &v.second),
        ..v.clone()
    }
}

/// When `a`'s holder believed its validity ran out.
fn believed_until(view: &RunView, a: &Hold) -> Option<u64> {
    if a.ended_by == HoldEnd::Validity {
        return Some(a.end_us);
    }
    acquire_lines(view.history, a).0.and_then(|o| o.valid_until_us)
}

fn node_clock_fault(faults: &[&FaultWindow], node: usize) -> Option<usize> {
    faults
        .iter()
        .find(|w| match w.fault {
            Fault::ClockJump {
                node: Some(n), by_us, ..
            } => n == node && by_us > 0,
            Fault::ClockRate {
                node: Some(n), rate, ..
            } => n == node && rate > 1.0,
            _ => false,
        })
        .map(|w| w.id)
}

fn slow_clock_fault(faults: &[&FaultWindow], client: usize) -> Option<usize> {
    faults
        .iter()
        .find(|w| matches!(w.fault, Fault::ClockRate { client: Some(c), rate, .. } if c == client && rate < 1.0))
        .map(|w| w.id)
}

/// A pause of `client` that began while it was acquiring (`from_us..to_us`).
fn pause_fault(faults: &[&FaultWindow], client: usize, from_us: u64, to_us: u64) -> Option<usize> {
    faults
        .iter()
        .find(|w| match w.fault {
            Fault::Pause {
                client: Some(c),
                point,
                ..
            } => {
                c == client
                    && point != Some(PausePoint::AfterAcquire)
                    && w.start_us >= from_us
                    && w.start_us <= to_us
            }
            _ => false,
        })
        .map(|w| w.id)
}

fn fault_line(faults: &[&FaultWindow], id: usize) -> Option<usize> {
    faults.iter().find(|w| w.id == id).map(|w| w.line)
}

/// Names a violation: `a` the earlier hold, `b` the later; `faults` linked to it. A worker
/// client's holds come as [`violation_with_nodes_seen`] gives them (the story does that
/// once, for its steps and for this).
pub fn name_violation(view: &RunView, v: &Violation, faults: &[&FaultWindow]) -> Named {
    let (a, b) = (&v.first, &v.second);
    let (a_value, b_value) = (key_value(view, a), key_value(view, b));
    // The set each acquisition kept on each node: not an earlier attempt's, which was
    // undone ([`super::held`]).
    let (a_sets, b_sets) = (super::held::set_lines(view, a), super::held::set_lines(view, b));
    let shared: Vec<usize> = a.nodes.iter().copied().filter(|n| b.nodes.contains(n)).collect();
    let oks = {
        let mut l = vec![a.ok_line, b.ok_line];
        l.sort_unstable();
        l
    };
    if !a.nodes.is_empty() && !b.nodes.is_empty() && shared.is_empty() {
        // Two quorums that share no node cannot both be majorities: say which is not.
        let majority = view.nodes / 2 + 1;
        let small: Vec<String> = [a, b]
            .iter()
            .filter(|h| h.nodes.len() < majority)
            .map(|h| format!("client {}'s has {} of {}", h.client, h.nodes.len(), view.nodes))
            .collect();
        return Named {
            kind: Anomaly::MinorityQuorum,
            cause: format!(
                "client {}'s quorum ({}) and client {}'s ({}) share no node, which two majorities of {} {} always do: {}, short of the {majority} a majority needs",
                a.client,
                list(&a.nodes.to_vec()),
                b.client,
                list(&b.nodes.to_vec()),
                view.nodes,
                plural("node", view.nodes),
                small.join(" and ")
            ),
            lines: oks,
            from_node_events: true,
            victim: None,
        };
    }
    if let Some(named) = two_masters(view, (a, &a_sets), (b, &b_sets), &oks) {
        return named;
    }
    let (_, a_invoke) = acquire_lines(view.history, a);
    let (_, b_invoke) = acquire_lines(view.history, b);
    // A worker's keys may be seen after its `ok`: the window reaches their lines.
    let last_set = a_sets.values().chain(b_sets.values()).copied().max().unwrap_or(0);
    let mut seen = node_events(
        view,
        &v.lock,
        &shared,
        a_invoke.min(b_invoke),
        b.ok_line.max(a.ok_line).max(last_set),
    );
    attribute_blind_deletes(view, &mut seen);
    if began(view, b) == Began::ExtendedLate {
        let ext: Vec<&Seen> = seen
            .iter()
            .filter(|s| {
                s.event.action == NodeAction::Extended
                    && s.event.client == Some(b.client)
                    && s.event.checked == Some(false)
            })
            .collect();
        let mut lines = oks.clone();
        lines.extend(ext.iter().map(|s| s.line));
        lines.sort_unstable();
        return Named {
            kind: Anomaly::ExtensionWithoutTokenCheck,
            cause: format!(
                "client {}'s extension moved the expiry of whatever key was on {} {} (a PEXPIRE that does not compare the token){}",
                b.client,
                plural("node", shared.len()),
                list(&shared),
                if ext.is_empty() {
                    String::new()
                } else {
                    format!(", client {}'s among them", a.client)
                }
            ),
            lines,
            from_node_events: !ext.is_empty(),
            victim: None,
        };
    }
    // Whose key was gone: the earlier holder's, taken off the shared nodes before the
    // later one set its own; or else the later holder's own, which expired there before
    // its acquisition even completed (it set its keys first, its replies came late).
    // Only a removal of the key the acquisition kept: after its set on that node (a
    // blind delete whose key the node's order shows, whatever its line's place).
    let removed = |value: &Option<Token>, sets: &BTreeMap<usize, usize>| -> Vec<&Seen> {
        seen.iter()
            .filter(|s| value.is_some() && s.event.token == *value)
            .filter(|s| s.event.action.removes())
            .filter(|s| {
                sets.get(&s.event.node)
                    .is_none_or(|&set| match s.removed_set_line {
                        Some(took) => took == set,
                        None => s.line > set,
                    })
            })
            .collect()
    };
    let (victim, other, other_value, other_sets, gone) = match removed(&a_value, &a_sets) {
        gone if !gone.is_empty() => (a, b, &b_value, &b_sets, gone),
        _ => {
            let own: Vec<&Seen> = removed(&b_value, &b_sets)
                .into_iter()
                .filter(|s| s.line < b.ok_line)
                .collect();
            (b, a, &a_value, &a_sets, own)
        }
    };
    if gone.is_empty() {
        if let Some(named) = deleted_between(
            view,
            (a, &a_value, &a_sets),
            (b, &b_value, &b_sets),
            &shared,
            &seen,
            &oks,
        ) {
            return named;
        }
        let mut named = from_faults(view, a, b, &shared, faults);
        named.lines.extend(oks);
        named.lines.sort_unstable();
        named.lines.dedup();
        named.from_node_events = false;
        return named;
    }
    // The other holder's own keys on the shared nodes: when it took them (the sets its
    // acquisition kept, not an undone attempt's).
    let took: Vec<&Seen> = seen
        .iter()
        // A worker client's set line names no client: its value tells whose it is.
        .filter(|s| s.event.action == NodeAction::Set && s.event.client.is_none_or(|c| c == other.client))
        .filter(|s| s.event.token == *other_value)
        .filter(|s| match other_sets.get(&s.event.node) {
            Some(&set) => s.line == set,
            None => s.line <= other.ok_line,
        })
        .collect();
    let (_, victim_invoke) = acquire_lines(view.history, victim);
    let first = gone[0];
    let kind = match first.event.action {
        NodeAction::Lost => Anomaly::KeyLostOnRestart,
        NodeAction::Unreplicated => Anomaly::KeyLostOnFailover,
        NodeAction::Deleted if first.event.checked == Some(false) => Anomaly::ReleaseWithoutTokenCheck,
        NodeAction::Deleted => Anomaly::TokenReused,
        _ if first.event.key.starts_with("r_") => Anomaly::ReaderDroppedByWriterClock,
        _ => {
            let until = believed_until(view, victim);
            let early = |s: &&Seen| {
                let at = s.event.expired_at_us.unwrap_or(s.event.t_us);
                until.is_none_or(|u| at < u)
            };
            let asked = view
                .history
                .get(victim_invoke.wrapping_sub(1))
                .map_or(victim.start_us, |e| e.t_us());
            if gone
                .iter()
                .any(|s| node_clock_fault(faults, s.event.node).is_some())
            {
                Anomaly::EarlyExpiryByNodeClock
            } else if !super::held::expires(view, victim) {
                // Held until released: no validity to trust past, or to miscompute.
                Anomaly::Unnamed
            } else if slow_clock_fault(faults, victim.client).is_some() {
                Anomaly::HolderClockSlow
            } else if pause_fault(faults, victim.client, asked, victim.start_us).is_some() {
                Anomaly::HolderPausedPastValidity
            } else if gone.iter().any(early) {
                Anomaly::ValidityMiscomputed
            } else {
                Anomaly::Unnamed
            }
        }
    };
    let mut lines: Vec<usize> = oks;
    lines.extend(gone.iter().map(|s| s.line));
    lines.extend(took.iter().map(|s| s.line));
    let cause = cause(view, kind, victim, other, &gone, &took, faults, &mut lines);
    lines.sort_unstable();
    lines.dedup();
    Named {
        kind,
        cause,
        lines,
        from_node_events: true,
        victim: Some(victim.client),
    }
}

/// A violation on a Redis Sentinel deployment whose two holds' SETs went to two
/// different masters (the `member` of their `set` lines): a split brain when one of them
/// went to a node after the sentinels had switched the master away from it and before
/// they demoted it (`+convert-to-slave`); else the later SET went to the promoted
/// replica, whose SET NX succeeding shows it lacked the earlier key: a key lost on
/// failover. Each cites the set lines and the switch.
fn two_masters(
    view: &RunView,
    (a, a_sets): (&Hold, &BTreeMap<usize, usize>),
    (b, b_sets): (&Hold, &BTreeMap<usize, usize>),
    oks: &[usize],
) -> Option<Named> {
    let member = |line: usize| match view.history.get(line.checked_sub(1)?) {
        Some(Event::Node(n)) => n.member.clone(),
        _ => None,
    };
    let (&node, &a_line) = a_sets.iter().next()?;
    let &b_line = b_sets.get(&node)?;
    let (a_member, b_member) = (member(a_line)?, member(b_line)?);
    if a_member == b_member {
        return None;
    }
    // The sentinels' switches and demotions up to the later SET.
    let sentinel: Vec<(usize, crate::history::SentinelLine)> = view
        .history
        .range(0, a_line.max(b_line))
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            Event::Sentinel(s) if switched(s) || demoted(s) || s.event == PROMOTING => {
                Some((i + 1, s.clone()))
            }
            _ => None,
        })
        .collect();
    // The first switch away from `m` before `line`, if `m` was not demoted in between.
    let moved_away = |m: &str, line: usize| -> Option<(usize, String)> {
        let (switch, to) = sentinel
            .iter()
            .find(|(l, s)| *l < line && switched(s) && s.from.as_deref() == Some(m))
            .map(|(l, s)| (*l, s.instance.clone()))?;
        let was_demoted = sentinel
            .iter()
            .any(|(l, s)| *l > switch && *l < line && demoted(s) && s.instance == m);
        (!was_demoted).then_some((switch, to))
    };
    let holds = [(a, a_line, &a_member), (b, b_line, &b_member)];
    let mut extra_lines = Vec::new();
    let stale = holds
        .iter()
        .enumerate()
        .find_map(|(i, &(_, line, m))| Some((i, moved_away(m, line)?)));
    let (kind, cause, victim, switch) = if let Some((i, (switch, to))) = stale {
        let ((h, line, m), (other, other_line, other_member)) = (holds[i], holds[1 - i]);
        let moved = match view.deployment {
            Some(Deploy::Cluster) => format!("the other masters had voted {to} in for {m}'s slots"),
            _ => format!("the sentinels had moved the master from {m} to {to}"),
        };
        let mut cause = format!(
            "{moved} (line {switch}), yet {m}, not demoted, still accepted client {}'s SET (line {line}), while client {}'s went to {other_member} (line {other_line}): two masters at once",
            h.client, other.client
        );
        if let Some((clause, cited)) = mitigations_in_force(view, node, line, m) {
            cause.push_str(&format!("; {clause}"));
            extra_lines.extend(cited);
        }
        (Anomaly::SplitBrain, cause, None, switch)
    } else {
        let ((first, first_line, first_member), (later, later_line, later_member)) = match a_line < b_line {
            true => (holds[0], holds[1]),
            false => (holds[1], holds[0]),
        };
        // The switch away from the first master; else the leader's promotion of the
        // later one, after which the leader already names it to a client that asks
        // (before the sentinels' +switch-master).
        let between = |l: usize| l > first_line && l < later_line;
        let (switch, moved) = sentinel
            .iter()
            .find_map(|(l, s)| {
                (between(*l) && switched(s) && s.from.as_deref() == Some(first_member.as_str())).then(|| {
                    let moved = match view.deployment {
                        Some(Deploy::Cluster) => format!("the other masters then voted {later_member} in"),
                        _ => format!("the sentinels then moved the master to {later_member}"),
                    };
                    (*l, format!("{moved} (line {l})"))
                })
            })
            .or_else(|| {
                sentinel.iter().find_map(|(l, s)| {
                    (between(*l) && s.event == PROMOTING && s.instance == *later_member).then(|| {
                        (
                            *l,
                            format!(
                                "{}, leading the failover, then promoted {later_member} (line {l})",
                                s.sentinel
                            ),
                        )
                    })
                })
            })
            .or_else(|| {
                // A cluster node says its own promotion only when lockstorm next asks it
                // (every 100 ms), so its line can come after a SET it already took: the
                // later master's +promoted away from the first, within the second after.
                let later_t = view.history.get(later_line - 1)?.t_us();
                let to = view.history.len().min(later_line + 10_000);
                view.history
                    .range(later_line, to)
                    .iter()
                    .enumerate()
                    .take_while(|(_, e)| e.t_us() <= later_t + 1_000_000)
                    .find_map(|(i, e)| match e {
                        Event::Sentinel(s)
                            if s.event == "+promoted"
                                && s.instance == *later_member
                                && s.from.as_deref() == Some(first_member.as_str()) =>
                        {
                            let l = later_line + i + 1;
                            Some((
                                l,
                                format!(
                                    "the other masters had voted {later_member} in (its own +promoted line {l}, read at lockstorm's next poll of it)"
                                ),
                            ))
                        }
                        _ => None,
                    })
            })?;
        let cut = replication_cut_at(view, node, first_line, first_member);
        let while_cut = cut.map_or(String::new(), |w| {
            format!(
                " while its replicas were cut off from it (since t={}, fault #{}, line {})",
                secs(w.start_us),
                w.id,
                w.line
            )
        });
        let mut cause = format!(
            "client {}'s SET went to {first_member} (line {first_line}){while_cut}; {moved}, where client {}'s SET NX succeeded (line {later_line}), so it did not have the first key",
            first.client, later.client
        );
        if let Some(w) = cut {
            extra_lines.push(w.line);
        }
        if let Some((clause, cited)) = mitigations_in_force(view, node, first_line, first_member) {
            cause.push_str(&format!("; {clause}"));
            extra_lines.extend(cited);
        }
        (Anomaly::KeyLostOnFailover, cause, Some(first.client), switch)
    };
    let mut lines: Vec<usize> = oks.to_vec();
    lines.extend([a_line, b_line, switch]);
    lines.extend(extra_lines);
    lines.sort_unstable();
    lines.dedup();
    let named = Named {
        kind,
        cause,
        lines,
        from_node_events: true,
        victim,
    };
    Some(named)
}

/// A line that says the master moved: a sentinel's `+switch-master`, or a cluster node's
/// own `+promoted` (the other masters voted it in for its master's slots).
fn switched(s: &crate::history::SentinelLine) -> bool {
    s.event == "+switch-master" || s.event == "+promoted"
}

/// A line that says an old master now replicates: a sentinel's `+convert-to-slave`, or a
/// cluster node's own `+demoted`.
fn demoted(s: &crate::history::SentinelLine) -> bool {
    s.event == "+convert-to-slave" || s.event == "+demoted"
}

/// The sentinel event of the failover leader's promotion of a replica (`SLAVEOF NO ONE`);
/// from then on the leader names that replica as the master, before `+switch-master`.
const PROMOTING: &str = "+failover-state-send-slaveof-noone";

/// The replication cut of Sentinel node `node` in force at history line `line` whose
/// master (the one the sentinels named when it began: the last `+switch-master` before
/// it, else the first master, redis0) is `member`.
fn replication_cut_at<'v>(
    view: &'v RunView,
    node: usize,
    line: usize,
    member: &str,
) -> Option<&'v FaultWindow> {
    cut_off_at(
        view,
        line,
        member,
        |f| matches!(f, Fault::ReplicationCut { node: n } if *n == node),
    )
}

/// What the mitigations in force (the meta line's: line 1) did not stop, for the SET at
/// history line `set` that master `member` of Sentinel node `node` took and then lost:
/// a clause for the story and the lines it cites, or `None` for a history whose meta
/// line does not say them. Each of its claims about the run is read off the cited
/// lines: the settings off line 1, the SET's time off its line, and the cut that kept
/// the master's replicas from it (a replication cut or a partition in force at the SET)
/// off that fault's line.
fn mitigations_in_force(
    view: &RunView,
    node: usize,
    set: usize,
    member: &str,
) -> Option<(String, Vec<usize>)> {
    let m = view.meta.as_ref()?.mitigations?;
    let t = view.history.get(set.checked_sub(1)?)?.t_us();
    let mut lines = vec![1];
    let wait = match m.wait_replicas {
        Some(0) => ", and the lock sent no WAIT after its SET".to_string(),
        Some(k) => format!(
            "; the lock's WAIT for {k} replica{} after its SET showed only that {k} had the key, not that the one to be promoted did",
            if k == 1 { "" } else { "s" }
        ),
        None => String::new(),
    };
    if m.min_replicas_to_write == 0 {
        return Some((
            format!("min-replicas-to-write was 0, Redis's default (line 1), so {member} took the SET without counting a single replica{wait}"),
            lines,
        ));
    }
    let (k, lag) = (m.min_replicas_to_write, m.min_replicas_max_lag_s);
    let cut = cut_off_at(view, set, member, |f| match f {
        Fault::ReplicationCut { node: n } => *n == node,
        Fault::Partition { nodes, .. } => nodes.contains(&node),
        _ => false,
    });
    let since = cut.map_or(String::new(), |w| {
        lines.push(w.line);
        let after = t.saturating_sub(w.start_us);
        // A replica acknowledges once a second: a master cut from it stops counting it
        // between `lag` and `lag` + 1 s after the cut.
        let open = match after <= (lag + 1) * 1_000_000 {
            true => format!(
                ", inside the window the mitigation leaves open (a cut's first {lag} to {} s)",
                lag + 1
            ),
            false => String::new(),
        };
        let what = match w.fault {
            Fault::Partition { .. } => "split",
            _ => "replication cut",
        };
        format!(
            ", {} into the {what} (fault #{}, line {}){open}",
            span(after),
            w.id,
            w.line
        )
    });
    Some((
        format!(
            "min-replicas-to-write {k} with min-replicas-max-lag {lag} s (line 1) did not refuse it: {member} still counted {k} replica{} acknowledged within {lag} s when it took the SET{since}{wait}",
            if k == 1 { "" } else { "s" }
        ),
        lines,
    ))
}

/// The fault `cuts` names in force at history line `line` on the master of the moment
/// it began (the last switch before it, else the first master, redis0), if that master
/// is `member`.
fn cut_off_at<'v>(
    view: &'v RunView,
    line: usize,
    member: &str,
    cuts: impl Fn(&Fault) -> bool,
) -> Option<&'v FaultWindow> {
    let t = view.history.get(line.checked_sub(1)?)?.t_us();
    let w = view.faults.iter().rfind(|w| {
        cuts(&w.fault) && w.line < line && w.start_us <= t && w.end_us.is_none_or(|end| end > t)
    })?;
    // The lock's master when the cut began: redis0, then each switch away from the
    // master of the moment (a cluster's other masters fail over too).
    let master = view.history.range(0, w.line).iter().fold(
        crate::real::deployment::Member::Data(0).to_string(),
        |m, e| match e {
            Event::Sentinel(s) if switched(s) && s.from.as_deref() == Some(m.as_str()) => s.instance.clone(),
            _ => m,
        },
    );
    (master == member).then_some(w)
}

/// A violation on the real backend whose key removal the replies do not pin down: the
/// shared node's lines leave open which holder's SET came first, or which plain DEL took
/// the first key, or both ([`super::node_order`]). Where every removal that can have come
/// between the two SETs is a plain DEL, the anomaly is named from them all: one of them
/// took whichever key came first, and the other holder then set its own. Each hold
/// comes with its key's value.
fn deleted_between(
    view: &RunView,
    (a, a_value, a_sets): (&Hold, &Option<Token>, &BTreeMap<usize, usize>),
    (b, b_value, b_sets): (&Hold, &Option<Token>, &BTreeMap<usize, usize>),
    shared: &[usize],
    seen: &[Seen],
    oks: &[usize],
) -> Option<Named> {
    // The set each acquisition kept on the node (its last one up to its `ok` where the
    // lines name none).
    let set_line = |value: &Option<Token>, sets: &BTreeMap<usize, usize>, node: usize, ok_line: usize| {
        seen.iter()
            .rfind(|s| {
                s.event.node == node
                    && s.event.action == NodeAction::Set
                    && value.is_some()
                    && s.event.token == *value
                    && match sets.get(&node) {
                        Some(&set) => s.line == set,
                        None => s.line <= ok_line,
                    }
            })
            .map(|s| (s.line, s.event.key.clone()))
    };
    let unchecked_del = |line: usize| match view.history.get(line - 1) {
        Some(Event::Node(e)) if e.action == NodeAction::Deleted && e.checked == Some(false) => Some(e),
        _ => None,
    };
    for &n in shared {
        let (Some((pa, key)), Some((pb, _))) = (
            set_line(a_value, a_sets, n, a.ok_line),
            set_line(b_value, b_sets, n, b.ok_line),
        ) else {
            continue;
        };
        let Some(between) = super::node_order::removals_between(view, n, &key, pa, pb) else {
            continue;
        };
        let removals = between.removals;
        let dels: Vec<NodeEvent> = removals.iter().filter_map(|&l| unchecked_del(l)).collect();
        if dels.is_empty() || dels.len() != removals.len() {
            continue;
        }
        let mut lines = oks.to_vec();
        lines.extend([pa, pb]);
        lines.extend(&removals);
        lines.sort_unstable();
        lines.dedup();
        // "client 3's" and "before its reply at t=… (line …)" of one DEL.
        let who = |e: &NodeEvent| format!("client {}'s", e.client.map_or("?".into(), |c| c.to_string()));
        let when =
            |e: &NodeEvent, line: usize| format!("before its reply at t={} (line {line})", secs(e.t_us));
        let took = match &dels[..] {
            [e] => format!(
                "{} release, a plain DEL that does not compare the token, {}",
                who(e),
                when(e, removals[0])
            ),
            _ => format!(
                "one of these, each a release, a plain DEL that does not compare the token: {}",
                dels.iter()
                    .zip(&removals)
                    .map(|(e, &l)| format!("{} {}", who(e), when(e, l)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        let (cause, victim) = match between.first {
            Some(first) => {
                let (v, o, q) = if first == pa { (a, b, pb) } else { (b, a, pa) };
                (
                    format!(
                        "client {}'s key {key} on node {n} (set at line {first}) was deleted by {took}; client {}'s \
                         SET (line {q}) came after, as the replies show{}",
                        v.client,
                        o.client,
                        if dels.len() > 1 {
                            ", while they leave open which of these DELs came between"
                        } else {
                            ""
                        }
                    ),
                    // The later holder's own key taken first is a case the story tells
                    // as its own (`why.rs`) only when it was gone before its reply came.
                    (v.client == a.client).then_some(a.client),
                )
            }
            None => (
                format!(
                    "client {}'s or client {}'s key {key} on node {n} was deleted by {took}: the replies leave open \
                     which of their SETs (lines {pa} and {pb}) the node applied first, but in every order in which \
                     the node can have applied the key's SETs and DELs, {} came between the two",
                    a.client,
                    b.client,
                    if dels.len() > 1 { "one of these DELs" } else { "this DEL" }
                ),
                None,
            ),
        };
        return Some(Named {
            kind: Anomaly::ReleaseWithoutTokenCheck,
            cause,
            lines,
            from_node_events: true,
            victim,
        });
    }
    None
}

/// The cause clause from the node events: what took client `a`'s key off each shared
/// node, and when `b` set its own there.
#[allow(clippy::too_many_arguments)]
fn cause(
    view: &RunView,
    kind: Anomaly,
    a: &Hold,
    b: &Hold,
    gone: &[&Seen],
    took: &[&Seen],
    faults: &[&FaultWindow],
    lines: &mut Vec<usize>,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut expiries: Vec<String> = Vec::new();
    for s in gone {
        let e = &s.event;
        let n = e.node;
        let what = match e.action {
            NodeAction::Lost => {
                let crash = faults
                    .iter()
                    .rfind(|w| matches!(w.fault, Fault::Crash { node, .. } if node == n) && w.start_us <= e.t_us);
                if let Some(w) = crash {
                    lines.push(w.line);
                }
                // The crash's own time: a real node's line comes when it is back, and
                // says so at its own time.
                let crashed_us = crash.map_or(e.t_us, |w| w.start_us);
                format!(
                    "node {n} crashed at t={}{} and its persistence had not kept client {}'s key {}{} (line {})",
                    secs(crashed_us),
                    crash.map_or(String::new(), |w| format!(" (fault #{})", w.id)),
                    a.client,
                    e.key,
                    if crashed_us == e.t_us {
                        String::new()
                    } else {
                        format!(", as the node showed when it was back at t={}", secs(e.t_us))
                    },
                    s.line
                )
            }
            NodeAction::Unreplicated => {
                // The master's death (on a Sentinel deployment, the crash that killed
                // it); a real node's line comes at the promotion.
                let died = faults.iter().rfind(|w| {
                    w.start_us <= e.t_us
                        && match w.fault {
                            Fault::Failover { node } => node == n,
                            Fault::Crash { node, .. } => view.deployment.is_some() && node == n,
                            _ => false,
                        }
                });
                let died_us = died.map_or(e.t_us, |w| w.start_us);
                // A replication cut in force when the master died kept the key from
                // every replica, whatever their lag.
                let cut = faults.iter().rfind(|w| {
                    matches!(w.fault, Fault::ReplicationCut { node } if node == n)
                        && w.start_us <= died_us
                        && w.end_us.is_none_or(|end| end > died_us)
                });
                let replicas = if view.deployment.is_some() { "its replicas" } else { "its replica" };
                let trailed = match cut {
                    Some(_) => replicas.to_string(),
                    None => format!("its replica, which trailed it by {}", span(e.lag_us.unwrap_or(0))),
                };
                let since = cut.map_or(String::new(), |w| {
                    lines.push(w.line);
                    format!(
                        "; {replicas} had been cut off from it since t={} (fault #{}, line {}), and received none \
                         of its writes after that",
                        secs(w.start_us),
                        w.id,
                        w.line
                    )
                });
                if let Some(w) = died {
                    lines.push(w.line);
                }
                format!(
                    "node {n}'s master died at t={} before client {}'s key {} reached {trailed}{} (line {}); the \
                     promoted replica served without it{since}",
                    secs(died_us),
                    a.client,
                    e.key,
                    if died_us == e.t_us {
                        String::new()
                    } else {
                        format!(", as the promoted replica showed at t={}", secs(e.t_us))
                    },
                    s.line
                )
            }
            NodeAction::Deleted => format!(
                "client {}'s {} deleted client {}'s key {} on node {n} {} t={} (line {}){}",
                e.client.map_or("?".into(), |c| c.to_string()),
                if e.checked == Some(false) {
                    "release, a plain DEL that does not compare the token,"
                } else {
                    "release, which compared the token (the same token as this hold's),"
                },
                a.client,
                e.key,
                if s.removed_set_line.is_some() {
                    "before its reply at"
                } else {
                    "at"
                },
                secs(e.t_us),
                s.line,
                match s.removed_set_line {
                    Some(set) => {
                        lines.push(set);
                        format!(
                            ": the reply does not say whose key went, but in every order in which the node can \
                             have applied the key's SETs and DELs, this DEL came right after client {}'s SET (line {set})",
                            a.client
                        )
                    }
                    None => String::new(),
                }
            ),
            NodeAction::Expired if e.key.starts_with("r_") => format!(
                "client {}'s writer script dropped client {}'s entry from {} on node {n} at t={}, judging its \
                 expiry by the writer's clock (line {})",
                e.client.map_or("?".into(), |c| c.to_string()),
                a.client,
                e.key,
                secs(e.t_us),
                s.line
            ),
            _ => {
                // Expiries are told together: "expired by the nodes' clocks on node 3
                // at t=... (line 78), node 4 at t=... (line 80)".
                let at = e.expired_at_us.unwrap_or(e.t_us);
                let mut w = format!("node {n} at t={} (line {})", secs(at), s.line);
                if kind == Anomaly::EarlyExpiryByNodeClock {
                    if let Some(id) = node_clock_fault(faults, n) {
                        w.push_str(&format!(", its clock moved ahead by fault #{id}"));
                        lines.extend(fault_line(faults, id));
                    }
                }
                expiries.push(w);
                continue;
            }
        };
        parts.push(what);
    }
    if let Some(first) = gone
        .iter()
        .find(|s| s.event.action == NodeAction::Expired && !s.event.key.starts_with("r_"))
    {
        parts.push(format!(
            "client {}'s key {} expired by the {} on {}",
            a.client,
            first.event.key,
            if expiries.len() == 1 {
                "node's own clock"
            } else {
                "nodes' own clocks"
            },
            expiries.join("; ")
        ));
    }
    let mut s = parts.join("; ");
    if !expiries.is_empty() && !super::held::expires(view, a) {
        s.push_str(&format!(
            ", though client {}'s library said its lock does not expire: it held it until it released it",
            a.client
        ));
    }
    if matches!(
        kind,
        Anomaly::EarlyExpiryByNodeClock
            | Anomaly::HolderClockSlow
            | Anomaly::HolderPausedPastValidity
            | Anomaly::ValidityMiscomputed
    ) {
        if let Some(u) = believed_until(view, a) {
            s.push_str(&format!(
                ", while client {} believed its validity ran until t={}",
                a.client,
                secs(u)
            ));
        }
        match kind {
            Anomaly::HolderClockSlow => {
                if let Some(id) = slow_clock_fault(faults, a.client) {
                    lines.extend(fault_line(faults, id));
                    s.push_str(&format!(" (its clock ran slow: fault #{id})"));
                }
            }
            Anomaly::HolderPausedPastValidity => {
                if let Some(id) = pause_fault(faults, a.client, 0, a.start_us) {
                    lines.extend(fault_line(faults, id));
                    s.push_str(&format!(" (it was paused while acquiring: fault #{id})"));
                }
            }
            Anomaly::ValidityMiscomputed => s.push_str(
                " (no fault moved a clock: the validity the client computed was longer than its keys lived)",
            ),
            _ => {}
        }
    }
    if !took.is_empty() {
        let at: Vec<String> = took
            .iter()
            .map(|t| {
                format!(
                    "node {} at t={} (line {})",
                    t.event.node,
                    secs(t.event.t_us),
                    t.line
                )
            })
            .collect();
        s.push_str(&format!(
            "; client {}'s request then set its own key on {}",
            b.client,
            at.join(", ")
        ));
    }
    s
}

/// A violation named from the linked faults alone (no node events about it).
fn from_faults(view: &RunView, a: &Hold, b: &Hold, shared: &[usize], faults: &[&FaultWindow]) -> Named {
    let on_shared =
        |f: &Fault, kind: fn(&Fault) -> bool| kind(f) && f.targets().0.iter().any(|n| shared.contains(n));
    let found = |kind: fn(&Fault) -> bool| faults.iter().find(|w| on_shared(&w.fault, kind));
    let line_of = |w: Option<&&FaultWindow>| w.map(|w| vec![w.line]).unwrap_or_default();
    let (_, a_invoke) = acquire_lines(view.history, a);
    let asked = view
        .history
        .get(a_invoke.wrapping_sub(1))
        .map_or(a.start_us, |e| e.t_us());
    let (kind, w) = if let Some(w) = found(|f| matches!(f, Fault::Crash { .. })) {
        (Anomaly::KeyLostOnRestart, Some(w))
    } else if let Some(w) = found(|f| matches!(f, Fault::Failover { .. })) {
        (Anomaly::KeyLostOnFailover, Some(w))
    } else if let Some(w) = shared
        .iter()
        .find_map(|&n| node_clock_fault(faults, n))
        .and_then(|id| faults.iter().find(|w| w.id == id))
    {
        (Anomaly::EarlyExpiryByNodeClock, Some(w))
    } else if !super::held::expires(view, a) {
        // Held until released: neither a slow clock nor a pause outlasts a validity.
        (Anomaly::Unnamed, None)
    } else if let Some(w) =
        slow_clock_fault(faults, a.client).and_then(|id| faults.iter().find(|w| w.id == id))
    {
        (Anomaly::HolderClockSlow, Some(w))
    } else if let Some(w) =
        pause_fault(faults, a.client, asked, a.start_us).and_then(|id| faults.iter().find(|w| w.id == id))
    {
        (Anomaly::HolderPausedPastValidity, Some(w))
    } else {
        (Anomaly::Unnamed, None)
    };
    let cause = match w {
        Some(w) => format!(
            "fault #{} acted on client {}'s hold: {}; client {} then got the lock",
            w.id,
            a.client,
            super::words::fault_sentence(&w.fault, view.clients, view.deployment),
            b.client
        ),
        None => format!(
            "the history does not show why client {}'s key was gone when client {} got the lock",
            a.client, b.client
        ),
    };
    Named {
        kind,
        cause,
        lines: line_of(w),
        from_node_events: false,
        victim: None,
    }
}

/// Names a stale write.
/// `expires`: whether the writer's hold had an expiry (a worker that said `expires:
/// false` held until it released: no validity to be paused past).
pub fn name_stale(
    rv: &ResourceViolation,
    faults: &[&FaultWindow],
    write_line: usize,
    expires: bool,
) -> Named {
    let paused: Vec<&&FaultWindow> = faults
        .iter()
        .filter(|w| matches!(w.fault, Fault::Pause { client: Some(c), .. } if c == rv.client))
        .collect();
    let mut lines: Vec<usize> = vec![rv.holder.ok_line, write_line];
    lines.extend(paused.iter().map(|w| w.line));
    let held_back = if paused.is_empty() {
        String::new()
    } else {
        let ids: Vec<String> = paused.iter().map(|w| format!("#{}", w.id)).collect();
        if expires {
            format!(" (it was paused past its validity by fault {})", ids.join(", "))
        } else {
            format!(" (it was paused by fault {})", ids.join(", "))
        }
    };
    let late = rv.hold_end_us.map_or(String::new(), |e| {
        format!(" {} after its hold ended", span(rv.write_us.saturating_sub(e)))
    });
    let (kind, why) = match (rv.fence, rv.holder.fence) {
        (None, _) => (
            Anomaly::UnfencedStaleWrite,
            "and the resource, without fencing tokens, could not tell it from a current one".to_string(),
        ),
        (Some(f), held) => (
            Anomaly::StaleFenceAccepted,
            format!(
                "and its fencing token {f} was not below client {}'s ({})",
                rv.holder.client,
                held.map_or("none".into(), |h| h.to_string())
            ),
        ),
    };
    lines.sort_unstable();
    lines.dedup();
    Named {
        kind,
        cause: format!(
            "client {}'s write to {} landed at t={}{late}{held_back}, {why}",
            rv.client,
            rv.lock,
            secs(rv.write_us)
        ),
        lines,
        from_node_events: true,
        victim: None,
    }
}
