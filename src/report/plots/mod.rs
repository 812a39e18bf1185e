//! The report's plots, each written twice: as PNG (bitmap backend) and as SVG.
//!
//! Text goes through `ab_glyph` with the DejaVu Sans file shipped in `src/report/font/`, so
//! drawing needs no system font library and a PNG looks the same on every machine.
//! Every figure implements [`Figure`], which draws on any plotters backend; [`save`]
//! renders it to `<stem>.png` and `<stem>.svg`. Long runs stay readable because the
//! figures merge what would be narrower than a pixel (see [`timeline`]).

pub mod availability;
pub mod cdf;
pub mod sweep;
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

/// Draws `figure` into `dir/<stem>.png` and `dir/<stem>.svg`.
pub fn save(figure: &impl Figure, dir: &Path, stem: &str) -> Result<(), PlotError> {
    register_font();
    let size = figure.size();
    let png = dir.join(format!("{stem}.png"));
    let fail = |file: &Path, e: &dyn std::fmt::Display| PlotError {
        file: file.display().to_string(),
        message: e.to_string(),
    };
    {
        let root = BitMapBackend::new(&png, size).into_drawing_area();
        figure.draw(&root).map_err(|e| fail(&png, &e))?;
        root.present().map_err(|e| fail(&png, &e))?;
    }
    let svg = dir.join(format!("{stem}.svg"));
    {
        let root = SVGBackend::new(&svg, size).into_drawing_area();
        figure.draw(&root).map_err(|e| fail(&svg, &e))?;
        root.present().map_err(|e| fail(&svg, &e))?;
    }
    Ok(())
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
    use super::coalesce;

    #[test]
    fn coalesce_merges_near_intervals_and_widens_tiny_ones() {
        let got = coalesce([(0, 5), (7, 9), (30, 31), (100, 200)], 10);
        assert_eq!(got, vec![(0, 17), (30, 40), (100, 200)]);
    }
}
