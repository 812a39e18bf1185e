//! `lockstorm matrix` end to end on a small slice: lockstorm's own Redlock (multi) and
//! single-instance lock as workers, one adapter whose command does not exist, two faults
//! of the catalogue (one that only the multi-node layout has), two seeds per cell on two
//! parallel runs. Needs redis-server.

use std::process::Command;

#[test]
fn the_matrix_tallies_seeds_judges_the_probe_and_says_why_a_library_cannot_run() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("adapters.toml");
    std::fs::write(
        &list,
        r#"
[[adapter]]
name = "builtin-multi"
command = ["lockstorm", "worker"]
runtime = "rust"
kind = "multi"
algorithm = "redlock"

[[adapter]]
name = "builtin"
command = ["lockstorm", "worker"]
runtime = "rust"
kind = "single"
promise = "what lockstorm's single-instance lock promises"

[[adapter]]
name = "missing"
command = ["no-such-lock-worker"]
runtime = "none"
kind = "multi"

[predictions.redlock]
"01-clean" = { verdict = "safe", why = "no fault at all" }
"02-minority-crash" = { verdict = "tolerant", why = "a majority stays up" }
"#,
    )
    .unwrap();
    let out = dir.path().join("libraries");
    // What an earlier matrix left: a violation timeline in a cell this one finds safe, and
    // a report of the library that now cannot start. Their manifests vouch for them.
    let plant = |cell: &str, file: &str| {
        let d = out.join(cell);
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join(file), "from the last matrix").unwrap();
        std::fs::write(d.join(".lockstorm-files"), format!("{file}\n")).unwrap();
    };
    plant("builtin/01-clean", "timeline-violation.svg");
    plant("missing/01-clean", "index.html");
    let o = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "matrix",
            "--faults",
            "01-clean,02-minority-crash",
            "--seeds",
            "2",
            "--jobs",
            "2",
            "--list",
        ])
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
    for f in ["index.html", "README.md", "matrix.json"] {
        assert!(out.join(f).is_file(), "{f}: {shown}");
    }
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("matrix.json")).unwrap()).unwrap();
    assert_eq!(m["seeds"], 2);
    assert!(m["wall_secs"].as_f64().unwrap() > 0.0);
    let ids: Vec<&str> = m["faults"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["01-clean", "02-minority-crash"]);

    // The exit status is the libraries' predictions: 0 exactly when no cell departs and
    // no cell ended in an error on every seed.
    let cells: Vec<&serde_json::Value> = m["adapters"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["cells"].as_array().unwrap())
        .collect();
    let departed = cells.iter().filter(|c| !c["departs"].is_null()).count();
    let errored = cells.iter().filter(|c| c["status"] == "error").count();
    assert_eq!(
        o.status.code(),
        Some(i32::from(departed + errored > 0)),
        "{shown}"
    );

    let multi = &m["adapters"][0]["cells"];
    for c in multi.as_array().unwrap() {
        assert_eq!(c["status"], "ran", "{c}");
        // Every setting of the cell's grid ran the 2 seeds (a cell without a grid is one).
        let settings = c["settings"].as_array().map_or(0, Vec::len);
        assert_eq!(c["seeds"], 2 * settings.max(1) as u64, "{c}");
        for s in c["settings"].as_array().into_iter().flatten() {
            assert_eq!(s["seeds"], 2, "{s}");
            assert!(s["rerun_all"].as_str().unwrap().ends_with("--seeds 2"), "{s}");
            for set in s["set"].as_array().unwrap() {
                assert!(
                    s["rerun_all"].as_str().unwrap().contains(set.as_str().unwrap()),
                    "{s}"
                );
            }
        }
        assert!([1, 2].contains(&c["reported_seed"].as_u64().unwrap()), "{c}");
        // The probe took its own lock on every seed, and was judged.
        let t = &c["tolerance"];
        assert!(t["attempts"].as_u64().unwrap() > 0, "{c}");
        assert!(t["judged"].as_u64().unwrap() > 0, "{c}");
        assert!(c["contended_availability"].is_number(), "{c}");
        assert!(
            out.join(c["report"].as_str().unwrap()).is_file(),
            "the cell links its report"
        );
        let rerun = c["rerun"].as_str().unwrap();
        for part in ["--adapter builtin-multi", "--set clients.probe=true", "--seed "] {
            assert!(rerun.contains(part), "{rerun}");
        }
        assert!(c["rerun_all"].as_str().unwrap().ends_with("--seeds 2"), "{c}");
    }
    // The minority crash runs its grid: an outage inside and one past the clients' retries.
    assert_eq!(multi[1]["settings"].as_array().map(Vec::len), Some(2), "{multi}");
    // Under the minority crash the probe met the fault while a majority was up.
    assert!(
        multi[1]["tolerance"]["judged_during_faults"].as_u64().unwrap() > 0,
        "{multi}"
    );

    let single = &m["adapters"][1]["cells"];
    assert_eq!(single[0]["status"], "ran", "{single}");
    assert!(single[0]["tolerance"].is_null(), "no probe in a single-node cell");
    assert_eq!(
        single[1]["status"], "not_applicable",
        "no minority crash of one node"
    );

    let missing = &m["adapters"][2]["cells"];
    assert_eq!(missing[0]["status"], "cannot_run");
    assert!(
        missing[0]["why"]
            .as_str()
            .unwrap()
            .contains("cannot start worker `no-such-lock-worker`"),
        "{missing}"
    );
    // Each cell folder holds this matrix's run only, and its manifest lists all of it.
    let clean = out.join("builtin/01-clean");
    assert!(
        !clean.join("timeline-violation.svg").exists(),
        "the last matrix's timeline stays beside a safe verdict"
    );
    let mut files: Vec<String> = std::fs::read_dir(&clean)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            if e.file_type().unwrap().is_dir() {
                format!("{name}/")
            } else {
                name
            }
        })
        .filter(|n| n != ".lockstorm-files")
        .collect();
    files.sort();
    let listed: Vec<String> = std::fs::read_to_string(clean.join(".lockstorm-files"))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(listed, files);
    assert!(files.contains(&"summary.json".to_string()), "{files:?}");
    assert!(
        !out.join("missing/01-clean").exists(),
        "a cell that cannot run keeps no report of an earlier run"
    );
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(readme.contains("what lockstorm's single-instance lock promises"));
    assert!(readme.contains("Its algorithm predicts:"), "{readme}");
    assert!(
        readme.contains("**safe and fault-tolerant**: a majority stays up"),
        "{readme}"
    );
    assert!(readme.contains("the whole matrix took"), "{readme}");
}

#[test]
fn a_catalogue_run_with_an_adapter_expects_the_librarys_prediction() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "scenario",
            "scenarios/matrix/single/11-replica-failover.toml",
            "--adapter",
            "lockstorm-single",
            "--quiet",
            "--out",
        ])
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("lockstorm-single predicts unsafe here (a single instance with an asynchronous replica"),
        "{err}"
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("run/summary.json")).unwrap()).unwrap();
    // The prediction is the expectation: exit 0 exactly when the run found it.
    assert_eq!(summary["expect"], "unsafe", "{summary}");
    let as_expected = summary["as_expected"].as_bool().unwrap();
    assert_eq!(as_expected, summary["verdict"] == "unsafe", "{summary}");
    assert_eq!(o.status.code(), Some(i32::from(!as_expected)), "{err}\n{summary}");
}

#[test]
fn a_cell_folder_holding_a_file_lockstorm_did_not_write_stops_the_matrix_before_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("libraries");
    let cell = out.join("lockstorm-single/01-clean");
    std::fs::create_dir_all(&cell).unwrap();
    std::fs::write(cell.join("notes.txt"), "mine").unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "matrix",
            "--adapters",
            "lockstorm-single",
            "--faults",
            "01-clean",
            "--seeds",
            "1",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("did not write (notes.txt)"), "{stderr}");
    assert_eq!(std::fs::read_to_string(cell.join("notes.txt")).unwrap(), "mine");
    assert!(!out.join("matrix.json").exists(), "no cell ran");
}

/// What a cell's matrix.json entry says that does not depend on timing: a real run's
/// counts differ from run to run, its layout and its verdict's inputs do not.
fn stable(m: &serde_json::Value) -> serde_json::Value {
    let mut m = m.clone();
    m["wall_secs"] = serde_json::Value::Null;
    if let Some(o) = m.as_object_mut() {
        o.remove("shard_secs");
    }
    // The date it was made: each shard's own (the merged matrix keeps the earliest).
    if let Some(p) = m["provenance"].as_object_mut() {
        assert!(p
            .remove("date_utc")
            .is_some_and(|d| d.as_str().is_some_and(|d| d.ends_with('Z'))));
    }
    for a in m["adapters"].as_array_mut().unwrap() {
        a["library"] = serde_json::Value::Null;
        for c in a["cells"].as_array_mut().unwrap() {
            if c["status"] == "ran" {
                let keep = [
                    "status",
                    "seeds",
                    "seeds_asked",
                    "report",
                    "rerun",
                    "rerun_all",
                    "library",
                ];
                let o = c.as_object_mut().unwrap();
                o.retain(|k, _| keep.contains(&k.as_str()));
                o.remove("library");
            }
        }
    }
    m
}

#[test]
fn a_sharded_matrix_merges_into_the_matrix_one_run_writes() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("adapters.toml");
    // Three cells with a template: the single-instance lock's clean run, and the two of a
    // library that cannot start (its cells say so without running).
    std::fs::write(
        &list,
        r#"
[[adapter]]
name = "builtin"
command = ["lockstorm", "worker"]
runtime = "rust"
kind = "single"

[[adapter]]
name = "missing"
command = ["no-such-lock-worker"]
runtime = "none"
kind = "multi"
"#,
    )
    .unwrap();
    let matrix = |out: &std::path::Path, more: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "matrix",
                "--faults",
                "01-clean,02-minority-crash",
                "--seeds",
                "1",
                "--list",
            ])
            .arg(&list)
            .arg("--out")
            .arg(out)
            .args(more)
            .output()
            .unwrap();
        let shown = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(out.join("matrix.json").is_file(), "{shown}");
        (o.status.code(), shown)
    };
    let read = |p: &std::path::Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p.join("matrix.json")).unwrap()).unwrap()
    };
    let whole = dir.path().join("whole");
    matrix(&whole, &[]);
    // The shards run as separate processes, as on separate machines.
    let shards: Vec<_> = (0..2).map(|i| dir.path().join(format!("shard-{i}"))).collect();
    for (i, s) in shards.iter().enumerate() {
        let (_, shown) = matrix(s, &["--shard", &format!("{i}/2")]);
        assert!(shown.contains("in other shards"), "{shown}");
        assert!(s.join("shard.json").is_file());
    }
    assert_eq!(
        read(&shards[1])["adapters"][0]["cells"][0]["status"],
        "other_shard"
    );
    assert!(
        !shards[1].join("builtin/01-clean").exists(),
        "shard 1 runs only cell 1"
    );

    let merged = dir.path().join("merged");
    let merge = |dirs: &[&std::path::PathBuf], out: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_lockstorm"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .arg("merge")
            .args(dirs)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap()
    };
    let o = merge(&[&shards[1], &shards[0]], &merged);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.code().is_some_and(|c| c < 2), "{shown}");
    assert_eq!(stable(&read(&merged)), stable(&read(&whole)), "{shown}");
    for f in [
        "index.html",
        "README.md",
        "builtin/01-clean/index.html",
        "builtin/01-clean/summary.json",
    ] {
        assert!(merged.join(f).is_file(), "{f}: {shown}");
    }
    let readme = std::fs::read_to_string(merged.join("README.md")).unwrap();
    assert!(!readme.contains("another shard"), "{readme}");
    assert!(
        readme.contains("as 2 shards, the longest (their wall times: "),
        "{readme}"
    );
    assert!(!merged.join("shard.json").exists());

    // A shard missing, or a shard of another matrix, is refused with one line.
    let o = merge(&[&shards[0]], &dir.path().join("m2"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("shard 1/2 is missing"));
    let other = dir.path().join("other");
    matrix(&other, &["--shard", "1/2", "--seed", "7"]);
    let o = merge(&[&shards[0], &other], &dir.path().join("m3"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("different runs"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
