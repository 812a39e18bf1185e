//! Faults as a scenario file writes them: scripted `[[faults]]` and the random
//! `[nemesis]`, parsed strictly and resolved into the typed [`Fault`]s of `fault/`.
//! Indices, times, probabilities and rates are checked here, with errors naming the
//! fault (`faults[2].probability`) or the nemesis entry.

use super::aim::{Aiming, RawTarget, RawWhen};
use super::{invalid, Dur, Invalid, RawDist, SignedDur};
use crate::fault::{
    CutDirection, Fault, Nemesis, NemesisRate, Origin, PausePoint, PlannedFault, Replication,
};
use serde::Deserialize;

/// A scripted fault: `kind` picks the variant, `at` is when it starts. Faults on sets
/// of nodes or clients default to all of them where the kind says so. With `when` the
/// fault is aimed ([`super::aim`]): it starts on that trigger (`after` it, and not
/// before `at`), and its targets may be relative to the triggering hold.
#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum RawFault {
    /// Cut `nodes` off from `clients` (all clients if omitted) for `duration` (until the
    /// heal if omitted), both ways or in one `direction`.
    Partition {
        at: Option<Dur>,
        when: Option<RawWhen>,
        after: Option<Dur>,
        nodes: RawTarget,
        clients: Option<RawTarget>,
        duration: Option<Dur>,
        #[serde(default)]
        direction: CutDirection,
    },
    /// Kill `node`; it restarts `restart_after` later (at the heal if omitted).
    Crash {
        at: Option<Dur>,
        when: Option<RawWhen>,
        after: Option<Dur>,
        node: RawTarget,
        restart_after: Option<Dur>,
        #[serde(default)]
        power_loss: bool,
    },
    /// Stop a `node` or a `client` for `duration`; a client may wait for a `point`.
    Pause {
        at: Option<Dur>,
        when: Option<RawWhen>,
        after: Option<Dur>,
        node: Option<RawTarget>,
        client: Option<RawTarget>,
        duration: Dur,
        point: Option<PausePoint>,
    },
    /// Step the wall clock of a `node` or `client` `by` a signed amount.
    ClockJump {
        at: Option<Dur>,
        when: Option<RawWhen>,
        after: Option<Dur>,
        node: Option<RawTarget>,
        client: Option<RawTarget>,
        by: SignedDur,
    },
    /// Run the clock of a `node` or `client` at `rate` for `duration`.
    ClockRate {
        at: Option<Dur>,
        when: Option<RawWhen>,
        after: Option<Dur>,
        node: Option<RawTarget>,
        client: Option<RawTarget>,
        rate: f64,
        duration: Option<Dur>,
    },
    /// Add `extra` latency between `nodes` and `clients` (all if omitted).
    Delay {
        at: Option<Dur>,
        when: Option<RawWhen>,
        after: Option<Dur>,
        nodes: Option<RawTarget>,
        clients: Option<RawTarget>,
        extra: Dur,
        duration: Option<Dur>,
    },
    /// Lose messages between `nodes` and `clients` (all if omitted) with `probability`.
    Loss {
        at: Option<Dur>,
        when: Option<RawWhen>,
        after: Option<Dur>,
        nodes: Option<RawTarget>,
        clients: Option<RawTarget>,
        probability: f64,
        duration: Option<Dur>,
    },
    /// Kill the master of `node` (0 if omitted); its replica is promoted `promote_after`
    /// later (at once if omitted).
    Failover {
        at: Option<Dur>,
        when: Option<RawWhen>,
        after: Option<Dur>,
        node: Option<RawTarget>,
        promote_after: Option<Dur>,
    },
    /// Cut the master of `node` (0 if omitted) off from its replicas for `duration`
    /// (until the heal if omitted); clients and sentinels still reach it.
    ReplicationCut {
        at: Option<Dur>,
        when: Option<RawWhen>,
        after: Option<Dur>,
        node: Option<RawTarget>,
        duration: Option<Dur>,
    },
}

impl RawFault {
    /// `at`, `when` and `after`, which every kind has.
    fn timing(&self) -> (Option<Dur>, Option<&RawWhen>, Option<Dur>) {
        match self {
            RawFault::Partition { at, when, after, .. }
            | RawFault::Crash { at, when, after, .. }
            | RawFault::Pause { at, when, after, .. }
            | RawFault::ClockJump { at, when, after, .. }
            | RawFault::ClockRate { at, when, after, .. }
            | RawFault::Delay { at, when, after, .. }
            | RawFault::Loss { at, when, after, .. }
            | RawFault::Failover { at, when, after, .. }
            | RawFault::ReplicationCut { at, when, after, .. } => (*at, when.as_ref(), *after),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawNemesis {
    partition: Option<RawRate>,
    crash: Option<RawCrashRate>,
    pause: Option<RawRate>,
    clock_jump: Option<RawJumpRate>,
    clock_rate: Option<RawClockRate>,
    delay: Option<RawDelayRate>,
    loss: Option<RawLossRate>,
    failover: Option<RawRate>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRate {
    /// Time between the starts of two faults of this kind.
    interval: RawDist,
    /// Aimed: each drawn fault waits, from its drawn time, for this trigger.
    when: Option<RawWhen>,
    after: Option<Dur>,
    node: Option<String>,
    client: Option<String>,
    duration: RawDist,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCrashRate {
    interval: RawDist,
    /// Aimed: each drawn fault waits, from its drawn time, for this trigger.
    when: Option<RawWhen>,
    after: Option<Dur>,
    node: Option<String>,
    client: Option<String>,
    /// The restart delay.
    duration: RawDist,
    #[serde(default)]
    power_loss: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJumpRate {
    interval: RawDist,
    /// Aimed: each drawn fault waits, from its drawn time, for this trigger.
    when: Option<RawWhen>,
    after: Option<Dur>,
    node: Option<String>,
    client: Option<String>,
    /// The largest jump, either way.
    max: Dur,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClockRate {
    interval: RawDist,
    /// Aimed: each drawn fault waits, from its drawn time, for this trigger.
    when: Option<RawWhen>,
    after: Option<Dur>,
    node: Option<String>,
    client: Option<String>,
    duration: RawDist,
    /// Rates are drawn from `1 ± max_deviation`.
    max_deviation: f64,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDelayRate {
    interval: RawDist,
    /// Aimed: each drawn fault waits, from its drawn time, for this trigger.
    when: Option<RawWhen>,
    after: Option<Dur>,
    node: Option<String>,
    client: Option<String>,
    duration: RawDist,
    extra: RawDist,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLossRate {
    interval: RawDist,
    /// Aimed: each drawn fault waits, from its drawn time, for this trigger.
    when: Option<RawWhen>,
    after: Option<Dur>,
    node: Option<String>,
    client: Option<String>,
    duration: RawDist,
    probability: f64,
}

/// Resolves a nemesis kind's interval and duration, naming the kind in errors.
/// The aim of a nemesis kind (`when`, `after`, and a relative `node` or `client`);
/// `clients` checks a trigger's client, `processes` says whether the kind hits a client.
struct NemesisAim<'a> {
    when: Option<&'a RawWhen>,
    after: Option<Dur>,
    node: Option<&'a str>,
    client: Option<&'a str>,
}

macro_rules! nemesis_aim {
    ($r:expr) => {
        NemesisAim {
            when: $r.when.as_ref(),
            after: $r.after,
            node: $r.node.as_deref(),
            client: $r.client.as_deref(),
        }
    };
}

impl NemesisAim<'_> {
    fn resolve(
        &self,
        clients: usize,
        what: &str,
        hits_clients: bool,
    ) -> Result<Option<crate::fault::Aim>, Invalid> {
        let mut aiming = Aiming::default();
        if let Some(n) = self.node {
            aiming.node(&RawTarget::Named(n.to_string()), 0, &format!("{what}.node"))?;
        }
        if let Some(c) = self.client {
            if !hits_clients {
                return Err(invalid(
                    format!("{what}.client"),
                    format!("{what}.client: this kind hits nodes only"),
                ));
            }
            aiming.client(&RawTarget::Named(c.to_string()), 0, &format!("{what}.client"))?;
        }
        aiming.resolve(self.when, self.after, clients, what)
    }
}

fn rate(
    interval: &RawDist,
    duration: Option<&RawDist>,
    what: &str,
    aim: Option<crate::fault::Aim>,
) -> Result<NemesisRate, Invalid> {
    let interval = interval.resolve(&format!("{what}.interval"))?;
    if interval.max_us() == 0 {
        return Err(invalid(
            format!("{what}.interval"),
            format!("{what}.interval must be above 0"),
        ));
    }
    Ok(NemesisRate {
        interval,
        duration: match duration {
            Some(d) => d.resolve(&format!("{what}.duration"))?,
            None => super::Dist::fixed(0),
        },
        aim,
    })
}

fn probability(p: f64, what: &str) -> Result<f64, Invalid> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(invalid(
            what,
            format!("{what} = {p}: a probability is between 0 and 1"),
        ))
    }
}

fn clock_rate(r: f64, what: &str) -> Result<f64, Invalid> {
    if r > 0.0 && r <= 10.0 {
        Ok(r)
    } else {
        Err(invalid(
            what,
            format!("{what} = {r}: a clock rate is above 0 and at most 10 (1.02 is 2% fast)"),
        ))
    }
}

/// Exactly one of `node` and `client`, each in range or (aimed) relative.
fn process(
    node: Option<&RawTarget>,
    client: Option<&RawTarget>,
    aiming: &mut Aiming,
    nodes: usize,
    clients: usize,
    fault: usize,
) -> Result<(Option<usize>, Option<usize>), Invalid> {
    match (node, client) {
        (Some(n), None) => Ok((Some(one(n, aiming, nodes, "node", fault)?), None)),
        (None, Some(c)) => Ok((None, Some(one(c, aiming, clients, "client", fault)?))),
        _ => Err(invalid(
            format!("faults[{fault}]"),
            format!("faults[{fault}]: give either `node` or `client`, not both or neither"),
        )),
    }
}

/// One node or client (`what`): an index in range, or a relative target.
fn one(t: &RawTarget, aiming: &mut Aiming, count: usize, what: &str, fault: usize) -> Result<usize, Invalid> {
    let key = format!("faults[{fault}].{what}");
    match (t, what) {
        (RawTarget::Index(i), _) => Ok(indices(&[*i], count, what, fault)?[0]),
        (_, "node") => aiming.node(t, count, &key),
        _ => aiming.client(t, count, &key),
    }
}

/// A set of nodes or clients (`what`): a list in range (all if omitted), or a relative
/// target.
fn set(
    t: Option<&RawTarget>,
    aiming: &mut Aiming,
    count: usize,
    what: &str,
    fault: usize,
) -> Result<Vec<usize>, Invalid> {
    let key = format!("faults[{fault}].{what}s");
    match (t, what) {
        (Some(RawTarget::List(ids)), _) => indices(ids, count, what, fault),
        (None, _) => Ok((0..count).collect()),
        (_, "node") => aiming.node_set(t, count, &key),
        _ => aiming.client_set(t, count, &key),
    }
}

/// Checks that every index in `ids` is below `count`, naming the field in the error:
/// `what` is `node` or `client`, and the key is `what` for one index, its plural for a
/// list.
fn indices(ids: &[i64], count: usize, what: &str, fault: usize) -> Result<Vec<usize>, Invalid> {
    let key = if ids.len() == 1 {
        format!("faults[{fault}].{what}")
    } else {
        format!("faults[{fault}].{what}s")
    };
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        if id < 0 || id as usize >= count {
            return Err(invalid(
                key,
                format!(
                    "faults[{fault}]: {what} {id} does not exist (there are {count}, numbered 0 to {})",
                    count.saturating_sub(1)
                ),
            ));
        }
        out.push(id as usize);
    }
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(invalid(key, format!("faults[{fault}]: {what}s is empty")));
    }
    Ok(out)
}

/// Resolves the scripted `[[faults]]`, numbered from 0 in file order.
pub(super) fn resolve_faults(
    raw: &[RawFault],
    nodes: usize,
    n_clients: usize,
    run_duration: Dur,
    replication: Option<Replication>,
    sentinel: bool,
) -> Result<Vec<PlannedFault>, Invalid> {
    let mut faults = Vec::with_capacity(raw.len());
    for (i, f) in raw.iter().enumerate() {
        let mut aiming = Aiming::default();
        let a = &mut aiming;
        let what = |field: &str| format!("faults[{i}].{field}");
        let (duration, fault) = match f {
            RawFault::Partition {
                nodes: n,
                clients: c,
                duration,
                direction,
                ..
            } => (
                *duration,
                Fault::Partition {
                    nodes: set(Some(n), a, nodes, "node", i)?,
                    clients: set(c.as_ref(), a, n_clients, "client", i)?,
                    direction: *direction,
                },
            ),
            RawFault::Crash {
                node,
                restart_after,
                power_loss,
                ..
            } => (
                *restart_after,
                Fault::Crash {
                    node: one(node, a, nodes, "node", i)?,
                    power_loss: *power_loss,
                },
            ),
            RawFault::Pause {
                node,
                client,
                duration,
                point,
                ..
            } => {
                let (node, client) = process(node.as_ref(), client.as_ref(), a, nodes, n_clients, i)?;
                if node.is_some() && point.is_some() {
                    return Err(invalid(
                        what("point"),
                        format!("faults[{i}]: `point` is for client pauses; a node pauses at `at`"),
                    ));
                }
                (
                    Some(*duration),
                    Fault::Pause {
                        node,
                        client,
                        point: *point,
                    },
                )
            }
            RawFault::ClockJump { node, client, by, .. } => {
                let (node, client) = process(node.as_ref(), client.as_ref(), a, nodes, n_clients, i)?;
                (
                    Some(Dur(0)),
                    Fault::ClockJump {
                        node,
                        client,
                        by_us: by.0,
                    },
                )
            }
            RawFault::ClockRate {
                node,
                client,
                rate,
                duration,
                ..
            } => {
                let (node, client) = process(node.as_ref(), client.as_ref(), a, nodes, n_clients, i)?;
                let rate = clock_rate(*rate, &what("rate"))?;
                (*duration, Fault::ClockRate { node, client, rate })
            }
            RawFault::Delay {
                nodes: n,
                clients: c,
                extra,
                duration,
                ..
            } => (
                *duration,
                Fault::Delay {
                    nodes: set(n.as_ref(), a, nodes, "node", i)?,
                    clients: set(c.as_ref(), a, n_clients, "client", i)?,
                    extra_us: extra.us(),
                },
            ),
            RawFault::Loss {
                nodes: n,
                clients: c,
                probability: p,
                duration,
                ..
            } => (
                *duration,
                Fault::Loss {
                    nodes: set(n.as_ref(), a, nodes, "node", i)?,
                    clients: set(c.as_ref(), a, n_clients, "client", i)?,
                    probability: probability(*p, &what("probability"))?,
                },
            ),
            RawFault::Failover {
                node, promote_after, ..
            } => {
                if replication.is_none() {
                    return Err(invalid(
                        format!("faults[{i}]"),
                        format!("faults[{i}]: a failover needs a replica: add `[replication]` with a `lag`"),
                    ));
                }
                (
                    Some(promote_after.unwrap_or(Dur(0))),
                    Fault::Failover {
                        node: match node {
                            Some(n) => one(n, a, nodes, "node", i)?,
                            None => 0,
                        },
                    },
                )
            }
            RawFault::ReplicationCut { node, duration, .. } => {
                if replication.is_none() && !sentinel {
                    return Err(invalid(
                        format!("faults[{i}]"),
                        format!(
                            "faults[{i}]: a replication cut needs replicas: add `[replication]` with a `lag` \
                             (simulator) or `[sentinel]` (real backend)"
                        ),
                    ));
                }
                (
                    *duration,
                    Fault::ReplicationCut {
                        node: match node {
                            Some(n) => one(n, a, nodes, "node", i)?,
                            None => 0,
                        },
                    },
                )
            }
        };
        let (at, when, after) = f.timing();
        let aim = aiming.resolve(when, after, n_clients, &format!("faults[{i}]"))?;
        let at = match (at, &aim) {
            (Some(at), _) => at,
            (None, Some(_)) => Dur(0),
            (None, None) => {
                return Err(invalid(
                    format!("faults[{i}]"),
                    format!(
                        "faults[{i}]: missing `at` (when it starts), or `when` for a fault aimed at a hold"
                    ),
                ))
            }
        };
        let planned = PlannedFault {
            id: i,
            at_us: at.us(),
            duration_us: duration.map(Dur::us),
            origin: Origin::Script,
            fault,
            aim,
            firing: None,
        };
        if planned.at_us >= run_duration.us() {
            return Err(invalid(
                what("at"),
                format!(
                    "faults[{i}]: at = {} is not before the end of the run (duration = {})",
                    Dur(planned.at_us),
                    run_duration
                ),
            ));
        }
        faults.push(planned);
    }
    Ok(faults)
}

impl RawNemesis {
    /// Resolves the random fault rates.
    pub(super) fn resolve(
        &self,
        replication: Option<Replication>,
        clients: usize,
    ) -> Result<Nemesis, Invalid> {
        let n = self;
        if n.failover.is_some() && replication.is_none() {
            return Err(invalid(
                "nemesis.failover",
                "nemesis.failover needs a replica: add `[replication]` with a `lag`",
            ));
        }
        let nemesis = Nemesis {
            partition: n
                .partition
                .as_ref()
                .map(|r| {
                    rate(
                        &r.interval,
                        Some(&r.duration),
                        "nemesis.partition",
                        nemesis_aim!(r).resolve(clients, "nemesis.partition", true)?,
                    )
                })
                .transpose()?,
            crash: n
                .crash
                .as_ref()
                .map(|r| {
                    rate(
                        &r.interval,
                        Some(&r.duration),
                        "nemesis.crash",
                        nemesis_aim!(r).resolve(clients, "nemesis.crash", false)?,
                    )
                })
                .transpose()?,
            crash_power_loss: n.crash.as_ref().is_some_and(|r| r.power_loss),
            pause: n
                .pause
                .as_ref()
                .map(|r| {
                    rate(
                        &r.interval,
                        Some(&r.duration),
                        "nemesis.pause",
                        nemesis_aim!(r).resolve(clients, "nemesis.pause", true)?,
                    )
                })
                .transpose()?,
            clock_jump: n
                .clock_jump
                .as_ref()
                .map(|r| {
                    rate(
                        &r.interval,
                        None,
                        "nemesis.clock_jump",
                        nemesis_aim!(r).resolve(clients, "nemesis.clock_jump", true)?,
                    )
                })
                .transpose()?,
            clock_jump_max_us: n.clock_jump.as_ref().map_or(0, |r| r.max.us()),
            clock_rate: n
                .clock_rate
                .as_ref()
                .map(|r| {
                    rate(
                        &r.interval,
                        Some(&r.duration),
                        "nemesis.clock_rate",
                        nemesis_aim!(r).resolve(clients, "nemesis.clock_rate", true)?,
                    )
                })
                .transpose()?,
            clock_rate_max_deviation: match &n.clock_rate {
                Some(r) if !(0.0..1.0).contains(&r.max_deviation) => {
                    return Err(invalid(
                        "nemesis.clock_rate.max_deviation",
                        format!(
                            "nemesis.clock_rate.max_deviation = {}: must be in [0, 1)",
                            r.max_deviation
                        ),
                    ))
                }
                Some(r) => r.max_deviation,
                None => 0.0,
            },
            delay: n
                .delay
                .as_ref()
                .map(|r| {
                    rate(
                        &r.interval,
                        Some(&r.duration),
                        "nemesis.delay",
                        nemesis_aim!(r).resolve(clients, "nemesis.delay", true)?,
                    )
                })
                .transpose()?,
            delay_extra: match &n.delay {
                Some(r) => r.extra.resolve("nemesis.delay.extra")?,
                None => super::Dist::fixed(0),
            },
            loss: n
                .loss
                .as_ref()
                .map(|r| {
                    rate(
                        &r.interval,
                        Some(&r.duration),
                        "nemesis.loss",
                        nemesis_aim!(r).resolve(clients, "nemesis.loss", true)?,
                    )
                })
                .transpose()?,
            loss_probability: match &n.loss {
                Some(r) => probability(r.probability, "nemesis.loss.probability")?,
                None => 0.0,
            },
            failover: n
                .failover
                .as_ref()
                .map(|r| {
                    rate(
                        &r.interval,
                        Some(&r.duration),
                        "nemesis.failover",
                        nemesis_aim!(r).resolve(clients, "nemesis.failover", false)?,
                    )
                })
                .transpose()?,
        };
        Ok(nemesis)
    }
}
