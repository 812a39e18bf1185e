//! Cumulative distributions per mode on a logarithmic time axis: the acquire-latency CDF
//! (one attempt, invoke to ok) and, for read-write runs, the wait-time CDF (first
//! attempt to acquisition, across retries), where a starving mode shows as a long tail.

use super::{mode_color, DrawResult, Figure};
use plotters::coord::Shift;
use plotters::prelude::*;

/// At most this many points per line: enough for a smooth curve at 1000 px.
const MAX_POINTS: usize = 2_000;

pub struct Cdf {
    pub title: String,
    pub x_desc: String,
    /// Per mode: sorted values in microseconds.
    pub series: Vec<(String, Vec<u64>)>,
}

impl Figure for Cdf {
    fn size(&self) -> (u32, u32) {
        (900, 520)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let values = self.series.iter().flat_map(|(_, v)| v.iter().copied());
        let lo_ms = values
            .clone()
            .filter(|&v| v > 0)
            .min()
            .map_or(0.01, |v| v as f64 / 1e3);
        let hi_ms = values.max().map_or(1.0, |v| v as f64 / 1e3);
        let x0 = (lo_ms / 1.5).max(0.001);
        let x1 = (hi_ms * 1.5).max(x0 * 10.0);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((x0..x1).log_scale(), 0.0..1.0)?;
        chart
            .configure_mesh()
            .x_desc(&self.x_desc)
            .y_desc("share of acquisitions at or below")
            .x_label_formatter(&|v| {
                if *v >= 1.0 {
                    format!("{v:.0}")
                } else {
                    format!("{v}")
                }
            })
            .label_style(("sans-serif", 13))
            .draw()?;
        let mut any = false;
        for (mode, values) in &self.series {
            if values.is_empty() {
                continue;
            }
            any = true;
            let n = values.len();
            let step = n.div_ceil(MAX_POINTS);
            let mut points: Vec<(f64, f64)> = (0..n)
                .step_by(step)
                .map(|i| ((values[i] as f64 / 1e3).max(x0), (i + 1) as f64 / n as f64))
                .collect();
            points.push(((values[n - 1] as f64 / 1e3).max(x0), 1.0));
            let color = mode_color(mode);
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))?
                .label(format!("{mode} (n = {n})"))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        if any {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.5))
                .label_font(("sans-serif", 13))
                .draw()?;
        } else {
            root.draw(&Text::new(
                "no successful acquisition",
                (330, 250),
                ("sans-serif", 18).into_font(),
            ))?;
        }
        Ok(())
    }
}
