//! A [`Deployment`] as the scenario's node 0: a task owns it and carries out the
//! driver's operations in order, as a plain node's task does (`real/node.rs`), and
//! forwards the sentinels' events to the driver, so the driver's loop never waits on a
//! process.
//!
//! - A crash kills the *current* master (the one the sentinels name), after reading its
//!   keys; the restart starts that member again, and the sentinels demote it if they
//!   have failed over meanwhile. lockstorm never promotes.
//! - A partition cuts the master of the moment it starts (the machine, not the role)
//!   from every other member (sentinels and replicas) and from the clients it lists;
//!   the other clients still reach it. Sentinel fails over on the other side, and the
//!   clients there find the new master: a split brain until the partition heals and the
//!   sentinels demote the old master.
//! - A replication cut cuts the master of the moment it starts from its replicas (in a
//!   Sentinel deployment every other data member; in a cluster the nodes that replicate
//!   it when the cut begins), both ways: the sentinels or the other masters, and the
//!   clients, still reach it,
//!   and the replicas stop receiving its writes until it heals. With a partition in
//!   force too, each link is cut while either asks for it (faults are sets).
//! - At each `+switch-master` the task reads the new master's keys and reports the
//!   switch as a failover ([`News::Back`]) beside the killed master's keys: a key it had
//!   that the new master lacks becomes an `unreplicated` node line.
//! - With node events on, each data member has a key watcher on its own port (past
//!   every cut), so worker clients' sets and deletes become node lines naming the
//!   member, from whichever of them is a master: two in a split brain.

use super::{Deployment, EventKind, Member, SentinelEvent};
use crate::real::keyspace::{self, Back, News, Snapshot, Watcher};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// What the driver asks of the deployment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeploymentOp {
    /// kill -9 of the member the sentinels name as master (the first outage only).
    Crash,
    /// The last outage ended: start the killed member again.
    Restart,
    /// What the partitions in force compose to: `isolated`, the master of when the
    /// first began is cut from every other member and from the clients in `cut` (of
    /// `clients`); not `isolated`, every such cut heals.
    Partition {
        isolated: bool,
        cut: Vec<usize>,
        clients: usize,
    },
    /// What the replication cuts in force compose to: `cut`, the master of when the first
    /// began is cut from the other data members; not `cut`, those links heal (unless a
    /// partition still cuts them).
    ReplicationCut { cut: bool },
}

enum Msg {
    Op(DeploymentOp),
    Shutdown(oneshot::Sender<()>),
}

/// How a client finds the deployment's master: what it is configured with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Sentinel {
        /// The sentinels' announced addresses, in order.
        sentinels: Vec<SocketAddr>,
        /// The name the sentinels monitor the master under.
        name: String,
    },
    Cluster {
        /// Every node's announced address, in order: the seed nodes.
        seeds: Vec<SocketAddr>,
        /// The slot of the lock's key (`L0`).
        slot: u16,
    },
}

/// The driver's side of a deployment.
pub struct DeploymentHandle {
    tx: mpsc::UnboundedSender<Msg>,
    /// How a client finds the master.
    pub entry: Entry,
    /// The master at the start.
    pub first_master: SocketAddr,
    subnet: u8,
    /// Each data node's announced address and name (`redis0`, ...).
    data: Vec<(SocketAddr, String)>,
    notes: super::mesh::ClientNotes,
    events: std::sync::Mutex<Option<mpsc::UnboundedReceiver<SentinelEvent>>>,
}

impl DeploymentHandle {
    /// Runs `deployment`'s task; `news` gets the key snapshots and each data member's
    /// key events (with node events on), from when this returns.
    pub async fn spawn(
        mut deployment: Deployment,
        news: Option<mpsc::UnboundedSender<News>>,
    ) -> DeploymentHandle {
        let (tx, rx) = mpsc::unbounded_channel();
        let (events_tx, events) = mpsc::unbounded_channel();
        let raw = deployment.take_events();
        let handle = DeploymentHandle {
            tx,
            entry: match deployment.shape() {
                super::Shape::Sentinel(s) => Entry::Sentinel {
                    sentinels: deployment.sentinel_addrs(),
                    name: s.name.clone(),
                },
                super::Shape::Cluster(_) => Entry::Cluster {
                    seeds: deployment.data_addrs(),
                    slot: deployment.slot(),
                },
            },
            first_master: deployment.addr(Member::Data(0)),
            subnet: deployment.subnet,
            notes: deployment.client_notes(),
            data: deployment
                .members()
                .into_iter()
                .filter(|m| matches!(m, Member::Data(_)))
                .map(|m| (deployment.addr(m), m.to_string()))
                .collect(),
            events: std::sync::Mutex::new(Some(events)),
        };
        let mut task = Task {
            deployment,
            news,
            watchers: BTreeMap::new(),
            down: None,
            before: None,
            isolated: None,
            lock_master: Member::Data(0),
            replication_cut: None,
        };
        for m in task.deployment.members() {
            task.watch(m).await;
        }
        tokio::spawn(task.run(rx, raw, events_tx));
        handle
    }

    /// The IP client `c` connects from (the deployment's [`super::Deployment::client_ip`]).
    pub fn client_ip(&self, c: usize) -> std::net::Ipv4Addr {
        super::client_ip(self.subnet, c)
    }

    /// From now on, what cuts do to the clients' bytes to the data nodes is said to
    /// `notes` (the driver's `link` lines, as node 0's).
    pub fn note_links(&self, notes: crate::real::proxy::Notes) {
        *self.notes.lock().unwrap_or_else(|e| e.into_inner()) = Some(notes);
    }

    /// The name of the data node at `addr` (where a client found the master).
    pub fn data_node_at(&self, addr: SocketAddr) -> Option<&str> {
        self.data
            .iter()
            .find(|(a, _)| *a == addr)
            .map(|(_, n)| n.as_str())
    }

    pub fn send(&self, op: DeploymentOp) {
        let _ = self.tx.send(Msg::Op(op));
    }

    /// The sentinels' events, once.
    pub fn take_events(&self) -> Option<mpsc::UnboundedReceiver<SentinelEvent>> {
        self.events.lock().expect("events lock").take()
    }

    /// Carries out what is queued, then kills every process; returns when that is done.
    pub async fn shutdown(self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Shutdown(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

struct Task {
    deployment: Deployment,
    news: Option<mpsc::UnboundedSender<News>>,
    /// Each running data member's key watcher (with node events on).
    watchers: BTreeMap<Member, Watcher>,
    /// The member a crash killed, until its restart.
    down: Option<Member>,
    /// What the killed master held, until a switch reports it.
    before: Option<Snapshot>,
    /// The member a partition cut off, until it heals.
    isolated: Option<Member>,
    /// The lock's master as the switches so far name it (redis0 at the start): a
    /// cluster's other masters fail over too, and only a switch away from this one is
    /// the lock's.
    lock_master: Member,
    /// The master a replication cut cut off from its replicas, and those replicas, until
    /// it heals.
    replication_cut: Option<(Member, Vec<Member>)>,
}

impl Task {
    async fn run(
        mut self,
        mut rx: mpsc::UnboundedReceiver<Msg>,
        mut raw: Option<mpsc::UnboundedReceiver<SentinelEvent>>,
        events: mpsc::UnboundedSender<SentinelEvent>,
    ) {
        loop {
            let event = async {
                match raw.as_mut() {
                    Some(r) => r.recv().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                msg = rx.recv() => match msg {
                    Some(Msg::Op(op)) => self.apply(op).await,
                    Some(Msg::Shutdown(done)) => {
                        // The watchers first: their connections' end is then no news.
                        self.watchers.clear();
                        drop(self.deployment);
                        let _ = done.send(());
                        return;
                    }
                    // The driver went away without a shutdown: the deployment's Drop
                    // kills every process.
                    None => return,
                },
                Some(e) = event => {
                    // A switch away from the lock's master (every switch in a Sentinel
                    // deployment, which has one master; in a cluster, of its slots).
                    let switch = match &e.kind {
                        EventKind::SwitchMaster { from } if from.member.is_none_or(|m| m == self.lock_master) => {
                            e.instance.member
                        }
                        _ => None,
                    };
                    let _ = events.send(e);
                    if let Some(new) = switch {
                        self.lock_master = new;
                        self.switched(new).await;
                    }
                }
            }
        }
    }

    /// Starts data member `m`'s key watcher (with node events on); a member it cannot
    /// watch is said, and its key events are missing from the history.
    async fn watch(&mut self, m: Member) {
        let (Some(news), Member::Data(_)) = (&self.news, m) else {
            return;
        };
        match Watcher::start(0, self.deployment.direct_addr(m), Some(m.to_string()), news.clone()).await {
            Ok(w) => {
                self.watchers.insert(m, w);
            }
            Err(e) => crate::errln!(
                "lockstorm: warning: {m}: no key watcher ({e}); the history has no set, deleted or expired lines from it"
            ),
        }
    }

    /// The member the sentinels name as master now (the first master if none answers).
    async fn master(&self) -> Member {
        self.deployment
            .discover_master()
            .await
            .and_then(|a| self.deployment.member_at(a))
            .unwrap_or(Member::Data(0))
    }

    async fn apply(&mut self, op: DeploymentOp) {
        match op {
            DeploymentOp::Partition {
                isolated,
                cut,
                clients,
            } => {
                // The member cut off since the first partition began, or now the master.
                let m = match self.isolated {
                    Some(m) => m,
                    None if isolated => self.master().await,
                    None => return,
                };
                self.isolated = isolated.then_some(m);
                self.relink();
                for c in 0..clients {
                    self.deployment.cut_client(c, m, isolated && cut.contains(&c));
                }
            }
            DeploymentOp::ReplicationCut { cut } => {
                self.replication_cut = match (cut, self.replication_cut.take()) {
                    (true, Some(held)) => Some(held),
                    (true, None) => {
                        let m = self.master().await;
                        Some((m, self.deployment.replicas_of(m).await))
                    }
                    (false, _) => None,
                };
                self.relink();
            }
            DeploymentOp::Crash if self.down.is_none() => {
                let master = self.master().await;
                if let Some(news) = &self.news {
                    self.before = keyspace::snapshot_before_kill(self.deployment.direct_addr(master)).await;
                    if let Some(s) = self.before.clone() {
                        let _ = news.send(News::Present {
                            node: 0,
                            snapshot: Box::new(s),
                        });
                    }
                }
                // Dropped first: its connection ending is then no warning.
                self.watchers.remove(&master);
                self.deployment.kill(master);
                self.down = Some(master);
            }
            DeploymentOp::Crash => {}
            DeploymentOp::Restart => {
                if let Some(m) = self.down.take() {
                    match self.deployment.restart(m).await {
                        Ok(()) => self.watch(m).await,
                        Err(e) => crate::errln!("lockstorm: warning: restart of {m}: {e:#}"),
                    }
                }
            }
        }
    }

    /// Sets every link between two members to what the partition and the replication
    /// cut in force compose to: cut while either cuts it, healed otherwise.
    fn relink(&self) {
        let members = self.deployment.members();
        for (i, &a) in members.iter().enumerate() {
            for &b in &members[i + 1..] {
                let isolated = self.isolated.is_some_and(|m| m == a || m == b);
                let replication = self.replication_cut.as_ref().is_some_and(|(m, replicas)| {
                    (*m == a && replicas.contains(&b)) || (*m == b && replicas.contains(&a))
                });
                match isolated || replication {
                    true => self.deployment.cut(a, b),
                    false => self.deployment.heal(a, b),
                }
            }
        }
    }

    /// The sentinels switched to `new`: what the killed master held against what the
    /// new master serves.
    async fn switched(&mut self, new: Member) {
        let Some(news) = &self.news else { return };
        let after = keyspace::snapshot(self.deployment.direct_addr(new)).await;
        let _ = news.send(News::Back(Box::new(Back {
            node: 0,
            before: self.before.take(),
            after,
            // A failover; how far the replica trailed is not measured here (zero reads
            // as unknown).
            failover_lag: Some(Duration::ZERO),
        })));
    }
}
