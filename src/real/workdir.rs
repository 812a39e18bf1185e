//! The temporary directory of a real run: node configs, logs and AOFs, and the faketime
//! shim. Removed when the run ends, on an interrupt ([`crate::children`]) and, should
//! lockstorm be killed, by the [`crate::reaper`]; kept with `--keep`, and kept when the
//! run fails with an error that points to a node's log in it, so the log can be read.
//! Its mode is 0700, so the files in it are this user's alone.

use super::RealError;
use std::path::Path;

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
            eprintln!("lockstorm: kept the nodes' directories in {}", kept.display());
        }
    }
}
