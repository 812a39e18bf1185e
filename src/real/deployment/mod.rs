//! A Redis Sentinel deployment of local processes, as people run it: a master, R
//! replicas that follow it by real Redis replication (`replicaof`), and S >= 3 sentinels
//! (`redis-server --sentinel`) that watch it and decide the failovers. lockstorm never
//! promotes here: it starts the processes, breaks them (kill -9, restart, SIGSTOP,
//! per-pair cuts) and records what the sentinels did ([`events`]) and how far each data
//! node's replication came ([`observe::replication`]). Not yet a scenario topology: the
//! driver and scenarios plug in next (docs/sentinel.md).
//!
//! # Addressing, and why every link can be cut on its own
//!
//! Each process ([`Member`]) gets a loopback IP of its own (127.77.d.k: all of 127/8
//! routes to `lo` on Linux, no setup needed) and two ports on it: a *direct* port, where
//! the process listens, and an *announced* port, where a front relay of lockstorm's
//! listens ([`mesh`]). Every address a process learns points at a relay:
//! - a replica is started with `replicaof <master IP> <master's announced port>`;
//! - a data node announces itself with `replica-announce-ip/-port`, so the master's
//!   `INFO replication`, from which the sentinels discover replicas, lists the relay;
//! - a sentinel announces `sentinel announce-ip/-port` in its hello messages, from which
//!   the other sentinels discover it;
//! - the sentinels monitor the master at its relay, and after a failover tell everyone
//!   the promoted replica's announced address, which is a relay too.
//!
//! Each process also binds its outgoing connections to its own IP (`bind-source-addr`),
//! so a relay knows who connects by the source IP, and the link between two members (an
//! unordered pair of IPs) can be cut alone: client↔master, sentinel↔master,
//! replica↔master, sentinel↔sentinel ([`Deployment::cut`]). A cut holds the bytes both
//! ways until it heals, as the scenario nodes' proxy does. lockstorm's own observers
//! (event subscriptions, `INFO`, `ROLE`) use the direct ports, which nothing else knows
//! and no cut reaches.
//!
//! Verified on this machine (Redis 7.0.15, Linux), by hand and by tests/real_sentinel.rs:
//! - `bind-source-addr` exists in 7.0 and is used by a replica's connection to its master
//!   and by a sentinel's connections to masters, replicas and sentinels (`ss -tn` shows
//!   127.0.0.k as the source; without it the source is 127.0.0.1 even when the process
//!   binds another IP);
//! - such connections from 127.0.0.k are refused by `protected-mode yes` (it only trusts
//!   127.0.0.1 and ::1), so every member runs with `protected-mode no`;
//! - the master's `INFO replication` and `SENTINEL REPLICAS` show the announced address,
//!   and `SENTINEL SENTINELS` the sentinels' announced ones;
//! - a relay on the announced port sees each member's own IP as the peer, so a cut
//!   between a sentinel and the master makes that sentinel alone say `+sdown`.
//!
//! Clients connect from IPs of their own too ([`client_ip`]), so a cut can take one client
//! off one member: the built-in clients bind their sockets before `connect`; a worker
//! runs with an `LD_PRELOAD`ed `connect` that binds first ([`source`], beside the
//! faketime shim).
//!
//! Every process is started through [`crate::children`] like every redis-server of
//! lockstorm's, on the thread that calls [`Deployment::start`]: it is killed when the
//! deployment is dropped, on an error while starting, on an interrupt, and by the kernel
//! when lockstorm dies (parent-death signal). Call it from a thread that outlives the
//! deployment (the driver's, a test's).

pub mod cluster;
pub mod events;
pub mod handle;
pub mod member;
pub mod mesh;
pub mod observe;
pub mod settings;
pub mod source;

pub use events::{EventKind, Instance, Role, SentinelEvent};
pub use handle::{DeploymentHandle, DeploymentOp, Entry};
pub use member::Member;
pub use observe::Replication;
pub use settings::Settings;

use super::server::{self, free_port};
use super::RealError;
use member::MemberProcess;
use mesh::Mesh;
use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// How long the deployment may take to come together: replicas in sync, then every
/// sentinel aware of every replica and of the other sentinels (hello messages go out
/// every 2 s).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(30);

/// A member's ports: announced and direct, and a cluster node's bus ports likewise.
type Ports = (u16, u16, Option<(u16, u16)>);

/// What a deployment is made of.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// A master, its replicas and the sentinels that watch it.
    Sentinel(Settings),
    /// A Redis Cluster: masters that share the slots, each with replicas ([`cluster`]).
    Cluster(cluster::Settings),
}

impl Shape {
    fn check(&self) -> Result<(), RealError> {
        match self {
            Shape::Sentinel(s) => s.check(),
            Shape::Cluster(c) => c.check(),
        }
    }

    /// Every member, data nodes first.
    fn members(&self) -> Vec<Member> {
        match self {
            Shape::Sentinel(s) => (0..=s.replicas)
                .map(Member::Data)
                .chain((0..s.sentinels).map(Member::Sentinel))
                .collect(),
            Shape::Cluster(c) => (0..c.nodes()).map(Member::Data).collect(),
        }
    }
}

/// A running deployment. Dropping it kills every process.
pub struct Deployment {
    shape: Shape,
    /// A cluster's slot of the lock's key (`L0`), which redis0 serves at the start.
    slot: u16,
    /// The third byte of every IP of the deployment (members and clients).
    subnet: u8,
    /// The data nodes (0..=R) then the sentinels.
    processes: Vec<MemberProcess>,
    mesh: Mesh,
    events: Option<mpsc::UnboundedReceiver<SentinelEvent>>,
    followers: Vec<AbortHandle>,
}

/// The third byte of the next deployment's IPs (127.77.x.k), seeded from the process id
/// so that two lockstorm processes start apart; only for reading logs, since every
/// member's port is its own anyway.
static NEXT_SUBNET: AtomicU32 = AtomicU32::new(u32::MAX);

/// The most clients a deployment gives IPs of their own ([`client_ip`]).
pub const MAX_CLIENTS: usize = 120;

/// Client `c`'s IP in the deployment of `subnet`: 127.77.subnet.(128 + c), above every
/// member's (127.77.subnet.(2 + k)).
pub fn client_ip(subnet: u8, c: usize) -> Ipv4Addr {
    assert!(
        c < MAX_CLIENTS,
        "client {c}: a deployment gives IPs to {MAX_CLIENTS} clients"
    );
    Ipv4Addr::new(127, 77, subnet, (128 + c) as u8)
}

/// The client whose IP `ip` is ([`client_ip`]), for a deployment's relays: only its own
/// clients connect to them, so the clients' range of the 127.77/16 block is enough.
fn client_of(ip: std::net::IpAddr) -> Option<usize> {
    match ip {
        std::net::IpAddr::V4(v4) => {
            let [a, b, _, d] = v4.octets();
            ((a, b) == (127, 77) && d >= 128).then(|| usize::from(d - 128))
        }
        std::net::IpAddr::V6(_) => None,
    }
}

fn subnet() -> u8 {
    let _ = NEXT_SUBNET.compare_exchange(u32::MAX, std::process::id(), Ordering::Relaxed, Ordering::Relaxed);
    (NEXT_SUBNET.fetch_add(1, Ordering::Relaxed) % 256) as u8
}

impl Deployment {
    /// Starts the deployment of `settings` with `binary` (redis-server), each process in
    /// its own folder under `dir`; returns once the replicas are in sync and every
    /// sentinel knows every replica and every other sentinel, with the sentinels' events
    /// stamped relative to `origin`. Must be called inside a tokio runtime, on a thread
    /// that outlives the deployment.
    pub async fn start(
        shape: Shape,
        binary: &Path,
        dir: &Path,
        origin: tokio::time::Instant,
    ) -> Result<Deployment, RealError> {
        shape.check()?;
        let subnet = subnet();
        let members = shape.members();
        let ip = |k: usize| Ipv4Addr::new(127, 77, subnet, (k + 2) as u8);
        let cluster = matches!(shape, Shape::Cluster(_));
        // (announced, direct), and a cluster node's bus ports likewise.
        let mut ports: Vec<Ports> = Vec::with_capacity(members.len());
        let give_back = |ports: &[Ports]| {
            for &(a, d, bus) in ports {
                server::release_port(a);
                server::release_port(d);
                if let Some((ba, bd)) = bus {
                    server::release_port(ba);
                    server::release_port(bd);
                }
            }
        };
        for _ in &members {
            let next = (|| -> Result<_, RealError> {
                let data = (free_port()?, free_port()?);
                let bus = match cluster {
                    true => Some((free_port()?, free_port()?)),
                    false => None,
                };
                Ok((data.0, data.1, bus))
            })();
            match next {
                Ok(p) => ports.push(p),
                Err(e) => {
                    give_back(&ports);
                    return Err(e);
                }
            }
        }
        let master = SocketAddr::from((ip(0), ports[0].0));
        let mut deployment = Deployment {
            shape,
            slot: 0,
            subnet,
            processes: Vec::with_capacity(members.len()),
            mesh: Mesh::default(),
            events: None,
            followers: Vec::new(),
        };
        for (k, &member) in members.iter().enumerate() {
            let folder = dir.join(member.to_string());
            let (announced, direct, bus) = ports[k];
            let lines = match (&deployment.shape, member) {
                (Shape::Sentinel(s), Member::Data(i)) => {
                    sentinel_data_config(s, ip(k), (announced, direct), (i > 0).then_some(master))
                }
                (Shape::Sentinel(s), Member::Sentinel(_)) => {
                    sentinel_config(s, ip(k), (announced, direct), master)
                }
                (Shape::Cluster(c), _) => {
                    cluster::config(c, ip(k), (announced, direct), bus.expect("a bus port"))
                }
            };
            match MemberProcess::new(member, ip(k), (announced, direct), binary, folder.clone(), &lines) {
                Ok(mut p) => {
                    p.bus = bus;
                    deployment.processes.push(p)
                }
                Err(e) => {
                    // Ports not yet owned by a process are given back here.
                    give_back(&ports[deployment.processes.len()..]);
                    return Err(e);
                }
            }
        }
        for p in &deployment.processes {
            let clients = matches!(p.member, Member::Data(_)).then_some(client_of as fn(_) -> _);
            deployment
                .mesh
                .front(p.announced(), p.direct(), clients)
                .await
                .map_err(|e| RealError::Io(format!("listen on {} for {}", p.announced(), p.member), e))?;
            if let Some((announced, direct)) = p.bus {
                let (announced, direct) = (
                    SocketAddr::from((p.ip, announced)),
                    SocketAddr::from((p.ip, direct)),
                );
                deployment
                    .mesh
                    .front(announced, direct, None)
                    .await
                    .map_err(|e| {
                        RealError::Io(format!("listen on {announced} for {}'s cluster bus", p.member), e)
                    })?;
            }
        }
        for p in deployment
            .processes
            .iter_mut()
            .filter(|p| matches!(p.member, Member::Data(_)))
        {
            p.start().await?;
        }
        if let Shape::Cluster(c) = &deployment.shape {
            let nodes = deployment.cluster_nodes();
            deployment.slot = cluster::form(c, &nodes, tokio::time::Instant::now() + SETTLE_TIMEOUT).await?;
            let (tx, rx) = mpsc::unbounded_channel();
            deployment
                .followers
                .push(tokio::spawn(cluster::follow(nodes, origin, tx)).abort_handle());
            deployment.events = Some(rx);
            return Ok(deployment);
        }
        deployment.wait_replicas_in_sync().await?;
        for p in deployment
            .processes
            .iter_mut()
            .filter(|p| matches!(p.member, Member::Sentinel(_)))
        {
            p.start().await?;
        }
        deployment.follow_sentinels(origin).await?;
        deployment.wait_sentinels_aware().await?;
        Ok(deployment)
    }

    /// A cluster's nodes as [`cluster`] asks them, masters first.
    fn cluster_nodes(&self) -> Vec<cluster::Node> {
        self.processes
            .iter()
            .filter_map(|p| {
                Some(cluster::Node {
                    member: p.member,
                    direct: p.direct(),
                    announced: p.announced(),
                    bus_announced: p.bus?.0,
                })
            })
            .collect()
    }

    /// The sentinels' settings (`None` for a cluster).
    fn sentinel_settings(&self) -> Option<&Settings> {
        match &self.shape {
            Shape::Sentinel(s) => Some(s),
            Shape::Cluster(_) => None,
        }
    }

    /// The master's first sync with each replica: sentinels discover replicas from the
    /// master's `INFO`, and one that is not listed yet is not promoted.
    async fn wait_replicas_in_sync(&self) -> Result<(), RealError> {
        let want = self.sentinel_settings().map_or(0, |s| s.replicas);
        let master = self.process(Member::Data(0)).direct();
        let deadline = tokio::time::Instant::now() + SETTLE_TIMEOUT;
        loop {
            let online = observe::replication(master)
                .await
                .map_or(0, |r| r.online_replicas);
            if online == want {
                return Ok(());
            }
            if tokio::time::Instant::now() > deadline {
                return Err(RealError::Sentinel(format!(
                    "{online} of {want} replicas in sync with the master after {SETTLE_TIMEOUT:?}"
                )));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Subscribes to every sentinel's events; returns once every subscription is in place.
    async fn follow_sentinels(&mut self, origin: tokio::time::Instant) -> Result<(), RealError> {
        let (tx, rx) = mpsc::unbounded_channel();
        let by_addr: HashMap<SocketAddr, Member> =
            self.processes.iter().map(|p| (p.announced(), p.member)).collect();
        let mut ready = Vec::new();
        for p in self
            .processes
            .iter()
            .filter(|p| matches!(p.member, Member::Sentinel(_)))
        {
            let (done, wait) = tokio::sync::oneshot::channel();
            let by_addr = by_addr.clone();
            let task = tokio::spawn(events::follow(
                p.member,
                p.direct(),
                origin,
                move |a| by_addr.get(&a).copied(),
                tx.clone(),
                done,
            ));
            self.followers.push(task.abort_handle());
            ready.push((p.member, wait));
        }
        for (member, wait) in ready {
            match tokio::time::timeout(SETTLE_TIMEOUT, wait).await {
                Ok(Ok(())) => {}
                _ => {
                    return Err(RealError::Sentinel(format!(
                        "could not subscribe to {member}'s events"
                    )))
                }
            }
        }
        self.events = Some(rx);
        Ok(())
    }

    /// Every sentinel knows every replica (one it could promote) and hears every other
    /// sentinel: before that, a failover could abort for want of a replica or a vote.
    async fn wait_sentinels_aware(&self) -> Result<(), RealError> {
        let Some(settings) = self.sentinel_settings() else {
            return Ok(());
        };
        let (r, s) = (settings.replicas, settings.sentinels - 1);
        let deadline = tokio::time::Instant::now() + SETTLE_TIMEOUT;
        for p in self
            .processes
            .iter()
            .filter(|p| matches!(p.member, Member::Sentinel(_)))
        {
            loop {
                let got = observe::known(p.direct(), &settings.name).await;
                if got == Ok((r, s)) {
                    break;
                }
                if tokio::time::Instant::now() > deadline {
                    return Err(RealError::Sentinel(format!(
                        "{} did not learn the deployment within {SETTLE_TIMEOUT:?}: (replicas, sentinels) {got:?}, want ({r}, {s}); see {}",
                        p.member,
                        p.log().display()
                    )));
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        Ok(())
    }

    fn process(&self, member: Member) -> &MemberProcess {
        self.processes
            .iter()
            .find(|p| p.member == member)
            .unwrap_or_else(|| panic!("{member} is not in this deployment"))
    }

    fn process_mut(&mut self, member: Member) -> &mut MemberProcess {
        self.processes
            .iter_mut()
            .find(|p| p.member == member)
            .unwrap_or_else(|| panic!("{member} is not in this deployment"))
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// A cluster's slot of the lock's key (0 for a Sentinel deployment).
    pub fn slot(&self) -> u16 {
        self.slot
    }

    /// Every member, data nodes first.
    pub fn members(&self) -> Vec<Member> {
        self.processes.iter().map(|p| p.member).collect()
    }

    /// Where the other processes (and clients) reach `member`: its relay.
    pub fn addr(&self, member: Member) -> SocketAddr {
        self.process(member).announced()
    }

    /// Where `member` itself listens: for lockstorm's own observers, out of every cut's
    /// reach.
    pub fn direct_addr(&self, member: Member) -> SocketAddr {
        self.process(member).direct()
    }

    /// The member an announced address belongs to.
    pub fn member_at(&self, addr: SocketAddr) -> Option<Member> {
        self.processes
            .iter()
            .find(|p| p.announced() == addr)
            .map(|p| p.member)
    }

    /// The IP client `c` connects from ([`client_ip`]), so that a cut between the client
    /// and one member ([`Deployment::cut_client`]) leaves its other links up.
    pub fn client_ip(&self, c: usize) -> Ipv4Addr {
        client_ip(self.subnet, c)
    }

    /// Where the data nodes' relays report what cuts do to clients' bytes, once set.
    pub fn client_notes(&self) -> mesh::ClientNotes {
        self.mesh.notes()
    }

    /// Cuts (`true`) or heals the link between client `c` and `member`, both ways.
    pub fn cut_client(&self, c: usize, member: Member, cut: bool) {
        self.mesh.set(self.client_ip(c), self.process(member).ip, cut);
    }

    /// The sentinels' announced addresses, in order: what a client is configured with.
    pub fn sentinel_addrs(&self) -> Vec<SocketAddr> {
        self.announced(|m| matches!(m, Member::Sentinel(_)))
    }

    /// The announced addresses of the members `keep` takes, in order.
    fn announced(&self, keep: fn(Member) -> bool) -> Vec<SocketAddr> {
        self.processes
            .iter()
            .filter(|p| keep(p.member))
            .map(MemberProcess::announced)
            .collect()
    }

    /// The running process's pid, `None` while it is down.
    pub fn pid(&self, member: Member) -> Option<u32> {
        self.process(member).pid()
    }

    /// The member's log file.
    pub fn log(&self, member: Member) -> std::path::PathBuf {
        self.process(member).log()
    }

    /// The sentinels' events, once: whoever records them takes them.
    pub fn take_events(&mut self) -> Option<mpsc::UnboundedReceiver<SentinelEvent>> {
        self.events.take()
    }

    /// The master as a client finds it: [`observe::discover_master`] over the sentinels'
    /// announced addresses; in a cluster, the master of the lock's slot as the nodes
    /// answer `CLUSTER SLOTS` ([`cluster::slot_master`]).
    pub async fn discover_master(&self) -> Option<SocketAddr> {
        match &self.shape {
            Shape::Sentinel(s) => {
                observe::discover_master(&self.sentinel_addrs(), &s.name, observe::ASK_TIMEOUT).await
            }
            Shape::Cluster(_) => {
                cluster::slot_master(&self.data_addrs(), self.slot, observe::ASK_TIMEOUT).await
            }
        }
    }

    /// The data nodes' announced addresses, in order: a cluster client's seed nodes.
    pub fn data_addrs(&self) -> Vec<SocketAddr> {
        self.announced(|m| matches!(m, Member::Data(_)))
    }

    /// Each data node's replication, asked of all at once; `None` for one that does not
    /// answer (down or stopped).
    pub async fn replication(&self) -> Vec<(Member, Option<Replication>)> {
        let data: Vec<_> = self
            .processes
            .iter()
            .filter(|p| matches!(p.member, Member::Data(_)))
            .map(|p| (p.member, p.direct()))
            .collect();
        let asks = data.iter().map(|&(_, a)| observe::replication(a));
        let answers = futures_util::future::join_all(asks).await;
        data.into_iter().map(|(m, _)| m).zip(answers).collect()
    }

    /// The members that replicate `master` now: in a Sentinel deployment every other data
    /// member (the sentinels reconfigure them all to the master of the moment); in a
    /// cluster, the nodes that `master` itself lists as its replicas.
    pub async fn replicas_of(&self, master: Member) -> Vec<Member> {
        match &self.shape {
            Shape::Sentinel(_) => self
                .members()
                .into_iter()
                .filter(|&m| m != master && matches!(m, Member::Data(_)))
                .collect(),
            Shape::Cluster(c) => {
                let nodes = self.cluster_nodes();
                let view = cluster::view(self.direct_addr(master), &nodes).await;
                let listed: Vec<Member> = view
                    .map(|v| {
                        v.nodes
                            .into_iter()
                            .filter(|(_, s)| s.master == Some(master))
                            .map(|(m, _)| m)
                            .collect()
                    })
                    .unwrap_or_default();
                if !listed.is_empty() {
                    return listed;
                }
                // It did not answer, or lists none: its replicas as the cluster was formed.
                let Member::Data(i) = master else { return listed };
                let formed: Vec<Member> = (0..c.nodes())
                    .filter(|&r| c.master_of(r) == Some(i))
                    .map(Member::Data)
                    .collect();
                crate::errln!(
                    "lockstorm: warning: {master} named no replica of its own; the replication cut cuts it from {} (its replicas as the cluster was formed)",
                    formed.iter().map(Member::to_string).collect::<Vec<_>>().join(", ")
                );
                formed
            }
        }
    }

    /// kill -9: the process dies without a word; its relay refuses new connections.
    pub fn kill(&mut self, member: Member) {
        self.process_mut(member).kill();
    }

    /// Starts the member again on its config as the sentinels last rewrote it (a data
    /// node they never reconfigured comes back in its old role: an old master as a
    /// master, until a sentinel converts it); returns once it answers PING.
    pub async fn restart(&mut self, member: Member) -> Result<(), RealError> {
        self.process_mut(member).start().await
    }

    /// SIGSTOP: the member keeps its connections and answers nothing.
    pub fn pause(&mut self, member: Member) {
        self.process_mut(member).pause();
    }

    /// SIGCONT after [`Deployment::pause`].
    pub fn resume(&mut self, member: Member) {
        self.process_mut(member).resume();
    }

    /// Cuts the link between `a` and `b`, both ways, until [`Deployment::heal`].
    pub fn cut(&self, a: Member, b: Member) {
        self.mesh.set(self.process(a).ip, self.process(b).ip, true);
    }

    pub fn heal(&self, a: Member, b: Member) {
        self.mesh.set(self.process(a).ip, self.process(b).ip, false);
    }

    pub fn heal_all(&self) {
        self.mesh.heal_all();
    }
}

impl Drop for Deployment {
    fn drop(&mut self) {
        for f in &self.followers {
            f.abort();
        }
        // Every process is killed and reaped (MemberProcess's Drop), then the relays stop.
        self.processes.clear();
    }
}

/// A data node's config: a scenario node's ([`server::config`]) on the member's own IP,
/// its outgoing connections from that IP, its log in its folder.
fn data_config(
    ip: Ipv4Addr,
    direct: u16,
    persistence: crate::fault::Persistence,
    replica_of: Option<SocketAddr>,
) -> Vec<(String, String)> {
    let mut lines: Vec<(String, String)> = server::config(direct, persistence, replica_of)
        .into_iter()
        .map(|(k, v)| (k.to_string(), if k == "bind" { ip.to_string() } else { v }))
        .collect();
    lines.push(("bind-source-addr".into(), ip.to_string()));
    lines.push(("logfile".into(), "redis.log".into()));
    lines
}

/// A Sentinel deployment's data node: announcing its relay, with the `min-replicas-*`
/// settings.
fn sentinel_data_config(
    s: &Settings,
    ip: Ipv4Addr,
    (announced, direct): (u16, u16),
    replica_of: Option<SocketAddr>,
) -> Vec<(String, String)> {
    let mut lines = data_config(ip, direct, s.persistence, replica_of);
    let mut add = |k: &str, v: String| lines.push((k.to_string(), v));
    add("replica-announce-ip", ip.to_string());
    add("replica-announce-port", announced.to_string());
    add("min-replicas-to-write", s.min_replicas_to_write.to_string());
    add("min-replicas-max-lag", s.min_replicas_max_lag_s.to_string());
    lines
}

/// A sentinel's config: on the member's own IP, announcing its relay, monitoring the
/// master at its relay.
fn sentinel_config(
    s: &Settings,
    ip: Ipv4Addr,
    (announced, direct): (u16, u16),
    master: SocketAddr,
) -> Vec<(String, String)> {
    let name = &s.name;
    [
        ("port", direct.to_string()),
        ("bind", ip.to_string()),
        ("bind-source-addr", ip.to_string()),
        ("protected-mode", "no".into()),
        ("daemonize", "no".into()),
        ("logfile", "redis.log".into()),
        ("sentinel announce-ip", ip.to_string()),
        ("sentinel announce-port", announced.to_string()),
        (
            "sentinel monitor",
            format!("{name} {} {} {}", master.ip(), master.port(), s.quorum),
        ),
        (
            "sentinel down-after-milliseconds",
            format!("{name} {}", s.down_after_ms),
        ),
        (
            "sentinel failover-timeout",
            format!("{name} {}", s.failover_timeout_ms),
        ),
        ("sentinel parallel-syncs", format!("{name} {}", s.parallel_syncs)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}
