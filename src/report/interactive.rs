//! The whole-run timeline on every run page, as an inline SVG a reader can zoom and pan:
//! one row per node (the faults that hit it, and what it did to a lock's key), one row
//! per fault kind (each fault's interval), one row per client (its holds, coloured by
//! mode), and the violations as red bands. It opens on the page's lead finding (shaded)
//! when there is one, else on the whole run. Hovering a hold or a fault shows what it
//! was (a `<title>` tooltip, and a line under the plot), and clicking it goes to its
//! history line in the page's "History lines" section ([`super::lines`]). Nothing is loaded:
//! the page still opens from disk, and without script it shows its opening window.
//!
//! Every drawn element carries its true interval (`data-s`, `data-e`, µs); a few lines
//! of script place them for the window in view. A run with more holds than
//! its [`Budget`] draws those in the finding's window one by one and merges the rest,
//! per client and mode, into bars that say how many holds they stand for.

use super::view::RunView;
use super::words::{esc, fault_sentence, secs, span};
use crate::checker::{Hold, HoldEnd};
use std::collections::BTreeSet;
use std::fmt::Write as _;

const WIDTH: f64 = 1100.0;
const LEFT: f64 = 96.0;
const PLOT: f64 = WIDTH - LEFT - 10.0;
const ROW: f64 = 22.0;
/// How much a timeline draws one by one, and into how many bars it merges the rest: a
/// page's bytes grow with both, and the committed reports have a budget
/// (tests/committed_reports.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Holds drawn one by one (tooltip, link), those in the finding's window first.
    pub holds: usize,
    /// Faults drawn one by one on their kind's row, and on the nodes' rows.
    pub faults: usize,
    /// Node marks, and violation bands, drawn one by one.
    pub marks: usize,
    /// Bars at most per kind of merged element: the merge coarsens until they fit.
    pub bars: usize,
    /// History lines the page's text cites that it quotes (and links), page order.
    pub quoted: usize,
}

impl Budget {
    /// A report of one's own run.
    pub const FULL: Budget = Budget {
        holds: 150,
        faults: 80,
        marks: 80,
        bars: 200,
        quoted: 600,
    };
    /// A committed report (its history cut to what it cites, or not kept).
    pub const COMMITTED: Budget = Budget {
        holds: 25,
        faults: 15,
        marks: 15,
        bars: 30,
        quoted: 40,
    };
}

/// The window a timeline opens on: `band` (the finding's own interval, shaded) inside
/// `from_us..to_us`, and the lock whose holds the finding is about.
pub struct Focus {
    pub lock: String,
    pub from_us: u64,
    pub to_us: u64,
    pub band: (u64, u64),
}

/// What a hold says on hover.
pub fn describe(h: &Hold) -> String {
    let ended = match h.ended_by {
        HoldEnd::Release => "released",
        HoldEnd::Validity => "its validity ran out",
        HoldEnd::Lost => "its library lost it",
        HoldEnd::HistoryEnd => "the history ended",
    };
    let nodes: Vec<String> = h.nodes.iter().map(usize::to_string).collect();
    let mut s = format!(
        "client {} holds {} ({}) from t={} to t={} ({}; {ended}); token {}",
        h.client,
        h.lock,
        super::view::mode_name(h.mode),
        secs(h.start_us),
        secs(h.end_us),
        span(h.end_us - h.start_us),
        h.token.as_ref().map_or("none", |t| t.as_str())
    );
    if let Some(f) = h.fence {
        let _ = write!(s, ", fencing token {f}");
    }
    // A worker's `ok` names no nodes: say none rather than an empty list.
    if !nodes.is_empty() {
        let _ = write!(s, "; granted by nodes {}", nodes.join(","));
    }
    let _ = write!(s, "; history line {}", h.ok_line);
    s
}

/// One thing drawn over an interval, on a row and a lane of it; merged with its
/// neighbours of the same row and lane when a kind has too many.
struct Span<'h> {
    row: usize,
    lane: usize,
    s: u64,
    e: u64,
    /// The history line it links to.
    line: Option<usize>,
    info: Info<'h>,
    color: String,
}

/// What a span says on hover: its text, or a hold's (described only if it is drawn one
/// by one: a worker's hold looks its nodes up in the history).
enum Info<'h> {
    Text(String),
    Hold(&'h Hold),
}

impl Info<'_> {
    fn text(&self, view: &RunView) -> String {
        match self {
            Info::Text(t) => t.clone(),
            // A worker's nodes, which its `ok` does not name, from the node lines.
            Info::Hold(h) if h.nodes.is_empty() => describe(&super::held::with_nodes(view, h)),
            Info::Hold(h) => describe(h),
        }
    }
}

/// The SVG being built.
struct Drawing {
    svg: String,
    /// The window it opens on, µs.
    window: (u64, u64),
    end_us: u64,
    /// Merged bars at most per kind.
    bars: usize,
    /// Row labels, top to bottom.
    labels: Vec<String>,
}

impl Drawing {
    /// One element over `[s, e]` (µs) at `y`, `hgt` high, placed for the opening window;
    /// with a history `line`, a link to it.
    fn bar(&mut self, (s, e): (u64, u64), (y, hgt): (f64, f64), fill: &str, info: &str, line: Option<usize>) {
        let (a, b) = self.window;
        let x = |t: u64| LEFT + (t.clamp(a, b) - a) as f64 / (b - a) as f64 * PLOT;
        // Whole pixels: the script places every element again as the window moves.
        let hidden = if e >= a && s <= b { "" } else { " display=\"none\"" };
        if let Some(l) = line {
            let _ = write!(self.svg, "<a href=\"#L{l}\">");
        }
        let _ = write!(
            self.svg,
            "<rect data-s=\"{s}\" data-e=\"{e}\" x=\"{:.0}\" y=\"{y:.0}\" width=\"{:.0}\" height=\"{hgt:.0}\" fill=\"{fill}\"{hidden}><title>{}</title></rect>",
            x(s),
            (x(e) - x(s)).max(2.0),
            esc(info)
        );
        if line.is_some() {
            self.svg.push_str("</a>");
        }
    }

    /// `spans` drawn one by one up to `max` (those `first` picks before the others), the
    /// rest merged per row and lane into bars that say how many `what` they stand for;
    /// `place` gives a span's `(y, height)` from its row and lane.
    /// The merged bars go first, so that one spanning a hold drawn one by one (the
    /// finding's, between holds merged either side) lies under it, not over it.
    fn spans(
        &mut self,
        view: &RunView,
        mut spans: Vec<Span>,
        max: usize,
        first: impl Fn(&Span) -> bool,
        what: &str,
        place: impl Fn(usize, usize) -> (f64, f64),
    ) {
        let rest = match spans.len() <= max {
            true => Vec::new(),
            false => {
                spans.sort_by_key(|sp| (!first(sp), sp.s));
                spans.split_off(max)
            }
        };
        for m in merge(rest, self.end_us, self.bars) {
            let lines = match (m.first_line, m.last_line) {
                (Some(a), Some(b)) => format!(", lines {a}–{b}"),
                _ => String::new(),
            };
            let info = format!("{}: {} {what} as one bar{lines}", self.labels[m.row], m.count);
            self.bar((m.s, m.e), place(m.row, m.lane), &m.color, &info, None);
        }
        for sp in &spans {
            let info = sp.info.text(view);
            self.bar((sp.s, sp.e), place(sp.row, sp.lane), &sp.color, &info, sp.line);
        }
    }
}

fn rgb(c: plotters::style::RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// The whole-run timeline, opening on `focus` (else on the whole run). Its links go to
/// `#L<n>` anchors the page must quote ([`super::lines`]).
pub fn timeline(view: &RunView, focus: Option<&Focus>, budget: Budget) -> String {
    let end = view.end_us.max(1);
    let (a, b) = focus.map_or((0, end), |f| {
        (
            f.from_us.min(end - 1),
            f.to_us.min(end).max(f.from_us.min(end - 1) + 1),
        )
    });
    let kinds: Vec<&str> = {
        let present: BTreeSet<&str> = view.faults.iter().map(|w| w.fault.kind()).collect();
        present.into_iter().collect()
    };
    let (nodes, kind_row, client_row) = (view.nodes, view.nodes, view.nodes + kinds.len());
    let labels: Vec<String> = (0..nodes)
        .map(|n| format!("node {n}"))
        .chain(kinds.iter().map(|k| format!("{k} faults")))
        .chain((0..view.clients).map(|c| format!("client {c}")))
        .collect();
    let rows = labels.len();
    let height = ROW * rows as f64 + 24.0;
    let mut d = Drawing {
        svg: String::new(),
        window: (a, b),
        end_us: end,
        bars: budget.bars,
        labels,
    };
    let _ = write!(
        d.svg,
        "<figure class=interactive><div class=tlbar><button type=button data-zoom=\"0.5\">+ zoom in</button> <button type=button data-zoom=\"2\">− zoom out</button> <button type=button data-view=\"0 {end}\">whole run</button>{} <span class=tlwin></span></div>\
         <svg xmlns=\"http://www.w3.org/2000/svg\" class=tl width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" data-a=\"{a}\" data-b=\"{b}\" data-end=\"{end}\" data-left=\"{LEFT}\" data-plot=\"{PLOT}\" role=\"img\" aria-label=\"the whole run: nodes, faults and holds over time\">\
         <defs><clipPath id=tlclip><rect x=\"{LEFT}\" y=\"0\" width=\"{PLOT}\" height=\"{height}\"/></clipPath></defs>",
        match focus {
            Some(_) => format!(" <button type=button data-view=\"{a} {b}\">the finding</button>"),
            None => String::new(),
        }
    );
    for i in 0..rows {
        let y = ROW * i as f64;
        let _ = write!(
            d.svg,
            "<text x=\"4\" y=\"{:.1}\" font-size=\"12\" font-family=\"sans-serif\">{}</text><line x1=\"{LEFT}\" x2=\"{WIDTH}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>",
            y + ROW * 0.65,
            esc(&d.labels[i]),
            y + ROW,
            y + ROW
        );
    }
    d.svg.push_str("<g clip-path=\"url(#tlclip)\">");
    if let Some(f) = focus {
        d.bar(
            (f.band.0, f.band.1.max(f.band.0 + 1)),
            (0.0, ROW * rows as f64),
            "rgba(214,39,40,0.15)",
            "the finding's window",
            None,
        );
    }
    let in_focus = |s: u64, e: u64| focus.is_some_and(|f| s < f.to_us && e > f.from_us);
    // Violation bands span every client row: a label of their own for merged ones.
    let every_client = d.labels.len();
    d.labels.push("the clients".into());
    let bands = view.violations().iter().map(|v| Span {
        row: every_client,
        lane: 0,
        s: v.overlap_start_us,
        e: v.overlap_end_us,
        line: None,
        info: Info::Text(format!(
            "violation: clients {} and {} both held {} from t={} to t={}",
            v.first.client,
            v.second.client,
            v.lock,
            secs(v.overlap_start_us),
            secs(v.overlap_end_us)
        )),
        color: "rgba(214,39,40,0.25)".into(),
    });
    let clients_high = ROW * view.clients as f64;
    d.spans(
        view,
        bands.collect(),
        budget.marks,
        |sp| in_focus(sp.s, sp.e),
        "violations",
        |_, _| (ROW * client_row as f64, clients_high),
    );
    // Faults: each on its kind's row, and on each node it hits (a lane per kind).
    let mut on_kinds = Vec::new();
    let mut on_nodes = Vec::new();
    for w in &view.faults {
        let k = kinds.iter().position(|k| *k == w.fault.kind()).unwrap_or(0);
        let color = rgb(super::plots::fault_color(w.fault.kind()));
        let until = w.end_us.unwrap_or(end);
        let info = format!(
            "fault {} ({:?}): {}, from t={} to {}; history line {}",
            w.id,
            w.origin,
            fault_sentence(&w.fault, view.clients, view.deployment),
            secs(w.start_us),
            w.end_us
                .map_or("the end (never healed)".to_string(), |e| format!("t={}", secs(e))),
            w.line
        );
        let span = |row, lane, info: String| Span {
            row,
            lane,
            s: w.start_us,
            e: until,
            line: Some(w.line),
            info: Info::Text(info),
            color: color.clone(),
        };
        for n in super::view::targets(&w.fault)
            .0
            .into_iter()
            .filter(|n| *n < nodes)
        {
            on_nodes.push(span(
                n,
                k,
                format!("node {n}: fault {} ({}), line {}", w.id, w.fault.kind(), w.line),
            ));
        }
        on_kinds.push(span(kind_row + k, 0, info));
    }
    let lane = (ROW - 6.0) / kinds.len().max(1) as f64;
    d.spans(
        view,
        on_kinds,
        budget.faults,
        |sp| in_focus(sp.s, sp.e),
        "faults",
        |row, _| (ROW * row as f64 + 4.0, ROW - 8.0),
    );
    d.spans(
        view,
        on_nodes,
        budget.faults,
        |sp| in_focus(sp.s, sp.e),
        "faults",
        |row, k| (ROW * row as f64 + 3.0 + lane * k as f64, lane),
    );
    let marks = view.node_marks.iter().filter(|m| m.node < nodes).map(|m| {
        let lock = view.locks.get(m.lock as usize).map_or("?", String::as_str);
        use super::view::NodeMark;
        let what = match m.mark {
            NodeMark::Expired => format!("the key of {lock} expired by the node's clock"),
            NodeMark::Lost => format!("restarted without the key of {lock}"),
            NodeMark::Replicated => format!("had the key of {lock} at the failover"),
            NodeMark::Unreplicated { lag_us } => format!(
                "had not received the key of {lock} at the failover (it trailed its master by {})",
                span(lag_us)
            ),
        };
        Span {
            row: m.node,
            lane: 0,
            s: m.t_us,
            e: m.t_us,
            line: None,
            info: Info::Text(format!("node {}: {what}, at t={}", m.node, secs(m.t_us))),
            color: "#000".into(),
        }
    });
    d.spans(
        view,
        marks.collect(),
        budget.marks,
        |sp| in_focus(sp.s, sp.e + 1),
        "key events",
        |row, _| (ROW * row as f64 + 2.0, ROW - 4.0),
    );
    let holds = holds(view, focus).map(|h| Span {
        row: client_row + h.client,
        lane: h.mode as usize,
        s: h.start_us,
        e: h.end_us,
        line: Some(h.ok_line),
        info: Info::Hold(h),
        color: rgb(super::plots::mode_color(&super::view::mode_name(h.mode))),
    });
    d.spans(
        view,
        holds.collect(),
        budget.holds,
        |sp| in_focus(sp.s, sp.e),
        "holds",
        |row, _| (ROW * row as f64 + 4.0, ROW - 8.0),
    );
    d.svg
        .push_str("</g><g class=axis font-size=\"11\" font-family=\"sans-serif\" text-anchor=\"middle\">");
    for i in 0..=5u64 {
        let _ = write!(
            d.svg,
            "<text x=\"{:.1}\" y=\"{:.1}\">t={}</text>",
            (LEFT + PLOT * i as f64 / 5.0).min(WIDTH - 40.0),
            ROW * rows as f64 + 16.0,
            secs(a + (b - a) * i / 5)
        );
    }
    d.svg.push_str(
        "</g></svg><figcaption>The whole run: a row per node (the faults that hit it, a lane per kind; black ticks where it acted on a key), per fault kind, and per client (its holds, coloured by mode; red bands where two holds overlapped). Scroll over it or use the buttons to zoom, drag to pan. Hover a hold or a fault to see what it was; click it for its history line. <span class=opinfo></span></figcaption></figure>\n",
    );
    d.svg.push_str(SCRIPT);
    d.svg
}

/// The holds on the client rows: every lock's but the probe's own (unless the finding
/// is about it).
fn holds<'v>(view: &'v RunView, focus: Option<&'v Focus>) -> impl Iterator<Item = &'v Hold> + 'v {
    let probe = view.probe_locks();
    view.holds()
        .iter()
        .filter(|h| h.client < view.clients)
        .filter(move |h| {
            !probe.iter().any(|p| *p == h.lock.as_str()) || focus.is_some_and(|f| f.lock == h.lock.as_str())
        })
}

/// Spans merged into one bar.
struct Merged {
    row: usize,
    lane: usize,
    color: String,
    s: u64,
    e: u64,
    count: usize,
    first_line: Option<usize>,
    last_line: Option<usize>,
}

/// `spans` merged per row and lane where less than a gap apart, the gap doubling until
/// at most `max` bars remain.
fn merge(mut spans: Vec<Span>, end_us: u64, max: usize) -> Vec<Merged> {
    spans.sort_by_key(|sp| (sp.row, sp.lane, sp.s));
    let mut gap = end_us / 2_000 + 1;
    loop {
        let mut bars: Vec<Merged> = Vec::new();
        for sp in &spans {
            match bars.last_mut() {
                Some(m) if m.row == sp.row && m.lane == sp.lane && sp.s <= m.e.saturating_add(gap) => {
                    m.e = m.e.max(sp.e);
                    m.count += 1;
                    m.first_line = match (m.first_line, sp.line) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    m.last_line = m.last_line.max(sp.line);
                }
                _ => bars.push(Merged {
                    row: sp.row,
                    lane: sp.lane,
                    color: sp.color.clone(),
                    s: sp.s,
                    e: sp.e,
                    count: 1,
                    first_line: sp.line,
                    last_line: sp.line,
                }),
            }
        }
        if bars.len() <= max || gap >= end_us {
            return bars;
        }
        gap *= 2;
    }
}

/// Zoom (buttons, the wheel), pan (drag) and the hover line, for every timeline on the
/// page; each element is placed from its `data-s`/`data-e` for the window in view.
const SCRIPT: &str = r#"<script>document.querySelectorAll('figure.interactive').forEach(function(fig){
var svg=fig.querySelector('svg.tl'),d=svg.dataset,A=+d.a,B=+d.b,E=+d.end,L=+d.left,P=+d.plot,W=+svg.getAttribute('width');
var els=svg.querySelectorAll('[data-s]'),ticks=svg.querySelectorAll('.axis text'),win=fig.querySelector('.tlwin'),info=fig.querySelector('.opinfo');
function s(us){var w=B-A;return (us/1e6).toFixed(w<1e4?6:w<1e7?3:1)+' s';}
function draw(a,b){var w=Math.max(b-a,20);if(w>E){w=E;}a=Math.max(0,Math.min(a,E-w));b=a+w;A=a;B=b;var k=P/w;
els.forEach(function(e){var x=+e.dataset.s,y=+e.dataset.e;if(y<a||x>b){e.setAttribute('display','none');return;}e.removeAttribute('display');
var x0=L+(Math.max(x,a)-a)*k,x1=L+(Math.min(y,b)-a)*k;e.setAttribute('x',x0.toFixed(1));e.setAttribute('width',Math.max(x1-x0,2).toFixed(1));});
ticks.forEach(function(t,i){t.textContent='t='+s(a+w*i/(ticks.length-1));});win.textContent='showing t='+s(a)+' to '+s(b);}
function zoom(at,f){draw(at-(at-A)*f,at+(B-at)*f);}
function timeAt(ev){var r=svg.getBoundingClientRect();return A+((ev.clientX-r.left)*W/r.width-L)/P*(B-A);}
fig.querySelectorAll('button[data-zoom]').forEach(function(b){b.addEventListener('click',function(){zoom((A+B)/2,+b.dataset.zoom);});});
fig.querySelectorAll('button[data-view]').forEach(function(b){b.addEventListener('click',function(){var v=b.dataset.view.split(' ');draw(+v[0],+v[1]);});});
svg.addEventListener('wheel',function(ev){if(!ev.deltaY)return;ev.preventDefault();zoom(timeAt(ev),ev.deltaY<0?0.8:1.25);},{passive:false});
var drag=null,moved=false;svg.addEventListener('mousedown',function(ev){drag={x:ev.clientX,a:A,b:B};moved=false;ev.preventDefault();});
window.addEventListener('mousemove',function(ev){if(!drag)return;var r=svg.getBoundingClientRect(),dx=(ev.clientX-drag.x)*W/r.width;if(Math.abs(dx)>3)moved=true;var dt=dx/P*(drag.b-drag.a);draw(drag.a-dt,drag.b-dt);});
window.addEventListener('mouseup',function(){drag=null;});
svg.addEventListener('click',function(ev){if(moved){ev.preventDefault();moved=false;}},true);
svg.addEventListener('mouseover',function(ev){var t=ev.target.querySelector&&ev.target.querySelector('title');if(t)info.textContent=t.textContent;});
draw(A,B);});</script>
"#;
