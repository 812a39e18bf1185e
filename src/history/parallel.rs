//! Reading a JSONL history on several threads, for [`super::for_each_line`]: workers
//! take turns cutting the file into blocks of whole lines, each parses the block it
//! cut, and the calling thread hands the lines over in file order. Reading and parsing
//! are most of what `lockstorm check` spends, so the checker (on the calling thread)
//! does little else.
//!
//! The same lines are handed over, and the same error ends the reading, as the reading
//! on one thread gives: a line is read by the same steps ([`super::line_text`], then
//! [`super::parse_line_ref`]), and a line too long is cut at the same length. Memory
//! stays bounded: two blocks per worker exist, and a worker waits for one the calling
//! thread is done with before it reads on.

use super::{line_text, parse_line_ref, HistoryError, Line, NodeRef, Token};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc::{channel, sync_channel, Receiver};
use std::sync::Mutex;

/// A block's bytes: the file is read this much at a time and cut after its last
/// newline.
pub(super) const BLOCK_BYTES: usize = 1 << 20;

/// Workers at most: past a few, the checker on the calling thread is what limits.
pub(super) const MAX_WORKERS: usize = 4;

/// The lines of one block, parsed.
struct Parsed {
    /// The block's bytes, for a later block to reuse (as `lines` is).
    text: Vec<u8>,
    /// Its lines that are not blank, up to the first that cannot be read.
    lines: Vec<Parse>,
    /// How many lines the block holds, blank ones included.
    count: usize,
    /// The first line that cannot be read: its index in the block and why.
    error: Option<(usize, String)>,
}

/// One line, parsed. A node line's lock name is copied out of the block (kept inline,
/// as a short token is): the calling thread then reads only this, not the block a
/// worker wrote.
enum Parse {
    Node {
        t_us: u64,
        node: usize,
        lock: Token,
        key: Token,
        action: super::NodeAction,
        client: Option<usize>,
        token: Option<Token>,
        ttl_ms: Option<u64>,
    },
    Event(super::Event),
}

/// What the workers share: the file, and the buffers they may read it into.
struct Source {
    blocks: Blocks,
    /// The next block's place in the file.
    next: u64,
    /// Buffers free to read a block into and parse it into; the calling thread gives
    /// each back once it has handed that block's lines over.
    free: Receiver<(Vec<u8>, Vec<Parse>)>,
}

/// Hands `each` every line of `path` in order as [`super::for_each_line`] does, with
/// `workers` threads reading and parsing blocks of `block` bytes.
pub(super) fn for_each_line(
    path: &Path,
    workers: usize,
    block: usize,
    mut each: impl FnMut(Line<'_>),
) -> Result<(), HistoryError> {
    let shown = path.display().to_string();
    let io = |error| HistoryError::Io {
        path: shown.clone(),
        error,
    };
    let file = super::open_regular(path).map_err(io)?;
    let (give_back, free) = sync_channel(2 * workers);
    for _ in 0..2 * workers {
        give_back
            .send(Default::default())
            .expect("the channel has room for every buffer");
    }
    let source = Mutex::new(Source {
        blocks: Blocks {
            file,
            carry: Vec::new(),
            block: block.max(1),
            done: false,
        },
        next: 0,
        free,
    });
    let (done, results) = channel::<(u64, std::io::Result<Parsed>)>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let done = done.clone();
            let source = &source;
            scope.spawn(move || loop {
                let (at, block) = {
                    let mut source = source.lock().expect("a worker never panics holding the file");
                    // None left once the calling thread has stopped.
                    let Ok((buffer, lines)) = source.free.recv() else {
                        break;
                    };
                    let at = source.next;
                    source.next += 1;
                    (
                        at,
                        source.blocks.next(buffer).map(|b| b.map(|text| (text, lines))),
                    )
                };
                let parsed = match block {
                    Ok(None) => break,
                    Ok(Some((text, lines))) => Ok(parse(text, lines)),
                    Err(e) => Err(e),
                };
                if done.send((at, parsed)).is_err() {
                    break;
                }
            });
        }
        // Dropped on the way out, however the reading ends: the workers then stop.
        let (give_back, results) = (give_back, results);
        drop(done);
        // Blocks parsed ahead of the one to hand over next.
        let mut ahead = BTreeMap::new();
        let (mut at, mut line) = (0, 0);
        loop {
            let parsed = loop {
                if let Some(parsed) = ahead.remove(&at) {
                    break parsed;
                }
                match results.recv() {
                    Ok((i, parsed)) => ahead.insert(i, parsed),
                    // Every worker has stopped: the file has ended.
                    Err(_) => return Ok(()),
                };
            };
            let Parsed {
                text,
                mut lines,
                count,
                error,
            } = parsed.map_err(io)?;
            for l in lines.drain(..) {
                match l {
                    Parse::Node {
                        t_us,
                        node,
                        lock,
                        key,
                        action,
                        client,
                        token,
                        ttl_ms,
                    } => each(Line::Node(NodeRef {
                        t_us,
                        node,
                        lock: &lock,
                        key: &key,
                        action,
                        client,
                        token: token.as_deref(),
                        ttl_ms,
                    })),
                    Parse::Event(e) => each(Line::Event(e)),
                }
            }
            if let Some((index, message)) = error {
                return Err(HistoryError::Parse {
                    path: shown.clone(),
                    line: line + index + 1,
                    message,
                });
            }
            line += count;
            at += 1;
            // A worker may have stopped already (the file ended).
            let _ = give_back.send((text, lines));
        }
    })
}

/// Parses the lines of one block into `lines` (empty), up to the first that cannot be
/// read.
fn parse(text: Vec<u8>, mut lines: Vec<Parse>) -> Parsed {
    let mut count = 0;
    let mut error = None;
    let mut rest = &text[..];
    while !rest.is_empty() {
        let (raw, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        count += 1;
        rest = next;
        let read = line_text(raw).and_then(|text| match text {
            None => Ok(None),
            Some(text) => parse_line_ref(text).map(Some).map_err(|e| e.to_string()),
        });
        match read {
            Ok(None) => {}
            Ok(Some(Line::Node(n))) => lines.push(Parse::Node {
                t_us: n.t_us,
                node: n.node,
                lock: Token::new(n.lock),
                key: Token::new(n.key),
                action: n.action,
                client: n.client,
                token: n.token.map(Token::new),
                ttl_ms: n.ttl_ms,
            }),
            Ok(Some(Line::Event(e))) => lines.push(Parse::Event(e)),
            Err(message) => {
                error = Some((count - 1, message));
                break;
            }
        }
    }
    Parsed {
        text,
        lines,
        count,
        error,
    }
}

/// A file cut into blocks of whole lines.
struct Blocks {
    file: std::fs::File,
    /// The start of a line the last block cut off.
    carry: Vec<u8>,
    block: usize,
    done: bool,
}

impl Blocks {
    /// The next block, in `text` (cleared first): whole lines, the last one ending the
    /// file or cut off once it is too long to be read (then reading stops: that line is
    /// an error).
    fn next(&mut self, mut text: Vec<u8>) -> std::io::Result<Option<Vec<u8>>> {
        if self.done {
            return Ok(None);
        }
        text.clear();
        text.append(&mut self.carry);
        // What reading on one thread reads of a line too long, as `scan_text`: enough
        // to tell it is.
        let cut = crate::limits::MAX_LINE_BYTES + 2;
        loop {
            let start = text.len();
            text.reserve(self.block);
            let read = match (&mut self.file).take(self.block as u64).read_to_end(&mut text) {
                Ok(read) => read,
                Err(e) => {
                    self.done = true;
                    return Err(e);
                }
            };
            if read == 0 {
                self.done = true;
                return Ok(Some(text).filter(|t| !t.is_empty()));
            }
            if let Some(i) = memchr::memrchr(b'\n', &text[start..]) {
                self.carry.extend_from_slice(&text[start + i + 1..]);
                text.truncate(start + i + 1);
                return Ok(Some(text));
            }
            if text.len() >= cut {
                self.done = true;
                text.truncate(cut);
                return Ok(Some(text));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a reading hands over, owned, and how it ends.
    fn read(path: &Path, workers: Option<usize>, block: usize) -> (Vec<String>, Result<(), String>) {
        let mut seen = Vec::new();
        let mut keep = |line: Line<'_>| {
            seen.push(match line {
                Line::Node(n) => format!("{n:?}"),
                Line::Event(e) => format!("{e:?}"),
            })
        };
        let ended = match workers {
            Some(w) => for_each_line(path, w, block, &mut keep),
            None => super::super::scan_text(path, 0, |_, _, text| {
                keep(super::super::parse_line_ref(text)?);
                Ok(true)
            }),
        };
        (seen, ended.map_err(|e| e.to_string()))
    }

    fn history() -> String {
        let text = std::fs::read_to_string("scenarios/partition.toml").expect("the scenario is shipped");
        let text = text.replace("duration = \"10m\"", "duration = \"2s\"");
        let scenario =
            crate::scenario::Scenario::parse(&text, "partition.toml", "partition").expect("it parses");
        let mut text = Vec::new();
        crate::history::write_jsonl(&crate::sim::run(&scenario, 7).history, &mut text).unwrap();
        String::from_utf8(text).unwrap()
    }

    /// Every way a file can end or go wrong, read on one thread and on several with
    /// blocks from one byte up: the same lines, the same end.
    #[test]
    fn reads_as_one_thread_does() {
        let good = history();
        let lines: Vec<&str> = good.lines().collect();
        assert!(lines.len() > 200, "{} lines", lines.len());
        let max = crate::limits::MAX_LINE_BYTES;
        let long = format!("{{\"type\":\"heal\",\"t_us\":1,\"x\":\"{}\"}}", "a".repeat(max));
        let too_long = format!(":21: not a history event: the line is longer than {max} bytes");
        // Each case, and how reading it ends: `None` for the end of the file.
        let cases: Vec<(&str, Vec<u8>, Option<&str>)> = vec![
            ("whole", good.clone().into_bytes(), None),
            ("no final newline", good.trim_end().as_bytes().to_vec(), None),
            (
                "crlf and blanks",
                good.replace('\n', "\r\n\n  \n").into_bytes(),
                None,
            ),
            ("empty", Vec::new(), None),
            (
                "bad json midway",
                format!(
                    "{}\n{{\"type\":\n{}",
                    lines[..90].join("\n"),
                    lines[90..].join("\n")
                )
                .into_bytes(),
                Some(":91: not a history event: EOF while parsing"),
            ),
            (
                "bad utf-8",
                [
                    lines[..50].join("\n").as_bytes(),
                    b"\n\xff\xfe\n",
                    good.as_bytes(),
                ]
                .concat(),
                Some(":51: not a history event: not UTF-8 text"),
            ),
            (
                "too long",
                format!("{}\n{long}\n{}", lines[..20].join("\n"), lines[20]).into_bytes(),
                Some(&too_long),
            ),
            (
                "too long at the end",
                format!("{}\n{long}", lines[..20].join("\n")).into_bytes(),
                Some(&too_long),
            ),
            (
                "as long as can be",
                format!("{}\n{}\r\n", lines[0], &long[..max]).into_bytes(),
                Some(":2: not a history event: EOF while parsing a string"),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes, end) in cases {
            let path = dir.path().join("history.jsonl");
            std::fs::write(&path, &bytes).unwrap();
            let want = read(&path, None, 0);
            match (end, &want.1) {
                (None, Ok(())) => {}
                (Some(end), Err(e)) if e.contains(end) => {}
                (end, ended) => panic!("{name}: read on one thread, ended {ended:?}, not {end:?}"),
            }
            if name == "whole" {
                assert_eq!(want.0.len(), lines.len());
            }
            for (workers, block) in [(1, 3), (2, 7), (3, 100), (2, 4096), (2, BLOCK_BYTES)] {
                let got = read(&path, Some(workers), block);
                assert!(
                    got == want,
                    "{name}, {workers} workers, blocks of {block}: {:?} against {:?}",
                    got.1,
                    want.1
                );
            }
        }
    }
}
