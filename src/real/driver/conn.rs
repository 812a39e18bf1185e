//! The driver's I/O: connections through the proxies and requests.
//! Everything here runs as tokio tasks beside the driver's loop and talks back to it
//! only through the reply channel, so the loop never waits on a socket.
//!
//! A `[sentinel]` node is reached as redis-py's `Sentinel.master_for` reaches it
//! ([`Route::Sentinel`]): a connection asks the sentinels, in order, for the master's
//! address and connects there, from the client's own IP; a broken connection, a request
//! with no answer in time, or a `READONLY` reply (a demoted master) empties the slot, so
//! the next request asks again. A `[cluster]` node is reached as a cluster client reaches
//! the master of the lock's slot ([`Route::Cluster`]). The algorithm's state machine sees
//! a node and its replies, never the sentinels or the slot map.

use crate::algorithm::ReqId;
use crate::command::{LockId, Reply};
use crate::real::{wire, RealError};
use redis::aio::MultiplexedConnection;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// One connection slot per (client, node), with the address it is connected to (for a
/// Sentinel deployment, the master it found); emptied when the connection breaks.
pub(crate) type Slot = Arc<Mutex<Option<(MultiplexedConnection, SocketAddr)>>>;

/// Where a client's requests to a node go.
#[derive(Clone, Debug)]
pub(crate) enum Route {
    /// This address (the node's proxy for the client).
    Direct(SocketAddr),
    /// The master the sentinels name when the connection is made, connected to from the
    /// client's own IP in the deployment (`source`), so a partition can cut one client.
    Sentinel {
        sentinels: Arc<[SocketAddr]>,
        name: Arc<str>,
        source: std::net::Ipv4Addr,
    },
    /// A Redis Cluster: the master of the lock's `slot` as the seed nodes answer
    /// `CLUSTER SLOTS` when the connection is made, connected to from the client's own
    /// IP; a `MOVED` reply is followed once, to the node it names, as cluster clients do.
    Cluster {
        seeds: Arc<[SocketAddr]>,
        slot: u16,
        source: std::net::Ipv4Addr,
    },
}

impl Route {
    /// The address to connect to now; `None` if no sentinel names a master.
    async fn resolve(&self, timeout: Duration) -> Option<SocketAddr> {
        match self {
            Route::Direct(a) => Some(*a),
            Route::Sentinel { sentinels, name, .. } => {
                crate::real::deployment::observe::discover_master(sentinels, name, timeout).await
            }
            Route::Cluster { seeds, slot, .. } => {
                // Every seed at once, from the client's own IP, as a cluster client
                // refreshes its slot map; the first that names the slot's master wins. A
                // node the client is cut from does not answer, and holds up no other.
                use crate::real::deployment::cluster::{slot_in, slots_cmd};
                use futures_util::StreamExt;
                let mut asks: futures_util::stream::FuturesUnordered<_> = seeds
                    .iter()
                    .map(|&seed| async move {
                        let asked = async {
                            let (mut conn, _) = connect(&Slot::default(), self, seed, timeout).await?;
                            slots_cmd().query_async::<redis::Value>(&mut conn).await.ok()
                        };
                        let reply = tokio::time::timeout(timeout, asked).await.ok().flatten();
                        reply.and_then(|r| slot_in(r, *slot))
                    })
                    .collect();
                while let Some(answer) = asks.next().await {
                    if answer.is_some() {
                        return answer;
                    }
                }
                None
            }
        }
    }

    /// The IP a deployment's client connects from (`None`: lockstorm's own).
    fn source(&self) -> Option<std::net::Ipv4Addr> {
        match self {
            Route::Direct(_) => None,
            Route::Sentinel { source, .. } | Route::Cluster { source, .. } => Some(*source),
        }
    }
}

/// A reply on its way from a request task to the driver.
pub(crate) struct Answer {
    pub(crate) client: usize,
    pub(crate) req: ReqId,
    /// The node and command it answers, for the history's `node` lines (`None` where
    /// nobody records them: `lockstorm worker`).
    pub(crate) sent: Option<(crate::command::NodeId, crate::command::Cmd)>,
    pub(crate) reply: Reply,
    /// The address that answered (set by [`request`]).
    pub(crate) served_by: Option<SocketAddr>,
}

/// Deletes the scenario's lock keys on a server someone else runs, left from earlier runs.
pub(crate) async fn clear_locks(node: usize, addr: SocketAddr, locks: u32) -> Result<(), RealError> {
    let err = |e: redis::RedisError| RealError::Node {
        node,
        addr: addr.to_string(),
        message: e.to_string(),
    };
    let client = redis::Client::open(format!("redis://{addr}/")).map_err(err)?;
    let mut conn = client.get_multiplexed_async_connection().await.map_err(err)?;
    let keys: Vec<String> = (0..locks.min(1_000)).map(|l| LockId(l).to_string()).collect();
    redis::cmd("DEL")
        .arg(&keys)
        .query_async::<i64>(&mut conn)
        .await
        .map_err(err)?;
    Ok(())
}

/// The slot's connection and where it leads, connecting first if there is none.
pub(crate) async fn connection(
    slot: &Slot,
    route: &Route,
    timeout: Duration,
) -> Option<(MultiplexedConnection, SocketAddr)> {
    if let Some(c) = slot.lock().expect("slot lock").clone() {
        return Some(c);
    }
    let addr = route.resolve(timeout).await?;
    connect(slot, route, addr, timeout).await
}

/// Connects the slot to `addr`, from the route's source IP if it has one.
async fn connect(
    slot: &Slot,
    route: &Route,
    addr: SocketAddr,
    timeout: Duration,
) -> Option<(MultiplexedConnection, SocketAddr)> {
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(timeout))
        // Requests are timed out by the algorithm, not by the connection.
        .set_response_timeout(None);
    let conn = match route.source() {
        None => {
            let client = redis::Client::open(format!("redis://{addr}/")).ok()?;
            client
                .get_multiplexed_async_connection_with_config(&config)
                .await
                .ok()?
        }
        Some(source) => {
            // From the client's own IP: bound before connecting.
            let socket = tokio::net::TcpSocket::new_v4().ok()?;
            socket.bind(SocketAddr::from((source, 0))).ok()?;
            let stream = tokio::time::timeout(timeout, socket.connect(addr))
                .await
                .ok()?
                .ok()?;
            let _ = stream.set_nodelay(true);
            let (conn, driver) = tokio::time::timeout(
                timeout,
                MultiplexedConnection::new_with_config(
                    &redis::RedisConnectionInfo::default(),
                    stream,
                    config,
                ),
            )
            .await
            .ok()?
            .ok()?;
            tokio::spawn(driver);
            conn
        }
    };
    *slot.lock().expect("slot lock") = Some((conn.clone(), addr));
    Some((conn, addr))
}

/// `cmd` on `conn`. A node restarted a moment ago may not have its scripts back yet: they
/// are loaded on this connection and the command retried once, as script-caching clients
/// do.
async fn query(conn: &mut MultiplexedConnection, cmd: &redis::Cmd) -> redis::RedisResult<redis::Value> {
    let result = cmd.query_async::<redis::Value>(conn).await;
    let no_script =
        matches!(&result, Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript));
    if no_script && wire::load_scripts(conn).await.is_ok() {
        return cmd.query_async::<redis::Value>(conn).await;
    }
    result
}

/// One request: its reply goes to the driver; a broken connection or no answer sends
/// nothing (the algorithm's timeout makes it an unknown outcome).
pub(crate) async fn request(
    slot: Slot,
    route: Route,
    cmd: redis::Cmd,
    lifetime: Duration,
    tx: mpsc::UnboundedSender<Answer>,
    mut reply: Answer,
) {
    let attempt = async {
        let (mut conn, addr) = connection(&slot, &route, lifetime).await?;
        reply.served_by = Some(addr);
        let mut result = query(&mut conn, &cmd).await;
        // A cluster node that does not serve the key names the one that does: follow it
        // once, and keep that connection (a replica, an old master after a failover, or
        // the probe's lock in another slot).
        let moved = match &result {
            Err(e) if matches!(route, Route::Cluster { .. }) => e
                .redirect_node()
                .filter(|_| e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::Moved))
                .and_then(|(a, _)| a.parse::<SocketAddr>().ok()),
            _ => None,
        };
        if let Some(to) = moved {
            *slot.lock().expect("slot lock") = None;
            let (mut conn, addr) = connect(&slot, &route, to, lifetime).await?;
            reply.served_by = Some(addr);
            result = query(&mut conn, &cmd).await;
        }
        match result {
            Ok(v) => Some(wire::from_redis(&v)),
            // A master the sentinels demoted: ask them again next time, as redis-py's
            // SentinelManagedConnection does (it disconnects on READONLY).
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::ReadOnly) => {
                *slot.lock().expect("slot lock") = None;
                Some(Reply::Error)
            }
            Err(e) if matches!(e.kind(), redis::ErrorKind::Server(_)) => Some(Reply::Error),
            Err(_) => {
                *slot.lock().expect("slot lock") = None;
                None
            }
        }
    };
    match tokio::time::timeout(lifetime, attempt).await {
        Ok(Some(r)) => {
            reply.reply = r;
            let _ = tx.send(reply);
        }
        // No answer in time from a master found through the sentinels: drop the
        // connection, so the next request asks them again (redis-py's socket timeout
        // disconnects, and its SentinelManagedConnection rediscovers the master).
        Err(_) if route.source().is_some() => *slot.lock().expect("slot lock") = None,
        _ => {}
    }
}
