//! A Redis Cluster of local processes (`[cluster]`), as people run one: M >= 3 masters
//! that share the 16384 hash slots, R >= 1 replicas per master, and no sentinel: the
//! masters vote a replica in when its master fails (`cluster-node-timeout`), and a master
//! that cannot reach a majority of masters for that long stops taking writes.
//!
//! The nodes sit in the same mesh as a Sentinel deployment's members (one loopback IP
//! each, relays on the announced ports), and so does each node's cluster bus: a node
//! announces its relay's data and bus ports (`cluster-announce-ip/-port/-bus-port`) and
//! listens itself on direct ones (`port`, `cluster-port`). Verified here (Redis 7.0.15):
//! a node's bus connections carry its own IP as the source, so a cut between two members
//! holds their gossip and their replication, both ways.
//!
//! [`form`] makes the cluster by hand, as `redis-cli --cluster create` does: each master
//! adds its slot range, every node meets redis0, each replica replicates its master. The
//! range that holds the lock's key (`L0`) goes to redis0, so that redis0 is the first
//! master of the lock, as in a Sentinel deployment. [`follow`] turns what each node says
//! of the cluster (`CLUSTER NODES`, asked of its direct port every [`POLL`]) into events:
//! a peer it suspects (`fail?`) or marks failed (`fail`), and its own promotion or
//! demotion.

use super::super::RealError;
use super::events::{EventKind, Instance, Role, SentinelEvent};
use super::member::Member;
use super::observe::{ask, ASK_TIMEOUT};
use crate::fault::Persistence;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::mpsc;

/// How often each node is asked what it sees of the cluster.
pub const POLL: Duration = Duration::from_millis(100);

/// Hash slots of a Redis Cluster.
const SLOTS: u16 = 16_384;

/// A cluster's shape and settings.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Settings {
    /// Masters (M >= 3: a failover needs the votes of a majority of masters, and with
    /// fewer one lost master is a lost majority).
    pub masters: usize,
    /// Replicas per master (R >= 1: a failover needs one to promote).
    pub replicas: usize,
    /// `cluster-node-timeout`: how long a node is unreachable before it is suspected, and
    /// how long a master cut from the majority keeps taking writes.
    pub node_timeout_ms: u64,
    /// As for a Sentinel deployment's data nodes (0: off, Redis's default).
    pub min_replicas_to_write: usize,
    pub min_replicas_max_lag_s: u64,
    /// What each node writes to disk.
    pub persistence: Persistence,
    /// The run's lock keys (`L0`, `L1`, ... and the probe's): their slots all go to
    /// redis0, so every lock lives on the master the faults strike. Empty: `L0` alone.
    #[serde(skip)]
    pub keys: Vec<String>,
}

impl Default for Settings {
    /// Three masters with one replica each; a node timeout short enough for a run of
    /// seconds (Redis's default is 15 s), long enough that a loaded machine does not fail
    /// over by itself.
    fn default() -> Settings {
        Settings {
            masters: 3,
            replicas: 1,
            node_timeout_ms: 2_000,
            min_replicas_to_write: 0,
            min_replicas_max_lag_s: 10,
            persistence: Persistence::None,
            keys: Vec::new(),
        }
    }
}

impl Settings {
    /// The settings, or a one-line error naming the first one that cannot work.
    pub fn check(&self) -> Result<(), RealError> {
        let bad = |why: String| Err(RealError::Cluster(why));
        if self.masters < 3 {
            return bad(format!(
                "{} master(s): at least 3 are needed, so that a majority of masters can vote a replica in while one is down",
                self.masters
            ));
        }
        if self.replicas < 1 {
            return bad("0 replicas per master: a failover needs at least 1 replica to promote".into());
        }
        if self.nodes() > 126 {
            return bad(format!(
                "{} masters with {} replicas each: a deployment has at most 126 members (each its own loopback IP below the clients')",
                self.masters, self.replicas
            ));
        }
        if self.node_timeout_ms == 0 {
            return bad("node_timeout_ms must be more than 0".into());
        }
        if self.min_replicas_to_write > self.replicas {
            return bad(format!(
                "min_replicas_to_write {} with {} replica(s) per master: every master would refuse every write",
                self.min_replicas_to_write, self.replicas
            ));
        }
        if self.min_replicas_to_write > 0 && self.min_replicas_max_lag_s == 0 {
            return bad("min_replicas_max_lag_s 0 turns min_replicas_to_write off in Redis; give a lag of 1 s or more".into());
        }
        Ok(())
    }

    /// Every node: M masters and M x R replicas.
    pub fn nodes(&self) -> usize {
        self.masters * (1 + self.replicas)
    }

    /// The master data member `i` replicates at the start (`None` for a master): masters
    /// are redis0..M, then master m's replicas are redis(M + m*R + j).
    pub fn master_of(&self, i: usize) -> Option<usize> {
        (i >= self.masters).then(|| (i - self.masters) / self.replicas)
    }
}

/// A cluster node's config: a scenario node's on the member's own IP, cluster-enabled,
/// announcing its relays.
pub fn config(
    s: &Settings,
    ip: std::net::Ipv4Addr,
    (announced, direct): (u16, u16),
    (bus_announced, bus_direct): (u16, u16),
) -> Vec<(String, String)> {
    let mut lines = super::data_config(ip, direct, s.persistence, None);
    let mut add = |k: &str, v: String| lines.push((k.to_string(), v));
    add("cluster-enabled", "yes".into());
    add("cluster-config-file", "nodes.conf".into());
    add("cluster-node-timeout", s.node_timeout_ms.to_string());
    add("cluster-port", bus_direct.to_string());
    add("cluster-announce-ip", ip.to_string());
    add("cluster-announce-port", announced.to_string());
    add("cluster-announce-bus-port", bus_announced.to_string());
    add("min-replicas-to-write", s.min_replicas_to_write.to_string());
    add("min-replicas-max-lag", s.min_replicas_max_lag_s.to_string());
    lines
}

/// The command's reply, or a cluster error naming the node and what it was asked.
async fn run(addr: SocketAddr, name: Member, cmd: &redis::Cmd) -> Result<redis::Value, RealError> {
    ask(addr, cmd, ASK_TIMEOUT)
        .await
        .map_err(|e| RealError::Cluster(format!("{name} ({addr}): {e}")))
}

fn cmd(args: &[&str]) -> redis::Cmd {
    let mut c = redis::cmd(args[0]);
    for a in &args[1..] {
        c.arg(*a);
    }
    c
}

/// One node of [`form`] and [`follow`]: its name, where it listens itself and where the
/// others reach it.
#[derive(Clone, Copy, Debug)]
pub struct Node {
    pub member: Member,
    pub direct: SocketAddr,
    pub announced: SocketAddr,
    pub bus_announced: u16,
}

/// Each master's slots, as ranges: the 16384 slots split evenly, the share that holds
/// `slots[0]` first (redis0's), and every other slot of `slots` moved to redis0 too.
fn assignment(masters: usize, slots: &[u16]) -> Vec<Vec<(u16, u16)>> {
    let m = masters as u32;
    let share = |slot: u16| (u32::from(slot) * m / u32::from(SLOTS)) as usize;
    let first = slots.first().map_or(0, |&s| share(s));
    let owner = |slot: u16| match slots.contains(&slot) {
        true => 0,
        false => (share(slot) + masters - first) % masters,
    };
    let mut out = vec![Vec::<(u16, u16)>::new(); masters];
    for slot in 0..SLOTS {
        let ranges = &mut out[owner(slot)];
        match ranges.last_mut() {
            Some((_, hi)) if *hi + 1 == slot => *hi = slot,
            _ => ranges.push((slot, slot)),
        }
    }
    out
}

/// Makes the cluster of the started `nodes` (masters first), as `redis-cli --cluster
/// create` would, and waits until every node agrees on it: every slot served, every
/// replica attached and in sync, every node aware of every other's role. Returns the slot
/// of the first lock's key.
pub async fn form(s: &Settings, nodes: &[Node], deadline: tokio::time::Instant) -> Result<u16, RealError> {
    let first = nodes[0];
    let keys = match s.keys.is_empty() {
        true => vec!["L0".to_string()],
        false => s.keys.clone(),
    };
    let mut slots = Vec::with_capacity(keys.len());
    for key in &keys {
        let reply = run(first.direct, first.member, &cmd(&["CLUSTER", "KEYSLOT", key])).await?;
        slots.push(
            redis::from_redis_value::<u16>(reply)
                .map_err(|e| RealError::Cluster(format!("CLUSTER KEYSLOT {key}: {e}")))?,
        );
    }
    for (node, ranges) in nodes.iter().zip(assignment(s.masters, &slots)) {
        let mut add = redis::cmd("CLUSTER");
        add.arg("ADDSLOTSRANGE");
        for (lo, hi) in ranges {
            add.arg(lo).arg(hi);
        }
        run(node.direct, node.member, &add).await?;
    }
    let slot = slots[0];
    for node in &nodes[1..] {
        let (ip, port, bus) = (
            first.announced.ip().to_string(),
            first.announced.port().to_string(),
            first.bus_announced.to_string(),
        );
        run(
            node.direct,
            node.member,
            &cmd(&["CLUSTER", "MEET", &ip, &port, &bus]),
        )
        .await?;
    }
    settle(
        nodes,
        deadline,
        "knows every node and every slot is served",
        |v| v.nodes.len() == nodes.len() && v.state_ok,
    )
    .await?;
    let mut ids = Vec::with_capacity(s.masters);
    for node in &nodes[..s.masters] {
        let id: String =
            redis::from_redis_value(run(node.direct, node.member, &cmd(&["CLUSTER", "MYID"])).await?)
                .map_err(|e| RealError::Cluster(format!("CLUSTER MYID: {e}")))?;
        ids.push(id);
    }
    for (i, node) in nodes.iter().enumerate().skip(s.masters) {
        let master = &ids[s.master_of(i).expect("a replica")];
        run(node.direct, node.member, &cmd(&["CLUSTER", "REPLICATE", master])).await?;
    }
    let replicas = s.masters * s.replicas;
    settle(nodes, deadline, "sees every replica attached", |v| {
        v.state_ok && v.nodes.values().filter(|n| n.replica).count() == replicas
    })
    .await?;
    for node in &nodes[..s.masters] {
        loop {
            let online = super::observe::replication(node.direct)
                .await
                .map_or(0, |r| r.online_replicas);
            if online == s.replicas {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(RealError::Cluster(format!(
                    "{online} of {} replicas in sync with {} in time",
                    s.replicas, node.member
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    Ok(slot)
}

/// Waits until `ok` holds for every node's view, or the deadline.
async fn settle(
    nodes: &[Node],
    deadline: tokio::time::Instant,
    what: &str,
    ok: impl Fn(&View) -> bool,
) -> Result<(), RealError> {
    for node in nodes {
        loop {
            let view = view(node.direct, nodes).await;
            if view.as_ref().is_some_and(&ok) {
                break;
            }
            if tokio::time::Instant::now() > deadline {
                return Err(RealError::Cluster(format!(
                    "{} never {what} (it sees {view:?})",
                    node.member
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    Ok(())
}

/// What one node says of the cluster (`CLUSTER NODES` and `CLUSTER INFO`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct View {
    /// `cluster_state:ok`: this node serves its slots (a master cut from the majority
    /// says `fail` after the node timeout, and refuses).
    pub state_ok: bool,
    /// The node itself.
    pub myself: Option<Member>,
    /// Each node it knows, by member.
    pub nodes: BTreeMap<Member, Seen>,
}

/// One node as another sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Seen {
    /// It replicates a master (its master field is a node id, not `-`).
    pub replica: bool,
    /// That master, when it is a member this node knows.
    pub master: Option<Member>,
    /// Suspected (`fail?`): unreachable for the node timeout, in this node's view.
    pub pfail: bool,
    /// Failed (`fail`): a majority of masters agreed.
    pub fail: bool,
    /// The slot ranges it serves (none for a replica).
    pub slots: Vec<(u16, u16)>,
}

/// What the node at `direct` says of the cluster; `None` if it does not answer.
pub async fn view(direct: SocketAddr, nodes: &[Node]) -> Option<View> {
    let text: String =
        redis::from_redis_value(ask(direct, &cmd(&["CLUSTER", "NODES"]), ASK_TIMEOUT).await.ok()?).ok()?;
    let info: String =
        redis::from_redis_value(ask(direct, &cmd(&["CLUSTER", "INFO"]), ASK_TIMEOUT).await.ok()?).ok()?;
    let mut v = parse_nodes(&text, |addr| {
        nodes.iter().find(|n| n.announced == addr).map(|n| n.member)
    });
    v.state_ok = info.lines().any(|l| l.trim_end() == "cluster_state:ok");
    Some(v)
}

/// `CLUSTER NODES` as a view, members found by their announced address (`ip:port@bus`).
fn parse_nodes(text: &str, member: impl Fn(SocketAddr) -> Option<Member>) -> View {
    let mut by_id: BTreeMap<&str, Member> = BTreeMap::new();
    let mut rows = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 {
            continue;
        }
        // A node being met (`handshake`) or with no address yet (`noaddr`) is no member's
        // row, whatever address it shows.
        if f[2]
            .split(',')
            .any(|flag| flag == "handshake" || flag == "noaddr")
        {
            continue;
        }
        let addr = f[1].split(['@', ',']).next().and_then(|a| a.parse().ok());
        let Some(m) = addr.and_then(&member) else { continue };
        by_id.insert(f[0], m);
        rows.push((m, f));
    }
    let mut v = View::default();
    for (m, f) in rows {
        let flags: Vec<&str> = f[2].split(',').collect();
        if flags.contains(&"myself") {
            v.myself = Some(m);
        }
        let slots = f[8..]
            .iter()
            .filter(|r| !r.starts_with('['))
            .filter_map(|r| match r.split_once('-') {
                Some((lo, hi)) => Some((lo.parse().ok()?, hi.parse().ok()?)),
                None => r.parse().ok().map(|s| (s, s)),
            })
            .collect();
        let seen = Seen {
            replica: f[3] != "-",
            master: by_id.get(f[3]).copied(),
            pfail: flags.contains(&"fail?"),
            fail: flags.contains(&"fail"),
            slots,
        };
        v.nodes.insert(m, seen);
    }
    v
}

impl View {
    /// The master that serves `slot` in this view (not one marked failed).
    pub fn owner(&self, slot: u16) -> Option<Member> {
        self.nodes
            .iter()
            .find(|(_, s)| !s.fail && s.slots.iter().any(|&(lo, hi)| (lo..=hi).contains(&slot)))
            .map(|(&m, _)| m)
    }
}

/// The master of `slot` as lockstorm finds it: `CLUSTER SLOTS` asked of `seeds` in order
/// (each for at most `timeout`), the first answer that names one. Clients ask from their
/// own IPs instead (`driver::conn`), so a cut keeps them from asking a node too.
pub async fn slot_master(seeds: &[SocketAddr], slot: u16, timeout: Duration) -> Option<SocketAddr> {
    for &seed in seeds {
        if let Some(a) = ask(seed, &slots_cmd(), timeout)
            .await
            .ok()
            .and_then(|r| slot_in(r, slot))
        {
            return Some(a);
        }
    }
    None
}

/// `CLUSTER SLOTS`.
pub fn slots_cmd() -> redis::Cmd {
    cmd(&["CLUSTER", "SLOTS"])
}

/// The master that serves `slot` in a `CLUSTER SLOTS` reply: a list of
/// `[lo, hi, [ip, port, id, ...], replicas...]`.
pub fn slot_in(reply: redis::Value, slot: u16) -> Option<SocketAddr> {
    let ranges = redis::from_redis_value::<Vec<Vec<redis::Value>>>(reply).ok()?;
    ranges.into_iter().find_map(|r| {
        let lo = redis::from_redis_value_ref::<u16>(r.first()?).ok()?;
        let hi = redis::from_redis_value_ref::<u16>(r.get(1)?).ok()?;
        if !(lo..=hi).contains(&slot) {
            return None;
        }
        // The master entry: ip, port, node id, and since 7.0 a map of extras.
        let entry = redis::from_redis_value_ref::<Vec<redis::Value>>(r.get(2)?).ok()?;
        let ip = redis::from_redis_value_ref::<String>(entry.first()?).ok()?;
        let port = redis::from_redis_value_ref::<u16>(entry.get(1)?).ok()?;
        Some(SocketAddr::new(ip.parse().ok()?, port))
    })
}

/// Asks every node what it sees every [`POLL`], and sends what changed as events, stamped
/// with the time since `origin`, until the receiver is gone:
/// - `+sdown` / `-sdown`: the node starts / stops suspecting a peer (`fail?`);
/// - `+odown` / `-odown`: it marks a peer failed / clears the mark (`fail`);
/// - `+switch-master`: the node itself became a master with slots (its old master in
///   `from`), said by the promoted node;
/// - `+convert-to-slave`: the node itself, a master before, now replicates;
/// - its own `cluster_state` turning `fail` or back to `ok` ([`EventKind::ClusterState`]).
///
/// A node that does not answer (down, stopped, or itself slow) says nothing until it
/// does again.
pub async fn follow(
    nodes: Vec<Node>,
    origin: tokio::time::Instant,
    tx: mpsc::UnboundedSender<SentinelEvent>,
) {
    let mut last: BTreeMap<Member, View> = BTreeMap::new();
    let mut tick = tokio::time::interval(POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        // Each view stamped when its node answered.
        let asks = nodes
            .iter()
            .map(|n| async { (view(n.direct, &nodes).await, origin.elapsed()) });
        let views = futures_util::future::join_all(asks).await;
        for (n, (v, at)) in nodes.iter().zip(views) {
            let Some(v) = v else { continue };
            let before = last.insert(n.member, v.clone());
            for e in changes(n.member, before.as_ref(), &v) {
                let addr = |m: Member| {
                    nodes
                        .iter()
                        .find(|x| x.member == m)
                        .map_or(n.announced, |x| x.announced)
                };
                let role = |m: Member| match v.nodes.get(&m).is_some_and(|s| !s.replica) {
                    true => Role::Master,
                    false => Role::Replica,
                };
                let (kind, about) = e;
                let event = SentinelEvent {
                    sentinel: n.member,
                    at,
                    instance: Instance {
                        role: role(about),
                        addr: addr(about),
                        member: Some(about),
                    },
                    text: format!("{} {kind:?} {about}", n.member),
                    kind: match kind {
                        EventKind::SwitchMaster { from } => EventKind::SwitchMaster {
                            from: Instance {
                                addr: from.member.map_or(from.addr, addr),
                                ..from
                            },
                        },
                        k => k,
                    },
                };
                if tx.send(event).is_err() {
                    return;
                }
            }
        }
    }
}

/// What changed in `observer`'s view between two polls, as (event, about whom).
fn changes(observer: Member, before: Option<&View>, now: &View) -> Vec<(EventKind, Member)> {
    let Some(before) = before else { return Vec::new() };
    let mut out = Vec::new();
    if before.state_ok != now.state_ok {
        out.push((EventKind::ClusterState { ok: now.state_ok }, observer));
    }
    for (&m, s) in &now.nodes {
        let Some(b) = before.nodes.get(&m) else { continue };
        if m != observer {
            for (was, is, on, off) in [
                (b.pfail, s.pfail, EventKind::Sdown, EventKind::SdownEnd),
                (b.fail, s.fail, EventKind::Odown, EventKind::OdownEnd),
            ] {
                match (was, is) {
                    (false, true) => out.push((on, m)),
                    (true, false) => out.push((off, m)),
                    _ => {}
                }
            }
            continue;
        }
        match (b.replica, s.replica) {
            (true, false) if !s.slots.is_empty() => {
                let from = Instance {
                    role: Role::Master,
                    addr: SocketAddr::from(([0, 0, 0, 0], 0)),
                    member: b.master,
                };
                out.push((EventKind::SwitchMaster { from }, m));
            }
            (false, true) => out.push((EventKind::ConvertToSlave, m)),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(a: SocketAddr) -> Option<Member> {
        (7000..7004)
            .contains(&a.port())
            .then(|| Member::Data(usize::from(a.port() - 7000)))
    }

    const NODES: &str = "\
a1 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-5460
b2 127.0.0.1:7001@17001 master,fail? - 0 0 2 connected 5461-10922 [5462->-x]
h7 127.0.0.1:7002@17002 handshake - 0 0 0 connected
c3 127.0.0.1:7002@17002 master - 0 0 3 connected 10923-16383
d4 127.0.0.1:7003@17003 slave b2 0 0 2 connected
x9 127.0.0.9:9999@19999 master,fail - 0 0 9 disconnected
";

    #[test]
    fn cluster_nodes_is_read_as_a_view_of_members() {
        let v = parse_nodes(NODES, member);
        assert_eq!(v.myself, Some(Member::Data(0)));
        assert_eq!(v.nodes.len(), 4, "the unknown address is no member: {v:?}");
        let b = &v.nodes[&Member::Data(1)];
        assert!(b.pfail && !b.fail);
        assert_eq!(b.slots, vec![(5461, 10922)]);
        assert_eq!(v.nodes[&Member::Data(3)].master, Some(Member::Data(1)));
        assert!(v.nodes[&Member::Data(3)].replica && !v.nodes[&Member::Data(2)].replica);
        assert!(
            v.nodes[&Member::Data(2)].slots == vec![(10923, 16383)],
            "the handshake row is skipped"
        );
        assert_eq!(v.owner(7000), Some(Member::Data(1)));
        assert_eq!(v.owner(0), Some(Member::Data(0)));
    }

    #[test]
    fn a_promotion_and_a_suspicion_are_events() {
        let before = parse_nodes(NODES, member);
        let mut now = before.clone();
        now.myself = Some(Member::Data(3));
        let d = now.nodes.get_mut(&Member::Data(3)).unwrap();
        d.replica = false;
        d.master = None;
        d.slots = vec![(5461, 10922)];
        now.nodes.get_mut(&Member::Data(1)).unwrap().fail = true;
        let got = changes(Member::Data(3), Some(&before), &now);
        assert_eq!(got.len(), 2, "{got:?}");
        assert_eq!(got[0], (EventKind::Odown, Member::Data(1)));
        assert!(
            matches!(&got[1], (EventKind::SwitchMaster { from }, Member::Data(3)) if from.member == Some(Member::Data(1)))
        );
        // The first poll has nothing to compare with.
        assert!(changes(Member::Data(3), None, &now).is_empty());
    }

    #[test]
    fn every_lock_slot_goes_to_redis0_and_every_slot_is_served_once() {
        // L0's slot in the middle share; L1's in the first; 16383 in the last.
        let a = assignment(3, &[7495, 100, 16383]);
        let has = |m: usize, slot: u16| a[m].iter().any(|&(lo, hi)| (lo..=hi).contains(&slot));
        for slot in [7495, 100, 16383, 5462] {
            assert!(has(0, slot), "{slot}: {a:?}");
        }
        assert!(has(2, 0) && has(1, 10923), "the other shares rotate: {a:?}");
        for slot in 0..SLOTS {
            assert_eq!((0..3).filter(|&m| has(m, slot)).count(), 1, "slot {slot}: {a:?}");
        }
        assert_eq!(assignment(4, &[0])[0], vec![(0, 4095)]);
    }

    #[test]
    fn impossible_settings_are_refused_in_one_line() {
        let error = |change: fn(&mut Settings)| {
            let mut s = Settings::default();
            change(&mut s);
            s.check().expect_err("refused").to_string()
        };
        for (e, needle) in [
            (error(|s| s.masters = 2), "2 master(s): at least 3"),
            (error(|s| s.replicas = 0), "0 replicas per master"),
            (error(|s| s.min_replicas_to_write = 2), "refuse every write"),
            (error(|s| s.masters = 64), "at most 126 members"),
        ] {
            assert!(e.starts_with("cluster: ") && e.contains(needle), "{e}");
        }
        Settings::default().check().unwrap();
        assert_eq!(Settings::default().master_of(4), Some(1));
        assert_eq!(Settings::default().master_of(2), None);
    }
}
