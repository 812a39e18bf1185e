//! The first screen of three unsafe run pages, opened in headless Chromium from disk
//! (issue 23): the banner names the anomaly and the two holders, the first 1,000 px of
//! the page hold the zoomed timeline and the start of the story, and hovering a hold
//! of the interactive whole-run timeline shows its history line, which is the line of
//! history.jsonl where that hold was acquired; clicking it leads to that line quoted on
//! the page, and its zoom buttons move the window. Also: reports/index.html reaches every
//! committed report folder by its links.
//!
//! The reports are generated here, on the simulator, from shipped scenarios. Needs
//! Debian's `chromium` (`./test` installs it), or LOCKSTORM_CHROMIUM.

use std::collections::{BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The window the page is laid out in: a laptop screen.
const WINDOW: (u32, u32) = (1280, 1000);

fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("LOCKSTORM_CHROMIUM") {
        return p.into();
    }
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        if let Ok(out) = Command::new("which").arg(name).output() {
            if out.status.success() {
                return PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            }
        }
    }
    panic!(
        "no headless browser found: install it with `apt-get update && apt-get install -y chromium` \
         (`./test` does), or set LOCKSTORM_CHROMIUM to a Chromium binary."
    );
}

/// Runs in the page once everything (the plots included) has loaded: where the banner,
/// the first timeline and the story are laid out, and what the tooltip line says after
/// a mouse enters the first operation of the interactive timeline.
const PROBE: &str = r#"<script>
window.addEventListener('load', function () {
  function box(el) {
    if (!el) return null;
    var r = el.getBoundingClientRect();
    return { top: r.top + window.scrollY, bottom: r.bottom + window.scrollY, height: r.height };
  }
  var banner = document.getElementById('verdict');
  var img = document.querySelector('figure img');
  // The first hold the whole-run timeline draws one by one (a link to its line).
  var op = null;
  document.querySelectorAll('.interactive a > rect').forEach(function (r) {
    var t = r.querySelector('title').textContent;
    if (!op && t.indexOf('client ') === 0 && t.indexOf(' holds ') > 0) op = r;
  });
  var info = document.querySelector('.interactive .opinfo');
  var before = info ? info.textContent : null;
  if (op) op.dispatchEvent(new MouseEvent('mouseover', { bubbles: true }));
  var tooltip = info ? info.textContent : null;
  // Zoom in, then the whole run: the window and the hold's width follow.
  var win = document.querySelector('.interactive .tlwin');
  var zoom = {
    opening: win ? win.textContent : null,
    width: op ? +op.getAttribute('width') : null
  };
  var zin = document.querySelector('.interactive button[data-zoom="0.5"]');
  if (zin) zin.click();
  zoom.zoomed = win ? win.textContent : null;
  zoom.zoomed_width = op ? +op.getAttribute('width') : null;
  var whole = document.querySelector('.interactive button[data-view^="0 "]');
  if (whole) whole.click();
  zoom.whole = win ? win.textContent : null;
  // The hold's link, and the line it leads to on the page.
  var href = op && op.parentNode.getAttribute('href');
  var target = href ? document.getElementById(href.slice(1)) : null;
  var out = {
    banner: banner ? banner.textContent : null,
    first_figure: img ? img.getAttribute('src') : null,
    figure: box(img),
    figure_loaded: img ? img.complete && img.naturalWidth > 0 : false,
    story: box(document.querySelector('ol.steps')),
    story_first_step: box(document.querySelector('ol.steps li')),
    first_table: box(document.querySelector('table')),
    op_info: op ? op.querySelector('title').textContent : null,
    tooltip_before: before,
    tooltip: tooltip,
    zoom: zoom,
    href: href,
    target: target ? target.textContent : null
  };
  var p = document.createElement('pre');
  p.id = 'lockstorm-probe';
  p.textContent = JSON.stringify(out);
  document.body.appendChild(p);
});
</script>"#;

/// Opens `page` (with [`PROBE`] added to its head) and returns what the probe found.
fn probe(page: &Path) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();
    let probed = page.with_file_name("probe-first-screen.html");
    std::fs::write(&probed, html.replacen("<head>", &format!("<head>{PROBE}"), 1)).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", probed.canonicalize().unwrap().display()))
        .output()
        .expect("run the headless browser");
    std::fs::remove_file(&probed).unwrap();
    assert!(
        out.status.success(),
        "chromium: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let tag = "<pre id=\"lockstorm-probe\">";
    let start = dom
        .find(tag)
        .unwrap_or_else(|| panic!("the probe never ran in {}", page.display()))
        + tag.len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("probe output {json}: {e}"))
}

/// Runs a shipped scenario on the simulator into `out`; it must end as expected.
fn report(scenario: &str, out: &Path) -> serde_json::Value {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scenarios")
        .join(scenario);
    let status = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .args(["scenario", "-q", "--out"])
        .arg(out)
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success(), "{scenario} ends as expected");
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// The anomaly and the two holders of the finding the banner leads with.
fn lead(summary: &serde_json::Value) -> (String, usize, usize) {
    if let Some(v) = summary["violations"].get(0) {
        return (
            v["anomaly"]["name"]
                .as_str()
                .expect("a named anomaly")
                .to_string(),
            v["first"]["client"].as_u64().unwrap() as usize,
            v["second"]["client"].as_u64().unwrap() as usize,
        );
    }
    let rv = &summary["resource_violations"][0];
    (
        rv["anomaly"]["name"]
            .as_str()
            .expect("a named anomaly")
            .to_string(),
        rv["client"].as_u64().unwrap() as usize,
        rv["holder"]["client"].as_u64().unwrap() as usize,
    )
}

fn check_first_screen(scenario: &str, stem: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("report");
    let summary = report(scenario, &out);
    let (anomaly, a, b) = lead(&summary);
    assert_ne!(a, b, "{scenario}: two different clients");
    let p = probe(&out.join("index.html"));
    let banner = p["banner"].as_str().expect("a banner");
    assert!(
        banner.to_lowercase().contains(&anomaly.to_lowercase()),
        "{scenario}: the banner names {anomaly}: {banner}"
    );
    let pair = format!("clients {a} and {b}");
    let both = banner.contains(&pair)
        || (banner.contains(&format!("client {a}")) && banner.contains(&format!("client {b}")));
    assert!(
        both,
        "{scenario}: the banner names both holders, {a} and {b}: {banner}"
    );

    // The first screen: the zoomed timeline whole, and the story begun.
    assert_eq!(
        p["first_figure"],
        format!("{stem}.svg"),
        "{scenario}: the zoomed timeline comes first"
    );
    assert_eq!(p["figure_loaded"], true, "{scenario}: the timeline loaded");
    let bottom = p["figure"]["bottom"].as_f64().unwrap();
    assert!(
        bottom <= WINDOW.1 as f64,
        "{scenario}: the timeline ends at {bottom} px, below the first screen"
    );
    let step = p["story_first_step"]["bottom"].as_f64().expect("a story");
    assert!(
        step <= WINDOW.1 as f64,
        "{scenario}: the story's first step ends at {step} px"
    );
    if let Some(table) = p["first_table"]["top"].as_f64() {
        assert!(
            table > p["story"]["top"].as_f64().unwrap(),
            "{scenario}: no table before the story"
        );
    }

    // Hover: the tooltip line shows the operation's history line, and that line of
    // history.jsonl is the ok that began the hold.
    assert_eq!(
        p["tooltip_before"], "",
        "{scenario}: nothing shown before the hover"
    );
    let tip = p["tooltip"].as_str().unwrap();
    assert_eq!(
        Some(tip),
        p["op_info"].as_str(),
        "{scenario}: hovering shows the operation"
    );
    let client: usize = tip
        .strip_prefix("client ")
        .and_then(|t| t.split(' ').next())
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("{scenario}: tooltip names a client: {tip}"));
    let line: usize = tip
        .rsplit("history line ")
        .next()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{scenario}: tooltip gives a history line: {tip}"));
    let history = std::fs::read_to_string(out.join("history.jsonl")).unwrap();
    let text = history.lines().nth(line - 1).unwrap();
    let event: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(event["type"], "ok", "{scenario}: line {line} is an ok: {event}");
    assert_eq!(
        event["client"], client,
        "{scenario}: line {line} is client {client}'s"
    );

    // A click on the hold goes to its line, quoted on the page as history.jsonl has it.
    assert_eq!(
        p["href"],
        format!("#L{line}"),
        "{scenario}: the hold links to its line"
    );
    assert_eq!(
        p["target"].as_str(),
        Some(format!("{line} {text}").as_str()),
        "{scenario}: the page quotes line {line}"
    );

    // Zoom: the timeline opens on the finding, zooms in around its middle (the hold
    // twice as wide, unless it runs past the window), and shows the whole run again.
    let z = &p["zoom"];
    let (opening, zoomed, whole) = (
        z["opening"].as_str().unwrap(),
        z["zoomed"].as_str().unwrap(),
        z["whole"].as_str().unwrap(),
    );
    assert!(opening.starts_with("showing t="), "{scenario}: {opening}");
    assert_ne!(opening, zoomed, "{scenario}: zooming in moves the window");
    assert!(
        whole.starts_with("showing t=0.0 s") || whole.starts_with("showing t=0.000"),
        "{scenario}: the whole run starts at 0: {whole}"
    );
    let (w0, w1) = (z["width"].as_f64().unwrap(), z["zoomed_width"].as_f64().unwrap());
    assert!(
        w1 >= w0,
        "{scenario}: a hold grows as the window shrinks: {w0} -> {w1}"
    );

    if let Some(dir) = std::env::var_os("LOCKSTORM_SHOTS") {
        // For a person to look at: the first screen of the page.
        let png = Path::new(&dir).join(format!("{}.png", scenario.trim_end_matches(".toml")));
        let profile = tempfile::tempdir().unwrap();
        let status = Command::new(chromium())
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--hide-scrollbars",
                "--virtual-time-budget=5000",
            ])
            .arg(format!("--window-size={},{}", WINDOW.0, WINDOW.1))
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--screenshot={}", png.display()))
            .arg(format!("file://{}", out.join("index.html").display()))
            .status()
            .unwrap();
        assert!(status.success());
    }
}

#[test]
fn node_clock_jump_answers_on_the_first_screen() {
    check_first_screen("node-clock-jump.toml", "timeline-violation");
}

#[test]
fn replica_failover_answers_on_the_first_screen() {
    check_first_screen("replica-failover.toml", "timeline-violation");
}

#[test]
fn an_unfenced_stale_write_answers_on_the_first_screen() {
    check_first_screen("fencing-pause-unfenced.toml", "timeline-stale-write");
}

/// Every committed folder under reports/ that holds a report page is reached from
/// reports/index.html by following local links. A run of the user's own (the README's
/// first command writes reports/partition/) is no part of the site: git ignores it.
#[test]
fn the_reports_site_reaches_every_report_folder() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = repo.join("reports");
    let listed = std::process::Command::new("git")
        .current_dir(repo)
        .args(["ls-files", "-z", "--", "reports"])
        .output()
        .expect("git ls-files runs");
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    let folders: BTreeSet<PathBuf> = String::from_utf8_lossy(&listed.stdout)
        .split('\0')
        .filter(|f| f.ends_with("/index.html"))
        .filter_map(|f| repo.join(f).parent().map(Path::to_path_buf))
        .collect();
    let mut reached = BTreeSet::new();
    let mut queue = VecDeque::from([root.join("index.html")]);
    while let Some(page) = queue.pop_front() {
        let Ok(page) = page.canonicalize() else { continue };
        if !reached.insert(page.clone()) {
            continue;
        }
        let html = std::fs::read_to_string(&page).unwrap();
        for href in html.split("href=\"").skip(1).filter_map(|s| s.split('"').next()) {
            if href.contains("://") || href.starts_with('#') || href.starts_with("mailto:") {
                continue;
            }
            let target = page
                .parent()
                .unwrap()
                .join(href.split(['#', '?']).next().unwrap());
            let target = if target.is_dir() {
                target.join("index.html")
            } else {
                target
            };
            if target.extension().is_some_and(|e| e == "html") {
                queue.push_back(target);
            }
        }
    }
    let reached_folders: BTreeSet<PathBuf> = reached
        .iter()
        .filter_map(|p| p.parent().map(Path::to_path_buf))
        .collect();
    let missed: Vec<_> = folders
        .iter()
        .filter(|f| !reached_folders.contains(&f.canonicalize().unwrap()))
        .collect();
    assert!(
        folders.len() > 10,
        "the committed reports are there: {}",
        folders.len()
    );
    assert!(
        missed.is_empty(),
        "not reached from reports/index.html: {missed:?}"
    );
}
