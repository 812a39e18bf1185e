//! The temporary directory of a real run: node configs, logs and AOFs, and the faketime
//! shim. Removed when the run ends, on an interrupt ([`crate::children`]) and, should
//! lockstorm be killed, by the [`crate::reaper`]; kept with `--keep`, and kept when the
//! run fails with an error that points to a node's log in it, so the log can be read.
//! Its mode is 0700, so the files in it are this user's alone.

use super::RealError;
use crate::lifecycle::NodeLog;
use std::path::Path;

/// Every `redis.log` under `dir` (a node's, a replica's, a deployment member's), in
/// name order. A log that cannot be read is left out: the report keeps what it can.
pub(crate) fn node_logs(dir: &Path) -> Vec<NodeLog> {
    let mut logs = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let path = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => folders.push(path),
                Ok(t) if t.is_file() && e.file_name() == "redis.log" => {
                    let Some(name) = folder.strip_prefix(dir).ok().map(|p| {
                        p.components()
                            .map(|c| c.as_os_str().to_string_lossy().into_owned())
                            .collect::<Vec<_>>()
                            .join("-")
                    }) else {
                        continue;
                    };
                    if let (false, Ok(bytes)) = (name.is_empty(), std::fs::read(&path)) {
                        logs.push(NodeLog { name, bytes });
                    }
                }
                _ => {}
            }
        }
    }
    logs.sort_by(|a, b| a.name.cmp(&b.name));
    logs
}

pub(crate) struct WorkDir {
    tmp: tempfile::TempDir,
    keep: bool,
}

impl WorkDir {
    /// Creates `<tmp>/<prefix>XXXXXX`, listed for removal on an interrupt unless `keep`.
    /// Only this user may enter it (0700): configs, AOFs and logs are nobody else's.
    pub(crate) fn create(prefix: &str, keep: bool) -> Result<WorkDir, RealError> {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::Builder::new()
            .prefix(prefix)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .map_err(|e| RealError::Io("create a temporary directory".into(), e))?;
        if !keep {
            crate::children::register_dir(tmp.path());
        }
        Ok(WorkDir { tmp, keep })
    }

    pub(crate) fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// The run is over (its processes are gone): removes the directory, or keeps it and
    /// says where.
    pub(crate) fn close<T>(self, result: &Result<T, RealError>) {
        if !self.keep {
            crate::children::unregister_dir(self.tmp.path());
        }
        if self.keep || result.as_ref().err().and_then(RealError::log).is_some() {
            let kept = self.tmp.keep();
            crate::errln!("lockstorm: kept the nodes' directories in {}", kept.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::node_logs;

    #[test]
    fn every_servers_log_is_found_and_named_by_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        for (folder, text) in [
            ("node1", "one"),
            ("node0", "zero"),
            ("node0-replica", "replica"),
            ("sentinel/redis0", "member"),
        ] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
            std::fs::write(dir.path().join(folder).join("redis.log"), text).unwrap();
        }
        std::fs::write(dir.path().join("node0/redis.conf"), "port 1").unwrap();
        let logs = node_logs(dir.path());
        let got: Vec<(&str, &[u8])> = logs.iter().map(|l| (l.name.as_str(), &l.bytes[..])).collect();
        assert_eq!(
            got,
            [
                ("node0", &b"zero"[..]),
                ("node0-replica", b"replica"),
                ("node1", b"one"),
                ("sentinel-redis0", b"member")
            ]
        );
    }
}
