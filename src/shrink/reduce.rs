//! The smaller scenarios shrinking tries: each pass turns the current scenario into
//! candidates that are strictly smaller in one respect, in a fixed order, so the same
//! input always gives the same candidates.
//!
//! Moving faults earlier is the one change that makes nothing smaller by itself: it
//! lets the finding come sooner, so the run can be cut shorter in the next round (the
//! sum of the fault times strictly falls, so it cannot go on forever).
//!
//! Removing a client or a node renumbers the ones after it in every fault and drops the
//! faults that only touched it; a node goes only where the quorum allows (a majority
//! quorum stays a majority of the remaining nodes, a quorum set by hand must still fit).
//! Faults keep `id = index`, as a parsed file numbers them, so a candidate is exactly
//! what its written-out TOML parses back to.

use super::kind::Kind;
use crate::checker::Findings;
use crate::fault::{Fault, Nemesis, Origin, PlannedFault};
use crate::rng::Dist;
use crate::scenario::{Scenario, Targets};

/// A candidate and what was done to get it (for the log and the file's comment).
pub struct Candidate {
    pub what: String,
    pub scenario: Scenario,
}

/// The scenario with the nemesis faults `seed` draws turned into scripted faults and
/// the nemesis off: the same run, now with faults that can be removed one by one.
pub fn materialize_nemesis(s: &Scenario, seed: u64) -> Scenario {
    let mut out = s.clone();
    let drawn = s
        .nemesis
        .plan(seed, s.duration_us, s.nodes, s.clients.count, s.faults.len());
    out.faults.extend(drawn.into_iter().map(|mut f| {
        f.origin = Origin::Script;
        f
    }));
    out.nemesis = Nemesis::default();
    out
}

fn renumber(faults: &mut [PlannedFault]) {
    for (i, f) in faults.iter_mut().enumerate() {
        f.id = i;
    }
}

/// `ids` without `gone`, the ones above it moved down; `None` if nothing is left.
fn without(ids: &[usize], gone: usize) -> Option<Vec<usize>> {
    let left: Vec<usize> = ids
        .iter()
        .filter(|&&i| i != gone)
        .map(|&i| if i > gone { i - 1 } else { i })
        .collect();
    (!left.is_empty()).then_some(left)
}

/// A single index without `gone`: `None` if it was `gone`.
fn one_without(id: usize, gone: usize) -> Option<usize> {
    match id.cmp(&gone) {
        std::cmp::Ordering::Less => Some(id),
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(id - 1),
    }
}

/// An optional process index without `gone`: `Err` if the fault was on `gone`.
fn opt_without(id: Option<usize>, gone: usize) -> Result<Option<usize>, ()> {
    match id {
        None => Ok(None),
        Some(i) => one_without(i, gone).map(Some).ok_or(()),
    }
}

/// The fault with client `gone` removed, or `None` if it only concerned that client.
fn fault_without_client(f: &Fault, gone: usize) -> Option<Fault> {
    let mut f = f.clone();
    match &mut f {
        Fault::Partition { clients, .. } | Fault::Delay { clients, .. } | Fault::Loss { clients, .. } => {
            *clients = without(clients, gone)?;
        }
        Fault::Pause { client, .. } | Fault::ClockJump { client, .. } | Fault::ClockRate { client, .. } => {
            *client = opt_without(*client, gone).ok()?;
        }
        Fault::Crash { .. } | Fault::Failover { .. } | Fault::ReplicationCut { .. } => {}
    }
    Some(f)
}

/// The fault with node `gone` removed, or `None` if it only concerned that node.
fn fault_without_node(f: &Fault, gone: usize) -> Option<Fault> {
    let mut f = f.clone();
    match &mut f {
        Fault::Partition { nodes, .. } | Fault::Delay { nodes, .. } | Fault::Loss { nodes, .. } => {
            *nodes = without(nodes, gone)?;
        }
        Fault::Pause { node, .. } | Fault::ClockJump { node, .. } | Fault::ClockRate { node, .. } => {
            *node = opt_without(*node, gone).ok()?;
        }
        Fault::Crash { node, .. } | Fault::Failover { node } | Fault::ReplicationCut { node } => {
            *node = one_without(*node, gone)?
        }
    }
    Some(f)
}

fn map_faults(s: &mut Scenario, f: impl Fn(&Fault) -> Option<Fault>) {
    s.faults = s
        .faults
        .iter()
        .filter_map(|p| f(&p.fault).map(|fault| PlannedFault { fault, ..p.clone() }))
        .collect();
    renumber(&mut s.faults);
}

/// A shorter run: just past the first finding (when the kind has a moment), just past
/// its end (so faults lasting until the heal still last through it), or half.
pub fn shorter(s: &Scenario, kind: Kind, findings: &Findings) -> Vec<Candidate> {
    let mut ends = Vec::new();
    // Whole milliseconds after the finding, so the file reads well.
    for at in [kind.first_at_us(findings), kind.first_end_us(findings)]
        .into_iter()
        .flatten()
    {
        ends.push((at / 1_000 + 1) * 1_000);
    }
    // Halving stops at a millisecond: a shorter workload only moves work into the drain.
    let half_ms = s.duration_us / 2 / 1_000;
    if half_ms > 0 {
        ends.push(half_ms * 1_000);
    }
    ends.sort_unstable();
    ends.dedup();
    ends.into_iter()
        .filter(|&end| end > 0 && end < s.duration_us)
        .map(|end| {
            let mut c = s.clone();
            c.duration_us = end;
            c.faults.retain(|f| f.at_us < end);
            renumber(&mut c.faults);
            Candidate {
                what: format!("duration: {} → {}", secs(s.duration_us), secs(end)),
                scenario: c,
            }
        })
        .collect()
}

/// Fewer faults, delta-debugging style: the faults split into `parts` runs of
/// neighbours, each candidate without one run, the later runs first.
pub fn fewer_faults(s: &Scenario, parts: usize) -> Vec<Candidate> {
    let n = s.faults.len();
    if n == 0 {
        return Vec::new();
    }
    let chunk = n.div_ceil(parts.clamp(1, n));
    let mut out = Vec::new();
    let mut start = n;
    while start > 0 {
        let from = start.saturating_sub(chunk);
        let mut c = s.clone();
        c.faults.drain(from..start);
        renumber(&mut c.faults);
        let what = if start - from == 1 {
            format!("without fault #{from} ({})", s.faults[from].fault.kind())
        } else {
            format!("without faults #{from} to #{}", start - 1)
        };
        out.push(Candidate { what, scenario: c });
        start = from;
    }
    out
}

/// Earlier faults, so the finding comes sooner and the run can end sooner: every fault
/// that starts after 0 moved back by half the earliest such start, then each one alone
/// moved to half its time (whole milliseconds).
pub fn earlier_faults(s: &Scenario) -> Vec<Candidate> {
    let half_ms = |us: u64| us / 2 / 1_000 * 1_000;
    let mut out = Vec::new();
    if let Some(first) = s.faults.iter().map(|f| f.at_us).filter(|&t| t > 0).min() {
        let shift = first - half_ms(first);
        let mut c = s.clone();
        for f in c.faults.iter_mut().filter(|f| f.at_us > 0) {
            f.at_us -= shift;
        }
        out.push(Candidate {
            what: format!("faults after the start: {} earlier", secs(shift)),
            scenario: c,
        });
    }
    for (i, f) in s.faults.iter().enumerate().filter(|(_, f)| f.at_us > 0) {
        let mut c = s.clone();
        c.faults[i].at_us = half_ms(f.at_us);
        out.push(Candidate {
            what: format!(
                "fault #{i} ({}) at: {} → {}",
                f.fault.kind(),
                secs(f.at_us),
                secs(half_ms(f.at_us))
            ),
            scenario: c,
        });
    }
    out
}

/// Fewer clients, the last ones first.
pub fn fewer_clients(s: &Scenario) -> Vec<Candidate> {
    if s.clients.count < 2 {
        return Vec::new();
    }
    (0..s.clients.count)
        .rev()
        .map(|gone| {
            let mut c = s.clone();
            c.clients.count -= 1;
            map_faults(&mut c, |f| fault_without_client(f, gone));
            // An aimed entry waiting for client `gone` goes with it; later ones move down.
            c.faults
                .retain_mut(|f| match f.aim.as_mut().and_then(|a| a.when.client.as_mut()) {
                    Some(w) if *w == gone => false,
                    Some(w) => {
                        *w -= usize::from(*w > gone);
                        true
                    }
                    None => true,
                });
            renumber(&mut c.faults);
            Candidate {
                what: format!("without client {gone}"),
                scenario: c,
            }
        })
        .collect()
}

/// Fewer nodes, the last ones first, where the quorum allows.
pub fn fewer_nodes(s: &Scenario) -> Vec<Candidate> {
    let n = s.nodes;
    if n < 2 || s.targets != Targets::Local || s.algorithm.kind == crate::algorithm::AlgorithmKind::Single {
        return Vec::new();
    }
    let quorum = if s.algorithm.quorum == n / 2 + 1 {
        (n - 1) / 2 + 1
    } else if s.algorithm.quorum < n {
        s.algorithm.quorum
    } else {
        return Vec::new();
    };
    (0..n)
        .rev()
        .map(|gone| {
            let mut c = s.clone();
            c.nodes -= 1;
            c.algorithm.quorum = quorum;
            c.persistence.remove(gone);
            map_faults(&mut c, |f| fault_without_node(f, gone));
            Candidate {
                what: format!("without node {gone} (quorum {quorum} of {})", n - 1),
                scenario: c,
            }
        })
        .collect()
}

/// Shorter faults: a fault that lasts `d` tries `0` (a crash restarting at once) and
/// `d / 2`; one that lasts until the heal tries ending where the run ends.
pub fn shorter_faults(s: &Scenario) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (i, f) in s.faults.iter().enumerate() {
        let options: Vec<u64> = match f.duration_us {
            Some(0) => continue,
            Some(d) => vec![0, d / 2],
            None => vec![(s.duration_us - f.at_us) / 2],
        };
        for d in options {
            let mut c = s.clone();
            c.faults[i].duration_us = Some(d);
            out.push(Candidate {
                what: format!(
                    "fault #{i} ({}) lasts: {} → {}",
                    f.fault.kind(),
                    f.duration_us.map_or("until the heal".into(), secs),
                    secs(d)
                ),
                scenario: c,
            });
        }
    }
    out
}

/// A distribution's constant stand-ins: its least and its largest value (an
/// exponential: its mean too).
fn constants(d: &Dist) -> Vec<Dist> {
    match *d {
        Dist::Fixed { .. } => vec![],
        Dist::Uniform { min_us, max_us } => vec![Dist::fixed(min_us), Dist::fixed(max_us)],
        Dist::Exponential { mean_us, max_us } => {
            vec![
                Dist::fixed(0),
                Dist::fixed(mean_us.min(max_us)),
                Dist::fixed(max_us),
            ]
        }
    }
}

/// Constant instead of random: think, hold, retry delay and latency, and one lock name.
pub fn constant(s: &Scenario) -> Vec<Candidate> {
    let mut out = Vec::new();
    type Field = fn(&mut Scenario) -> &mut Dist;
    let fields: [(&str, Field); 4] = [
        ("think", |s| &mut s.clients.think),
        ("hold", |s| &mut s.clients.hold),
        ("retry_delay", |s| &mut s.algorithm.retry_delay),
        ("latency", |s| &mut s.network.latency),
    ];
    for (name, field) in fields {
        let mut probe = s.clone();
        let was = *field(&mut probe);
        for d in constants(&was) {
            let mut c = s.clone();
            *field(&mut c) = d;
            out.push(Candidate {
                what: format!("{name}: {} → constant {}", describe(&was), secs(d.max_us())),
                scenario: c,
            });
        }
    }
    if s.clients.locks > 1 {
        let mut c = s.clone();
        c.clients.locks = 1;
        out.push(Candidate {
            what: format!("lock names: {} → 1", s.clients.locks),
            scenario: c,
        });
    }
    out
}

/// A distribution for the log: `0 µs to 50.0 ms`.
fn describe(d: &Dist) -> String {
    match *d {
        Dist::Fixed { us } => secs(us),
        Dist::Uniform { min_us, max_us } => format!("{} to {}", secs(min_us), secs(max_us)),
        Dist::Exponential { mean_us, max_us } => format!("mean {} up to {}", secs(mean_us), secs(max_us)),
    }
}

/// A time for the log: `1.5 s`.
fn secs(us: u64) -> String {
    crate::report::narrative::span(us)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Scenario {
        Scenario::parse(text, "t.toml", "t").unwrap()
    }

    const FAULTS: &str = r#"
        nodes = 5
        [clients]
        count = 3
        [[faults]]
        at = "1s"
        kind = "partition"
        nodes = [0, 3]
        clients = [1]
        [[faults]]
        at = "2s"
        kind = "pause"
        client = 2
        duration = "1s"
        [[faults]]
        at = "3s"
        kind = "crash"
        node = 4
        restart_after = "2s"
        [[faults]]
        at = "4s"
        kind = "partition"
        nodes = [3]
        clients = [0, 2]
    "#;

    /// Every candidate must be a scenario the parser would give back.
    fn written_and_parsed(c: &Candidate) -> Scenario {
        let text = c.scenario.to_toml("");
        Scenario::parse(&text, "c.toml", "t").unwrap_or_else(|e| panic!("{}: {e}\n{text}", c.what))
    }

    #[test]
    fn removing_a_client_renumbers_and_drops_its_own_faults() {
        let s = parse(FAULTS);
        let cands = fewer_clients(&s);
        assert_eq!(cands.len(), 3);
        // Client 1 goes: the first partition only cut it off, so it goes too.
        let c = &cands[1].scenario;
        assert_eq!(c.clients.count, 2);
        assert_eq!(c.faults.len(), 3);
        assert!(matches!(c.faults[0].fault, Fault::Pause { client: Some(1), .. }));
        assert!(matches!(&c.faults[2].fault, Fault::Partition { clients, .. } if clients == &vec![0, 1]));
        assert_eq!(c.faults.iter().map(|f| f.id).collect::<Vec<_>>(), vec![0, 1, 2]);
        for cand in &cands {
            assert_eq!(&written_and_parsed(cand), &cand.scenario, "{}", cand.what);
        }
    }

    #[test]
    fn removing_a_node_keeps_a_majority_quorum_and_renumbers() {
        let s = parse(FAULTS);
        let cands = fewer_nodes(&s);
        assert_eq!(cands.len(), 5);
        let c = &cands[0].scenario; // node 4 goes, and its crash with it
        assert_eq!((c.nodes, c.algorithm.quorum), (4, 3));
        assert_eq!(c.faults.len(), 3);
        let c = &cands[1].scenario; // node 3 goes: the last partition cut only it
        assert_eq!(c.faults.len(), 3);
        assert!(matches!(c.faults[2].fault, Fault::Crash { node: 3, .. }));
        for cand in &cands {
            assert_eq!(&written_and_parsed(cand), &cand.scenario, "{}", cand.what);
        }
        let minority = parse("nodes = 3\n[algorithm]\nquorum = 1\n");
        assert_eq!(fewer_nodes(&minority)[0].scenario.algorithm.quorum, 1);
        assert!(fewer_nodes(&parse("nodes = 1\n[algorithm]\nkind = \"single\"\n")).is_empty());
    }

    #[test]
    fn every_other_pass_yields_parseable_strictly_smaller_candidates() {
        let s = parse(FAULTS);
        let findings = crate::run::run_seed(&s, 1, &mut |_, _| {}).2;
        let all: Vec<Candidate> = [
            shorter(&s, Kind::MutualExclusion, &findings),
            fewer_faults(&s, 2),
            fewer_faults(&s, 4),
            earlier_faults(&s),
            shorter_faults(&s),
            constant(&s),
        ]
        .into_iter()
        .flatten()
        .collect();
        assert!(all.len() > 10);
        for c in &all {
            assert_eq!(&written_and_parsed(c), &c.scenario, "{}", c.what);
            assert_ne!(c.scenario, s, "{} changes nothing", c.what);
        }
        assert!(constant(&constant(&s)[0].scenario).len() < constant(&s).len());
    }

    #[test]
    fn the_nemesis_becomes_the_scripted_faults_the_seed_drew() {
        let s =
            parse("duration = \"20s\"\n[nemesis]\npartition = { interval = \"3s\", duration = \"1s\" }\n");
        let m = materialize_nemesis(&s, 4);
        assert_eq!(m.nemesis, Nemesis::default());
        assert_eq!(m.faults.len(), 6);
        let a = crate::run::run_seed(&s, 4, &mut |_, _| {}).1;
        let b = crate::run::run_seed(&m, 4, &mut |_, _| {}).1;
        let strip = |h: Vec<crate::history::Event>| -> Vec<String> {
            h.iter()
                .map(|e| serde_json::to_string(e).unwrap().replace("nemesis", "script"))
                .collect()
        };
        assert_eq!(strip(a.history), strip(b.history), "the same run");
    }
}
