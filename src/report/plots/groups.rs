//! The second pass of SVG compaction: runs of shapes that share their paint.
//!
//! plotters writes every shape with its whole paint (`fill`, `stroke`, `stroke-width`),
//! and a timeline is thousands of bars of a few colours. Three or more shapes in a row
//! with the same paint go into one `<g>` that carries it; SVG hands these attributes down
//! to the shapes inside, so what is drawn does not change. `opacity` is not handed down
//! that way (a group's opacity blends the group as one image), so it stays on each shape,
//! except on a shape without a stroke, where it means the same as `fill-opacity`, which
//! is handed down and joins the paint. This takes about a fifth off a timeline.

/// Attributes a `<g>` hands down to the shapes inside it.
const INHERITED: [&str; 3] = ["fill", "stroke", "stroke-width"];
/// Shortest run worth a group (a group costs about one shape's paint).
const MIN_RUN: usize = 3;

/// One line of plotters' SVG that is a whole self-closing shape, split into its paint
/// (in the order written) and the rest.
struct Shape<'a> {
    tag: &'a str,
    paint: Vec<(&'a str, &'a str)>,
    rest: Vec<(&'a str, &'a str)>,
}

fn shape(line: &str) -> Option<Shape<'_>> {
    let body = line.strip_prefix('<')?.strip_suffix("/>")?;
    let (tag, mut attrs) = body.split_once(' ')?;
    if !matches!(tag, "rect" | "line" | "polyline" | "polygon" | "circle" | "path") {
        return None;
    }
    let mut all = Vec::new();
    loop {
        attrs = attrs.trim_start();
        if attrs.is_empty() {
            break;
        }
        let (name, after) = attrs.split_once("=\"")?;
        let (value, after) = after.split_once('"')?;
        if name.contains(|c: char| c.is_whitespace() || c == '<' || c == '>') {
            return None;
        }
        all.push((name, value));
        attrs = after;
    }
    let unstroked = all.iter().any(|&(n, v)| n == "stroke" && v == "none");
    let (mut paint, mut rest) = (Vec::new(), Vec::new());
    for (name, value) in all {
        if INHERITED.contains(&name) {
            paint.push((name, value));
        } else if name == "opacity" && unstroked {
            paint.push(("fill-opacity", value));
        } else {
            rest.push((name, value));
        }
    }
    (!paint.is_empty()).then_some(Shape { tag, paint, rest })
}

fn attrs(out: &mut String, list: &[(&str, &str)]) {
    for (name, value) in list {
        out.push(' ');
        out.push_str(name);
        out.push_str("=\"");
        out.push_str(value);
        out.push('"');
    }
}

/// `svg` (one element per line, as plotters writes it) with every run of at least
/// [`MIN_RUN`] shapes of the same paint grouped under one `<g>`.
pub fn group_runs(svg: &str) -> String {
    let lines: Vec<&str> = svg.lines().collect();
    let shapes: Vec<Option<Shape>> = lines.iter().map(|l| shape(l)).collect();
    let mut out = String::with_capacity(svg.len());
    let mut i = 0;
    while i < lines.len() {
        let Some(first) = &shapes[i] else {
            out.push_str(lines[i]);
            out.push('\n');
            i += 1;
            continue;
        };
        let end = (i + 1..lines.len())
            .find(|&j| shapes[j].as_ref().is_none_or(|s| s.paint != first.paint))
            .unwrap_or(lines.len());
        if end - i < MIN_RUN {
            for line in &lines[i..end] {
                out.push_str(line);
                out.push('\n');
            }
        } else {
            out.push_str("<g");
            attrs(&mut out, &first.paint);
            out.push_str(">\n");
            for s in shapes[i..end].iter().flatten() {
                out.push('<');
                out.push_str(s.tag);
                attrs(&mut out, &s.rest);
                out.push_str("/>\n");
            }
            out.push_str("</g>\n");
        }
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_of_bars_shares_its_paint_and_everything_else_is_left_as_it_was() {
        let bar = |x: u32| {
            format!(
                r##"<rect x="{x}" y="75" width="14" height="8" opacity="0.75" fill="#FF9900" stroke="none"/>"##
            )
        };
        let svg = [
            r#"<svg width="10" height="10" xmlns="http://www.w3.org/2000/svg">"#.to_string(),
            bar(1),
            bar(2),
            bar(3),
            r##"<line opacity="0.1" stroke="#000000" stroke-width="1" x1="1" y1="2" x2="3" y2="4"/>"##.into(),
            r#"<text x="1" y="2">"#.into(),
            "a label".into(),
            "</text>".into(),
            bar(4),
            "</svg>".into(),
        ]
        .join("\n");
        let got = group_runs(&svg);
        assert_eq!(
            got,
            [
                r#"<svg width="10" height="10" xmlns="http://www.w3.org/2000/svg">"#,
                r##"<g fill-opacity="0.75" fill="#FF9900" stroke="none">"##,
                r#"<rect x="1" y="75" width="14" height="8"/>"#,
                r#"<rect x="2" y="75" width="14" height="8"/>"#,
                r#"<rect x="3" y="75" width="14" height="8"/>"#,
                "</g>",
                r##"<line opacity="0.1" stroke="#000000" stroke-width="1" x1="1" y1="2" x2="3" y2="4"/>"##,
                r#"<text x="1" y="2">"#,
                "a label",
                "</text>",
                &bar(4),
                "</svg>",
                "",
            ]
            .join("\n")
        );
    }

    #[test]
    fn a_stroked_shape_keeps_its_opacity_and_different_paints_do_not_share_a_group() {
        let line = |c: &str| {
            format!(r#"<line opacity="0.2" stroke="{c}" stroke-width="1" x1="0" y1="0" x2="1" y2="1"/>"#)
        };
        let svg = [line("#000000"), line("#000000"), line("#000000"), line("#FF0000")].join("\n");
        let got = group_runs(&svg);
        assert!(got.starts_with("<g stroke=\"#000000\" stroke-width=\"1\">\n<line opacity=\"0.2\" x1="));
        assert!(got.ends_with(&format!("</g>\n{}\n", line("#FF0000"))), "{got}");
        assert_eq!(got.matches("<line").count(), 4);
    }
}
