//! A history cut to the lines its report cites: what the committed reports keep of a
//! history too long to keep whole (issue 41).
//!
//! Every kept line stays at its own line number, so "history line 412" on a page is line
//! 412 of the file; the lines between the windows are blank (history readers skip blank
//! lines). The first line, the `meta` line, is always kept and says the file is cut
//! ([`super::Cut`]), and the checker refuses such a file: a verdict needs every line.

use super::{Cut, Event};
use std::io::{BufRead, Write};
use std::ops::RangeInclusive;

/// Lines kept either side of each cited window.
pub const CONTEXT_LINES: usize = 20;

/// The windows to keep of a history of `lines` lines: each cited range widened by
/// [`CONTEXT_LINES`] either side, clipped to the file, sorted and merged where they touch.
/// Line numbers are 1-based; a range past the end is clipped, an empty one dropped.
pub fn windows(cited: &[RangeInclusive<usize>], lines: usize) -> Vec<RangeInclusive<usize>> {
    let mut wide: Vec<(usize, usize)> = cited
        .iter()
        .filter(|r| !r.is_empty() && *r.start() >= 1 && *r.start() <= lines)
        .map(|r| {
            (
                r.start().saturating_sub(CONTEXT_LINES).max(1),
                (*r.end()).saturating_add(CONTEXT_LINES).min(lines),
            )
        })
        .collect();
    wide.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::new();
    for (a, b) in wide {
        match merged.last_mut() {
            Some(last) if a <= last.1 + 1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged.into_iter().map(|(a, b)| a..=b).collect()
}

/// The history lines `text` cites, as a reader finds them: "line 40", "lines 40–96"
/// (or "40-96"), "lines 40, 41 and 44". What a report keeps of a cut history is what its
/// pages cite this way.
pub fn cited_in(text: &str) -> Vec<RangeInclusive<usize>> {
    let mut cited = Vec::new();
    let mut open = None;
    for c in citations(text) {
        match (c.to, open.take()) {
            (true, Some(first)) => {
                cited.pop();
                cited.push(first..=c.line);
            }
            (true, None) => cited.push(c.line..=c.line),
            (false, _) => {
                cited.push(c.line..=c.line);
                open = Some(c.line);
            }
        }
    }
    cited
}

/// One line number a text cites ([`citations`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Citation {
    pub line: usize,
    /// Where its digits are in the text.
    pub at: std::ops::Range<usize>,
    /// It ends the range the citation before it opens ("96" of "lines 40–96").
    pub to: bool,
}

/// Every line number `text` cites, in order, with where it stands (so a page can turn
/// each into a link): the numbers [`cited_in`] reads.
pub fn citations(text: &str) -> Vec<Citation> {
    /// The number `s` starts with, and how many bytes it takes.
    fn number(s: &str) -> Option<(usize, usize)> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        Some((s[..digits].parse().ok()?, digits))
    }
    let mut found = Vec::new();
    let at_of = |rest: &str| text.len() - rest.len();
    for (at, _) in text.match_indices("line") {
        if text[..at].chars().next_back().is_some_and(char::is_alphanumeric) {
            continue; // "streamline 9"
        }
        let rest = &text[at + "line".len()..];
        let rest = rest.strip_prefix('s').unwrap_or(rest);
        let Some(rest) = rest.strip_prefix(' ') else {
            continue;
        };
        let Some((first, len)) = number(rest) else {
            continue;
        };
        let start = at_of(rest);
        found.push(Citation {
            line: first,
            at: start..start + len,
            to: false,
        });
        let mut rest = &rest[len..];
        if let Some(after) = rest.strip_prefix('–').or_else(|| rest.strip_prefix('-')) {
            if let Some((last, len)) = number(after) {
                let start = at_of(after);
                found.push(Citation {
                    line: last,
                    at: start..start + len,
                    to: true,
                });
                continue;
            }
        }
        while let Some(after) = rest.strip_prefix(", ").or_else(|| rest.strip_prefix(" and ")) {
            let Some((next, len)) = number(after) else {
                break;
            };
            let start = at_of(after);
            found.push(Citation {
                line: next,
                at: start..start + len,
                to: false,
            });
            rest = &after[len..];
        }
    }
    found
}

/// How many lines `windows` keep.
pub fn kept_lines(windows: &[RangeInclusive<usize>]) -> usize {
    windows.iter().map(|r| r.end() - r.start() + 1).sum()
}

/// Copies the history `from` (JSONL, `lines` lines) to `to`, keeping the lines inside
/// `windows` and line 1, whose `meta` gains `cut`; every other line is left blank.
pub fn write(
    from: impl BufRead,
    lines: usize,
    windows: &[RangeInclusive<usize>],
    mut to: impl Write,
) -> std::io::Result<()> {
    let mut next = windows.iter().peekable();
    for (i, line) in from.lines().enumerate() {
        let (n, line) = (i + 1, line?);
        while next.peek().is_some_and(|w| *w.end() < n) {
            next.next();
        }
        if n == 1 {
            to.write_all(with_cut(&line, lines)?.as_bytes())?;
        } else if next.peek().is_some_and(|w| w.contains(&n)) {
            to.write_all(line.as_bytes())?;
        }
        to.write_all(b"\n")?;
    }
    to.flush()
}

/// The meta line `line` with its `cut` set, written as any meta line is.
fn with_cut(line: &str, lines: usize) -> std::io::Result<String> {
    let bad = |e: serde_json::Error| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
    let Event::Meta(mut meta) = serde_json::from_str(line).map_err(bad)? else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "the first line of a history to cut is not its meta line",
        ));
    };
    meta.cut = Some(Cut {
        lines,
        context: CONTEXT_LINES,
    });
    serde_json::to_string(&Event::Meta(meta)).map_err(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_widen_by_the_context_clip_to_the_file_and_merge_where_they_touch() {
        let c = CONTEXT_LINES;
        assert_eq!(windows(&[5..=5], 1000), vec![1..=5 + c]);
        assert_eq!(windows(&[990..=995], 1000), vec![990 - c..=1000]);
        // 100+c and 100+2c+1-c = 101+c touch: one window.
        assert_eq!(
            windows(&[100..=100, 101 + 2 * c..=300], 1000),
            vec![100 - c..=300 + c]
        );
        // One line further apart: two windows.
        assert_eq!(
            windows(&[300..=300, 100..=100, 102 + 2 * c..=102 + 2 * c], 1000),
            vec![100 - c..=100 + c, 102 + c..=102 + 3 * c, 300 - c..=300 + c]
        );
        // Nothing cited, or cited past the end: nothing kept.
        assert!(windows(&[], 10).is_empty());
        assert!(windows(&[11..=12], 10).is_empty());
        assert_eq!(kept_lines(&windows(&[50..=60], 1000)), 11 + 2 * c);
    }

    #[test]
    fn citations_are_read_in_each_form_a_report_writes() {
        let text = "took down 1 live key (lines 2420, 2428) · (line 7) · (history lines 40–96.) \
                    · evidence: history lines 3, 5 and 9 · lines 11-12 · streamline 99 · line x";
        assert_eq!(
            cited_in(text),
            vec![
                2420..=2420,
                2428..=2428,
                7..=7,
                40..=96,
                3..=3,
                5..=5,
                9..=9,
                11..=12
            ]
        );
    }

    #[test]
    fn a_cut_keeps_each_window_at_its_own_line_number_and_says_so_in_meta() {
        let mut text = String::from(concat!(
            "{\"type\":\"meta\",\"t_us\":0,\"scenario\":\"s\",\"seed\":7,\"algorithm\":\"redlock\",",
            "\"nodes\":3,\"clients\":2,\"ttl_ms\":1000,\"liveness_bound_us\":1000000}\n"
        ));
        for i in 2..=200 {
            text.push_str(&format!("{{\"type\":\"heal\",\"t_us\":{i}}}\n"));
        }
        let w = windows(&[100..=100], 200);
        let mut out = Vec::new();
        write(text.as_bytes(), 200, &w, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 200, "every line keeps its number");
        let meta: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(meta["seed"], 7);
        assert_eq!(meta["cut"]["lines"], 200);
        assert_eq!(meta["cut"]["context"], CONTEXT_LINES);
        for (i, l) in lines.iter().enumerate().skip(1) {
            let n = i + 1;
            if w[0].contains(&n) {
                assert_eq!(*l, format!("{{\"type\":\"heal\",\"t_us\":{n}}}"));
            } else {
                assert!(l.is_empty(), "line {n} is outside the window: {l}");
            }
        }
    }

    #[test]
    fn a_history_that_does_not_start_with_meta_is_not_cut() {
        let text = "{\"type\":\"heal\",\"t_us\":1}\n";
        let err = write(text.as_bytes(), 1, &[], Vec::new()).unwrap_err();
        assert!(err.to_string().contains("meta"), "{err}");
    }
}
