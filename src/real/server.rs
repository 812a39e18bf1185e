//! redis-server processes that lockstorm starts, breaks and always cleans up.
//!
//! Each node gets a free loopback port, its own temporary directory and a config file
//! with the scenario's persistence. A [`Server`] is a guard: dropping it SIGKILLs the
//! process and waits for it; the process is started through [`crate::children`], so it
//! dies with lockstorm whatever happens and an interrupt or a panic kills it too.
//! Crash = SIGKILL, restart = start again from the same directory and port, pause =
//! SIGSTOP until SIGCONT. Clock faults go through libfaketime ([`super::faketime`]).

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

/// A free loopback port: bind port 0, read it back, close. Another process could take
/// it before redis-server binds; start() then fails with a clear error.
pub fn free_port() -> Result<u16, RealError> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| RealError::Io("bind a loopback port".into(), e))?;
    Ok(l.local_addr()
        .map_err(|e| RealError::Io("read a port".into(), e))?
        .port())
}

/// One redis-server node: its directory, port and (while running) process.
pub struct Server {
    pub index: usize,
    pub port: u16,
    dir: PathBuf,
    binary: PathBuf,
    child: Option<Child>,
    /// Whether a pause is in force: kept across a crash, so that a process restarted
    /// during a pause is stopped again ([`Server::keep_paused`]).
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
        let port = free_port()?;
        let aof = match persistence {
            Persistence::None => "appendonly no\n",
            Persistence::AofEverysec => "appendonly yes\nappendfsync everysec\n",
            Persistence::AofAlways => "appendonly yes\nappendfsync always\n",
        };
        let config = format!(
            "port {port}\nbind 127.0.0.1\nprotected-mode no\ndir {}\nsave \"\"\n{aof}\
             daemonize no\nlogfile redis.log\nappendfilename appendonly.aof\n",
            dir.display()
        );
        std::fs::write(dir.join("redis.conf"), config)
            .map_err(|e| RealError::Io(format!("write {}", dir.join("redis.conf").display()), e))?;
        let mut server = Server {
            index,
            port,
            dir,
            binary: binary.to_path_buf(),
            child: None,
            paused: false,
            faketime,
        };
        server.spawn()?;
        Ok(server)
    }

    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn faketime_mut(&mut self) -> Option<&mut Faketime> {
        self.faketime.as_mut()
    }

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    fn spawn(&mut self) -> Result<(), RealError> {
        let mut cmd = Command::new(&self.binary);
        cmd.arg(self.dir.join("redis.conf"))
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
        self.wait_ready()
    }

    /// Waits until the port accepts and the server answers PING (it may be loading its AOF).
    fn wait_ready(&mut self) -> Result<(), RealError> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(child) = &mut self.child {
                if let Ok(Some(status)) = child.try_wait() {
                    self.forget();
                    return Err(RealError::ServerExited {
                        node: self.index,
                        status: status.to_string(),
                        log: self.dir.join("redis.log"),
                    });
                }
            }
            if ping(self.addr()) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(RealError::ServerNotReady {
                    node: self.index,
                    log: self.dir.join("redis.log"),
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
    }

    fn forget(&mut self) {
        if let Some(child) = self.child.take() {
            children::forget(child.id());
        }
    }

    /// Starts the node again from its directory (its AOF, if any) on the same port.
    pub fn restart(&mut self) -> Result<(), RealError> {
        self.kill();
        self.spawn()
    }

    /// SIGSTOP: the process stays, sockets stay open, nothing is answered. A node that
    /// is down is stopped when it restarts.
    pub fn pause(&mut self) {
        self.paused = true;
        self.keep_paused();
    }

    /// Stops a restarted process again if a pause is still in force.
    pub fn keep_paused(&mut self) {
        if let (Some(child), true) = (&self.child, self.paused) {
            children::signal(child.id(), libc::SIGSTOP);
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
    }
}

/// A blocking PING with a short timeout: true when the reply is `+PONG`.
pub fn ping(addr: SocketAddr) -> bool {
    use std::io::{Read, Write};
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(100)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_millis(500)));
    if s.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut buf = [0u8; 7];
    s.read_exact(&mut buf).is_ok() && &buf == b"+PONG\r\n"
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_server_paused_while_down_is_stopped_again_once_restarted() {
        let binary = binary().unwrap_or_else(|e| panic!("{e}"));
        let dir = tempfile::tempdir().unwrap();
        let mut server =
            Server::start(0, &binary, dir.path().to_path_buf(), Persistence::None, None).unwrap();
        server.kill();
        server.pause();
        server.restart().unwrap();
        assert!(ping(server.addr()), "the restarted process runs until told");
        server.keep_paused();
        assert!(!ping(server.addr()), "a pause still in force stops it again");
        server.resume();
        assert!(ping(server.addr()));
        server.keep_paused();
        assert!(ping(server.addr()), "no pause in force: nothing to keep");
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
