//! Questions asked of a deployment's processes: where the master is, as a client's
//! Sentinel support finds it ([`discover_master`]), how far each data node's replication
//! has come ([`replication`]), and what a sentinel knows of the others ([`known`]).
//! Each is one short connection with a bounded wait, so a dead or stopped process is an
//! answer (`None`), not a hang.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::Duration;

/// How long one question waits for its answer.
pub const ASK_TIMEOUT: Duration = Duration::from_millis(1_000);

/// Sends `cmd` to `addr` on a connection of its own; the reply, or what went wrong.
pub async fn ask(addr: SocketAddr, cmd: &redis::Cmd, timeout: Duration) -> Result<redis::Value, String> {
    let attempt = async {
        let client = redis::Client::open(format!("redis://{addr}/")).map_err(|e| e.to_string())?;
        let mut conn = client
            .get_multiplexed_async_connection()
            .await
            .map_err(|e| e.to_string())?;
        cmd.query_async::<redis::Value>(&mut conn)
            .await
            .map_err(|e| e.to_string())
    };
    tokio::time::timeout(timeout, attempt)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {timeout:?}")))
}

/// The master's address as the first sentinel that knows it says
/// (`SENTINEL get-master-addr-by-name`), asking `sentinels` in order, each for at most
/// `timeout`: how jedis, Lettuce, go-redis and redis-py's `Sentinel` find it (redis-py
/// asks `SENTINEL MASTERS` and also skips a sentinel that thinks the master is down).
/// `None` if no sentinel answers with an address.
pub async fn discover_master(sentinels: &[SocketAddr], name: &str, timeout: Duration) -> Option<SocketAddr> {
    for &sentinel in sentinels {
        let mut cmd = redis::cmd("SENTINEL");
        cmd.arg("get-master-addr-by-name").arg(name);
        let Ok(reply) = ask(sentinel, &cmd, timeout).await else {
            continue;
        };
        if let Ok(Some((ip, port))) = redis::from_redis_value::<Option<(String, u16)>>(reply) {
            if let Ok(ip) = ip.parse::<std::net::IpAddr>() {
                return Some(SocketAddr::new(ip, port));
            }
        }
    }
    None
}

/// A data node's replication as `INFO replication` reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replication {
    /// `master` or `slave`.
    pub role: String,
    /// The replication stream offset this node has: `master_repl_offset` on a master,
    /// `slave_repl_offset` on a replica (what it has received and applied).
    pub offset: i64,
    /// A replica's master, as it was told (`master_host:master_port`).
    pub master: Option<SocketAddr>,
    /// A replica's `master_link_status` is `up`.
    pub link_up: bool,
    /// A master's replicas in state `online`.
    pub online_replicas: usize,
}

/// `INFO replication` of the node at `addr`, parsed; `None` if it does not answer.
pub async fn replication(addr: SocketAddr) -> Option<Replication> {
    let mut cmd = redis::cmd("INFO");
    cmd.arg("replication");
    let text: String = redis::from_redis_value(ask(addr, &cmd, ASK_TIMEOUT).await.ok()?).ok()?;
    parse_replication(&text)
}

fn parse_replication(text: &str) -> Option<Replication> {
    let fields: HashMap<&str, &str> = text
        .lines()
        .filter_map(|l| l.trim_end().split_once(':'))
        .collect();
    let role = fields.get("role")?.to_string();
    let offset_field = if role == "master" {
        "master_repl_offset"
    } else {
        "slave_repl_offset"
    };
    let master = match (fields.get("master_host"), fields.get("master_port")) {
        (Some(h), Some(p)) => format!("{h}:{p}").parse().ok(),
        _ => None,
    };
    Some(Replication {
        offset: fields.get(offset_field)?.parse().ok()?,
        master,
        link_up: fields.get("master_link_status") == Some(&"up"),
        online_replicas: fields
            .iter()
            .filter(|(k, v)| {
                k.starts_with("slave") && k[5..].parse::<u32>().is_ok() && v.contains("state=online")
            })
            .count(),
        role,
    })
}

/// What a sentinel knows of the deployment: replicas it would promote (seen, not down,
/// their link to the master up) and other sentinels it hears.
pub async fn known(sentinel: SocketAddr, name: &str) -> Result<(usize, usize), String> {
    let table = |sub: &'static str| {
        let mut cmd = redis::cmd("SENTINEL");
        cmd.arg(sub).arg(name);
        cmd
    };
    let replicas = entries(ask(sentinel, &table("REPLICAS"), ASK_TIMEOUT).await?)?;
    let sentinels = entries(ask(sentinel, &table("SENTINELS"), ASK_TIMEOUT).await?)?;
    let good = replicas
        .iter()
        .filter(|r| {
            r.get("flags").map(String::as_str) == Some("slave")
                && r.get("master-link-status").map(String::as_str) == Some("ok")
        })
        .count();
    let heard = sentinels
        .iter()
        .filter(|s| s.get("flags").map(String::as_str) == Some("sentinel"))
        .count();
    Ok((good, heard))
}

/// A `SENTINEL REPLICAS`-style reply (a list of flat field/value lists) as maps.
fn entries(v: redis::Value) -> Result<Vec<HashMap<String, String>>, String> {
    let rows: Vec<Vec<String>> = redis::from_redis_value(v).map_err(|e| e.to_string())?;
    Ok(rows
        .into_iter()
        .map(|row| {
            row.chunks(2)
                .filter_map(|kv| Some((kv.first()?.clone(), kv.get(1)?.clone())))
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_replication_gives_each_roles_offset() {
        let master = "# Replication\r\nrole:master\r\nconnected_slaves:1\r\n\
            slave0:ip=127.77.0.3,port=6001,state=online,offset=420,lag=0\r\n\
            master_repl_offset:434\r\n";
        let m = parse_replication(master).unwrap();
        assert_eq!((m.role.as_str(), m.offset, m.online_replicas), ("master", 434, 1));
        let replica = "role:slave\r\nmaster_host:127.77.0.2\r\nmaster_port:6000\r\n\
            master_link_status:up\r\nslave_repl_offset:420\r\nmaster_repl_offset:420\r\n";
        let r = parse_replication(replica).unwrap();
        assert_eq!((r.role.as_str(), r.offset, r.link_up), ("slave", 420, true));
        assert_eq!(r.master, Some("127.77.0.2:6000".parse().unwrap()));
    }
}
