//! Stale writes, read-write stories and fault lanes, on hand-written histories
//! (issue 10, 3(c)-(e)); the helpers are those of `tests.rs`.

use super::html;
use super::narrative::explain;
use super::plots::timeline::Timeline;
use super::tests::{acq, fault, meta, ok, partition, rel, rel_ok};
use super::view::RunView;
use crate::algorithm::Mode;
use crate::checker::check;
use crate::history::{Event, FaultAction, Op, OpKind, ResourceWrite};
use serde_json::json;

fn write(t: u64, c: usize, accepted: bool) -> Event {
    Event::Write(ResourceWrite {
        t_us: t,
        client: c,
        lock: "L0".into(),
        token: format!("tok{c}").into(),
        fence: None,
        accepted,
    })
}

fn acq_in(t: u64, c: usize, mode: Mode) -> Event {
    Event::Invoke(Op::new(t, c, OpKind::Acquire, "L0", mode))
}

fn ok_in(t: u64, c: usize, mode: Mode, valid_until: u64, nodes: &[usize]) -> Event {
    let mut o = Op::new(t, c, OpKind::Acquire, "L0", mode);
    o.valid_until_us = Some(valid_until);
    o.nodes = Some(nodes.iter().collect());
    o.token = Some(format!("tok{c}").into());
    Event::Ok(o)
}

fn svg_of(fig: &Timeline) -> String {
    let dir = tempfile::tempdir().unwrap();
    super::plots::save(fig, dir.path(), "t").unwrap();
    std::fs::read_to_string(dir.path().join("t.svg")).unwrap()
}

/// Kleppmann's paused writer: client 1 acquires, stops the world past its validity,
/// client 0 acquires, client 1 resumes and its write is accepted.
fn paused_writer() -> Vec<Event> {
    let pause = json!({"kind": "pause", "client": 1, "point": "after_acquire"});
    vec![
        meta(3, 2),
        acq(1_000, 1),
        ok(2_000, 1, 500_000, &[0, 1, 2], 1),
        fault(2_000, 0, FaultAction::Start, pause.clone()),
        acq(600_000, 0),
        ok(601_000, 0, 2_100_000, &[0, 1, 2], 1),
        write(602_000, 0, true),
        fault(1_502_000, 0, FaultAction::End, pause),
        write(1_503_000, 1, true),
        rel(1_504_000, 1),
        rel_ok(1_504_100, 1),
    ]
}

#[test]
fn a_stale_write_is_told_step_by_step_and_why() {
    let h = paused_writer();
    let f = check(&h).unwrap();
    assert!(f.is_safe(), "the lock itself is safe");
    assert_eq!(f.resource_violations.len(), 1);
    let view = RunView::new(&h, &f);
    let story = super::stale::explain(&view, &f.resource_violations[0]);
    let told: Vec<(u64, &str)> = story.steps.iter().map(|s| (s.t_us, s.text.as_str())).collect();
    assert_eq!(
        told,
        [
            (
                2_000,
                "client 1 acquires L0 on nodes 0,1,2 (validity 498.0 ms, until t=0.500 s)"
            ),
            (
                2_000,
                "client 1 stops the world right after it acquires [fault #0]"
            ),
            (500_000, "client 1's validity runs out: its hold of L0 is over"),
            (
                601_000,
                "client 0 acquires L0 on nodes 0,1,2 (validity 1.499 s, until t=2.100 s)"
            ),
            (602_000, "the guarded resource accepts client 0's write to L0"),
            (1_502_000, "client 1 resumes, unaware of the time that passed"),
            (
                1_503_000,
                "the guarded resource accepts client 1's write to L0 (without a fencing token)"
            ),
        ]
    );
    assert!(
        story.overlap.contains("1.003 s after its hold ended"),
        "{}",
        story.overlap
    );
    assert!(
        story.why.contains("held back by fault #0") && story.why.contains("Without fencing tokens"),
        "{}",
        story.why
    );
    assert_eq!((story.first_line, story.last_line), (2, 9));
}

#[test]
fn stale_writes_get_their_own_table_and_timeline_marks() {
    let mut h = paused_writer();
    // A write fencing rejected, drawn as an open circle.
    h.push(write(1_600_000, 1, false));
    let f = check(&h).unwrap();
    let view = RunView::new(&h, &f);
    let stories: Vec<_> = f
        .resource_violations
        .iter()
        .map(|rv| super::stale::explain(&view, rv))
        .collect();
    let told = html::Told {
        violations: &[],
        stale: &stories,
        regressions: &[],
        waits: &[],
    };
    let page = html::page(
        &json!({"scenario": "hand"}),
        &view,
        &[],
        &told,
        None,
        false,
        super::interactive::Budget::FULL,
    );
    assert!(
        page.contains("<h2 id=\"stale-writes\">Stale writes (1)</h2>"),
        "{page}"
    );
    assert!(page.contains("judged 3 writes: 2 accepted, 1 rejected"), "{page}");
    assert_eq!(
        page.matches(&html_escaped(&stories[0].why)).count(),
        1,
        "the first screen's story is not told again below: {page}"
    );
    assert!(
        page.contains("<tr><td class=n>1.503 s</td><td>client 1</td><td>L0</td><td class=n>none</td><td class=n>0.500 s</td><td>client 0's write of 0.602 s</td>"),
        "{page}"
    );
    assert!(
        page.contains("Stale write 1: client 1 on L0, over client 0&#39;s write of t=0.602 s (a later hold)"),
        "{page}"
    );

    let svg = svg_of(&Timeline::around_write(&view, &f.resource_violations[0]));
    assert!(svg.contains("stale write accepted") && svg.contains("write rejected (fencing)"));
    // The cross is two red strokes; the hold outlines are not drawn here.
    assert!(svg.matches("stroke=\"#D62728\"").count() >= 2, "{svg}");
}

#[test]
fn fault_kinds_get_their_own_lanes_and_colours() {
    let h = [
        meta(3, 3),
        fault(100, 0, FaultAction::Start, json!({"kind": "crash", "node": 1})),
        partition(200, 1, FaultAction::Start, &[2], &[0]),
        fault(300, 2, FaultAction::Start, json!({"kind": "pause", "client": 2})),
        partition(400, 3, FaultAction::Start, &[0], &[0, 1, 2]),
        acq(1_000, 1),
        ok(2_000, 1, 900_000, &[0, 1, 2], 1),
        rel(500_000, 1),
        rel_ok(500_100, 1),
    ];
    let f = check(&h).unwrap();
    let view = RunView::new(&h, &f);
    let timeline = Timeline::overview(&view);
    let svg = svg_of(&timeline);
    for (kind, colour) in [
        ("partition", "#FF9900"),
        ("crash", "#3C3C3C"),
        ("pause", "#E377C2"),
    ] {
        assert!(svg.contains(colour), "{kind} in its colour");
        assert!(
            svg.contains(&format!(">{kind}<")) || svg.contains(kind),
            "{kind} in the legend"
        );
    }
}

#[test]
fn a_writer_beside_a_reader_is_explained_with_the_rw_scripts() {
    let jump = json!({"kind": "clock_jump", "client": 1, "by_us": 2_000_000});
    let h = [
        meta(3, 2),
        fault(500, 0, FaultAction::Start, jump.clone()),
        fault(500, 0, FaultAction::End, jump),
        acq_in(1_000, 0, Mode::Read),
        ok_in(2_000, 0, Mode::Read, 990_000, &[0, 1, 2]),
        acq_in(10_000, 1, Mode::Write),
        ok_in(11_000, 1, Mode::Write, 990_000, &[0, 1, 2]),
    ];
    let f = check(&h).unwrap();
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    assert!(
        story.why.starts_with(
            "Nodes 0,1,2 let client 1's writer script take w_{L0} while client 0 held a read lock: \
             r_{L0} there no longer had client 0's entry"
        ),
        "{}",
        story.why
    );
    assert!(
        story.why.contains("ZREMRANGEBYSCORE r_{L0} 0 now"),
        "{}",
        story.why
    );
    assert!(
        story
            .why
            .ends_with("Clocks: the writer, client 1, ran ahead (fault #0: its wall clock jumped +2.000 s)."),
        "{}",
        story.why
    );
    assert!(
        !story.why.contains("key"),
        "no Redlock key in a read-write story: {}",
        story.why
    );
    assert_eq!(
        story.steps[0].text,
        "client 1's wall clock jumps +2.000 s (earlier; the clock stays where it jumped) [fault #0]"
    );
}

#[test]
fn a_reader_beside_a_writer_is_explained_with_the_writer_key() {
    let h = [
        meta(3, 2),
        acq_in(1_000, 0, Mode::Write),
        ok_in(2_000, 0, Mode::Write, 990_000, &[0, 1, 2]),
        acq_in(10_000, 1, Mode::Read),
        ok_in(11_000, 1, Mode::Read, 990_000, &[1, 2]),
    ];
    let f = check(&h).unwrap();
    let view = RunView::new(&h, &f);
    let why = explain(&view, &f.violations[0]).why;
    assert_eq!(
        why,
        "Nodes 1,2 let client 1's reader script add it to r_{L0} while client 0 held the write lock: \
         w_{L0} with client 0's token was gone there (it had expired, been lost, or been deleted by a \
         release that does not check the token, while client 0 still trusted its validity)."
    );
}

/// `extend = "pexpire"`: an extension after the validity ran out, counted on nodes that
/// hold another client's key, starts a new hold, and the story says which mistake it is.
#[test]
fn a_late_extension_on_another_clients_key_is_told_as_such() {
    let mut ext = Op::new(700_000, 1, OpKind::Extend, "L0", Mode::Exclusive);
    ext.token = Some("tok1".into());
    let mut ext_ok = ext.clone();
    ext_ok.t_us = 701_000;
    ext_ok.valid_until_us = Some(1_200_000);
    ext_ok.nodes = Some([0, 1, 2].iter().collect());
    let h = [
        meta(3, 2),
        acq(1_000, 1),
        ok(2_000, 1, 500_000, &[0, 1, 2], 1),
        acq(550_000, 0),
        ok(600_000, 0, 1_100_000, &[0, 1, 2], 1),
        Event::Invoke(ext),
        Event::Ok(ext_ok),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    let view = RunView::new(&h, &f);
    let story = explain(&view, &f.violations[0]);
    assert_eq!(
        story.steps.last().unwrap().text,
        "client 1 extends L0 on nodes 0,1,2 after its validity had run out, and holds the lock anew \
         (validity 499.0 ms, until t=1.200 s)"
    );
    assert!(
        story.why.starts_with(
            "Nodes 0,1,2 counted client 1's extension of L0 while client 0 held it there, after client 1's \
             own validity had run out: an extension that does not compare the token (a plain PEXPIRE)"
        ),
        "{}",
        story.why
    );
}

#[test]
fn a_fault_on_the_holder_that_asked_first_is_told_even_if_it_ended_before_the_other_asked() {
    // Client 1 asks first and is cut from nodes 0 and 1 for a while; the cut ends before
    // client 0 asks; client 0 acquires, then client 1 (the second holder) does too.
    let h = [
        meta(3, 2),
        acq(1_000, 1),
        partition(2_000, 0, FaultAction::Start, &[0, 1], &[1]),
        partition(50_000, 0, FaultAction::End, &[0, 1], &[1]),
        acq(100_000, 0),
        ok(101_000, 0, 5_000_000, &[0, 1, 2], 1),
        ok(200_000, 1, 5_000_000, &[0, 1, 2], 3),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.violations.len(), 1);
    let v = &f.violations[0];
    assert_eq!((v.first.client, v.second.client), (0, 1));
    let view = RunView::new(&h, &f);
    let story = explain(&view, v);
    assert!(
        story.steps.iter().any(|s| s.text.contains("[fault #0]")),
        "{:#?}",
        story.steps
    );
    assert_eq!(story.first_line, 2, "the story starts where client 1 asked");
}

/// Every "(line N)" a story step names, with N.
fn named_lines(text: &str) -> Vec<usize> {
    crate::history::cut::cited_in(text)
        .into_iter()
        .flat_map(|r| r.collect::<Vec<_>>())
        .collect()
}

fn fenced(t: u64, c: usize, fence: u64) -> Event {
    let mut o = Op::new(t, c, OpKind::Acquire, "L0", Mode::Exclusive);
    o.valid_until_us = Some(t + 400_000);
    o.nodes = Some([0, 1, 2].iter().collect());
    o.token = Some(format!("tok{c}").into());
    o.fence = Some(fence);
    Event::Ok(o)
}

/// Issue 41: a fencing token that went backwards gets a story, each token quoted from
/// the `ok` line the step cites, and the page tells it once, first.
#[test]
fn a_token_that_went_backwards_is_told_from_its_two_ok_lines() {
    let h = [
        meta(3, 2),
        acq(1_000, 0),
        fenced(2_000, 0, 5),
        rel(100_000, 0),
        rel_ok(100_100, 0),
        partition(150_000, 0, FaultAction::Start, &[0], &[1]),
        acq(200_000, 1),
        fenced(201_000, 1, 3),
        Event::Write(ResourceWrite {
            t_us: 250_000,
            client: 1,
            lock: "L0".into(),
            token: "tok1".into(),
            fence: Some(3),
            accepted: false,
        }),
        rel(300_000, 1),
        rel_ok(300_100, 1),
        partition(350_000, 0, FaultAction::End, &[0], &[1]),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.fence_regressions.len(), 1, "{:?}", f.fence_regressions);
    let view = RunView::new(&h, &f);
    let story = super::fence::explain(&view, view.worst.regressions[0]);
    let mut quoted = 0;
    for step in &story.steps {
        let Some(at) = step.text.find("gets fencing token ") else {
            continue;
        };
        let token: u64 = step.text[at + 19..].split(' ').next().unwrap().parse().unwrap();
        let line = *named_lines(&step.text[at..]).first().expect("a cited line");
        match &h[line - 1] {
            Event::Ok(op) => assert_eq!(op.fence, Some(token), "line {line}: {}", step.text),
            other => panic!("line {line} is {other:?}, not the ok of: {}", step.text),
        }
        quoted += 1;
    }
    assert_eq!(quoted, 2, "both tokens quoted: {:?}", story.steps);
    assert!(
        story
            .overlap
            .contains("has token 3, 2 below the 5 of client 0's earlier hold")
            && story
                .overlap
                .contains("takes client 0's late writes (token 5) and turns away client 1's"),
        "{}",
        story.overlap
    );
    assert!(
        story.why.contains("The fault above acted on the two clients"),
        "{}",
        story.why
    );
    let turned = story
        .steps
        .iter()
        .find(|s| s.text.starts_with("the guarded resource turns away"))
        .expect("the rejected write is told");
    assert_eq!(
        turned.text,
        "the guarded resource turns away client 1's write with token 3 (line 9)"
    );
    assert!(matches!(&h[8], Event::Write(w) if !w.accepted && w.fence == Some(3)));
    assert_eq!(story.last_line, 9);
    assert!(
        story.steps.iter().any(|s| s.text.contains("[fault #0]")),
        "the cut of client 1 is told: {:?}",
        story.steps
    );
    let told = html::Told {
        violations: &[],
        stale: &[],
        regressions: std::slice::from_ref(&story),
        waits: &[],
    };
    let page = html::page(
        &json!({"scenario": "hand"}),
        &view,
        &[],
        &told,
        None,
        false,
        super::interactive::Budget::FULL,
    );
    assert!(
        page.contains("<h2 id=\"what-happened\">What happened</h2>"),
        "{page}"
    );
    assert_eq!(
        page.matches(&html_escaped(&story.why)).count(),
        1,
        "the story is told once: {page}"
    );
}

fn html_escaped(s: &str) -> String {
    super::words::esc(s)
}

/// Issue 41: a starved writer's story names its first attempt, its failed attempts, the
/// holds that kept it out and its acquisition, each by a line that is what it says.
#[test]
fn a_starved_writer_is_told_from_the_lines_of_its_wait() {
    let mut m = match meta(3, 3) {
        Event::Meta(m) => m,
        _ => unreachable!(),
    };
    m.writer_wait_bound_us = Some(100_000);
    let fail_w = |t: u64| Event::Fail(Op::new(t, 1, OpKind::Acquire, "L0", Mode::Write));
    let rel_r = |t: u64, c: usize| Event::Invoke(Op::new(t, c, OpKind::Release, "L0", Mode::Read));
    let rel_r_ok = |t: u64, c: usize| Event::Ok(Op::new(t, c, OpKind::Release, "L0", Mode::Read));
    let h = [
        Event::Meta(m),
        acq_in(1_000, 0, Mode::Read),
        ok_in(2_000, 0, Mode::Read, 900_000, &[0, 1, 2]),
        acq_in(10_000, 1, Mode::Write),
        fail_w(11_000),
        acq_in(300_000, 2, Mode::Read),
        ok_in(301_000, 2, Mode::Read, 900_000, &[0, 1, 2]),
        acq_in(400_000, 1, Mode::Write),
        fail_w(401_000),
        rel_r(500_000, 0),
        rel_r_ok(500_100, 0),
        rel_r(550_000, 2),
        rel_r_ok(550_100, 2),
        acq_in(600_000, 1, Mode::Write),
        ok_in(601_000, 1, Mode::Write, 900_000, &[0, 1, 2]),
    ];
    let f = check(&h).unwrap();
    assert_eq!(f.liveness.len(), 1, "{:?}", f.liveness);
    let view = RunView::new(&h, &f);
    let story = super::waits::explain(&view, view.worst.liveness[0]);
    let texts: Vec<&str> = story.steps.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(texts[0], "client 1 asks for L0 for writing (line 4)", "{texts:?}");
    assert!(
        texts.contains(&"2 of client 1's 3 attempts fail or time out (lines 5 and 9)"),
        "{texts:?}"
    );
    assert!(
        texts.contains(&"meanwhile clients 0,2 hold it for reading 2 times (lines 3 and 7)"),
        "{texts:?}"
    );
    assert_eq!(
        texts.last(),
        Some(&"client 1 acquires L0 (line 15), 591.0 ms after it first asked"),
        "{texts:?}"
    );
    // Every line the story cites is one of the lines its steps name, and is about L0.
    let named: std::collections::BTreeSet<usize> = texts.iter().flat_map(|t| named_lines(t)).collect();
    assert_eq!(story.cited, named.iter().copied().collect::<Vec<_>>());
    for &line in &story.cited {
        assert!(
            matches!(&h[line - 1], Event::Invoke(o) | Event::Ok(o) | Event::Fail(o) if o.lock.as_str() == "L0"),
            "line {line}"
        );
    }
    assert!(
        story.markdown().contains("(history lines 3, 4, 5, 7, 9 and 15.)"),
        "{}",
        story.markdown()
    );
    assert!(story.why.contains("Read holds covered"), "{}", story.why);
}

/// A story over a long stretch cites its lines one by one, so a committed report keeps
/// those and their context rather than the whole stretch; a short one keeps its range.
#[test]
fn a_long_story_cites_its_lines_one_by_one() {
    use super::narrative::{Step, Story, LONG_STORY_LINES};
    let story = |last_line: usize| Story {
        lock: "L0".into(),
        steps: vec![Step {
            t_us: 1,
            text: "client 1's key expired on node 2 (line 500)".into(),
        }],
        overlap: "both hold L0".into(),
        why: "see lines 700 and 701".into(),
        first_line: 10,
        last_line,
        anomaly: None,
        cited: Vec::new(),
    };
    let long = story(1_000).pinpointed(&[20, 5_000]);
    assert_eq!(
        long.cited,
        vec![10, 20, 500, 700, 701, 1_000],
        "a pin outside the stretch is left out"
    );
    assert_eq!(long.lines(), "history lines 10, 20, 500, 700, 701 and 1000");
    let short = story(10 + LONG_STORY_LINES).pinpointed(&[20]);
    assert!(short.cited.is_empty());
    assert_eq!(
        short.lines(),
        format!("history lines 10–{}", 10 + LONG_STORY_LINES)
    );
}
