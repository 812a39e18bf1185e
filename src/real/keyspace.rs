//! What lockstorm reads from a real node by itself, beside its clients' requests: the
//! node's keyspace notifications and snapshots of its keys. The driver turns them into
//! the history's `expired`, `lost`, `replicated`, `unreplicated` and `promoted` lines
//! (`driver/key_watch.rs`; docs/history.md says how each is obtained).
//!
//! A [`Watcher`] is one RESP3 connection straight to a node's master (not through the
//! proxy, so a partition does not hide it), subscribed to the `set`, `del` and `expired`
//! key events (`notify-keyspace-events Eg$x`, set by `CONFIG SET` when it connects, so a
//! restarted node gets it again before any client reaches it). Pushes and replies come
//! in the node's order on that one connection, which is what makes two things exact:
//! the value a `set` wrote is read by a `GET` on the same connection, and is kept only if
//! no `del` or `expired` of that key came between the `set` and the `GET`'s reply; and a
//! snapshot taken on it is ordered with the notifications around it. The watcher ends
//! with its connection (the master was killed); the node starts a new one when it is
//! back.
//!
//! A [`Snapshot`] is one atomic read of every key (a Lua script: the node's `TIME`, then
//! each key's type, value and `PTTL`). Before a kill it runs in a `MULTI` after `CLIENT
//! PAUSE ALL`, so no client command lands between the snapshot and the kill.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// The key events lockstorm subscribes to.
const EVENTS: [(&str, Note); 3] = [
    ("__keyevent@0__:set", Note::Set),
    ("__keyevent@0__:del", Note::Deleted),
    ("__keyevent@0__:expired", Note::Expired),
];

/// How long a snapshot may take before lockstorm gives up on it (a stopped node).
const SNAPSHOT_TIMEOUT: Duration = Duration::from_secs(1);

/// Every key with its value and `PTTL`, and the node's `TIME`, read at one instant.
const SNAPSHOT: &str = r"
local t = redis.call('TIME')
local out = {t[1], t[2]}
for _, k in ipairs(redis.call('KEYS', '*')) do
  local ty = redis.call('TYPE', k)['ok']
  local v = false
  if ty == 'string' then
    v = redis.call('GET', k)
  elseif ty == 'zset' then
    v = redis.call('ZRANGE', k, 0, -1)
  end
  if v then
    table.insert(out, {k, v, redis.call('PTTL', k)})
  end
end
return out
";

/// What a key event says happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Note {
    Set,
    Deleted,
    Expired,
}

/// A key's value in a snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Str(String),
    /// A sorted set's members (`r_{L}`: the readers' tokens).
    Members(Vec<String>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: Value,
    /// The key's `PTTL` (ms) at the snapshot; -1: no expiry.
    pub pttl_ms: i64,
}

/// A node's keys at one instant of its own clock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The node's `TIME` (µs of its wall clock, libfaketime's if its clock is faulted).
    pub time_us: u64,
    pub entries: Vec<Entry>,
}

impl Snapshot {
    /// The node-clock time at which `e` expires, if it has an expiry.
    pub fn expire_at_us(&self, e: &Entry) -> Option<u64> {
        (e.pttl_ms >= 0).then(|| self.time_us + e.pttl_ms as u64 * 1_000)
    }

    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }
}

/// A node came back: what its master had just before it was killed, and what the node
/// serves now, before any client reaches it.
#[derive(Clone, Debug, PartialEq)]
pub struct Back {
    pub node: usize,
    /// `None`: the master was stopped (SIGSTOP) or did not answer, so nothing was read.
    pub before: Option<Snapshot>,
    /// `None`: the node did not answer after it came back.
    pub after: Option<Snapshot>,
    /// A failover promoted the replica, which trailed the master by this much.
    pub failover_lag: Option<Duration>,
}

/// What a node's watcher tells the driver, in the node's order.
#[derive(Clone, Debug, PartialEq)]
pub enum News {
    /// A key event. `value`: for a `set`, the value it wrote, if read before anything
    /// removed it.
    Key {
        node: usize,
        /// The member of a Sentinel deployment whose event it is (`redis0`, ...).
        member: Option<String>,
        key: String,
        note: Note,
        value: Option<String>,
    },
    /// The node came back from an outage (after every `Key` that came before).
    Back(Box<Back>),
    /// What the node held as a fault struck it (a kill, a pause, a clock fault).
    Present { node: usize, snapshot: Box<Snapshot> },
}

/// The node's side of its current master's watcher.
pub struct Watcher {
    ask: mpsc::UnboundedSender<(Back, oneshot::Sender<()>)>,
}

impl Watcher {
    /// Connects to `addr` (node `node`'s master), turns key events on and subscribes;
    /// returns once subscribed. The watcher sends what it sees to `news` until the
    /// connection ends.
    ///
    /// `member`: the data member of a Sentinel deployment at `addr`, which is a master
    /// or a replica as the sentinels decide. A replica fires the same key events for
    /// what it applies from its master, which no client wrote there, so the watcher
    /// drops every event the member fires while its `ROLE` says replica (asked after
    /// the event: a replica promoted in between is taken as the master it now is).
    pub async fn start(
        node: usize,
        addr: SocketAddr,
        member: Option<String>,
        news: mpsc::UnboundedSender<News>,
    ) -> Result<Watcher, String> {
        let (conn, push_rx) = subscribe(addr).await?;
        let (ask, asks) = mpsc::unbounded_channel();
        let at = Watched { node, addr, member };
        tokio::spawn(watch(at, conn, push_rx, asks, news));
        Ok(Watcher { ask })
    }

    /// Takes the `after` snapshot of `back` on the watcher's connection and sends
    /// `back` to the driver, after every key event that came before it; returns when
    /// that is done (or the watcher is gone).
    pub async fn report(&self, back: Back) {
        let (done, wait) = oneshot::channel();
        if self.ask.send((back, done)).is_ok() {
            let _ = wait.await;
        }
    }
}

/// What a watcher watches: node `node`'s master at `addr`, or with `member` one data
/// member of a Sentinel deployment.
struct Watched {
    node: usize,
    addr: SocketAddr,
    member: Option<String>,
}

/// Connects to `addr`, turns key events on and subscribes to them.
async fn subscribe(
    addr: SocketAddr,
) -> Result<
    (
        redis::aio::MultiplexedConnection,
        mpsc::UnboundedReceiver<redis::PushInfo>,
    ),
    String,
> {
    let (push_tx, push_rx) = mpsc::unbounded_channel();
    let client = redis::Client::open(format!("redis://{addr}/?protocol=resp3")).map_err(|e| e.to_string())?;
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(Duration::from_secs(10)))
        .set_response_timeout(None)
        .set_push_sender(push_tx);
    let mut conn = tokio::time::timeout(
        Duration::from_secs(10),
        client.get_multiplexed_async_connection_with_config(&config),
    )
    .await
    .map_err(|_| "no answer in 10 s".to_string())?
    .map_err(|e| e.to_string())?;
    redis::cmd("CONFIG")
        .arg("SET")
        .arg("notify-keyspace-events")
        .arg("Eg$x")
        .query_async::<()>(&mut conn)
        .await
        .map_err(|e| format!("CONFIG SET notify-keyspace-events: {e}"))?;
    for (channel, _) in EVENTS {
        conn.subscribe(channel)
            .await
            .map_err(|e| format!("SUBSCRIBE {channel}: {e}"))?;
    }
    Ok((conn, push_rx))
}

/// A member's watcher whose connection ended while it is kept: the sentinels end every
/// client's connection when they change a member's role (`CLIENT KILL TYPE normal` and
/// `pubsub` after `REPLICAOF`), so it subscribes again, for up to this long. What the
/// member fired between the kill and the new subscription (a few milliseconds) is not
/// seen.
const RESUBSCRIBE_FOR: Duration = Duration::from_secs(10);

/// A member's new connection after its watcher's ended; `None` if none came in
/// [`RESUBSCRIBE_FOR`] or the watcher is no longer kept.
async fn resubscribe(
    at: &Watched,
    asks: &mpsc::UnboundedReceiver<(Back, oneshot::Sender<()>)>,
) -> Option<(
    redis::aio::MultiplexedConnection,
    mpsc::UnboundedReceiver<redis::PushInfo>,
)> {
    at.member.as_ref()?;
    let deadline = tokio::time::Instant::now() + RESUBSCRIBE_FOR;
    while !asks.is_closed() && tokio::time::Instant::now() < deadline {
        if let Ok(c) = subscribe(at.addr).await {
            return Some(c);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// The watcher's task: key events in order, the value of each `set`, and the
/// snapshots asked for, until the connection ends.
async fn watch(
    at: Watched,
    mut conn: redis::aio::MultiplexedConnection,
    mut pushes: mpsc::UnboundedReceiver<redis::PushInfo>,
    mut asks: mpsc::UnboundedReceiver<(Back, oneshot::Sender<()>)>,
    news: mpsc::UnboundedSender<News>,
) {
    // Events received but not yet handled, oldest first.
    let mut queue: std::collections::VecDeque<(String, Note)> = std::collections::VecDeque::new();
    loop {
        if let Some((key, note)) = queue.pop_front() {
            tell(&at, &mut conn, &mut pushes, &mut queue, key, note, &news).await;
            continue;
        }
        // Pushes first: what the node said before its connection ended is all told.
        tokio::select! {
            biased;
            push = pushes.recv() => match push {
                Some(p) if p.kind != redis::PushKind::Disconnection => queue.extend(event(p)),
                _ => match resubscribe(&at, &asks).await {
                    Some((c, p)) => (conn, pushes) = (c, p),
                    None => {
                        ended(&at, &asks);
                        return;
                    }
                },
            },
            ask = asks.recv() => {
                let Some((mut back, done)) = ask else { return };
                let reply = tokio::time::timeout(SNAPSHOT_TIMEOUT, redis::cmd("EVAL").arg(SNAPSHOT).arg(0).query_async::<redis::Value>(&mut conn)).await;
                // Events that came before the snapshot's reply are told first.
                drain(&mut pushes, &mut queue);
                while let Some((key, note)) = queue.pop_front() {
                    tell(&at, &mut conn, &mut pushes, &mut queue, key, note, &news).await;
                }
                back.after = match reply {
                    Ok(Ok(v)) => parse(&v),
                    _ => None,
                };
                let _ = news.send(News::Back(Box::new(back)));
                let _ = done.send(());
            }
        }
    }
}

/// Tells `news` of one key event (with the value a `set` wrote), unless `member` is a
/// replica now.
async fn tell(
    at: &Watched,
    conn: &mut redis::aio::MultiplexedConnection,
    pushes: &mut mpsc::UnboundedReceiver<redis::PushInfo>,
    queue: &mut std::collections::VecDeque<(String, Note)>,
    key: String,
    note: Note,
    news: &mpsc::UnboundedSender<News>,
) {
    if at.member.is_some() && is_replica(conn).await {
        return;
    }
    let value = match note {
        Note::Set => read_value(conn, pushes, queue, &key).await,
        _ => None,
    };
    let _ = news.send(News::Key {
        node: at.node,
        member: at.member.clone(),
        key,
        note,
        value,
    });
}

/// The watcher's connection ended. The node drops its [`Watcher`] before it kills the
/// master or shuts down; if it still holds it, the connection was cut under a serving
/// node (Redis closed it: an output buffer limit, a `CLIENT KILL`), and the node's key
/// events are missing from here on: say so (true when it did).
fn ended(at: &Watched, asks: &mpsc::UnboundedReceiver<(Back, oneshot::Sender<()>)>) -> bool {
    let cut = !asks.is_closed();
    if cut {
        let Watched { node, member, .. } = at;
        let who = member
            .as_ref()
            .map_or(format!("node {node}"), |m| format!("node {node} ({m})"));
        crate::errln!(
            "lockstorm: warning: {who}: its key watcher's connection ended while it served; \
             the history has no expired lines (and, for worker clients, no set or deleted lines) from it \
             until it restarts"
        );
    }
    cut
}

/// Whether the node on `conn` is a replica now (`ROLE`); no answer in time reads as
/// not one, so its event is kept.
async fn is_replica(conn: &mut redis::aio::MultiplexedConnection) -> bool {
    let reply = tokio::time::timeout(
        SNAPSHOT_TIMEOUT,
        redis::cmd("ROLE").query_async::<redis::Value>(conn),
    )
    .await;
    match reply {
        Ok(Ok(redis::Value::Array(items))) => matches!(
            items.first(),
            Some(redis::Value::BulkString(b)) if b.as_slice() == b"slave"
        ),
        _ => false,
    }
}

/// The value a `set` of `key` wrote: a `GET` on the watcher's connection, kept only if
/// no `del` or `expired` of `key` came between the `set` and the reply (those events
/// are queued after it, in order).
async fn read_value(
    conn: &mut redis::aio::MultiplexedConnection,
    pushes: &mut mpsc::UnboundedReceiver<redis::PushInfo>,
    queue: &mut std::collections::VecDeque<(String, Note)>,
    key: &str,
) -> Option<String> {
    let reply = tokio::time::timeout(
        SNAPSHOT_TIMEOUT,
        redis::cmd("GET").arg(key).query_async::<Option<Vec<u8>>>(conn),
    )
    .await;
    drain(pushes, queue);
    let removed = queue.iter().any(|(k, n)| k == key && *n != Note::Set);
    match reply {
        Ok(Ok(v)) if !removed => v.map(|bytes| text(&bytes)),
        _ => None,
    }
}

/// A value as the history writes it: the text itself, or, when it is not UTF-8 (the
/// Rust libraries' random bytes), lowercase hex, as their adapters give `worker_token`.
fn text(bytes: &[u8]) -> String {
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|b| format!("{b:02x}")).collect(),
    }
}

/// Moves the pushes received so far into `queue`.
fn drain(
    pushes: &mut mpsc::UnboundedReceiver<redis::PushInfo>,
    queue: &mut std::collections::VecDeque<(String, Note)>,
) {
    while let Ok(p) = pushes.try_recv() {
        if let Some(e) = event(p) {
            queue.push_back(e);
        }
    }
}

/// A key event from a push (`message`, channel, key).
fn event(p: redis::PushInfo) -> Option<(String, Note)> {
    if p.kind != redis::PushKind::Message {
        return None;
    }
    let text = |v: &redis::Value| redis::from_redis_value_ref::<String>(v).ok();
    let channel = text(p.data.first()?)?;
    let key = text(p.data.get(1)?)?;
    let note = EVENTS.iter().find(|(c, _)| *c == channel)?.1;
    Some((key, note))
}

/// Reads every key of the master at `addr` and stops every other client in the same
/// instant (`CLIENT PAUSE ALL` in one `MULTI`), just before it is killed; `None` if it
/// does not answer within a second.
pub async fn snapshot_before_kill(addr: SocketAddr) -> Option<Snapshot> {
    read_keys(addr, true).await
}

/// Reads every key of the node at `addr`, as a fault is about to strike it (a pause, a
/// clock fault); `None` if it does not answer within a second.
pub async fn snapshot(addr: SocketAddr) -> Option<Snapshot> {
    read_keys(addr, false).await
}

/// The snapshot script on a connection of its own, after `CLIENT PAUSE ALL` in the same
/// `MULTI` if `pause`; `None` if the node does not answer within a second.
async fn read_keys(addr: SocketAddr, pause: bool) -> Option<Snapshot> {
    let attempt = async {
        let client = redis::Client::open(format!("redis://{addr}/")).ok()?;
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        let mut pipe = redis::pipe();
        pipe.atomic();
        if pause {
            pipe.cmd("CLIENT").arg("PAUSE").arg(60_000).arg("ALL").ignore();
        }
        pipe.cmd("EVAL").arg(SNAPSHOT).arg(0);
        let (v,): (redis::Value,) = pipe.query_async(&mut conn).await.ok()?;
        parse(&v)
    };
    tokio::time::timeout(SNAPSHOT_TIMEOUT, attempt)
        .await
        .ok()
        .flatten()
}

/// The snapshot script's reply.
fn parse(v: &redis::Value) -> Option<Snapshot> {
    use redis::{from_redis_value_ref as from, Value as V};
    let V::Array(items) = v else { return None };
    let secs: u64 = from(items.first()?).ok()?;
    let micros: u64 = from(items.get(1)?).ok()?;
    let mut entries = Vec::with_capacity(items.len().saturating_sub(2));
    for item in &items[2..] {
        let V::Array(e) = item else { return None };
        let key: String = from(e.first()?).ok()?;
        let bytes = |v: &V| from::<Vec<u8>>(v).ok().map(|b| text(&b));
        let value = match e.get(1)? {
            V::Array(members) => Value::Members(members.iter().filter_map(bytes).collect()),
            other => Value::Str(bytes(other)?),
        };
        let pttl_ms: i64 = from(e.get(2)?).ok()?;
        entries.push(Entry { key, value, pttl_ms });
    }
    Some(Snapshot {
        time_us: secs * 1_000_000 + micros,
        entries,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::Persistence;
    use crate::real::server::{binary, Server};

    fn server(dir: &std::path::Path) -> Server {
        let binary = binary().unwrap_or_else(|e| panic!("{e}"));
        Server::start(0, &binary, dir.to_path_buf(), Persistence::None, None).unwrap()
    }

    async fn next_key(news: &mut mpsc::UnboundedReceiver<News>) -> (String, Note, Option<String>) {
        match tokio::time::timeout(Duration::from_secs(10), news.recv()).await {
            Ok(Some(News::Key { key, note, value, .. })) => (key, note, value),
            other => panic!("expected a key event, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_watcher_sees_sets_with_their_values_deletes_and_expiries_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let (tx, mut news) = mpsc::unbounded_channel();
        let w = Watcher::start(0, s.addr(), None, tx).await.unwrap();
        let client = redis::Client::open(format!("redis://{}/", s.addr())).unwrap();
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("SET")
            .arg("L0")
            .arg("aa")
            .arg("PX")
            .arg(100)
            .query_async(&mut c)
            .await
            .unwrap();
        let _: () = redis::cmd("SET")
            .arg("L1")
            .arg("bb")
            .query_async(&mut c)
            .await
            .unwrap();
        let _: i64 = redis::cmd("DEL").arg("L1").query_async(&mut c).await.unwrap();
        assert_eq!(
            next_key(&mut news).await,
            ("L0".into(), Note::Set, Some("aa".into()))
        );
        let (key, note, _) = next_key(&mut news).await;
        assert_eq!((key.as_str(), note), ("L1", Note::Set));
        assert_eq!(next_key(&mut news).await, ("L1".into(), Note::Deleted, None));
        // L0 expires by itself (Redis's active expiry runs 10 times a second).
        assert_eq!(next_key(&mut news).await, ("L0".into(), Note::Expired, None));

        // A value that is not UTF-8 (the Rust libraries' random bytes) reads as hex.
        let _: () = redis::cmd("SET")
            .arg("L2")
            .arg(&[0xffu8, 0x01][..])
            .query_async(&mut c)
            .await
            .unwrap();
        w.report(Back {
            node: 0,
            before: None,
            after: None,
            failover_lag: None,
        })
        .await;
        assert_eq!(
            next_key(&mut news).await,
            ("L2".into(), Note::Set, Some("ff01".into()))
        );
        match news.recv().await {
            Some(News::Back(b)) => {
                let after = b.after.expect("a snapshot");
                assert_eq!(
                    after.get("L2").map(|e| &e.value),
                    Some(&Value::Str("ff01".into()))
                );
                assert_eq!(after.get("L2").map(|e| e.pttl_ms), Some(-1));
            }
            other => panic!("expected the report, got {other:?}"),
        }
    }

    #[test]
    fn a_watcher_warns_of_its_end_only_while_its_node_still_holds_it() {
        let (ask, asks) = mpsc::unbounded_channel();
        let at = Watched {
            node: 3,
            addr: "127.0.0.1:1".parse().unwrap(),
            member: None,
        };
        assert!(
            ended(&at, &asks),
            "the node still holds the watcher: the cut is news"
        );
        drop(ask);
        assert!(!ended(&at, &asks), "the node let it go before the kill");
    }

    #[tokio::test]
    async fn a_snapshot_before_a_kill_reads_every_key_and_stops_other_clients() {
        let dir = tempfile::tempdir().unwrap();
        let s = server(dir.path());
        let client = redis::Client::open(format!("redis://{}/", s.addr())).unwrap();
        let mut c = client.get_multiplexed_async_connection().await.unwrap();
        let _: () = redis::cmd("SET")
            .arg("L0")
            .arg("aa")
            .arg("PX")
            .arg(60_000)
            .query_async(&mut c)
            .await
            .unwrap();
        let _: i64 = redis::cmd("ZADD")
            .arg("r_{L0}")
            .arg(1)
            .arg("t1")
            .query_async(&mut c)
            .await
            .unwrap();
        let snap = snapshot_before_kill(s.addr()).await.expect("a snapshot");
        let l0 = snap.get("L0").unwrap();
        assert_eq!(l0.value, Value::Str("aa".into()));
        assert!(l0.pttl_ms > 50_000 && l0.pttl_ms <= 60_000, "{l0:?}");
        assert!(snap.expire_at_us(l0).unwrap() > snap.time_us);
        assert_eq!(
            snap.get("r_{L0}").unwrap().value,
            Value::Members(vec!["t1".into()])
        );
        let paused = tokio::time::timeout(
            Duration::from_millis(300),
            redis::cmd("GET").arg("L0").query_async::<Option<String>>(&mut c),
        )
        .await;
        assert!(
            paused.is_err(),
            "another client's command must wait until the kill"
        );
    }
}
