//! Cumulative distributions per mode on a logarithmic time axis: the acquire-latency CDF
//! (one attempt, invoke to ok) and, for read-write runs, the wait-time CDF (first
//! attempt to acquisition, across retries), where a starving mode shows as a long tail.
//! Each is an empirical CDF drawn as steps, with its n in the legend; waits still open
//! when the history ended are censored: they count in n, so the line stops below 100%
//! by their share, and the legend says how many.

use super::{mode_color, DrawResult, Figure};
use plotters::coord::Shift;
use plotters::prelude::*;

/// At most this many points per line: enough for a smooth curve at 1000 px.
const MAX_POINTS: usize = 2_000;

#[derive(Default)]
pub struct Cdf {
    pub title: String,
    pub x_desc: String,
    /// Per mode: sorted values in microseconds.
    pub series: Vec<(String, Vec<u64>)>,
    /// Per mode, in the order of `series`: values never observed (a writer that never
    /// got the lock); missing entries are 0.
    pub censored: Vec<usize>,
}

/// The decades the axis spans: from the power of ten at or below the smallest value to
/// the one at or above the largest, at least two, so the axis has a label per decade.
pub(super) fn decades(lo_ms: f64, hi_ms: f64) -> (f64, f64) {
    let x0 = 10f64.powf(lo_ms.max(0.001).log10().floor());
    let x1 = 10f64.powf(hi_ms.max(x0).log10().ceil()).max(x0 * 100.0);
    (x0, x1)
}

/// A millisecond label: "0.01", "0.5", "20", "1000".
pub(super) fn ms_label(v: f64) -> String {
    if v >= 1.0 {
        format!("{v:.0}")
    } else {
        let text = format!("{v:.3}");
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The steps of an empirical CDF of sorted `values` out of `total` (values plus the
/// censored ones), at most about `MAX_POINTS` corners.
pub fn steps(values: &[u64], total: usize, x0: f64) -> Vec<(f64, f64)> {
    let n = values.len();
    let stride = n.div_ceil(MAX_POINTS / 2).max(1);
    let mut out = Vec::with_capacity(2 * n / stride + 2);
    let mut below = 0.0;
    let mut i = 0;
    while i < n {
        // The last index of this stride, widened to take every equal value.
        let mut j = (i + stride).min(n) - 1;
        while j + 1 < n && values[j + 1] == values[j] {
            j += 1;
        }
        let x = (values[j] as f64 / 1e3).max(x0);
        let y = (j + 1) as f64 / total as f64;
        out.push((x, below));
        out.push((x, y));
        below = y;
        i = j + 1;
    }
    out
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
        let (x0, x1) = decades(lo_ms, hi_ms);
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(12)
            // Room for the last decade's label ("100000").
            .margin_right(40)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d((x0..x1).log_scale(), 0.0..1.0)?;
        chart
            .configure_mesh()
            // One light line between labels, not ten: the grid still reads and the SVG stays small.
            .max_light_lines(1)
            .x_desc(&self.x_desc)
            .y_desc("share of acquisitions at or below")
            .x_label_formatter(&|v| ms_label(*v))
            .label_style(("sans-serif", 13))
            .draw()?;
        let mut any = false;
        for (k, (mode, values)) in self.series.iter().enumerate() {
            let censored = self.censored.get(k).copied().unwrap_or(0);
            if values.is_empty() && censored == 0 {
                continue;
            }
            any = true;
            let n = values.len() + censored;
            let mut points = steps(values, n, x0);
            // Run on to the right edge at the share reached: nothing more was observed.
            let top = values.len() as f64 / n as f64;
            points.push((x1, top));
            let color = mode_color(mode);
            let label = match censored {
                0 => format!("{mode} (n = {n})"),
                c => format!(
                    "{mode} (n = {n}; {c} never got it: the line stops at {:.0}%)",
                    top * 100.0
                ),
            };
            chart
                .draw_series(LineSeries::new(points, color.stroke_width(2)))?
                .label(label)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        if any {
            chart
                .configure_series_labels()
                // Above a CDF's curve is empty: the legend covers no data there.
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK.mix(0.5))
                .label_font(("sans-serif", 13))
                .draw()?;
        } else {
            root.draw(&Text::new(
                "no acquisition to show",
                (330, 250),
                ("sans-serif", 18).into_font(),
            ))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{decades, ms_label, steps};

    #[test]
    fn a_cdf_is_drawn_as_steps_and_stops_at_the_censored_share() {
        let got = steps(&[1_000, 2_000, 2_000, 4_000], 5, 0.001);
        assert_eq!(
            got,
            [
                (1.0, 0.0),
                (1.0, 0.2),
                (2.0, 0.2),
                (2.0, 0.6),
                (4.0, 0.6),
                (4.0, 0.8)
            ]
        );
    }

    #[test]
    fn a_log_axis_spans_whole_decades_with_readable_labels() {
        assert_eq!(decades(0.35, 15_877.0), (0.1, 100_000.0));
        assert_eq!(decades(100.0, 120.0), (100.0, 10_000.0));
        assert_eq!(ms_label(0.01), "0.01");
        assert_eq!(ms_label(1000.0), "1000");
    }
}
