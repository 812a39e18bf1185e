//! The links between a deployment's processes, each of which can be cut on its own.
//!
//! Every member has a front relay listening on its announced address; the relay knows
//! who connects by the connection's source IP (each member has its own loopback IP and
//! its outgoing connections carry it, `bind-source-addr`), and relays the bytes to the
//! member's direct address through the state of the link between the two: the same
//! relay as a scenario node's proxy ([`crate::real::proxy`]), so a cut holds the bytes
//! until it heals, as TCP retransmits through a real partition. A link is an unordered
//! pair of IPs: cutting it holds both directions of every connection either side opened
//! to the other, existing and new. A source IP that is no member's (lockstorm's own
//! connections from 127.0.0.1) has links of its own, never cut by a cut between two
//! members. A client connects from an IP of its own ([`super::client_ip`]); once the
//! driver hands the mesh its [`Notes`] ([`Mesh::notes`]), what a cut does to a client's
//! bytes to a data node becomes the driver's `link` lines, as a scenario node's proxy
//! reports them: the evidence of what a partition touched.

use super::super::proxy::{relay, LinkState, Notes};
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::AbortHandle;

type Links = Arc<Mutex<HashMap<(IpAddr, IpAddr), watch::Sender<LinkState>>>>;

/// Where the relays of data nodes report what cuts do to clients' bytes, once set.
pub type ClientNotes = Arc<Mutex<Option<Notes>>>;

/// The deployment's relays and the state of every link between two IPs.
#[derive(Default)]
pub struct Mesh {
    links: Links,
    relays: Vec<AbortHandle>,
    notes: ClientNotes,
}

/// A link's key: the two IPs in order, so (a, b) and (b, a) are one link.
fn key(a: IpAddr, b: IpAddr) -> (IpAddr, IpAddr) {
    (a.min(b), a.max(b))
}

/// The sender of a link's state, made (healed) on first use.
fn link(links: &Links, a: IpAddr, b: IpAddr) -> watch::Sender<LinkState> {
    let mut links = links.lock().unwrap_or_else(|e| e.into_inner());
    links
        .entry(key(a, b))
        .or_insert_with(|| watch::channel(LinkState::default()).0)
        .clone()
}

impl Mesh {
    /// Starts a relay on `announced` that carries each connection to `direct` (the
    /// member's own listener, on the same IP). Call it inside the tokio runtime that
    /// runs the deployment; the relay stops when the mesh is dropped.
    /// `client` tells a client's IP from a member's: its index, for a data node's relay
    /// (`None` for a sentinel's, whose clients' bytes are not lock commands).
    pub async fn front(
        &mut self,
        announced: SocketAddr,
        direct: SocketAddr,
        client: Option<fn(IpAddr) -> Option<usize>>,
    ) -> std::io::Result<()> {
        let listener = TcpListener::bind(announced).await?;
        let (links, notes) = (self.links.clone(), self.notes.clone());
        let own = announced.ip();
        let task = tokio::spawn(async move {
            while let Ok((down, peer)) = listener.accept().await {
                let state = link(&links, own, peer.ip()).subscribe();
                let noted = client.and_then(|of| of(peer.ip())).and_then(|c| {
                    let n = notes.lock().unwrap_or_else(|e| e.into_inner()).clone()?;
                    Some((c, n))
                });
                tokio::spawn(async move {
                    // A member that is down refuses, and the peer's connection closes.
                    if let Ok(up) = TcpStream::connect(direct).await {
                        relay(down, up, state, noted).await;
                    }
                });
            }
        });
        self.relays.push(task.abort_handle());
        Ok(())
    }

    /// Cuts (`true`) or heals the link between the processes on `a` and `b`, both ways.
    pub fn set(&self, a: Ipv4Addr, b: Ipv4Addr, cut: bool) {
        link(&self.links, a.into(), b.into()).send_replace(LinkState {
            cut_to_node: cut,
            cut_to_client: cut,
            delay_us: 0,
        });
    }

    /// Where client links report what cuts do to their bytes ([`ClientNotes`]).
    pub fn notes(&self) -> ClientNotes {
        self.notes.clone()
    }

    /// Heals every link.
    pub fn heal_all(&self) {
        for tx in self.links.lock().unwrap_or_else(|e| e.into_inner()).values() {
            tx.send_replace(LinkState::default());
        }
    }
}

impl Drop for Mesh {
    fn drop(&mut self) {
        // The relays' connections end with the processes they lead to.
        for relay in &self.relays {
            relay.abort();
        }
    }
}
