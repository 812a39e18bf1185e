//! What each fault kind touched, on both drivers (issue 37): a small run per kind, aimed
//! at a hold or an acquisition so it meets the lock on every seed, and the checker's
//! record of what the fault did: keys it took down or wiped (node lines), expiries its
//! clock moved, holds and acquisitions it stopped, lock messages it dropped, held back or
//! delayed (link lines). The real runs need redis-server and libfaketime (2-3 s each).

use lockstorm::checker::touch::Touched;
use lockstorm::real::RealOptions;
use lockstorm::scenario::{Backend, Scenario};

const BASE: &str = r#"
seed = 1
duration = "3s"
heal_after_faults = "200ms"
nodes = 3

[algorithm]
kind = "redlock"
ttl = "1s"
retry_count = 50
retry_delay = { min = "5ms", max = "20ms" }
request_timeout = "50ms"

[clients]
count = 3
think = { min = "0ms", max = "10ms" }
hold = { min = "100ms", max = "300ms" }
"#;

/// The first fault's touch and whether it was exercised, for `fault` (a `[[faults]]`
/// entry) run on `backend` with `seed`.
fn touched(fault: &str, extra: &str, backend: Backend, seed: u64) -> (Touched, bool) {
    touched_as("redlock", fault, extra, backend, seed)
}

/// As [`touched`], with lockstorm's lock of kind `algorithm`.
fn touched_as(algorithm: &str, fault: &str, extra: &str, backend: Backend, seed: u64) -> (Touched, bool) {
    let base = BASE.replace("kind = \"redlock\"", &format!("kind = \"{algorithm}\""));
    let backend_line = if backend == Backend::Sim {
        ""
    } else {
        "backend = \"redis\"\n"
    };
    let text = format!("{backend_line}{base}{extra}\n[[faults]]\n{fault}\n");
    let mut s = Scenario::parse(&text, "touch.toml", "touch").unwrap_or_else(|e| panic!("{e}\n{text}"));
    s.backend = backend;
    let output = match backend {
        Backend::Sim => lockstorm::sim::run(&s, seed),
        _ => lockstorm::real::run(&s, seed, &RealOptions::default())
            .unwrap_or_else(|e| panic!("seed {seed}: {e}")),
    };
    let f = lockstorm::checker::check(&output.history).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let first = f
        .exercise
        .faults
        .first()
        .unwrap_or_else(|| panic!("{fault}: no fault started (seed {seed})"));
    (first.touched.clone(), first.exercised)
}

/// Each kind: its fault, extra scenario text, and what its touch must show.
struct Kind {
    name: &'static str,
    fault: &'static str,
    extra: &'static str,
    shows: fn(&Touched) -> bool,
    real: bool,
    /// lockstorm's lock the clients run.
    algorithm: &'static str,
}

const KINDS: &[Kind] = &[
    Kind {
        name: "crash without persistence: keys taken down and wiped",
        fault: "when = \"acquired\"\nkind = \"crash\"\nnode = \"majority\"\nrestart_after = \"100ms\"",
        extra: "",
        shows: |t| t.keys_down > 0 && t.keys_wiped > 0,
        real: true,
        algorithm: "redlock",
    },
    Kind {
        name: "failover: the master's keys taken down, those not yet replicated wiped",
        fault: "when = \"acquired\"\nkind = \"failover\"\nnode = \"shared\"\npromote_after = \"100ms\"",
        extra: "\n[replication]\nlag = \"2s\"\n",
        shows: |t| t.keys_down > 0 && t.keys_wiped > 0,
        real: true,
        algorithm: "redlock",
    },
    Kind {
        name: "node pause: keys taken down",
        fault: "when = \"acquired\"\nkind = \"pause\"\nnode = \"shared\"\nduration = \"300ms\"",
        extra: "",
        shows: |t| t.keys_down > 0,
        real: true,
        algorithm: "redlock",
    },
    Kind {
        name: "node clock jump: expiries moved",
        fault: "when = \"acquired\"\nkind = \"clock_jump\"\nnode = \"shared\"\nby = \"5s\"",
        extra: "",
        shows: |t| t.keys_moved > 0,
        real: true,
        algorithm: "redlock",
    },
    Kind {
        name: "client pause: a hold stopped",
        fault: "when = \"acquired\"\nkind = \"pause\"\nclient = \"holder\"\nduration = \"300ms\"",
        extra: "",
        shows: |t| t.holds > 0,
        real: true,
        algorithm: "redlock",
    },
    Kind {
        name: "client pause mid-acquisition: an acquisition stopped",
        fault: "when = { acquiring = { replied = 1, uncontended = true } }\nkind = \"pause\"\nclient = \"holder\"\nduration = \"300ms\"",
        extra: "",
        shows: |t| t.acquisitions > 0,
        real: true,
        algorithm: "redlock",
    },
    Kind {
        // The read-write lock sends the client's wall clock to the nodes (the exclusive
        // one times validity by the monotonic clock: below, a jump touches nothing).
        name: "client clock jump: its holds re-timed",
        fault: "when = \"acquired\"\nkind = \"clock_jump\"\nclient = \"holder\"\nby = \"-2s\"",
        extra: "",
        shows: |t| t.holds > 0,
        real: true,
        algorithm: "rw_redlock",
    },
    Kind {
        name: "partition: lock messages dropped (simulator) or held back (proxy)",
        fault: "when = \"acquired\"\nkind = \"partition\"\nnodes = \"majority\"\nclients = \"holder\"\nduration = \"500ms\"",
        extra: "",
        shows: |t| t.dropped + t.held > 0,
        real: true,
        algorithm: "redlock",
    },
    Kind {
        name: "delay: lock messages delayed",
        fault: "when = \"acquiring\"\nkind = \"delay\"\nnodes = \"holder\"\nclients = \"holder\"\nextra = \"200ms\"\nduration = \"500ms\"",
        extra: "",
        shows: |t| t.delayed > 0 && t.delay_max_us > 0,
        real: true,
        algorithm: "redlock",
    },
    Kind {
        name: "loss: lock messages dropped",
        fault: "when = \"acquiring\"\nkind = \"loss\"\nnodes = \"holder\"\nclients = \"holder\"\nprobability = 1.0\nduration = \"300ms\"",
        extra: "",
        shows: |t| t.dropped > 0,
        real: false,
        algorithm: "redlock",
    },
];

fn check_kinds(backend: Backend, seeds: std::ops::RangeInclusive<u64>) {
    for k in KINDS.iter().filter(|k| backend == Backend::Sim || k.real) {
        for seed in seeds.clone() {
            let (t, exercised) = touched_as(k.algorithm, k.fault, k.extra, backend, seed);
            assert!(
                (k.shows)(&t) && exercised,
                "{:?} {} (seed {seed}): touched {} ({t:?}), exercised {exercised}",
                backend,
                k.name,
                t.describe()
            );
            assert!(!t.lines.is_empty(), "{} cites the lines that show it", k.name);
        }
    }
}

#[test]
fn each_touch_kind_on_the_simulator() {
    check_kinds(Backend::Sim, 1..=3);
}

#[test]
fn each_touch_kind_on_real_redis_servers() {
    check_kinds(Backend::Redis, 1..=1);
}

#[test]
fn a_client_clock_jump_touches_nothing_of_a_lock_timed_by_the_monotonic_clock() {
    let jump = "when = \"acquired\"\nkind = \"clock_jump\"\nclient = \"holder\"\nby = \"-2s\"";
    for backend in [Backend::Sim, Backend::Redis] {
        let (t, exercised) = touched(jump, "", backend, 1);
        assert!(
            t.is_empty() && !exercised,
            "{backend:?}: the exclusive lock's clients read no wall clock, yet the jump touched {}",
            t.describe()
        );
    }
}

#[test]
fn a_fault_that_touches_nothing_of_the_lock_is_not_exercised_on_both_drivers() {
    // Node 2 is cut off from every client from the start, so no key lives there: a
    // crash of node 2 takes nothing down.
    let extra = "\n[[faults]]\nat = \"0s\"\nkind = \"partition\"\nnodes = [2]\n";
    for backend in [Backend::Sim, Backend::Redis] {
        let text = format!(
            "{BASE}{extra}\n[[faults]]\nat = \"1s\"\nkind = \"crash\"\nnode = 2\nrestart_after = \"100ms\"\n"
        );
        let mut s = Scenario::parse(&text, "touch.toml", "touch").unwrap();
        s.backend = backend;
        let output = match backend {
            Backend::Sim => lockstorm::sim::run(&s, 1),
            _ => lockstorm::real::run(&s, 1, &RealOptions::default()).unwrap(),
        };
        let f = lockstorm::checker::check(&output.history).unwrap();
        let crash = f.exercise.faults.iter().find(|f| f.kind == "crash").unwrap();
        assert!(
            crash.touched.is_empty() && !crash.exercised,
            "{backend:?}: the crash of a node with no key touched {}",
            crash.touched.describe()
        );
    }
}

/// The same touches through the worker protocol: lockstorm's own lock as a worker
/// process, whose holds are read from its `ok` answers (their `nodes`) and the node
/// lines, with its proxies cutting and holding its messages and SIGSTOP pausing it.
#[test]
fn touch_kinds_through_a_worker_process_on_real_redis_servers() {
    let worker = format!("worker = [{:?}, \"worker\"]\n", env!("CARGO_BIN_EXE_lockstorm"));
    let kinds = KINDS
        .iter()
        .filter(|k| k.real && k.extra.is_empty() && k.algorithm == "redlock");
    let mut ran = 0;
    for k in kinds {
        let (t, exercised) = touched_as(k.algorithm, k.fault, &worker, Backend::Redis, 1);
        assert!(
            (k.shows)(&t) && exercised,
            "worker: {} (seed 1): touched {} ({t:?}), exercised {exercised}",
            k.name,
            t.describe()
        );
        ran += 1;
    }
    assert!(
        ran >= 6,
        "crash, node pause and clock, client pause (two), partition, delay"
    );
}
