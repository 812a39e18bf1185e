//! Availability over time, per time bucket: the share of the bucket's time during which
//! no lock was free, wanted and failing (a lock was held or could be acquired), and apart
//! from it the share during which some attempt failed on a lock another client held
//! (contention), with fault intervals shaded and violation windows marked behind the
//! lines. See [`crate::report::view::TimeSpent`] and docs/availability.md. Buckets are
//! sized so a run has at most about 150 of them; the legend sits above 100%, off the data.

use super::{coalesce, seconds_label, us_to_s, DrawResult, Figure, FAULT, VIOLATION};
use crate::report::view::RunView;
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

/// The buckets of a workload that ends at `end_us`: their width ([`bucket_us`]) and each
/// one's start and length (the last may be shorter; none is empty). The throughput plot
/// uses the same, so the two read side by side.
pub fn layout(end_us: u64) -> (u64, Vec<(u64, u64)>) {
    let end = end_us.max(1);
    let width = bucket_us(end);
    let spans = (0..end.div_ceil(width))
        .map(|i| {
            let start = i * width;
            (start, (end - start).min(width).max(1))
        })
        .collect();
    (width, spans)
}

/// How much of each bucket `[i·width, (i+1)·width)` the sorted spans cover.
pub fn covered(spans: &[(u64, u64)], width: u64, n: usize) -> Vec<u64> {
    let mut out = vec![0; n];
    for &(s, e) in spans {
        let mut t = s;
        while t < e {
            let i = (t / width) as usize;
            if i >= n {
                break;
            }
            let next = ((i as u64 + 1) * width).min(e);
            out[i] += next - t;
            t = next;
        }
    }
    out
}

/// One bucket: start, length (µs), available share, contended share.
pub type Bucket = (u64, u64, f64, f64);

impl Availability<'_> {
    /// Per bucket: (start, length, available share, contended share). Time is
    /// available unless some lock was free, wanted and every attempt at it failed;
    /// contended where some attempt failed on a lock that was held ([`TimeSpent`]).
    ///
    /// [`TimeSpent`]: crate::report::view::TimeSpent
    pub fn buckets(&self) -> (u64, Vec<Bucket>) {
        let (width, spans) = layout(self.view.workload_end_us());
        let spent = self.view.time_spent();
        let lost = covered(&spent.unavailable, width, spans.len());
        let contended = covered(&spent.contended, width, spans.len());
        let out = spans
            .iter()
            .enumerate()
            .map(|(i, &(start, len))| {
                (
                    start,
                    len,
                    1.0 - lost[i] as f64 / len as f64,
                    contended[i] as f64 / len as f64,
                )
            })
            .collect();
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
                    "Availability in time, with the time lost to contention apart, per {} ms",
                    width / 1_000
                ),
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..us_to_s(end), 0.0..1.45)?;
        chart
            .configure_mesh()
            // One light line between labels, not ten: the grid still reads and the SVG stays small.
            .max_light_lines(1)
            .x_desc("true time (s)")
            .y_desc("share of the bucket's time")
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
        // Steps: each bucket's share held across its width.
        let step = |share: &dyn Fn(&Bucket) -> f64| {
            buckets
                .iter()
                .flat_map(|b| [(us_to_s(b.0), share(b)), (us_to_s(b.0 + b.1), share(b))])
                .collect::<Vec<_>>()
        };
        let blue = RGBColor(31, 119, 180);
        let grey = RGBColor(90, 90, 90);
        chart
            .draw_series(LineSeries::new(step(&|b| b.2), blue.stroke_width(2)))?
            .label("available: a lock held or acquirable")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], blue.stroke_width(2)));
        chart
            .draw_series(DashedLineSeries::new(step(&|b| b.3), 5, 3, grey.stroke_width(2)))?
            .label("contention: an attempt failed on a held lock")
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], grey.stroke_width(2)));
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

#[cfg(test)]
mod tests {
    use super::{covered, Availability};
    use crate::algorithm::Mode;
    use crate::checker::check;
    use crate::history::{Event, Op, OpKind};
    use crate::report::view::RunView;

    fn op(t: u64, c: usize, kind: OpKind) -> Op {
        let mut o = Op::new(t, c, kind, "L0", Mode::Exclusive);
        o.token = Some(format!("tok{c}-{t}").into());
        o.nodes = Some([0].iter().collect());
        o.valid_until_us = Some(10_000);
        o
    }

    /// Client 0 holds L0 from 100 to 500; client 1 fails at it from 200 to 300 (the lock
    /// is held: contention) and from 600 to 800 (the lock is free: unavailable); the
    /// history ends at 1000.
    fn history() -> Vec<Event> {
        vec![
            Event::Invoke(op(0, 0, OpKind::Acquire)),
            Event::Ok(op(100, 0, OpKind::Acquire)),
            Event::Invoke(op(200, 1, OpKind::Acquire)),
            Event::Fail(op(300, 1, OpKind::Acquire)),
            Event::Invoke(op(450, 0, OpKind::Release)),
            Event::Ok(op(500, 0, OpKind::Release)),
            Event::Invoke(op(600, 1, OpKind::Acquire)),
            Event::Fail(op(800, 1, OpKind::Acquire)),
            Event::Heal { t_us: 1_000 },
        ]
    }

    #[test]
    fn time_on_a_held_lock_is_contention_and_on_a_free_one_unavailability() {
        let h = history();
        let f = check(&h).unwrap();
        let view = RunView::new(&h, &f);
        let spent = view.time_spent();
        assert_eq!(spent.contended, vec![(200, 300)]);
        assert_eq!(spent.unavailable, vec![(600, 800)]);
        assert_eq!(
            spent.unavailable_us(),
            f.stats.unavailable_us,
            "the report counts what the checker counts"
        );
        assert!((f.stats.availability - 1.0 / 3.0).abs() < 1e-9, "calls: 1 of 3");
        let summary = crate::report::availability_in_time(&view);
        assert_eq!(summary["available_share"], 0.8);
        assert_eq!(summary["contended_share"], 0.1);
        assert_eq!(summary["calls_succeeded_share"], f.stats.availability);
    }

    #[test]
    fn buckets_hold_each_share_of_their_own_time() {
        assert_eq!(covered(&[(5, 25), (38, 40)], 10, 4), vec![5, 10, 5, 2]);
        let h = history();
        let f = check(&h).unwrap();
        let view = RunView::new(&h, &f);
        let (width, buckets) = Availability { view: &view }.buckets();
        assert_eq!(width, 1_000, "the smallest round width: 1 ms");
        assert_eq!(buckets.len(), 1);
        let (_, len, available, contended) = buckets[0];
        assert_eq!(len, 1_000);
        assert!((available - 0.8).abs() < 1e-9 && (contended - 0.1).abs() < 1e-9);
    }
}
