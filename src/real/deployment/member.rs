//! One process of a deployment: a data node (`redis-server`, a cluster node with
//! `[cluster]`) or a sentinel (`redis-server --sentinel`), on its own loopback address.
//!
//! Unlike a scenario node's [`crate::real::server::Server`], which rewrites its config at
//! every start because the scenario decides its role, a member's config file is written
//! once and then belongs to the process: the sentinels rewrite it (`CONFIG REWRITE` on a
//! data node they reconfigure, their own state in a sentinel's), and a restart comes back
//! with what they wrote, as a real deployment does. The process is started through
//! [`crate::children::spawn`], as every redis-server of lockstorm's is: its own process
//! group, killed with lockstorm (parent-death signal) and by an interrupt, reaped here.

use super::super::process::wait_ready;
use super::super::server::{self, release_port};
use super::super::RealError;
use crate::children;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A process of the deployment, named by what it was at the start: data node 0 is the
/// first master, 1..=R its replicas (in a cluster, 0..M the masters, redis0 the one that
/// owns the lock's slot, then the replicas); roles change at a failover, names do not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Member {
    Data(usize),
    Sentinel(usize),
}

impl std::fmt::Display for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Member::Data(i) => write!(f, "redis{i}"),
            Member::Sentinel(i) => write!(f, "sentinel{i}"),
        }
    }
}

/// A member's process and its two addresses: the announced one, where its front relay
/// listens and every other process reaches it ([`super::mesh`]), and the direct one,
/// where the process itself listens and only its relay and lockstorm's observers connect.
pub struct MemberProcess {
    pub member: Member,
    pub ip: Ipv4Addr,
    pub announced_port: u16,
    pub direct_port: u16,
    /// A cluster node's bus ports (announced, direct): where the other nodes' gossip
    /// reaches it through its bus relay, and where it listens itself (`cluster-port`).
    pub bus: Option<(u16, u16)>,
    dir: PathBuf,
    conf: PathBuf,
    binary: PathBuf,
    child: Option<Child>,
    /// Whether the running process is stopped (SIGSTOP), so a resume sends SIGCONT.
    paused: bool,
}

impl MemberProcess {
    /// Writes `lines` (directive, value) as the config in `dir` (created); does not start.
    pub fn new(
        member: Member,
        ip: Ipv4Addr,
        (announced_port, direct_port): (u16, u16),
        binary: &Path,
        dir: PathBuf,
        lines: &[(String, String)],
    ) -> Result<MemberProcess, RealError> {
        std::fs::create_dir_all(&dir).map_err(|e| RealError::Io(format!("create {}", dir.display()), e))?;
        let conf = dir.join(match member {
            Member::Data(_) => "redis.conf",
            Member::Sentinel(_) => "sentinel.conf",
        });
        let text: String = lines
            .iter()
            .map(|(k, v)| match v.is_empty() {
                true => format!("{k} \"\"\n"),
                false => format!("{k} {v}\n"),
            })
            .collect();
        std::fs::write(&conf, text).map_err(|e| RealError::Io(format!("write {}", conf.display()), e))?;
        Ok(MemberProcess {
            member,
            ip,
            announced_port,
            direct_port,
            bus: None,
            dir,
            conf,
            binary: binary.to_path_buf(),
            child: None,
            paused: false,
        })
    }

    pub fn announced(&self) -> SocketAddr {
        SocketAddr::from((self.ip, self.announced_port))
    }

    pub fn direct(&self) -> SocketAddr {
        SocketAddr::from((self.ip, self.direct_port))
    }

    pub fn log(&self) -> PathBuf {
        self.dir.join("redis.log")
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.as_ref().map(Child::id)
    }

    /// Starts the process on its config file (as the sentinels last rewrote it) and
    /// waits until it answers PING. A running process is killed first. Call it from a
    /// thread that outlives the deployment (see [`crate::children`]).
    pub async fn start(&mut self) -> Result<(), RealError> {
        self.kill();
        let mut cmd = Command::new(&self.binary);
        cmd.arg(&self.conf);
        if matches!(self.member, Member::Sentinel(_)) {
            cmd.arg("--sentinel");
        }
        cmd.current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let child = children::spawn(&mut cmd)
            .map_err(|e| RealError::Io(format!("start {}", self.binary.display()), e))?;
        self.child = Some(child);
        let (member, log) = (self.member.to_string(), self.log());
        wait_ready(
            self.direct(),
            || self.exited(),
            |last| RealError::MemberNotReady {
                member,
                log,
                last: server::with_conntrack(last),
            },
        )
        .await
    }

    /// The error to report if the process has exited (while it should be starting).
    fn exited(&mut self) -> Option<RealError> {
        let status = self.child.as_mut()?.try_wait().ok()??;
        if let Some(child) = self.child.take() {
            children::forget(child.id());
        }
        Some(RealError::MemberExited {
            member: self.member.to_string(),
            status: status.to_string(),
            said: crate::real::LastWords::of(&self.log()),
            log: self.log(),
        })
    }

    /// SIGKILL and reap: the crash fault, and what Drop does.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            children::forget(child.id());
        }
        self.paused = false;
    }

    /// SIGSTOP to the process: its sockets stay open and nothing is answered.
    pub fn pause(&mut self) {
        if let Some(pid) = self.pid() {
            children::signal(pid, libc::SIGSTOP);
            self.paused = true;
        }
    }

    pub fn resume(&mut self) {
        if let (Some(pid), true) = (self.pid(), self.paused) {
            children::signal(pid, libc::SIGCONT);
        }
        self.paused = false;
    }
}

impl Drop for MemberProcess {
    fn drop(&mut self) {
        self.kill();
        release_port(self.announced_port);
        release_port(self.direct_port);
        if let Some((announced, direct)) = self.bus {
            release_port(announced);
            release_port(direct);
        }
    }
}
