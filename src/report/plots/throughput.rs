//! Throughput over time, as Jepsen's rate plot draws it: per time bucket, how many
//! workload acquires returned per second, one line per outcome (ok, failed, unknown),
//! with each fault kind's periods shaded behind the lines and the heal drawn where faults
//! ran. A lock that stops granting under a fault shows as the ok line falling to zero
//! while the failed or unknown line rises. Buckets are those of the availability plot
//! ([`super::availability::bucket_us`]), so the two read side by side.

use super::availability::layout;
use super::{coalesce, fault_color, seconds_label, us_to_s, DrawResult, Figure};
use crate::report::view::{Outcome, RunView};
use plotters::coord::Shift;
use plotters::prelude::*;

const OK: RGBColor = RGBColor(31, 119, 180);
const FAILED: RGBColor = RGBColor(214, 39, 40);
const UNKNOWN: RGBColor = RGBColor(255, 127, 14);

pub struct Throughput<'a> {
    pub view: &'a RunView<'a>,
}

/// Acquires returned per second in each bucket: (bucket width, per bucket (ok, failed,
/// unknown)).
pub fn rates(view: &RunView) -> (u64, Vec<[f64; 3]>) {
    let (width, spans) = layout(view.workload_end_us());
    let mut counts = vec![[0u64; 3]; spans.len()];
    for a in &view.acquires {
        let Some(bucket) = counts.get_mut((a.done_us / width) as usize) else {
            continue;
        };
        bucket[match a.outcome {
            Outcome::Acquired => 0,
            Outcome::Failed => 1,
            Outcome::Unknown => 2,
        }] += 1;
    }
    let rates = counts
        .iter()
        .zip(&spans)
        .map(|(c, &(_, len))| c.map(|k| k as f64 * 1e6 / len as f64))
        .collect();
    (width, rates)
}

impl Figure for Throughput<'_> {
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
        let (width, rates) = rates(view);
        let top = rates.iter().flatten().copied().fold(1.0, f64::max) * 1.3;
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!(
                    "Acquires returned per second, per outcome, per {} ms",
                    width / 1_000
                ),
                ("sans-serif", 20),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..us_to_s(end), 0.0..top)?;
        chart
            .configure_mesh()
            .max_light_lines(1)
            .x_desc("true time (s)")
            .y_desc("acquires returned per second")
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_label_formatter(&seconds_label(end))
            .label_style(("sans-serif", 13))
            .draw()?;

        let res_us = (end / 1_300).max(1);
        let mut kinds: Vec<&str> = view.faults.iter().map(|w| w.fault.kind()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        for kind in kinds {
            let mut spans: Vec<(u64, u64)> = view
                .faults
                .iter()
                .filter(|w| w.fault.kind() == kind)
                .map(|w| (w.start_us.min(end), w.end_us.unwrap_or(end).min(end)))
                .collect();
            spans.sort_unstable();
            let color = fault_color(kind);
            chart
                .draw_series(coalesce(spans, res_us).into_iter().map(|(s, e)| {
                    Rectangle::new([(us_to_s(s), 0.0), (us_to_s(e), top)], color.mix(0.15).filled())
                }))?
                .label(format!("{} active", kind.replace('_', " ")))
                .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.mix(0.4).filled()));
        }
        if let Some(heal) = view.heal_drawn().filter(|&h| h <= end) {
            let x = us_to_s(heal);
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x, 0.0), (x, top)],
                    BLACK.mix(0.6).stroke_width(2),
                )))?
                .label("heal: faults end")
                .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], BLACK.mix(0.6).stroke_width(2)));
        }
        let totals = [Outcome::Acquired, Outcome::Failed, Outcome::Unknown]
            .map(|o| view.acquires.iter().filter(|a| a.outcome == o).count());
        for (i, (name, color)) in [("ok", OK), ("failed", FAILED), ("unknown (timed out)", UNKNOWN)]
            .into_iter()
            .enumerate()
        {
            let steps: Vec<(f64, f64)> = rates
                .iter()
                .enumerate()
                .flat_map(|(b, r)| {
                    let s = b as u64 * width;
                    [(us_to_s(s), r[i]), (us_to_s((s + width).min(end)), r[i])]
                })
                .collect();
            chart
                .draw_series(LineSeries::new(steps, color.stroke_width(2)))?
                .label(format!("{name} (n = {})", totals[i]))
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(2)));
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

#[cfg(test)]
mod tests {
    use super::rates;
    use crate::algorithm::Mode;
    use crate::checker::check;
    use crate::history::{Event, Op, OpKind};
    use crate::report::view::RunView;

    #[test]
    fn each_outcome_is_counted_per_second_in_the_bucket_it_returned_in() {
        let meta = serde_json::json!({
            "type": "meta", "t_us": 0, "scenario": "hand", "seed": 1, "algorithm": "redlock",
            "nodes": 3, "clients": 2, "ttl_ms": 1_000, "liveness_bound_us": 1_000_000,
        });
        let meta: Event = serde_json::from_value(meta).unwrap();
        let op = |t: u64, c: usize| {
            let mut o = Op::new(t, c, OpKind::Acquire, "L0", Mode::Exclusive);
            o.token = Some(format!("tok{c}-{t}").into());
            o.nodes = Some([0, 1].iter().collect());
            o.valid_until_us = Some(t + 10);
            o
        };
        let mut h = vec![meta];
        // Two ok and one failed in the first 20 ms (one bucket of a 2 s run), one unknown
        // at the end.
        h.push(Event::Invoke(op(1_000, 0)));
        h.push(Event::Ok(op(2_000, 0)));
        h.push(Event::Invoke(op(3_000, 1)));
        h.push(Event::Fail(op(4_000, 1)));
        h.push(Event::Invoke(op(5_000, 0)));
        h.push(Event::Ok(op(6_000, 0)));
        h.push(Event::Invoke(op(1_990_000, 1)));
        h.push(Event::Info(op(1_999_000, 1)));
        let f = check(&h).unwrap();
        let view = RunView::new(&h, &f);
        let (width, r) = rates(&view);
        assert_eq!(width, 20_000, "a 2 s run in at most 150 buckets");
        let per_s = 1e6 / width as f64;
        assert_eq!(r[0], [2.0 * per_s, per_s, 0.0]);
        let last = r.last().unwrap();
        assert_eq!(last[..2], [0.0, 0.0]);
        assert!(
            (last[2] - 1.0 / 0.019).abs() < 1e-9,
            "one in the last 19 ms: {last:?}"
        );
        assert!(r[1..r.len() - 1].iter().all(|b| *b == [0.0; 3]));
    }
}
