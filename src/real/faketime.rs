//! Clock faults on real nodes through libfaketime (Debian package `faketime`).
//!
//! Each node that may see a clock fault starts with libfaketime preloaded, behind a small
//! allocator shim (`faketime_shim.c`, compiled by `build.rs` and embedded in the binary) without
//! which Debian's redis-server hangs at start. The offset and rate live in a per-node
//! `FAKETIME_TIMESTAMP_FILE`, replaced atomically to change them while the node runs;
//! `FAKETIME_NO_CACHE=1` makes the change visible at once, and `DONT_FAKE_MONOTONIC=1`
//! keeps the monotonic clock real (serverCron stalls after a backward jump otherwise).
//! Only the wall clock moves, which is what Redis uses for key expiry.

use super::RealError;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The allocator shim, compiled from `faketime_shim.c` by `build.rs`; empty when the
/// build could not compile it, and then [`SHIM_WHY_NOT`] says why.
const SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/faketime_shim.so"));
const SHIM_WHY_NOT: &str = include_str!(concat!(env!("OUT_DIR"), "/faketime_shim.why"));

const LIBFAKETIME: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
    "/usr/lib/faketime/libfaketime.so.1",
    "/usr/local/lib/faketime/libfaketime.so.1",
];

/// The built shim and the library, shared by every node of a run.
#[derive(Clone, Debug)]
pub struct FaketimeLibs {
    shim: PathBuf,
    libfaketime: PathBuf,
}

impl FaketimeLibs {
    /// Finds libfaketime and writes the shim (built by `build.rs`) into `dir`.
    pub fn build(dir: &Path) -> Result<FaketimeLibs, RealError> {
        let libfaketime = LIBFAKETIME
            .iter()
            .map(PathBuf::from)
            .find(|p| p.is_file())
            .ok_or(RealError::NoFaketime)?;
        if SHIM.is_empty() {
            return Err(RealError::Shim(SHIM_WHY_NOT.to_string()));
        }
        let shim = dir.join("faketime_shim.so");
        std::fs::write(&shim, SHIM).map_err(|e| RealError::Io(format!("write {}", shim.display()), e))?;
        Ok(FaketimeLibs { shim, libfaketime })
    }

    /// The libraries at fixed paths inside lockstorm's container image
    /// (`docker/build-rootfs.sh` puts them there).
    pub fn in_image() -> FaketimeLibs {
        FaketimeLibs {
            shim: PathBuf::from("/usr/lib/lockstorm/faketime_shim.so"),
            libfaketime: PathBuf::from("/usr/lib/lockstorm/libfaketime.so.1"),
        }
    }

    /// `LD_PRELOAD`: the shim first, so its allocator is the one libfaketime gets.
    fn preload(&self) -> String {
        format!("{}:{}", self.shim.display(), self.libfaketime.display())
    }

    /// A node's clock, with its timestamp file in `node_dir`, starting at no offset.
    pub fn node(&self, node_dir: &Path) -> Result<Faketime, RealError> {
        let ft = Faketime {
            libs: self.clone(),
            file: node_dir.join("faketime.rc"),
            offset_us: 0,
            rate: 1.0,
            started: std::time::Instant::now(),
        };
        ft.write()?;
        Ok(ft)
    }
}

/// One node's fake clock: an offset from true wall time and a rate.
#[derive(Clone, Debug)]
pub struct Faketime {
    libs: FaketimeLibs,
    file: PathBuf,
    offset_us: i64,
    rate: f64,
    /// When the node's process last started: libfaketime scales time since then.
    started: std::time::Instant,
}

impl Faketime {
    /// Sets the environment of a redis-server command about to start. A restarted
    /// process starts its rate from scratch, which the next rate change accounts for.
    pub fn apply(&mut self, cmd: &mut Command) {
        let file = self.file.clone();
        for (k, v) in self.env(&file) {
            cmd.env(k, v);
        }
    }

    /// The environment of a redis-server about to start, which sees this clock's file at
    /// `file` (a container sees it where its directory is mounted).
    pub fn env(&mut self, file: &Path) -> Vec<(&'static str, String)> {
        self.started = std::time::Instant::now();
        vec![
            ("LD_PRELOAD", self.libs.preload()),
            ("FAKETIME_TIMESTAMP_FILE", file.display().to_string()),
            ("FAKETIME_NO_CACHE", "1".into()),
            ("DONT_FAKE_MONOTONIC", "1".into()),
        ]
    }

    /// The timestamp file, on this machine.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Moves the node's wall clock by `delta_us` (negative: backwards) from where it is.
    pub fn jump(&mut self, delta_us: i64) -> Result<(), RealError> {
        self.offset_us += delta_us;
        self.write()
    }

    /// Sets the rate the node's clock runs at from now on (1.0 = real time).
    /// libfaketime scales all time since the process started, so a change would also
    /// move the reading by (new − old rate) × uptime; the offset takes that back, and
    /// the clock keeps the drift it accumulated.
    pub fn set_rate(&mut self, rate: f64) -> Result<(), RealError> {
        let uptime_us = self.started.elapsed().as_micros() as f64;
        self.offset_us -= ((rate - self.rate) * uptime_us) as i64;
        self.rate = rate;
        self.write()
    }

    pub fn offset_us(&self) -> i64 {
        self.offset_us
    }

    /// Replaces the timestamp file atomically (write a sibling, rename over).
    fn write(&self) -> Result<(), RealError> {
        let sign = if self.offset_us < 0 { '-' } else { '+' };
        let abs = self.offset_us.unsigned_abs();
        let mut spec = format!("{sign}{}.{:06}", abs / 1_000_000, abs % 1_000_000);
        if self.rate != 1.0 {
            spec.push_str(&format!(" x{}", self.rate));
        }
        let tmp = self.file.with_extension("rc.tmp");
        std::fs::write(&tmp, format!("{spec}\n"))
            .and_then(|()| std::fs::rename(&tmp, &self.file))
            .map_err(|e| RealError::Io(format!("write {}", self.file.display()), e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fault::Persistence;
    use crate::real::server::{binary, Server};
    use std::io::{Read, Write};

    /// The node's wall clock in seconds, by `TIME`.
    fn node_time_s(server: &Server) -> f64 {
        let mut s = std::net::TcpStream::connect(server.addr()).unwrap();
        s.write_all(b"TIME\r\n").unwrap();
        let mut buf = [0u8; 128];
        let mut text = String::new();
        while text.matches("\r\n").count() < 5 {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "connection closed");
            text.push_str(std::str::from_utf8(&buf[..n]).unwrap());
        }
        let lines: Vec<&str> = text.split("\r\n").collect();
        lines[2].parse::<f64>().unwrap() + lines[4].parse::<f64>().unwrap() / 1e6
    }

    fn true_time_s() -> f64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64()
    }

    #[test]
    fn redis_server_starts_under_libfaketime_and_its_clock_jumps_both_ways() {
        let dir = tempfile::tempdir().unwrap();
        let libs = FaketimeLibs::build(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let node_dir = dir.path().join("node0");
        std::fs::create_dir_all(&node_dir).unwrap();
        let ft = libs.node(&node_dir).unwrap();
        let bin = binary().unwrap_or_else(|e| panic!("{e}"));
        let mut server = Server::start(0, &bin, node_dir, Persistence::None, Some(ft)).unwrap();
        assert!((node_time_s(&server) - true_time_s()).abs() < 1.0);

        server.faketime_mut().unwrap().jump(3_600_000_000).unwrap();
        let ahead = node_time_s(&server) - true_time_s();
        assert!(
            (ahead - 3_600.0).abs() < 1.0,
            "after +1h the node is {ahead}s ahead"
        );

        server.faketime_mut().unwrap().jump(-7_200_000_000).unwrap();
        let behind = node_time_s(&server) - true_time_s();
        assert!(
            (behind + 3_600.0).abs() < 1.0,
            "after -2h the node is {behind}s off"
        );
    }

    #[test]
    fn a_rate_change_runs_the_clock_faster_without_a_jump() {
        let dir = tempfile::tempdir().unwrap();
        let libs = FaketimeLibs::build(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let node_dir = dir.path().join("node0");
        std::fs::create_dir_all(&node_dir).unwrap();
        let ft = libs.node(&node_dir).unwrap();
        let bin = binary().unwrap_or_else(|e| panic!("{e}"));
        let mut server = Server::start(0, &bin, node_dir, Persistence::None, Some(ft)).unwrap();
        // Let the process age, so an uncompensated rate change would jump by uptime.
        std::thread::sleep(std::time::Duration::from_millis(500));
        server.faketime_mut().unwrap().set_rate(3.0).unwrap();
        let (node0, true0) = (node_time_s(&server), true_time_s());
        assert!(
            (node0 - true0).abs() < 0.3,
            "rate change jumped the clock by {}s",
            node0 - true0
        );
        // Measuring a rate needs real time to pass.
        std::thread::sleep(std::time::Duration::from_millis(500));
        let (node1, true1) = (node_time_s(&server), true_time_s());
        let rate = (node1 - node0) / (true1 - true0);
        assert!((2.0..4.0).contains(&rate), "node clock ran at {rate}x, set 3x");
    }
}
