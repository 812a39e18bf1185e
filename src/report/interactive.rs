//! The interactive timeline on a run page: the holds around the first finding as an
//! inline SVG, one row per client, where hovering a hold shows its client, lock, token,
//! fencing token, times, how it ended and the history line of its acquisition (a
//! `<title>` tooltip, and a line under the plot set by a few lines of script). Nothing
//! is loaded: the page still opens from disk. Only the finding's lock is drawn: the
//! probe's holds of its own lock are not holds of it.

use super::view::RunView;
use super::words::esc;
use super::words::{secs, span};
use crate::checker::{Hold, HoldEnd};
use std::fmt::Write as _;

const WIDTH: f64 = 1100.0;
const LEFT: f64 = 70.0;
const ROW: f64 = 24.0;
/// At most this many holds are drawn (the window is short; this bounds a pathological one).
const MAX_HOLDS: usize = 2_000;

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

/// The interactive timeline of the holds of `lock` in `[from_us, to_us)`, with `band`
/// (the finding's window) shaded red.
pub fn timeline(view: &RunView, lock: &str, from_us: u64, to_us: u64, band: (u64, u64)) -> String {
    let to_us = to_us.max(from_us + 1);
    let x = |t: u64| {
        LEFT + (t.clamp(from_us, to_us) - from_us) as f64 / (to_us - from_us) as f64 * (WIDTH - LEFT - 10.0)
    };
    let height = ROW * view.clients as f64 + 30.0;
    let mut h = format!(
        "<figure class=interactive><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"holds around the finding\">"
    );
    let _ = write!(
        h,
        "<rect x=\"{:.1}\" y=\"0\" width=\"{:.1}\" height=\"{:.1}\" fill=\"#d62728\" fill-opacity=\"0.18\"/>",
        x(band.0),
        (x(band.1) - x(band.0)).max(1.0),
        ROW * view.clients as f64
    );
    for c in 0..view.clients {
        let y = ROW * c as f64;
        let _ = write!(
            h,
            "<text x=\"4\" y=\"{:.1}\" font-size=\"12\" font-family=\"sans-serif\">client {c}</text><line x1=\"{LEFT}\" x2=\"{WIDTH}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/>",
            y + ROW * 0.65,
            y + ROW,
            y + ROW
        );
    }
    let shown = view
        .holds()
        .iter()
        .filter(|hold| hold.client < view.clients && hold.start_us < to_us && hold.end_us > from_us)
        .filter(|hold| hold.lock == lock)
        .take(MAX_HOLDS);
    for hold in shown {
        // A worker's nodes, which its `ok` does not name, from the node lines.
        let seen;
        let hold = if hold.nodes.is_empty() {
            seen = super::held::with_nodes(view, hold);
            &seen
        } else {
            hold
        };
        let (x0, x1) = (x(hold.start_us), x(hold.end_us));
        let c = super::plots::mode_color(&super::view::mode_name(hold.mode));
        let info = esc(&describe(hold));
        let _ = write!(
            h,
            "<g class=op data-info=\"{info}\"><title>{info}</title><rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"rgb({},{},{})\"/></g>",
            ROW * hold.client as f64 + 4.0,
            (x1 - x0).max(2.0),
            ROW - 8.0,
            c.0,
            c.1,
            c.2
        );
    }
    let axis_y = ROW * view.clients as f64 + 18.0;
    for i in 0..=4u64 {
        let t = from_us + (to_us - from_us) * i / 4;
        let _ = write!(
            h,
            "<text x=\"{:.1}\" y=\"{axis_y:.1}\" font-size=\"11\" font-family=\"sans-serif\" text-anchor=\"middle\">t={}</text>",
            x(t).min(WIDTH - 40.0),
            secs(t)
        );
    }
    h.push_str(
        "</svg><figcaption>Interactive: hover a hold to see its client, lock, token, times, how it ended and its history line. <span id=opinfo class=opinfo></span></figcaption></figure>\n\
         <script>document.querySelectorAll('.interactive .op').forEach(function(g){g.addEventListener('mouseenter',function(){document.getElementById('opinfo').textContent=g.getAttribute('data-info');});});</script>\n",
    );
    h
}
