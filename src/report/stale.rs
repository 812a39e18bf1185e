//! The story of a stale write: a write the guarded resource accepted from a client whose
//! hold had ended, over the write of another client's later hold (the checker's
//! [`ResourceViolation`]).
//!
//! Kleppmann's scenario, told as the narrative tells a violation: the writer's
//! acquisition, the faults linked to it ([`super::causes`]: those that acted on the
//! writer, the other holder or their nodes between the writer's request and the write),
//! the end of the writer's hold, the other client's acquisition and write, and the stale
//! write landing over it. Then why the resource let it in: without fencing tokens it
//! cannot tell a stale write from a current one; with them, the other holder's token was
//! not larger.

use super::narrative::{acquire_step, end_sentence, fault_steps, parties, Step, Story};
use super::view::{acquire_lines, RunView};
use super::words::{secs, span};
use crate::checker::{Hold, ResourceViolation};
use crate::fault::Fault;

/// What the stale write ran into, for a sentence: "over client 2's write of t=1.200 s
/// (a later hold)", or, for a write with no hold, "while client 2 held the lock".
pub fn against(rv: &ResourceViolation) -> String {
    match rv.overwritten_us {
        Some(at) => format!(
            "over client {}'s write of t={} (a later hold)",
            rv.holder.client,
            secs(at)
        ),
        None => format!("while client {} held the lock", rv.holder.client),
    }
}

/// The writer's hold the write belonged to: the latest one with its token that had ended.
fn writer_hold<'v>(view: &'v RunView, rv: &ResourceViolation) -> Option<&'v Hold> {
    view.holds()
        .iter()
        .filter(|h| {
            h.client == rv.client && h.lock == rv.lock && h.token.as_deref() == Some(rv.token.as_str())
        })
        .filter(|h| h.end_us <= rv.write_us)
        .max_by_key(|h| h.end_us)
}

/// The history line (1-based) of the accepted write.
fn write_line(view: &RunView, rv: &ResourceViolation) -> usize {
    view.writes
        .iter()
        .zip(&view.write_lines)
        .find(|(w, _)| {
            w.t_us == rv.write_us
                && w.client == rv.client
                && w.lock == rv.lock
                && w.token == rv.token
                && w.accepted
        })
        .map_or(view.history.len(), |(_, &line)| line)
}

/// What a stale write's story stands on: the holds it tells (the writer's, if found, and
/// the other holder's), with the nodes that granted them (a worker's from the node
/// lines), the true time its window starts (the first request), and the faults linked to
/// it, which the story tells and the banner names ([`super::banner`]).
pub struct Told<'v> {
    pub holds: Vec<Hold>,
    pub from_us: u64,
    pub faults: Vec<&'v super::view::FaultWindow>,
}

pub fn told<'v>(view: &'v RunView, rv: &ResourceViolation) -> Told<'v> {
    let mine = writer_hold(view, rv);
    let holds: Vec<Hold> = mine
        .into_iter()
        .chain(std::iter::once(&rv.holder))
        .map(|h| super::held::with_nodes(view, h))
        .collect();
    let from_us = super::view::asked_us(view.history, mine.unwrap_or(&rv.holder));
    let faults = super::causes::linked(
        view,
        &parties(&holds.iter().collect::<Vec<_>>()),
        from_us,
        rv.write_us + 1,
    );
    Told {
        holds,
        from_us,
        faults,
    }
}

/// Explains one stale write.
pub fn explain(view: &RunView, rv: &ResourceViolation) -> Story {
    let holder = &rv.holder;
    let mine = writer_hold(view, rv);
    let first = mine.unwrap_or(holder);
    let (_, invoke_line) = acquire_lines(view.history, first);
    let Told { from_us, faults, .. } = told(view, rv);
    let told = fault_steps(view, &faults, from_us, rv.write_us + 1);
    let mut steps = told.steps;
    let mut first_line = told.first_line.min(invoke_line);
    if let Some(h) = mine {
        let (step, _, line) = acquire_step(view, h, &told.times);
        first_line = first_line.min(line);
        steps.push(step);
        steps.push(Step {
            t_us: h.end_us,
            text: format!("{}: its hold of {} is over", end_sentence(h), h.lock),
        });
    }
    let (step, _, _) = acquire_step(view, holder, &told.times);
    steps.push(step);
    if let Some(at) = rv.overwritten_us {
        steps.push(Step {
            t_us: at,
            text: format!(
                "the guarded resource accepts client {}'s write to {}",
                holder.client, rv.lock
            ),
        });
    }
    let fenced = match rv.fence {
        Some(f) => format!("with fencing token {f}"),
        None => "without a fencing token".into(),
    };
    steps.push(Step {
        t_us: rv.write_us,
        text: format!(
            "the guarded resource accepts client {}'s write to {} ({fenced})",
            rv.client, rv.lock
        ),
    });
    steps.extend(told.after);
    steps.sort_by_key(|s| s.t_us);
    let late = rv.hold_end_us.map_or(String::new(), |e| {
        format!(", {} after its hold ended", span(rv.write_us - e))
    });
    let overlap = format!(
        "at t={} client {}'s write to {} lands{late}, {}, whose hold ran from t={} to t={}",
        secs(rv.write_us),
        rv.client,
        rv.lock,
        against(rv),
        secs(holder.start_us),
        secs(holder.end_us)
    );
    let last_line = write_line(view, rv);
    let mut pins = vec![invoke_line, holder.ok_line, last_line];
    pins.extend(mine.map(|h| h.ok_line));
    pins.extend(faults.iter().map(|w| w.line));
    Story {
        lock: rv.lock.clone(),
        steps,
        overlap,
        why: why(view, rv, &faults),
        first_line,
        last_line,
        anomaly: Some(super::anomaly::name_stale(
            rv,
            &faults,
            last_line,
            mine.is_none_or(|h| super::held::expires(view, h)),
        )),
        cited: Vec::new(),
    }
    .pinpointed(&pins)
}

/// Why the resource accepted it.
fn why(view: &RunView, rv: &ResourceViolation, faults: &[&super::view::FaultWindow]) -> String {
    let stopped: Vec<String> = faults
        .iter()
        .filter(|w| match &w.fault {
            Fault::Pause { client, .. } => *client == Some(rv.client),
            Fault::Delay { clients, .. } => clients.contains(&rv.client),
            _ => false,
        })
        .map(|w| format!("#{}", w.id))
        .collect();
    let cause = if stopped.is_empty() {
        String::new()
    } else {
        format!(" (held back by fault {})", stopped.join(", "))
    };
    let mut s = format!(
        "Client {} decided to write while it held {}, and the write reached the resource after its hold had ended{cause}. ",
        rv.client, rv.lock
    );
    match (rv.fence, rv.holder.fence) {
        (None, _) => s.push_str(
            "Without fencing tokens the resource cannot tell a stale write from a current one (Kleppmann, 2016).",
        ),
        (Some(f), Some(h)) if h <= f => s.push_str(&format!(
            "The fencing token did not stop it: client {}'s hold has token {h}, not above client {}'s {f}, so \
             the resource saw nothing newer (tokens that do not grow: the one-round issue is not monotonic).",
            rv.holder.client, rv.client
        )),
        (Some(f), held) => {
            let seen = view.writes.iter().any(|w| {
                w.accepted && w.lock == rv.lock && w.t_us < rv.write_us && w.fence.is_some_and(|x| x > f)
            });
            s.push_str(&if seen {
                format!("The resource had accepted a larger token than {f} and still let this one in.")
            } else {
                let newer = held.map_or("no token".to_string(), |h| format!("token {h}"));
                format!(
                    "Client {}'s write carried {newer}, so the resource had nothing newer than {f} to reject it \
                     with.",
                    rv.holder.client
                )
            });
        }
    }
    s
}
