//! lockstorm worker: rslock's `LockManager` (async Redlock on the redis crate and tokio).
//!
//! What the library promises: Redlock over N masters, in parallel: `SET key value NX PX
//! ttl` on every master over one multiplexed connection each; acquired if at least N/2+1
//! said yes and `validity = ttl - elapsed - (1% of ttl + 2 ms)` is positive, elapsed on
//! `std::time::Instant` (the monotonic clock). If elapsed alone exceeds ttl - drift it
//! returns `TtlExceeded` at once, without unlocking. Otherwise a failed try unlocks
//! everywhere and, after a random delay below `retry_delay`, tries again, `retry_count`
//! tries in all. Extension runs the same round with a compare-and-set script and returns a
//! new lock with a new validity; a failed extension unlocks everywhere. No fencing token.
//!
//! Passed from the hello: the nodes as `LockManager::new(["redis://host:port/", ...])` and
//! `ttl_ms` as the ttl of `lock` and `extend`. Everything else is the library's default,
//! as read from rslock 0.10.0 and the redis crate 1.8.1 it uses (the matrix prints
//! adapters.toml's `options` line beside every cell; adapters/python/defaults_check.py
//! checks both against the crates' sources in the cargo registry):
//! - The lock manager (rslock src/lock.rs, LockManager::from_clients: `DEFAULT_RETRY_COUNT`,
//!   `DEFAULT_RETRY_DELAY`; the tries in LockManager::exec_or_retry): 3 tries, a random
//!   delay below 200 ms between them.
//! - Each node's multiplexed connection (redis src/client.rs,
//!   Client::get_multiplexed_async_connection with `AsyncConnectionConfig::new()`:
//!   `DEFAULT_RESPONSE_TIMEOUT`, `DEFAULT_CONNECTION_TIMEOUT`): a 500 ms response timeout
//!   and a 1 s connect timeout; rslock sets no others.
//!
//! Its acquire is bounded by its own tries; the adapter adds none. No `token` on a fail:
//! LockManager::lock draws the value inside the call and a `LockError` does not carry it.
//!
//! Capabilities: extend, validity; no fencing; exclusive only. A multi-threaded tokio
//! runtime with one worker thread runs for the process's life, so the connections' driver
//! tasks keep running between requests, as in a service.

use lockstorm_adapters::{hex, run, Adapter, Answer, Capabilities, Library, Params};
use rslock::{Lock, LockError, LockManager};
use std::collections::BTreeMap;
use std::time::Duration;

struct Rslock {
    runtime: tokio::runtime::Runtime,
    manager: Option<LockManager>,
    ttl: Duration,
    /// Lock name -> the library's lock of the current hold.
    holds: BTreeMap<String, Lock>,
}

/// The library saying no, versus an error whose outcome is unknown.
fn refusal(e: LockError) -> Answer {
    match e {
        LockError::Unavailable | LockError::TtlExceeded => Answer::Fail(e.to_string(), None),
        other => Answer::Error(other.to_string(), None),
    }
}

fn held(lock: &Lock) -> Answer {
    Answer::Ok {
        validity_ms: Some(lock.validity_time as u64),
        token: Some(hex(&lock.val)),
    }
}

impl Adapter for Rslock {
    fn hello(&mut self, params: &Params) -> Result<Library, String> {
        self.manager = Some(LockManager::new(params.redis_urls()));
        self.ttl = Duration::from_millis(params.ttl_ms);
        Ok(Library {
            name: "rslock",
            version: "0.10.0", // as pinned in Cargo.toml
            capabilities: Capabilities {
                extend: true,
                validity: true,
            },
        })
    }

    fn acquire(&mut self, lock: &str) -> Answer {
        let manager = self.manager.as_ref().expect("hello first");
        match self.runtime.block_on(manager.lock(lock.as_bytes(), self.ttl)) {
            Ok(acquired) => {
                let answer = held(&acquired);
                self.holds.insert(lock.to_string(), acquired);
                answer
            }
            Err(e) => refusal(e),
        }
    }

    fn release(&mut self, lock: &str) -> Answer {
        let Some(hold) = self.holds.remove(lock) else {
            return Answer::Fail("no hold of this lock to release".into(), None);
        };
        let manager = self.manager.as_ref().expect("hello first");
        self.runtime.block_on(manager.unlock(&hold));
        Answer::Ok {
            validity_ms: None,
            token: None,
        }
    }

    fn extend(&mut self, lock: &str) -> Answer {
        let Some(hold) = self.holds.remove(lock) else {
            return Answer::Fail("no hold of this lock to extend".into(), None);
        };
        let manager = self.manager.as_ref().expect("hello first");
        match self.runtime.block_on(manager.extend(&hold, self.ttl)) {
            Ok(extended) => {
                let answer = held(&extended);
                self.holds.insert(lock.to_string(), extended);
                answer
            }
            Err(e) => refusal(e), // a failed extension unlocked everywhere: the hold is over
        }
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("start the tokio runtime");
    run(Rslock {
        runtime,
        manager: None,
        ttl: Duration::ZERO,
        holds: BTreeMap::new(),
    })
}
