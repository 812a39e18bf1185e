//! The story of a violation: the shortest stretch of the history that explains it, told
//! step by step in plain words, in the manner of Kleppmann's analysis of Redlock.
//!
//! A story starts when the first holder asks for the lock and ends when the overlap
//! ends. Its steps are the first holder's acquisition, every fault the checker found
//! active around the violation (its start, and its end if the overlap outlived it), the
//! second holder's acquisition with what the two quorums have in common, and the
//! overlap. Each fault kind has its own sentence ([`fault_sentence`]).

use super::view::{targets, FaultWindow, RunView};
use crate::checker::{Hold, HoldEnd, Violation};
use crate::fault::{CutDirection, Fault, PausePoint};
use crate::history::{Event, OpKind};
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
            let _ = writeln!(out, "{}. t={} {}", i + 1, secs(s.t_us), s.text);
        }
        let _ = writeln!(out, "{}. {}", self.steps.len() + 1, self.overlap);
        let _ = writeln!(
            out,
            "\n{} (history lines {}–{}.)",
            self.why, self.first_line, self.last_line
        );
        out
    }
}

/// Seconds with millisecond precision, e.g. `1.204 s`.
pub fn secs(us: u64) -> String {
    format!("{:.3} s", us as f64 / 1e6)
}

/// A duration in the unit that reads best.
pub fn span(us: u64) -> String {
    if us >= 1_000_000 {
        format!("{:.3} s", us as f64 / 1e6)
    } else if us >= 1_000 {
        format!("{:.1} ms", us as f64 / 1e3)
    } else {
        format!("{us} µs")
    }
}

fn list(items: &[usize]) -> String {
    items.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}

fn plural(word: &str, n: usize) -> String {
    if n == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

/// What a fault does, as the rest of a sentence that starts with the time.
/// `clients` is how many clients the run has, to say "every client".
pub fn fault_sentence(fault: &Fault, clients: usize) -> String {
    let links = |nodes: &[usize], cut: &[usize]| {
        let who = if cut.len() >= clients && clients > 0 {
            "every client".to_string()
        } else {
            format!("{} {}", plural("client", cut.len()), list(cut))
        };
        (format!("{} {}", plural("node", nodes.len()), list(nodes)), who)
    };
    let process = |node: &Option<usize>, client: &Option<usize>| match (node, client) {
        (Some(n), _) => format!("node {n}"),
        (None, Some(c)) => format!("client {c}"),
        (None, None) => "no process".to_string(),
    };
    match fault {
        Fault::Partition {
            nodes,
            clients: cut,
            direction,
        } => {
            let (nodes, who) = links(nodes, cut);
            let how = match direction {
                CutDirection::Both => "",
                CutDirection::ToNodes => " (requests are lost, replies would get through)",
                CutDirection::ToClients => " (replies are lost: requests still run on the nodes)",
            };
            format!("the network cuts {nodes} off from {who}{how}")
        }
        Fault::Crash { node, power_loss } => {
            if *power_loss {
                format!(
                    "node {node} loses power: its process dies and the AOF writes not yet synced are lost"
                )
            } else {
                format!("node {node}'s process is killed")
            }
        }
        Fault::Pause { node, client, point } => {
            let when = match point {
                None => "",
                Some(PausePoint::AfterAcquire) => " right after it acquires",
                Some(PausePoint::BeforeValidityCheck) => " before it checks its validity",
                Some(PausePoint::WhileHolding) => " while it holds the lock",
            };
            format!("{} stops the world{when}", process(node, client))
        }
        Fault::ClockJump { node, client, by_us } => format!(
            "{}'s wall clock jumps {}{}",
            process(node, client),
            if *by_us >= 0 { "+" } else { "-" },
            span(by_us.unsigned_abs())
        ),
        Fault::ClockRate { node, client, rate } => {
            format!("{}'s clock runs at {rate} times true time", process(node, client))
        }
        Fault::Delay {
            nodes,
            clients: cut,
            extra_us,
        } => {
            let (nodes, who) = links(nodes, cut);
            format!(
                "messages between {who} and {nodes} take {} longer",
                span(*extra_us)
            )
        }
        Fault::Loss {
            nodes,
            clients: cut,
            probability,
        } => {
            let (nodes, who) = links(nodes, cut);
            format!(
                "{:.0}% of the messages between {who} and {nodes} are lost",
                probability * 100.0
            )
        }
        Fault::Failover { node } => {
            format!("node {node}'s master dies; its asynchronous replica will take over")
        }
    }
}

/// What happens when a fault ends, as the rest of a sentence; `None` for a fault whose
/// end changes nothing worth telling (an instantaneous clock jump).
pub fn fault_end_sentence(fault: &Fault, id: usize) -> Option<String> {
    match fault {
        Fault::Partition { .. } => Some(format!("the cut of fault #{id} heals")),
        Fault::Crash { node, .. } => Some(format!("node {node} restarts with what its persistence kept")),
        Fault::Pause { node, client, .. } => Some(match (node, client) {
            (Some(n), _) => format!("node {n} resumes"),
            (None, Some(c)) => format!("client {c} resumes, unaware of the time that passed"),
            (None, None) => format!("fault #{id} ends"),
        }),
        Fault::ClockJump { .. } => None,
        Fault::ClockRate { .. } => Some(format!("the clock of fault #{id} runs at true rate again")),
        Fault::Delay { .. } => Some(format!("the delay of fault #{id} ends")),
        Fault::Loss { .. } => Some(format!("the message loss of fault #{id} ends")),
        Fault::Failover { node } => Some(format!(
            "node {node}'s replica is promoted and serves as node {node}, with only the writes it had received"
        )),
    }
}

fn acquire_sentence(
    h: &Hold,
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
    let mut s = format!(
        "client {} acquires {}{how} on {} {}",
        h.client,
        h.lock,
        plural("node", h.nodes.len()),
        list(&h.nodes)
    );
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

/// The `ok` event of a hold (its line is 1-based) and the line of the invoke before it.
fn acquire_lines<'a>(history: &'a [Event], h: &Hold) -> (Option<&'a crate::history::Op>, usize) {
    let ok = history.get(h.ok_line.wrapping_sub(1)).and_then(|e| match e {
        Event::Ok(op) => Some(op),
        _ => None,
    });
    let invoke = history[..h.ok_line.saturating_sub(1).min(history.len())]
        .iter()
        .rposition(|e| matches!(e, Event::Invoke(op) if op.client == h.client && op.op == OpKind::Acquire))
        .map_or(h.ok_line, |i| i + 1);
    (ok, invoke)
}

fn end_sentence(h: &Hold) -> String {
    match h.ended_by {
        HoldEnd::Release => format!("client {} releases", h.client),
        HoldEnd::Validity => format!("client {}'s validity runs out", h.client),
        HoldEnd::HistoryEnd => "the history ends".to_string(),
    }
}

/// Explains one violation.
pub fn explain(view: &RunView, v: &Violation) -> Story {
    let (a, b) = (&v.first, &v.second);
    let (a_ok, a_invoke) = acquire_lines(view.history, a);
    let (b_ok, b_invoke) = acquire_lines(view.history, b);
    let invoke_us = |line: usize| view.history.get(line.wrapping_sub(1)).map(Event::t_us);
    let (a_asked, b_asked) = (invoke_us(a_invoke), invoke_us(b_invoke));
    let mut first_line = a_invoke;
    let last_line = b.ok_line.max(a.ok_line);

    // The faults the checker relates to the violation, and any fault that started or
    // ended from the moment the first holder asked (a crash while its SET was on its
    // way explains as much as one during the hold).
    let from_us = a_asked.unwrap_or(a.start_us).min(a.start_us);
    let faults: Vec<&FaultWindow> = view
        .faults
        .iter()
        .filter(|w| w.start_us < v.overlap_end_us)
        .filter(|w| v.faults.contains(&w.id) || w.end_us.is_none_or(|e| e >= from_us))
        .collect();
    let mut steps = Vec::new();
    let mut fault_times = Vec::new();
    for w in &faults {
        let since = if w.start_us < from_us {
            " (already under way)"
        } else {
            ""
        };
        steps.push(Step {
            t_us: w.start_us,
            text: format!(
                "{}{since} [fault #{}]",
                fault_sentence(&w.fault, view.clients),
                w.id
            ),
        });
        fault_times.push(w.start_us);
        first_line = first_line.min(w.line);
        let ended = w.end_us.filter(|&e| e < v.overlap_end_us && e >= from_us);
        if let (Some(end), Some(text)) = (ended, fault_end_sentence(&w.fault, w.id)) {
            // Faults are sets: the end of one leaves the process under the others.
            let text = match still_under(&view.faults, w, end) {
                Some(other) => format!("fault #{} ends, but fault #{other} still holds its target", w.id),
                None => text,
            };
            steps.push(Step { t_us: end, text });
            fault_times.push(end);
        }
    }
    // Say when a holder asked if something happened meanwhile or the asking took long.
    let asked = |h: &Hold, at: Option<u64>, valid_until: Option<u64>| {
        at.filter(|&t| {
            let validity = valid_until.unwrap_or(h.start_us).saturating_sub(h.start_us);
            fault_times.iter().any(|&f| f >= t && f < h.start_us) || (h.start_us - t) * 10 > validity
        })
    };
    let a_until = a_ok.and_then(|o| o.valid_until_us);
    let b_until = b_ok.and_then(|o| o.valid_until_us);
    steps.push(Step {
        t_us: a.start_us,
        text: acquire_sentence(
            a,
            a_ok.and_then(|o| o.attempts),
            a_until,
            asked(a, a_asked, a_until),
        ),
    });
    steps.push(Step {
        t_us: b.start_us,
        text: acquire_sentence(
            b,
            b_ok.and_then(|o| o.attempts),
            b_until,
            asked(b, b_asked, b_until),
        ),
    });
    steps.extend(belief_steps(view, v, a_invoke));
    // Stable: at equal times a fault is told before an acquisition it may explain.
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
    Story {
        lock: v.lock.clone(),
        steps,
        overlap,
        why: why(view, a, b, &faults),
        first_line,
        last_line,
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
        b.client == h.client && b.lock == h.lock && (b.token.is_none() || b.token == h.token)
    };
    view.history[from_line.saturating_sub(1).min(view.history.len())..]
        .iter()
        .take_while(|e| e.t_us() <= v.overlap_end_us)
        .filter_map(|e| match e {
            Event::Belief(b) if about(&v.first, b) || about(&v.second, b) => Some(Step {
                t_us: b.t_us,
                text: format!(
                    "client {}'s clock changed rate: it now believes it holds {} until t={}",
                    b.client,
                    b.lock,
                    secs(b.valid_until_us)
                ),
            }),
            _ => None,
        })
        .collect()
}

/// What the two quorums share, and what that implies.
fn why(view: &RunView, a: &Hold, b: &Hold, faults: &[&FaultWindow]) -> String {
    let shared: Vec<usize> = a.nodes.iter().copied().filter(|n| b.nodes.contains(n)).collect();
    if a.nodes.is_empty() || b.nodes.is_empty() {
        return format!(
            "The history does not say which nodes granted the lock; client {} acquired while client {} still believed it held it.",
            b.client, a.client
        );
    }
    if shared.is_empty() {
        let mut s = format!(
            "The two quorums ({} {} and {} {}) share no node, so no node ever saw both requests",
            plural("node", a.nodes.len()),
            list(&a.nodes),
            plural("node", b.nodes.len()),
            list(&b.nodes)
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
    let hit: Vec<usize> = shared
        .iter()
        .copied()
        .filter(|n| faults.iter().any(|w| targets(&w.fault).0.contains(n)))
        .collect();
    let mut s = format!(
        "{} {} granted {} to both clients: by the time client {} asked, {} no longer had client {}'s key",
        plural("Node", shared.len()),
        list(&shared),
        a.lock,
        b.client,
        if shared.len() == 1 { "it" } else { "they" },
        a.client
    );
    let _ = write!(
        s,
        " (it had expired or been lost while client {} still trusted its validity",
        a.client
    );
    if !hit.is_empty() {
        let _ = write!(
            s,
            "; {} {} {} hit by the faults above",
            plural("node", hit.len()),
            list(&hit),
            if hit.len() == 1 { "was" } else { "were" }
        );
    }
    s.push(')');
    s.push('.');
    s
}
