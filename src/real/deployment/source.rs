//! A worker's own loopback IP on a Sentinel deployment: the relays tell clients apart by
//! the source IP of their connections ([`super::client_of`]), and a worker's library
//! connects wherever the sentinels send it, from the default address. `bind_shim.c`
//! (compiled by `build.rs`, embedded here) is preloaded into the worker and binds each of
//! its connections to the deployment (127.77.0.0/16) to the client's IP
//! ([`super::client_ip`]) before it connects, so a partition can cut one worker off one
//! member as it cuts one of lockstorm's own clients.

use crate::real::RealError;
use std::ffi::OsString;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::Command;

const SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/bind_shim.so"));
const SHIM_WHY_NOT: &str = include_str!(concat!(env!("OUT_DIR"), "/bind_shim.why"));

/// The variable the shim reads the IP from.
pub const SOURCE_IP_VAR: &str = "LOCKSTORM_SOURCE_IP";

/// The shim, written once per run.
#[derive(Clone, Debug)]
pub struct SourceShim {
    path: PathBuf,
}

impl SourceShim {
    /// Writes the shim (built by `build.rs`) into `dir`.
    pub fn write(dir: &Path) -> Result<SourceShim, RealError> {
        if SHIM.is_empty() {
            return Err(RealError::Worker(format!(
                "workers on a Sentinel deployment or a cluster need the source-address shim, which this build of lockstorm lacks: {SHIM_WHY_NOT}"
            )));
        }
        std::fs::create_dir_all(dir).map_err(|e| RealError::Io(format!("create {}", dir.display()), e))?;
        let path = dir.join("bind_shim.so");
        std::fs::write(&path, SHIM).map_err(|e| RealError::Io(format!("write {}", path.display()), e))?;
        Ok(SourceShim { path })
    }

    /// Makes `cmd` connect to the deployment from `ip`: the shim joins whatever
    /// `LD_PRELOAD` the command already has (libfaketime's, for one), or else inherits.
    pub fn apply(&self, cmd: &mut Command, ip: Ipv4Addr) {
        let before = match cmd.get_envs().find(|(k, _)| *k == "LD_PRELOAD") {
            Some((_, set)) => set.map(|v| v.to_os_string()),
            None => std::env::var_os("LD_PRELOAD"),
        };
        let mut preload = before.unwrap_or_default();
        if !preload.is_empty() {
            preload.push(":");
        }
        preload.push(&self.path);
        cmd.env("LD_PRELOAD", preload);
        cmd.env(SOURCE_IP_VAR, OsString::from(ip.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{SocketAddr, TcpListener};

    /// A program under the shim connects to a deployment's address from the IP it was
    /// given, and to any other address as before.
    #[test]
    fn a_preloaded_program_connects_to_the_deployment_from_its_own_ip() {
        if SHIM.is_empty() {
            crate::errln!("SKIPPED: this build has no source-address shim ({SHIM_WHY_NOT})");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let shim = SourceShim::write(dir.path()).unwrap();
        let deployment = TcpListener::bind("127.77.250.2:0").unwrap();
        let other = TcpListener::bind("127.0.0.1:0").unwrap();
        let program = |to: SocketAddr| {
            let mut cmd = Command::new("python3");
            cmd.args([
                "-c",
                "import socket,sys; s=socket.create_connection((sys.argv[1], int(sys.argv[2]))); s.close()",
                &to.ip().to_string(),
                &to.port().to_string(),
            ]);
            shim.apply(&mut cmd, Ipv4Addr::new(127, 77, 250, 130));
            cmd
        };
        for (listener, from) in [(&deployment, "127.77.250.130"), (&other, "127.0.0.1")] {
            let status = program(listener.local_addr().unwrap()).status().unwrap();
            assert!(status.success(), "{status}");
            let (_, peer) = listener.accept().unwrap();
            assert_eq!(
                peer.ip().to_string(),
                from,
                "connected to {:?}",
                listener.local_addr()
            );
        }
    }
}
