//! The container node runtime (`backend = "docker"`, feature `docker`): each redis-server
//! process of a node runs in a container started through the testcontainers crate,
//! from lockstorm's locally built image ([`image`]).
//!
//! A container shares the machine's loopback (host network): it listens on a free
//! loopback port with the same configuration as a local process, so the proxies, the
//! replication links and every fault above the process are the same code; nothing is
//! published and nothing leaves 127.0.0.1. A process's data lives in a named volume
//! mounted at /data: a crash removes the container at once (`docker rm -f`: SIGKILL, no
//! graceful shutdown) and a restart is a new container on the same volume, so each
//! persistence setting keeps what it keeps on a local server. A pause is `docker pause`
//! (the cgroup freezer). A node clock runs under the libfaketime the image carries,
//! driven through its timestamp file, which lockstorm writes in a directory mounted
//! read-only at /lockstorm.
//!
//! Every container and volume carries the run's labels ([`clean`]) and is removed when
//! the run ends, on an error, on an interrupt or a panic (a cleanup registered with
//! [`crate::children`]); `lockstorm clean` removes what a SIGKILLed run left.

pub mod clean;
pub mod image;

use super::faketime::{Faketime, FaketimeLibs};
use super::server::{config, free_port};
use super::RealError;
use crate::fault::Persistence;
use std::collections::HashMap;
use std::mem::ManuallyDrop;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use testcontainers::bollard::models::VolumeCreateRequest;
use testcontainers::bollard::query_parameters::RemoveVolumeOptionsBuilder;
use testcontainers::bollard::Docker;
use testcontainers::core::Mount;
use testcontainers::runners::AsyncRunner;
use testcontainers::{ContainerAsync, GenericImage, ImageExt};

/// A Docker API error as a one-line [`RealError`].
pub(crate) fn docker_error(what: &str, e: impl std::fmt::Display) -> RealError {
    RealError::Docker(format!("docker: cannot {what}: {e}"))
}

/// Connects to the Docker engine and checks that it answers.
pub(crate) async fn connect() -> Result<Docker, RealError> {
    let no_engine = |why: String| {
        RealError::Docker(format!(
            "no Docker engine answers ({why}); start one (dockerd), set DOCKER_HOST, or run with backend = \"redis\""
        ))
    };
    let docker = testcontainers::core::client::docker_client_instance()
        .await
        .map_err(|e| no_engine(e.to_string()))?;
    match tokio::time::timeout(Duration::from_secs(5), docker.ping()).await {
        Ok(Ok(_)) => Ok(docker),
        Ok(Err(e)) => Err(no_engine(e.to_string())),
        Err(_) => Err(no_engine("no answer within 5 s".into())),
    }
}

/// What every container of one run shares.
struct RunInfo {
    docker: Docker,
    /// The run's id, in names and the [`clean::RUN`] label.
    id: String,
    labels: HashMap<String, String>,
    tag: String,
    /// Whether node clocks run under libfaketime.
    faketime: bool,
}

/// One run's containers: checks the engine and the image before any node starts, and
/// owns the interrupt cleanup.
pub struct ContainerRun {
    info: Arc<RunInfo>,
    cleanup: crate::children::Cleanup,
}

impl ContainerRun {
    /// Connects to the engine, builds the image if it is missing, and registers the
    /// run's removal for interrupts and panics.
    pub async fn start(faketime: bool) -> Result<ContainerRun, RealError> {
        let docker = connect().await?;
        let tag = image::ensure(&docker).await?;
        static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let id = format!("{}-{n}-{nanos:08x}", std::process::id());
        let labels = HashMap::from([
            (clean::RUN.to_string(), id.clone()),
            (clean::OWNER.to_string(), clean::owner()),
        ]);
        let which = clean::Which::Run(id.clone());
        let cleanup = crate::children::register_cleanup(move |_| {
            if let Err(e) = clean::remove_blocking(which.clone()) {
                crate::errln!("lockstorm: {e}");
            }
        });
        Ok(ContainerRun {
            info: Arc::new(RunInfo {
                docker,
                id,
                labels,
                tag,
                faketime,
            }),
            cleanup,
        })
    }

    /// Process `member` of node `node`, not started; `dir` holds its clock file.
    pub fn process(
        &self,
        node: usize,
        member: usize,
        persistence: Persistence,
        dir: PathBuf,
    ) -> Result<ContainerProcess, RealError> {
        let faketime = if self.info.faketime {
            Some(FaketimeLibs::in_image().node(&dir)?)
        } else {
            None
        };
        Ok(ContainerProcess {
            info: self.info.clone(),
            name: format!("lockstorm-{}-n{node}m{member}", self.info.id),
            node,
            port: free_port()?,
            persistence,
            dir,
            faketime,
            volume: None,
            container: None,
            starts: 0,
        })
    }

    /// Removes whatever of the run is left (the nodes remove their own containers
    /// first), and takes the interrupt cleanup off the list.
    pub async fn finish(self) {
        let which = clean::Which::Run(self.info.id.clone());
        if let Err(e) = clean::remove(&self.info.docker, &which).await {
            crate::errln!("lockstorm: warning: {e}");
        }
        drop(self.cleanup);
    }
}

/// One redis-server in a container; a restart is a new container on the same volume.
pub struct ContainerProcess {
    info: Arc<RunInfo>,
    /// Containers are named `<name>-<start>`; the volume is `<name>`.
    name: String,
    node: usize,
    port: u16,
    persistence: Persistence,
    /// This process's directory on the machine, mounted at /lockstorm (its clock file).
    dir: PathBuf,
    faketime: Option<Faketime>,
    volume: Option<String>,
    /// Never dropped as such (testcontainers removes on drop from inside a runtime):
    /// removed through [`Self::kill`], or by label after a panic.
    container: Option<ManuallyDrop<Box<ContainerAsync<GenericImage>>>>,
    starts: u32,
}

impl ContainerProcess {
    pub fn addr(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    pub fn faketime_mut(&mut self) -> Option<&mut Faketime> {
        self.faketime.as_mut()
    }

    /// Starts a container on the process's volume (made on the first start), as a
    /// replica of `replica_of` if given, and waits until it answers PING.
    pub async fn start(&mut self, replica_of: Option<SocketAddr>) -> Result<(), RealError> {
        self.kill().await;
        let volume = self.volume().await?;
        let mut args = Vec::new();
        let mut lines = config(self.port, self.persistence, replica_of);
        lines.push(("dir", "/data".into()));
        for (k, v) in lines {
            args.push(format!("--{k}"));
            // `replicaof host port` is two arguments.
            args.extend(v.split(' ').map(String::from));
        }
        self.starts += 1;
        let mut request = GenericImage::new(image::NAME, &self.info.tag)
            .with_cmd(args)
            .with_network("host")
            .with_container_name(format!("{}-{}", self.name, self.starts))
            .with_labels(self.info.labels.clone())
            .with_mount(Mount::volume_mount(volume, "/data"))
            .with_startup_timeout(Duration::from_secs(30));
        if let Some(ft) = &mut self.faketime {
            request = request.with_mount(Mount::bind_mount(self.dir.display().to_string(), "/lockstorm"));
            let file = Path::new("/lockstorm").join(ft.file().file_name().expect("a clock file name"));
            for (k, v) in ft.env(&file) {
                request = request.with_env_var(k, v);
            }
        }
        let container = request
            .start()
            .await
            .map_err(|e| RealError::Docker(format!("node {}: cannot start a container: {e}", self.node)))?;
        self.container = Some(ManuallyDrop::new(Box::new(container)));
        self.wait_ready().await
    }

    /// The named volume, created with the run's labels on first use.
    async fn volume(&mut self) -> Result<String, RealError> {
        if let Some(v) = &self.volume {
            return Ok(v.clone());
        }
        let request = VolumeCreateRequest {
            name: Some(self.name.clone()),
            labels: Some(self.info.labels.clone()),
            ..Default::default()
        };
        self.info
            .docker
            .create_volume(request)
            .await
            .map_err(|e| docker_error(&format!("create the volume {}", self.name), e))?;
        self.volume = Some(self.name.clone());
        Ok(self.name.clone())
    }

    async fn wait_ready(&mut self) -> Result<(), RealError> {
        let addr = self.addr();
        let deadline = tokio::time::Instant::now() + super::server::READY_TIMEOUT;
        let mut polls = 0u32;
        loop {
            if super::server::ping_async(addr).await {
                return Ok(());
            }
            polls += 1;
            let container = self.container.as_ref().expect("started");
            // Asking the engine costs more than a PING: every 20th poll.
            let exited = polls.is_multiple_of(20) && !container.is_running().await.unwrap_or(false);
            if exited || tokio::time::Instant::now() > deadline {
                let log = container.stdout_to_vec().await.unwrap_or_default();
                let log = String::from_utf8_lossy(&log);
                let last = log.trim().lines().last().unwrap_or("no output").to_string();
                let what = if exited {
                    "exited at start"
                } else {
                    "did not answer PING within 10s"
                };
                return Err(RealError::Docker(format!(
                    "node {}: the redis-server container {what}; its last log line: {last}",
                    self.node
                )));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Removes the container by force: SIGKILL, no graceful shutdown. The volume stays.
    pub async fn kill(&mut self) {
        if let Some(c) = self.container.take() {
            let id = c.id().to_string();
            if let Err(e) = ManuallyDrop::into_inner(c).rm().await {
                crate::errln!(
                    "lockstorm: warning: node {}: cannot remove container {id}: {e}",
                    self.node
                );
            }
        }
    }

    pub async fn pause(&mut self) {
        if let Some(c) = &self.container {
            if let Err(e) = c.pause().await {
                crate::errln!("lockstorm: warning: node {}: docker pause: {e}", self.node);
            }
        }
    }

    pub async fn resume(&mut self) {
        if let Some(c) = &self.container {
            if let Err(e) = c.unpause().await {
                crate::errln!("lockstorm: warning: node {}: docker unpause: {e}", self.node);
            }
        }
    }

    /// Removes the container and its volume.
    pub async fn remove(mut self) {
        self.kill().await;
        if let Some(v) = self.volume.take() {
            let options = RemoveVolumeOptionsBuilder::new().force(true).build();
            if let Err(e) = self.info.docker.remove_volume(&v, Some(options)).await {
                crate::errln!("lockstorm: warning: cannot remove volume {v}: {e}");
            }
        }
    }
}
