//! The nodes of a real run, started on the runtime the scenario's backend names: local
//! redis-server processes (`backend = "redis"`) or containers (`backend = "docker"`).
//!
//! [`Nodes::start`] makes each node's processes (a master, and with `[replication]` a
//! replica) on that runtime, starts every node at once ([`Node::start`]) and hands the
//! driver one [`Host`] per node; [`Nodes::shutdown`] removes them all. A node that cannot
//! start stops the run before it begins, with every node already started removed.

use super::faketime::FaketimeLibs;
use super::node::{Node, NodeHandle};
use super::process::Process;
use super::server::{self, Server};
use super::RealError;
use crate::fault::Persistence;
use crate::scenario::{Backend, Scenario};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A node as the driver sees it: one lockstorm runs, or an address someone else's
/// server listens on.
pub enum Host {
    Managed(NodeHandle),
    External(SocketAddr),
    /// A deployment (`[sentinel]`, `[cluster]`): clients find its master through the
    /// sentinels, or as the master of the lock's slot.
    Deployment(super::deployment::DeploymentHandle),
}

impl Host {
    pub fn addr(&self) -> SocketAddr {
        match self {
            Host::Managed(n) => n.addr(),
            Host::External(a) => *a,
            Host::Deployment(s) => s.first_master,
        }
    }
}

/// The nodes of one run.
pub struct Nodes {
    pub hosts: Vec<Host>,
    runtime: Option<Runtime>,
}

/// What starts a run's processes.
enum Runtime {
    Local {
        binary: PathBuf,
        faketime: Option<FaketimeLibs>,
    },
    #[cfg(feature = "docker")]
    Containers(super::container::ContainerRun),
}

impl Nodes {
    /// Servers someone else runs.
    pub fn external(addrs: &[SocketAddr]) -> Nodes {
        Nodes {
            hosts: addrs.iter().map(|&a| Host::External(a)).collect(),
            runtime: None,
        }
    }

    /// Starts the scenario's nodes on its backend's runtime, each process with its own
    /// directory under `dir`; `faketime` when a fault will move a node's clock; each node
    /// watches its keys for `news` if given ([`super::keyspace`]).
    pub async fn start(
        scenario: &Scenario,
        faketime: bool,
        dir: &Path,
        news: Option<tokio::sync::mpsc::UnboundedSender<super::keyspace::News>>,
    ) -> Result<Nodes, RealError> {
        let runtime = Runtime::new(scenario.backend, faketime, dir).await?;
        if let (Some(shape), Runtime::Local { binary, .. }) = (scenario.deployment(), &runtime) {
            let folder = match shape {
                super::deployment::Shape::Sentinel(_) => "sentinel",
                super::deployment::Shape::Cluster(_) => "cluster",
            };
            // The deployment's processes are children of this thread, the driver's.
            let deployment = super::deployment::Deployment::start(
                shape,
                binary,
                &dir.join(folder),
                tokio::time::Instant::now(),
            )
            .await?;
            return Ok(Nodes {
                hosts: vec![Host::Deployment(
                    super::deployment::DeploymentHandle::spawn(deployment, news).await,
                )],
                runtime: Some(runtime),
            });
        }
        let lag = scenario.replication.map(|r| Duration::from_micros(r.lag_us));
        let per_node = if lag.is_some() { 2 } else { 1 };
        let mut starting = Vec::with_capacity(scenario.nodes);
        let mut made = Ok(());
        for i in 0..scenario.nodes {
            let processes: Result<Vec<Process>, RealError> = (0..per_node)
                .map(|m| runtime.process(i, m, scenario.persistence[i], dir))
                .collect();
            match processes {
                Ok(p) => starting.push(tokio::spawn(Node::start(i, p, lag, news.clone()))),
                Err(e) => {
                    made = Err(e);
                    break;
                }
            }
        }
        let mut hosts = Vec::with_capacity(starting.len());
        for task in starting {
            match task.await {
                Ok(Ok(node)) => hosts.push(Host::Managed(node.spawn())),
                Ok(Err(e)) => made = made.and(Err(e)),
                Err(e) => {
                    made = made.and(Err(RealError::Io(
                        "start a node".into(),
                        std::io::Error::other(e),
                    )))
                }
            }
        }
        let nodes = Nodes {
            hosts,
            runtime: Some(runtime),
        };
        match made {
            Ok(()) => Ok(nodes),
            Err(e) => {
                nodes.shutdown().await;
                Err(e)
            }
        }
    }

    /// Kills every process lockstorm started and removes what they leave.
    pub async fn shutdown(self) {
        for h in self.hosts {
            match h {
                Host::Managed(n) => n.shutdown().await,
                Host::Deployment(s) => s.shutdown().await,
                Host::External(_) => {}
            }
        }
        match self.runtime {
            None | Some(Runtime::Local { .. }) => {}
            #[cfg(feature = "docker")]
            Some(Runtime::Containers(run)) => run.finish().await,
        }
    }
}

impl Runtime {
    async fn new(backend: Backend, faketime: bool, dir: &Path) -> Result<Runtime, RealError> {
        match backend {
            Backend::Sim | Backend::Redis => Ok(Runtime::Local {
                binary: server::binary()?,
                faketime: if faketime {
                    Some(FaketimeLibs::build(dir)?)
                } else {
                    None
                },
            }),
            #[cfg(feature = "docker")]
            Backend::Docker => Ok(Runtime::Containers(
                super::container::ContainerRun::start(faketime).await?,
            )),
            #[cfg(not(feature = "docker"))]
            Backend::Docker => {
                let _ = (faketime, dir);
                Err(RealError::NoDockerFeature)
            }
        }
    }

    /// Process `member` of node `node` (0: the master, 1: its replica), not started.
    fn process(
        &self,
        node: usize,
        member: usize,
        persistence: Persistence,
        dir: &Path,
    ) -> Result<Process, RealError> {
        let dir = dir.join(match member {
            0 => format!("node{node}"),
            _ => format!("node{node}-replica"),
        });
        std::fs::create_dir_all(&dir).map_err(|e| RealError::Io(format!("create {}", dir.display()), e))?;
        match self {
            Runtime::Local { binary, faketime } => {
                let clock = faketime.as_ref().map(|l| l.node(&dir)).transpose()?;
                Ok(Process::Local(Server::new(
                    node,
                    binary,
                    dir,
                    persistence,
                    clock,
                )?))
            }
            #[cfg(feature = "docker")]
            Runtime::Containers(run) => {
                Ok(Process::Container(run.process(node, member, persistence, dir)?))
            }
        }
    }
}
