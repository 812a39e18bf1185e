//! Why two conflicting holds overlapped, in one paragraph, in the terms of the lock
//! that was held.
//!
//! The story of a violation ([`super::narrative`]) ends with this: what the two quorums
//! shared, and what must have happened on the nodes they shared. For an exclusive lock
//! that is Redlock's key `L` (a node granted it to both, so the first holder's key was
//! gone there). For seed 000's read-write lock it is the writer key `w_{L}`, the reader
//! set `r_{L}` and the two scripts: a writer gets in beside a reader when the writer
//! script's `ZREMRANGEBYSCORE r_{L} 0 now` drops the reader's entry (scored by the
//! reader's own wall clock, judged by the writer's), and a reader or writer gets in
//! beside a writer when `w_{L}` expired, was lost or was deleted by a release that does
//! not check the token. A hold that began with an extension counted on another
//! client's key shows an extension that does not check ownership. Linked faults that
//! explain the loss are named with what they did ([`super::causes`]).

use super::anomaly::{Anomaly, Named};
use super::causes::{clock_notes, key_effect};
use super::view::{began, Began, FaultWindow, RunView};
use super::words::{list, plural};
use crate::algorithm::Mode;
use crate::checker::Hold;
use crate::fault::Fault;
use std::fmt::Write as _;

/// "node 2" or "Nodes 1,2".
fn nodes(items: &[usize], capital: bool) -> String {
    let word = plural(if capital { "Node" } else { "node" }, items.len());
    format!("{word} {}", list(items))
}

/// What the two quorums of `a` (the earlier hold) and `b` share, and what that implies.
/// `faults` are the faults linked to the violation.
pub fn why(view: &RunView, a: &Hold, b: &Hold, faults: &[&FaultWindow], named: Option<&Named>) -> String {
    if a.nodes.is_empty() || b.nodes.is_empty() {
        return format!(
            "The history does not say which nodes granted the lock; client {} acquired while client {} still believed it held it.",
            b.client, a.client
        );
    }
    let shared: Vec<usize> = a.nodes.iter().copied().filter(|n| b.nodes.contains(n)).collect();
    if shared.is_empty() {
        let mut s = format!(
            "The two quorums ({} and {}) share no node, so no node ever saw both requests",
            nodes(&a.nodes.to_vec(), false),
            nodes(&b.nodes.to_vec(), false)
        );
        if view.nodes > 0 && a.nodes.len().min(b.nodes.len()) * 2 <= view.nodes {
            let _ = write!(
                s,
                ": a quorum of {} out of {} nodes is not a majority",
                a.nodes.len().min(b.nodes.len()),
                view.nodes
            );
        }
        s.push('.');
        return s;
    }
    // Why the earlier holder's key was gone: the node events' answer where they give
    // one ([`super::anomaly`]), else the three ways it can go.
    let gone = |key: &str| match named {
        Some(n) if n.from_node_events && n.kind != Anomaly::Unnamed => n.cause.clone(),
        // A key of a hold without expiry that the nodes show expired: the cause says so.
        Some(n) if n.from_node_events && !super::held::expires(view, a) => n.cause.clone(),
        // Held until released (`expires: false`): there is no validity to trust.
        _ if !super::held::expires(view, a) => format!(
            "{key} had expired, been lost, or been deleted by a release that does not check the token, \
             while client {} still held it (its library said the lock does not expire)",
            a.client
        ),
        _ => format!(
            "{key} had expired, been lost, or been deleted by a release that does not check the token, \
             while client {} still trusted its validity",
            a.client
        ),
    };
    let mut s = match (a.mode, b.mode) {
        // The later hold began with an extension counted on nodes that held the other
        // client's key: the extension cannot have compared the token.
        _ if began(view, b) == Began::ExtendedLate => format!(
            "{} counted client {}'s extension of {} while client {} held it there, after client {}'s own \
             validity had run out: an extension that does not compare the token (a plain PEXPIRE) answers 1 \
             for whoever's key is there (seed 002 asks to extend only \"if the key exists and its value is \
             still the random value the client assigned\"",
            nodes(&shared, true),
            b.client,
            a.lock,
            a.client,
            b.client
        ),
        // The later holder's own keys were the ones gone: it set them first, and they
        // expired before its replies reached it.
        _ if named.is_some_and(|n| n.from_node_events && n.victim == Some(b.client)) => format!(
            "{} granted {} to client {} before client {} took it: client {}'s own keys were gone there before \
             its acquisition completed, yet it believed it held the lock once its replies came ({}",
            nodes(&shared, true),
            a.lock,
            b.client,
            a.client,
            b.client,
            named.map_or(String::new(), |n| n.cause.clone())
        ),
        // The replies leave open whose key a plain DEL took: whichever holder's the node
        // had first ([`super::anomaly`]'s `deleted_between`).
        _ if named.is_some_and(|n| {
            n.from_node_events && n.victim.is_none() && n.kind == Anomaly::ReleaseWithoutTokenCheck
        }) =>
        {
            format!(
                "{} granted {} to both clients: a plain DEL took the key of whichever of the two it had first, \
                 and the other then set its own ({}",
                nodes(&shared, true),
                a.lock,
                named.map_or(String::new(), |n| n.cause.clone())
            )
        }
        // A Sentinel deployment with two masters: no node lost a key; each granted it.
        _ if named.is_some_and(|n| n.kind == Anomaly::SplitBrain) => format!(
            "{} granted {} to both clients ({}",
            nodes(&shared, true),
            a.lock,
            named.map_or(String::new(), |n| n.cause.clone())
        ),
        (Mode::Exclusive, _) | (_, Mode::Exclusive) => format!(
            "{} granted {} to both clients: when client {}'s successful attempt reached {}, {} no longer had \
             client {}'s key ({}",
            nodes(&shared, true),
            a.lock,
            b.client,
            if shared.len() == 1 { "it" } else { "them" },
            if shared.len() == 1 { "it" } else { "they" },
            a.client,
            gone("it")
        ),
        (Mode::Read, _) => format!(
            "{} let client {}'s writer script take w_{{{}}} while client {} held a read lock: r_{{{}}} there no \
             longer had client {}'s entry ({}",
            nodes(&shared, true),
            b.client,
            a.lock,
            a.client,
            a.lock,
            a.client,
            match named {
                Some(n) if n.from_node_events && n.kind != Anomaly::Unnamed => n.cause.clone(),
                _ => format!(
                    "the script drops readers whose score, their expiry by the reader's own wall clock, is at \
                     or before the writer's now: ZREMRANGEBYSCORE r_{{{}}} 0 now; or the node lost it",
                    a.lock
                ),
            }
        ),
        (Mode::Write, Mode::Read) => format!(
            "{} let client {}'s reader script add it to r_{{{}}} while client {} held the write lock: \
             w_{{{}}} with client {}'s token was gone there ({}",
            nodes(&shared, true),
            b.client,
            a.lock,
            a.client,
            a.lock,
            a.client,
            gone("it")
        ),
        (Mode::Write, Mode::Write) => format!(
            "{} let client {}'s writer script set w_{{{}}} while client {} held the write lock: \
             client {}'s w_{{{}}} was gone there ({}",
            nodes(&shared, true),
            b.client,
            a.lock,
            a.client,
            a.client,
            a.lock,
            gone("it")
        ),
    };
    // What happened on the shared nodes, as far as the linked faults tell.
    let effects: Vec<String> = shared
        .iter()
        .flat_map(|&n| {
            faults.iter().filter_map(move |w| {
                key_effect(&w.fault, n, view.deployment).map(|e| format!("node {n}: {e} (fault #{})", w.id))
            })
        })
        .collect();
    if !effects.is_empty() {
        let _ = write!(s, "; {}", effects.join("; "));
    }
    // The clocks that decide: a reader's entry is judged by the writer's wall clock; a
    // holder whose clock runs slow trusts its validity past its keys.
    let mut clocks = Vec::new();
    if a.mode == Mode::Read && b.mode != Mode::Read {
        let ahead = clock_notes(faults, b.client, true, true);
        if !ahead.is_empty() {
            clocks.push(format!(
                "the writer, client {}, ran ahead ({})",
                b.client,
                ahead.join("; ")
            ));
        }
        let behind = clock_notes(faults, a.client, false, true);
        if !behind.is_empty() {
            clocks.push(format!(
                "the reader, client {}, ran behind ({})",
                a.client,
                behind.join("; ")
            ));
        }
    } else {
        let slow = clock_notes(faults, a.client, false, false);
        if !slow.is_empty() {
            clocks.push(format!(
                "client {}'s clock ran behind ({})",
                a.client,
                slow.join("; ")
            ));
        }
    }
    s.push_str(").");
    if !clocks.is_empty() {
        let _ = write!(s, " Clocks: {}.", clocks.join("; "));
    }
    if let Some(left) = partition_leaves(view, a, b, &shared, faults) {
        let _ = write!(s, " {left}");
    }
    s
}

/// Nodes client `c` could reach at `t_us`, as the partitions among `faults` leave them.
fn reachable(view: &RunView, faults: &[&FaultWindow], c: usize, t_us: u64) -> (Vec<usize>, Vec<usize>) {
    let mut cut_by = Vec::new();
    let reach = (0..view.nodes)
        .filter(|&n| {
            let cutting: Vec<usize> = faults
                .iter()
                .filter(|w| w.start_us <= t_us && w.end_us.is_none_or(|e| e > t_us))
                .filter(|w| matches!(&w.fault, Fault::Partition { nodes, clients, .. } if nodes.contains(&n) && clients.contains(&c)))
                .map(|w| w.id)
                .collect();
            cut_by.extend(cutting.iter().copied());
            cutting.is_empty()
        })
        .collect();
    (reach, cut_by)
}

/// "Partitions #1 and #2 leave node 2 as the only node both clients reach.", when the
/// partitions in force as each acquired left exactly the shared nodes to both.
fn partition_leaves(
    view: &RunView,
    a: &Hold,
    b: &Hold,
    shared: &[usize],
    faults: &[&FaultWindow],
) -> Option<String> {
    let (ra, mut ca) = reachable(view, faults, a.client, a.start_us);
    let (rb, cb) = reachable(view, faults, b.client, b.start_us);
    ca.extend(cb);
    ca.sort_unstable();
    ca.dedup();
    if ca.is_empty() {
        return None;
    }
    let both: Vec<usize> = ra.iter().copied().filter(|n| rb.contains(n)).collect();
    if both.is_empty() || both.len() == view.nodes || both != shared {
        return None;
    }
    let ids: Vec<String> = ca.iter().map(|id| format!("#{id}")).collect();
    Some(format!(
        "The {} {} left {} as the only {} that both client {} and client {} could reach when they acquired.",
        plural("partition", ca.len()),
        ids.join(" and "),
        nodes(&both, false),
        plural("node", both.len()),
        a.client,
        b.client
    ))
}
