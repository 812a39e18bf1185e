//! The report of a real (short) unsafe run, opened in headless Chromium from disk: the
//! page must load with no console error, no failed load and every image decoded, and
//! `lockstorm report DIR` must redraw it from history.jsonl alone.
//!
//! Needs Debian's `chromium` (`apt-get install -y chromium`; `./test` installs it), or
//! the path of a Chromium binary in LOCKSTORM_CHROMIUM.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A Redlock with a 2-of-5 quorum: unsafe within a second of virtual time.
const SCENARIO: &str = r#"
expect = "unsafe"
seed = 1
duration = "3s"
nodes = 5

[algorithm]
kind = "redlock"
ttl = "2s"
quorum = 2
retry_count = 3
retry_delay = { min = "0ms", max = "50ms" }
request_timeout = "20ms"

[clients]
count = 6
locks = 1
think = { min = "0ms", max = "20ms" }
hold = { min = "5ms", max = "50ms" }

[[faults]]
at = "1s"
kind = "partition"
nodes = [2, 3, 4]
clients = [0, 1, 2]
duration = "1s"
"#;

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
        "no headless browser found: this test opens the HTML report in Chromium. \
         Install it with `apt-get update && apt-get install -y chromium` (`./test` does), \
         or set LOCKSTORM_CHROMIUM to a Chromium binary."
    );
}

/// What the probe script found, as JSON, plus the browser's own console lines.
struct Loaded {
    probe: serde_json::Value,
    console_errors: Vec<String>,
}

/// Opens `page` in headless Chromium with a probe script injected at the top of
/// <head>: it records load errors, script errors and console.error calls, and once the
/// page has loaded writes them with every undecoded image into the DOM, which
/// --dump-dom prints. Network access is mapped away, so a page that needs it fails.
fn load(page: &Path) -> Loaded {
    const PROBE: &str = r#"<script>
window.__errs = [];
window.addEventListener('error', function (e) {
  var t = e.target;
  window.__errs.push(t && (t.src || t.href) ? 'failed to load ' + (t.src || t.href) : 'error: ' + e.message);
}, true);
var __ce = console.error;
console.error = function () { window.__errs.push('console.error: ' + Array.prototype.join.call(arguments, ' ')); __ce.apply(console, arguments); };
window.addEventListener('load', function () {
  var bad = [];
  for (var i = 0; i < document.images.length; i++) {
    var im = document.images[i];
    if (!im.complete || im.naturalWidth === 0) bad.push(im.getAttribute('src'));
  }
  var p = document.createElement('pre');
  p.id = 'lockstorm-probe';
  p.textContent = JSON.stringify({ images: document.images.length, broken: bad, errors: window.__errs });
  document.body.appendChild(p);
});
</script>"#;
    let html = std::fs::read_to_string(page).unwrap();
    assert!(html.contains("<head>"), "no <head> in {}", page.display());
    let probed = page.with_file_name("probe-check.html");
    std::fs::write(&probed, html.replacen("<head>", &format!("<head>{PROBE}"), 1)).unwrap();
    let browser = chromium();
    // A profile of its own, so tests running side by side never share one.
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new(&browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=10000",
            "--dump-dom",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("file://{}", probed.canonicalize().unwrap().display()))
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run the headless browser {}: {e}. Install Chromium with \
                 `apt-get update && apt-get install -y chromium` (`./test` does).",
                browser.display()
            )
        });
    std::fs::remove_file(&probed).unwrap();
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom
        .find("<pre id=\"lockstorm-probe\">")
        .unwrap_or_else(|| panic!("the probe never ran (page did not load?):\n{dom}"))
        + "<pre id=\"lockstorm-probe\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let json = dom[start..end].replace("&quot;", "\"").replace("&amp;", "&");
    let console_errors = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE") && (l.contains("ERROR") || l.contains("error")))
        .map(str::to_string)
        .collect();
    Loaded {
        probe: serde_json::from_str(&json).unwrap_or_else(|e| panic!("probe output {json}: {e}")),
        console_errors,
    }
}

fn assert_loads_cleanly(page: &Path, min_images: u64) {
    let loaded = load(page);
    let p = &loaded.probe;
    assert!(
        p["images"].as_u64().unwrap() >= min_images,
        "{}: {} images, expected at least {min_images}",
        page.display(),
        p["images"]
    );
    assert_eq!(
        p["broken"],
        serde_json::json!([]),
        "{}: images that did not load",
        page.display()
    );
    assert_eq!(
        p["errors"],
        serde_json::json!([]),
        "{}: errors while loading",
        page.display()
    );
    assert!(loaded.console_errors.is_empty(), "{:?}", loaded.console_errors);
}

fn run_scenario(dir: &Path) -> PathBuf {
    let file = dir.join("quorum2.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("report");
    let status = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .args(["scenario", "-q", "--out"])
        .arg(&out)
        .arg(&file)
        .status()
        .unwrap();
    assert!(status.success(), "the unsafe scenario is as expected");
    out
}

#[test]
fn the_report_of_an_unsafe_run_opens_in_a_browser_with_every_plot() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_scenario(tmp.path());
    for f in [
        "index.html",
        "summary.json",
        "history.jsonl",
        "narrative.md",
        "timeline.svg",
        "timeline-violation.svg",
        "latency-cdf.svg",
        "availability.svg",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let pngs = std::fs::read_dir(&out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".png")
        })
        .count();
    assert_eq!(pngs, 0, "plots are SVG only");
    let svg = std::fs::read_to_string(out.join("latency-cdf.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Acquire latency CDF"));

    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.contains("<b>UNSAFE</b> <span class=expect>(as the scenario expects: lock unsafe)</span>"),
        "verdict banner"
    );
    let banner = &html[html.find("id=\"verdict\"").unwrap()..html.find("</div>").unwrap()];
    assert!(
        banner.contains("both held L0 from t="),
        "the banner names the holders: {banner}"
    );
    // The first screen answers: the zoomed timeline and the story come before any table.
    let table = html.find("<table").unwrap();
    assert!(html.find("timeline-violation.svg").unwrap() < table);
    assert!(html.find("<h2 id=\"what-happened\">What happened</h2>").unwrap() < table);
    assert!(html.contains("<a href=\"../index.html\">"), "a link back up");
    // The interactive timeline: each hold says, on hover, its history line.
    let op = html.find("<title>client ").expect("hoverable holds");
    assert!(html[op..]
        .split("</title>")
        .next()
        .unwrap()
        .contains("history line "));
    // Every link to a history line lands on the page's quote of it, which is that line
    // of history.jsonl; the story's citations are such links.
    let history = std::fs::read_to_string(out.join("history.jsonl")).unwrap();
    let history: Vec<&str> = history.lines().collect();
    let links: std::collections::BTreeSet<usize> = html
        .split("href=\"#L")
        .skip(1)
        .map(|rest| rest[..rest.find('"').unwrap()].parse().unwrap())
        .collect();
    assert!(links.len() > 10, "{} lines linked", links.len());
    for n in &links {
        let anchor = format!("<span id=\"L{n}\"><a href=\"#L{n}\">{n}</a> ");
        let at = html
            .find(&anchor)
            .unwrap_or_else(|| panic!("line {n} is linked but not quoted"));
        let quoted = &html[at + anchor.len()..];
        let quoted = quoted[..quoted.find("</span>").unwrap()]
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        assert_eq!(quoted, history[n - 1], "line {n}");
    }
    let story = &html[html.find("<ol class=steps>").unwrap()..];
    let story = &story[..story.find("</p>").unwrap()];
    assert!(
        story.contains("<a href=\"#L"),
        "the story's lines are links: {story}"
    );
    assert!(
        html.contains("<h3>Violation 1: clients"),
        "the first violation is told"
    );
    assert!(
        !html.contains("src=\"http"),
        "the page loads nothing from the network"
    );
    assert_loads_cleanly(&out.join("index.html"), 4);
}

#[test]
fn lockstorm_report_redraws_a_folder_from_its_history_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_scenario(tmp.path());
    let lone = tmp.path().join("lone");
    std::fs::create_dir(&lone).unwrap();
    std::fs::copy(out.join("history.jsonl"), lone.join("history.jsonl")).unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .arg("report")
        .arg(&lone)
        .status()
        .unwrap();
    assert!(status.success());
    // The checker ran again: the derived summary has the same violations.
    let read = |p: PathBuf| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let (orig, redone) = (read(out.join("summary.json")), read(lone.join("summary.json")));
    assert_eq!(redone["verdict"], "unsafe");
    assert_eq!(redone["violations"], orig["violations"]);
    assert_eq!(
        std::fs::read_to_string(lone.join("narrative.md")).unwrap(),
        std::fs::read_to_string(out.join("narrative.md")).unwrap()
    );
    assert_loads_cleanly(&lone.join("index.html"), 4);

    let missing = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .arg("report")
        .arg(tmp.path().join("nothing-here"))
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("history.jsonl"));
}

#[test]
fn the_analysis_index_links_every_scenario_report_and_opens_in_a_browser() {
    let tmp = tempfile::tempdir().unwrap();
    let scenarios = tmp.path().join("scenarios");
    std::fs::create_dir(&scenarios).unwrap();
    std::fs::write(
        scenarios.join("quorum2.toml"),
        format!("# A 2-of-5 quorum.\n{SCENARIO}"),
    )
    .unwrap();
    let safe = SCENARIO
        .replace("quorum = 2\n", "")
        .replace("\"unsafe\"", "\"safe\"");
    std::fs::write(
        scenarios.join("majority.toml"),
        format!("# The default majority quorum.\n{safe}"),
    )
    .unwrap();
    let out = tmp.path().join("analysis");
    let status = Command::new(env!("CARGO_BIN_EXE_lockstorm"))
        .args(["analysis", "--seeds", "2", "--scenarios"])
        .arg(&scenarios)
        .arg("--out")
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success(), "both scenarios as expected");
    let md = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        md.contains("cargo run --release -- analysis"),
        "says how to regenerate"
    );
    assert!(
        md.contains("two clients held a lock at once in: `quorum2`"),
        "{md}"
    );
    assert!(
        md.contains("mutual exclusion held in every seed of: `majority`"),
        "{md}"
    );
    assert!(md.contains("## quorum2\n\n`") && md.contains("A 2-of-5 quorum."));
    // The answer comes first, and tells the broken variant (its quorum is below a
    // majority: a setting, not a name, marks it) from Redlock as specified.
    let answer = &md[md.find("## The answer").expect("an answer")..md.find("## How to read it").unwrap()];
    let line = |lead: &str| {
        answer
            .lines()
            .find(|l| l.starts_with(&format!("- **{lead}")))
            .unwrap_or_else(|| panic!("no clause {lead}: {answer}"))
    };
    assert!(
        !line("Redlock as specified kept mutual exclusion in every one of its 1 scenario.")
            .contains("quorum2"),
        "{answer}"
    );
    let broken = line("The deliberately broken variants");
    assert!(
        broken.contains("[quorum2](quorum2/index.html) (a quorum of 2 of 5 nodes, below a majority (3): "),
        "{broken}"
    );
    assert!(!broken.contains("[majority]"), "{broken}");
    assert!(line("Every verdict is as its scenario expects.").ends_with("expects.**"));
    let html = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        html.find("<h2 id=answer>").unwrap() < html.find("<table>").unwrap(),
        "the answer before any table"
    );
    // Every sentence of the short answer is true of the summaries it names, and every
    // scenario it leaves out is one the sentence is false of.
    use lockstorm::report::analysis::Claim;
    for claim in Claim::ALL {
        let line = md
            .lines()
            .find(|l| l.starts_with(&format!("- {}: ", claim.label())))
            .unwrap_or_else(|| panic!("no line for {claim:?}: {md}"));
        for name in ["quorum2", "majority"] {
            let summary: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(out.join(name).join("summary.json")).unwrap())
                    .unwrap();
            assert_eq!(
                line.contains(&format!("`{name}`")),
                claim.of_summary(&summary),
                "{line} vs {name}'s summary.json"
            );
        }
    }
    for name in ["quorum2", "majority"] {
        assert!(out.join(name).join("index.html").is_file());
        assert_loads_cleanly(&out.join(name).join("index.html"), 4);
    }
    assert_loads_cleanly(&out.join("index.html"), 2);
}
