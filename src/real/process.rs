//! The node runtime: one redis-server process, whether lockstorm runs it as a local
//! process ([`Server`]) or as a container ([`super::container`], feature `docker`).
//!
//! Both listen on a loopback port with the same configuration ([`super::server::config`])
//! and take the same operations: start on their data (again, after a kill) as a master
//! or as a replica of an address, kill (no graceful shutdown), pause and resume, and a
//! clock driven through libfaketime's timestamp file. Everything above this, the node's
//! replication and failover ([`super::node`]), the proxies and the faults, is the same
//! code for both.

use super::faketime::Faketime;
use super::server::{self, Server};
use super::RealError;
use std::net::SocketAddr;
use std::time::Duration;

/// One redis-server process of a node.
pub enum Process {
    Local(Server),
    #[cfg(feature = "docker")]
    Container(super::container::ContainerProcess),
}

impl Process {
    pub fn addr(&self) -> SocketAddr {
        match self {
            Process::Local(s) => s.addr(),
            #[cfg(feature = "docker")]
            Process::Container(c) => c.addr(),
        }
    }

    /// Starts the process on its data, as a replica of `replica_of` if given, and waits
    /// until it answers PING. A running process is killed first.
    pub async fn start(&mut self, replica_of: Option<SocketAddr>) -> Result<(), RealError> {
        match self {
            Process::Local(s) => {
                s.kill();
                // Launched on the runtime's thread, which lives as long as the run: the
                // process's parent-death signal is tied to the launching thread.
                s.launch(replica_of)?;
                let (node, log) = (s.index, s.log());
                wait_ready(
                    s.addr(),
                    || s.exited(),
                    |last| RealError::ServerNotReady {
                        node,
                        log,
                        last: server::with_conntrack(last),
                    },
                )
                .await
            }
            #[cfg(feature = "docker")]
            Process::Container(c) => c.start(replica_of).await,
        }
    }

    /// SIGKILL: the crash fault. Whatever the process had not written is lost.
    pub async fn kill(&mut self) {
        match self {
            Process::Local(s) => s.kill(),
            #[cfg(feature = "docker")]
            Process::Container(c) => c.kill().await,
        }
    }

    /// Stops the process (SIGSTOP, or `docker pause`): sockets stay open, nothing is
    /// answered, nothing expires.
    pub async fn pause(&mut self) {
        match self {
            Process::Local(s) => s.pause(),
            #[cfg(feature = "docker")]
            Process::Container(c) => c.pause().await,
        }
    }

    pub async fn resume(&mut self) {
        match self {
            Process::Local(s) => s.resume(),
            #[cfg(feature = "docker")]
            Process::Container(c) => c.resume().await,
        }
    }

    pub fn faketime_mut(&mut self) -> Option<&mut Faketime> {
        match self {
            Process::Local(s) => s.faketime_mut(),
            #[cfg(feature = "docker")]
            Process::Container(c) => c.faketime_mut(),
        }
    }

    /// Kills the process and removes what it leaves (a container and its volume; a
    /// local server's directory belongs to the run).
    pub async fn remove(self) {
        match self {
            Process::Local(s) => drop(s),
            #[cfg(feature = "docker")]
            Process::Container(c) => c.remove().await,
        }
    }
}

/// Polls until `addr` answers PING: `exited` reports a process that died while starting,
/// `timeout` the error after [`server::READY_TIMEOUT`], given what the last PING got.
pub async fn wait_ready(
    addr: SocketAddr,
    mut exited: impl FnMut() -> Option<RealError>,
    timeout: impl FnOnce(String) -> RealError,
) -> Result<(), RealError> {
    let deadline = tokio::time::Instant::now() + server::READY_TIMEOUT;
    loop {
        if let Some(e) = exited() {
            return Err(e);
        }
        let last = match server::probe_async(addr).await {
            Ok(()) => return Ok(()),
            Err(why) => why,
        };
        if tokio::time::Instant::now() > deadline {
            return Err(timeout(last));
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}
