//! `lockstorm matrix` end to end on a small slice: one adapter that runs (lockstorm's own
//! single-instance lock as a worker), one whose command does not exist, two faults of
//! the catalogue (one that only the single-instance layout has). Needs redis-server.

use std::process::Command;

#[test]
fn the_matrix_runs_adapters_against_faults_and_says_why_a_library_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("adapters.toml");
    std::fs::write(
        &list,
        "[[adapter]]\nname = \"builtin\"\ncommand = [\"lockstorm\", \"worker\"]\nruntime = \"rust\"\nkind = \"single\"\n\
         promise = \"what lockstorm's single-instance lock promises\"\n\n\
         [[adapter]]\nname = \"missing\"\ncommand = [\"no-such-lock-worker\"]\nruntime = \"none\"\nkind = \"multi\"\n",
    )
    .unwrap();
    let out = dir.path().join("libraries");
    let o = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["matrix", "--faults", "01-clean,11-replica-failover", "--list"])
        .arg(&list)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(o.status.code(), Some(0), "{shown}");
    for f in ["index.html", "README.md", "matrix.json"] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("matrix.json")).unwrap()).unwrap();
    let ids: Vec<&str> = m["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["01-clean", "11-replica-failover"]);

    let builtin = &m["adapters"][0]["cells"];
    assert_eq!(builtin[0]["status"], "ran", "{builtin}");
    assert_eq!(builtin[0]["lock_safe"], true);
    assert_eq!(builtin[0]["deadlock_free"], true);
    let report = out.join(builtin[0]["report"].as_str().unwrap());
    assert!(report.is_file(), "the cell links its report");
    assert!(builtin[0]["rerun"]
        .as_str()
        .unwrap()
        .contains("--adapter builtin"));
    // The real backend has no failover yet: the cell says so (it runs once it has).
    assert!(
        ["refused", "ran"].contains(&builtin[1]["status"].as_str().unwrap()),
        "{builtin}"
    );

    let missing = &m["adapters"][1]["cells"];
    assert_eq!(missing[0]["status"], "cannot_run");
    assert!(
        missing[0]["why"]
            .as_str()
            .unwrap()
            .contains("cannot start worker `no-such-lock-worker`"),
        "{missing}"
    );
    assert_eq!(
        missing[1]["status"], "not_applicable",
        "no failover for a multi-node lock"
    );
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("what lockstorm's single-instance lock promises"));
}
