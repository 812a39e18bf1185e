//! The report's plots, written as SVG only: a committed report stays small (a PNG beside
//! each SVG tripled the size of reports/), and a browser scales an SVG sharply.
//!
//! Text is measured through `ab_glyph` with the DejaVu Sans file shipped in
//! `src/report/font/`, so laying out a figure needs no system font library.
//! Every figure implements [`Figure`], which draws on any plotters backend; [`save`]
//! renders it to `<stem>.svg`, compacted ([`compact_svg`]). Long runs stay readable
//! because the figures merge what would be narrower than a pixel (see [`timeline`]).

pub mod availability;
pub mod cdf;
mod groups;
pub mod operations;
pub mod sweep;
pub mod throughput;
pub mod timeline;

use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

/// The font every plot uses, registered with plotters as "sans-serif".
static FONT: &[u8] = include_bytes!("../font/DejaVuSans.ttf");

pub type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// A figure that can draw itself on any plotters backend.
pub trait Figure {
    /// Width and height in pixels.
    fn size(&self) -> (u32, u32);
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static;
    /// SVG elements to add after what [`Figure::draw`] drew (called after it): a figure
    /// with thousands of marks writes them as one compact path instead of an element
    /// each.
    fn extra_svg(&self) -> String {
        String::new()
    }
}

/// A plot could not be drawn or written.
#[derive(Debug, thiserror::Error)]
#[error("cannot draw {file}: {message}")]
pub struct PlotError {
    pub file: String,
    pub message: String,
}

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The file is part of the binary; a failure here is a broken build, not input.
        if plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_err() {
            panic!("src/report/font/DejaVuSans.ttf is not a font file");
        }
    });
}

/// Draws `figure` into `dir/<stem>.svg`.
pub fn save(figure: &impl Figure, dir: &Path, stem: &str) -> Result<(), PlotError> {
    let svg = dir.join(format!("{stem}.svg"));
    let fail = |e: &dyn std::fmt::Display| PlotError {
        file: svg.display().to_string(),
        message: e.to_string(),
    };
    let text = render_svg(figure).map_err(|e| fail(&e))?;
    std::fs::write(&svg, text).map_err(|e| fail(&e))
}

/// The SVG text of `figure`, compacted ([`compact_svg`], then [`groups`]).
pub fn render_svg(figure: &impl Figure) -> Result<String, Box<dyn std::error::Error>> {
    register_font();
    let mut text = String::new();
    {
        let root = SVGBackend::with_string(&mut text, figure.size()).into_drawing_area();
        figure.draw(&root)?;
        root.present()?;
    }
    let extra = figure.extra_svg();
    if !extra.is_empty() {
        if let Some(at) = text.rfind("</svg>") {
            text.insert_str(at, &extra);
        }
    }
    Ok(scalable(&groups::group_runs(&compact_svg(&text))))
}

/// The root element told to fit its window: an SVG opened alone in a window narrower
/// than the plot shrinks to it, keeping its proportions, rather than cut its right edge,
/// where the legend is. Its width and height stay, so a page's `<img>` sizes it as before.
pub fn scalable(svg: &str) -> String {
    const FIT: &str = " style=\"max-width:100%;height:auto\"";
    match svg.strip_prefix("<svg ") {
        Some(rest) if !svg.lines().next().is_some_and(|l| l.contains(" style=")) => {
            format!("<svg{FIT} {rest}")
        }
        _ => svg.to_string(),
    }
}

/// Drops what plotters writes that changes nothing on screen: `opacity="1"` (the
/// default) and the long decimals of font sizes. A timeline has thousands of elements,
/// so this takes about a fifth off every file.
pub fn compact_svg(svg: &str) -> String {
    let mut out = String::with_capacity(svg.len());
    for line in svg.lines() {
        let line = line.replace(" opacity=\"1\"", "");
        match line.find("font-size=\"") {
            Some(at) => {
                let start = at + "font-size=\"".len();
                let end = line[start..].find('"').map_or(line.len(), |e| start + e);
                match line[start..end].parse::<f64>() {
                    Ok(size) => {
                        out.push_str(&line[..start]);
                        out.push_str(&format!("{}", (size * 10.0).round() / 10.0));
                        out.push_str(&line[end..]);
                    }
                    Err(_) => out.push_str(&line),
                }
            }
            None => out.push_str(&line),
        }
        out.push('\n');
    }
    out
}

/// The colour of a lock mode: exclusive blue, read green, write purple, others grey.
pub fn mode_color(mode: &str) -> RGBColor {
    match mode {
        "exclusive" => RGBColor(31, 119, 180),
        "read" => RGBColor(44, 160, 44),
        "write" => RGBColor(148, 103, 189),
        _ => RGBColor(127, 127, 127),
    }
}

/// Fault intervals are shaded in this colour (with transparency) where kinds are not
/// told apart (the availability plot).
pub const FAULT: RGBColor = RGBColor(255, 153, 0);

/// The kinds of fault in the order the timeline's lanes stack them, each with its colour
/// (chosen apart from the mode colours and the violation red).
pub const FAULT_KINDS: [(&str, RGBColor); 8] = [
    ("partition", RGBColor(255, 153, 0)),
    ("delay", RGBColor(23, 190, 207)),
    ("loss", RGBColor(188, 189, 34)),
    ("crash", RGBColor(60, 60, 60)),
    ("failover", RGBColor(140, 86, 75)),
    ("pause", RGBColor(227, 119, 194)),
    ("clock_rate", RGBColor(150, 150, 150)),
    ("clock_jump", RGBColor(200, 0, 120)),
];

/// The colour of a fault kind (by its history name).
pub fn fault_color(kind: &str) -> RGBColor {
    FAULT_KINDS
        .iter()
        .find(|(k, _)| *k == kind)
        .map_or(FAULT, |(_, c)| *c)
}
/// Violation windows are marked in this colour.
pub const VIOLATION: RGBColor = RGBColor(214, 39, 40);

/// Seconds on an axis, with as many decimals as the visible span needs.
pub fn seconds_label(span_us: u64) -> impl Fn(&f64) -> String {
    let decimals = match span_us {
        0..=20_000 => 4,
        20_001..=200_000 => 3,
        200_001..=2_000_000 => 2,
        2_000_001..=20_000_000 => 1,
        _ => 0,
    };
    move |v: &f64| format!("{v:.decimals$}")
}

/// Merges intervals (sorted by start) closer than `gap_us` and widens each to at least
/// `gap_us`, so a long run draws at most about one rectangle per pixel.
pub fn coalesce(intervals: impl IntoIterator<Item = (u64, u64)>, gap_us: u64) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (s, e) in intervals {
        let e = e.max(s + gap_us);
        match out.last_mut() {
            Some(last) if s <= last.1 + gap_us => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

fn us_to_s(us: u64) -> f64 {
    us as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::{coalesce, compact_svg, scalable};

    /// Issue 41: an SVG opened alone in a window narrower than it (1280 px against a
    /// 1400 px plot) used to lose its legend past the right edge.
    #[test]
    fn an_svg_fits_its_window_and_keeps_its_size_for_pages() {
        let svg = "<svg width=\"1400\" height=\"496\" viewBox=\"0 0 1400 496\" xmlns=\"http://www.w3.org/2000/svg\">\n</svg>\n";
        let got = scalable(svg);
        assert!(
            got.starts_with(
                "<svg style=\"max-width:100%;height:auto\" width=\"1400\" height=\"496\" viewBox="
            ),
            "{got}"
        );
        assert_eq!(scalable(&got), got, "once only");
    }

    #[test]
    fn compacting_an_svg_drops_default_opacity_and_rounds_font_sizes() {
        let got = compact_svg(
            "<text x=\"1\" font-size=\"16.129032258064516\" opacity=\"1\" fill=\"#000000\">\n<rect opacity=\"0.5\"/>\n",
        );
        assert_eq!(
            got,
            "<text x=\"1\" font-size=\"16.1\" fill=\"#000000\">\n<rect opacity=\"0.5\"/>\n"
        );
    }

    #[test]
    fn coalesce_merges_near_intervals_and_widens_tiny_ones() {
        let got = coalesce([(0, 5), (7, 9), (30, 31), (100, 200)], 10);
        assert_eq!(got, vec![(0, 17), (30, 40), (100, 200)]);
    }
}
