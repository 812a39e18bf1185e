//! The history lines a run page names, reachable by a link: a "History lines" section
//! at the end of the page quotes each line the page cites or its timeline links to,
//! under an anchor `#L<n>`, and every citation in the page's text ("line 40", "lines
//! 40–96", "lines 40, 41 and 44") links each of its numbers there. A reader checks a
//! story's sentence against its line in one click, without opening history.jsonl.

use super::view::RunView;
use crate::history::cut::citations;
use std::collections::BTreeSet;
use std::fmt::Write as _;

/// The line numbers `page` cites in its text (a range by its two ends), outside its
/// interactive timelines, scripts and styles: each once, in the order the page first
/// cites it (its lead story first).
pub fn cited(page: &str) -> Vec<usize> {
    let (mut out, mut seen) = (Vec::new(), BTreeSet::new());
    for_text(page, |text| {
        for c in citations(text) {
            if seen.insert(c.line) {
                out.push(c.line);
            }
        }
    });
    out
}

/// The line numbers `page` links to already (its timeline's `href="#L<n>"`).
pub fn targets(page: &str) -> BTreeSet<usize> {
    page.split("href=\"#L")
        .skip(1)
        .filter_map(|rest| rest[..rest.find('"')?].parse().ok())
        .collect()
}

/// `page` with each cited number in its text that `quoted` holds made a link to it.
pub fn linked(page: &str, quoted: &BTreeSet<usize>) -> String {
    let mut out = String::with_capacity(page.len() + page.len() / 8);
    let mut done = 0;
    let base = page.as_ptr() as usize;
    for_text(page, |text| {
        let at = text.as_ptr() as usize - base;
        for c in citations(text) {
            if !quoted.contains(&c.line) {
                continue;
            }
            out.push_str(&page[done..at + c.at.start]);
            let _ = write!(out, "<a href=\"#L{}\">{}</a>", c.line, &text[c.at.clone()]);
            done = at + c.at.end;
        }
    });
    out.push_str(&page[done..]);
    out
}

/// Hands `each` every run of text of `page` that a reader reads as prose: outside tags,
/// links, scripts, styles, SVGs, the interactive timelines and the quoted lines.
pub fn for_text<'p>(page: &'p str, mut each: impl FnMut(&'p str)) {
    const SKIP: [(&str, &str); 6] = [
        ("<script", "</script>"),
        ("<style", "</style>"),
        ("<svg", "</svg>"),
        ("<figure class=interactive", "</figure>"),
        ("<pre class=lines", "</pre>"),
        ("<a ", "</a>"),
    ];
    let mut rest = page;
    while !rest.is_empty() {
        let Some(open) = rest.find('<') else {
            each(rest);
            return;
        };
        each(&rest[..open]);
        rest = &rest[open..];
        if let Some((_, close)) = SKIP.iter().find(|(tag, _)| rest.starts_with(tag)) {
            rest = rest.find(close).map_or("", |end| &rest[end + close.len()..]);
            continue;
        }
        rest = rest.find('>').map_or("", |end| &rest[end + 1..]);
    }
}

/// The page's "History lines" section: each of `numbers` quoted from the history under
/// its anchor, and the numbers it quoted (a number the history does not have, past its
/// end or blank in a cut history, is left out and gets no link).
pub fn section(view: &RunView, numbers: &BTreeSet<usize>) -> (String, BTreeSet<usize>) {
    let quoted: Vec<(usize, String)> = numbers
        .iter()
        .filter_map(|&n| {
            let e = view.history.get(n.checked_sub(1)?)?;
            Some((n, serde_json::to_string(&e).ok()?))
        })
        .collect();
    let mut h = String::new();
    if quoted.is_empty() {
        return (h, BTreeSet::new());
    }
    let _ = write!(
        h,
        "<h2 id=\"history-lines\">History lines this page names ({})</h2><p>Each line the page cites or its timeline links to, quoted from the run's history; the Files section says what history.jsonl keeps.</p><pre class=lines>",
        quoted.len()
    );
    for (n, text) in &quoted {
        // Element content: only &, < and > need escaping (quotes would double a JSON line).
        let text = text
            .replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;");
        let _ = writeln!(h, "<span id=\"L{n}\"><a href=\"#L{n}\">{n}</a> {text}</span>");
    }
    h.push_str("</pre>\n");
    (h, quoted.into_iter().map(|(n, _)| n).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cited_number_the_page_quotes_becomes_a_link_and_no_other() {
        let page = "<p>client 1 acquires (line 12) and the cut (lines 40–96); history lines 7, 8 and 9.</p>\
                    <svg><title>history line 12</title></svg><a href=\"x\">line 12</a><script>var line = 3;</script>";
        assert_eq!(
            cited(page),
            vec![12, 40, 96, 7, 8, 9],
            "in page order, outside svg, links and scripts"
        );
        let quoted: BTreeSet<usize> = [12, 96, 8].into();
        let out = linked(page, &quoted);
        assert!(out.contains("(line <a href=\"#L12\">12</a>)"), "{out}");
        assert!(out.contains("(lines 40–<a href=\"#L96\">96</a>)"), "{out}");
        assert!(
            out.contains("history lines 7, <a href=\"#L8\">8</a> and 9."),
            "{out}"
        );
        // What it skips is left as it was: the same text once the new links are taken out.
        let unlinked = out
            .replace("<a href=\"#L12\">12</a>", "12")
            .replace("<a href=\"#L96\">96</a>", "96")
            .replace("<a href=\"#L8\">8</a>", "8");
        assert_eq!(unlinked, page);
        assert_eq!(targets(&out), quoted);
    }

    #[test]
    fn the_section_quotes_each_line_as_the_history_has_it_and_skips_lines_it_lacks() {
        let history: Vec<crate::history::Event> = [
            r#"{"type":"meta","t_us":0,"scenario":"s<&>","seed":1,"algorithm":"redlock","nodes":1,"clients":1,"ttl_ms":100,"liveness_bound_us":1000}"#,
            r#"{"type":"invoke","t_us":5,"client":0,"op":"acquire","lock":"L0","mode":"exclusive"}"#,
        ]
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
        let findings = crate::checker::check(&history).unwrap();
        let view = RunView::new(&history, &findings);
        let (html, quoted) = section(&view, &[2, 1, 9].into());
        assert_eq!(quoted, [1, 2].into(), "line 9 is past the end");
        let second = serde_json::to_string(&history[1]).unwrap();
        assert!(
            html.contains(&format!("<span id=\"L2\"><a href=\"#L2\">2</a> {second}</span>")),
            "{html}"
        );
        assert!(
            html.contains("\"scenario\":\"s&lt;&amp;&gt;\""),
            "escaped as text: {html}"
        );
        assert!(!html.contains("L9"));
    }
}
