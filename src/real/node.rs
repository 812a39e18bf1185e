//! One scenario node on real servers: a master process, and with `[replication]` an
//! asynchronous replica that a failover promotes, as Sentinel would.
//!
//! The driver never touches a process: it sends [`NodeOp`]s to the node's task, which
//! carries them out in order on its [`Process`]es (local or containers alike) without
//! holding up the driver's loop. The node's address for the clients is a `watch` value
//! the proxies read ([`NodeHandle::upstream`]): a promotion moves it to the replica.
//!
//! Replication: the replica follows the master through a [`LagLine`] that delivers the
//! master's writes `lag` late and drops what the master had not delivered when it dies.
//! A failover is the simulator's (`sim/node.rs`): [`NodeOp::FailMaster`] kills the
//! master; when the node comes back ([`NodeOp::Restart`]) the replica is promoted:
//! `REPLICAOF NO ONE`, the node's address points at it, and the old master starts again
//! as its replica (a full resync from the new master). Clock faults move the clocks of
//! both processes, so the node's clock survives a failover, as the simulated node's does.
//!
//! Faults are sets (`crate::fault::active`): the driver sends an outage's start only for
//! the first active outage of a node and [`NodeOp::Restart`] only when the last one ends,
//! and the outage that took the node down decides how it comes back (a crash: the master
//! restarts on its data; a failover: the replica is promoted), as on the simulator. A
//! pause asked for while the node is down stops it as soon as it is back.
//!
//! With node events on, the node also watches its master ([`super::keyspace`]): a
//! [`Watcher`] per master process for its key events, a snapshot of the master's keys just
//! before a kill (unless it is stopped), and when the node is back a snapshot of what it
//! serves, taken before any client reaches it: the proxies keep the node closed
//! ([`NodeHandle::serving`]) from the kill until that report is sent.

use super::keyspace::{self, Back, News, Snapshot, Watcher};
use super::lagline::LagLine;
use super::process::Process;
use super::{wire, RealError};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot, watch};

/// What the driver asks of a node. Faults compose in the driver; a node carries out
/// what it is told, and ignores what does not apply (a restart of a running master).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NodeOp {
    /// Kill the master (SIGKILL, no graceful shutdown).
    Crash,
    /// The node's last outage ended: it comes back as the outage that took it down
    /// left it (after a crash the master restarts on its data; after a failover the
    /// replica is promoted).
    Restart,
    /// Stop the master (SIGSTOP / docker pause), now or as soon as it is back.
    Pause,
    Resume,
    /// Move the node's wall clock by this many microseconds.
    ClockJump(i64),
    /// Run the node's clock at this rate (1.0: true time).
    ClockRate(f64),
    /// The master dies and the replica will take over; without a replica this is a
    /// crash.
    FailMaster,
}

/// What took a node down, which decides how it comes back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outage {
    Crash,
    Failover,
}

enum Msg {
    Op(NodeOp),
    Shutdown(oneshot::Sender<()>),
}

/// The driver's side of a node.
pub struct NodeHandle {
    tx: mpsc::UnboundedSender<Msg>,
    upstream: watch::Receiver<SocketAddr>,
    serving: watch::Receiver<bool>,
    broken: watch::Receiver<Option<String>>,
}

impl NodeHandle {
    /// Where the node's clients reach it now (the master's address).
    pub fn upstream(&self) -> watch::Receiver<SocketAddr> {
        self.upstream.clone()
    }

    pub fn addr(&self) -> SocketAddr {
        *self.upstream.borrow()
    }

    /// Whether clients may reach the node: false from a kill until the node is back and
    /// lockstorm has read what it serves.
    pub fn serving(&self) -> watch::Receiver<bool> {
        self.serving.clone()
    }

    /// Why the node cannot go on, once it cannot (a restart that failed: its port taken
    /// by another process, its binary gone): the run then stops as an error of its
    /// environment, not a finding about the lock.
    pub fn broken(&self) -> Option<String> {
        self.broken.borrow().clone()
    }

    /// Queues `op`; the node carries out its operations in the order they were sent.
    pub fn send(&self, op: NodeOp) {
        let _ = self.tx.send(Msg::Op(op));
    }

    /// Carries out what is queued, then kills every process and removes what they
    /// leave; returns when that is done.
    pub async fn shutdown(self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Msg::Shutdown(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

/// A node's processes and roles; owned by the node's task.
pub struct Node {
    index: usize,
    /// The master first; with replication, the replica second. A failover swaps them.
    processes: Vec<Process>,
    /// `None` while the master serves; else what took the node down.
    down: Option<Outage>,
    master_paused: bool,
    /// A pause is in force (it may have come while the node was down).
    pause_wanted: bool,
    upstream: watch::Sender<SocketAddr>,
    /// The replica's link to the master (with replication).
    lag_line: Option<LagLine>,
    lag: Option<Duration>,
    serving: watch::Sender<bool>,
    /// Why the node cannot go on ([`NodeHandle::broken`]).
    broken: watch::Sender<Option<String>>,
    /// Where the watcher's news go; `None`: node events are off.
    news: Option<mpsc::UnboundedSender<News>>,
    /// The current master's watcher.
    watcher: Option<Watcher>,
    /// What the master had just before the kill of the current outage.
    before: Option<Snapshot>,
}

impl Node {
    /// Starts the master, and with `replication_lag` a second process as its replica;
    /// loads the scripts on the master.
    pub async fn start(
        index: usize,
        mut processes: Vec<Process>,
        replication_lag: Option<Duration>,
        news: Option<mpsc::UnboundedSender<News>>,
    ) -> Result<Node, RealError> {
        processes[0].start(None).await?;
        let (upstream, _) = watch::channel(processes[0].addr());
        let mut node = Node {
            index,
            processes,
            down: None,
            master_paused: false,
            pause_wanted: false,
            upstream,
            lag_line: None,
            lag: replication_lag,
            serving: watch::channel(true).0,
            broken: watch::channel(None).0,
            news,
            watcher: None,
            before: None,
        };
        if let Some(lag) = replication_lag {
            let line = LagLine::start(node.upstream.subscribe(), lag)
                .await
                .map_err(|e| RealError::Io(format!("start the replication link of node {index}"), e))?;
            node.processes[1].start(Some(line.addr())).await?;
            node.lag_line = Some(line);
        }
        load_scripts(index, node.processes[0].addr()).await?;
        node.watch().await;
        Ok(node)
    }

    /// Starts watching the current master (with node events on).
    async fn watch(&mut self) {
        let Some(news) = self.news.clone() else { return };
        // Bounded: a server that accepts and never answers must not hold the node task
        // (and with it the proxy gate and the run's shutdown).
        let started = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            Watcher::start(self.index, self.processes[0].addr(), None, news),
        )
        .await
        .unwrap_or_else(|_| Err("no answer to CONFIG SET or SUBSCRIBE in 10 s".into()));
        match started {
            Ok(w) => self.watcher = Some(w),
            Err(e) => crate::errln!(
                "lockstorm: warning: node {}: no key events from it (no expired lines): {}",
                self.index,
                super::server::with_conntrack(e.to_string())
            ),
        }
    }

    /// The node is back: watch its new master, report what it serves, let clients in.
    async fn back(&mut self, failover: bool) {
        self.watch().await;
        if let Some(w) = &self.watcher {
            w.report(Back {
                node: self.index,
                before: self.before.take(),
                after: None,
                failover_lag: if failover { self.lag } else { None },
            })
            .await;
        }
        self.before = None;
        self.serving.send_replace(true);
    }

    /// Runs the node's task: returns the handle, and the task ends at shutdown.
    pub fn spawn(self) -> NodeHandle {
        let (tx, rx) = mpsc::unbounded_channel();
        let upstream = self.upstream.subscribe();
        let serving = self.serving.subscribe();
        let broken = self.broken.subscribe();
        tokio::spawn(self.run(rx));
        NodeHandle {
            tx,
            upstream,
            serving,
            broken,
        }
    }

    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Msg>) {
        while let Some(msg) = rx.recv().await {
            match msg {
                Msg::Op(op) => self.apply(op).await,
                Msg::Shutdown(done) => {
                    // Dropped first: a watcher whose node still wants it warns when its
                    // connection ends.
                    self.watcher = None;
                    for p in self.processes.drain(..) {
                        p.remove().await;
                    }
                    let _ = done.send(());
                    return;
                }
            }
        }
        // The driver went away without a shutdown (a panic): remove the processes.
        self.watcher = None;
        for p in self.processes.drain(..) {
            p.remove().await;
        }
    }

    async fn apply(&mut self, op: NodeOp) {
        match op {
            NodeOp::Crash => self.kill_master(Outage::Crash).await,
            NodeOp::FailMaster => self.kill_master(Outage::Failover).await,
            NodeOp::Restart => {
                match self.down {
                    None => return,
                    Some(Outage::Crash) => self.restart_master().await,
                    Some(Outage::Failover) => self.promote().await,
                }
                self.apply_pause().await;
            }
            NodeOp::Pause => {
                self.pause_wanted = true;
                self.apply_pause().await;
            }
            NodeOp::Resume => {
                self.pause_wanted = false;
                if self.master_paused {
                    self.processes[0].resume().await;
                    self.master_paused = false;
                }
            }
            NodeOp::ClockJump(by_us) => {
                let held = self.snapshot_now().await;
                self.present(held);
                self.clocks(|ft| ft.jump(by_us));
            }
            NodeOp::ClockRate(rate) => {
                let held = self.snapshot_now().await;
                self.present(held);
                self.clocks(|ft| ft.set_rate(rate));
            }
        }
    }

    /// Tells the driver what the master held as a fault struck it.
    fn present(&self, snapshot: Option<keyspace::Snapshot>) {
        if let (Some(news), Some(snapshot)) = (&self.news, snapshot) {
            let _ = news.send(keyspace::News::Present {
                node: self.index,
                snapshot: Box::new(snapshot),
            });
        }
    }

    /// What the serving master holds now, read as a fault is about to strike it.
    async fn snapshot_now(&self) -> Option<keyspace::Snapshot> {
        if self.news.is_none() || self.down.is_some() || self.master_paused {
            return None;
        }
        keyspace::snapshot(self.processes[0].addr()).await
    }

    /// Stops the master if a pause is in force and it serves.
    async fn apply_pause(&mut self) {
        if self.pause_wanted && self.down.is_none() && !self.master_paused {
            let held = self.snapshot_now().await;
            self.present(held);
            self.processes[0].pause().await;
            self.master_paused = true;
        }
    }

    async fn kill_master(&mut self, why: Outage) {
        if self.down.is_none() {
            self.serving.send_replace(false);
            if self.news.is_some() && !self.master_paused {
                self.before = keyspace::snapshot_before_kill(self.processes[0].addr()).await;
                self.present(self.before.clone());
            }
            // The watcher goes before its master: its connection's end is then expected.
            self.watcher = None;
            self.processes[0].kill().await;
            self.down = Some(why);
            self.master_paused = false;
        }
    }

    async fn restart_master(&mut self) {
        let result = match self.processes[0].start(None).await {
            Ok(()) => load_scripts(self.index, self.processes[0].addr()).await,
            Err(e) => Err(e),
        };
        self.down = None;
        match result {
            Ok(()) => self.back(false).await,
            Err(e) => {
                // Not the lock's doing: the run stops, as an error of its environment.
                // Its log goes with the run's directory: the error quotes it, never names it.
                let why = match e {
                    RealError::ServerExited { status, said, .. } => {
                        format!("redis-server exited at start ({status}){said}")
                    }
                    e => format!("{e:#}"),
                };
                self.broken
                    .send_replace(Some(format!("node {} could not be restarted: {why}", self.index)));
                self.serving.send_replace(true);
            }
        }
    }

    /// The replica takes over: `REPLICAOF NO ONE`, the node's address moves to it, and
    /// the old master comes back as its replica.
    async fn promote(&mut self) {
        if self.processes.len() < 2 {
            return self.restart_master().await;
        }
        let replica = self.processes[1].addr();
        if let Err(e) = replica_of_no_one(self.index, replica).await {
            crate::errln!("lockstorm: warning: node {}: promotion failed: {e:#}", self.index);
            return self.restart_master().await;
        }
        self.processes.swap(0, 1);
        self.upstream.send_replace(replica);
        self.down = None;
        if let Err(e) = load_scripts(self.index, replica).await {
            crate::errln!("lockstorm: warning: node {}: {e:#}", self.index);
        }
        self.back(true).await;
        let line = self.lag_line.as_ref().map(LagLine::addr);
        if let Err(e) = self.processes[1].start(line).await {
            crate::errln!(
                "lockstorm: warning: node {}: the old master did not come back as a replica: {e:#}",
                self.index
            );
        }
    }

    fn clocks(&mut self, f: impl Fn(&mut super::faketime::Faketime) -> Result<(), RealError>) {
        for p in &mut self.processes {
            if let Some(ft) = p.faketime_mut() {
                if let Err(e) = f(ft) {
                    crate::errln!(
                        "lockstorm: warning: node {}: clock fault not applied: {e}",
                        self.index
                    );
                }
            }
        }
    }
}

/// Promotes a replica as Sentinel does.
async fn replica_of_no_one(node: usize, addr: SocketAddr) -> Result<(), RealError> {
    let mut conn = direct(node, addr).await?;
    redis::cmd("REPLICAOF")
        .arg("NO")
        .arg("ONE")
        .query_async::<()>(&mut conn)
        .await
        .map_err(|e| node_error(node, addr, format!("REPLICAOF NO ONE failed: {e}")))
}

/// SCRIPT LOAD every script of the repo on a node, over a direct connection.
pub async fn load_scripts(node: usize, addr: SocketAddr) -> Result<(), RealError> {
    let mut conn = direct(node, addr).await?;
    wire::load_scripts(&mut conn)
        .await
        .map_err(|e| node_error(node, addr, format!("SCRIPT LOAD failed: {e}")))
}

/// A connection straight to one server of node `node`, not through its proxy.
///
/// Its timeouts are generous (the crate's defaults are 1 s to connect, 500 ms to answer):
/// it only sets a node up (scripts, promotion), so a slow answer on a loaded machine is
/// no finding, while a timeout would end a whole matrix with an environment error.
async fn direct(node: usize, addr: SocketAddr) -> Result<redis::aio::MultiplexedConnection, RealError> {
    const SETUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);
    let client =
        redis::Client::open(format!("redis://{addr}/")).map_err(|e| node_error(node, addr, e.to_string()))?;
    let config = redis::AsyncConnectionConfig::new()
        .set_connection_timeout(Some(SETUP_TIMEOUT))
        .set_response_timeout(Some(SETUP_TIMEOUT));
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(|e| {
            node_error(
                node,
                addr,
                super::server::with_conntrack(format!("cannot connect: {e}")),
            )
        })
}

fn node_error(node: usize, addr: SocketAddr, message: String) -> RealError {
    RealError::Node {
        node,
        addr: addr.to_string(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::Persistence;
    use crate::real::server::{binary, ping, Server};

    async fn node(dir: &std::path::Path) -> Node {
        let binary = binary().unwrap_or_else(|e| panic!("{e}"));
        let server = Server::new(0, &binary, dir.to_path_buf(), Persistence::None, None).unwrap();
        Node::start(0, vec![Process::Local(server)], None, None)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_pause_that_came_while_the_node_was_down_stops_it_once_it_is_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut n = node(dir.path()).await;
        let addr = n.processes[0].addr();
        n.apply(NodeOp::Crash).await;
        n.apply(NodeOp::Pause).await;
        n.apply(NodeOp::Restart).await;
        assert!(!ping(addr), "a pause in force stops the restarted master");
        n.apply(NodeOp::Resume).await;
        assert!(ping(addr));
        n.apply(NodeOp::Crash).await;
        n.apply(NodeOp::Restart).await;
        assert!(ping(addr), "no pause in force: it serves once it is back");
    }

    #[tokio::test]
    async fn a_node_comes_back_as_the_outage_that_took_it_down_left_it() {
        // Without a replica a failover is a crash; what matters here is that a second
        // outage's start while down changes nothing, and one restart brings it back.
        let dir = tempfile::tempdir().unwrap();
        let mut n = node(dir.path()).await;
        let addr = n.processes[0].addr();
        n.apply(NodeOp::Crash).await;
        n.apply(NodeOp::FailMaster).await;
        assert_eq!(n.down, Some(Outage::Crash), "the first outage decides");
        assert!(!ping(addr));
        n.apply(NodeOp::Restart).await;
        assert_eq!(n.down, None);
        assert!(ping(addr));
    }
}
