//! The holder timeline: one row per node and per client over true time.
//!
//! Client rows show holds as bars coloured by mode (exclusive, read, write). Fault
//! intervals are shaded on the rows of the nodes and clients they hit (a fault aimed at
//! every client is shaded on its nodes only, since shading every row would hide the
//! holds). Violation windows are red bands across all rows; in a zoomed timeline the two
//! holds of the violation in focus get a red outline. Bars and bands narrower than a
//! pixel are merged, so a 10-minute run with 100k holds stays a readable overview.

use super::{coalesce, mode_color, seconds_label, us_to_s, DrawResult, Figure, FAULT, VIOLATION};
use crate::checker::Violation;
use crate::report::view::{mode_name, targets, FaultWindow, RunView};
use plotters::coord::Shift;
use plotters::prelude::*;

const WIDTH_PX: u32 = 1400;
/// Width of the plotting area, roughly: the resolution at which bars are merged.
const PLOT_PX: u64 = 1250;

pub struct Timeline<'a> {
    pub view: &'a RunView<'a>,
    pub from_us: u64,
    pub to_us: u64,
    pub title: String,
    /// The violation whose two holds are outlined.
    pub focus: Option<&'a Violation>,
}

impl<'a> Timeline<'a> {
    /// The whole run.
    pub fn overview(view: &'a RunView<'a>) -> Timeline<'a> {
        Timeline {
            view,
            from_us: 0,
            to_us: view.end_us.max(1),
            title: "Holder timeline: whole run".into(),
            focus: None,
        }
    }

    /// The window around one violation: both holds from the first acquire to the later
    /// end, with a margin on each side.
    pub fn around(view: &'a RunView<'a>, v: &'a Violation) -> Timeline<'a> {
        let start = v.first.start_us.min(v.second.start_us);
        let end = v
            .first
            .end_us
            .max(v.second.end_us)
            .min(view.end_us.max(start + 1));
        let margin = ((end - start) / 4).max(1_000);
        Timeline {
            view,
            from_us: start.saturating_sub(margin),
            to_us: end + margin,
            title: format!(
                "Holder timeline around the first violation: clients {} and {} on {}",
                v.first.client, v.second.client, v.lock
            ),
            focus: Some(v),
        }
    }

    /// The window around a fault's start, for a run without violations: the fault's
    /// span (at least two ttls, at most ten seconds) with a margin before it.
    pub fn around_fault(view: &'a RunView<'a>, w: &FaultWindow) -> Timeline<'a> {
        let ttl_us = view.meta.map_or(1_000_000, |m| m.ttl_ms * 1_000);
        let len = w
            .end_us
            .unwrap_or(view.end_us)
            .saturating_sub(w.start_us)
            .clamp((2 * ttl_us).min(10_000_000), 10_000_000);
        let margin = (len / 4).max(1_000);
        Timeline {
            view,
            from_us: w.start_us.saturating_sub(margin),
            to_us: (w.start_us + len + margin).min(view.end_us.max(w.start_us + 1)),
            title: format!(
                "Holder timeline around the first fault (#{}, from t={:.3} s)",
                w.id,
                us_to_s(w.start_us)
            ),
            focus: None,
        }
    }

    fn rows(&self) -> usize {
        self.view.nodes + self.view.clients
    }

    /// The y coordinate of a row's centre: nodes at the top, then clients.
    fn y(&self, row: usize) -> f64 {
        (self.rows() - 1 - row) as f64
    }

    fn clip(&self, s: u64, e: u64) -> Option<(u64, u64)> {
        (s < self.to_us && e > self.from_us).then(|| (s.max(self.from_us), e.min(self.to_us)))
    }
}

impl Figure for Timeline<'_> {
    fn size(&self) -> (u32, u32) {
        let h = 110 + 22 * self.rows() as u32;
        (WIDTH_PX, h.clamp(260, 1600))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let rows = self.rows().max(1);
        let (nodes, view) = (self.view.nodes, self.view);
        let res_us = ((self.to_us - self.from_us) / PLOT_PX).max(1);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(80)
            .build_cartesian_2d(
                us_to_s(self.from_us)..us_to_s(self.to_us),
                -0.6..rows as f64 - 0.4,
            )?;
        let label = |y: &f64| {
            let r = y.round();
            if (y - r).abs() > 0.01 || r < 0.0 || r as usize >= rows {
                return String::new();
            }
            let row = rows - 1 - r as usize;
            if row < nodes {
                format!("node {row}")
            } else {
                format!("client {}", row - nodes)
            }
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(rows + 1)
            .y_label_formatter(&label)
            .x_label_formatter(&seconds_label(self.to_us - self.from_us))
            .x_desc("true time (s)")
            .label_style(("sans-serif", 13))
            .draw()?;

        // Faults, shaded on the rows they hit.
        let mut shades = Vec::new();
        for w in &view.faults {
            let end = w.end_us.unwrap_or(view.end_us);
            let Some((s, e)) = self.clip(w.start_us, end) else {
                continue;
            };
            let (hit_nodes, hit_clients) = targets(&w.fault);
            let mut rows_hit: Vec<usize> = hit_nodes.into_iter().filter(|&n| n < nodes).collect();
            if hit_clients.len() < view.clients {
                rows_hit.extend(hit_clients.into_iter().map(|c| nodes + c));
            }
            for r in rows_hit.into_iter().filter(|&r| r < rows) {
                shades.push(Rectangle::new(
                    [(us_to_s(s), self.y(r) - 0.5), (us_to_s(e), self.y(r) + 0.5)],
                    FAULT.mix(0.3).filled(),
                ));
            }
        }
        let any_fault = !shades.is_empty();
        let drawn = chart.draw_series(shades)?;
        if any_fault {
            drawn
                .label("fault (on the rows it hits)")
                .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], FAULT.mix(0.4).filled()));
        }

        // Violation windows, merged below a pixel.
        let mut windows: Vec<(u64, u64)> = view
            .violations()
            .iter()
            .filter_map(|v| self.clip(v.overlap_start_us, v.overlap_end_us))
            .collect();
        windows.sort_unstable();
        let any_violation = !windows.is_empty();
        let bands = coalesce(windows, res_us).into_iter().map(|(s, e)| {
            Rectangle::new(
                [(us_to_s(s), -0.6), (us_to_s(e), rows as f64 - 0.4)],
                VIOLATION.mix(0.25).filled(),
            )
        });
        let drawn = chart.draw_series(bands)?;
        if any_violation {
            drawn
                .label("violation window (two holders)")
                .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], VIOLATION.mix(0.4).filled()));
        }

        // Holds, per mode and client, merged below a pixel.
        for mode in view.modes() {
            let color = mode_color(&mode);
            let mut bars = Vec::new();
            for c in 0..view.clients {
                let mut mine: Vec<(u64, u64)> = view
                    .holds()
                    .iter()
                    .filter(|h| h.client == c && mode_name(h.mode) == mode)
                    .filter_map(|h| self.clip(h.start_us, h.end_us))
                    .collect();
                mine.sort_unstable();
                let y = self.y(nodes + c);
                bars.extend(coalesce(mine, res_us).into_iter().map(|(s, e)| {
                    Rectangle::new([(us_to_s(s), y - 0.32), (us_to_s(e), y + 0.32)], color.filled())
                }));
            }
            chart
                .draw_series(bars)?
                .label(format!("{mode} hold"))
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 14, y + 5)], color.filled()));
        }

        if let Some(v) = self.focus {
            let outlines = [&v.first, &v.second].into_iter().filter_map(|h| {
                let (s, e) = self.clip(h.start_us, h.end_us)?;
                let y = self.y(nodes + h.client);
                Some(Rectangle::new(
                    [(us_to_s(s), y - 0.42), (us_to_s(e), y + 0.42)],
                    VIOLATION.stroke_width(2),
                ))
            });
            chart.draw_series(outlines)?;
        }
        if let Some(heal) = view.heal_us.and_then(|h| self.clip(h, h + 1)) {
            let x = us_to_s(heal.0);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, -0.6), (x, rows as f64 - 0.4)],
                    BLACK.mix(0.6).stroke_width(2),
                )))?
                .label("heal: faults end, liveness probes start")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], BLACK.mix(0.6).stroke_width(2)));
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.5))
            .label_font(("sans-serif", 13))
            .draw()?;
        Ok(())
    }
}
