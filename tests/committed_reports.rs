//! The committed reports/ folder: small enough to keep in git, in one image format, and
//! reachable from its top page. Generated runs of one's own (ignored by git) do not
//! count: only the folders git keeps are walked.

use std::path::{Path, PathBuf};

/// The committed folders and files of reports/ (see .gitignore).
const COMMITTED: [&str; 6] = [
    "analysis",
    "sweeps",
    "libraries",
    "libraries-sentinel",
    "README.md",
    "index.html",
];

/// The limit: issue 23 set 25 MB when the library matrix had 7 libraries and 110 cells.
/// Issue 38's matrix has 23 libraries and about 380 cells, each with its reported seed's
/// page and its verdict per seed (summary.json, about 8 KB a cell), every worker log cut
/// to 8 KB; with each cited history cut to the windows its stories cite (issue 41) the
/// committed reports hold about 32 MB, so the limit is 35 MB. The Sentinel matrix
/// (issue 39: 13 libraries, 2 faults) adds 2.2 MB, which leaves under 0.1 MB. Issue 41's
/// whole-run interactive timeline and quoted history lines add about 1 MB over the 48
/// analysis pages (drawn within `interactive::Budget::COMMITTED`), so the limit is 36 MB.
/// The library matrices' 450 cell pages do not have it yet: re-rendered, they would add
/// about 15 MB.
const LIMIT_BYTES: u64 = 36_000_000;

fn reports() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("reports")
}

fn walk(path: &Path, files: &mut Vec<(PathBuf, u64)>) {
    let meta = std::fs::metadata(path).unwrap();
    if meta.is_dir() {
        for entry in std::fs::read_dir(path).unwrap() {
            walk(&entry.unwrap().path(), files);
        }
    } else if path.file_name().is_none_or(|n| n != "timing.json") {
        files.push((path.to_path_buf(), meta.len()));
    }
}

fn committed_files() -> Vec<(PathBuf, u64)> {
    let mut files = Vec::new();
    for name in COMMITTED {
        let path = reports().join(name);
        if path.exists() {
            walk(&path, &mut files);
        }
    }
    files
}

#[test]
fn the_committed_reports_stay_under_36_mb_in_one_image_format() {
    let files = committed_files();
    let total: u64 = files.iter().map(|(_, n)| n).sum();
    assert!(
        total < LIMIT_BYTES,
        "reports/ holds {:.1} MB in {} files; the limit is 36 MB",
        total as f64 / 1e6,
        files.len()
    );
    let pngs: Vec<&PathBuf> = files
        .iter()
        .map(|(p, _)| p)
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    assert!(
        pngs.is_empty(),
        "plots are SVG only: {} PNGs, e.g. {:?}",
        pngs.len(),
        pngs.first()
    );
}

#[test]
fn the_top_page_links_every_report_folder() {
    let page = std::fs::read_to_string(reports().join("index.html")).expect("reports/index.html");
    let mut folders = vec!["analysis".to_string(), "libraries".to_string()];
    for optional in ["analysis/real", "libraries-sentinel"] {
        if reports().join(optional).join("index.html").is_file() {
            folders.push(optional.into());
        }
    }
    for entry in std::fs::read_dir(reports().join("sweeps")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            folders.push(format!("sweeps/{}", entry.file_name().to_string_lossy()));
        }
    }
    for folder in folders {
        assert!(
            page.contains(&format!("href=\"{folder}/")),
            "reports/index.html does not link {folder}/"
        );
    }
}

/// Every committed history.jsonl is whole, or cut (its meta line says so) keeping every
/// line its folder's index.html and narrative.md cite, at its own line number.
#[test]
fn every_committed_cut_history_keeps_each_line_its_pages_cite() {
    let histories: Vec<PathBuf> = committed_files()
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p.file_name().is_some_and(|n| n == "history.jsonl"))
        .collect();
    let mut cut = 0;
    for path in &histories {
        let text = std::fs::read_to_string(path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let meta: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        let Some(of) = meta["cut"]["lines"].as_u64() else {
            assert!(
                lines.iter().all(|l| !l.trim().is_empty()),
                "{}: a whole history has no blank line",
                path.display()
            );
            continue;
        };
        cut += 1;
        assert_eq!(
            lines.len() as u64,
            of,
            "{}: every line keeps its number",
            path.display()
        );
        let dir = path.parent().unwrap();
        let page = std::fs::read_to_string(dir.join("index.html")).unwrap();
        let md = std::fs::read_to_string(dir.join("narrative.md")).unwrap_or_default();
        assert!(
            page.contains("cut to what this page cites"),
            "{}: the page says it is cut",
            dir.display()
        );
        for n in lockstorm::report::cited(&md, &page).into_iter().flatten() {
            assert!(
                lines.get(n - 1).is_some_and(|l| !l.is_empty()),
                "{}: line {n} is cited and blank",
                path.display()
            );
        }
    }
    assert!(
        cut > 0,
        "the committed reports hold cut histories ({} histories)",
        histories.len()
    );
}
