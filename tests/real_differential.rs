//! Differential test: random sequences of the commands and scripts the algorithms use,
//! run against the simulated node (`sim::node::Node::exec`) and a real redis-server,
//! must get the same replies. This keeps the simulator honest about Redis semantics.
//!
//! Covered: SET NX PX, plain DEL and PEXPIRE (the client-mistake variants), the unlock,
//! extend, read-write, read-extend and fence-raise scripts, ZREM and INCR (the
//! fair-queue scripts are not generated yet). TTLs are long
//! (10 s and more) so that no key expires during a case on either side: the two clocks
//! are not comparable, and expiry has its own unit tests in sim/node.rs.
//! Needs redis-server (`apt-get install -y redis-server`); fails, saying so, without it.

use lockstorm::command::{Cmd, Key, LockId, Reply, Token};
use lockstorm::real::server::{self, Server};
use lockstorm::real::wire;
use lockstorm::sim::node::Node;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};

/// Few locks and tokens, so sets collide and deletes hit both owners and strangers.
/// Client timestamps (`now_ms`, `exp_at_ms`) are small numbers on their own scale: the
/// scripts compare them only with each other, never with the node's clock.
fn cmd() -> impl Strategy<Value = Cmd> {
    let lock = (0u32..2).prop_map(LockId);
    let token = (1u64..4).prop_map(Token);
    let ttl = 10_000u64..100_000;
    let ms = 0u64..100;
    prop_oneof![
        (lock.clone(), token.clone(), ttl.clone()).prop_map(|(l, token, ttl_ms)| Cmd::SetNxPx {
            key: Key::plain(l),
            token,
            ttl_ms
        }),
        (lock.clone(), token.clone()).prop_map(|(l, token)| Cmd::DelIfEq {
            key: Key::plain(l),
            token
        }),
        (lock.clone(), token.clone()).prop_map(|(l, token)| Cmd::DelIfEq {
            key: Key::writer(l),
            token
        }),
        (lock.clone(), any::<bool>()).prop_map(|(l, w)| Cmd::Del {
            key: if w { Key::writer(l) } else { Key::plain(l) }
        }),
        (lock.clone(), any::<bool>(), ttl.clone()).prop_map(|(l, w, ttl_ms)| Cmd::PExpire {
            key: if w { Key::writer(l) } else { Key::plain(l) },
            ttl_ms
        }),
        (lock.clone(), token.clone(), ttl.clone()).prop_map(|(l, token, ttl_ms)| Cmd::PExpireIfEq {
            key: Key::plain(l),
            token,
            ttl_ms
        }),
        (lock.clone(), token.clone(), ms.clone(), ttl.clone()).prop_map(|(lock, token, now_ms, ttl_ms)| {
            Cmd::WriteLock {
                lock,
                token,
                now_ms,
                ttl_ms,
            }
        }),
        (lock.clone(), token.clone(), ms.clone()).prop_map(|(lock, token, exp_at_ms)| Cmd::ReadLock {
            lock,
            token,
            exp_at_ms
        }),
        (lock.clone(), token.clone(), ms.clone(), ms.clone()).prop_map(|(lock, token, now_ms, exp_at_ms)| {
            Cmd::ExtendRead {
                lock,
                token,
                now_ms,
                exp_at_ms,
            }
        }),
        (lock.clone(), token.clone()).prop_map(|(l, token)| Cmd::ZRem {
            key: Key::readers(l),
            token
        }),
        lock.clone().prop_map(|l| Cmd::Incr { key: Key::fence(l) }),
        (lock, 0u64..10).prop_map(|(l, value)| Cmd::RaiseTo {
            key: Key::fence(l),
            value
        }),
    ]
}

#[test]
fn simulated_node_answers_like_redis_server() {
    let binary =
        server::binary().unwrap_or_else(|e| panic!("{e}: the differential test needs a real redis-server"));
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Server::start(0, &binary, dir.path().to_path_buf(), Default::default(), None)
        .unwrap_or_else(|e| panic!("cannot start redis-server: {e}"));
    let url = format!("redis://{}/", server.addr());
    let mut conn = redis::Client::open(url)
        .and_then(|c| c.get_connection())
        .expect("connect to redis-server");
    for script in wire::SCRIPTS {
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(script.source)
            .query(&mut conn)
            .expect("SCRIPT LOAD");
        assert_eq!(sha, script.sha());
    }

    let mut runner = TestRunner::new(Config {
        cases: 200,
        ..Config::default()
    });
    // The runner takes a `Fn`; the one connection is borrowed per case.
    let conn = std::cell::RefCell::new(conn);
    let result = runner.run(&proptest::collection::vec(cmd(), 1..40), |cmds| {
        let mut conn = conn.borrow_mut();
        let _: () = redis::cmd("FLUSHALL").query(&mut *conn).expect("FLUSHALL");
        let mut node = Node::default();
        for (i, c) in cmds.iter().enumerate() {
            let simulated = node.exec(i as u64, *c);
            let real = match wire::to_redis(c).query::<redis::Value>(&mut *conn) {
                Ok(v) => wire::from_redis(&v),
                Err(_) => Reply::Error,
            };
            if simulated != real {
                return Err(TestCaseError::fail(format!(
                    "command {i} {c:?}: simulated {simulated:?}, redis-server {real:?}"
                )));
            }
        }
        Ok(())
    });
    drop(server);
    if let Err(e) = result {
        panic!("{e}");
    }
}
