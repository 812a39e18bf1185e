//! The reports site: reports/index.html and reports/README.md, the way in to every
//! committed report folder (the analysis on the simulator and on real Redis, the
//! sweeps, the library matrix), each with a one-line finding read from its files.
//!
//! [`refresh`] rewrites them whenever a writer of one of those folders finishes one that
//! sits directly in a folder named `reports`, so the site never lags its folders.

use super::words::esc;
use super::ReportError;
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

/// One entry of the site: a folder, its page, and what it found.
#[derive(Debug, PartialEq)]
pub struct Entry {
    /// The folder, relative to the site root ("analysis/real").
    pub folder: String,
    pub title: String,
    /// The page to open, relative to the site root.
    pub page: String,
    pub finding: String,
}

fn read(path: &Path) -> Option<Value> {
    serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()
}

fn subfolders(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What an analysis folder found, from its scenarios' summary.json files.
fn analysis_finding(dir: &Path) -> Option<String> {
    let summaries: Vec<Value> = subfolders(dir)
        .iter()
        .filter_map(|n| read(&dir.join(n).join("summary.json")))
        .collect();
    if summaries.is_empty() {
        return None;
    }
    let count = |f: &dyn Fn(&Value) -> bool| summaries.iter().filter(|s| f(s)).count();
    Some(format!(
        "{} scenarios: {} unsafe, {} safe, {} not exercised; the guarded resource unsafe in {}; not live in {}; {} NOT as the scenario expects.",
        summaries.len(),
        count(&|s| s["verdict"] == "unsafe"),
        count(&|s| s["verdict"] == "safe"),
        count(&|s| s["verdict"] == "not_exercised"),
        count(&|s| s["resource_verdict"] == "unsafe"),
        count(&|s| s["live"] == false),
        count(&|s| s["as_expected"] == false)
    ))
}

/// What a sweep found, from its sweep.json.
fn sweep_finding(sweep: &Value) -> String {
    let cells = sweep["cells"].as_array().map_or(&[][..], Vec::as_slice);
    let with = |key: &str| cells.iter().filter(|c| c[key].as_u64().unwrap_or(0) > 0).count();
    let axes: Vec<&str> = sweep["axes"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .filter_map(|a| a["key"].as_str())
        .collect();
    format!(
        "{} over {} ({} cells × {} seeds): a violation in {} cells, a stale write in {}.",
        sweep["scenario"].as_str().unwrap_or("?"),
        axes.join(" × "),
        cells.len(),
        sweep["seeds"],
        with("unsafe_seeds"),
        with("stale_seeds")
    )
}

/// A matrix cell with a violation or a stale write (in a matrix.json from before cells
/// kept seed counts).
fn cell_unsafe(c: &Value) -> bool {
    let some = |key: &str| c[key].as_u64().unwrap_or(0) > 0;
    some("unsafe_seeds") || some("stale_seeds") || c["lock_safe"] == false || c["resource"] == "unsafe"
}

/// What the library matrix found, from its matrix.json: which libraries held under
/// every fault they ran and which broke under which faults
/// ([`super::matrix_page::headline`]); for a matrix.json too old to read as a
/// [`super::matrix::Matrix`], which libraries broke somewhere.
fn matrix_finding(m: &Value) -> String {
    if let Ok(matrix) = serde_json::from_value::<super::matrix::Matrix>(m.clone()) {
        return super::matrix_page::headline(&matrix);
    }
    let adapters = m["adapters"].as_array().map_or(&[][..], Vec::as_slice);
    let faults = m["faults"].as_array().map_or(0, Vec::len);
    let broken: Vec<&str> = adapters
        .iter()
        .filter(|a| {
            a["cells"]
                .as_array()
                .is_some_and(|cells| cells.iter().any(cell_unsafe))
        })
        .filter_map(|a| a["name"].as_str())
        .collect();
    format!(
        "{} libraries × {} faults (a matrix.json of an older lockstorm); lock or resource unsafe under some fault: {}.",
        adapters.len(),
        faults,
        if broken.is_empty() {
            "none".into()
        } else {
            broken.join(", ")
        }
    )
}

/// The entries for the folders under `root`, in a fixed order.
pub fn entries(root: &Path) -> Vec<Entry> {
    let mut out = Vec::new();
    for (folder, title) in [
        ("analysis", "The analysis, on the deterministic simulator"),
        (
            "analysis/real",
            "The analysis on real Redis (local redis-servers)",
        ),
    ] {
        let dir = root.join(folder);
        if let (true, Some(finding)) = (dir.join("index.html").is_file(), analysis_finding(&dir)) {
            out.push(Entry {
                folder: folder.into(),
                title: title.into(),
                page: format!("{folder}/index.html"),
                finding,
            });
        }
    }
    for name in subfolders(&root.join("sweeps")) {
        let dir = root.join("sweeps").join(&name);
        if let Some(sweep) = read(&dir.join(crate::outcome::sweep::JSON)) {
            // The sweep's own page, with its diagrams; a sweep written before it had one
            // links its notes, else its rows.
            let page = if dir.join(super::sweep::PAGE).is_file() {
                super::sweep::PAGE
            } else if dir.join("README.md").is_file() {
                "README.md"
            } else {
                crate::outcome::sweep::CSV
            };
            out.push(Entry {
                folder: format!("sweeps/{name}"),
                title: format!("Sweep {name}"),
                page: format!("sweeps/{name}/{page}"),
                finding: sweep_finding(&sweep),
            });
        }
    }
    for (folder, title) in [
        (
            "libraries",
            "The library matrix: lock libraries under the fault catalogue",
        ),
        (
            "libraries-sentinel",
            "The Sentinel matrix: single-instance libraries on real Sentinel failovers and split brains",
        ),
    ] {
        if let Some(m) = read(&root.join(folder).join("matrix.json")) {
            out.push(Entry {
                folder: folder.into(),
                title: title.into(),
                page: format!("{folder}/index.html"),
                finding: matrix_finding(&m),
            });
        }
    }
    out
}

const TITLE: &str = "lockstorm reports";

fn html(entries: &[Entry]) -> String {
    let mut h = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{TITLE}</title><style>body{{font-family:sans-serif;max-width:1000px;margin:2em auto;padding:0 1em;line-height:1.45}}li{{margin:.6em 0}}</style></head><body>\n<h1>{TITLE}</h1>\n<p>What lockstorm found about Redis locks: every report folder committed here, with its finding in one line. Each run page opens with its verdict, the timeline around what went wrong and the story of it.</p>\n<ul>\n"
    );
    for e in entries {
        let _ = writeln!(
            h,
            "<li><a href=\"{}\"><b>{}</b></a> <code>{}/</code><br>{}</li>",
            esc(&e.page),
            esc(&e.title),
            esc(&e.folder),
            esc(&e.finding)
        );
    }
    let _ = write!(
        h,
        "</ul>\n<p class=\"provenance\"><small>{} Made again by <code>{REMAKE}</code>.</small></p>\n</body></html>\n",
        esc(&made())
    );
    h
}

/// The command that makes the site's pages again.
const REMAKE: &str = "lockstorm report reports";

/// What made the site's pages: this lockstorm, from the folders' own files (each
/// folder's page says what made it, and when). Undated, so that a refresh by the same
/// lockstorm over the same folders writes the same bytes.
fn made() -> String {
    format!(
        "This index: made by {} from the files of the folders it lists (each folder's page says what made it, and when).",
        super::provenance::lockstorm()
    )
}

fn markdown(entries: &[Entry]) -> String {
    let mut md = format!(
        "# {TITLE}\n\nEvery report folder committed here, with its finding in one line (open index.html for the same as a page). Generated runs of your own land beside them and are ignored by git.\n\n"
    );
    for e in entries {
        let _ = writeln!(md, "- [{}]({}) (`{}/`): {}", e.title, e.page, e.folder, e.finding);
    }
    let _ = writeln!(md, "\n{} Made again by `{REMAKE}`.", made());
    md
}

/// The site's own files, which its manifest lists; everything else in the root (the
/// report folders) is left alone.
const FILES: [&str; 2] = ["index.html", "README.md"];

/// Writes index.html and README.md into `root` for the folders under it; refuses a root
/// whose index.html or README.md no lockstorm manifest vouches for (the user's).
pub fn write(root: &Path) -> Result<(), ReportError> {
    let folder = super::folder::RunFolder::prepare_shared(root, &FILES.map(String::from))?;
    let entries = entries(root);
    for (name, text) in FILES.into_iter().zip([html(&entries), markdown(&entries)]) {
        let path = root.join(name);
        super::write_atomic(&path, text.as_bytes())?;
    }
    folder.finish()
}

/// After a report folder `out` is written: rewrites the site of the `reports` folder it
/// sits in (directly, or as analysis/real), if it sits in one and the site there is
/// lockstorm's; a folder named `reports` whose index is the user's (or that another run
/// is rewriting) is left as it is, with a note.
pub fn refresh(out: &Path) -> Result<(), ReportError> {
    let is_reports = |p: &Path| p.file_name().is_some_and(|n| n == "reports");
    let root = out.ancestors().skip(1).take(2).find(|p| is_reports(p));
    match root.map(write) {
        Some(Err(ReportError::Folder { path, message })) => {
            crate::errln!(
                "lockstorm: note: the reports index in {path} was left as it is: the folder {message}"
            );
            Ok(())
        }
        Some(other) => other,
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_site_links_every_report_folder_with_its_finding() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("reports");
        let put = |rel: &str, text: &str| {
            let path = root.join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        put("analysis/index.html", "");
        put(
            "analysis/a/summary.json",
            r#"{"verdict":"unsafe","resource_verdict":"safe","live":true,"as_expected":true}"#,
        );
        put(
            "analysis/b/summary.json",
            r#"{"verdict":"safe","resource_verdict":"unsafe","live":false,"as_expected":true}"#,
        );
        put(
            "sweeps/s/sweep.json",
            r#"{"scenario":"s","axes":[{"key":"ttl"}],"seeds":20,"cells":[{"unsafe_seeds":1,"stale_seeds":0},{"unsafe_seeds":0,"stale_seeds":0}]}"#,
        );
        put("sweeps/s/README.md", "");
        put("sweeps/s/index.html", "");
        put(
            "sweeps/old/sweep.json",
            r#"{"scenario":"old","axes":[],"seeds":1,"cells":[]}"#,
        );
        put("sweeps/old/README.md", "");
        put(
            "libraries/matrix.json",
            r#"{"faults":[{},{}],"adapters":[{"name":"x","cells":[{"lock_safe":false}]},{"name":"y","cells":[{"lock_safe":true}]}]}"#,
        );
        refresh(&root.join("analysis")).unwrap();
        let page = std::fs::read_to_string(root.join("index.html")).unwrap();
        for link in [
            "analysis/index.html",
            "sweeps/s/index.html",
            "sweeps/old/README.md",
            "libraries/index.html",
        ] {
            assert!(page.contains(&format!("href=\"{link}\"")), "{link}: {page}");
        }
        assert!(page.contains(
            "2 scenarios: 1 unsafe, 1 safe, 0 not exercised; the guarded resource unsafe in 1; not live in 1"
        ));
        assert!(page.contains("a violation in 1 cells, a stale write in 0"));
        assert!(page.contains("under some fault: x."));
        // What made it, and how to make it again.
        let made = format!(
            "This index: made by {} from the files",
            super::super::provenance::lockstorm()
        );
        assert!(page.contains(&made), "{page}");
        assert!(page.contains("Made again by <code>lockstorm report reports</code>."));
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
        assert!(readme.contains(&made), "{readme}");
        // A folder outside any `reports` folder leaves no site behind.
        refresh(tmp.path()).unwrap();
        assert!(!tmp.path().join("index.html").exists());
    }

    #[test]
    fn a_reports_folder_whose_index_is_the_users_is_left_as_it_is() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("reports");
        std::fs::create_dir_all(root.join("s")).unwrap();
        std::fs::write(root.join("README.md"), "mine").unwrap();
        refresh(&root.join("s")).unwrap();
        assert_eq!(std::fs::read_to_string(root.join("README.md")).unwrap(), "mine");
        assert!(!root.join("index.html").exists(), "no half of a site either");
        // Once lockstorm's (its manifest lists them), the site is rewritten.
        std::fs::remove_file(root.join("README.md")).unwrap();
        refresh(&root.join("s")).unwrap();
        std::fs::write(root.join("README.md"), "old").unwrap();
        refresh(&root.join("s")).unwrap();
        assert_ne!(std::fs::read_to_string(root.join("README.md")).unwrap(), "old");
    }

    #[test]
    fn the_matrix_line_names_who_held_and_who_broke_under_what() {
        let ran = |unsafe_seeds: u64| {
            serde_json::json!({
                "status": "ran", "seeds": 10, "seeds_asked": 10, "unsafe_seeds": unsafe_seeds,
                "not_exercised_seeds": 0, "rate": {"rate": 0.0, "low": 0.0, "high": 0.3},
                "violations": unsafe_seeds, "stale_seeds": 0, "stale_writes": 0,
                "resource_writes": 0, "stuck_seeds": 0, "availability": 1.0, "unknown": 0.0,
                "stalls": 0, "stall_seeds": 0, "stall_max_us": 0, "liveness": "none",
                "worker_errors": 0, "reported_seed": 1, "report": "x/index.html",
                "rerun": "", "rerun_all": "",
            })
        };
        let row = |name: &str, cells: Vec<Value>| {
            serde_json::json!({"name": name, "runtime": "rust", "kind": "multi",
                "command": name, "promise": "", "cells": cells})
        };
        let m = serde_json::json!({
            "seed": 1, "seeds": 10, "command": "lockstorm matrix",
            "faults": [
                {"id": "01-clean", "title": "Clean", "about": ""},
                {"id": "05-client-pause", "title": "A client paused", "about": ""},
            ],
            "adapters": [row("held", vec![ran(0), ran(0)]), row("broke", vec![ran(0), ran(3)])],
        });
        assert_eq!(
            matrix_finding(&m),
            "1 of 2 libraries safe under every fault they ran (held); two clients held the lock at once: broke (client pause)."
        );
    }
}

/// `cargo test --lib report::site::write_the_committed_site -- --ignored` rewrites
/// reports/index.html and reports/README.md from the committed folders, without
/// running anything.
#[cfg(test)]
#[test]
#[ignore = "writes into the repository's reports/"]
fn write_the_committed_site() {
    write(&Path::new(env!("CARGO_MANIFEST_DIR")).join("reports")).unwrap();
}
