//! The story of a fencing token that did not grow: a hold that began after another had
//! ended got a token not above that hold's ([`FenceRegression`]), so a resource that
//! keeps the largest token it has seen would take the earlier holder's late writes and
//! turn away the current holder's (Kleppmann, 2016).
//!
//! Told as a violation is ([`super::narrative`]): the earlier hold's acquisition with its
//! token, its end, the faults linked to the two holds between the first request and the
//! later acquisition ([`super::causes`]), and the later acquisition with its token. Each
//! token is quoted from its hold's `ok` line, which the step cites.

use super::narrative::{acquire_step, end_sentence, fault_steps, parties, Step, Story};
use super::view::{asked_us, RunView};
use super::words::{secs, span};
use crate::checker::resource::FenceRegression;

/// The closing sentence: the two tokens, and what a resource would do with them.
pub fn sentence(r: &FenceRegression) -> String {
    let (a, b) = (&r.earlier, &r.later);
    let (high, low) = (a.fence.unwrap_or(0), b.fence.unwrap_or(0));
    let relation = match high == low {
        true => format!("the same as that of client {}'s earlier hold", a.client),
        false => format!(
            "{} below the {high} of client {}'s earlier hold",
            high - low,
            a.client
        ),
    };
    let (late, current) = match a.client == b.client {
        true => (
            format!("the late writes of client {}'s earlier hold", a.client),
            "those of its new one".to_string(),
        ),
        false => (
            format!("client {}'s late writes", a.client),
            format!("client {}'s", b.client),
        ),
    };
    format!(
        "client {}'s hold of {} from t={} has token {low}, {relation}, though it began {} after that hold ended: \
         a resource that keeps the largest token it has seen takes {late} (token {high}) and turns away {current}",
        b.client,
        r.lock,
        secs(b.start_us),
        span(b.start_us.saturating_sub(a.end_us)),
    )
}

/// Explains one fencing token that did not grow.
pub fn explain(view: &RunView, r: &FenceRegression) -> Story {
    let earlier = super::held::with_nodes(view, &r.earlier);
    let later = super::held::with_nodes(view, &r.later);
    let from_us = asked_us(view.history, &earlier);
    let to_us = later.start_us + 1;
    let faults = super::causes::linked(view, &parties(&[&earlier, &later]), from_us, to_us);
    let told = fault_steps(view, &faults, from_us, to_us);
    let mut steps = told.steps;
    let mut first_line = told.first_line;
    for (h, after) in [(&earlier, true), (&later, false)] {
        let (mut step, _, invoke_line) = acquire_step(view, h, &told.times);
        first_line = first_line.min(invoke_line);
        step.text.push_str(&format!(
            " and gets fencing token {} (line {})",
            h.fence.unwrap_or(0),
            h.ok_line
        ));
        steps.push(step);
        if after {
            steps.push(Step {
                t_us: h.end_us,
                text: format!("{}: its hold of {} is over", end_sentence(h), h.lock),
            });
        }
    }
    // What the resource did with the later holder's writes: a resource that keeps the
    // largest token turned them away.
    let rejected: Vec<(u64, usize)> = view
        .writes
        .iter()
        .zip(&view.write_lines)
        .filter(|(w, _)| {
            !w.accepted
                && w.client == later.client
                && w.lock.as_str() == r.lock
                && later
                    .token
                    .as_ref()
                    .is_some_and(|t| t.as_str() == w.token.as_str())
                && (later.start_us..=later.end_us).contains(&w.t_us)
        })
        .map(|(w, &line)| (w.t_us, line))
        .collect();
    if let Some(&(t_us, _)) = rejected.first() {
        let writes = match rejected.len() {
            1 => "write".to_string(),
            n => format!("{n} writes"),
        };
        let lines: Vec<usize> = rejected.iter().map(|&(_, l)| l).collect();
        steps.push(Step {
            t_us,
            text: format!(
                "the guarded resource turns away client {}'s {writes} with token {} ({})",
                later.client,
                later.fence.unwrap_or(0),
                super::words::lines(&lines)
            ),
        });
    }
    steps.extend(told.after);
    steps.sort_by_key(|s| s.t_us);
    let linked = match faults.is_empty() {
        true => " No fault acted on the two clients or their nodes between the first request and the later acquisition: the tokens went backwards without one.".to_string(),
        false => format!(
            " The {} above acted on the two clients or their nodes in between.",
            match faults.len() {
                1 => "fault".to_string(),
                n => format!("{n} faults"),
            }
        ),
    };
    let mut pins = vec![earlier.ok_line, later.ok_line];
    pins.extend(rejected.iter().map(|&(_, l)| l));
    pins.extend(faults.iter().map(|w| w.line));
    let why = format!(
        "A fencing token must be larger than the token of every hold of the lock that ended before (Kleppmann, 2016), so that the resource can turn away a late writer. Each token above is the one its acquisition's ok line reports.{linked}"
    );
    Story {
        lock: r.lock.clone(),
        steps,
        overlap: sentence(r),
        why,
        first_line,
        last_line: earlier
            .ok_line
            .max(later.ok_line)
            .max(rejected.last().map_or(0, |&(_, l)| l)),
        anomaly: None,
        cited: Vec::new(),
    }
    .pinpointed(&pins)
}
