//! The replication link of a replicated node, with the scenario's lag.
//!
//! A replica does not connect to its master directly but to this line, which forwards
//! to whichever process is the master now (a `watch` value that a failover moves) and
//! holds every byte from the master for `lag` before passing it on: the replica applies
//! the master's writes `lag` after they happen, as the simulator's replica does
//! (`sim/durability.rs`). Bytes from the replica (its acknowledgements) pass at once.
//!
//! When the master's side closes (it was killed), the connection ends and what it had
//! not delivered yet is dropped: the lag stands for writes the master had not shipped
//! when it died, which die with it. The replica then reconnects (Redis retries once a
//! second) and gets a full resync from whoever is master by then.

use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// A listening replication link; its tasks live as long as the tokio runtime.
pub struct LagLine {
    addr: SocketAddr,
}

impl LagLine {
    /// Listens on a free loopback port; each connection is forwarded to `master`.
    pub async fn start(master: watch::Receiver<SocketAddr>, lag: Duration) -> std::io::Result<LagLine> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(accept_loop(listener, master, lag));
        Ok(LagLine { addr })
    }

    /// Where a replica points `replicaof`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

async fn accept_loop(listener: TcpListener, master: watch::Receiver<SocketAddr>, lag: Duration) {
    while let Ok((replica, _)) = listener.accept().await {
        let upstream = *master.borrow();
        tokio::spawn(async move {
            // The master is down: the replica sees a closed link and tries again later.
            let Ok(master) = TcpStream::connect(upstream).await else {
                return;
            };
            let _ = replica.set_nodelay(true);
            let _ = master.set_nodelay(true);
            let (replica_r, replica_w) = replica.into_split();
            let (master_r, master_w) = master.into_split();
            // Whichever side ends first ends the connection; dropping the futures drops
            // the bytes still held.
            tokio::select! {
                _ = copy(replica_r, master_w) => {}
                _ = delayed_copy(master_r, replica_w, lag) => {}
            }
        });
    }
}

async fn copy(mut from: OwnedReadHalf, mut to: OwnedWriteHalf) {
    let _ = tokio::io::copy(&mut from, &mut to).await;
}

/// Copies bytes, each chunk `lag` after it was read. Ends when the source closes.
async fn delayed_copy(mut from: OwnedReadHalf, mut to: OwnedWriteHalf, lag: Duration) {
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    let read = async move {
        let mut buf = vec![0u8; 16 * 1024];
        loop {
            match from.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => {
                    if tx.send((Instant::now() + lag, buf[..n].to_vec())).is_err() {
                        return;
                    }
                }
            }
        }
    };
    // The channel is the queue of chunks in flight, in order.
    let write = async move {
        while let Some((due, bytes)) = rx.recv().await {
            tokio::time::sleep_until(due).await;
            if to.write_all(&bytes).await.is_err() {
                return;
            }
        }
    };
    // The read side ending (the master closed) ends the copy, queue and all.
    tokio::select! {
        _ = read => {}
        _ = write => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A master stand-in that sends `b"w"` on every connection, then waits.
    async fn writer() -> (SocketAddr, mpsc::UnboundedReceiver<TcpStream>) {
        let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                s.write_all(b"w").await.unwrap();
                let _ = tx.send(s);
            }
        });
        (addr, rx)
    }

    #[tokio::test]
    async fn bytes_from_the_master_arrive_after_the_lag() {
        let (master, _conns) = writer().await;
        let line = LagLine::start(crate::real::proxy::fixed(master), Duration::from_millis(300))
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let mut replica = TcpStream::connect(line.addr()).await.unwrap();
        let mut b = [0u8; 1];
        replica.read_exact(&mut b).await.unwrap();
        let took = started.elapsed();
        assert_eq!(&b, b"w");
        assert!(took >= Duration::from_millis(300), "arrived after {took:?}");
    }

    #[tokio::test]
    async fn what_a_dead_master_had_not_delivered_is_lost() {
        let (master, mut conns) = writer().await;
        let line = LagLine::start(crate::real::proxy::fixed(master), Duration::from_millis(500))
            .await
            .unwrap();
        let mut replica = TcpStream::connect(line.addr()).await.unwrap();
        // The master wrote one byte and dies before the lag has passed.
        drop(conns.recv().await.unwrap());
        let mut b = [0u8; 1];
        let got = tokio::time::timeout(Duration::from_secs(2), replica.read(&mut b))
            .await
            .expect("the link closes");
        assert_eq!(got.unwrap(), 0, "the held byte must not arrive");
    }
}
