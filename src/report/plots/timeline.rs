//! The holder timeline: one row per node and per client over true time.
//!
//! Client rows show holds as bars coloured by mode (exclusive, read, write). Faults are
//! drawn in lanes: each row has one thin lane per fault kind that occurs in the run,
//! coloured by kind, so under a dense random nemesis a reader still sees which kind of
//! fault hit which party and when. A fault is drawn on the rows of the nodes and
//! clients it hits (a link fault aimed at every client on its nodes only, since it says
//! nothing about one client). Clock jumps take no time and are drawn as markers on the
//! row of the node or client whose clock jumped, labelled with the jump when few are in
//! view. Writes the guarded resource accepted although the writer's hold had ended
//! (stale writes) are red crosses on the writer's row; writes it rejected for a stale
//! fencing token are open circles. Violation windows are red bands across all rows; in a
//! zoomed timeline the two holds in focus get a red outline. Bars, lanes and bands
//! narrower than a pixel are merged, so a 10-minute run with 100k holds stays a
//! readable overview. The legend sits to the right of the plot, off the data.
//!
//! One chart is about one lock's holds, or the workload's: a zoomed timeline draws the
//! holds, keys and writes of the lock in focus only, and no timeline draws the probe's
//! own lock (meta `probe_client`) beside the workload's, where its holds would read as
//! holds of the workload's lock.

use super::{
    coalesce, fault_color, mode_color, seconds_label, us_to_s, DrawResult, Figure, FAULT_KINDS, VIOLATION,
};
use crate::checker::{ResourceViolation, Violation};
use crate::fault::Fault;
use crate::report::view::{mode_name, targets, FaultWindow, NodeMark, RunView};
use plotters::coord::Shift;
use plotters::prelude::*;

const WIDTH_PX: u32 = 1400;
/// The legend column to the right of the plot.
const LEGEND_PX: u32 = 230;
/// Width of the plotting area, roughly: the resolution at which bars are merged.
const PLOT_PX: u64 = 1050;
/// Jumps in view up to which each gets a label.
const JUMP_LABELS: usize = 12;
/// Kinds that can hit a client (the rest hit nodes only).
const CLIENT_KINDS: [&str; 5] = ["partition", "delay", "loss", "pause", "clock_rate"];

pub struct Timeline<'a> {
    pub view: &'a RunView<'a>,
    pub from_us: u64,
    pub to_us: u64,
    pub title: String,
    /// The violation whose two holds are outlined.
    pub focus: Option<&'a Violation>,
    /// Whose holds, keys and writes are drawn.
    pub locks: Locks,
}

/// Which locks a timeline draws.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Locks {
    /// This lock only (a zoomed timeline's lock in focus).
    Only(String),
    /// Every lock but these (the probe's own).
    AllBut(Vec<String>),
}

impl Locks {
    pub fn draws(&self, lock: &str) -> bool {
        match self {
            Locks::Only(l) => l == lock,
            Locks::AllBut(out) => !out.iter().any(|l| l == lock),
        }
    }

    /// What the chart leaves out or keeps to, as a clause for its caption: " of L0", or
    /// "; the probe's own lock L1 is left out" (empty when it draws every lock).
    pub fn clause(&self) -> String {
        match self {
            Locks::Only(l) => format!(" of {l}"),
            Locks::AllBut(out) if out.is_empty() => String::new(),
            Locks::AllBut(out) => format!(
                "; the probe's own {} ({}) {} left out",
                if out.len() == 1 { "lock" } else { "locks" },
                out.join(", "),
                if out.len() == 1 { "is" } else { "are" }
            ),
        }
    }
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
            locks: Locks::AllBut(view.probe_locks()),
        }
    }

    /// The window around one violation: both holds from the first acquire to the later
    /// end, with a margin on each side.
    pub fn around(view: &'a RunView<'a>, v: &'a Violation) -> Timeline<'a> {
        let start = v.first.start_us.min(v.second.start_us);
        let end = v.first.end_us.max(v.second.end_us);
        Timeline {
            focus: Some(v),
            locks: Locks::Only(v.lock.to_string()),
            ..Timeline::window(
                view,
                start,
                end,
                format!(
                    "Holder timeline around the longest violation: clients {} and {} on {}",
                    v.first.client, v.second.client, v.lock
                ),
            )
        }
    }

    /// The window around a stale write: from the writer's last hold (or the other
    /// holder's start) to the write.
    pub fn around_write(view: &'a RunView<'a>, rv: &ResourceViolation) -> Timeline<'a> {
        let writer_start = view
            .holds()
            .iter()
            .filter(|h| h.client == rv.client && h.lock == rv.lock && h.token.as_deref() == Some(&rv.token))
            .filter(|h| h.start_us <= rv.write_us)
            .map(|h| h.start_us)
            .max();
        let start = writer_start.unwrap_or(rv.holder.start_us).min(rv.holder.start_us);
        Timeline {
            locks: Locks::Only(rv.lock.to_string()),
            ..Timeline::window(
                view,
                start,
                rv.write_us.max(start + 1),
                format!(
                    "Holder timeline around the worst stale write: client {} writes to {}, {}",
                    rv.client,
                    rv.lock,
                    crate::report::stale::against(rv)
                ),
            )
        }
    }

    /// The window around a fault's start, for a run without violations: the fault's
    /// span (at least two ttls, at most ten seconds) with a margin before it.
    pub fn around_fault(view: &'a RunView<'a>, w: &FaultWindow) -> Timeline<'a> {
        let ttl_us = view.meta.as_ref().map_or(1_000_000, |m| m.ttl_ms * 1_000);
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
            locks: Locks::AllBut(view.probe_locks()),
        }
    }

    /// The window of a finding with no overlap of its own (a fencing token that went
    /// backwards, a wait too long): `[start, end]` with margins, `lock`'s holds only
    /// (every lock's for none).
    pub fn around_span(
        view: &'a RunView<'a>,
        lock: &str,
        start: u64,
        end: u64,
        title: String,
    ) -> Timeline<'a> {
        Timeline {
            locks: match lock.is_empty() {
                true => Locks::AllBut(view.probe_locks()),
                false => Locks::Only(lock.to_string()),
            },
            ..Timeline::window(view, start, end.max(start + 1), title)
        }
    }

    /// `[start, end]` with a quarter of its length as margin on each side.
    fn window(view: &'a RunView<'a>, start: u64, end: u64, title: String) -> Timeline<'a> {
        let end = end.min(view.end_us.max(start + 1)).max(start + 1);
        let margin = ((end - start) / 4).max(1_000);
        Timeline {
            view,
            from_us: start.saturating_sub(margin),
            to_us: end + margin,
            title,
            focus: None,
            locks: Locks::AllBut(view.probe_locks()),
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

    /// The kinds with a lane on node rows and on client rows: those that occur (clock
    /// jumps are markers, not lanes).
    fn lanes(&self) -> (Vec<&'static str>, Vec<&'static str>) {
        let present = |k: &str| self.view.faults.iter().any(|w| w.fault.kind() == k);
        let node: Vec<&'static str> = FAULT_KINDS
            .iter()
            .map(|(k, _)| *k)
            .filter(|&k| k != "clock_jump" && present(k))
            .collect();
        let client = node
            .iter()
            .copied()
            .filter(|k| CLIENT_KINDS.contains(k))
            .collect();
        (node, client)
    }

    /// The clock jumps in view: (row, time, by how much), one per row the jump hit.
    fn jumps(&self) -> Vec<(usize, u64, i64)> {
        let mut out = Vec::new();
        for w in &self.view.faults {
            if let Fault::ClockJump { by_us, .. } = w.fault {
                if self.clip(w.start_us, w.start_us + 1).is_some() {
                    out.extend(
                        self.rows_hit(&w.fault)
                            .into_iter()
                            .map(|r| (r, w.start_us, by_us)),
                    );
                }
            }
        }
        out
    }

    /// The node marks in view: (row, time, mark), one per row, kind and pixel column
    /// (a long run expires keys millions of times). A lag span is kept whenever its end
    /// is in view.
    fn node_marks(&self) -> Vec<(usize, u64, NodeMark)> {
        let res_us = ((self.to_us - self.from_us) / PLOT_PX).max(1);
        let mut seen = std::collections::BTreeSet::new();
        self.view
            .node_marks
            .iter()
            .filter(|m| m.node < self.view.nodes && self.clip(m.t_us, m.t_us + 1).is_some())
            .filter(|m| {
                self.view
                    .locks
                    .get(m.lock as usize)
                    .is_none_or(|l| self.locks.draws(l))
            })
            .filter(|m| {
                let kind = match m.mark {
                    NodeMark::Expired => 0,
                    NodeMark::Lost => 1,
                    NodeMark::Replicated => 2,
                    NodeMark::Unreplicated { .. } => 3,
                };
                seen.insert((m.node, kind, (m.t_us - self.from_us) / res_us))
            })
            .map(|m| (m.node, m.t_us, m.mark))
            .collect()
    }

    /// Where things go inside a row, relative to its centre.
    fn layout(&self) -> Layout {
        let (_, client) = self.lanes();
        let jumps = self.jumps().len();
        // Labelled jumps get a strip at the top of each row.
        let labels = jumps > 0 && jumps <= JUMP_LABELS;
        let top = if labels { 0.14 } else { 0.44 };
        let (bar, client_lanes) = match (client.is_empty(), labels) {
            (true, false) => ((-0.32, 0.32), (0.0, 0.0)),
            (true, true) => ((-0.40, top), (0.0, 0.0)),
            (false, false) => ((0.0, top), (-0.46, -0.04)),
            (false, true) => ((-0.14, top), (-0.46, -0.18)),
        };
        Layout {
            bar,
            client_lanes,
            node_lanes: (-0.44, top),
            labels,
        }
    }

    fn row_px(&self) -> u32 {
        let (node, client) = self.lanes();
        let base = if node.is_empty() {
            22
        } else {
            (26 + 5 * node.len().max(2 * client.len()) as u32).min(60)
        };
        if self.layout().labels {
            base + 16
        } else {
            base
        }
    }

    /// The rows a fault is drawn on: its nodes, and its clients unless it names them all.
    fn rows_hit(&self, fault: &Fault) -> Vec<usize> {
        let (nodes, clients) = targets(fault);
        let mut rows: Vec<usize> = nodes.into_iter().filter(|&n| n < self.view.nodes).collect();
        if clients.len() < self.view.clients || !is_link(fault) {
            rows.extend(
                clients
                    .into_iter()
                    .filter(|&c| c < self.view.clients)
                    .map(|c| self.view.nodes + c),
            );
        }
        rows
    }

    /// The vertical span `(bottom, top)` of `kind`'s lane on `row`, if the row has one.
    fn lane(
        &self,
        row: usize,
        kind: &str,
        lanes: &(Vec<&str>, Vec<&str>),
        layout: &Layout,
    ) -> Option<(f64, f64)> {
        let y = self.y(row);
        let (list, (bottom, top)) = if row < self.view.nodes {
            (&lanes.0, layout.node_lanes)
        } else {
            (&lanes.1, layout.client_lanes)
        };
        let (bottom, top) = (y + bottom, y + top);
        let i = list.iter().position(|k| *k == kind)?;
        // Thin lanes even when few kinds occur, so the violation band shows between them.
        let h = ((top - bottom) / list.len() as f64).min(0.22);
        let t = top - i as f64 * h;
        Some((t - h * 0.92, t))
    }

    /// The legend entries: what is drawn, in drawing order.
    fn legend(&self) -> Vec<(Swatch, String)> {
        let view = self.view;
        let mut out = Vec::new();
        for mode in view.modes() {
            out.push((Swatch::Bar(mode_color(&mode)), format!("{mode} hold")));
        }
        let (lanes, _) = self.lanes();
        for k in lanes {
            out.push((Swatch::Lane(fault_color(k)), k.replace('_', " ")));
        }
        if view.faults.iter().any(|w| w.fault.kind() == "clock_jump") {
            out.push((Swatch::Jump, "clock jump".into()));
        }
        let marks = self.node_marks();
        let has = |f: &dyn Fn(&NodeMark) -> bool| marks.iter().any(|m| f(&m.2));
        if has(&|m| *m == NodeMark::Expired) {
            out.push((Swatch::Expired, "key expired on the node".into()));
        }
        if has(&|m| *m == NodeMark::Lost) {
            out.push((Swatch::Lost, "key lost at restart".into()));
        }
        if has(&|m| matches!(m, NodeMark::Unreplicated { .. })) {
            out.push((Swatch::Lag, "replication lag: key not on the replica".into()));
        }
        if has(&|m| *m == NodeMark::Replicated) {
            out.push((Swatch::Replicated, "key replicated at failover".into()));
        }
        if !view.violations().is_empty() {
            out.push((Swatch::Band, "violation (two holders)".into()));
        }
        if self.focus.is_some() {
            out.push((Swatch::Outline, "the two holds in focus".into()));
        }
        if !view.worst.stale.is_empty() {
            out.push((Swatch::Stale, "stale write accepted".into()));
        }
        if view.writes.iter().any(|w| !w.accepted) {
            out.push((Swatch::Rejected, "write rejected (fencing)".into()));
        }
        if view.heal_drawn().is_some_and(|h| self.clip(h, h + 1).is_some()) {
            out.push((Swatch::Heal, "heal: faults end".into()));
        }
        out
    }
}

/// Whether a fault acts on client↔node links (partition, delay, loss).
/// What a fault lane on `row` says when zoomed in: whom a partition cut the row from,
/// the rate of a clock. Rows below `nodes` are nodes, the rest clients.
/// At most this many lane labels are drawn.
const LANE_LABELS: usize = 24;

fn lane_label(fault: &Fault, row: usize, nodes: usize) -> Option<String> {
    let names = |what: &str, ids: &[usize]| {
        let list: Vec<String> = ids.iter().map(usize::to_string).collect();
        format!(
            "{what}{} {}",
            if ids.len() == 1 { "" } else { "s" },
            list.join(",")
        )
    };
    match fault {
        Fault::Partition {
            nodes: cut_nodes,
            clients,
            ..
        } => Some(if row < nodes {
            format!("cut from {}", names("client", clients))
        } else {
            format!("cut from {}", names("node", cut_nodes))
        }),
        Fault::ClockRate { rate, .. } => Some(format!("clock at {rate}×")),
        _ => None,
    }
}

fn is_link(fault: &Fault) -> bool {
    matches!(
        fault,
        Fault::Partition { .. } | Fault::Delay { .. } | Fault::Loss { .. }
    )
}

/// Vertical spans inside a row, relative to its centre (rows are 1 apart).
struct Layout {
    /// The hold bars of client rows.
    bar: (f64, f64),
    /// The fault lanes of client rows and of node rows.
    client_lanes: (f64, f64),
    node_lanes: (f64, f64),
    /// Whether clock jumps are labelled (a strip at the top of each row).
    labels: bool,
}

/// How a legend entry is drawn.
enum Swatch {
    Bar(RGBColor),
    Lane(RGBColor),
    Jump,
    Band,
    Outline,
    Stale,
    Rejected,
    Heal,
    Expired,
    Lost,
    Lag,
    Replicated,
}

/// The colours of the node marks.
const EXPIRED: RGBColor = RGBColor(128, 0, 0);
const LOST: RGBColor = RGBColor(0, 0, 0);
const LAG: RGBColor = RGBColor(102, 51, 153);
const REPLICATED: RGBColor = RGBColor(0, 128, 64);

/// A node mark at pixel `(x, y)`: a downward triangle for an expiry, a cross for a key
/// lost, a bar end for the lag, a tick for a key replicated (shapes apart, not only
/// colours).
fn node_mark_shape<DB: DrawingBackend>(
    swatch: &Swatch,
    (x, y): (i32, i32),
) -> Option<DynElement<'static, DB, (i32, i32)>>
where
    DB::ErrorType: 'static,
{
    Some(match swatch {
        Swatch::Expired => {
            Polygon::new(vec![(x - 5, y - 5), (x + 5, y - 5), (x, y + 4)], EXPIRED.filled()).into_dyn()
        }
        Swatch::Lost => Cross::new((x, y), 5, LOST.stroke_width(2)).into_dyn(),
        Swatch::Lag => PathElement::new(vec![(x - 9, y), (x + 9, y)], LAG.stroke_width(4)).into_dyn(),
        Swatch::Replicated => PathElement::new(
            vec![(x - 4, y), (x - 1, y + 4), (x + 5, y - 5)],
            REPLICATED.stroke_width(2),
        )
        .into_dyn(),
        _ => return None,
    })
}

fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, entries: &[(Swatch, String)]) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let jump = fault_color("clock_jump");
    for (i, (swatch, label)) in entries.iter().enumerate() {
        let (x, y) = (10, 48 + 20 * i as i32);
        match swatch {
            Swatch::Bar(c) => area.draw(&Rectangle::new([(x, y - 5), (x + 18, y + 5)], c.filled()))?,
            Swatch::Lane(c) => area.draw(&Rectangle::new(
                [(x, y - 3), (x + 18, y + 3)],
                c.mix(0.75).filled(),
            ))?,
            Swatch::Jump => area.draw(&PathElement::new(
                vec![(x + 9, y - 8), (x + 9, y + 8)],
                jump.stroke_width(3),
            ))?,
            Swatch::Band => area.draw(&Rectangle::new(
                [(x, y - 7), (x + 18, y + 7)],
                VIOLATION.mix(0.25).filled(),
            ))?,
            Swatch::Outline => area.draw(&Rectangle::new(
                [(x, y - 6), (x + 18, y + 6)],
                VIOLATION.stroke_width(2),
            ))?,
            Swatch::Stale => area.draw(&Cross::new((x + 9, y), 6, VIOLATION.stroke_width(3)))?,
            Swatch::Rejected => area.draw(&Circle::new((x + 9, y), 5, BLACK.stroke_width(2)))?,
            Swatch::Heal => area.draw(&PathElement::new(
                vec![(x, y), (x + 18, y)],
                BLACK.mix(0.6).stroke_width(2),
            ))?,
            other => {
                if let Some(shape) = node_mark_shape::<DB>(other, (x + 9, y)) {
                    area.draw(&shape)?;
                }
            }
        }
        area.draw(&Text::new(
            label.clone(),
            (x + 26, y - 7),
            ("sans-serif", 13).into_font(),
        ))?;
    }
    Ok(())
}

impl Figure for Timeline<'_> {
    fn size(&self) -> (u32, u32) {
        let h = 100 + self.row_px() * self.rows() as u32;
        let legend = 70 + 20 * self.legend().len() as u32;
        (WIDTH_PX, h.max(legend).clamp(260, 2400))
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let (plot_area, legend_area) = root.split_horizontally(WIDTH_PX - LEGEND_PX);
        let rows = self.rows().max(1);
        let (nodes, view) = (self.view.nodes, self.view);
        let res_us = ((self.to_us - self.from_us) / PLOT_PX).max(1);
        let top = rows as f64 - 0.5;
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(&self.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(us_to_s(self.from_us)..us_to_s(self.to_us), -0.5..top)?;
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
            // One light line between labels, not ten: the grid still reads and the SVG stays small.
            .max_light_lines(1)
            .disable_y_mesh()
            .y_labels(rows + 1)
            .y_label_formatter(&label)
            .x_label_formatter(&seconds_label(self.to_us - self.from_us))
            .x_desc("true time (s)")
            .label_style(("sans-serif", 13))
            .draw()?;

        // Row separators, so lanes read as belonging to their row.
        chart.draw_series((1..rows).map(|r| {
            let y = r as f64 - 0.5;
            PathElement::new(
                vec![(us_to_s(self.from_us), y), (us_to_s(self.to_us), y)],
                BLACK.mix(0.12),
            )
        }))?;

        // Violation windows, merged below a pixel, behind everything.
        let mut windows: Vec<(u64, u64)> = view
            .violations()
            .iter()
            .filter(|v| self.locks.draws(&v.lock))
            .filter_map(|v| self.clip(v.overlap_start_us, v.overlap_end_us))
            .collect();
        windows.sort_unstable();
        chart.draw_series(coalesce(windows, res_us).into_iter().map(|(s, e)| {
            Rectangle::new(
                [(us_to_s(s), -0.5), (us_to_s(e), top)],
                VIOLATION.mix(0.2).filled(),
            )
        }))?;

        // Faults in lanes: per row and kind, merged below a pixel.
        let lanes = self.lanes();
        let layout = self.layout();
        let mut per_lane: std::collections::BTreeMap<(usize, &str), Vec<(u64, u64)>> = Default::default();
        // Zoomed in, a lane says what hit the row: whom a partition cut it from, the rate
        // of a clock.
        let mut lane_labels: Vec<(usize, &str, u64, String)> = Vec::new();
        for w in &view.faults {
            let kind = w.fault.kind();
            if kind == "clock_jump" {
                continue;
            }
            let Some(interval) = self.clip(w.start_us, w.end_us.unwrap_or(view.end_us)) else {
                continue;
            };
            for r in self.rows_hit(&w.fault) {
                per_lane.entry((r, kind)).or_default().push(interval);
                if let Some(text) = lane_label(&w.fault, r, nodes) {
                    lane_labels.push((r, kind, interval.0, text));
                }
            }
        }
        let mut shades = Vec::new();
        for ((row, kind), mut spans) in per_lane {
            let Some((lo, hi)) = self.lane(row, kind, &lanes, &layout) else {
                continue;
            };
            spans.sort_unstable();
            let color = fault_color(kind).mix(0.75);
            shades.extend(
                coalesce(spans, res_us)
                    .into_iter()
                    .map(|(s, e)| Rectangle::new([(us_to_s(s), lo), (us_to_s(e), hi)], color.filled())),
            );
        }
        chart.draw_series(shades)?;
        // One label per lane and text, at the first interval that carries it; only when
        // few (a zoomed view), so an overview stays clean.
        lane_labels.sort_by(|a, b| (a.0, a.1, &a.3, a.2).cmp(&(b.0, b.1, &b.3, b.2)));
        lane_labels.dedup_by(|a, b| (a.0, a.1, &a.3) == (b.0, b.1, &b.3));
        if lane_labels.len() > LANE_LABELS {
            // Too many to read: a clock's rate still says what its lane means.
            lane_labels.retain(|l| l.1 == "clock_rate");
        }
        if lane_labels.len() <= LANE_LABELS {
            let texts: Vec<_> = lane_labels
                .iter()
                .filter_map(|(row, kind, start, text)| {
                    let (lo, _) = self.lane(*row, kind, &lanes, &layout)?;
                    let at = (us_to_s(*start), lo);
                    Some(
                        EmptyElement::at(at)
                            + Text::new(
                                text.clone(),
                                (3, -1),
                                ("sans-serif", 10).into_font().color(&BLACK.mix(0.8)),
                            ),
                    )
                })
                .collect();
            chart.draw_series(texts)?;
        }

        // Holds, per mode and client, merged below a pixel.
        let (bar_lo, bar_hi) = layout.bar;
        for mode in view.modes() {
            let color = mode_color(&mode);
            let mut bars = Vec::new();
            for c in 0..view.clients {
                let mut mine: Vec<(u64, u64)> = view
                    .holds()
                    .iter()
                    .filter(|h| h.client == c && mode_name(h.mode) == mode && self.locks.draws(&h.lock))
                    .filter_map(|h| self.clip(h.start_us, h.end_us))
                    .collect();
                mine.sort_unstable();
                let y = self.y(nodes + c);
                bars.extend(coalesce(mine, res_us).into_iter().map(|(s, e)| {
                    Rectangle::new(
                        [(us_to_s(s), y + bar_lo), (us_to_s(e), y + bar_hi)],
                        color.filled(),
                    )
                }));
            }
            chart.draw_series(bars)?;
        }

        if let Some(v) = self.focus {
            let outlines = [&v.first, &v.second].into_iter().filter_map(|h| {
                let (s, e) = self.clip(h.start_us, h.end_us)?;
                let y = self.y(nodes + h.client);
                Some(Rectangle::new(
                    [(us_to_s(s), y + bar_lo - 0.05), (us_to_s(e), y + bar_hi + 0.04)],
                    VIOLATION.stroke_width(2),
                ))
            });
            chart.draw_series(outlines)?;
        }

        // Clock jumps: a mark across the row, labelled when few are in view.
        let jump = fault_color("clock_jump");
        let jumps = self.jumps();
        chart.draw_series(jumps.iter().map(|&(r, t, _)| {
            let y = self.y(r);
            PathElement::new(
                vec![(us_to_s(t), y - 0.48), (us_to_s(t), y + 0.48)],
                jump.stroke_width(3),
            )
        }))?;
        if layout.labels {
            chart.draw_series(jumps.iter().map(|&(r, t, by_us)| {
                let text = format!(
                    "{}{:.3} s",
                    if by_us >= 0 { "+" } else { "-" },
                    by_us.unsigned_abs() as f64 / 1e6
                );
                EmptyElement::at((us_to_s(t), self.y(r) + 0.49))
                    + Text::new(text, (5, 0), ("sans-serif", 11).into_font().color(&jump))
            }))?;
        }

        // What the nodes did to the keys: expiries, keys lost at a restart, replication
        // at a failover (the lag as a bar ending at the failover), near the top of the row.
        let marks = self.node_marks();
        chart.draw_series(marks.iter().filter_map(|&(node, t, mark)| {
            let NodeMark::Unreplicated { lag_us } = mark else {
                return None;
            };
            let (s, e) = self.clip(t.saturating_sub(lag_us), t + 1)?;
            let y = self.y(node) + 0.36;
            Some(Rectangle::new(
                [(us_to_s(s), y - 0.05), (us_to_s(e), y + 0.05)],
                LAG.filled(),
            ))
        }))?;
        chart.draw_series(marks.iter().filter_map(|&(node, t, mark)| {
            let swatch = match mark {
                NodeMark::Expired => Swatch::Expired,
                NodeMark::Lost => Swatch::Lost,
                NodeMark::Replicated => Swatch::Replicated,
                NodeMark::Unreplicated { .. } => return None,
            };
            Some(EmptyElement::at((us_to_s(t), self.y(node) + 0.3)) + node_mark_shape::<DB>(&swatch, (0, 0))?)
        }))?;

        // Writes: stale ones the resource accepted, and those fencing rejected.
        let client_y = |c: usize| self.y(nodes + c) + (bar_lo + bar_hi) / 2.0;
        let stale = view
            .findings
            .resource_violations
            .iter()
            .filter(|rv| rv.client < view.clients && self.clip(rv.write_us, rv.write_us + 1).is_some())
            .filter(|rv| self.locks.draws(&rv.lock));
        chart.draw_series(stale.map(|rv| {
            Cross::new(
                (us_to_s(rv.write_us), client_y(rv.client)),
                7,
                VIOLATION.stroke_width(3),
            )
        }))?;
        let rejected = view
            .writes
            .iter()
            .filter(|w| !w.accepted && w.client < view.clients && self.clip(w.t_us, w.t_us + 1).is_some())
            .filter(|w| self.locks.draws(&w.lock));
        chart.draw_series(
            rejected.map(|w| Circle::new((us_to_s(w.t_us), client_y(w.client)), 5, BLACK.stroke_width(2))),
        )?;

        if let Some(heal) = view.heal_drawn().and_then(|h| self.clip(h, h + 1)) {
            let x = us_to_s(heal.0);
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, -0.5), (x, top)],
                BLACK.mix(0.6).stroke_width(2),
            )))?;
        }
        draw_legend(&legend_area, &self.legend())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checker::check;
    use crate::history::{Event, FaultAction, FaultEvent};

    fn fault(id: usize, f: serde_json::Value) -> Event {
        Event::Fault(FaultEvent {
            t_us: 10 + id as u64,
            id,
            action: FaultAction::Start,
            origin: crate::fault::Origin::Script,
            fault: serde_json::from_value(f).unwrap(),
        })
    }

    #[test]
    fn faults_go_to_the_rows_they_hit_in_separate_lanes() {
        let meta: crate::history::Meta = serde_json::from_value(serde_json::json!({
            "t_us": 0, "scenario": "t", "seed": 1, "algorithm": "redlock", "nodes": 3,
            "clients": 2, "ttl_ms": 1_000, "liveness_bound_us": 1,
        }))
        .unwrap();
        let h = [
            Event::Meta(meta),
            fault(
                0,
                serde_json::json!({"kind": "partition", "nodes": [1], "clients": [0, 1]}),
            ),
            fault(
                1,
                serde_json::json!({"kind": "partition", "nodes": [2], "clients": [1]}),
            ),
            fault(2, serde_json::json!({"kind": "pause", "client": 0})),
            fault(3, serde_json::json!({"kind": "crash", "node": 1})),
        ];
        let f = check(&h).unwrap();
        let view = RunView::new(&h, &f);
        let t = Timeline::overview(&view);
        let rows: Vec<Vec<usize>> = view.faults.iter().map(|w| t.rows_hit(&w.fault)).collect();
        // Rows: nodes 0-2, then clients 0-1 as rows 3-4.
        assert_eq!(
            rows,
            [vec![1], vec![2, 4], vec![3], vec![1]],
            "a cut from every client stays on its nodes"
        );
        let lanes = t.lanes();
        assert_eq!(
            lanes,
            (vec!["partition", "crash", "pause"], vec!["partition", "pause"])
        );
        let layout = t.layout();
        let on_node_1: Vec<(f64, f64)> = ["partition", "crash", "pause"]
            .iter()
            .filter_map(|k| t.lane(1, k, &lanes, &layout))
            .collect();
        assert_eq!(on_node_1.len(), 3);
        for w in on_node_1.windows(2) {
            assert!(w[1].1 <= w[0].0, "lanes do not overlap: {on_node_1:?}");
        }
        let (client_pause, bar) = (t.lane(3, "pause", &lanes, &layout).unwrap(), layout.bar);
        assert!(
            client_pause.1 <= t.y(3) + bar.0,
            "client lanes sit under the hold bar"
        );
        assert_eq!(
            t.lane(3, "crash", &lanes, &layout),
            None,
            "no crash lane on a client row"
        );
    }
}
