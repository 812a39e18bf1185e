//! redis-server processes that lockstorm starts, breaks and always cleans up.
//!
//! Each node gets a free loopback port, its own temporary directory and a config file
//! with the scenario's persistence. A [`Server`] is a guard: dropping it SIGKILLs the
//! process and waits for it; the process is started through [`crate::children`], so it
//! dies with lockstorm whatever happens and an interrupt or a panic kills it too.
//! Crash = SIGKILL, restart = start again from the same directory and port, pause =
//! SIGSTOP until SIGCONT. Clock faults go through libfaketime ([`super::faketime`]).
//! [`config`] is the configuration every node gets, here and in a container.

use super::faketime::Faketime;
use super::RealError;
use crate::children;
use crate::fault::Persistence;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The redis-server binary, or the one-line error telling how to install it.
pub fn binary() -> Result<PathBuf, RealError> {
    let name = std::env::var_os("LOCKSTORM_REDIS_SERVER").unwrap_or_else(|| "redis-server".into());
    let name = PathBuf::from(name);
    if name.components().count() > 1 {
        return if name.is_file() {
            Ok(name)
        } else {
            Err(RealError::NoRedisServer)
        };
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .map(|dir| dir.join(&name))
        .find(|p| p.is_file())
        .ok_or(RealError::NoRedisServer)
}

/// The version of the redis-server [`binary`] runs ("7.0.15"), for the report; `None`
/// if there is none or it does not say.
pub fn version() -> Option<String> {
    let out = Command::new(binary().ok()?)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 bits=64 build=..."
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .map(str::to_string)
}

/// Ports handed out by [`free_port`] and not given back yet ([`release_port`]). A node
/// keeps its port while it is down (crashed, waiting for its restart), so no other run
/// of this process (`lockstorm matrix --jobs N` runs several at once) may take it then.
static TAKEN: std::sync::Mutex<std::collections::BTreeSet<u16>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Where the next search for a free port starts (seeded from the process id, so two
/// lockstorm processes start apart).
static CURSOR: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(u32::MAX);

/// How many ports below the kernel's ephemeral range nodes take theirs from.
const NODE_PORTS: u32 = 12_000;

/// A free loopback port for a node, reserved in this process until [`release_port`].
/// It is taken below the kernel's ephemeral range (`ip_local_port_range`), so no port
/// the kernel picks by itself (a proxy's listener, an outgoing connection) is ever a
/// node's port while the node is down; a port is checked free by binding it. Another
/// process could still take it before redis-server binds; start() then fails with a
/// clear error. Without that range (not Linux), the kernel's choice (bind port 0).
pub fn free_port() -> Result<u16, RealError> {
    use std::sync::atomic::Ordering;
    let mut taken = TAKEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((low, high)) = node_port_range() {
        let span = high - low;
        let _ = CURSOR.compare_exchange(
            u32::MAX,
            std::process::id().wrapping_mul(7_919) % span,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
        for _ in 0..span {
            let offset = CURSOR.fetch_add(1, Ordering::Relaxed) % span;
            let port = (low + offset) as u16;
            if !taken.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
                taken.insert(port);
                return Ok(port);
            }
        }
    }
    for _ in 0..100 {
        let l =
            TcpListener::bind("127.0.0.1:0").map_err(|e| RealError::Io("bind a loopback port".into(), e))?;
        let port = l
            .local_addr()
            .map_err(|e| RealError::Io("read a port".into(), e))?
            .port();
        if taken.insert(port) {
            return Ok(port);
        }
    }
    Err(RealError::Io(
        "find a free loopback port".into(),
        std::io::Error::new(std::io::ErrorKind::AddrInUse, "every port tried is taken"),
    ))
}

/// Gives a port of [`free_port`] back, once its node is gone for good.
pub fn release_port(port: u16) {
    TAKEN.lock().unwrap_or_else(|e| e.into_inner()).remove(&port);
}

/// The node ports: the [`NODE_PORTS`] ports below the ephemeral range (from 1024 up).
fn node_port_range() -> Option<(u32, u32)> {
    let text = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range").ok()?;
    let first: u32 = text.split_whitespace().next()?.parse().ok()?;
    let low = first.saturating_sub(NODE_PORTS).max(1_024);
    (first > low + 100).then_some((low, first))
}

/// The configuration every redis-server of a run gets, local or in a container, as
/// (directive, value) pairs: a config file's lines or `--directive value` arguments.
pub fn config(
    port: u16,
    persistence: Persistence,
    replica_of: Option<SocketAddr>,
) -> Vec<(&'static str, String)> {
    let mut c = vec![
        ("port", port.to_string()),
        ("bind", "127.0.0.1".into()),
        ("protected-mode", "no".into()),
        // No RDB snapshots: persistence is the AOF alone, as the scenario says.
        ("save", String::new()),
        ("daemonize", "no".into()),
        ("appendfilename", "appendonly.aof".into()),
        // A replica's full resync starts at once, not after the 5 s default wait for
        // more replicas.
        ("repl-diskless-sync-delay", "0".into()),
    ];
    match persistence {
        Persistence::None => c.push(("appendonly", "no".into())),
        Persistence::AofEverysec => {
            c.push(("appendonly", "yes".into()));
            c.push(("appendfsync", "everysec".into()));
        }
        Persistence::AofAlways => {
            c.push(("appendonly", "yes".into()));
            c.push(("appendfsync", "always".into()));
        }
    }
    if let Some(master) = replica_of {
        c.push(("replicaof", format!("{} {}", master.ip(), master.port())));
    }
    c
}

/// One redis-server process: its directory, port and (while running) process.
pub struct Server {
    pub index: usize,
    pub port: u16,
    dir: PathBuf,
    binary: PathBuf,
    persistence: Persistence,
    child: Option<Child>,
    /// Whether the running process is stopped (SIGSTOP), so a resume sends SIGCONT.
    paused: bool,
    faketime: Option<Faketime>,
}

impl Server {
    /// Writes the node's config into `dir` and starts it; returns once it answers PING.
    pub fn start(
        index: usize,
        binary: &Path,
        dir: PathBuf,
        persistence: Persistence,
        faketime: Option<Faketime>,
    ) -> Result<Server, RealError> {
        let mut server = Server::new(index, binary, dir, persistence, faketime)?;
        server.launch(None)?;
        server.wait_ready()?;
        Ok(server)
    }

    /// A server on a free port with its directory, not started yet.
    pub fn new(
        index: usize,
        binary: &Path,
        dir: PathBuf,
        persistence: Persistence,
        faketime: Option<Faketime>,
    ) -> Result<Server, RealError> {
        Ok(Server {
            index,
            port: free_port()?,
            dir,
            binary: binary.to_path_buf(),
            persistence,
            child: None,
            paused: false,
            faketime,
        })
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn log(&self) -> PathBuf {
        self.dir.join("redis.log")
    }

    pub fn faketime_mut(&mut self) -> Option<&mut Faketime> {
        self.faketime.as_mut()
    }

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Writes the config and starts the process on the directory's data, as a replica
    /// of `replica_of` if given; does not wait for it to answer. Call it from a thread
    /// that outlives the process (see [`crate::children`]).
    pub fn launch(&mut self, replica_of: Option<SocketAddr>) -> Result<(), RealError> {
        let mut lines = config(self.port, self.persistence, replica_of);
        lines.push(("dir", self.dir.display().to_string()));
        lines.push(("logfile", "redis.log".into()));
        let text: String = lines
            .iter()
            .map(|(k, v)| {
                if v.is_empty() {
                    format!("{k} \"\"\n")
                } else {
                    format!("{k} {v}\n")
                }
            })
            .collect();
        let conf = self.dir.join("redis.conf");
        std::fs::write(&conf, text).map_err(|e| RealError::Io(format!("write {}", conf.display()), e))?;
        let mut cmd = Command::new(&self.binary);
        cmd.arg(&conf)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        if let Some(ft) = &mut self.faketime {
            ft.apply(&mut cmd);
        }
        let child = children::spawn(&mut cmd)
            .map_err(|e| RealError::Io(format!("start {}", self.binary.display()), e))?;
        self.child = Some(child);
        Ok(())
    }

    /// The error to report if the process has exited (while it should be starting).
    pub fn exited(&mut self) -> Option<RealError> {
        let status = self.child.as_mut()?.try_wait().ok()??;
        self.forget();
        Some(RealError::ServerExited {
            node: self.index,
            status: status.to_string(),
            said: crate::real::LastWords::of(&self.log()),
            log: self.log(),
        })
    }

    /// Waits until the port accepts and the server answers PING (it may be loading its AOF).
    fn wait_ready(&mut self) -> Result<(), RealError> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(e) = self.exited() {
                return Err(e);
            }
            let last = match probe(self.addr()) {
                Ok(()) => return Ok(()),
                Err(why) => why,
            };
            if Instant::now() > deadline {
                return Err(RealError::ServerNotReady {
                    node: self.index,
                    log: self.log(),
                    last: with_conntrack(last),
                });
            }
            std::thread::sleep(Duration::from_millis(5));
        }
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

    fn forget(&mut self) {
        if let Some(child) = self.child.take() {
            children::forget(child.id());
        }
    }

    /// Starts the node again from its directory (its AOF, if any) on the same port.
    pub fn restart(&mut self) -> Result<(), RealError> {
        self.kill();
        self.launch(None)?;
        self.wait_ready()
    }

    /// SIGSTOP: the process stays, sockets stay open, nothing is answered. (A pause of
    /// a node that is down waits for its restart in `super::node`.)
    pub fn pause(&mut self) {
        if let Some(child) = &self.child {
            children::signal(child.id(), libc::SIGSTOP);
            self.paused = true;
        }
    }

    pub fn resume(&mut self) {
        if let Some(child) = &self.child {
            if self.paused {
                children::signal(child.id(), libc::SIGCONT);
            }
        }
        self.paused = false;
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
        release_port(self.port);
    }
}

/// `message`, with [`conntrack_full`]'s clause when the table is full: the reason a
/// loopback connection timed out or a request went unanswered.
pub fn with_conntrack(message: String) -> String {
    match conntrack_full() {
        Some(why) => format!("{message} ({why})"),
        None => message,
    }
}

/// When the kernel's connection-tracking table is full, a clause saying so. It then drops
/// packets, loopback ones included: connections time out and requests go unanswered. A
/// library that opens a connection per command (the redlock crate), doubled by
/// lockstorm's proxy, can fill it: a gracefully closed connection keeps its entry for the
/// conntrack TIME_WAIT timeout (120 s by default). The proxy ends the connections a
/// client closed with a reset (10 s each), but other processes share the table.
pub fn conntrack_full() -> Option<String> {
    let read = |name: &str| -> Option<u64> {
        std::fs::read_to_string(format!("/proc/sys/net/netfilter/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    conntrack_clause(read("nf_conntrack_count")?, read("nf_conntrack_max")?)
}

/// The clause for `count` of `max` entries in use: full from 95%.
fn conntrack_clause(count: u64, max: u64) -> Option<String> {
    (max > 0 && count.saturating_mul(100) >= max.saturating_mul(95)).then(|| {
        format!(
            "the kernel's connection-tracking table is full, {count} of {max} entries \
             (net.netfilter.nf_conntrack_max): it drops packets"
        )
    })
}

/// How long a starting server may take to answer PING (loading an AOF included).
pub const READY_TIMEOUT: Duration = Duration::from_secs(10);

/// PING with a short timeout: true when the reply is `+PONG` (a server still loading
/// its AOF answers `-LOADING`).
pub async fn ping_async(addr: SocketAddr) -> bool {
    probe_async(addr).await.is_ok()
}

/// One PING with a short timeout; on failure, what went wrong (for the error that names a
/// node that never came up: a refused connection, no reply, or a reply that is not PONG,
/// such as "max number of clients reached").
pub async fn probe_async(addr: SocketAddr) -> Result<(), String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let attempt = async {
        let mut s = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        s.write_all(b"PING\r\n")
            .await
            .map_err(|e| format!("send PING: {e}"))?;
        let mut buf = [0u8; 128];
        let mut got = 0;
        while !buf[..got].ends_with(b"\r\n") && got < buf.len() {
            match s.read(&mut buf[got..]).await {
                Ok(0) => return Err(format!("connection closed after {got} bytes")),
                Ok(n) => got += n,
                Err(e) => return Err(format!("read: {e}")),
            }
        }
        pong(&buf[..got])
    };
    match tokio::time::timeout(Duration::from_millis(500), attempt).await {
        Ok(r) => r,
        Err(_) => Err("no reply within 500 ms".to_string()),
    }
}

/// A blocking PING with a short timeout: true when the reply is `+PONG`.
pub fn ping(addr: SocketAddr) -> bool {
    probe(addr).is_ok()
}

/// [`probe_async`], blocking.
pub fn probe(addr: SocketAddr) -> Result<(), String> {
    use std::io::{Read, Write};
    let mut s =
        TcpStream::connect_timeout(&addr, Duration::from_millis(100)).map_err(|e| format!("connect: {e}"))?;
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    s.write_all(b"PING\r\n").map_err(|e| format!("send PING: {e}"))?;
    let mut buf = [0u8; 128];
    let mut got = 0;
    while !buf[..got].ends_with(b"\r\n") && got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) => return Err(format!("connection closed after {got} bytes")),
            Ok(n) => got += n,
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    pong(&buf[..got])
}

/// Whether a reply line is PONG; if not, what it was.
fn pong(reply: &[u8]) -> Result<(), String> {
    match reply {
        b"+PONG\r\n" => Ok(()),
        other => Err(format!("replied {:?}", String::from_utf8_lossy(other).trim_end())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_connection_tracking_table_is_named() {
        assert_eq!(conntrack_clause(100, 1_000), None);
        assert_eq!(conntrack_clause(0, 0), None);
        let full = conntrack_clause(262_144, 262_144).expect("full");
        assert!(
            full.contains("262144 of 262144") && full.contains("drops packets"),
            "{full}"
        );
        assert!(conntrack_clause(950, 1_000).is_some(), "95% is full");
    }

    fn alive(pid: u32) -> bool {
        // A reaped child's pid no longer exists: kill(pid, 0) fails.
        // SAFETY: signal 0 only checks that the process exists.
        unsafe { libc::kill(pid as libc::pid_t, 0) == 0 }
    }

    #[test]
    fn dropping_a_server_kills_and_reaps_it() {
        let binary = binary().unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().unwrap();
        let server = Server::start(0, &binary, dir.path().to_path_buf(), Persistence::None, None).unwrap();
        let pid = server.child.as_ref().unwrap().id();
        assert!(ping(server.addr()));
        assert!(children::is_listed(pid));
        let addr = server.addr();
        drop(server);
        assert!(!alive(pid), "redis-server {pid} still running");
        assert!(!children::is_listed(pid));
        assert!(!ping(addr));
    }

    #[test]
    fn a_paused_server_answers_after_it_resumes() {
        let binary = binary().unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().unwrap();
        let mut server =
            Server::start(0, &binary, dir.path().to_path_buf(), Persistence::None, None).unwrap();
        server.pause();
        assert!(!ping(server.addr()), "a stopped server must not answer");
        server.resume();
        assert!(ping(server.addr()));
    }

    #[test]
    fn aof_always_keeps_keys_across_a_kill() {
        use std::io::{Read, Write};
        let binary = binary().unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().unwrap();
        let mut server =
            Server::start(0, &binary, dir.path().to_path_buf(), Persistence::AofAlways, None).unwrap();
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.write_all(b"SET k v PX 60000\r\n").unwrap();
        let mut ok = [0u8; 5];
        s.read_exact(&mut ok).unwrap();
        assert_eq!(&ok, b"+OK\r\n");
        server.restart().unwrap();
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.write_all(b"GET k\r\n").unwrap();
        let mut v = [0u8; 7];
        s.read_exact(&mut v).unwrap();
        assert_eq!(&v, b"$1\r\nv\r\n");
    }
}
