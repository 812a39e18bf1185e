//! Labels on everything lockstorm creates in Docker, and removal by label.
//!
//! Every container and volume of a run carries [`RUN`] (the run's id) and [`OWNER`] (the
//! lockstorm process: pid and start time). A run removes what it made when it ends; an
//! interrupt or a panic removes everything with the run's label ([`remove_blocking`],
//! registered with [`crate::children::register_cleanup`]); `lockstorm clean` removes what runs
//! killed by SIGKILL left: everything whose owner process is gone, or with `--all`
//! everything lockstorm ever labelled. A run still going in another lockstorm process
//! is left alone, so `clean` is safe beside other runs.

use super::docker_error;
use crate::real::RealError;
use std::collections::HashMap;
use testcontainers::bollard::query_parameters::{
    ListContainersOptionsBuilder, ListNetworksOptionsBuilder, ListVolumesOptionsBuilder,
    RemoveContainerOptionsBuilder, RemoveVolumeOptionsBuilder,
};
use testcontainers::bollard::Docker;

/// The run a container or volume belongs to.
pub const RUN: &str = "lockstorm.run";
/// The lockstorm process that made it: `<pid>:<start time in clock ticks>`.
pub const OWNER: &str = "lockstorm.owner";

/// This process as an [`OWNER`] label value.
pub fn owner() -> String {
    let pid = std::process::id();
    format!("{pid}:{}", start_ticks(pid).unwrap_or(0))
}

/// A process's start time (field 22 of /proc/PID/stat), which tells a live process from
/// a later one that reused its pid.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; fields after it follow its ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(19)?.parse().ok()
}

/// Whether the process named by an [`OWNER`] value still runs.
fn owner_alive(owner: &str) -> bool {
    let Some((pid, ticks)) = owner.split_once(':') else {
        return false;
    };
    let (Ok(pid), Ok(ticks)) = (pid.parse::<u32>(), ticks.parse::<u64>()) else {
        return false;
    };
    start_ticks(pid) == Some(ticks)
}

/// Which labelled objects to remove.
#[derive(Clone, Debug)]
pub enum Which {
    /// One run's (its end, an interrupt, a panic).
    Run(String),
    /// Those whose lockstorm process is gone (`lockstorm clean`).
    Orphaned,
    /// Everything lockstorm labelled (`lockstorm clean --all`).
    All,
}

/// What a removal removed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Removed {
    pub containers: usize,
    pub volumes: usize,
    pub networks: usize,
}

impl Which {
    fn label_filter(&self) -> HashMap<String, Vec<String>> {
        let label = match self {
            Which::Run(id) => format!("{RUN}={id}"),
            Which::Orphaned | Which::All => OWNER.to_string(),
        };
        HashMap::from([("label".to_string(), vec![label])])
    }

    fn takes(&self, labels: Option<&HashMap<String, String>>) -> bool {
        match self {
            Which::Orphaned => !labels.and_then(|l| l.get(OWNER)).is_some_and(|o| owner_alive(o)),
            Which::Run(_) | Which::All => true,
        }
    }
}

/// Removes the containers (killed first), then the volumes and networks, that `which`
/// names. A removal that fails (already gone, in use) is skipped; the count says what
/// went.
pub async fn remove(docker: &Docker, which: &Which) -> Result<Removed, RealError> {
    let mut removed = Removed::default();
    let containers = docker
        .list_containers(Some(
            ListContainersOptionsBuilder::new()
                .all(true)
                .filters(&which.label_filter())
                .build(),
        ))
        .await
        .map_err(|e| docker_error("list containers", e))?;
    for c in containers {
        let Some(id) = c.id else { continue };
        if !which.takes(c.labels.as_ref()) {
            continue;
        }
        let options = RemoveContainerOptionsBuilder::new().force(true).v(true).build();
        if docker.remove_container(&id, Some(options)).await.is_ok() {
            removed.containers += 1;
        }
    }
    let volumes = docker
        .list_volumes(Some(
            ListVolumesOptionsBuilder::new()
                .filters(&which.label_filter())
                .build(),
        ))
        .await
        .map_err(|e| docker_error("list volumes", e))?;
    for v in volumes.volumes.unwrap_or_default() {
        if !which.takes(Some(&v.labels)) {
            continue;
        }
        let options = RemoveVolumeOptionsBuilder::new().force(true).build();
        if docker.remove_volume(&v.name, Some(options)).await.is_ok() {
            removed.volumes += 1;
        }
    }
    let networks = docker
        .list_networks(Some(
            ListNetworksOptionsBuilder::new()
                .filters(&which.label_filter())
                .build(),
        ))
        .await
        .map_err(|e| docker_error("list networks", e))?;
    for n in networks {
        let Some(name) = n.name else { continue };
        if !which.takes(n.labels.as_ref()) {
            continue;
        }
        if docker.remove_network(&name).await.is_ok() {
            removed.networks += 1;
        }
    }
    Ok(removed)
}

/// [`remove`] from any thread, in or out of a tokio runtime (a signal handler, a panic
/// hook, the end of a run): its own thread, runtime and Docker connection.
pub fn remove_blocking(which: Which) -> Result<Removed, RealError> {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RealError::Io("start a tokio runtime".into(), e))?;
        runtime.block_on(async {
            let docker = super::connect().await?;
            remove(&docker, &which).await
        })
    })
    .join()
    .unwrap_or_else(|_| Err(RealError::Docker("the cleanup thread panicked".into())))
}
