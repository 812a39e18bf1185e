//! The CI recipe a user copies (docs/ci/github-actions.yml) cannot rot: its YAML parses,
//! its commands are the ones the README documents, its artifact and test-result paths are
//! the folder and file those commands write, and the lockstorm commands run as written.

use quick_junit::Report;
use std::path::Path;
use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

fn repo(path: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn workflow() -> Yaml {
    let text = std::fs::read_to_string(repo("docs/ci/github-actions.yml")).unwrap();
    let mut docs = YamlLoader::load_from_str(&text).expect("the workflow is YAML");
    assert_eq!(docs.len(), 1);
    docs.remove(0)
}

/// Every step of every job.
fn steps(workflow: &Yaml) -> Vec<&Yaml> {
    let jobs = workflow["jobs"].as_hash().expect("jobs");
    jobs.values()
        .flat_map(|job| job["steps"].as_vec().expect("steps"))
        .collect()
}

/// The shell lines of the workflow's `run` steps that install or run lockstorm.
fn workflow_commands(workflow: &Yaml) -> Vec<String> {
    steps(workflow)
        .iter()
        .filter_map(|s| s["run"].as_str())
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|l| l.starts_with("lockstorm ") || l.starts_with("cargo install "))
        .map(str::to_string)
        .collect()
}

/// The code block of the README's "A CI gate" section.
fn readme_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(repo("README.md")).unwrap();
    let section = readme
        .split("\n### A CI gate\n")
        .nth(1)
        .expect("the README has a section \"A CI gate\"");
    let block = section
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the section shows the commands in a sh block");
    block
        .lines()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// `$NAME` and `${{ env.NAME }}` replaced by the workflow's `env` values.
fn expand(text: &str, workflow: &Yaml) -> String {
    let mut out = text.to_string();
    for (k, v) in workflow["env"].as_hash().expect("env") {
        let (k, v) = (k.as_str().unwrap(), yaml_text(v));
        out = out
            .replace(&format!("${{{{ env.{k} }}}}"), &v)
            .replace(&format!("\"${k}\""), &v)
            .replace(&format!("${k}"), &v);
    }
    out
}

fn yaml_text(v: &Yaml) -> String {
    match v {
        Yaml::String(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        other => panic!("env value {other:?}"),
    }
}

/// The value of `--flag VALUE` in a command line (after expansion, unquoted).
fn flag(command: &str, name: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == name)
        .unwrap_or_else(|| panic!("{command}: no {name}"));
    words[at + 1].trim_matches('"').to_string()
}

/// The `with:` of the step that uses `action` (by name, any version).
fn with<'a>(workflow: &'a Yaml, action: &str) -> &'a Yaml {
    let step = steps(workflow)
        .into_iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with(&format!("{action}@")))
        })
        .unwrap_or_else(|| panic!("no step uses {action}"));
    &step["with"]
}

#[test]
fn the_ci_recipe_runs_the_commands_the_readme_documents() {
    let wf = workflow();
    assert_eq!(workflow_commands(&wf), readme_commands());
}

#[test]
fn the_ci_recipe_keeps_the_reports_and_publishes_the_junit_file_its_command_writes() {
    let wf = workflow();
    let gate = workflow_commands(&wf)
        .into_iter()
        .find(|c| c.starts_with("lockstorm "))
        .expect("a lockstorm command");
    let gate = expand(&gate, &wf);
    let uploaded = expand(
        with(&wf, "actions/upload-artifact")["path"].as_str().unwrap(),
        &wf,
    );
    assert_eq!(
        uploaded,
        flag(&gate, "--out"),
        "the artifact is the report folder"
    );
    let published = expand(
        with(&wf, "mikepenz/action-junit-report")["report_paths"]
            .as_str()
            .unwrap(),
        &wf,
    );
    assert_eq!(
        published,
        flag(&gate, "--junit"),
        "the published results are the JUnit file"
    );
    // Both run after a failing gate too: that is when they matter.
    for action in ["actions/upload-artifact", "mikepenz/action-junit-report"] {
        let step = steps(&wf)
            .into_iter()
            .find(|s| s["uses"].as_str().is_some_and(|u| u.starts_with(action)))
            .unwrap();
        assert_eq!(step["if"].as_str(), Some("always()"), "{action}");
    }
}

#[test]
fn the_ci_recipes_lockstorm_commands_run_as_written_and_fail_on_a_scenario_not_as_expected() {
    let wf = workflow();
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let scenarios = dir.join("lockstorm");
    std::fs::create_dir(&scenarios).unwrap();
    std::fs::write(
        scenarios.join("small.toml"),
        "duration = \"2s\"\nnodes = 3\n[clients]\ncount = 3\n",
    )
    .unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_lockstorm"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let run = |command: &str| {
        let mut sh = Command::new("sh");
        sh.arg("-c").arg(command).current_dir(dir).env("PATH", &path);
        for (k, v) in wf["env"].as_hash().unwrap() {
            sh.env(k.as_str().unwrap(), yaml_text(v));
        }
        // Fewer seeds than a real gate: the test checks the commands, not the lock.
        sh.env("SEEDS", "2").output().unwrap()
    };
    let commands: Vec<String> = workflow_commands(&wf)
        .into_iter()
        .filter(|c| c.starts_with("lockstorm "))
        .collect();
    assert!(!commands.is_empty());
    let reports = dir.join(yaml_text(&wf["env"]["REPORTS"]));
    for command in &commands {
        let out = run(command);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let junit = |path: &Path| Report::deserialize_from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let report = junit(&reports.join("junit.xml"));
    assert_eq!((report.tests, report.failures), (2, 0));
    assert!(reports.join("small/index.html").is_file());
    // The same commands on a scenario that is not as expected fail the job.
    std::fs::write(
        scenarios.join("small.toml"),
        "expect = \"unsafe\"\nduration = \"2s\"\nnodes = 3\n[clients]\ncount = 3\n",
    )
    .unwrap();
    for command in &commands {
        assert_eq!(run(command).status.code(), Some(1), "{command}");
    }
    assert_eq!(junit(&reports.join("junit.xml")).failures, 2);
}
