//! The logs a run keeps beside its history, as Jepsen's store keeps each node's: every
//! worker's stderr (`workers/client-N.log`) and every redis-server lockstorm started
//! (`nodes/<folder>.log`: `node0`, `node0-replica`, `sentinel-redis0`, ...). Each is
//! capped: a report keeps its start (the library's or server's own account of how it
//! started) and its end, with a line between that says how many bytes were cut
//! ([`cap`]). [`kept`] reads back what a folder holds, for the page's Files list; it
//! works from the files alone, so `lockstorm report DIR` lists them the same.
//!
//! Written by [`super::write_with`] before the page, which lists them. The simulator
//! has no processes and keeps none.

use super::{io_err, ReportError};
use crate::lifecycle::NodeLog;
use crate::worker::process::WorkerLogs;
use std::path::Path;

/// The folder of the workers' logs in a report.
pub const WORKERS: &str = "workers";
/// The folder of the nodes' logs in a report.
pub const NODES: &str = "nodes";

/// At most this many bytes of each log in a report that keeps its whole history.
pub const KEEP_BYTES: usize = 64 << 10;
/// At most this many bytes of each log in a report cut for the committed reports' size
/// budget (tests/committed_reports.rs): the library matrix's hundreds of cells.
pub const KEEP_BYTES_COMMITTED: usize = 8 << 10;

/// The start of the line [`cap`] puts where it cut, and of the one a worker's capture
/// writes where it dropped bytes (`crate::worker::process`): [`kept`] looks for it.
const CUT_MARK: &str = "[lockstorm: ";

/// `bytes`, or when longer than `keep` its first quarter and its last three quarters
/// (each ending or starting at a line break when there is one), with a line between
/// that says how many bytes of the process's output were cut: those it cuts, and those
/// an earlier cut dropped whose line it cuts (the capture of a worker's stderr keeps its
/// first and last MiB, `crate::worker::process`).
pub fn cap(bytes: &[u8], keep: usize) -> std::borrow::Cow<'_, [u8]> {
    if bytes.len() <= keep {
        return bytes.into();
    }
    let head = &bytes[..keep / 4];
    let head = match head.iter().rposition(|&b| b == b'\n') {
        Some(i) => &head[..=i],
        None => head,
    };
    let tail = &bytes[bytes.len() - (keep - keep / 4)..];
    let tail = match tail.iter().position(|&b| b == b'\n') {
        Some(i) if i + 1 < tail.len() => &tail[i + 1..],
        _ => tail,
    };
    let middle = &bytes[head.len()..bytes.len() - tail.len()];
    let (mut cut, mut dropped) = (middle.len() as u64, 0u64);
    for line in middle.split(|&b| b == b'\n') {
        if let Some(n) = earlier_cut(line) {
            // Lockstorm's own line, not the process's output, stands for `n` bytes.
            cut -= line.len() as u64 + 1;
            dropped += n;
        }
    }
    let cut = cut + dropped;
    let mut out = head.to_vec();
    if !out.is_empty() && !out.ends_with(b"\n") {
        out.push(b'\n');
    }
    out.extend_from_slice(
        format!(
            "{CUT_MARK}{cut} bytes of this log cut here; the report keeps at most {keep} bytes of each log, its start and its end]\n"
        )
        .as_bytes(),
    );
    out.extend_from_slice(tail);
    out.into()
}

/// The bytes an earlier cut's line says went: `[lockstorm: N bytes of this ...`.
fn earlier_cut(line: &[u8]) -> Option<u64> {
    let rest = line
        .strip_prefix(b"\n")
        .unwrap_or(line)
        .strip_prefix(CUT_MARK.as_bytes())?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    if !rest[digits..].starts_with(b" bytes of this") {
        return None;
    }
    std::str::from_utf8(&rest[..digits]).ok()?.parse().ok()
}

/// Writes the run's logs into `dir`, each capped at `keep` bytes: the workers' (when
/// the clients were worker processes) and the nodes'.
pub fn write(
    dir: &Path,
    workers: Option<&WorkerLogs>,
    nodes: &[NodeLog],
    keep: usize,
) -> Result<(), ReportError> {
    let put = |folder: &str, name: &str, bytes: &[u8]| {
        let folder = dir.join(folder);
        std::fs::create_dir_all(&folder).map_err(io_err(&folder))?;
        let path = folder.join(name);
        std::fs::write(&path, cap(bytes, keep)).map_err(io_err(&path))
    };
    if let Some(w) = workers {
        for c in 0..w.clients() {
            let from = w.path(c);
            match std::fs::read(&from) {
                Ok(bytes) => put(WORKERS, &format!("client-{c}.log"), &bytes)?,
                // A worker that never started has no log.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(&from)(e)),
            }
        }
    }
    for n in nodes {
        put(NODES, &format!("{}.log", n.name), &n.bytes)?;
    }
    Ok(())
}

/// A log in a report folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptLog {
    /// Its path in the folder, `workers/client-0.log`.
    pub path: String,
    pub bytes: u64,
    /// Bytes were cut from it (it holds [`cap`]'s line, or the capture's).
    pub cut: bool,
}

/// The logs in `dir`, workers then nodes, each folder in natural order (client-2
/// before client-10).
pub fn kept(dir: &Path) -> Vec<KeptLog> {
    let mut all = Vec::new();
    for folder in [WORKERS, NODES] {
        let Ok(entries) = std::fs::read_dir(dir.join(folder)) else {
            continue;
        };
        let mut logs: Vec<KeptLog> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                let text = std::fs::read(e.path()).ok()?;
                name.ends_with(".log").then(|| KeptLog {
                    path: format!("{folder}/{name}"),
                    bytes: text.len() as u64,
                    cut: text.split(|&b| b == b'\n').any(|line| {
                        line.starts_with(CUT_MARK.as_bytes())
                            && line.windows(14).any(|w| w == b" bytes of this")
                    }),
                })
            })
            .collect();
        logs.sort_by_key(|l| natural(&l.path));
        all.extend(logs);
    }
    all
}

/// A sort key that puts `client-2` before `client-10`.
fn natural(name: &str) -> (String, u64) {
    let stem = name.trim_end_matches(".log");
    let digits = stem.len() - stem.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let (text, number) = stem.split_at(stem.len() - digits);
    (text.to_string(), number.parse().unwrap_or(0))
}

/// The Files list's entries for `logs` (empty when there are none).
pub fn html(logs: &[KeptLog]) -> String {
    use super::words::esc;
    use std::fmt::Write as _;
    let mut h = String::new();
    for (folder, what) in [
        (WORKERS, "each worker's stderr, its library's own log"),
        (NODES, "each redis-server's log"),
    ] {
        let these: Vec<&KeptLog> = logs
            .iter()
            .filter(|l| l.path.starts_with(&format!("{folder}/")))
            .collect();
        if these.is_empty() {
            continue;
        }
        let links: Vec<String> = these
            .iter()
            .map(|l| {
                let size = match (l.bytes, l.cut) {
                    (0, _) => "empty".to_string(),
                    (n, false) => format!("{n} bytes"),
                    (n, true) => format!("{n} bytes, cut"),
                };
                let name = l.path.rsplit('/').next().unwrap_or(&l.path);
                format!("<a href=\"{}\">{}</a> ({size})", esc(&l.path), esc(name))
            })
            .collect();
        let cut = these.iter().filter(|l| l.cut).count();
        let note = match cut {
            0 => String::new(),
            n => format!(
                "; {n} too long to keep whole: each keeps its start and its end, with a line where it was cut that says how many bytes went"
            ),
        };
        let empty = match these.iter().filter(|l| l.bytes == 0).count() {
            0 => String::new(),
            n => format!("; {n} empty: the process wrote nothing there"),
        };
        let _ = write!(
            h,
            "<li>{}/: {what}: {}{note}{empty}</li>",
            esc(folder),
            links.join(", ")
        );
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_log_is_kept_whole_and_a_long_one_keeps_its_start_and_end() {
        assert_eq!(&*cap(b"one\ntwo\n", 100), b"one\ntwo\n");
        let long: String = (0..1_000).map(|i| format!("line {i}\n")).collect();
        let kept = String::from_utf8(cap(long.as_bytes(), 400).into_owned()).unwrap();
        assert!(kept.len() <= 400 + 120, "{}", kept.len());
        assert!(kept.starts_with("line 0\nline 1\n"), "{kept}");
        assert!(kept.ends_with("line 999\n"), "{kept}");
        // One mark, whole lines either side of it, and its count is every byte that
        // went between them.
        let says_what_went = |text: &str| {
            let lines: Vec<&str> = text.lines().collect();
            assert_eq!(lines.iter().filter(|l| l.starts_with(CUT_MARK)).count(), 1);
            let mark = lines.iter().position(|l| l.starts_with(CUT_MARK)).unwrap();
            assert!(lines[mark - 1].starts_with("line ") && lines[mark + 1].starts_with("line "));
            let first_after: usize = lines[mark + 1][5..].parse().unwrap();
            let last_before: usize = lines[mark - 1][5..].parse().unwrap();
            let cut: usize = (last_before + 1..first_after)
                .map(|i| format!("line {i}\n").len())
                .sum();
            assert!(
                lines[mark].starts_with(&format!("{CUT_MARK}{cut} bytes of this log cut here")),
                "{}",
                lines[mark]
            );
        };
        says_what_went(&kept);
        // Cut again, the count takes in what the first cut dropped.
        let again = String::from_utf8(cap(kept.as_bytes(), 100).into_owned()).unwrap();
        says_what_went(&again);
    }

    #[test]
    fn the_files_list_names_each_log_its_size_and_whether_it_was_cut() {
        let dir = tempfile::tempdir().unwrap();
        let nodes = [
            NodeLog {
                name: "node0".into(),
                bytes: b"started\n".to_vec(),
            },
            NodeLog {
                name: "node1".into(),
                bytes: "x\n".repeat(10_000).into_bytes(),
            },
        ];
        write(dir.path(), None, &nodes, KEEP_BYTES_COMMITTED).unwrap();
        for (c, text) in [(10, ""), (2, "hello\n")] {
            std::fs::create_dir_all(dir.path().join(WORKERS)).unwrap();
            std::fs::write(dir.path().join(format!("{WORKERS}/client-{c}.log")), text).unwrap();
        }
        let logs = kept(dir.path());
        let paths: Vec<&str> = logs.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "workers/client-2.log",
                "workers/client-10.log",
                "nodes/node0.log",
                "nodes/node1.log"
            ]
        );
        assert_eq!(
            logs.iter().map(|l| l.cut).collect::<Vec<_>>(),
            [false, false, false, true]
        );
        assert!(
            logs[3].bytes <= (KEEP_BYTES_COMMITTED + 200) as u64,
            "{:?}",
            logs[3]
        );
        let h = html(&logs);
        assert!(
            h.contains("<a href=\"workers/client-10.log\">client-10.log</a> (empty)"),
            "{h}"
        );
        assert!(h.contains("1 empty: the process wrote nothing there"), "{h}");
        assert!(h.contains("<a href=\"nodes/node1.log\">node1.log</a> ("), "{h}");
        assert!(h.contains(" bytes, cut)"), "{h}");
        assert!(h.contains("1 too long to keep whole"), "{h}");
        assert_eq!(html(&[]), "");
    }
}
