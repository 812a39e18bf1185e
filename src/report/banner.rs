//! The verdict banner at the top of a run page: one line that is the worst of the three
//! judges (lock safety, the guarded resource, liveness; and "not exercised" when the
//! run proved nothing), naming what went wrong: the anomaly (when the caller has named
//! it), the two holders, the lock, the fault and the time. Below it, one line per judge,
//! so a green lock verdict never hides a red resource or liveness one.
//!
//! Everything comes from summary.json (over all seeds) and the reported seed's findings.

use super::causes::{linked, Parties};
use super::view::RunView;
use super::words::{esc, fault_sentence, plural, secs, span};
use crate::checker::LivenessFinding;
use serde_json::Value;

/// How bad a judge's verdict is; the banner shows the worst.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Safe,
    NotExercised,
    NotLive,
    Unsafe,
}

impl Severity {
    pub fn word(self) -> &'static str {
        match self {
            Severity::Safe => "SAFE",
            Severity::NotExercised => "NOT EXERCISED",
            Severity::NotLive => "NOT LIVE",
            Severity::Unsafe => "UNSAFE",
        }
    }

    /// The CSS class of the banner (red for a failure, amber for a run that proved
    /// nothing, green for safe).
    pub fn class(self) -> &'static str {
        match self {
            Severity::Safe => "safe",
            Severity::NotExercised => "notex",
            Severity::NotLive | Severity::Unsafe => "unsafe",
        }
    }
}

/// One judge's line.
pub struct Judge {
    pub name: &'static str,
    pub severity: Severity,
    pub text: String,
}

/// The banner of a run page.
pub struct Banner {
    pub severity: Severity,
    /// What went wrong (or that nothing did), in one sentence.
    pub headline: String,
    pub judges: Vec<Judge>,
    /// "as the scenario expects: lock unsafe" (or "NOT as the library's prediction: lock
    /// safe" in a matrix cell) and whether it was met, when the run states an expectation.
    pub expectation: Option<(String, bool)>,
    /// The liveness findings set aside (they overlap a stall of lockstorm's own driver),
    /// in one sentence, so a reader knows they exist.
    pub set_aside: Option<String>,
}

/// The sentence about liveness findings set aside, if there are any.
fn set_aside_sentence(view: &RunView) -> Option<String> {
    let aside = &view.findings.liveness_set_aside;
    let first = aside.first()?;
    Some(format!(
        "{} liveness {} set aside, not counted: {} overlapped a stall of lockstorm's own driver on the real backend, so the wait may be lockstorm's, not the lock's (the first: {}).",
        aside.len(),
        plural("finding", aside.len()),
        if aside.len() == 1 { "it" } else { "each" },
        liveness_sentence(first)
    ))
}

fn seeds(summary: &Value) -> &[Value] {
    summary["seeds"].as_array().map_or(&[][..], Vec::as_slice)
}

fn count(summary: &Value, bad: impl Fn(&Value) -> bool) -> usize {
    seeds(summary).iter().filter(|s| bad(s)).count()
}

/// "in 3 of 10 seeds" (or "in the reported seed" for a lone history).
fn of_seeds(n: usize, total: usize) -> String {
    if total <= 1 {
        "in the reported seed".into()
    } else {
        format!("in {n} of {total} seeds")
    }
}

/// The faults that acted on `parties` between `from_us` and `to_us`, as a clause. Where
/// the finding has a story, they are the faults it tells: its window starts when the
/// first holder asked, and a worker's nodes, which its `ok` does not name, come from the
/// node lines, so a fault that acted on them is never left out here.
fn faults_clause(view: &RunView, parties: &Parties, from_us: u64, to_us: u64) -> String {
    let same = |clients: &[usize]| {
        let mut c = clients.to_vec();
        c.sort_unstable();
        c.dedup();
        c == parties.clients
    };
    let story = view
        .violations()
        .iter()
        .find(|v| {
            same(&[v.first.client, v.second.client])
                && v.first.start_us.min(v.second.start_us) == from_us
                && v.overlap_end_us == to_us
        })
        .map(|v| {
            let told = super::narrative::told(view, v);
            let known = !told.violation.first.nodes.is_empty() && !told.violation.second.nodes.is_empty();
            (told.faults, told.from_us, known)
        })
        .or_else(|| {
            let rv = view
                .worst
                .stale
                .iter()
                .find(|rv| same(&[rv.client, rv.holder.client]) && rv.write_us + 1 == to_us)?;
            let told = super::stale::told(view, rv);
            let known = told.holds.iter().all(|h| !h.nodes.is_empty());
            (told.faults, told.from_us, known).into()
        });
    let (mut faults, from_us, nodes_known) =
        story.unwrap_or_else(|| (linked(view, parties, from_us, to_us), from_us, true));
    // Faults that began inside the window first: one already under way when the first
    // hold began (a partition from t=0) is the background, not the trigger.
    faults.sort_by_key(|w| (w.start_us < from_us, w.id));
    if faults.is_empty() {
        let on_a_node = view
            .faults
            .iter()
            .any(|w| super::causes::active_within(w, from_us, to_us) && !w.fault.targets().0.is_empty());
        if !nodes_known && on_a_node {
            return "No fault acted on the two clients; the history does not say which nodes held their keys, \
                    so a fault on a node may have."
                .into();
        }
        return "No fault acted on them: the lock's own logic let it happen.".into();
    }
    let told: Vec<String> = faults
        .iter()
        .take(3)
        .map(|w| {
            format!(
                "#{} at t={}: {}",
                w.id,
                secs(w.start_us),
                fault_sentence(&w.fault, view.clients, view.deployment)
            )
        })
        .collect();
    let more = faults.len().saturating_sub(told.len());
    let mut s = format!("Fault {}", told.join("; "));
    if more > 0 {
        s.push_str(&format!(" (and {more} more)"));
    }
    s.push('.');
    s
}

/// What a safe verdict rests on: the seeds exercised (of how many, and how many it
/// needed), the holds of the reported seed's workload and what its faults touched, and
/// the share of acquisitions whose outcome stayed unknown.
fn rests_on(summary: &Value, view: &RunView) -> String {
    let f = view.findings;
    let e = &summary["exercised"];
    // Over every seed: the seeds exercised, the holds per seed and the calls (issue 41:
    // a safe verdict of 3 holds per seed must say so).
    let over_seeds = match (e["seeds"].as_u64(), e["of"].as_u64(), e["needed"].as_u64()) {
        (Some(k), Some(n), Some(m)) if n > 1 => {
            let exercised = crate::outcome::Exercised {
                seeds: k as usize,
                of: n as usize,
                needed: m as usize,
            };
            let count = |s: &Value, key: &str| s["stats"][key].as_u64().unwrap_or(0);
            let all = crate::outcome::RestsOn::of_counts(
                exercised,
                seeds(summary)
                    .iter()
                    .map(|s| (count(s, "acquires"), count(s, "acquired"), count(s, "unknown"))),
            );
            format!(
                "{} ({m} needed); over all seeds {}; ",
                exercised.words(),
                all.calls_words()
            )
        }
        _ => String::new(),
    };
    let (touched, started) = f.exercise.exercised();
    let faults = match started {
        0 => "no fault".to_string(),
        n => format!(
            "{touched} of {n} {} touched the lock where it could break",
            plural("fault", n)
        ),
    };
    let unknown = match f.stats.acquires {
        0 => String::new(),
        n => format!(
            ", {:.0}% of {n} acquisitions with an unknown outcome",
            f.stats.unknown as f64 * 100.0 / n as f64
        ),
    };
    let probe = view.meta.as_ref().and_then(|m| m.probe_client);
    let holds = f.holds.iter().filter(|h| Some(h.client) != probe).count();
    format!(
        "It rests on: {over_seeds}in the reported seed {holds} workload {} ({} successful {}), {faults}{unknown}",
        plural("hold", holds),
        f.exercise.acquired,
        plural("acquisition", f.exercise.acquired as usize),
    )
}

/// The mitigations a deployment ran with (the meta line, history line 1), and the window
/// each closes and leaves open, as a sentence to follow the verdict's (". The ..."), for
/// a verdict without a story to say it in (issue 39): a safe or unexercised run on a
/// Sentinel or cluster deployment. Nothing for a run that does not record them (the
/// simulator, older histories).
fn mitigations_words(view: &RunView) -> String {
    let Some(m) = view.meta.as_ref().and_then(|m| m.mitigations) else {
        return String::new();
    };
    let (k, lag) = (m.min_replicas_to_write, m.min_replicas_max_lag_s);
    let mut s = match k {
        0 => ". The mitigations in force (history line 1): min-replicas-to-write 0, Redis's default, so a master takes a SET without counting a replica".to_string(),
        k => format!(
            ". The mitigations in force (history line 1): min-replicas-to-write {k} with min-replicas-max-lag {lag} s: a master cut off from its replicas refuses SETs once the cut is {lag} to {} s old (the window it closes), and takes them before, SETs a failover can lose (the window it leaves open)",
            lag + 1
        ),
    };
    s.push_str(&match m.wait_replicas {
        Some(0) => "; the lock sends no WAIT after its SET.".to_string(),
        Some(w) => format!(
            "; the lock WAITs for {w} {} after its SET, so a hold starts only once {w} {} the key (closed), but a failover may promote a replica that has not (open).",
            plural("replica", w as usize),
            if w == 1 { "has" } else { "have" }
        ),
        None => "; whether the library sends WAIT after its SET is its own (lockstorm does not see its calls).".to_string(),
    });
    s
}

/// A liveness finding as a sentence.
pub fn liveness_sentence(l: &LivenessFinding) -> String {
    match l {
        LivenessFinding::Deadlock {
            lock,
            probe_start_us,
            waited_us,
            bound_us,
            acquired,
        } => format!(
            "after the heal, the probe asked for {lock} at t={} and {} (the bound is {})",
            secs(*probe_start_us),
            if *acquired {
                format!("got it only after {}", span(*waited_us))
            } else {
                format!("never got it in {}", span(*waited_us))
            },
            span(*bound_us)
        ),
        LivenessFinding::NoProbe { heal_us } => format!(
            "every fault had healed at t={}, but the liveness probe never ran: some client never finished its last operation",
            secs(*heal_us)
        ),
        LivenessFinding::FaultTolerance {
            client,
            lock,
            invoke_us,
            end_us,
            reachable_nodes,
        } => format!(
            "client {client} failed an uncontended acquire of {lock} from t={} to t={} while a majority of nodes ({}) was up and reachable from it",
            secs(*invoke_us),
            secs(*end_us),
            super::words::list(reachable_nodes)
        ),
        LivenessFinding::StuckAfterHeal {
            lock,
            heal_us,
            bound_us,
        } => format!(
            "every fault had healed at t={}, clients asked for {lock}, and nobody got it within {}",
            secs(*heal_us),
            span(*bound_us)
        ),
        LivenessFinding::WriterStarvation {
            lock,
            client,
            since_us,
            waited_us,
            bound_us,
            acquired,
            readers_busy_share,
        } => format!(
            "writer client {client} asked for {lock} at t={} and {} while readers held it {:.0}% of that time (the bound is {})",
            secs(*since_us),
            if *acquired {
                format!("waited {}", span(*waited_us))
            } else {
                format!("never got it ({} and counting)", span(*waited_us))
            },
            readers_busy_share * 100.0,
            span(*bound_us)
        ),
    }
}

/// Judges the run. `anomaly` is the name of the first finding's anomaly (issue 22's
/// classifier), when the caller has one.
pub fn judge(summary: &Value, view: &RunView, anomaly: Option<&str>) -> Banner {
    let f = view.findings;
    let total = seeds(summary).len().max(1);
    let verdict = summary["verdict"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| if f.is_safe() { "safe" } else { "unsafe" }.into());

    // Lock safety.
    let unsafe_seeds = count(summary, |s| s["safe"] == Value::Bool(false)).max(usize::from(!f.is_safe()));
    let lock = match verdict.as_str() {
        "unsafe" => Judge {
            name: "Lock safety",
            severity: Severity::Unsafe,
            text: format!(
                "UNSAFE {}: two clients held a lock at once ({} {} in the reported seed)",
                of_seeds(unsafe_seeds, total),
                f.violations.len(),
                plural("violation", f.violations.len())
            ),
        },
        "not_exercised" => Judge {
            name: "Lock safety",
            severity: Severity::NotExercised,
            text: format!(
                "NOT EXERCISED: no violation, but the run proved nothing ({})",
                summary["not_exercised"]
                    .as_str()
                    .unwrap_or("the faults met no hold")
            ) + &mitigations_words(view),
        },
        "unknown" => Judge {
            name: "Lock safety",
            severity: Severity::NotExercised,
            text: "UNKNOWN: no seed finished".into(),
        },
        _ => Judge {
            name: "Lock safety",
            severity: Severity::Safe,
            text: format!(
                "safe: no two clients held a lock at once, {}. {}",
                if total > 1 {
                    format!("in all {total} seeds")
                } else {
                    "in the reported seed".into()
                },
                rests_on(summary, view)
            ) + &mitigations_words(view),
        },
    };

    // The guarded resource.
    let stale = f.resource_violations.len();
    let regressions = f.fence_regressions.len();
    let resource_seeds = count(summary, |s| s["resource_violations"].as_u64().unwrap_or(0) > 0);
    let resource_unsafe = summary["resource_verdict"] == "unsafe" || stale + regressions > 0;
    let resource = if f.resource.writes == 0 && !resource_unsafe {
        Judge {
            name: "Guarded resource",
            severity: Severity::Safe,
            text: "not used: no client wrote to it".into(),
        }
    } else if resource_unsafe {
        Judge {
            name: "Guarded resource",
            severity: Severity::Unsafe,
            text: format!(
                "UNSAFE {}: {stale} stale {} accepted, {} rejected for a stale token, {regressions} fencing {} went backwards (reported seed)",
                of_seeds(resource_seeds.max(1), total),
                plural("write", stale),
                f.resource.rejected,
                plural("token", regressions)
            ),
        }
    } else {
        Judge {
            name: "Guarded resource",
            severity: Severity::Safe,
            text: format!(
                "safe: no stale write accepted ({} writes, {} rejected for a stale token in the reported seed)",
                f.resource.writes, f.resource.rejected
            ),
        }
    };

    // Liveness.
    let not_live_seeds = count(summary, |s| s["live"] == Value::Bool(false));
    let live = summary["live"].as_bool().unwrap_or_else(|| f.is_live()) && f.is_live();
    let liveness = if live {
        Judge {
            name: "Liveness",
            severity: Severity::Safe,
            text: "live: every lock was acquirable again in time after the heal, and waits stayed bounded"
                .into(),
        }
    } else {
        Judge {
            name: "Liveness",
            severity: Severity::NotLive,
            text: format!(
                "FAILED {}: {}",
                of_seeds(not_live_seeds.max(1), total),
                view.worst.liveness.first().map_or_else(
                    || "a seed other than the reported one".into(),
                    |l| liveness_sentence(l)
                )
            ),
        }
    };

    let judges = vec![lock, resource, liveness];
    let severity = judges.iter().map(|j| j.severity).max().unwrap_or(Severity::Safe);
    let named = |what: String| match anomaly {
        Some(a) => format!("{a}: {what}"),
        None => what,
    };
    let headline = if let Some(v) = view.violations().first() {
        let holds = [&v.first, &v.second];
        let parties = super::narrative::parties(&holds);
        named(format!(
            "clients {} and {} both held {} from t={} to t={} ({}). {}",
            v.first.client,
            v.second.client,
            v.lock,
            secs(v.overlap_start_us),
            secs(v.overlap_end_us),
            span(v.overlap_us()),
            faults_clause(
                view,
                &parties,
                v.first.start_us.min(v.second.start_us),
                v.overlap_end_us
            )
        ))
    } else if let Some(rv) = view.worst.stale.first() {
        let parties = Parties {
            clients: {
                let mut c = vec![rv.client, rv.holder.client];
                c.sort_unstable();
                c.dedup();
                c
            },
            nodes: Vec::new(),
        };
        let from = rv.hold_end_us.unwrap_or(rv.write_us).min(rv.holder.start_us);
        named(format!(
            "the guarded resource accepted client {}'s write to {} at t={}{}, {}. {}",
            rv.client,
            rv.lock,
            secs(rv.write_us),
            rv.hold_end_us
                .map_or(" with no hold behind it".into(), |e| format!(
                    ", after its hold ended at t={}",
                    secs(e)
                )),
            super::stale::against(rv),
            faults_clause(view, &parties, from, rv.write_us + 1)
        ))
    } else if let Some(r) = view.worst.regressions.first() {
        named(format!(
            "fencing tokens went backwards on {}: client {}'s hold from t={} got token {}, not above the token {} of client {}'s hold that ended at t={}; its late writes would get through.",
            r.lock,
            r.later.client,
            secs(r.later.start_us),
            r.later.fence.unwrap_or(0),
            r.earlier.fence.unwrap_or(0),
            r.earlier.client,
            secs(r.earlier.end_us)
        ))
    } else if severity == Severity::Unsafe {
        "a seed other than the reported one was unsafe: see the seeds below.".into()
    } else if let (false, Some(l)) = (live, view.worst.liveness.first()) {
        named(format!("{}.", liveness_sentence(l)))
    } else if severity == Severity::NotLive {
        "a seed other than the reported one failed liveness: see the seeds below.".into()
    } else if severity == Severity::NotExercised {
        format!(
            "no violation, but the run proved nothing: {}.",
            summary["not_exercised"].as_str().unwrap_or("no seed finished")
        )
    } else {
        format!(
            "no two clients held a lock at once {}, the guarded resource took no stale write, and every lock was acquirable again after the heal.",
            if total > 1 {
                format!("in any of {total} seeds")
            } else {
                "in the reported seed".into()
            }
        )
    };
    let expectation = summary["expect"].as_str().map(|e| {
        let met = summary["as_expected"].as_bool().unwrap_or(true);
        let by = match summary["expect_by"].as_str() {
            Some("prediction") => crate::scenario::ExpectBy::Prediction,
            _ => crate::scenario::ExpectBy::Scenario,
        };
        let mut said = format!("{}: lock {e}", by.verdict_words(met));
        if let Some(r) = summary["expect_resource"].as_str() {
            said.push_str(&format!(", resource {r}"));
        }
        if summary["expect_live"] == Value::Bool(false) {
            said.push_str(", not live");
        }
        (said, met)
    });
    Banner {
        severity,
        headline,
        judges,
        expectation,
        set_aside: set_aside_sentence(view),
    }
}

impl Banner {
    /// The banner as HTML: the worst verdict and its sentence, then the three judges.
    pub fn html(&self) -> String {
        let miss = match &self.expectation {
            Some((_, false)) => " miss",
            _ => "",
        };
        let expectation = match &self.expectation {
            Some((e, _)) => format!(" <span class=expect>({})</span>", esc(e)),
            None => String::new(),
        };
        let mut h = format!(
            "<div class=\"banner {}{miss}\" id=\"verdict\"><p class=headline><b>{}</b>{expectation}</p><p class=what>{}</p><ul class=judges>",
            self.severity.class(),
            self.severity.word(),
            esc(&capitalize(&self.headline))
        );
        for j in &self.judges {
            h.push_str(&format!(
                "<li class=\"{}\"><b>{}:</b> {}</li>",
                j.severity.class(),
                j.name,
                esc(&j.text)
            ));
        }
        h.push_str("</ul>");
        if let Some(aside) = &self.set_aside {
            h.push_str(&format!("<p class=aside>{}</p>", esc(aside)));
        }
        h.push_str("</div>\n");
        h
    }
}

pub(super) fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::judge;
    use crate::checker::{check, LivenessFinding};
    use crate::report::view::RunView;

    #[test]
    fn liveness_findings_set_aside_are_one_sentence_in_the_banner() {
        let mut f = check(&[]).unwrap();
        let summary = serde_json::json!({"verdict": "safe", "live": true});
        let view = RunView::new(&[], &f);
        assert_eq!(
            judge(&summary, &view, None).set_aside,
            None,
            "none set aside, no sentence"
        );
        f.liveness_set_aside.push(LivenessFinding::Deadlock {
            lock: "L0".into(),
            probe_start_us: 5_000_000,
            waited_us: 3_000_000,
            bound_us: 2_000_000,
            acquired: true,
        });
        let view = RunView::new(&[], &f);
        let banner = judge(&summary, &view, None);
        let said = banner.set_aside.clone().expect("a sentence");
        assert!(said.starts_with("1 liveness finding set aside"), "{said}");
        assert!(
            said.contains("stall of lockstorm's own driver") && said.contains("L0"),
            "{said}"
        );
        assert!(banner
            .html()
            .contains("<p class=aside>1 liveness finding set aside"));
        assert_eq!(banner.severity, super::Severity::Safe, "set aside, not counted");
    }

    #[test]
    fn a_safe_banner_says_the_holds_per_seed_and_the_calls_over_every_seed() {
        let f = check(&[]).unwrap();
        let view = RunView::new(&[], &f);
        let seed = |acquires: u64, acquired: u64, unknown: u64| serde_json::json!({"safe": true, "live": true, "stats": {"acquires": acquires, "acquired": acquired, "unknown": unknown}});
        let summary = serde_json::json!({
            "verdict": "safe", "live": true, "expect": "safe", "as_expected": true,
            "exercised": {"seeds": 3, "of": 3, "needed": 3},
            "seeds": [seed(4, 3, 0), seed(5, 4, 1), seed(4, 4, 0)],
        });
        let banner = judge(&summary, &view, None);
        let lock = &banner.judges[0].text;
        assert!(
            lock.contains(
                "It rests on: 3 of 3 seeds exercised (3 needed); over all seeds 11 holds (3–4 per seed) of 13 \
                 acquire calls, 1 of them (7.7%) of unknown outcome; in the reported seed"
            ),
            "{lock}"
        );
    }

    #[test]
    fn a_safe_deployment_banner_names_the_mitigations_in_force_and_their_windows() {
        use crate::history::Event;
        let f = check(&[]).unwrap();
        let lock = |mitigations: serde_json::Value, verdict: &str| {
            let meta: Event = serde_json::from_value(serde_json::json!({
                "type": "meta", "t_us": 0, "scenario": "hand", "seed": 7, "algorithm": "single",
                "nodes": 1, "clients": 2, "ttl_ms": 10_000, "liveness_bound_us": 1_000_000,
                "deployment": "sentinel", "mitigations": mitigations}))
            .unwrap();
            let view = RunView::new(std::slice::from_ref(&meta), &f);
            let summary = serde_json::json!({"verdict": verdict, "live": true});
            judge(&summary, &view, None).judges[0].text.clone()
        };
        let off = lock(
            serde_json::json!({"min_replicas_to_write": 0, "min_replicas_max_lag_s": 10, "wait_replicas": 0}),
            "safe",
        );
        assert!(
            off.ends_with("no fault. The mitigations in force (history line 1): min-replicas-to-write 0, Redis's default, so a master takes a SET without counting a replica; the lock sends no WAIT after its SET."),
            "{off}"
        );
        let min = lock(
            serde_json::json!({"min_replicas_to_write": 1, "min_replicas_max_lag_s": 1}),
            "not_exercised",
        );
        assert!(min.starts_with("NOT EXERCISED"), "{min}");
        assert!(
            min.ends_with("min-replicas-to-write 1 with min-replicas-max-lag 1 s: a master cut off from its replicas refuses SETs once the cut is 1 to 2 s old (the window it closes), and takes them before, SETs a failover can lose (the window it leaves open); whether the library sends WAIT after its SET is its own (lockstorm does not see its calls)."),
            "{min}"
        );
        let wait = lock(
            serde_json::json!({"min_replicas_to_write": 0, "min_replicas_max_lag_s": 10, "wait_replicas": 1}),
            "safe",
        );
        assert!(
            wait.ends_with("; the lock WAITs for 1 replica after its SET, so a hold starts only once 1 has the key (closed), but a failover may promote a replica that has not (open)."),
            "{wait}"
        );
        let view = RunView::new(&[], &f);
        let plain = judge(&serde_json::json!({"verdict": "safe", "live": true}), &view, None);
        assert!(
            !plain.judges[0].text.contains("mitigations"),
            "a run without a deployment says nothing of them"
        );
    }

    #[test]
    fn the_banner_names_whose_expectation_the_run_is_measured_against() {
        let f = check(&[]).unwrap();
        let view = RunView::new(&[], &f);
        let of = |by: Option<&str>, met: bool| {
            let mut summary = serde_json::json!({"verdict": "unsafe", "live": true, "expect": "safe", "as_expected": met, "expect_resource": "unsafe"});
            if let Some(by) = by {
                summary["expect_by"] = by.into();
            }
            judge(&summary, &view, None).html()
        };
        assert!(of(None, false)
            .contains("<span class=expect>(NOT as the scenario expects: lock safe, resource unsafe)</span>"));
        assert!(of(Some("scenario"), true)
            .contains("<span class=expect>(as the scenario expects: lock safe, resource unsafe)</span>"));
        assert!(of(Some("prediction"), false).contains(
            "<span class=expect>(NOT as the library&#39;s prediction: lock safe, resource unsafe)</span>"
        ));
    }
}
