//! The analysis index's answer to the Redlock debate (Kleppmann, antirez), derived from
//! the cases it indexes: which scenarios of Redlock as specified broke mutual exclusion
//! and under which faults, which held, what happened to a guarded resource with and
//! without fencing tokens, how the deliberately broken variants fared, and what was not
//! as its scenario expects. Nothing here is prose about a scenario by name: every
//! clause lists the cases a rule over their results picks, so a regenerated analysis
//! says what its runs show. `super::analysis` renders the clauses as markdown and HTML.

use super::case::Case;

/// What a scenario's lock is, as the answer groups them: decided from the scenario's
/// algorithm settings ([`crate::algorithm::AlgorithmConfig::departures`]), never from
/// its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// A Redlock (exclusive, read-write or fair) with every setting as its seed
    /// specifies it; faults, timings and persistence are the scenario's, not the lock's.
    Redlock,
    /// The single-instance lock (one node, or a master with a replica) as specified.
    SingleInstance,
    /// A setting departs from the seed's algorithm on purpose: a known client mistake.
    Broken,
}

impl Group {
    pub fn of(c: &Case) -> Group {
        if !c.departures.is_empty() {
            Group::Broken
        } else if c.algorithm == "single" {
            Group::SingleInstance
        } else {
            Group::Redlock
        }
    }

    /// The words of the index's column.
    pub fn words(self, c: &Case) -> String {
        match self {
            Group::Redlock => "Redlock as specified".into(),
            Group::SingleInstance => "single instance as specified".into(),
            Group::Broken => format!("broken on purpose: {}", c.departures.join("; ")),
        }
    }
}

/// One scenario a clause names, with what the clause says of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    pub name: String,
    pub detail: String,
}

/// One sentence of the answer: its lead, then the scenarios it names (none: the lead
/// is the whole sentence).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    pub lead: String,
    pub items: Vec<Item>,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// "under node crashes with power loss (AOF everysec), partitions", or "with no fault".
fn under(c: &Case) -> String {
    if c.faults.is_empty() {
        "with no fault".into()
    } else {
        format!("under {}", c.faults.join(", "))
    }
}

/// "key lost on restart in 10 of 10 seeds", the anomaly of the reported seed's first
/// violation when it has one.
fn unsafe_detail(c: &Case) -> String {
    let anomaly = c
        .story
        .as_ref()
        .and_then(|s| s.anomaly.as_ref())
        .map_or_else(|| "two holders at once".to_string(), |n| n.name());
    format!(
        "{anomaly} in {} of {} seeds, {}",
        c.unsafe_seeds,
        c.seeds,
        under(c)
    )
}

fn item(c: &Case, detail: String) -> Item {
    Item {
        name: c.name.clone(),
        detail,
    }
}

/// The answer, clause by clause (see the module doc).
pub fn answer(cases: &[Case]) -> Vec<Clause> {
    let mut out = Vec::new();
    let of = |g: Group| -> Vec<&Case> { cases.iter().filter(|c| Group::of(c) == g).collect() };
    let redlock = of(Group::Redlock);
    if !redlock.is_empty() {
        let broke: Vec<&&Case> = redlock.iter().filter(|c| c.verdict == "unsafe").collect();
        let held: Vec<&&Case> = redlock.iter().filter(|c| c.verdict == "safe").collect();
        let idle: Vec<&&Case> = redlock.iter().filter(|c| c.verdict == "not_exercised").collect();
        out.push(Clause {
            lead: if broke.is_empty() {
                format!(
                    "Redlock as specified kept mutual exclusion in every one of its {}.",
                    plural(redlock.len(), "scenario", "scenarios")
                )
            } else {
                format!(
                    "Redlock as specified broke mutual exclusion in {} of its {}:",
                    broke.len(),
                    plural(redlock.len(), "scenario", "scenarios")
                )
            },
            items: broke.iter().map(|c| item(c, unsafe_detail(c))).collect(),
        });
        if !held.is_empty() && !broke.is_empty() {
            out.push(Clause {
                lead: format!("It kept mutual exclusion in the other {}:", held.len()),
                items: held
                    .iter()
                    .map(|c| item(c, format!("{}; {}", under(c), c.rests_on.short())))
                    .collect(),
            });
        }
        if !idle.is_empty() {
            out.push(Clause {
                lead: "Its runs proved nothing (no violation, but not exercised) in:".into(),
                items: idle
                    .iter()
                    .map(|c| item(c, c.not_exercised.clone().unwrap_or_default()))
                    .collect(),
            });
        }
    }
    // The guarded resource: a lock that was safe, and writes that were not.
    let stale: Vec<&Case> = cases
        .iter()
        .filter(|c| c.verdict != "unsafe" && c.stale_writes > 0)
        .collect();
    let (unfenced, fenced): (Vec<&Case>, Vec<&Case>) = stale.iter().partition(|c| c.fence_rounds.is_none());
    if !unfenced.is_empty() {
        out.push(Clause {
            lead: "Without fencing tokens, a lock that held let stale writes through: the guarded resource accepted a \
                   write from a holder whose hold had ended, while another client held the lock, in:"
                .into(),
            items: unfenced
                .iter()
                .map(|c| {
                    item(
                        c,
                        format!(
                            "{} in the reported seed, {}",
                            plural(c.stale_writes, "stale write", "stale writes"),
                            under(c)
                        ),
                    )
                })
                .collect(),
        });
    }
    if !fenced.is_empty() {
        out.push(Clause {
            lead: "With fencing tokens, stale writes still got through in:".into(),
            items: fenced
                .iter()
                .map(|c| {
                    item(
                        c,
                        format!(
                            "{} in the reported seed",
                            plural(c.stale_writes, "stale write", "stale writes")
                        ),
                    )
                })
                .collect(),
        });
    }
    let kept: Vec<&Case> = cases
        .iter()
        .filter(|c| c.fence_rounds.is_some() && c.resource == "safe")
        .collect();
    if !kept.is_empty() {
        out.push(Clause {
            lead: "With fencing tokens the guarded resource stayed safe (every stale write rejected) in:"
                .into(),
            items: kept
                .iter()
                .map(|c| item(c, format!("tokens issued in {}, {}", rounds(c), under(c))))
                .collect(),
        });
    }
    let backwards: Vec<&Case> = cases.iter().filter(|c| c.fence_regressions > 0).collect();
    if !backwards.is_empty() {
        out.push(Clause {
            lead: "Fencing tokens went backwards (a later hold got a smaller token than an earlier one) in:"
                .into(),
            items: backwards
                .iter()
                .map(|c| {
                    item(
                        c,
                        format!(
                            "tokens issued in {}: {} in the reported seed, {}",
                            rounds(c),
                            plural(c.fence_regressions, "regression", "regressions"),
                            under(c)
                        ),
                    )
                })
                .collect(),
        });
    }
    let broken = of(Group::Broken);
    if !broken.is_empty() {
        let broke_n = broken
            .iter()
            .filter(|c| c.verdict == "unsafe" || c.resource == "unsafe")
            .count();
        let all_expected = broken.iter().all(|c| c.as_expected);
        out.push(Clause {
            lead: format!(
                "The deliberately broken variants (a setting departs from the seed's algorithm) broke mutual \
                 exclusion or the guarded resource in {broke_n} of {}{}:",
                broken.len(),
                if all_expected && broke_n == broken.len() {
                    ", each as its scenario expects: they show that lockstorm catches each mistake, not that \
                     Redlock as specified is unsafe"
                } else {
                    ""
                }
            ),
            items: broken
                .iter()
                .map(|c| {
                    let found = match (c.verdict, c.resource) {
                        ("unsafe", _) => unsafe_detail(c),
                        (lock, "unsafe") => format!(
                            "lock {}, guarded resource unsafe ({}), {}",
                            lock.replace('_', " "),
                            resource_findings(c),
                            under(c)
                        ),
                        (lock, _) => format!("{}, {}", lock.replace('_', " "), under(c)),
                    };
                    item(c, format!("{}: {found}", c.departures.join("; ")))
                })
                .collect(),
        });
    }
    let single = of(Group::SingleInstance);
    if !single.is_empty() {
        out.push(Clause {
            lead: "The single-instance lock (not Redlock):".into(),
            items: single
                .iter()
                .map(|c| {
                    let found = match c.verdict {
                        "unsafe" => format!("unsafe: {}", unsafe_detail(c)),
                        other => format!("{}, {}", other.replace('_', " "), under(c)),
                    };
                    item(c, found)
                })
                .collect(),
        });
    }
    let not_live: Vec<&Case> = cases.iter().filter(|c| !c.live).collect();
    if !not_live.is_empty() {
        out.push(Clause {
            lead: "Not live (a lock not acquirable again in time, a waiter starved, or an acquisition failed with a \
                   majority up):"
                .into(),
            items: not_live.iter().map(|c| item(c, c.liveness.clone())).collect(),
        });
    }
    let missed: Vec<&Case> = cases.iter().filter(|c| !c.as_expected).collect();
    out.push(Clause {
        lead: if missed.is_empty() {
            "Every verdict is as its scenario expects.".into()
        } else {
            "NOT as the scenario expects:".into()
        },
        items: missed
            .iter()
            .map(|c| {
                item(
                    c,
                    format!(
                        "the scenario expects {}; found {}",
                        c.expect,
                        c.verdict.replace('_', " ")
                    ),
                )
            })
            .collect(),
    });
    out
}

/// "2 stale writes, 9 fencing regressions in the reported seed".
fn resource_findings(c: &Case) -> String {
    let mut parts = Vec::new();
    if c.stale_writes > 0 {
        parts.push(plural(c.stale_writes, "stale write", "stale writes"));
    }
    if c.fence_regressions > 0 {
        parts.push(plural(
            c.fence_regressions,
            "fencing regression",
            "fencing regressions",
        ));
    }
    if parts.is_empty() {
        "on a seed other than the reported one".into()
    } else {
        format!("{} in the reported seed", parts.join(", "))
    }
}

/// "one round", "two rounds".
fn rounds(c: &Case) -> &'static str {
    match c.fence_rounds {
        Some(1) => "one round",
        _ => "two rounds",
    }
}

#[cfg(test)]
mod tests {
    use super::super::analysis::tests::case;
    use super::*;

    fn clause<'a>(answer: &'a [Clause], lead: &str) -> &'a Clause {
        answer
            .iter()
            .find(|c| c.lead.starts_with(lead))
            .unwrap_or_else(|| panic!("no clause {lead}: {answer:#?}"))
    }

    fn names(c: &Clause) -> Vec<&str> {
        c.items.iter().map(|i| i.name.as_str()).collect()
    }

    #[test]
    fn redlock_as_specified_is_answered_apart_from_the_broken_variants() {
        let mut jump = case("node-clock-jump");
        jump.verdict = "unsafe";
        jump.unsafe_seeds = 10;
        jump.faults = vec!["partitions".into(), "node clock jumps".into()];
        let mut partition = case("partition");
        partition.faults = vec!["random partitions".into()];
        let mut del = case("release-del");
        del.verdict = "unsafe";
        del.unsafe_seeds = 10;
        del.algorithm = "single";
        del.departures = vec!["release by a plain DEL".into()];
        let mut single = case("single");
        single.algorithm = "single";
        let cases = [jump, partition, del, single];
        let a = answer(&cases);
        let broke = clause(
            &a,
            "Redlock as specified broke mutual exclusion in 1 of its 2 scenarios",
        );
        assert_eq!(names(broke), ["node-clock-jump"]);
        assert!(
            broke.items[0]
                .detail
                .ends_with("in 10 of 10 seeds, under partitions, node clock jumps"),
            "{broke:?}"
        );
        assert_eq!(
            names(clause(&a, "It kept mutual exclusion in the other 1")),
            ["partition"]
        );
        let broken = clause(&a, "The deliberately broken variants");
        assert!(
            broken.lead.contains("in 1 of 1, each as its scenario expects"),
            "{broken:?}"
        );
        assert_eq!(names(broken), ["release-del"]);
        assert!(broken.items[0].detail.starts_with("release by a plain DEL: "));
        assert_eq!(names(clause(&a, "The single-instance lock")), ["single"]);
        assert_eq!(clause(&a, "Every verdict").items, []);
    }

    #[test]
    fn an_unfenced_pause_a_one_round_token_and_a_fenced_resource_each_get_their_clause() {
        let mut unfenced = case("fencing-pause-unfenced");
        unfenced.resource = "unsafe";
        unfenced.stale_writes = 2;
        unfenced.faults = vec!["client pauses".into()];
        let mut one_round = case("fencing-one-round");
        one_round.resource = "unsafe";
        one_round.fence_regressions = 9;
        one_round.fence_rounds = Some(1);
        one_round.departures = vec!["fencing tokens issued in one round".into()];
        let mut fenced = case("fencing-pause");
        fenced.resource = "safe";
        fenced.fence_rounds = Some(2);
        let a = answer(&[unfenced, one_round, fenced]);
        let stale = clause(
            &a,
            "Without fencing tokens, a lock that held let stale writes through",
        );
        assert_eq!(names(stale), ["fencing-pause-unfenced"]);
        assert_eq!(
            stale.items[0].detail,
            "2 stale writes in the reported seed, under client pauses"
        );
        let back = clause(&a, "Fencing tokens went backwards");
        assert_eq!(names(back), ["fencing-one-round"]);
        assert!(back.items[0]
            .detail
            .starts_with("tokens issued in one round: 9 regressions"));
        // A broken variant that broke the resource, not the lock, says so.
        let broken = clause(&a, "The deliberately broken variants");
        assert!(broken.lead.contains("in 1 of 1"), "{broken:?}");
        assert_eq!(
            broken.items[0].detail,
            "fencing tokens issued in one round: lock safe, guarded resource unsafe (9 fencing regressions in \
             the reported seed), with no fault"
        );
        assert_eq!(
            names(clause(&a, "With fencing tokens the guarded resource stayed safe")),
            ["fencing-pause"]
        );
    }

    #[test]
    fn a_scenario_not_as_expected_is_named_with_its_whole_expectation() {
        let mut c = case("fencing-pause-unfenced");
        c.expect = "lock safe, resource unsafe".into();
        c.as_expected = false;
        let a = answer(&[c]);
        let missed = clause(&a, "NOT as the scenario expects");
        assert_eq!(
            missed.items[0].detail,
            "the scenario expects lock safe, resource unsafe; found safe"
        );
    }
}
