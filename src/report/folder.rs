//! A report folder holds one run, and says so while the run goes.
//!
//! Before a run writes into a folder, [`RunFolder::prepare`] removes the files an earlier
//! run wrote there: those listed in its manifest, [`MANIFEST`], and nothing else. A
//! file merely named like one of lockstorm's (`index.html`, `workers/`) is the user's
//! unless a manifest vouches for it: a folder holding anything the manifest does not
//! list is refused, so a report never mixes runs (an old `timeline-violation.png` beside
//! a new safe verdict) and a mistyped `--out` never costs a user a file. The manifest is
//! written as soon as the folder is prepared, listing every name the run may write, so
//! a run killed halfway leaves a folder the next run may clean.
//!
//! While the run goes, summary.json is a placeholder that says the run is partial
//! ([`RunFolder::start`]), and on the real backend history.jsonl grows line by line. A
//! run stopped by a signal or an error rewrites the summary with its reason; one killed
//! outright leaves the placeholder; either way `lockstorm report DIR` renders what was
//! recorded. When the report is written, [`RunFolder::finish`] lists what is in the
//! folder in the manifest, for the next run to remove.
//!
//! A folder that other things share ([`RunFolder::prepare_shared`]: a sweep's, an
//! analysis's root, the reports site) is held to the same rule for the names its writer
//! writes: an earlier run's files (by its manifest) go, a file of the same name that no
//! manifest vouches for is refused, and everything else (a hand-written README.md beside
//! a sweep, another run's folder with its own manifest) is left alone and kept out of
//! the manifest.

use super::{io_err, ReportError};
use crate::children::{register_cleanup, Cleanup};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The list of files a run wrote, one name per line.
pub const MANIFEST: &str = ".lockstorm-files";

/// Files a run writes whatever it found, and which a re-render keeps: the summary, the
/// history, the wall-clock figures, a shard's description, and the logs of the worker
/// clients and of the redis-servers (the two folders lockstorm writes into a report:
/// [`super::logs`]).
const RUN_FILES: &[&str] = &[
    "summary.json",
    "history.jsonl",
    "timing.json",
    "shard.json",
    "workers/",
    "nodes/",
];

/// Files rendered from them, also written by lockstorm versions without a manifest.
const RENDERED: &[&str] = &["index.html", "narrative.md"];
const PLOT_STEMS: &[&str] = &[
    "timeline",
    "timeline-violation",
    "timeline-stale-write",
    "timeline-fault",
    "latency-cdf",
    "operations",
    "availability",
    "wait-cdf",
];

/// The folder of a run in progress.
pub struct RunFolder {
    dir: PathBuf,
    /// The folder itself, open and locked (`flock`) while this run writes into it: a
    /// second run with the same `--out` is refused instead of mixing its files in. The
    /// kernel drops the lock when lockstorm exits, whatever the way.
    _lock: std::fs::File,
    /// Marks the summary partial if lockstorm must stop without finishing the report.
    _on_abort: Option<Cleanup>,
    /// A shared folder's entries that are not this writer's: kept, never listed.
    kept: BTreeSet<String>,
}

impl RunFolder {
    /// Creates `dir`, or empties it of an earlier run's files; refuses a folder that
    /// holds anything lockstorm did not write.
    pub fn prepare(dir: &Path) -> Result<RunFolder, ReportError> {
        Self::take(dir, &vouched(), false)
    }

    /// Prepares a folder that holds other things too, for a writer of `names` (a name
    /// ending in `/` is a folder): removes what an earlier run's manifest lists, refuses a
    /// name of `names` that no manifest lists (a user's file it would overwrite), and
    /// keeps the rest out of the way and out of the manifest.
    pub fn prepare_shared(dir: &Path, names: &[String]) -> Result<RunFolder, ReportError> {
        Self::take(dir, names, true)
    }

    /// Locks `dir`, refuses it if it holds what is not lockstorm's (any such file, or in
    /// a `shared` folder one of `names`), removes the earlier run's files and lists
    /// `names` in the manifest while this run writes.
    fn take(dir: &Path, names: &[String], shared: bool) -> Result<RunFolder, ReportError> {
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let lock = lock_dir(dir)?;
        let (ours, others) = sort_out(dir, false)?;
        let refusal = if shared {
            others.iter().find(|n| names.contains(n)).map(|name| {
                format!(
                    "holds {name}, which no lockstorm manifest lists and which would be overwritten; choose another folder, or move the file"
                )
            })
        } else {
            const SHOWN: usize = 3;
            let mut shown: Vec<&str> = others.iter().take(SHOWN).map(String::as_str).collect();
            if others.len() > SHOWN {
                shown.push("...");
            }
            (!others.is_empty()).then(|| {
                format!(
                    "holds files lockstorm did not write ({}); a report folder holds one run: choose a new or empty --out folder",
                    shown.join(", ")
                )
            })
        };
        if let Some(message) = refusal {
            return Err(ReportError::Folder {
                path: dir.display().to_string(),
                message,
            });
        }
        remove(dir, &ours)?;
        write_names(dir, names)?;
        Ok(RunFolder {
            dir: dir.to_path_buf(),
            _lock: lock,
            _on_abort: None,
            kept: if shared { others } else { BTreeSet::new() },
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the real backend streams the history.
    pub fn history_path(&self) -> PathBuf {
        self.dir.join("history.jsonl")
    }

    /// Writes the placeholder summary (`summary` should say `"partial": true` and why)
    /// and arranges for it to be marked with the reason if lockstorm stops hard.
    pub fn start(&mut self, summary: &serde_json::Value) -> Result<(), ReportError> {
        super::write_json(&self.dir.join("summary.json"), summary)?;
        let dir = self.dir.clone();
        self._on_abort = Some(register_cleanup(move |reason| {
            let _ = mark_partial(&dir, reason);
        }));
        Ok(())
    }

    /// The run failed: the summary says so (history.jsonl keeps what was recorded).
    pub fn fail(self, reason: &str) -> Result<(), ReportError> {
        mark_partial(&self.dir, reason)?;
        write_manifest(&self.dir, &self.kept)
    }

    /// The report is written: lists the folder's files for the next run to remove.
    pub fn finish(self) -> Result<(), ReportError> {
        write_manifest(&self.dir, &self.kept)
    }

    /// Copies the run in `from` (another folder of lockstorm's, e.g. a shard's cell) into
    /// this folder, all but its manifest; [`RunFolder::finish`] then lists it.
    pub fn copy_from(&self, from: &Path) -> Result<(), ReportError> {
        copy_tree(from, &self.dir)
    }

    /// Nothing was written after all: the manifest [`RunFolder::prepare`] wrote goes,
    /// and the folder with it if that leaves it empty.
    pub fn discard(self) {
        let _ = std::fs::remove_file(self.dir.join(MANIFEST));
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// Opens `dir` and takes its exclusive lock, or says which run holds it.
fn lock_dir(dir: &Path) -> Result<std::fs::File, ReportError> {
    use std::os::fd::AsRawFd as _;
    let file = std::fs::File::open(dir).map_err(io_err(dir))?;
    // SAFETY: flock(2) on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(ReportError::Folder {
            path: dir.display().to_string(),
            message: match e.raw_os_error() {
                Some(libc::EWOULDBLOCK) => {
                    "another lockstorm run is writing into this folder; choose another --out, or wait for it"
                        .into()
                }
                _ => format!("cannot lock it: {e}"),
            },
        });
    }
    Ok(file)
}

/// Every name a run may write: what a folder's manifest vouches for while it runs.
fn vouched() -> Vec<String> {
    let mut names: Vec<String> = RUN_FILES.iter().chain(RENDERED).map(|n| n.to_string()).collect();
    for stem in PLOT_STEMS {
        names.push(format!("{stem}.png"));
        names.push(format!("{stem}.svg"));
    }
    names
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), ReportError> {
    for e in std::fs::read_dir(from).map_err(io_err(from))? {
        let e = e.map_err(io_err(from))?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        let kind = e.file_type().map_err(io_err(&src))?;
        if kind.is_dir() {
            std::fs::create_dir_all(&dst).map_err(io_err(&dst))?;
            copy_tree(&src, &dst)?;
        } else if kind.is_file() && e.file_name() != MANIFEST {
            std::fs::copy(&src, &dst).map_err(io_err(&src))?;
        }
    }
    Ok(())
}

/// Sets `partial` and `partial_reason` in `dir`'s summary.json.
pub fn mark_partial(dir: &Path, reason: &str) -> Result<(), ReportError> {
    let path = dir.join("summary.json");
    let mut summary: serde_json::Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_else(|| serde_json::json!({}));
    summary["partial"] = true.into();
    summary["partial_reason"] = reason.into();
    super::write_json(&path, &summary)
}

/// Before a re-render: removes what was rendered from the history last time; returns
/// the files that are not lockstorm's, which stay and stay out of the manifest. A file
/// with a name the render writes that neither a manifest nor a summary.json vouches for
/// (a user's `index.html`) is refused rather than overwritten.
pub fn clear_renders(dir: &Path) -> Result<BTreeSet<String>, ReportError> {
    let (mut ours, mut others) = sort_out(dir, true)?;
    if !dir.join(MANIFEST).exists() && dir.join("summary.json").is_file() {
        // A report written by the library's `report::write` alone, with no run folder
        // around it: its summary vouches for the renders beside it.
        let renders: Vec<String> = others
            .iter()
            .filter(|n| RENDERED.contains(&n.as_str()) || is_plot(n))
            .cloned()
            .collect();
        for name in renders {
            others.remove(&name);
            ours.insert(name);
        }
    }
    if let Some(name) = others
        .iter()
        .find(|n| RENDERED.contains(&n.as_str()) || is_plot(n))
    {
        return Err(ReportError::Folder {
            path: dir.display().to_string(),
            message: format!(
                "holds {name}, which no lockstorm manifest lists and the report would overwrite; render into a folder of lockstorm's"
            ),
        });
    }
    remove(dir, &ours)?;
    Ok(others)
}

/// Renders a shared folder again in place (a sweep's pages from its sweep.json, which
/// `render` keeps): a file of `new_names` that no manifest lists (a user's, e.g. an
/// `index.html` of their own beside a sweep written before sweeps had one) is refused
/// before anything is written; afterwards the manifest lists what it listed before and
/// each of `new_names` that now exists, nothing else (a user's README.md stays out).
pub fn rerender_shared<T>(
    dir: &Path,
    new_names: &[&str],
    render: impl FnOnce() -> Result<T, ReportError>,
) -> Result<T, ReportError> {
    let _lock = lock_dir(dir)?;
    let listed: BTreeSet<String> = std::fs::read_to_string(dir.join(MANIFEST))
        .map(|text| text.lines().map(str::to_string).collect())
        .unwrap_or_default();
    if let Some(name) = new_names
        .iter()
        .find(|n| dir.join(n).exists() && !listed.contains(**n))
    {
        return Err(ReportError::Folder {
            path: dir.display().to_string(),
            message: format!(
                "holds {name}, which no lockstorm manifest lists and which would be overwritten; move the file"
            ),
        });
    }
    let out = render()?;
    let mut names: Vec<String> = listed.into_iter().collect();
    for n in new_names {
        if dir.join(n).exists() && !names.iter().any(|l| l == n) {
            names.push(n.to_string());
        }
    }
    write_names(dir, &names)?;
    Ok(out)
}

/// Lists the folder's files, except `others` and the manifest itself, in the manifest.
pub fn write_manifest(dir: &Path, others: &BTreeSet<String>) -> Result<(), ReportError> {
    let names: Vec<String> = files(dir)?
        .into_iter()
        .filter(|n| n != MANIFEST && !others.contains(n))
        .collect();
    write_names(dir, &names)
}

fn write_names(dir: &Path, names: &[String]) -> Result<(), ReportError> {
    let mut names = names.to_vec();
    names.sort();
    let path = dir.join(MANIFEST);
    let mut text = names.join("\n");
    text.push('\n');
    super::write_atomic(&path, text.as_bytes())
}

/// The names in `dir`, split into lockstorm's (the manifest lists them: to remove) and
/// the rest. With `renders_only`, the run's own files ([`RUN_FILES`]) are in neither (a
/// re-render keeps them).
fn sort_out(dir: &Path, renders_only: bool) -> Result<(BTreeSet<String>, BTreeSet<String>), ReportError> {
    let listed: BTreeSet<String> = std::fs::read_to_string(dir.join(MANIFEST))
        .map(|text| text.lines().map(str::to_string).collect())
        .unwrap_or_default();
    let (mut ours, mut others) = (BTreeSet::new(), BTreeSet::new());
    for name in files(dir)? {
        let kept = renders_only && RUN_FILES.contains(&name.as_str());
        let known = name == MANIFEST || listed.contains(&name) || is_our_temp(&name, &listed);
        if known && !kept {
            ours.insert(name);
        } else if !kept {
            others.insert(name);
        }
    }
    Ok((ours, others))
}

/// A file [`super::write_atomic`] left half-written (`.summary.json.tmp-PID`) beside
/// a name the manifest lists.
fn is_our_temp(name: &str, listed: &BTreeSet<String>) -> bool {
    name.strip_prefix('.')
        .and_then(|n| n.rsplit_once(".tmp-"))
        .is_some_and(|(stem, pid)| {
            pid.bytes().all(|b| b.is_ascii_digit())
                && (listed.contains(stem) || stem == MANIFEST.trim_start_matches('.'))
        })
}

fn is_plot(name: &str) -> bool {
    let stem = name.strip_suffix(".png").or_else(|| name.strip_suffix(".svg"));
    stem.is_some_and(|s| PLOT_STEMS.contains(&s))
}

/// Every entry of `dir` by name, folders with a trailing `/` (lockstorm writes only
/// `workers/`).
fn files(dir: &Path) -> Result<Vec<String>, ReportError> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        let is_dir = entry.file_type().map_err(io_err(dir))?.is_dir();
        let name = entry.file_name().to_string_lossy().into_owned();
        names.push(if is_dir { format!("{name}/") } else { name });
    }
    Ok(names)
}

fn remove(dir: &Path, names: &BTreeSet<String>) -> Result<(), ReportError> {
    for name in names {
        let path = dir.join(name);
        let removed = match name.strip_suffix('/') {
            Some(folder) => std::fs::remove_dir_all(dir.join(folder)),
            None => std::fs::remove_file(&path),
        };
        match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(io_err(&path)(e)),
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(dir: &Path, name: &str) {
        std::fs::write(dir.join(name), "x").unwrap();
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v = files(dir).unwrap();
        v.sort();
        v
    }

    #[test]
    fn an_earlier_runs_files_go_and_nothing_else_is_touched() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for name in [
            "summary.json",
            "history.jsonl",
            "index.html",
            "timeline-violation.png",
        ] {
            touch(dir, name);
        }
        // Listed in the manifest: a plot this version does not know by name.
        touch(dir, "timeline-lanes.svg");
        write_manifest(dir, &BTreeSet::new()).unwrap();
        RunFolder::prepare(dir).unwrap();
        assert_eq!(names(dir), [MANIFEST]);
    }

    #[test]
    fn a_folder_with_other_files_is_refused_and_left_as_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        touch(dir, "summary.json");
        write_manifest(dir, &BTreeSet::new()).unwrap();
        touch(dir, "notes.txt");
        std::fs::create_dir(dir.join("data")).unwrap();
        let e = RunFolder::prepare(dir).err().expect("refused").to_string();
        assert!(e.contains("did not write (data/, notes.txt)"), "{e}");
        assert_eq!(names(dir), [MANIFEST, "data/", "notes.txt", "summary.json"]);
    }

    #[test]
    fn files_with_lockstorms_names_but_no_manifest_are_the_users() {
        // Issue 21: a user's workers/main.py was deleted as an old report's file.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::create_dir(dir.join("workers")).unwrap();
        touch(&dir.join("workers"), "main.py");
        touch(dir, "index.html");
        let e = RunFolder::prepare(dir).err().expect("refused").to_string();
        assert!(e.contains("did not write (index.html, workers/)"), "{e}");
        assert!(dir.join("workers/main.py").is_file());
        assert!(dir.join("index.html").is_file());
        // A re-render does not overwrite them either.
        let e = clear_renders(dir).expect_err("refused").to_string();
        assert!(e.contains("holds index.html"), "{e}");
        assert!(dir.join("index.html").is_file());
    }

    #[test]
    fn a_shared_folder_keeps_what_is_not_the_writers_and_refuses_a_name_it_would_overwrite() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let owned = |list: &[&str]| list.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let sweep = owned(&["sweep.json", "sweep.csv", "sweep-violations.svg"]);
        touch(dir, "README.md");
        std::fs::create_dir(dir.join("real")).unwrap();
        // An earlier sweep of another scenario: its plot goes, the user's README stays.
        touch(dir, "sweep-stale-writes.svg");
        write_names(dir, &owned(&["sweep-stale-writes.svg"])).unwrap();
        let folder = RunFolder::prepare_shared(dir, &sweep).unwrap();
        for name in &sweep {
            touch(dir, name);
        }
        folder.finish().unwrap();
        assert_eq!(
            names(dir),
            [
                MANIFEST,
                "README.md",
                "real/",
                "sweep-violations.svg",
                "sweep.csv",
                "sweep.json"
            ]
        );
        let listed = std::fs::read_to_string(dir.join(MANIFEST)).unwrap();
        assert_eq!(listed, "sweep-violations.svg\nsweep.csv\nsweep.json\n");
        // The next sweep replaces them; a user's sweep.csv with no manifest is refused.
        let folder = RunFolder::prepare_shared(dir, &sweep).unwrap();
        assert!(
            !dir.join("sweep.csv").exists(),
            "the earlier sweep's files go first"
        );
        touch(dir, "sweep.csv");
        folder.finish().unwrap();
        std::fs::remove_file(dir.join(MANIFEST)).unwrap();
        let e = RunFolder::prepare_shared(dir, &sweep)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains("holds sweep.csv"), "{e}");
        assert!(dir.join("sweep.csv").is_file() && dir.join("README.md").is_file());
    }

    #[test]
    fn a_run_killed_halfway_leaves_a_folder_the_next_run_may_clean() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        RunFolder::prepare(dir).unwrap();
        // What a killed run leaves: no final manifest, some renders, a half-written summary.
        for name in [
            "summary.json",
            "history.jsonl",
            "timeline.png",
            ".summary.json.tmp-77",
        ] {
            touch(dir, name);
        }
        RunFolder::prepare(dir).unwrap();
        assert_eq!(names(dir), [MANIFEST]);
    }

    #[test]
    fn a_rerender_keeps_the_run_and_the_users_files() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        for name in ["summary.json", "history.jsonl", "index.html", "latency-cdf.png"] {
            touch(dir, name);
        }
        write_manifest(dir, &BTreeSet::new()).unwrap();
        touch(dir, "mine.txt");
        let others = clear_renders(dir).unwrap();
        assert_eq!(others.into_iter().collect::<Vec<_>>(), ["mine.txt"]);
        assert_eq!(names(dir), ["history.jsonl", "mine.txt", "summary.json"]);
    }

    #[test]
    fn a_stopped_run_is_marked_partial_with_its_reason() {
        let tmp = tempfile::tempdir().unwrap();
        let mut folder = RunFolder::prepare(tmp.path()).unwrap();
        folder
            .start(&serde_json::json!({"scenario": "s", "partial": true, "partial_reason": "running"}))
            .unwrap();
        folder.fail("stopped by SIGTERM").unwrap();
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["scenario"], "s");
        assert_eq!(summary["partial_reason"], "stopped by SIGTERM");
        assert_eq!(
            std::fs::read_to_string(tmp.path().join(MANIFEST)).unwrap(),
            "summary.json\n"
        );
    }

    #[test]
    fn a_rerender_lists_a_new_page_and_refuses_a_users_file_of_that_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        std::fs::write(dir.join("sweep.json"), "{}").unwrap();
        std::fs::write(dir.join("README.md"), "mine").unwrap();
        write_names(dir, &["sweep.json".to_string()]).unwrap();
        rerender_shared(dir, &["index.html"], || {
            std::fs::write(dir.join("index.html"), "page").map_err(io_err(dir))
        })
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join(MANIFEST)).unwrap(),
            "index.html\nsweep.json\n",
            "the page is listed, the user's README.md is not"
        );
        // Again: the page is lockstorm's now.
        rerender_shared(dir, &["index.html"], || Ok(())).unwrap();
        // A user's page in a folder whose manifest does not list it is refused.
        write_names(dir, &["sweep.json".to_string()]).unwrap();
        std::fs::write(dir.join("index.html"), "mine").unwrap();
        let e = rerender_shared(dir, &["index.html"], || -> Result<(), ReportError> {
            panic!("nothing is rendered")
        })
        .expect_err("refused");
        assert!(e.to_string().contains("holds index.html"), "{e}");
        assert_eq!(std::fs::read_to_string(dir.join("index.html")).unwrap(), "mine");
    }
}
