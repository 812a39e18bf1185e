//! `lockstorm bench --sim --peer`: lockstorm beside the tools a Rust engineer would pick
//! instead, measured on the same machine in one run. The peer models live in the
//! `peers/` crate at the top of the repository, outside lockstorm's build (its own
//! workspace and lock file, so lockstorm's build and CI never compile turmoil or
//! Stateright): a turmoil model of scenarios/partition.toml's workload and a
//! Stateright model of the scope `explore` takes from scenarios/node-clock-jump.toml.
//!
//! [`build`] builds them with cargo (a no-op when they are up to date) or, without
//! cargo, finds binaries built before; [`run`] runs one and reads the one JSON line it
//! prints; [`Comparison`] holds lockstorm's figure and the peer's side by side, with
//! the ratio and what each counted. See docs/peers.md. Not a timed test: numbers
//! depend on the machine and its load.

use serde::Deserialize;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The turmoil model's binary (scenarios/partition.toml's workload).
pub const TURMOIL: &str = "turmoil_partition";
/// The Stateright model's binary (the node-clock-jump explore scope).
pub const STATERIGHT: &str = "stateright_clock_jump";
/// The scenario file each model is written for, by file name.
pub const TURMOIL_SCENARIO: &str = "partition.toml";
pub const STATERIGHT_SCENARIO: &str = "node-clock-jump.toml";

/// Why a peer could not be built or measured.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("the peer crate is not at {0} (bench --peer runs from a lockstorm source checkout)")]
    NoCrate(PathBuf),
    #[error("cannot start {cargo} to build the peer crate ({why}), and {missing} was not built before; install Rust's cargo or build it with `cargo build --release --manifest-path {manifest}`")]
    NoCargo {
        cargo: String,
        why: String,
        missing: String,
        manifest: String,
    },
    #[error("cannot build the peer crate (`cargo build --release --manifest-path {manifest}` failed: {last}); it needs crates.io the first time")]
    BuildFailed { manifest: String, last: String },
    #[error("--peer: {0}")]
    NothingToCompare(String),
    #[error("the peer {bin} failed: {why}")]
    RunFailed { bin: String, why: String },
    #[error("the peer {bin} printed no figures lockstorm can read ({why}): {line:?}")]
    BadOutput { bin: String, why: String, line: String },
}

/// Where each peer binary is.
#[derive(Clone, Debug)]
pub struct Binaries {
    pub turmoil: PathBuf,
    pub stateright: PathBuf,
    /// How they were had: "built" or why they were found instead.
    pub how: String,
}

/// The peer crate of this source tree.
pub fn manifest() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("peers")
        .join("Cargo.toml")
}

/// Builds the peer crate at `manifest` with `cargo` (release); without a cargo to
/// start, finds binaries built before in its `target/release`.
pub fn build(cargo: &OsStr, manifest: &Path) -> Result<Binaries, PeerError> {
    if !manifest.is_file() {
        return Err(PeerError::NoCrate(manifest.to_path_buf()));
    }
    let shown = manifest.display().to_string();
    let output = Command::new(cargo)
        .args(["build", "--release", "--message-format=json-render-diagnostics"])
        .arg("--manifest-path")
        .arg(manifest)
        .stderr(std::process::Stdio::piped())
        .output();
    let output = match output {
        Ok(o) => o,
        Err(e) => return find(manifest, cargo, &e.to_string()),
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = stderr
            .lines()
            .rev()
            .find(|l| l.trim_start().starts_with("error"))
            .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
            .map_or_else(|| output.status.to_string(), |l| l.trim().to_string());
        return Err(PeerError::BuildFailed {
            manifest: shown,
            last,
        });
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let turmoil = executable(&stdout, TURMOIL);
    let stateright = executable(&stdout, STATERIGHT);
    match (turmoil, stateright) {
        (Some(turmoil), Some(stateright)) => Ok(Binaries {
            turmoil,
            stateright,
            how: "built".into(),
        }),
        _ => Err(PeerError::BuildFailed {
            manifest: shown,
            last: "cargo named no peer binaries".into(),
        }),
    }
}

/// The executable cargo's JSON messages name for binary `name`.
fn executable(messages: &str, name: &str) -> Option<PathBuf> {
    #[derive(Deserialize)]
    struct Target {
        name: String,
    }
    #[derive(Deserialize)]
    struct Artifact {
        reason: String,
        target: Option<Target>,
        executable: Option<PathBuf>,
    }
    messages
        .lines()
        .filter_map(|l| serde_json::from_str::<Artifact>(l).ok())
        .filter(|a| a.reason == "compiler-artifact" && a.target.as_ref().is_some_and(|t| t.name == name))
        .find_map(|a| a.executable)
}

/// Without cargo: the binaries of an earlier build, if both are there.
fn find(manifest: &Path, cargo: &OsStr, why: &str) -> Result<Binaries, PeerError> {
    let dir = manifest
        .parent()
        .unwrap_or(Path::new("."))
        .join("target")
        .join("release");
    let turmoil = dir.join(TURMOIL);
    let stateright = dir.join(STATERIGHT);
    let missing = [&turmoil, &stateright]
        .into_iter()
        .find(|b| !b.is_file())
        .map(|b| b.display().to_string());
    match missing {
        Some(missing) => Err(PeerError::NoCargo {
            cargo: cargo.to_string_lossy().into_owned(),
            why: why.to_string(),
            missing,
            manifest: manifest.display().to_string(),
        }),
        None => Ok(Binaries {
            turmoil,
            stateright,
            how: format!("found in {} (no cargo to rebuild them: {why})", dir.display()),
        }),
    }
}

/// What the turmoil model printed.
#[derive(Clone, Debug, Deserialize)]
pub struct TurmoilFigures {
    pub peer: String,
    pub virtual_secs: u64,
    pub lock_ops: u64,
    pub acquired: u64,
    pub violations: u64,
    pub cuts: u64,
    pub rounds: usize,
    pub lock_ops_per_sec: f64,
}

/// What the Stateright model printed.
#[derive(Clone, Debug, Deserialize)]
pub struct StaterightFigures {
    pub peer: String,
    /// Distinct states.
    pub states: u64,
    /// States generated, duplicates included.
    pub generated: u64,
    pub counterexample_len: Option<usize>,
    pub counterexample: Option<Vec<String>>,
    pub rounds: usize,
    pub states_per_sec: f64,
}

/// Runs peer `bin` with `args` and reads the JSON line it prints last.
pub fn run<T: serde::de::DeserializeOwned>(bin: &Path, args: &[String]) -> Result<T, PeerError> {
    let name = bin.display().to_string();
    let output = Command::new(bin)
        .args(args)
        .stderr(std::process::Stdio::piped())
        .output()
        .map_err(|e| PeerError::RunFailed {
            bin: name.clone(),
            why: e.to_string(),
        })?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(PeerError::RunFailed {
            bin: name,
            why: format!("{}: {}", output.status, stderr.trim()),
        });
    }
    parse(&name, &String::from_utf8_lossy(&output.stdout))
}

/// The figures of a peer's last line of output.
pub fn parse<T: serde::de::DeserializeOwned>(bin: &str, stdout: &str) -> Result<T, PeerError> {
    let line = stdout.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
    serde_json::from_str(line).map_err(|e| PeerError::BadOutput {
        bin: bin.to_string(),
        why: e.to_string(),
        line: line.chars().take(200).collect(),
    })
}

/// Which peers a bench compares against, and their binaries.
#[derive(Clone, Debug)]
pub struct Plan {
    pub binaries: Binaries,
    /// Whether each model's workload is the one lockstorm measures; if not, why.
    pub turmoil: Result<(), String>,
    pub stateright: Result<(), String>,
}

/// Which of the peers model what lockstorm will measure: the turmoil model is of
/// `partition.toml` as shipped (no `--set`), the Stateright model of the explore scope
/// of `node-clock-jump.toml`. Builds them (with `cargo`, found by the `CARGO`
/// variable, else on the PATH). An error when neither applies or they cannot be had.
pub fn plan(scenario: &Path, sets: usize, explored: &Path) -> Result<Plan, PeerError> {
    let named = |p: &Path, name: &str| p.file_name() == Some(OsStr::new(name));
    let turmoil = if !named(scenario, TURMOIL_SCENARIO) {
        Err(format!(
            "the turmoil model is of {TURMOIL_SCENARIO}'s workload, not {}",
            scenario.display()
        ))
    } else if sets > 0 {
        Err(format!(
            "the turmoil model is of {TURMOIL_SCENARIO} as shipped, without --set"
        ))
    } else {
        Ok(())
    };
    let stateright = if named(explored, STATERIGHT_SCENARIO) {
        Ok(())
    } else {
        Err(format!(
            "the Stateright model is of {STATERIGHT_SCENARIO}'s explore scope, not {}",
            explored.display()
        ))
    };
    if let (Err(t), Err(s)) = (&turmoil, &stateright) {
        return Err(PeerError::NothingToCompare(format!("{t}; {s}")));
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Ok(Plan {
        binaries: build(&cargo, &manifest())?,
        turmoil,
        stateright,
    })
}

/// What the peers of a [`Plan`] measured (`Err`: why a peer was not compared).
#[derive(Clone, Debug)]
pub struct Measured {
    pub how: String,
    pub turmoil: Result<TurmoilFigures, String>,
    pub stateright: Result<StaterightFigures, String>,
}

/// Runs each applicable peer, `rounds` rounds each (the peers print medians).
pub fn measure(plan: &Plan, rounds: usize) -> Result<Measured, PeerError> {
    let args = vec!["--rounds".to_string(), rounds.max(1).to_string()];
    let turmoil = match &plan.turmoil {
        Ok(()) => Ok(run(&plan.binaries.turmoil, &args)?),
        Err(why) => Err(why.clone()),
    };
    let stateright = match &plan.stateright {
        Ok(()) => Ok(run(&plan.binaries.stateright, &args)?),
        Err(why) => Err(why.clone()),
    };
    Ok(Measured {
        how: plan.binaries.how.clone(),
        turmoil,
        stateright,
    })
}

/// One figure of lockstorm's beside the same figure of a peer's.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// What is measured, with its unit ("lock ops/s").
    pub what: String,
    pub peer: String,
    pub ours: f64,
    pub theirs: f64,
}

impl Comparison {
    /// How many times the peer's rate lockstorm's is (above 1: lockstorm is faster).
    pub fn ratio(&self) -> f64 {
        self.ours / self.theirs.max(1e-9)
    }

    /// One table row: the figure, both rates, and the ratio.
    pub fn row(&self) -> String {
        format!(
            "{:<20} {:>14.0} {:>14.0} {:>9.2}x  (lockstorm / {})",
            self.what,
            self.ours,
            self.theirs,
            self.ratio(),
            self.peer
        )
    }
}

/// The table's header, above [`Comparison::row`]s.
pub fn header() -> String {
    format!(
        "{:<20} {:>14} {:>14} {:>10}",
        "vs peer", "lockstorm", "peer", "ratio"
    )
}

/// What the turmoil run counted, in one line.
pub fn turmoil_counts(f: &TurmoilFigures) -> String {
    format!(
        "{}: {} lock ops in {} virtual s of partition.toml's workload, {:.0} per virtual s ({} acquired), {} cuts, {} overlapping holds; median of {} rounds",
        f.peer,
        f.lock_ops,
        f.virtual_secs,
        f.lock_ops as f64 / (f.virtual_secs as f64).max(1e-9),
        f.acquired,
        f.cuts,
        f.violations,
        f.rounds
    )
}

/// What the Stateright search counted, in one line.
pub fn stateright_counts(f: &StaterightFigures) -> String {
    let found = match (&f.counterexample_len, &f.counterexample) {
        (Some(n), Some(path)) => format!("counterexample of {n} steps: {}", path.join(", ")),
        _ => "no counterexample".into(),
    };
    format!(
        "{}: {} distinct states ({} generated), {found}; one thread, median of {} rounds",
        f.peer, f.states, f.generated, f.rounds
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ratio_is_lockstorms_rate_over_the_peers() {
        let c = Comparison {
            what: "lock ops/s".into(),
            peer: "turmoil 0.7.2".into(),
            ours: 300_000.0,
            theirs: 2_000.0,
        };
        assert_eq!(c.ratio(), 150.0);
        let row = c.row();
        assert!(
            row.contains("300000") && row.contains("2000") && row.contains("150.00x"),
            "{row}"
        );
        let slower = Comparison {
            theirs: 600_000.0,
            ..c
        };
        assert!(slower.row().contains("0.50x"), "{}", slower.row());
    }

    #[test]
    fn the_figures_a_peer_prints_are_read_and_told() {
        let t: TurmoilFigures = parse(
            "t",
            "{\"peer\":\"turmoil 0.7.2\",\"virtual_secs\":60,\"lock_ops\":9000,\"acquired\":2500,\"violations\":0,\"cuts\":120,\"rounds\":3,\"lock_ops_per_sec\":1500.5,\"steps\":60000}\n",
        )
        .unwrap();
        assert_eq!((t.lock_ops, t.violations, t.lock_ops_per_sec), (9000, 0, 1500.5));
        assert!(
            turmoil_counts(&t).contains("9000 lock ops in 60 virtual s of partition.toml's workload, 150 per virtual s (2500 acquired), 120 cuts, 0 overlapping"),
            "{}",
            turmoil_counts(&t)
        );
        let s: StaterightFigures = parse(
            "s",
            "warming up\n{\"peer\":\"stateright 0.31.0\",\"states\":29339,\"generated\":47070,\"counterexample_len\":2,\"counterexample\":[\"Jump(2)\",\"Tick\"],\"rounds\":3,\"states_per_sec\":6.5e5}",
        )
        .unwrap();
        assert_eq!(s.states, 29_339);
        assert!(
            stateright_counts(&s).contains("counterexample of 2 steps: Jump(2), Tick"),
            "{}",
            stateright_counts(&s)
        );
    }

    #[test]
    fn output_without_figures_is_an_error_not_a_zero() {
        let e = parse::<TurmoilFigures>("turmoil_partition", "Finished\n").unwrap_err();
        assert!(matches!(e, PeerError::BadOutput { .. }), "{e}");
        let e = parse::<TurmoilFigures>("turmoil_partition", "{\"peer\":\"x\"}").unwrap_err();
        assert!(e.to_string().contains("missing field"), "{e}");
    }

    #[test]
    fn without_cargo_or_binaries_building_fails_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        let e = build(OsStr::new("cargo"), &manifest).unwrap_err();
        assert!(matches!(e, PeerError::NoCrate(_)), "{e}");

        std::fs::write(&manifest, "[package]\n").unwrap();
        let e = build(OsStr::new("/nonexistent/cargo"), &manifest).unwrap_err();
        assert!(matches!(e, PeerError::NoCargo { .. }), "{e}");
        assert!(e.to_string().contains(TURMOIL), "{e}");

        // A cargo that starts but fails (as without network the first time).
        let e = build(OsStr::new("false"), &manifest).unwrap_err();
        assert!(matches!(e, PeerError::BuildFailed { .. }), "{e}");
    }

    #[test]
    fn without_cargo_binaries_built_before_are_found() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(&manifest, "[package]\n").unwrap();
        let release = dir.path().join("target").join("release");
        std::fs::create_dir_all(&release).unwrap();
        for b in [TURMOIL, STATERIGHT] {
            std::fs::write(release.join(b), "").unwrap();
        }
        let found = build(OsStr::new("/nonexistent/cargo"), &manifest).unwrap();
        assert_eq!(found.turmoil, release.join(TURMOIL));
        assert!(found.how.starts_with("found in"), "{}", found.how);
    }

    #[test]
    fn a_peer_is_compared_only_on_the_workload_it_models() {
        let e = plan(Path::new("scenarios/fencing.toml"), 0, Path::new("x/single.toml")).unwrap_err();
        assert!(matches!(e, PeerError::NothingToCompare(_)), "{e}");
        assert!(e.to_string().contains("partition.toml's workload"), "{e}");
        let e = plan(Path::new("partition.toml"), 1, Path::new("x.toml")).unwrap_err();
        assert!(e.to_string().contains("without --set"), "{e}");
    }

    #[test]
    fn cargos_messages_name_the_executables() {
        let messages = "{\"reason\":\"compiler-artifact\",\"target\":{\"name\":\"lockstorm_peers\"},\"executable\":null}\n\
             {\"reason\":\"compiler-artifact\",\"target\":{\"name\":\"turmoil_partition\"},\"executable\":\"/p/target/release/turmoil_partition\"}\n\
             {\"reason\":\"build-finished\",\"success\":true}\n";
        assert_eq!(
            executable(messages, TURMOIL),
            Some(PathBuf::from("/p/target/release/turmoil_partition"))
        );
        assert_eq!(executable(messages, STATERIGHT), None);
    }
}
