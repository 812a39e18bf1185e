//! Every acquire over time, in the style of Jepsen's latency plots: one point per
//! workload acquire at its start (x) and its latency, invoke to return (y, log scale),
//! marked by how it ended: a filled circle for ok, a cross for failed, an open triangle
//! for unknown (so the three read apart without colour too). Fault periods are shaded
//! behind the points and labelled with their number and kind when few; the legend, with
//! n per outcome, sits to the right of the plot, off the data.
//!
//! A long run has millions of acquires: past [`MAX_POINTS`] the points are binned on a
//! grid (about a pixel per cell, coarser until at most [`MAX_POINTS`] cells hold a
//! point), one point drawn per outcome and cell, and the caption says how many were
//! drawn of how many ([`Operations::thinned`]).

use super::cdf::{decades, ms_label};
use super::{coalesce, fault_color, seconds_label, us_to_s, DrawResult, Figure};
use crate::report::view::{Outcome, RunView};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeSet;

/// Up to this many acquires every one is drawn; past it they are binned on a grid
/// coarse enough to draw at most this many (a point is about 100 bytes of SVG).
pub const MAX_POINTS: usize = 5_000;
const WIDTH_PX: u32 = 1400;
const LEGEND_PX: u32 = 250;
/// The finest grid past [`MAX_POINTS`]: columns over time, rows per decade of latency.
const GRID_X: u64 = 1_024;
const GRID_Y: f64 = 32.0;
/// Fault periods up to which each gets a label.
const FAULT_LABELS: usize = 12;

const OK: RGBColor = RGBColor(31, 119, 180);
const FAILED: RGBColor = RGBColor(214, 39, 40);
const UNKNOWN: RGBColor = RGBColor(255, 127, 14);

pub struct Operations<'a> {
    pub view: &'a RunView<'a>,
    /// The points' pixels, set by [`Figure::draw`] for [`Figure::extra_svg`]: a point
    /// is a few bytes of one path per outcome, not an SVG element of its own.
    pub pixels: std::cell::RefCell<Vec<(i32, i32, Outcome)>>,
}

impl<'a> Operations<'a> {
    pub fn new(view: &'a RunView<'a>) -> Operations<'a> {
        Operations {
            view,
            pixels: Default::default(),
        }
    }
}

/// One point to draw: start (µs), latency (µs), outcome.
pub type Point = (u64, u64, Outcome);

impl Operations<'_> {
    /// The points drawn: every acquire up to [`MAX_POINTS`], else one per outcome and
    /// grid cell (the first in history order). In history order, so the same history
    /// draws the same file.
    pub fn points(&self) -> Vec<Point> {
        let all = self
            .view
            .acquires
            .iter()
            .map(|a| (a.invoke_us, a.done_us - a.invoke_us, a.outcome));
        if self.view.acquires.len() <= MAX_POINTS {
            return all.collect();
        }
        let end = self.view.end_us.max(1);
        // Halve the grid until the cells that hold a point are few enough.
        let (mut cols, mut rows) = (GRID_X, GRID_Y);
        loop {
            let mut seen = BTreeSet::new();
            let kept: Vec<Point> = all
                .clone()
                .filter(|&(t, lat, o)| {
                    let col = t.min(end) * cols / end;
                    let row = ((lat.max(1) as f64).log10() * rows) as i64;
                    seen.insert((col, row, o as u8))
                })
                .collect();
            if kept.len() <= MAX_POINTS || cols <= 1 {
                return kept;
            }
            cols /= 2;
            rows /= 2.0;
        }
    }

    /// `Some((drawn, total))` when the points were binned.
    pub fn thinned(&self) -> Option<(usize, usize)> {
        let total = self.view.acquires.len();
        (total > MAX_POINTS).then(|| (self.points().len(), total))
    }

    fn count(&self, o: Outcome) -> usize {
        self.view.acquires.iter().filter(|a| a.outcome == o).count()
    }
}

fn marker<DB: DrawingBackend>(o: Outcome, at: (i32, i32)) -> DynElement<'static, DB, (i32, i32)>
where
    DB::ErrorType: 'static,
{
    match o {
        Outcome::Acquired => Circle::new(at, 2, OK.mix(0.8).filled()).into_dyn(),
        Outcome::Failed => Cross::new(at, 3, FAILED.stroke_width(1)).into_dyn(),
        Outcome::Unknown => {
            let (x, y) = at;
            // Open, as on the plot.
            PathElement::new(
                vec![(x, y - 4), (x - 4, y + 3), (x + 4, y + 3), (x, y - 4)],
                UNKNOWN.stroke_width(1),
            )
            .into_dyn()
        }
    }
}

impl Figure for Operations<'_> {
    fn size(&self) -> (u32, u32) {
        (WIDTH_PX, 460)
    }

    fn extra_svg(&self) -> String {
        paths(&self.pixels.borrow())
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let (plot_area, legend_area) = root.split_horizontally(WIDTH_PX - LEGEND_PX);
        let view = self.view;
        let end = view.end_us.max(1);
        let points = self.points();
        let lo_ms = points
            .iter()
            .map(|p| p.1)
            .filter(|&l| l > 0)
            .min()
            .map_or(0.01, |l| l as f64 / 1e3);
        let hi_ms = points.iter().map(|p| p.1).max().map_or(1.0, |l| l as f64 / 1e3);
        let (y0, y1) = decades(lo_ms, hi_ms);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption("Every acquire: latency against start time", ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..us_to_s(end), (y0..y1).log_scale())?;
        chart
            .configure_mesh()
            .max_light_lines(1)
            .x_desc("start of the acquire, true time (s)")
            .y_desc("latency, invoke to return (ms, log)")
            .x_label_formatter(&seconds_label(end))
            .y_label_formatter(&|v| ms_label(*v))
            .label_style(("sans-serif", 13))
            .draw()?;

        // Fault periods, merged below a pixel, each kind in its own colour.
        let res_us = (end / 1_100).max(1);
        let mut kinds: Vec<&str> = view.faults.iter().map(|w| w.fault.kind()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        for kind in &kinds {
            let mut spans: Vec<(u64, u64)> = view
                .faults
                .iter()
                .filter(|w| w.fault.kind() == *kind)
                .map(|w| (w.start_us, w.end_us.unwrap_or(end).max(w.start_us + 1).min(end)))
                .collect();
            spans.sort_unstable();
            let color = fault_color(kind).mix(0.18);
            chart.draw_series(
                coalesce(spans, res_us)
                    .into_iter()
                    .map(|(s, e)| Rectangle::new([(us_to_s(s), y0), (us_to_s(e), y1)], color.filled())),
            )?;
        }
        if view.faults.len() <= FAULT_LABELS {
            chart.draw_series(view.faults.iter().enumerate().map(|(i, w)| {
                // Staggered, so labels of faults close together do not overprint.
                let y = y1 / 10f64.powf(0.12 + 0.18 * (i % 3) as f64);
                EmptyElement::at((us_to_s(w.start_us), y))
                    + Text::new(
                        format!("#{} {}", w.id, w.fault.kind().replace('_', " ")),
                        (3, 0),
                        ("sans-serif", 11).into_font().color(&BLACK.mix(0.75)),
                    )
            }))?;
        }
        if let Some(heal) = view.heal_drawn().filter(|&h| h <= end) {
            let x = us_to_s(heal);
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, y0), (x, y1)],
                BLACK.mix(0.6).stroke_width(2),
            )))?;
        }

        // The points themselves go in as three paths ([`Figure::extra_svg`]).
        *self.pixels.borrow_mut() = points
            .iter()
            .map(|&(t, lat, o)| {
                let (x, y) = chart.backend_coord(&(us_to_s(t), (lat as f64 / 1e3).max(y0)));
                (x, y, o)
            })
            .collect();

        // The legend, off the data.
        let mut entries: Vec<(Option<Outcome>, Option<RGBColor>, String)> = Vec::new();
        for (o, word) in [
            (Outcome::Acquired, "ok"),
            (Outcome::Failed, "failed"),
            (Outcome::Unknown, "unknown (timed out)"),
        ] {
            entries.push((Some(o), None, format!("{word} (n = {})", self.count(o))));
        }
        for kind in &kinds {
            entries.push((
                None,
                Some(fault_color(kind)),
                format!("{} active", kind.replace('_', " ")),
            ));
        }
        for (i, (o, shade, label)) in entries.iter().enumerate() {
            let (x, y) = (10, 48 + 20 * i as i32);
            match (o, shade) {
                (Some(o), _) => legend_area.draw(&marker::<DB>(*o, (x + 9, y)))?,
                (None, Some(c)) => legend_area.draw(&Rectangle::new(
                    [(x, y - 6), (x + 18, y + 6)],
                    c.mix(0.35).filled(),
                ))?,
                (None, None) => {}
            }
            legend_area.draw(&Text::new(
                label.clone(),
                (x + 26, y - 7),
                ("sans-serif", 13).into_font(),
            ))?;
        }
        if let Some((drawn, total)) = self.thinned() {
            let y = 48 + 20 * entries.len() as i32 + 10;
            legend_area.draw(&Text::new(
                format!("{drawn} of {total} drawn:"),
                (10, y),
                ("sans-serif", 12).into_font(),
            ))?;
            legend_area.draw(&Text::new(
                "one per outcome and cell".to_string(),
                (10, y + 16),
                ("sans-serif", 12).into_font(),
            ))?;
        }
        Ok(())
    }
}

/// One path per outcome: ok as round dots, failed as crosses, unknown as open
/// triangles, the shapes of the legend's markers.
fn paths(pixels: &[(i32, i32, Outcome)]) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    for (o, color, style) in [
        (
            Outcome::Acquired,
            OK,
            "stroke-width=\"4\" stroke-linecap=\"round\"",
        ),
        (Outcome::Failed, FAILED, "stroke-width=\"1\""),
        (Outcome::Unknown, UNKNOWN, "stroke-width=\"1\""),
    ] {
        let mut d = String::new();
        for &(x, y, _) in pixels.iter().filter(|p| p.2 == o) {
            let _ = match o {
                Outcome::Acquired => write!(d, "M{x} {y}h0"),
                Outcome::Failed => write!(d, "M{} {}l6 6m0-6l-6 6", x - 3, y - 3),
                Outcome::Unknown => write!(d, "M{x} {}l-4 7h8z", y - 4),
            };
        }
        if !d.is_empty() {
            let _ = writeln!(
                out,
                "<path class=\"{}\" d=\"{d}\" fill=\"none\" stroke=\"#{:02X}{:02X}{:02X}\" {style}/>",
                match o {
                    Outcome::Acquired => "ok",
                    Outcome::Failed => "failed",
                    Outcome::Unknown => "unknown",
                },
                color.0,
                color.1,
                color.2
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::check;
    use crate::history::Event;

    fn op(kind: &str, client: usize, t_us: u64) -> Event {
        serde_json::from_value(serde_json::json!({
            "type": kind, "t_us": t_us, "client": client, "op": "acquire", "lock": "L0",
            "mode": "exclusive", "token": format!("t{client}-{t_us}"), "nodes": [0],
        }))
        .unwrap()
    }

    /// A history of `n` acquires by one client: invoke, then ok or fail every other one.
    fn history(n: u64) -> Vec<Event> {
        let mut h = Vec::new();
        for i in 0..n {
            let t = i * 1_000;
            h.push(op("invoke", 0, t));
            h.push(op("fail", 0, t + 1 + i % 700));
        }
        h
    }

    #[test]
    fn every_acquire_is_a_point_up_to_the_bound_and_binned_past_it() {
        let small = history(500);
        let f = check(&small).unwrap();
        let view = RunView::new(&small, &f);
        let ops = Operations::new(&view);
        assert_eq!(ops.points().len(), 500);
        assert_eq!(ops.thinned(), None);

        let big = history(200_000);
        let f = check(&big).unwrap();
        let view = RunView::new(&big, &f);
        let ops = Operations::new(&view);
        let (drawn, total) = ops.thinned().expect("binned past the bound");
        assert_eq!(total, 200_000);
        assert!(drawn <= MAX_POINTS, "binning keeps at most the bound: {drawn}");
        assert!(drawn > MAX_POINTS / 8, "but still one per occupied cell: {drawn}");
        let svg = super::super::render_svg(&ops).unwrap();
        assert!(svg.len() < 300_000, "a small SVG: {} bytes", svg.len());
        let crosses = svg.matches("l6 6m0-6l-6 6").count();
        assert_eq!(crosses, drawn, "every point drawn is a cross on the failed path");
        assert!(svg.contains("failed (n = 200000)"), "n in the legend");
    }
}
