//! The story of a violation: the shortest stretch of the history that explains it, told
//! step by step in plain words, in the manner of Kleppmann's analysis of Redlock.
//!
//! A story starts when the first holder asks for the lock and ends when the overlap
//! ends. Its steps are the first holder's acquisition, every fault linked to the
//! violation (one that acted on the two holders or their nodes inside that window, a
//! clock jump included: [`super::causes`]) with its start and, if inside, its end, the
//! second holder's acquisition, and the overlap; then why, in the lock's own terms
//! ([`super::why`]). Each fault kind has its own sentence ([`super::words::fault_sentence`]). Stale
//! writes to the guarded resource get stories of the same shape ([`super::stale`]).

use super::anomaly::{self, Named};
use super::causes::{self, Parties};
use super::view::{acquire_lines, began, targets, Began, FaultWindow, RunView};
use super::why;
use super::words::{fault_end_sentence, fault_sentence, list, plural};
pub use super::words::{secs, span};
use crate::checker::{Hold, HoldEnd, Violation};
use crate::fault::{Fault, PausePoint};
use crate::history::Event;
use std::fmt::Write as _;

/// One step of a story, at a true time.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub t_us: u64,
    pub text: String,
}

/// The explanation of one violation.
#[derive(Clone, Debug, PartialEq)]
pub struct Story {
    pub lock: String,
    pub steps: Vec<Step>,
    /// The closing sentence: who held the lock together, from when to when.
    pub overlap: String,
    /// What the two acquisitions had in common (or not), in one sentence.
    pub why: String,
    /// History lines (1-based, inclusive) the story draws on.
    pub first_line: usize,
    pub last_line: usize,
    /// What kind of failure it is, with its evidence ([`super::anomaly`]).
    pub anomaly: Option<Named>,
}

impl Story {
    /// The story on one line, steps separated by " · ".
    pub fn one_line(&self) -> String {
        let mut parts: Vec<String> = self
            .steps
            .iter()
            .map(|s| format!("t={} {}", secs(s.t_us), s.text))
            .collect();
        parts.push(self.overlap.clone());
        parts.join(" · ")
    }

    /// The story as Markdown: a numbered list of steps, then the overlap and the why.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for (i, s) in self.steps.iter().enumerate() {
            let _ = writeln!(out, "{}. t={} {}", i + 1, secs(s.t_us), md(&s.text));
        }
        let _ = writeln!(out, "{}. {}", self.steps.len() + 1, md(&self.overlap));
        if let Some(a) = &self.anomaly {
            let told = self.why.contains(&a.cause);
            let _ = writeln!(out, "\n**{}**", md(&a.sentence(!told)));
        }
        let _ = writeln!(
            out,
            "\n{} (history lines {}–{}.)",
            md(&self.why),
            self.first_line,
            self.last_line
        );
        out
    }
}

/// Text for narrative.md that may carry a history's own words (a lock name): HTML is
/// escaped as index.html escapes it, a `](` that would open a link's target is broken
/// with a backslash, and a control character (a newline that would start a heading) is
/// shown as an escape, so the text can add neither markup nor links nor lines.
pub fn md(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut after_bracket = false;
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '(' if after_bracket => out.push_str("\\("),
            c if c.is_control() => out.extend(c.escape_default()),
            c => out.push(c),
        }
        after_bracket = c == ']';
    }
    out
}

fn acquire_sentence(
    h: &Hold,
    began: Began,
    nodes: &[usize],
    attempts: Option<u32>,
    valid_until_us: Option<u64>,
    asked_us: Option<u64>,
) -> String {
    let mode = super::view::mode_name(h.mode);
    let how = if mode == "exclusive" {
        String::new()
    } else {
        format!(" for {mode}")
    };
    let verb = match began {
        Began::Acquired => "acquires",
        Began::ExtendedLate => "extends",
    };
    // A worker's `ok` names no nodes, and no key event may name them either.
    let on = if nodes.is_empty() {
        String::new()
    } else {
        format!(" on {} {}", plural("node", nodes.len()), list(nodes))
    };
    let mut s = format!("client {} {verb} {}{how}{on}", h.client, h.lock);
    if began == Began::ExtendedLate {
        s.push_str(" after its validity had run out, and holds the lock anew");
    }
    let mut notes = Vec::new();
    if let Some(t) = asked_us {
        notes.push(format!("asked at t={}", secs(t)));
    }
    if let Some(until) = valid_until_us {
        notes.push(format!(
            "validity {}, until t={}",
            span(until.saturating_sub(h.start_us)),
            secs(until)
        ));
    }
    if let Some(n) = attempts.filter(|&n| n > 1) {
        notes.push(format!("after {n} attempts"));
    }
    if !notes.is_empty() {
        let _ = write!(s, " ({})", notes.join(", "));
    }
    s
}

pub(super) fn end_sentence(h: &Hold) -> String {
    match h.ended_by {
        HoldEnd::Release => format!("client {} releases", h.client),
        HoldEnd::Validity => format!("client {}'s validity runs out", h.client),
        HoldEnd::HistoryEnd => "the history ends".to_string(),
        HoldEnd::Lost => format!("client {}'s library reports the lock lost", h.client),
    }
}

/// The steps of the faults linked to a finding: each start (marked "already under way"
/// if before `from_us`) and each end inside the window, with the first history line
/// they draw on and the times at which something happened.
pub(super) struct FaultSteps {
    pub steps: Vec<Step>,
    /// Steps told after an acquisition at the same time: a pause that starts right
    /// after the client acquires.
    pub after: Vec<Step>,
    pub first_line: usize,
    pub times: Vec<u64>,
}

pub(super) fn fault_steps(view: &RunView, faults: &[&FaultWindow], from_us: u64, to_us: u64) -> FaultSteps {
    let mut out = FaultSteps {
        steps: Vec::new(),
        after: Vec::new(),
        first_line: usize::MAX,
        times: Vec::new(),
    };
    for w in faults {
        let since = match (w.start_us < from_us, &w.fault) {
            (false, _) => "",
            (true, Fault::ClockJump { .. }) => " (earlier; the clock stays where it jumped)",
            (true, _) => " (already under way)",
        };
        let start = Step {
            t_us: w.start_us,
            text: format!(
                "{}{since} [fault #{}]",
                fault_sentence(&w.fault, view.clients),
                w.id
            ),
        };
        let after_acquire = matches!(
            w.fault,
            Fault::Pause {
                point: Some(PausePoint::AfterAcquire),
                ..
            }
        );
        if after_acquire {
            out.after.push(start);
        } else {
            out.steps.push(start);
        }
        out.times.push(w.start_us);
        out.first_line = out.first_line.min(w.line);
        let ended = w.end_us.filter(|&e| e < to_us && e >= from_us);
        if let (Some(end), Some(text)) = (ended, fault_end_sentence(&w.fault, w.id)) {
            // Faults are sets: the end of one leaves the process under the others.
            let text = match still_under(&view.faults, w, end) {
                Some(other) => format!("fault #{} ends, but fault #{other} still holds its target", w.id),
                None => text,
            };
            out.steps.push(Step { t_us: end, text });
            out.times.push(end);
        }
    }
    out
}

/// A hold's acquisition as a step: when it was asked for is told if a fault struck
/// meanwhile or the asking took more than a tenth of the validity.
pub(super) fn acquire_step(view: &RunView, h: &Hold, fault_times: &[u64]) -> (Step, Option<u64>, usize) {
    let (ok, invoke_line) = acquire_lines(view.history, h);
    let asked_us = view
        .history
        .get(invoke_line.wrapping_sub(1))
        .as_ref()
        .map(Event::t_us);
    let valid_until = ok.as_ref().and_then(|o| o.valid_until_us);
    let told = asked_us.filter(|&t| {
        let validity = valid_until.unwrap_or(h.start_us).saturating_sub(h.start_us);
        fault_times.iter().any(|&f| f >= t && f < h.start_us) || (h.start_us - t) * 10 > validity
    });
    let began = began(view, h);
    let nodes = ok.as_ref().and_then(|o| o.nodes).unwrap_or(h.nodes).to_vec();
    let step = Step {
        t_us: h.start_us,
        text: acquire_sentence(
            h,
            began,
            &nodes,
            ok.as_ref().and_then(|o| o.attempts),
            valid_until,
            told,
        ),
    };
    (step, asked_us, invoke_line)
}

/// The parties of two holds: both clients and every node that granted either.
pub(super) fn parties(holds: &[&Hold]) -> Parties {
    let mut p = Parties::default();
    for h in holds {
        p.clients.push(h.client);
        p.nodes.extend(h.nodes.iter().copied());
    }
    p.clients.sort_unstable();
    p.clients.dedup();
    p.nodes.sort_unstable();
    p.nodes.dedup();
    p
}

/// Explains one violation.
pub fn explain(view: &RunView, v: &Violation) -> Story {
    // A worker client's holds get the nodes its key events show.
    let v = &anomaly::violation_with_nodes_seen(view, v);
    let (a, b) = (&v.first, &v.second);
    let (_, a_invoke) = acquire_lines(view.history, a);
    let asked = |h: &Hold, invoke: usize| {
        let t = view.history.get(invoke.wrapping_sub(1)).as_ref().map(Event::t_us);
        t.unwrap_or(h.start_us).min(h.start_us)
    };
    // The window starts when the first of the two holders asked (the second may have
    // asked first and acquired later, after retries): a crash while a SET was on its
    // way explains as much as one during the hold. Only faults that acted on the two
    // holders or their nodes are told ([`causes`]).
    let from_us = asked(a, a_invoke).min(asked(b, acquire_lines(view.history, b).1));
    let faults = causes::linked(view, &parties(&[a, b]), from_us, v.overlap_end_us);
    let told = fault_steps(view, &faults, from_us, v.overlap_end_us);
    let mut steps = told.steps;
    let (a_step, _, a_line) = acquire_step(view, a, &told.times);
    let (b_step, _, b_line) = acquire_step(view, b, &told.times);
    steps.push(a_step);
    steps.push(b_step);
    steps.extend(told.after);
    steps.extend(belief_steps(view, v, a_invoke));
    // Stable: at equal times a fault is told before an acquisition it may explain, and
    // a pause right after acquiring after the acquisition.
    steps.sort_by_key(|s| s.t_us);

    let ender = if a.end_us <= b.end_us { a } else { b };
    let overlap = format!(
        "from t={} to t={} both client {} and client {} hold {} ({}), until {}",
        secs(v.overlap_start_us),
        secs(v.overlap_end_us),
        a.client,
        b.client,
        v.lock,
        span(v.overlap_us()),
        end_sentence(ender)
    );
    let named = anomaly::name_violation(view, v, &faults);
    Story {
        lock: v.lock.clone(),
        steps,
        overlap,
        why: why::why(view, a, b, &faults, Some(&named)),
        first_line: a_line.min(b_line).min(told.first_line),
        last_line: b.ok_line.max(a.ok_line),
        anomaly: Some(named),
    }
}

/// Another fault of the same sort on the same process as `w`, still active at `end`
/// (an outage, a pause or a clock rate), if there is one.
fn still_under(faults: &[FaultWindow], w: &FaultWindow, end: u64) -> Option<usize> {
    let sort = |f: &Fault| match f {
        Fault::Crash { .. } | Fault::Failover { .. } => Some(0),
        Fault::Pause { .. } => Some(1),
        Fault::ClockRate { .. } => Some(2),
        _ => None,
    };
    let mine = sort(&w.fault)?;
    faults
        .iter()
        .find(|o| {
            o.id != w.id
                && sort(&o.fault) == Some(mine)
                && targets(&o.fault) == targets(&w.fault)
                && o.start_us <= end
                && o.end_us.is_none_or(|e| e > end)
        })
        .map(|o| o.id)
}

/// A step for each time one of the two holders' clocks moved its belief during the story.
fn belief_steps(view: &RunView, v: &Violation, from_line: usize) -> Vec<Step> {
    let about = |h: &Hold, b: &crate::history::Belief| {
        b.client == h.client
            && b.lock == h.lock
            && (b.token.is_none() || b.token.as_deref() == h.token.as_deref())
    };
    let mut steps = Vec::new();
    view.history.walk_from(from_line.saturating_sub(1), |e| {
        if e.t_us() > v.overlap_end_us {
            return false;
        }
        if let Event::Belief(b) = e {
            if about(&v.first, b) || about(&v.second, b) {
                steps.push(Step {
                    t_us: b.t_us,
                    text: format!(
                        "client {}'s clock changed rate: it now believes it holds {} until t={}",
                        b.client,
                        b.lock,
                        secs(b.valid_until_us)
                    ),
                });
            }
        }
        true
    });
    steps
}
