//! What the command-line tests of shrink and explore share: running the binary in a
//! folder, and checking that a scenario it wrote runs as it expects.

use std::path::Path;
use std::process::{Command, Output};

pub fn lockstorm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("lockstorm runs")
}

/// `lockstorm scenario FILE` exits 0: the scenario's run is what it expects.
pub fn runs_as_expected(dir: &Path, file: &str) {
    let out = lockstorm(dir, &["scenario", file, "-q"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Each `args` exits 2 with an error whose first line names the problem (clap adds a
/// hint line after its own).
pub fn one_line_errors(dir: &Path, cases: &[(&[&str], &str)]) {
    for (args, needle) in cases {
        let out = lockstorm(dir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.contains("error") && first.contains(needle),
            "{args:?}: {stderr}"
        );
    }
}
