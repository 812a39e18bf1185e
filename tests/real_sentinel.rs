//! A real Redis Sentinel deployment (src/real/deployment/): real replication, real
//! sentinels deciding a failover, per-pair cuts between its processes, and no process
//! left after a drop or a SIGKILL of its owner. Needs redis-server (`apt-get install -y
//! redis-server`); without it the tests fail and say so.
//!
//! Nothing sleeps to let a race pass: every wait is for a condition (an event, a reply),
//! with a deadline, and fails saying what it waited for and what it saw.
//!
//! One deployment runs at a time ([`ONE_AT_A_TIME`]): several at once on a loaded
//! two-core machine, with niced processes and a short down-after, stall a process long
//! enough for the sentinels to see a master down that is not.

use lockstorm::real::deployment::observe::{ask, ASK_TIMEOUT};
use lockstorm::real::deployment::{Deployment, EventKind, Member, SentinelEvent, Settings, Shape};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::time::Instant;

/// Taken by each test for as long as its deployment runs.
static ONE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

const MASTER: Member = Member::Data(0);
const REPLICA: Member = Member::Data(1);

fn binary() -> PathBuf {
    lockstorm::real::server::binary()
        .unwrap_or_else(|e| panic!("the real-backend tests need redis-server: {e}"))
}

/// Sentinels that notice a dead master within two seconds and may finish a failover in
/// three. Not less: a sentinel that has just switched to a new master resets its link to
/// it and marks it down when no reply comes within down-after, and the first reply can
/// take up to about a second (Sentinel reconnects an instance's link at most once per its
/// 1 s ping period). With 500 ms the first reply took about 600 ms on an idle machine;
/// with 1000 ms all three sentinels marked the new master down 1,008 ms after the switch
/// on CI (four tests at once on two cores). Either way they failed the new master back
/// over to the restarted old one, which came back empty (docs/sentinel.md).
fn fast() -> Settings {
    Settings {
        down_after_ms: 2_000,
        failover_timeout_ms: 3_000,
        ..Settings::default()
    }
}

async fn start(settings: Settings, dir: &std::path::Path) -> (Deployment, Events) {
    let origin = Instant::now();
    let mut d = Deployment::start(Shape::Sentinel(settings), &binary(), dir, origin)
        .await
        .unwrap_or_else(|e| panic!("the deployment starts: {e}"));
    let rx = d.take_events().expect("events");
    eprintln!("deployment up after {:?}", origin.elapsed());
    (d, Events { rx, seen: Vec::new() })
}

/// The sentinels' events, and every one seen so far (for the failure message).
struct Events {
    rx: UnboundedReceiver<SentinelEvent>,
    seen: Vec<SentinelEvent>,
}

impl Events {
    /// The first event from now on that matches, within `limit`.
    async fn expect(
        &mut self,
        what: &str,
        limit: Duration,
        want: impl Fn(&SentinelEvent) -> bool,
    ) -> SentinelEvent {
        let deadline = Instant::now() + limit;
        loop {
            match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Ok(Some(e)) => {
                    self.seen.push(e.clone());
                    if want(&e) {
                        eprintln!(
                            "{:>6} ms  {} {:?} {}",
                            e.at.as_millis(),
                            e.sentinel,
                            e.kind,
                            e.text
                        );
                        return e;
                    }
                }
                Ok(None) => panic!("the event stream ended while waiting for {what}"),
                Err(_) => panic!(
                    "no {what} within {limit:?}; events seen:\n{}",
                    self.seen
                        .iter()
                        .map(|e| format!(
                            "  {:>6} ms {} {:?} {}",
                            e.at.as_millis(),
                            e.sentinel,
                            e.kind,
                            e.text
                        ))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            }
        }
    }

    /// Takes what has arrived without waiting.
    fn drain(&mut self) {
        while let Ok(e) = self.rx.try_recv() {
            self.seen.push(e);
        }
    }
}

async fn run(addr: SocketAddr, args: &[&str]) -> Result<redis::Value, String> {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    ask(addr, &cmd, ASK_TIMEOUT).await
}

/// `pipe`'s replies, on one connection of its own to `addr`.
async fn on_one_connection<T: redis::FromRedisValue>(addr: SocketAddr, pipe: &redis::Pipeline) -> T {
    let client = redis::Client::open(format!("redis://{addr}/")).unwrap();
    let mut conn = client.get_multiplexed_async_connection().await.expect("connect");
    pipe.query_async(&mut conn).await.expect("the pipeline's replies")
}

/// Polls `check` every 20 ms until it gives `Some`, or fails after `limit` saying `what`
/// and the last thing `check` saw.
async fn until<T>(what: &str, limit: Duration, mut check: impl AsyncFnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        let last = match check().await {
            Ok(v) => return v,
            Err(last) => last,
        };
        assert!(
            Instant::now() < deadline,
            "gave up waiting for {what} after {limit:?}: {last}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// `GET key` on `addr` is `value`.
async fn has(addr: SocketAddr, key: &str, value: &str) -> Result<(), String> {
    match run(addr, &["GET", key]).await? {
        redis::Value::BulkString(v) if v == value.as_bytes() => Ok(()),
        other => Err(format!("GET {key} on {addr}: {other:?}")),
    }
}

/// `ROLE`'s first word and, for a replica, its master.
async fn role(addr: SocketAddr) -> Result<(String, Option<SocketAddr>), String> {
    let reply = run(addr, &["ROLE"]).await?;
    let redis::Value::Array(items) = &reply else {
        return Err(format!("ROLE: {reply:?}"));
    };
    let text = |v: &redis::Value| redis::from_redis_value_ref::<String>(v).ok();
    let role = items.first().and_then(text).ok_or(format!("ROLE: {reply:?}"))?;
    let master = match (items.get(1).and_then(text), items.get(2)) {
        (Some(host), Some(redis::Value::Int(port))) if role == "slave" => {
            format!("{host}:{port}").parse().ok()
        }
        _ => None,
    };
    Ok((role, master))
}

fn alive(pid: u32) -> bool {
    // A zombie has exited: it holds nothing but its status (an init that does not reap
    // keeps it in the table).
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|t| {
            t.get(t.rfind(')')? + 2..)
                .map(|rest| !rest.starts_with('Z') && !rest.starts_with('X'))
        })
        .unwrap_or(false)
}

#[tokio::test]
async fn the_sentinels_fail_over_a_killed_master_and_demote_it_when_it_returns() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut d, mut events) = start(fast(), dir.path()).await;
    let (master, replica) = (d.addr(MASTER), d.addr(REPLICA));

    // Real replication: a write on the master reaches the replica.
    run(master, &["SET", "k", "v"]).await.expect("SET on the master");
    until("k on the replica", Duration::from_secs(10), async || {
        has(replica, "k", "v").await
    })
    .await;
    assert_eq!(
        d.discover_master().await,
        Some(master),
        "Sentinel names the first master"
    );

    let killed = Instant::now();
    d.kill(MASTER);
    let is_old = |e: &SentinelEvent| e.instance.member == Some(MASTER);
    events
        .expect("+odown of the killed master", Duration::from_secs(15), |e| {
            e.kind == EventKind::Odown && is_old(e)
        })
        .await;
    // The leader says +failover-end, then +switch-master, on its one connection.
    let end = events
        .expect("+failover-end", Duration::from_secs(20), |e| {
            e.kind == EventKind::FailoverEnd
        })
        .await;
    let switch = events
        .expect(
            "+switch-master from the failover's leader",
            Duration::from_secs(10),
            |e| matches!(e.kind, EventKind::SwitchMaster { .. }) && e.sentinel == end.sentinel,
        )
        .await;
    assert_eq!(switch.instance.member, Some(REPLICA), "{switch:?}");
    let EventKind::SwitchMaster { from } = switch.kind else {
        unreachable!()
    };
    assert_eq!(from.member, Some(MASTER));
    eprintln!("failover took {:?} from the kill", killed.elapsed());

    let (now, _) = role(d.direct_addr(REPLICA)).await.expect("ROLE of the replica");
    assert_eq!(now, "master", "the promoted replica answers ROLE as master");
    until(
        "Sentinel to name the promoted replica",
        Duration::from_secs(10),
        async || match d.discover_master().await {
            Some(a) if a == replica => Ok(()),
            other => Err(format!("discovered {other:?}")),
        },
    )
    .await;
    has(replica, "k", "v")
        .await
        .expect("the promoted replica kept the key");

    // The old master comes back as a master, on its old config; a sentinel converts it.
    let restarted = Instant::now();
    d.restart(MASTER).await.expect("the old master restarts");
    events
        .expect(
            "+convert-to-slave of the old master",
            Duration::from_secs(30),
            |e| e.kind == EventKind::ConvertToSlave && is_old(e),
        )
        .await;
    let old = d.direct_addr(MASTER);
    until(
        "the old master to follow the new one",
        Duration::from_secs(10),
        async || match role(old).await? {
            (r, Some(m)) if r == "slave" && m == replica => Ok(()),
            other => Err(format!("ROLE {other:?}")),
        },
    )
    .await;
    until(
        "the old master to resync k",
        Duration::from_secs(10),
        async || has(old, "k", "v").await,
    )
    .await;
    eprintln!("demoted {:?} after its restart", restarted.elapsed());
    let offsets = d.replication().await;
    assert!(
        offsets.iter().all(|(_, r)| r.is_some()),
        "every data node answers INFO replication: {offsets:?}"
    );
}

#[tokio::test]
async fn a_cut_between_two_members_leaves_every_other_link_up() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut d, mut events) = start(fast(), dir.path()).await;
    let (master, replica) = (d.addr(MASTER), d.addr(REPLICA));
    let s0 = Member::Sentinel(0);

    // sentinel0 ↔ master: that sentinel alone loses the master.
    d.cut(s0, MASTER);
    let sdown = events
        .expect(
            "+sdown of the master by sentinel0",
            Duration::from_secs(15),
            |e| e.kind == EventKind::Sdown && e.instance.member == Some(MASTER),
        )
        .await;
    assert_eq!(
        sdown.sentinel, s0,
        "only the cut sentinel loses the master: {sdown:?}"
    );
    events.drain();
    assert!(
        !events
            .seen
            .iter()
            .any(|e| matches!(e.kind, EventKind::Odown | EventKind::TryFailover)),
        "one sentinel of three is no quorum: {:?}",
        events.seen
    );
    d.heal(s0, MASTER);
    events
        .expect(
            "-sdown of the master by sentinel0",
            Duration::from_secs(10),
            |e| e.kind == EventKind::SdownEnd && e.sentinel == s0 && e.instance.member == Some(MASTER),
        )
        .await;

    // replica ↔ master: the master's writes stop reaching the replica, and no other link.
    d.cut(REPLICA, MASTER);
    // WAIT counts the replicas that acknowledged this connection's last write.
    let mut write = redis::pipe();
    write.cmd("SET").arg("cut").arg("1").cmd("WAIT").arg(1).arg(200);
    let (_, acked): (redis::Value, i64) = on_one_connection(master, &write).await;
    assert_eq!(acked, 0, "no replica acknowledges through the cut");
    assert!(
        has(replica, "cut", "1").await.is_err(),
        "the write crossed a cut link"
    );
    let rep = d.replication().await;
    let (m, r) = (
        rep[0].1.clone().expect("master"),
        rep[1].1.clone().expect("replica"),
    );
    assert!(m.offset > r.offset, "the replica falls behind: {m:?} {r:?}");
    assert_eq!(
        d.discover_master().await,
        Some(master),
        "the sentinels still reach the master"
    );
    d.heal(REPLICA, MASTER);
    until(
        "the held write to reach the replica",
        Duration::from_secs(10),
        async || has(replica, "cut", "1").await,
    )
    .await;

    // SIGSTOP: the replica answers nothing, even on its direct port, until SIGCONT.
    d.pause(REPLICA);
    assert!(
        role(d.direct_addr(REPLICA)).await.is_err(),
        "a stopped replica answered"
    );
    d.resume(REPLICA);
    until(
        "the resumed replica to answer",
        Duration::from_secs(10),
        async || role(d.direct_addr(REPLICA)).await,
    )
    .await;
}

#[tokio::test]
async fn no_process_outlives_a_dropped_deployment() {
    let _one = ONE_AT_A_TIME.lock().await;
    let dir = tempfile::tempdir().unwrap();
    let (d, _events) = start(fast(), dir.path()).await;
    let pids: Vec<u32> = d.members().into_iter().filter_map(|m| d.pid(m)).collect();
    assert_eq!(pids.len(), 5, "a master, a replica and three sentinels");
    assert!(pids.iter().all(|&p| alive(p)));
    drop(d);
    let left: Vec<u32> = pids.into_iter().filter(|&p| alive(p)).collect();
    assert!(left.is_empty(), "still running after the drop: {left:?}");
}

/// The deployment's owner for [`no_process_outlives_its_sigkilled_owner`]: run as a child
/// test process, it starts a deployment, writes the pids to the file the environment
/// names, and waits to be killed. Without that variable it does nothing.
#[test]
fn owner_of_a_deployment_for_the_sigkill_test() {
    let Some(out) = std::env::var_os("LOCKSTORM_SENTINEL_OWNER_OUT") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let (d, _events) = start(fast(), dir.path()).await;
        let pids: Vec<String> = d
            .members()
            .into_iter()
            .filter_map(|m| d.pid(m))
            .map(|p| p.to_string())
            .collect();
        let tmp = PathBuf::from(&out).with_extension("tmp");
        std::fs::write(&tmp, pids.join("\n")).unwrap();
        std::fs::rename(&tmp, &out).unwrap();
        std::future::pending::<()>().await;
    });
}

#[test]
fn no_process_outlives_its_sigkilled_owner() {
    let _one = ONE_AT_A_TIME.blocking_lock();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("pids");
    let mut owner = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "owner_of_a_deployment_for_the_sigkill_test",
            "--nocapture",
        ])
        .env("LOCKSTORM_SENTINEL_OWNER_OUT", &out)
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the owner starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let pids: Vec<u32> = loop {
        if let Ok(text) = std::fs::read_to_string(&out) {
            break text.lines().map(|l| l.parse().unwrap()).collect();
        }
        if let Some(status) = owner.try_wait().unwrap() {
            panic!("the owner exited before its deployment was up: {status}");
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the owner's deployment never came up"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(pids.len(), 5, "{pids:?}");
    assert!(pids.iter().all(|&p| alive(p)), "{pids:?}");
    owner.kill().unwrap(); // SIGKILL
    owner.wait().unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left: Vec<u32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "still running 10 s after their owner was SIGKILLed: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn impossible_settings_are_refused_in_one_line_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    for (settings, needle) in [
        (
            Settings {
                quorum: 4,
                ..Settings::default()
            },
            "quorum 4 with 3 sentinels",
        ),
        (
            Settings {
                sentinels: 2,
                quorum: 2,
                ..Settings::default()
            },
            "at least 3",
        ),
        (
            Settings {
                replicas: 0,
                ..Settings::default()
            },
            "0 replicas",
        ),
    ] {
        let err =
            match Deployment::start(Shape::Sentinel(settings), &binary(), dir.path(), Instant::now()).await {
                Ok(_) => panic!("{needle}: started"),
                Err(e) => e.to_string(),
            };
        assert!(err.contains(needle) && err.lines().count() == 1, "{err}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing was made"
    );
}
