//! The story of a liveness finding: a wait for a lock that went on too long (a writer
//! starved by readers, a probe that found the lock stuck after the heal, an uncontended
//! acquire that failed while a majority was reachable, a lock nobody got after the heal).
//!
//! Each finding has a waiting client (or every client), a lock and a window; the story
//! walks the history lines of that window and tells what they show: the first attempt,
//! the faults linked to the wait ([`super::causes`]), the heal, how many attempts failed,
//! who held the lock meanwhile, and how the wait ended. A wait runs for seconds, so the
//! story cites its lines one by one (the first and last of each kind), not as a range.

use super::causes::Parties;
use super::narrative::{fault_steps, Step, Story};
use super::view::RunView;
use super::words::{lines, list, plural, span};
use crate::checker::LivenessFinding;
use crate::history::{Event, OpKind};

/// What a finding waited for.
struct Wait<'a> {
    lock: &'a str,
    /// The client that waited (`None`: every client that asked).
    client: Option<usize>,
    from_us: u64,
    to_us: u64,
    acquired: bool,
}

fn wait_of<'a>(view: &RunView, l: &'a LivenessFinding) -> Wait<'a> {
    match l {
        LivenessFinding::Deadlock {
            lock,
            probe_start_us,
            waited_us,
            acquired,
            ..
        } => Wait {
            lock,
            client: view.meta.as_ref().and_then(|m| m.probe_client),
            from_us: *probe_start_us,
            to_us: probe_start_us + waited_us,
            acquired: *acquired,
        },
        LivenessFinding::WriterStarvation {
            lock,
            client,
            since_us,
            waited_us,
            acquired,
            ..
        } => Wait {
            lock,
            client: Some(*client),
            from_us: *since_us,
            to_us: since_us + waited_us,
            acquired: *acquired,
        },
        LivenessFinding::FaultTolerance {
            client,
            lock,
            invoke_us,
            end_us,
            ..
        } => Wait {
            lock,
            client: Some(*client),
            from_us: *invoke_us,
            to_us: *end_us,
            acquired: false,
        },
        LivenessFinding::StuckAfterHeal {
            lock,
            heal_us,
            bound_us,
        } => Wait {
            lock,
            client: None,
            from_us: *heal_us,
            to_us: heal_us + bound_us,
            acquired: false,
        },
        LivenessFinding::NoProbe { heal_us } => Wait {
            lock: "",
            client: None,
            from_us: *heal_us,
            to_us: view.end_us.max(*heal_us),
            acquired: false,
        },
    }
}

/// The window a liveness finding's story and focused timeline cover, and its lock
/// (empty for a probe that never ran).
pub fn window(view: &RunView, l: &LivenessFinding) -> (String, u64, u64) {
    let w = wait_of(view, l);
    (w.lock.to_string(), w.from_us, w.to_us)
}

/// What the lines of the window show.
#[derive(Default)]
struct Seen {
    /// Acquire invocations of the waiting client(s): (line, time, client).
    attempts: Vec<(usize, u64, usize)>,
    /// Their failures and unknown outcomes: lines.
    failed: Vec<usize>,
    /// The acquisition that ended the wait: (line, time, client).
    got: Option<(usize, u64, usize)>,
    heal_line: Option<usize>,
    /// The line of the last event read.
    last_line: usize,
}

/// The index of the first event at or after `t_us` (histories are in true-time order).
fn first_at(view: &RunView, t_us: u64) -> usize {
    let (mut lo, mut hi) = (0, view.history.len());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match view.history.get(mid).map(|e| e.t_us()) {
            Some(t) if t < t_us => lo = mid + 1,
            _ => hi = mid,
        }
    }
    lo
}

fn seen(view: &RunView, w: &Wait) -> Seen {
    let mut s = Seen::default();
    let mine = |c: usize| w.client.is_none_or(|me| me == c);
    let start = first_at(view, w.from_us);
    let mut line = start;
    view.history.walk_from(start, |e| {
        line += 1;
        if e.t_us() > w.to_us {
            return false;
        }
        s.last_line = line;
        match e {
            Event::Invoke(op)
                if op.op == OpKind::Acquire && op.lock.as_str() == w.lock && mine(op.client) =>
            {
                s.attempts.push((line, op.t_us, op.client));
            }
            Event::Fail(op) | Event::Info(op)
                if op.op == OpKind::Acquire && op.lock.as_str() == w.lock && mine(op.client) =>
            {
                s.failed.push(line);
            }
            Event::Ok(op)
                if op.op == OpKind::Acquire
                    && op.lock.as_str() == w.lock
                    && mine(op.client)
                    && s.got.is_none()
                    && w.acquired =>
            {
                s.got = Some((line, op.t_us, op.client));
            }
            Event::Heal { .. } => s.heal_line = Some(line),
            _ => {}
        }
        true
    });
    s
}

/// "line 12", "lines 12 and 40", "lines 12, 40 and 77", or for many the first two and
/// the last: "lines 12, 40 and 2301 (the first two and the last of 57)".
fn lines_clause(all: &[usize]) -> String {
    match all.len() > 3 {
        true => format!(
            "{} (the first two and the last of {})",
            lines(&picked(all)),
            all.len()
        ),
        false => lines(all),
    }
}

/// The lines a clause cites, as [`lines_clause`] picks them.
fn picked(lines: &[usize]) -> Vec<usize> {
    match lines {
        [a, b, _, _, ..] => vec![*a, *b, *lines.last().unwrap_or(b)],
        _ => lines.to_vec(),
    }
}

/// Explains one liveness finding.
pub fn explain(view: &RunView, l: &LivenessFinding) -> Story {
    let w = wait_of(view, l);
    let s = seen(view, &w);
    let mut cited: Vec<usize> = Vec::new();
    let who = match w.client {
        Some(c) => format!("client {c}"),
        None => "a client".to_string(),
    };
    let mut steps = Vec::new();
    if let Some(&(line, t_us, client)) = s.attempts.first() {
        let mode = match l {
            LivenessFinding::WriterStarvation { .. } => " for writing",
            _ => "",
        };
        let asker = match w.client {
            Some(_) => format!("client {client}"),
            None => {
                let mut clients: Vec<usize> = s.attempts.iter().map(|a| a.2).collect();
                clients.sort_unstable();
                clients.dedup();
                format!("{} {}", plural("client", clients.len()), list(&clients))
            }
        };
        let first = match w.client {
            Some(_) => format!(" (line {line})"),
            None => format!(", the first, client {client}, at line {line}"),
        };
        steps.push(Step {
            t_us,
            text: format!("{asker} {} {}{mode}{first}", ask_verb(w.client), w.lock),
        });
        cited.push(line);
    }
    if let Some(line) = s.heal_line {
        let t_us = view.heal_us.unwrap_or(w.from_us);
        steps.push(Step {
            t_us,
            text: format!("every fault has healed (line {line})"),
        });
        cited.push(line);
    }
    // Faults that acted on the waiting client(s) or any node in the window.
    let parties = Parties {
        clients: match w.client {
            Some(c) => vec![c],
            None => (0..view.clients).collect(),
        },
        nodes: (0..view.nodes).collect(),
    };
    let faults = super::causes::linked(view, &parties, w.from_us, w.to_us.max(w.from_us + 1));
    let told = fault_steps(view, &faults, w.from_us, w.to_us.max(w.from_us + 1));
    steps.extend(told.steps);
    steps.extend(told.after);
    cited.extend(faults.iter().map(|f| f.line));
    if !s.failed.is_empty() {
        let t_us = s.attempts.last().map_or(w.from_us, |a| a.1).max(w.from_us);
        steps.push(Step {
            t_us,
            text: format!(
                "{} of {}'s {} {} fail or time out ({})",
                match s.failed.len() == s.attempts.len() {
                    true => "all".to_string(),
                    false => s.failed.len().to_string(),
                },
                match w.client {
                    Some(_) => who.clone(),
                    None => "the clients".to_string(),
                },
                s.attempts.len(),
                plural("attempt", s.attempts.len()),
                lines_clause(&s.failed)
            ),
        });
        cited.extend(picked(&s.failed));
    }
    // Who held the lock meanwhile.
    let others: Vec<&crate::checker::Hold> = view
        .holds()
        .iter()
        .filter(|h| {
            h.lock.as_str() == w.lock
                && w.client.is_none_or(|c| h.client != c)
                && h.start_us < w.to_us
                && h.end_us > w.from_us
        })
        .collect();
    if !w.lock.is_empty() {
        let mut clauses = Vec::new();
        for mode in [
            crate::algorithm::Mode::Read,
            crate::algorithm::Mode::Write,
            crate::algorithm::Mode::Exclusive,
        ] {
            let of: Vec<&&crate::checker::Hold> = others.iter().filter(|h| h.mode == mode).collect();
            if of.is_empty() {
                continue;
            }
            let mut clients: Vec<usize> = of.iter().map(|h| h.client).collect();
            clients.sort_unstable();
            clients.dedup();
            let lines: Vec<usize> = of.iter().map(|h| h.ok_line).collect();
            cited.extend(picked(&lines));
            let how = match mode {
                crate::algorithm::Mode::Exclusive => String::new(),
                m => format!(
                    " for {}",
                    match m {
                        crate::algorithm::Mode::Read => "reading",
                        _ => "writing",
                    }
                ),
            };
            clauses.push(format!(
                "{} {} {}{how} {} {} ({})",
                plural("client", clients.len()),
                list(&clients),
                match clients.len() {
                    1 => "holds it",
                    _ => "hold it",
                },
                of.len(),
                plural("time", of.len()),
                lines_clause(&lines)
            ));
        }
        let text = match clauses.is_empty() {
            true => format!("no other client holds {} in this time", w.lock),
            false => format!("meanwhile {}", clauses.join("; ")),
        };
        steps.push(Step {
            t_us: others.first().map_or(w.from_us, |h| h.start_us.max(w.from_us)),
            text,
        });
    }
    match s.got {
        Some((line, t_us, client)) => {
            steps.push(Step {
                t_us,
                text: format!(
                    "client {client} acquires {} (line {line}), {} after it first asked",
                    w.lock,
                    span(t_us.saturating_sub(w.from_us))
                ),
            });
            cited.push(line);
        }
        None if !w.lock.is_empty() => steps.push(Step {
            t_us: w.to_us,
            text: match w.client {
                Some(_) => format!("{who} still has not got {}", w.lock),
                None => format!("nobody has got {}", w.lock),
            },
        }),
        None => {}
    }
    steps.sort_by_key(|st| st.t_us);
    cited.sort_unstable();
    cited.dedup();
    let first_line = cited.first().copied().unwrap_or(s.last_line.max(1));
    let last_line = cited.last().copied().unwrap_or(first_line).max(first_line);
    Story {
        lock: w.lock.to_string(),
        steps,
        overlap: super::banner::capitalize(&super::banner::liveness_sentence(l)),
        why: why(l, &others),
        first_line,
        last_line,
        anomaly: None,
        cited,
    }
}

fn ask_verb(client: Option<usize>) -> &'static str {
    match client {
        Some(_) => "asks for",
        None => "ask for",
    }
}

/// Why the wait is a finding, in the checker's terms.
fn why(l: &LivenessFinding, others: &[&crate::checker::Hold]) -> String {
    let writes = others
        .iter()
        .filter(|h| h.mode != crate::algorithm::Mode::Read)
        .count();
    let others = others.len();
    match l {
        LivenessFinding::WriterStarvation {
            bound_us,
            readers_busy_share,
            client,
            ..
        } => format!(
            "A writer gets the lock only while nobody holds it. Read holds covered {:.0}% of this wait{}, and none of client {client}'s attempts came at a moment the lock was free: it waited longer than the bound of {} (writer starvation).",
            readers_busy_share * 100.0,
            match writes {
                0 => String::new(),
                n => format!(" and other writers took the lock {n} {} in the rest", plural("time", n)),
            },
            span(*bound_us)
        ),
        LivenessFinding::Deadlock { bound_us, .. } => format!(
            "After the heal, keys left behind by earlier holders must expire and let the probe in within {} (the meta line's bound, from the ttl and the retries){}.",
            span(*bound_us),
            match others {
                0 => "; no client held the lock meanwhile, so nothing but a key left behind stood in its way",
                _ => "",
            }
        ),
        LivenessFinding::FaultTolerance { reachable_nodes, .. } => format!(
            "A majority of nodes ({}) was up and reachable from the client{}, and a lock that tolerates the faults of a minority should have granted it.",
            list(reachable_nodes),
            match others {
                0 => " and no other client held the lock",
                _ => "",
            }
        ),
        LivenessFinding::StuckAfterHeal { bound_us, .. } => format!(
            "Every fault had healed, so any key left behind should have expired and let someone in within {}.",
            span(*bound_us)
        ),
        LivenessFinding::NoProbe { .. } => {
            "The liveness probe runs once every client has finished its last operation; until one has, the run cannot say whether the lock is free again.".to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_lines_are_cited_by_their_first_two_and_last() {
        assert_eq!(lines_clause(&[7]), "line 7");
        assert_eq!(lines_clause(&[7, 9, 12]), "lines 7, 9 and 12");
        assert_eq!(
            lines_clause(&[7, 9, 12, 40]),
            "lines 7, 9 and 40 (the first two and the last of 4)"
        );
        assert_eq!(picked(&[7, 9, 12, 40]), vec![7, 9, 40]);
        let cited = crate::history::cut::cited_in(&lines_clause(&[7, 9, 12, 40]));
        assert_eq!(
            cited,
            vec![7..=7, 9..=9, 40..=40],
            "the cut keeps what the clause names"
        );
    }
}
