//! Phase diagrams of a sweep: the share of seeds with a finding (a violation, or a stale
//! write) per grid cell. One axis draws a line with its 95% Wilson band; two axes draw a
//! heat map, one rectangle per cell. Either way the safe/unsafe boundary (between cells
//! where no seed had the finding and cells where some did) is drawn in black.

use super::{DrawResult, Figure};
use crate::outcome::sweep::{Cell, Rate, Sweep};
use crate::scenario::axis::{Axis, AxisKind};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Which finding a diagram shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Violation,
    StaleWrite,
}

impl Metric {
    pub fn of(self, cell: &Cell) -> Rate {
        match self {
            Metric::Violation => cell.violation,
            Metric::StaleWrite => cell.stale_write,
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Metric::Violation => "seeds with a mutual-exclusion violation",
            Metric::StaleWrite => "seeds with a stale write accepted by the resource",
        }
    }
}

pub struct Phase<'a> {
    pub sweep: &'a Sweep,
    pub metric: Metric,
}

/// Colour of a rate: pale green for none, yellow to dark red from a few % to all.
pub fn rate_color(rate: f64) -> RGBColor {
    if rate <= 0.0 {
        return RGBColor(222, 242, 214);
    }
    let t = rate.clamp(0.0, 1.0).sqrt();
    let mix = |a: u8, b: u8| (a as f64 + (b as f64 - a as f64) * t).round() as u8;
    RGBColor(mix(255, 165), mix(220, 0), mix(110, 38))
}

/// A value of an axis as a tick label.
fn tick(axis: &Axis, i: usize) -> String {
    match axis.kind {
        AxisKind::Duration => trim(axis.xs[i]),
        _ => axis.labels[i].clone(),
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

const BOUNDARY_WIDTH: u32 = 3;

impl Figure for Phase<'_> {
    fn size(&self) -> (u32, u32) {
        if self.sweep.axes.len() == 1 {
            (1100, 560)
        } else {
            (1100, 760)
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        if self.sweep.axes.len() == 1 {
            self.line(root)
        } else {
            self.heat_map(root)
        }
    }
}

impl Phase<'_> {
    fn caption(&self) -> String {
        format!(
            "{}: share of {} ({} seeds per cell)",
            self.sweep.scenario,
            self.metric.describe(),
            self.sweep.seeds
        )
    }

    fn line<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let axis = &self.sweep.axes[0];
        let mut points: Vec<(f64, Rate)> = self
            .sweep
            .cells
            .iter()
            .map(|c| (axis.xs[c.index], self.metric.of(c)))
            .collect();
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let lo = points.first().map_or(0.0, |p| p.0);
        let hi = points.last().map_or(1.0, |p| p.0);
        let pad = ((hi - lo) * 0.03).max(1e-9);
        let mut chart = ChartBuilder::on(root)
            .caption(self.caption(), ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(64)
            .build_cartesian_2d(lo - pad..hi + pad, 0.0..1.02)?;
        let labels = |x: &f64| match axis.kind {
            AxisKind::Category => {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < axis.labels.len() {
                    axis.labels[i as usize].clone()
                } else {
                    String::new()
                }
            }
            _ => trim(*x),
        };
        chart
            .configure_mesh()
            // One light line between labels, not ten: the grid still reads and the SVG stays small.
            .max_light_lines(1)
            .x_desc(axis.title())
            .y_desc("share of seeds (95% Wilson interval)")
            .x_label_formatter(&labels)
            .y_label_formatter(&|v| format!("{:.0}%", v * 100.0))
            .label_style(("sans-serif", 13))
            .draw()?;
        let blue = RGBColor(31, 119, 180);
        let mut band: Vec<(f64, f64)> = points.iter().map(|(x, r)| (*x, r.high)).collect();
        band.extend(points.iter().rev().map(|(x, r)| (*x, r.low)));
        chart
            .draw_series(std::iter::once(Polygon::new(band, blue.mix(0.18).filled())))?
            .label("95% interval")
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], blue.mix(0.3).filled()));
        chart
            .draw_series(LineSeries::new(
                points.iter().map(|(x, r)| (*x, r.rate)),
                blue.stroke_width(2),
            ))?
            .label(self.metric.describe())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], blue.stroke_width(2)));
        chart.draw_series(
            points
                .iter()
                .map(|(x, r)| Circle::new((*x, r.rate), 4, rate_color(r.rate).filled())),
        )?;
        let edges: Vec<f64> = points
            .windows(2)
            .filter(|w| (w[0].1.rate > 0.0) != (w[1].1.rate > 0.0))
            .map(|w| (w[0].0 + w[1].0) / 2.0)
            .collect();
        if !edges.is_empty() {
            chart
                .draw_series(edges.iter().map(|x| {
                    PathElement::new(vec![(*x, 0.0), (*x, 1.02)], BLACK.stroke_width(BOUNDARY_WIDTH))
                }))?
                .label("safe/unsafe boundary")
                .legend(|(x, y)| {
                    PathElement::new(vec![(x, y), (x + 14, y)], BLACK.stroke_width(BOUNDARY_WIDTH))
                });
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK.mix(0.5))
            .label_font(("sans-serif", 13))
            .draw()?;
        Ok(())
    }

    fn heat_map<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (ax, ay) = (&self.sweep.axes[0], &self.sweep.axes[1]);
        let (nx, ny) = (ax.labels.len(), ay.labels.len());
        // Missing cells (a shard's share) stay blank.
        let mut grid: Vec<Option<Rate>> = vec![None; nx * ny];
        for c in &self.sweep.cells {
            grid[c.index] = Some(self.metric.of(c));
        }
        let at = |i: usize, j: usize| grid[i * ny + j];
        let (plot, legend) = root.split_horizontally(root.dim_in_pixel().0 - 120);
        let mut chart = ChartBuilder::on(&plot)
            .caption(self.caption(), ("sans-serif", 18))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(80)
            // Plotters' integer ranges include their end: 0..n-1 is n segments.
            .build_cartesian_2d(
                (0..nx as i32 - 1).into_segmented(),
                (0..ny as i32 - 1).into_segmented(),
            )?;
        let label = |axis: &Axis, v: &SegmentValue<i32>| match v {
            SegmentValue::CenterOf(i) if (*i as usize) < axis.labels.len() => tick(axis, *i as usize),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            // One light line between labels, not ten: the grid still reads and the SVG stays small.
            .max_light_lines(1)
            .disable_mesh()
            .x_desc(ax.title())
            .y_desc(ay.title())
            .x_labels(nx)
            .y_labels(ny)
            .x_label_formatter(&|v| label(ax, v))
            .y_label_formatter(&|v| label(ay, v))
            .label_style(("sans-serif", 12))
            .draw()?;
        let exact = |i: usize| SegmentValue::Exact(i as i32);
        chart.draw_series(
            (0..nx)
                .flat_map(|i| (0..ny).map(move |j| (i, j)))
                .filter_map(|(i, j)| {
                    at(i, j).map(|r| {
                        Rectangle::new(
                            [(exact(i), exact(j)), (exact(i + 1), exact(j + 1))],
                            rate_color(r.rate).filled(),
                        )
                    })
                }),
        )?;
        if nx * ny <= 400 {
            chart.draw_series(
                (0..nx)
                    .flat_map(|i| (0..ny).map(move |j| (i, j)))
                    .filter_map(|(i, j)| {
                        at(i, j).filter(|r| r.rate > 0.0).map(|r| {
                            Text::new(
                                format!("{:.0}", r.rate * 100.0),
                                (SegmentValue::CenterOf(i as i32), SegmentValue::CenterOf(j as i32)),
                                ("sans-serif", 11).into_font().color(&BLACK),
                            )
                        })
                    }),
            )?;
        }
        // The boundary: every edge between a cell with no finding and one with some.
        let unsafe_at = |i: usize, j: usize| at(i, j).map(|r| r.rate > 0.0);
        let mut edges = Vec::new();
        for i in 0..nx {
            for j in 0..ny {
                let here = unsafe_at(i, j);
                if i + 1 < nx
                    && here.is_some()
                    && unsafe_at(i + 1, j).is_some()
                    && here != unsafe_at(i + 1, j)
                {
                    edges.push([(exact(i + 1), exact(j)), (exact(i + 1), exact(j + 1))]);
                }
                if j + 1 < ny
                    && here.is_some()
                    && unsafe_at(i, j + 1).is_some()
                    && here != unsafe_at(i, j + 1)
                {
                    edges.push([(exact(i), exact(j + 1)), (exact(i + 1), exact(j + 1))]);
                }
            }
        }
        chart.draw_series(
            edges
                .into_iter()
                .map(|e| PathElement::new(e.to_vec(), BLACK.stroke_width(BOUNDARY_WIDTH))),
        )?;
        self.legend(&legend)
    }

    /// The colour scale beside a heat map.
    fn legend<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let font = ("sans-serif", 12).into_font().color(&BLACK);
        let (top, step) = (70, 34);
        area.draw(&Text::new("share of seeds", (6, top - 30), font.clone()))?;
        for (k, rate) in [0.0, 0.01, 0.05, 0.2, 0.5, 1.0].iter().enumerate() {
            let y = top + k as i32 * step;
            area.draw(&Rectangle::new(
                [(6, y), (34, y + 24)],
                rate_color(*rate).filled(),
            ))?;
            area.draw(&Rectangle::new([(6, y), (34, y + 24)], BLACK.mix(0.4)))?;
            let text = if *rate == 0.0 {
                "none".to_string()
            } else {
                format!("{:.0}%", rate * 100.0)
            };
            area.draw(&Text::new(text, (40, y + 6), font.clone()))?;
        }
        let y = top + 6 * step + 10;
        area.draw(&PathElement::new(
            vec![(6, y), (34, y)],
            BLACK.stroke_width(BOUNDARY_WIDTH),
        ))?;
        area.draw(&Text::new("boundary", (40, y - 6), font.clone()))?;
        area.draw(&Text::new("cells: % of seeds", (6, y + 24), font.clone()))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::rate_color;

    #[test]
    fn no_finding_is_green_and_more_is_darker() {
        assert_eq!(rate_color(0.0), plotters::style::RGBColor(222, 242, 214));
        let (a, b) = (rate_color(0.02), rate_color(0.9));
        assert!(a.1 > b.1, "{a:?} {b:?}");
    }
}
