//! The fault-injecting TCP proxy in front of each real node.
//!
//! Every (client, node) pair gets its own loopback listener, so the link between one
//! client and one node can be cut or slowed alone: the driver connects client `c` to
//! node `n` through `proxy[n].addr(c)`, and each accepted connection opens its own
//! upstream connection to the node. A cut link holds the bytes (nothing is forwarded,
//! the socket reads stop, TCP pushes back) until it heals, like a real partition where
//! TCP retransmits: a request sent during a cut may still be applied later, which is why
//! the algorithm counts a non-answer as an unknown outcome. When the node dies, both
//! sides of its connections close and the driver reconnects.
//!
//! The upstream is a `watch` value, read at each new connection: a failover points the
//! proxy at the promoted replica, so the node keeps its address for the clients, as
//! behind Sentinel with a virtual IP. A second `watch` says whether the node serves: from
//! the moment it is killed until lockstorm has read what it came back with
//! (`keyspace.rs`), a new connection is closed at once, as if the node were still down.
//!
//! What a fault does to the bytes is the evidence of what it touched: given a channel
//! ([`Notes`]), the proxy says when a cut starts holding a client's bytes, when they go
//! through (and after how long) or are dropped with their connection, and when a delay
//! slows them ([`LinkNote`]); the driver writes each as a `link` line.

use crate::history::LinkDir;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

/// What is wrong with one client↔node link right now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkState {
    /// Bytes from the client to the node are held.
    pub cut_to_node: bool,
    /// Bytes from the node to the client are held.
    pub cut_to_client: bool,
    /// Extra one-way delay added to every chunk, both ways.
    pub delay_us: u64,
}

/// One node's proxy: a listener per client.
pub struct Proxy {
    links: Vec<(SocketAddr, watch::Sender<LinkState>)>,
}

/// What a fault did to bytes on one link, as the proxy saw it.
#[derive(Debug)]
pub struct LinkNote {
    pub client: usize,
    pub node: usize,
    pub dir: LinkDir,
    pub what: Noted,
}

#[derive(Debug)]
pub enum Noted {
    /// A cut holds bytes read from the link.
    Held,
    /// Held bytes went through after this long.
    Released { held: Duration },
    /// Held bytes were dropped (their connection ended) after this long.
    Dropped { held: Duration },
    /// Bytes were delayed by this much.
    Delayed { by: Duration },
    /// Bytes from the client left for the node at `at` (said only with
    /// [`Notes::sends`]: a worker's hold without a validity ends by the ttl counted from
    /// its library's last request, not from its return).
    Sent { at: std::time::Instant },
    /// Bytes from the node are about to reach the client (said only while
    /// [`Notes::replies`] is set: the aimer waits for an acquisition's answers). The
    /// proxy forwards them once the driver answers on `go` (or drops it): a fault the
    /// answer triggers is in force before the client's library reads it.
    Answered { go: tokio::sync::oneshot::Sender<()> },
}

/// Where a node's proxy sends its [`LinkNote`]s.
#[derive(Clone)]
pub struct Notes {
    pub node: usize,
    pub tx: mpsc::UnboundedSender<LinkNote>,
    /// Whether to say [`Noted::Answered`] for every chunk that reaches a client.
    pub replies: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// Whether to say [`Noted::Sent`] for every chunk that leaves for the node.
    pub sends: bool,
}

impl Proxy {
    /// Starts listening for `clients` clients in front of `upstream` (the node's address,
    /// which may change while the proxy runs). Must be called inside a tokio runtime;
    /// the proxy's tasks live as long as that runtime.
    pub async fn start(upstream: watch::Receiver<SocketAddr>, clients: usize) -> std::io::Result<Proxy> {
        Proxy::start_gated(upstream, watch::channel(true).1, clients, None).await
    }

    /// [`Proxy::start`], for a node that does not serve while `serving` is false, and
    /// says what its faults do to the bytes to `notes`, if given.
    pub async fn start_gated(
        upstream: watch::Receiver<SocketAddr>,
        serving: watch::Receiver<bool>,
        clients: usize,
        notes: Option<Notes>,
    ) -> std::io::Result<Proxy> {
        let mut links = Vec::with_capacity(clients);
        for client in 0..clients {
            let listener = TcpListener::bind("127.0.0.1:0").await?;
            let addr = listener.local_addr()?;
            let (tx, rx) = watch::channel(LinkState::default());
            let notes = notes.clone().map(|n| (client, n));
            tokio::spawn(accept_loop(
                listener,
                upstream.clone(),
                serving.clone(),
                rx,
                notes,
            ));
            links.push((addr, tx));
        }
        Ok(Proxy { links })
    }

    /// Where client `client` connects to reach this node.
    pub fn addr(&self, client: usize) -> SocketAddr {
        self.links[client].0
    }

    pub fn update(&self, client: usize, f: impl FnOnce(&mut LinkState)) {
        self.links[client].1.send_modify(f);
    }

    /// Heals every link of this node.
    pub fn heal(&self) {
        for (_, tx) in &self.links {
            tx.send_replace(LinkState::default());
        }
    }
}

/// An upstream that never moves (a node without a replica, or a test's server).
pub fn fixed(addr: SocketAddr) -> watch::Receiver<SocketAddr> {
    // A receiver whose sender is gone keeps the last value.
    watch::channel(addr).1
}

async fn accept_loop(
    listener: TcpListener,
    upstream: watch::Receiver<SocketAddr>,
    serving: watch::Receiver<bool>,
    state: watch::Receiver<LinkState>,
    notes: Option<(usize, Notes)>,
) {
    while let Ok((down, _)) = listener.accept().await {
        if !*serving.borrow() {
            continue;
        }
        let state = state.clone();
        let upstream = *upstream.borrow();
        let notes = notes.clone();
        tokio::spawn(async move {
            // A refused upstream (node down) closes the client's connection at once.
            let Ok(up) = TcpStream::connect(upstream).await else {
                return;
            };
            relay(down, up, state, notes).await;
        });
    }
}

/// Carries one accepted connection (`down`, from the client) to its upstream connection
/// (`up`) both ways until either side ends, holding and delaying bytes as `state` says
/// and telling `notes` what that did; then closes both as the comment inside says.
/// Also the relay of a Sentinel deployment's links (`super::deployment::mesh`).
pub(super) async fn relay(
    down: TcpStream,
    up: TcpStream,
    state: watch::Receiver<LinkState>,
    notes: Option<(usize, Notes)>,
) {
    let _ = down.set_nodelay(true);
    let _ = up.set_nodelay(true);
    let (mut down_r, mut down_w) = down.into_split();
    let (mut up_r, mut up_w) = up.into_split();
    let note = |dir| {
        notes.as_ref().map(|(client, n)| Noter {
            client: *client,
            node: n.node,
            dir,
            tx: n.tx.clone(),
            replies: n.replies.clone(),
            sends: n.sends,
        })
    };
    let to_node = pump(
        &mut down_r,
        &mut up_w,
        state.clone(),
        |s| s.cut_to_node,
        note(LinkDir::ToNode),
    );
    let to_client = pump(
        &mut up_r,
        &mut down_w,
        state,
        |s| s.cut_to_client,
        note(LinkDir::ToClient),
    );
    // When either direction ends (EOF or error), close both: the peer sees a close.
    let client_left = tokio::select! {
        end = to_node => end == Ended::Source,
        _ = to_client => false,
    };
    // A gracefully closed connection stays in the kernel's connection-tracking
    // table for two minutes (TIME_WAIT), a reset one for ten seconds. A library
    // that opens a connection per command, doubled by this proxy, fills the table,
    // and the kernel then drops loopback packets (`server::conntrack_full`). So a
    // connection the client closed ends with a reset on both sides: every request
    // the client sent has been written to the node (which reads what is queued
    // before it sees the reset), and nobody is left to read a reply. When the node
    // closed or failed first, the client's side closes gracefully, so it still gets
    // every reply that was sent. (A dropped write half would send a FIN first, so
    // the halves are reunited.)
    if let Ok(up) = up_r.reunite(up_w) {
        let _ = up.set_zero_linger();
    }
    if client_left {
        if let Ok(down) = down_r.reunite(down_w) {
            let _ = down.set_zero_linger();
        }
    }
}

/// Which side of a [`pump`] ended it.
#[derive(Debug, PartialEq, Eq)]
enum Ended {
    /// The side it reads from closed or failed.
    Source,
    /// The side it writes to failed, or the link's state went away.
    Sink,
}

/// Says what a fault did to one direction of one link's bytes.
struct Noter {
    client: usize,
    node: usize,
    dir: LinkDir,
    tx: mpsc::UnboundedSender<LinkNote>,
    replies: std::sync::Arc<std::sync::atomic::AtomicBool>,
    sends: bool,
}

impl Noter {
    fn note(&self, what: Noted) {
        let _ = self.tx.send(LinkNote {
            client: self.client,
            node: self.node,
            dir: self.dir,
            what,
        });
    }
}

/// Bytes a cut holds: if they never go through (the connection ends first, and the
/// pump with it), they were dropped.
struct Holding<'a> {
    noter: &'a Noter,
    since: std::time::Instant,
    released: bool,
}

impl Drop for Holding<'_> {
    fn drop(&mut self) {
        let held = self.since.elapsed();
        self.noter.note(match self.released {
            true => Noted::Released { held },
            false => Noted::Dropped { held },
        });
    }
}

/// Copies bytes one way, holding them while the link is cut and delaying them as set,
/// and says so to `noter`.
async fn pump(
    from: &mut tokio::net::tcp::OwnedReadHalf,
    to: &mut tokio::net::tcp::OwnedWriteHalf,
    mut state: watch::Receiver<LinkState>,
    is_cut: fn(&LinkState) -> bool,
    noter: Option<Noter>,
) -> Ended {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return Ended::Source,
            Ok(n) => n,
        };
        let mut holding = None;
        if is_cut(&state.borrow()) {
            if let Some(noter) = &noter {
                noter.note(Noted::Held);
                holding = Some(Holding {
                    noter,
                    since: std::time::Instant::now(),
                    released: false,
                });
            }
        }
        if state.wait_for(|s| !is_cut(s)).await.is_err() {
            return Ended::Sink;
        }
        let delay_us = state.borrow().delay_us;
        if delay_us > 0 {
            if let Some(noter) = &noter {
                noter.note(Noted::Delayed {
                    by: Duration::from_micros(delay_us),
                });
            }
            tokio::time::sleep(Duration::from_micros(delay_us)).await;
        }
        if let Some(noter) = noter.as_ref().filter(|n| n.dir == LinkDir::ToClient) {
            if noter.replies.load(std::sync::atomic::Ordering::Relaxed) {
                // Bounded: a driver that is gone (or stuck) does not hold the link.
                let (go, ready) = tokio::sync::oneshot::channel();
                noter.note(Noted::Answered { go });
                let _ = tokio::time::timeout(Duration::from_secs(1), ready).await;
            }
        }
        if let Some(noter) = noter.as_ref().filter(|n| n.sends && n.dir == LinkDir::ToNode) {
            noter.note(Noted::Sent {
                at: std::time::Instant::now(),
            });
        }
        let written = to.write_all(&buf[..n]).await;
        if let Some(h) = &mut holding {
            h.released = written.is_ok();
        }
        drop(holding);
        if written.is_err() {
            return Ended::Sink;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// An upstream that echoes every byte back.
    async fn echo_server() -> SocketAddr {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                tokio::spawn(async move {
                    let (mut r, mut w) = s.split();
                    let _ = tokio::io::copy(&mut r, &mut w).await;
                });
            }
        });
        addr
    }

    async fn roundtrip(s: &mut TcpStream, wait: Duration) -> Option<u8> {
        s.write_all(b"x").await.unwrap();
        let mut b = [0u8; 1];
        match tokio::time::timeout(wait, s.read_exact(&mut b)).await {
            Ok(Ok(_)) => Some(b[0]),
            _ => None,
        }
    }

    #[tokio::test]
    async fn a_cut_holds_one_clients_bytes_until_it_heals() {
        let proxy = Proxy::start(fixed(echo_server().await), 2).await.unwrap();
        let mut c0 = TcpStream::connect(proxy.addr(0)).await.unwrap();
        let mut c1 = TcpStream::connect(proxy.addr(1)).await.unwrap();
        assert_eq!(roundtrip(&mut c0, Duration::from_secs(5)).await, Some(b'x'));

        proxy.update(0, |s| {
            s.cut_to_node = true;
            s.cut_to_client = true;
        });
        assert_eq!(
            roundtrip(&mut c0, Duration::from_millis(100)).await,
            None,
            "cut link answered"
        );
        assert_eq!(
            roundtrip(&mut c1, Duration::from_secs(5)).await,
            Some(b'x'),
            "the other client's link must stay up"
        );

        proxy.heal();
        let mut b = [0u8; 1];
        tokio::time::timeout(Duration::from_secs(5), c0.read_exact(&mut b))
            .await
            .expect("held byte delivered after the heal")
            .unwrap();
        assert_eq!(&b, b"x");
    }

    #[tokio::test]
    async fn a_one_way_cut_to_clients_still_delivers_requests() {
        let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Proxy::start(fixed(upstream.local_addr().unwrap()), 1)
            .await
            .unwrap();
        proxy.update(0, |s| s.cut_to_client = true);
        let mut c = TcpStream::connect(proxy.addr(0)).await.unwrap();
        c.write_all(b"req").await.unwrap();
        let (mut server_side, _) = upstream.accept().await.unwrap();
        let mut b = [0u8; 3];
        tokio::time::timeout(Duration::from_secs(5), server_side.read_exact(&mut b))
            .await
            .expect("request reaches the node")
            .unwrap();
        assert_eq!(&b, b"req");
        server_side.write_all(b"rep").await.unwrap();
        let mut r = [0u8; 3];
        assert!(
            tokio::time::timeout(Duration::from_millis(100), c.read_exact(&mut r))
                .await
                .is_err(),
            "reply must be held"
        );
    }

    /// What a node's side of a connection reads after `first` bytes: the bytes, then how
    /// the connection ended (`Ok(0)`: a graceful close; an error: a reset).
    async fn node_reads(server_side: &mut TcpStream, first: usize) -> (Vec<u8>, std::io::Result<usize>) {
        let mut b = vec![0u8; first];
        tokio::time::timeout(Duration::from_secs(5), server_side.read_exact(&mut b))
            .await
            .expect("the request reaches the node")
            .unwrap();
        let mut rest = [0u8; 1];
        let end = tokio::time::timeout(Duration::from_secs(5), server_side.read(&mut rest))
            .await
            .expect("the node's side ends");
        (b, end)
    }

    #[tokio::test]
    async fn a_request_sent_during_a_cut_reaches_the_node_after_the_client_left() {
        let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Proxy::start(fixed(upstream.local_addr().unwrap()), 1)
            .await
            .unwrap();
        proxy.update(0, |s| s.cut_to_node = true);
        let mut c = TcpStream::connect(proxy.addr(0)).await.unwrap();
        let (mut server_side, _) = upstream.accept().await.unwrap();
        c.write_all(b"late").await.unwrap();
        drop(c);
        proxy.heal();
        let (got, end) = node_reads(&mut server_side, 4).await;
        assert_eq!(got, b"late", "the held request is applied after the heal");
        // The client left, so the proxy resets the node's side instead of closing it:
        // a reset connection leaves the kernel's tracking table in seconds, not minutes.
        assert_eq!(
            end.map_err(|e| e.kind()),
            Err(std::io::ErrorKind::ConnectionReset),
            "the node's side of a connection the client closed is reset"
        );
    }

    #[tokio::test]
    async fn a_client_gets_every_reply_when_the_node_closes_first() {
        let upstream = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let proxy = Proxy::start(fixed(upstream.local_addr().unwrap()), 1)
            .await
            .unwrap();
        let mut c = TcpStream::connect(proxy.addr(0)).await.unwrap();
        let (mut server_side, _) = upstream.accept().await.unwrap();
        server_side.write_all(b"reply").await.unwrap();
        drop(server_side);
        let mut got = Vec::new();
        let end = tokio::time::timeout(Duration::from_secs(5), c.read_to_end(&mut got))
            .await
            .expect("the client's side ends");
        assert_eq!(got, b"reply");
        assert!(end.is_ok(), "a graceful close, not a reset: {end:?}");
    }

    #[tokio::test]
    async fn a_delay_slows_one_link_both_ways() {
        let proxy = Proxy::start(fixed(echo_server().await), 2).await.unwrap();
        proxy.update(0, |s| s.delay_us = 100_000);
        let mut slow = TcpStream::connect(proxy.addr(0)).await.unwrap();
        let started = std::time::Instant::now();
        assert_eq!(roundtrip(&mut slow, Duration::from_secs(5)).await, Some(b'x'));
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(200),
            "delayed round trip took {took:?}"
        );
    }

    #[tokio::test]
    async fn new_connections_follow_a_moved_upstream() {
        let first = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let second = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (tx, rx) = watch::channel(first.local_addr().unwrap());
        let proxy = Proxy::start(rx, 1).await.unwrap();
        let _a = TcpStream::connect(proxy.addr(0)).await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), first.accept())
            .await
            .expect("the first upstream gets the connection")
            .unwrap();
        tx.send_replace(second.local_addr().unwrap());
        let _b = TcpStream::connect(proxy.addr(0)).await.unwrap();
        tokio::time::timeout(Duration::from_secs(5), second.accept())
            .await
            .expect("a connection after the move goes to the new upstream")
            .unwrap();
    }
}
