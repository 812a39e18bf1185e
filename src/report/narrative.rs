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
use super::held::{self, Keys};
use super::view::{acquire_lines, asked_us, began, targets, Began, FaultWindow, RunView};
use super::why;
use super::words::{fault_end_sentence, fault_sentence, list, plural};
pub use super::words::{secs, span};
use crate::checker::{Hold, HoldEnd, Violation};
use crate::fault::{Fault, PausePoint};
use crate::history::{Event, NodeAction};
use std::fmt::Write as _;

/// A story longer than this many history lines cites its lines one by one
/// ([`Story::pinpointed`]).
pub const LONG_STORY_LINES: usize = 400;

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
    /// The lines it cites one by one, where the stretch between `first_line` and
    /// `last_line` is too long to cite whole (a wait of seconds): empty, that stretch.
    pub cited: Vec<usize>,
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
        let _ = writeln!(out, "\n{} ({}.)", md(&self.why), self.lines());
        out
    }

    /// A story whose stretch of the history is longer than [`LONG_STORY_LINES`] cites
    /// its lines one by one: its first and last, `lines` (the acquisitions' and the
    /// anomaly's), and every line its sentences name. The stretch between them (a hold of
    /// seconds under a partition) is no evidence of its own, and a report that keeps only
    /// what it cites would otherwise keep all of it.
    pub fn pinpointed(self, lines: &[usize]) -> Story {
        if self.last_line.saturating_sub(self.first_line) <= LONG_STORY_LINES || !self.cited.is_empty() {
            return self;
        }
        let mut text: Vec<&str> = self.steps.iter().map(|s| s.text.as_str()).collect();
        text.extend([self.overlap.as_str(), self.why.as_str()]);
        let cause = self.anomaly.as_ref().map(|a| a.cause.clone()).unwrap_or_default();
        text.push(&cause);
        let mut cited: Vec<usize> = crate::history::cut::cited_in(&text.join(" "))
            .into_iter()
            .flatten()
            .chain(lines.iter().copied())
            .chain([self.first_line, self.last_line])
            .filter(|&l| l >= self.first_line && l <= self.last_line)
            .collect();
        cited.sort_unstable();
        cited.dedup();
        Story { cited, ..self }
    }

    /// The history lines it draws on, as its last sentence cites them: "history lines
    /// 2–6", or one by one ("history lines 12, 40 and 2301").
    pub fn lines(&self) -> String {
        match self.cited.is_empty() {
            true => format!("history lines {}–{}", self.first_line, self.last_line),
            false => format!("history {}", super::words::lines(&self.cited)),
        }
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

/// What an acquisition's `ok` and node lines say, for its sentence.
struct Acquired<'a> {
    began: Began,
    /// The nodes it is told as acquired on (none: not told).
    nodes: &'a [usize],
    attempts: Option<u32>,
    valid_until_us: Option<u64>,
    /// `false`: held until released (the worker said `expires: false`).
    expires: bool,
    asked_us: Option<u64>,
    /// A worker's keys, where each was set and whether it was gone at the `ok`.
    keys: Option<String>,
}

fn acquire_sentence(h: &Hold, a: &Acquired) -> String {
    let mode = super::view::mode_name(h.mode);
    let how = if mode == "exclusive" {
        String::new()
    } else {
        format!(" for {mode}")
    };
    let verb = match a.began {
        Began::Acquired => "acquires",
        Began::ExtendedLate => "extends",
    };
    // A worker's `ok` names no nodes, and no key event may name them either.
    let on = if a.nodes.is_empty() {
        String::new()
    } else {
        format!(" on {} {}", plural("node", a.nodes.len()), list(a.nodes))
    };
    let mut s = format!("client {} {verb} {}{how}{on}", h.client, h.lock);
    if a.began == Began::ExtendedLate {
        s.push_str(" after its validity had run out, and holds the lock anew");
    }
    let mut notes = Vec::new();
    if let Some(t) = a.asked_us {
        notes.push(format!("asked at t={}", secs(t)));
    }
    match a.valid_until_us {
        // The hold may start after its validity ran out (counted from the request).
        Some(until) if until <= h.start_us => {
            notes.push(format!("its validity had already run out at t={}", secs(until)))
        }
        Some(until) => notes.push(format!(
            "validity {}, until t={}",
            span(until - h.start_us),
            secs(until)
        )),
        None if !a.expires => notes.push("no expiry: held until released".into()),
        None => {}
    }
    if let Some(n) = a.attempts.filter(|&n| n > 1) {
        notes.push(format!("after {n} attempts"));
    }
    let mut notes = vec![notes.join(", ")];
    // After a semicolon: the times above are not the lines' own.
    notes.extend(a.keys.clone());
    notes.retain(|n| !n.is_empty());
    if !notes.is_empty() {
        let _ = write!(s, " ({})", notes.join("; "));
    }
    s
}

/// A worker's keys as its acquisition sentence tells them: "its value set on node 0
/// (line 30), node 1 (line 31)", and each node that removed its key before the `ok`.
fn keys_clause(view: &RunView, keys: &Keys) -> Option<String> {
    let held: Vec<String> = keys
        .held()
        .iter()
        .map(|k| format!("node {} (line {})", k.node, k.set_line))
        .collect();
    let mut parts = Vec::new();
    if !held.is_empty() {
        parts.push(format!("its value set on {}", held.join(", ")));
    }
    for k in keys.kept.iter().filter(|k| k.gone_line.is_some()) {
        let gone = k.gone_line.unwrap_or_default();
        let how = match view.history.get(gone - 1) {
            Some(Event::Node(n)) => match n.action {
                NodeAction::Expired => "expired",
                NodeAction::Lost => "lost when the node restarted",
                NodeAction::Unreplicated => "not on the promoted replica",
                _ => "removed",
            },
            _ => "removed",
        };
        parts.push(format!(
            "its key on node {} (line {}) was gone before the ok: {how} (line {gone})",
            k.node, k.set_line
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The keys of a worker's acquire that were set and deleted again before its `ok` (an
/// attempt of the library's that did not count), as a step at the first set: they are
/// no part of the hold, and the story says so rather than count them.
fn undone_step(view: &RunView, h: &Hold, keys: &Keys) -> Option<Step> {
    let first = keys.undone.first()?;
    let t_us = view.history.get(first.set_line - 1)?.t_us();
    let sets: Vec<String> = keys
        .undone
        .iter()
        .map(|u| format!("node {} (line {})", u.node, u.set_line))
        .collect();
    let dels: Vec<String> = keys
        .undone
        .iter()
        .map(|u| format!("node {} (line {})", u.node, u.deleted_line))
        .collect();
    Some(Step {
        t_us,
        text: format!(
            "client {}'s acquire sets its value on {}, and it is deleted there again before the acquire returns: \
             {}; these keys are no part of its hold",
            h.client,
            sets.join(" and "),
            dels.join(", ")
        ),
    })
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
                fault_sentence(&w.fault, view.clients, view.deployment),
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
        if let (Some(end), Some(text)) = (ended, fault_end_sentence(&w.fault, w.id, view.deployment)) {
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
    // A worker's nodes are those its key was on at the `ok`, from the node lines (none
    // where the lines do not decide); anyone else's, those its `ok` names.
    let (nodes, keys) = match held::worker_keys(view, h) {
        held::Seen::Named => (
            ok.as_ref().and_then(|o| o.nodes).unwrap_or(h.nodes).to_vec(),
            None,
        ),
        held::Seen::Undecided => (Vec::new(), None),
        held::Seen::Keys(k) => (k.held().iter().map(|k| k.node).collect(), keys_clause(view, &k)),
    };
    let step = Step {
        t_us: h.start_us,
        text: acquire_sentence(
            h,
            &Acquired {
                began,
                nodes: &nodes,
                attempts: ok.as_ref().and_then(|o| o.attempts),
                valid_until_us: valid_until,
                expires: held::expires(view, h),
                asked_us: told,
                keys,
            },
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

/// What a violation's story stands on: the violation with the nodes that granted each
/// hold (a worker's from the node lines), the true time its window starts, and the faults
/// linked to it, which the story tells and the banner names ([`super::banner`]).
pub struct Told<'v> {
    pub violation: Violation,
    pub from_us: u64,
    pub faults: Vec<&'v FaultWindow>,
}

/// The window starts when the first of the two holders asked (the second may have asked
/// first and acquired later, after retries): a crash while a SET was on its way explains
/// as much as one during the hold. Only faults that acted on the two holders or their
/// nodes are told ([`causes`]).
pub fn told<'v>(view: &'v RunView, v: &Violation) -> Told<'v> {
    // A worker client's holds get the nodes its key events show.
    let v = anomaly::violation_with_nodes_seen(view, v);
    let from_us = asked_us(view.history, &v.first).min(asked_us(view.history, &v.second));
    let faults = causes::linked(view, &parties(&[&v.first, &v.second]), from_us, v.overlap_end_us);
    Told {
        violation: v,
        from_us,
        faults,
    }
}

/// Explains one violation.
pub fn explain(view: &RunView, v: &Violation) -> Story {
    let Told {
        violation: v,
        from_us,
        faults,
    } = told(view, v);
    let v = &v;
    let (a, b) = (&v.first, &v.second);
    let (_, a_invoke) = acquire_lines(view.history, a);
    let told = fault_steps(view, &faults, from_us, v.overlap_end_us);
    let mut steps = told.steps;
    let (a_step, _, a_line) = acquire_step(view, a, &told.times);
    let (b_step, _, b_line) = acquire_step(view, b, &told.times);
    steps.push(a_step);
    steps.push(b_step);
    for h in [a, b] {
        if let held::Seen::Keys(k) = held::worker_keys(view, h) {
            steps.extend(undone_step(view, h, &k));
        }
    }
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
    let mut pins = vec![a_line, a.ok_line, b_line, b.ok_line];
    pins.extend(named.lines.iter().copied());
    pins.extend(faults.iter().map(|w| w.line));
    Story {
        lock: v.lock.clone(),
        steps,
        overlap,
        why: why::why(view, a, b, &faults, Some(&named)),
        first_line: a_line.min(b_line).min(told.first_line),
        // A worker's keys may be seen after its `ok`.
        last_line: b
            .ok_line
            .max(a.ok_line)
            .max(named.lines.iter().copied().max().unwrap_or(0)),
        anomaly: Some(named),
        cited: Vec::new(),
    }
    .pinpointed(&pins)
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
