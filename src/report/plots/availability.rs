//! Availability over time: the share of workload acquisitions that succeeded, per time
//! bucket, with fault intervals shaded and violation windows marked behind the line.
//! Buckets are sized so a run has at most about 150 of them.

use super::{coalesce, seconds_label, us_to_s, DrawResult, Figure, FAULT, VIOLATION};
use crate::report::view::{Outcome, RunView};
use plotters::coord::Shift;
use plotters::prelude::*;

const MAX_BUCKETS: u64 = 150;

pub struct Availability<'a> {
    pub view: &'a RunView<'a>,
}

/// The smallest round bucket width that keeps a run of `span_us` within the budget.
pub fn bucket_us(span_us: u64) -> u64 {
    const WIDTHS_MS: [u64; 16] = [
        1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 300_000,
    ];
    WIDTHS_MS
        .iter()
        .map(|ms| ms * 1_000)
        .find(|w| span_us.div_ceil(*w) <= MAX_BUCKETS)
        .unwrap_or(600_000_000)
}

impl Availability<'_> {
    /// Per bucket: (start, acquired, completed).
    pub fn buckets(&self) -> (u64, Vec<(u64, u64, u64)>) {
        let end = self.view.workload_end_us().max(1);
        let width = bucket_us(end);
        let n = end.div_ceil(width) as usize;
        let mut out: Vec<(u64, u64, u64)> = (0..n).map(|i| (i as u64 * width, 0, 0)).collect();
        for a in &self.view.acquires {
            let i = ((a.done_us / width) as usize).min(n - 1);
            out[i].2 += 1;
            if a.outcome == Outcome::Acquired {
                out[i].1 += 1;
            }
        }
        (width, out)
    }
}

impl Figure for Availability<'_> {
    fn size(&self) -> (u32, u32) {
        (1400, 420)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let view = self.view;
        let end = view.workload_end_us().max(1);
        let (width, buckets) = self.buckets();
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!(
                    "Acquire calls that succeeded over time (contention included), per {} ms",
                    width / 1_000
                ),
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..us_to_s(end), 0.0..1.3)?;
        chart
            .configure_mesh()
            // One light line between labels, not ten: the grid still reads and the SVG stays small.
            .max_light_lines(1)
            .x_desc("true time (s)")
            .y_desc("acquire calls that succeeded")
            // The band above 100% holds the legend, off the data.
            .y_labels(6)
            .y_label_formatter(&|v| {
                if *v <= 1.0 + 1e-9 {
                    format!("{:.0}%", v * 100.0)
                } else {
                    String::new()
                }
            })
            .x_label_formatter(&seconds_label(end))
            .label_style(("sans-serif", 13))
            .draw()?;
        let res_us = (end / 1_300).max(1);
        let mut spans: Vec<(u64, u64)> = view
            .faults
            .iter()
            .map(|w| (w.start_us.min(end), w.end_us.unwrap_or(end).min(end)))
            .collect();
        spans.sort_unstable();
        let any_fault = !spans.is_empty();
        let drawn =
            chart.draw_series(coalesce(spans, res_us).into_iter().map(|(s, e)| {
                Rectangle::new([(us_to_s(s), 0.0), (us_to_s(e), 1.0)], FAULT.mix(0.2).filled())
            }))?;
        if any_fault {
            drawn
                .label("some fault active")
                .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], FAULT.mix(0.4).filled()));
        }
        let mut windows: Vec<(u64, u64)> = view
            .violations()
            .iter()
            .map(|v| (v.overlap_start_us, v.overlap_end_us))
            .collect();
        windows.sort_unstable();
        let any_violation = !windows.is_empty();
        let drawn = chart.draw_series(coalesce(windows, res_us).into_iter().map(|(s, e)| {
            Rectangle::new(
                [(us_to_s(s), 0.0), (us_to_s(e), 1.0)],
                VIOLATION.mix(0.3).filled(),
            )
        }))?;
        if any_violation {
            drawn
                .label("violation window")
                .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], VIOLATION.mix(0.4).filled()));
        }
        // Empty buckets break the line rather than read as 0%.
        let mut segments: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for &(start, ok, total) in &buckets {
            if total == 0 {
                segments.push(Vec::new());
                continue;
            }
            let x = us_to_s((start + width / 2).min(end));
            if let Some(s) = segments.last_mut() {
                s.push((x, ok as f64 / total as f64));
            }
        }
        let blue = RGBColor(31, 119, 180);
        let mut first = true;
        for seg in segments.into_iter().filter(|s| !s.is_empty()) {
            let points = seg.clone();
            let drawn = chart.draw_series(LineSeries::new(seg, blue.stroke_width(2)))?;
            if first {
                drawn
                    .label("acquire calls that succeeded")
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], blue.stroke_width(2)));
                first = false;
            }
            chart.draw_series(points.into_iter().map(|p| Circle::new(p, 2, blue.filled())))?;
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
