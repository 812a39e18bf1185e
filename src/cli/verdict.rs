//! How a run's verdict is printed, by `scenario` and by `merge`: a table of the seeds
//! (unless --quiet), then the verdict line and what backs it (violations, stale writes,
//! waits, liveness findings, and the commands that rerun and shrink the reported seed).

use super::{ms, secs};
use lockstorm::outcome::{Outcome, Verdict};
use lockstorm::scenario::{Backend, Scenario};
use std::path::Path;

/// What the table's two shares are: the names every page and summary.json use too.
pub(super) const SHARES_LEGEND: &str =
    "avail(time): availability (time), the share of the workload's time a lock \
     was held or could be acquired; calls ok: acquire calls that succeeded (contention counts against it)";

/// One row per seed (the first 20), then the driver's rates.
pub(super) fn print_table(scenario: &Scenario, outcome: &Outcome) {
    out!(
        "{:>12} {:>9} {:>9} {:>7} {:>7} {:>10} {:>12} {:>9} {:>11} {:>11}",
        "seed",
        "ops",
        "acquired",
        "failed",
        "unknown",
        "violations",
        "avail(time)",
        "calls ok",
        "p50 acq",
        "p99 acq"
    );
    const ROWS: usize = 20;
    for r in outcome.seeds.iter().take(ROWS) {
        out!(
            "{:>12} {:>9} {:>9} {:>7} {:>7} {:>10} {:>11.1}% {:>8.1}% {:>11} {:>11}",
            r.seed,
            r.sim.lock_ops,
            r.stats.acquired,
            r.stats.failed,
            r.stats.unknown,
            r.violations,
            (1.0 - r.stats.unavailable_share) * 100.0,
            r.stats.availability * 100.0,
            ms(r.stats.latency_p50_us),
            ms(r.stats.latency_p99_us),
        );
    }
    if outcome.seeds.len() > ROWS {
        let more = &outcome.seeds[ROWS..];
        let unsafe_more = more.iter().filter(|r| !r.safe).count();
        let idle_more = more.iter().filter(|r| r.verdict == Verdict::NotExercised).count();
        out!(
            "{:>12} ({} more seeds, {unsafe_more} of them unsafe, {idle_more} not exercised)",
            "...",
            more.len()
        );
    }
    out!("{SHARES_LEGEND}");
    let what = match scenario.backend {
        Backend::Sim => "simulated",
        Backend::Redis => "real Redis:",
        Backend::Docker => "Redis in containers:",
    };
    // Only what was measured: worker clients talk to Redis themselves, so their node
    // commands are not counted (a zero would read as a stalled run).
    let node_cmds: u64 = outcome.seeds.iter().map(|s| s.sim.node_cmds).sum();
    let lock_ops: u64 = outcome.seeds.iter().map(|s| s.sim.lock_ops).sum();
    let mut rates = Vec::new();
    if node_cmds > 0 {
        rates.push(format!("{:.0} node commands/s", outcome.sim_ops_per_sec()));
    }
    if lock_ops > 0 {
        rates.push(format!("{:.0} lock operations/s", outcome.sim_lock_ops_per_sec()));
    }
    if !rates.is_empty() {
        out!("{what} {} ({})", rates.join(", "), scenario.name);
    }
}

/// The verdict line, with the report's folder (all that --quiet prints), then what
/// backs the verdict.
pub(super) fn print_verdict(scenario: &Scenario, outcome: &Outcome, dir: &Path, quiet: bool) {
    out!("{}", verdict_line(scenario, outcome, dir));
    if !quiet {
        print_evidence(scenario, outcome);
    }
}

/// `NAME: VERDICT, live — as the scenario expects (lock safe); report in DIR` (or "the
/// library's prediction" where one replaced the scenario's expectation).
fn verdict_line(scenario: &Scenario, outcome: &Outcome, dir: &Path) -> String {
    let verdict = outcome.verdict_words();
    let expected = scenario.expectation();
    let live = if outcome.live { "live" } else { "NOT live" };
    let mark = match &outcome.partial {
        Some(why) => format!("PARTIAL, {why} ({expected})"),
        None => format!(
            "{} ({expected})",
            scenario.expect_by.verdict_words(outcome.as_expected)
        ),
    };
    format!(
        "{}: {verdict}, {live} — {mark}; report in {}",
        scenario.name,
        dir.display()
    )
}

/// What backs the verdict: why nothing was exercised, the violations, the guarded
/// resource, waits, liveness, and the commands that rerun and shrink the reported seed.
fn print_evidence(scenario: &Scenario, outcome: &Outcome) {
    if let Some(why) = &outcome.not_exercised {
        // Why a run with no violation proved nothing: never as expected.
        out!("  not exercised: {why}");
    } else if let Some(idle) = outcome.seeds.iter().find(|s| s.verdict == Verdict::NotExercised) {
        // Enough seeds were exercised; say what the others missed.
        let e = outcome.exercised();
        out!(
            "  {} ({} needed); seed {} was not: {}",
            e.words(),
            e.needed,
            idle.seed,
            idle.not_exercised.as_deref().unwrap_or("no reason recorded")
        );
    }
    for v in outcome.findings.violations.iter().take(3) {
        out!(
            "  violation: clients {} and {} both held {} from {} to {} (seed {})",
            v.first.client,
            v.second.client,
            v.lock,
            secs(v.overlap_start_us),
            secs(v.overlap_end_us),
            outcome.reported_seed
        );
    }
    if scenario.expect_resource.is_some() || !outcome.resource_safe {
        let r = &outcome.findings.resource;
        out!(
            "  guarded resource: {} ({} writes, {} rejected by fencing)",
            if outcome.resource_safe { "safe" } else { "UNSAFE" },
            r.writes,
            r.rejected
        );
    }
    if !outcome.findings.fence_regressions.is_empty() {
        out!(
            "  fencing: {} tokens did not grow after an earlier hold ended (see summary.json)",
            outcome.findings.fence_regressions.len()
        );
    }
    for v in outcome.findings.resource_violations.iter().take(3) {
        out!(
            "  stale write: client {} wrote to {} at {} after its hold ended, {} (seed {})",
            v.client,
            v.lock,
            secs(v.write_us),
            lockstorm::report::stale::against(v),
            outcome.reported_seed
        );
    }
    for (mode, w) in &outcome.findings.stats.waits {
        out!(
            "  wait {:?}: p50 {} p99 {} max {} ({} acquired, {} unfinished)",
            mode,
            ms(w.p50_us),
            ms(w.p99_us),
            ms(w.max_us),
            w.acquired,
            w.unfinished
        );
    }
    const SHOWN: usize = 5;
    for l in outcome.findings.liveness.iter().take(SHOWN) {
        out!("  liveness: {}", serde_json::to_string(l).unwrap_or_default());
    }
    let stats = &outcome.findings.stats;
    if stats.unavailable_us > 0 {
        out!(
            "  availability penalty: {} ({:.1}% of the workload) with a lock free but out of reach (seed {})",
            secs(stats.unavailable_us),
            stats.unavailable_share * 100.0,
            outcome.reported_seed
        );
    }
    if outcome.findings.liveness.len() > SHOWN {
        out!(
            "  ... {} more liveness findings in summary.json",
            outcome.findings.liveness.len() - SHOWN
        );
    }
    if !outcome.availability_ok {
        out!(
            "  acquire calls that succeeded below the scenario's min_availability of {:.1}% on some seed",
            scenario.min_availability.unwrap_or(0.0) * 100.0
        );
    }
    if !outcome.safe || !outcome.live || !outcome.as_expected {
        out!("  rerun: {}", scenario.rerun_command(outcome.reported_seed));
    }
    let f = &outcome.findings;
    if !f.is_safe() || !f.is_live() || !f.is_resource_safe() {
        match scenario.shrink_command(outcome.reported_seed) {
            Ok(command) => out!("  shrink: {command}"),
            Err(why) => out!("  shrink: none ({why})"),
        }
    }
}
