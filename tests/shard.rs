//! Scale-out, run as a user would in a fresh temporary directory: `--shard i/n` runs
//! merged with `lockstorm merge` write what one unsharded run writes, byte for byte
//! (all but timing.json, the wall-clock figures); `--jobs` does not change a result;
//! `sweep` writes its grid; and the command lines in docs/ run as written.

use std::path::Path;
use std::process::{Command, Output};

fn lockstorm(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("lockstorm runs")
}

/// Runs lockstorm, which must end with a verdict (0 or 1), or with `code` if given.
fn ok(dir: &Path, args: &[&str], code: Option<i32>) -> (i32, String) {
    let out = lockstorm(dir, args);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let got = out.status.code().unwrap_or(-1);
    let wanted = code.map_or(got == 0 || got == 1, |c| c == got);
    assert!(
        wanted,
        "{args:?} exited {got}: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (got, stdout)
}

/// Every file of `a` is in `b` with the same bytes, but timing.json.
fn assert_same_files(a: &Path, b: &Path) {
    let mut names: Vec<String> = std::fs::read_dir(a)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "timing.json")
        .collect();
    names.sort();
    assert!(names.len() >= 4, "{names:?}");
    for name in names {
        let (x, y) = (
            std::fs::read(a.join(&name)).unwrap(),
            std::fs::read(b.join(&name)),
        );
        assert!(
            y.as_ref().is_ok_and(|y| *y == x),
            "{name} differs between {a:?} and {b:?}"
        );
    }
}

/// A quorum of 1 of 3 under contention: some seeds are unsafe, so the reported seed is
/// not simply the first.
const SPLIT_BRAIN: &str = "duration = \"2s\"\nnodes = 3\nseed = 5\n[algorithm]\nquorum = 1\nretry_count = 0\n[clients]\ncount = 2\nthink = { min = \"0ms\", max = \"200ms\" }\n";

#[test]
fn four_shards_merged_write_the_report_of_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("s.toml"), SPLIT_BRAIN).unwrap();
    let whole = ok(
        dir,
        &["scenario", "s.toml", "--seeds", "10", "--out", "whole"],
        Some(1),
    );
    for i in 0..4 {
        let shard = format!("{i}/4");
        ok(
            dir,
            &["scenario", "s.toml", "--seeds", "10", "--shard", &shard, "-q"],
            None,
        );
    }
    let merged = ok(
        dir,
        &[
            "merge",
            "reports/s.shard-2-of-4",
            "reports/s.shard-0-of-4",
            "reports/s.shard-3-of-4",
            "reports/s.shard-1-of-4",
            "--out",
            "merged",
        ],
        Some(1),
    );
    assert_same_files(&dir.join("whole"), &dir.join("merged"));
    // The tables match but for the wall-clock speed line and the folder named.
    let strip = |s: &str| {
        s.lines()
            .filter(|l| !l.contains("/s ("))
            .map(|l| l.replace("report in merged", "report in whole"))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&whole.1), strip(&merged.1));
    let summary: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("merged/summary.json")).unwrap()).unwrap();
    assert_eq!(summary["seeds_run"].as_array().unwrap().len(), 10);
    assert_ne!(
        summary["reported_seed"], 5,
        "the first unsafe seed is reported, not the first seed"
    );
    let timing: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("merged/timing.json")).unwrap()).unwrap();
    assert_eq!(timing["seeds"], 10, "timing sums the shards");
}

#[test]
fn jobs_do_not_change_a_result() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("s.toml"), SPLIT_BRAIN).unwrap();
    ok(
        dir,
        &[
            "scenario", "s.toml", "--seeds", "8", "--jobs", "1", "--out", "one", "-q",
        ],
        Some(1),
    );
    ok(
        dir,
        &[
            "scenario", "s.toml", "--seeds", "8", "--jobs", "3", "--out", "three", "-q",
        ],
        Some(1),
    );
    assert_same_files(&dir.join("one"), &dir.join("three"));
}

#[test]
fn merge_refuses_what_is_not_every_shard_of_one_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("s.toml"), SPLIT_BRAIN).unwrap();
    for (i, out) in [(0, "a0"), (1, "a1")] {
        let shard = format!("{i}/2");
        ok(
            dir,
            &[
                "scenario", "s.toml", "--seeds", "4", "--shard", &shard, "--out", out, "-q",
            ],
            None,
        );
    }
    ok(
        dir,
        &[
            "scenario", "s.toml", "--seeds", "6", "--shard", "1/2", "--out", "b1", "-q",
        ],
        None,
    );
    let cases: [(&[&str], &str); 5] = [
        (&["merge", "a0"], "shard 1/2 is missing"),
        (&["merge", "a0", "a0"], "are both shard 0/2"),
        (&["merge", "a0", "b1"], "different runs"),
        (&["merge", "a0", "nowhere"], "shard.json"),
        (
            &["scenario", "s.toml", "--seeds", "3", "--shard", "0/4"],
            "at most 3 shards",
        ),
    ];
    for (args, needle) in cases {
        let out = lockstorm(dir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(needle) && stderr.trim().lines().count() == 1,
            "{args:?}: {stderr}"
        );
    }
}

const PAUSE: &str = "duration = \"4s\"\nnodes = 3\n[algorithm]\nttl = \"300ms\"\nretry_count = 5\nretry_delay = { min = \"0ms\", max = \"20ms\" }\n[clients]\ncount = 3\nhold = { min = \"5ms\", max = \"20ms\" }\nresource_writes = true\n[[faults]]\nat = \"1s\"\nkind = \"pause\"\nclient = 0\nduration = \"1s\"\npoint = \"after_acquire\"\n";

#[test]
fn a_sweep_draws_its_grid_and_its_shards_merge_into_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("p.toml"), PAUSE).unwrap();
    let sweep = |extra: &[&str]| {
        let mut args = vec![
            "sweep",
            "p.toml",
            "--vary",
            "faults.0.duration=50ms..1s:3",
            "--vary",
            "algorithm.fencing=false,true",
            "--seeds",
            "3",
            "-q",
        ];
        args.extend_from_slice(extra);
        ok(dir, &args, Some(0)).1
    };
    let out = sweep(&["--out", "whole"]);
    assert!(out.contains("6 cells x 3 seeds"), "{out}");
    let csv = std::fs::read_to_string(dir.join("whole/sweep.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().collect();
    assert!(rows[0].starts_with("faults.0.duration,algorithm.fencing,seeds,unsafe_seeds,violation_rate"));
    assert_eq!(rows.len(), 7);
    let stale = |row: &str| row.split(',').nth(7).unwrap().parse::<u64>().unwrap();
    // A 50 ms pause ends inside the 300 ms validity: no stale write, fenced or not.
    assert!(
        rows[1].starts_with("50ms,false,3,") && stale(rows[1]) == 0,
        "{csv}"
    );
    // A 1 s pause outlives it: unfenced, the late write lands on another's hold; fenced,
    // it is rejected.
    assert!(rows[5].starts_with("1s,false,") && stale(rows[5]) > 0, "{csv}");
    assert!(
        rows[5].contains("--set faults.0.duration=1s --set algorithm.fencing=false"),
        "{csv}"
    );
    assert!(rows[6].starts_with("1s,true,") && stale(rows[6]) == 0, "{csv}");
    for f in ["sweep-violations.svg", "sweep-stale-writes.svg"] {
        assert!(dir.join("whole").join(f).exists(), "{f}");
    }
    sweep(&["--shard", "0/2", "--out", "s0"]);
    sweep(&["--shard", "1/2", "--out", "s1"]);
    ok(dir, &["merge", "s1", "s0", "--out", "merged", "-q"], Some(0));
    assert_same_files(&dir.join("whole"), &dir.join("merged"));
}

#[test]
fn bad_sweeps_exit_2_naming_the_problem() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("p.toml"), PAUSE).unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["sweep", "p.toml", "--vary", "algorithm.ttl=1s..2s"],
            "needs a count",
        ),
        (
            &["sweep", "p.toml", "--vary", "algorithm.ttl=0ms,1s"],
            "ttl must be above 0",
        ),
        (
            &["sweep", "p.toml", "--vary", "algorithm.tll=1s,2s"],
            "unknown field `tll`",
        ),
        (
            &[
                "sweep", "p.toml", "--vary", "a=1,2", "--vary", "b=1,2", "--vary", "c=1,2",
            ],
            "one or two --vary axes",
        ),
    ];
    for (args, needle) in cases {
        let out = lockstorm(dir, args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

/// The `lockstorm` command lines of a file in docs/, with the CI's shard variable
/// turned into a shell one.
/// The shell lines that run lockstorm in a docs/ example, read from its YAML: a GitHub
/// Actions workflow's `run` steps, or the `sh -c` line of each Kubernetes Job's
/// containers. A GitHub shard index becomes `$JOB_COMPLETION_INDEX`, as Kubernetes names it.
fn doc_commands(name: &str) -> Vec<String> {
    use yaml_rust2::{Yaml, YamlLoader};
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut lines: Vec<String> = Vec::new();
    for doc in &docs {
        if let Some(jobs) = doc["jobs"].as_hash() {
            for job in jobs.values() {
                let steps = job["steps"].as_vec().expect("steps");
                lines.extend(steps.iter().filter_map(|s| s["run"].as_str()).map(str::to_string));
            }
        }
        if doc["kind"].as_str() == Some("Job") {
            for c in doc["spec"]["template"]["spec"]["containers"]
                .as_vec()
                .expect("containers")
            {
                let command: Vec<&str> = c["command"]
                    .as_vec()
                    .unwrap()
                    .iter()
                    .filter_map(Yaml::as_str)
                    .collect();
                assert_eq!(command, ["sh", "-c"], "{name}");
                lines.extend(
                    c["args"]
                        .as_vec()
                        .unwrap()
                        .iter()
                        .filter_map(Yaml::as_str)
                        .map(str::to_string),
                );
            }
        }
    }
    lines
        .iter()
        .flat_map(|l| l.lines())
        .map(str::trim)
        .filter(|l| l.starts_with("lockstorm "))
        .map(|l| l.replace("${{ matrix.shard }}", "$JOB_COMPLETION_INDEX"))
        .collect()
}

/// Runs a docs command line as a shell would, in `dir`, with this lockstorm first on the
/// PATH, shard index `index` and `env`; fails the test unless it succeeds.
fn run_doc_command(dir: &Path, command: &str, index: usize, env: &[(&str, &std::ffi::OsStr)]) {
    let bin = Path::new(env!("CARGO_BIN_EXE_lockstorm")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", &path)
        .env("JOB_COMPLETION_INDEX", index.to_string())
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{command}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn the_command_lines_in_docs_run_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(
        dir.join("small.toml"),
        "duration = \"2s\"\nnodes = 3\n[clients]\ncount = 3\n",
    )
    .unwrap();
    let results = dir.join("results");
    let sh = |command: &str, index: usize| {
        let env = [
            ("SCENARIO", "small.toml".as_ref()),
            ("SEEDS", "8".as_ref()),
            ("RESULTS", results.as_os_str()),
        ];
        run_doc_command(dir, command, index, &env);
    };
    let mut ran = 0;
    for doc in [
        "github-actions-shards.yml",
        "kubernetes-shards.yaml",
        "kubernetes-merge.yaml",
    ] {
        for command in doc_commands(doc) {
            let runs = if command.contains("--shard") { 4 } else { 1 };
            (0..runs).for_each(|i| sh(&command, i));
            ran += 1;
        }
    }
    assert_eq!(ran, 4, "two shard and two merge command lines");
    let summary = |d: &str| std::fs::read(dir.join(d).join("summary.json")).unwrap();
    let seeds: serde_json::Value = serde_json::from_slice(&summary("merged")).unwrap();
    assert_eq!(seeds["seeds_run"].as_array().unwrap().len(), 8);
    assert_eq!(
        summary("merged"),
        summary("results/merged"),
        "both engines merge the same run"
    );
}

/// An adapter list of one library that cannot start: its cells say so at once.
const MISSING_LIST: &str =
    "[[adapter]]\nname = \"missing\"\ncommand = [\"no-such-lock-worker\"]\nruntime = \"none\"\nkind = \"multi\"\n";

/// docs/github-actions-matrix.yml's command lines, as written, on a small adapter list:
/// one library that cannot start (its cells say so at once) over the whole catalogue,
/// four shards, then the merge into one matrix.
#[test]
fn the_matrix_recipe_in_docs_runs_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("list.toml"), MISSING_LIST).unwrap();
    let catalogue = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/matrix");
    let commands = doc_commands("github-actions-matrix.yml");
    assert_eq!(
        commands.len(),
        2,
        "one shard and one merge command line: {commands:?}"
    );
    for command in &commands {
        let runs = if command.contains("--shard") { 4 } else { 1 };
        for i in 0..runs {
            let env = [
                ("LIST", "list.toml".as_ref()),
                ("CATALOGUE", catalogue.as_os_str()),
                ("SEEDS", "2".as_ref()),
            ];
            run_doc_command(dir, command, i, &env);
        }
    }
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("libraries/matrix.json")).unwrap()).unwrap();
    let cells = m["adapters"][0]["cells"].as_array().unwrap();
    assert!(cells.len() >= 4, "{m}");
    assert!(
        cells
            .iter()
            .all(|c| c["status"] == "cannot_run" || c["status"] == "not_applicable"),
        "every cell from its shard: {m}"
    );
}

/// A matrix's shards merged into a folder that holds a user's README.md, or a user's
/// page where a library's goes, are refused in one line (exit 2), the files untouched;
/// into a fresh folder they merge.
#[test]
fn a_matrix_merge_spares_a_users_pages() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::write(dir.join("list.toml"), MISSING_LIST).unwrap();
    let catalogue = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/matrix");
    let catalogue = catalogue.to_str().unwrap();
    for i in 0..2 {
        let (shard, out) = (format!("{i}/2"), format!("shard-{i}"));
        let args = [
            "matrix",
            "--list",
            "list.toml",
            "--catalogue",
            catalogue,
            "--seeds",
            "1",
            "--shard",
            &shard,
            "--out",
            &out,
        ];
        let out = lockstorm(dir, &args);
        assert!(
            out.status.code().is_some_and(|c| c <= 1),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for (mine, file) in [
        ("mine-readme", "README.md"),
        ("mine-library", "missing/index.html"),
    ] {
        let path = dir.join(mine).join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "my page").unwrap();
        let out = lockstorm(dir, &["merge", "shard-0", "shard-1", "--out", mine]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{mine}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{mine}: {stderr}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "my page", "{mine}");
    }
    let out = lockstorm(dir, &["merge", "shard-0", "shard-1", "--out", "merged"]);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.join("merged/matrix.json").is_file() && dir.join("merged/index.html").is_file());
}
