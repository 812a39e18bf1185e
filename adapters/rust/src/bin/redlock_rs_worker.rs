//! lockstorm worker: the `redlock` crate's `RedLock` (redlock-rs, blocking).
//!
//! What the library promises: Redlock over N masters, sequentially: for each master in
//! turn it opens a new connection and sends `SET key value NX PX ttl`; acquired if at
//! least N/2+1 said yes and `validity = ttl - (1% of ttl + 2 ms) - elapsed` is positive,
//! elapsed on `std::time::Instant` (the monotonic clock). The validity is an unsigned
//! integer: once elapsed passes ttl - drift, the subtraction wraps in a release build and
//! the lock comes back with an enormous validity (a debug build panics). A master that
//! errors (refused, reset) ends the whole attempt with that error, leaving the keys already
//! set in place until they expire. A failed try unlocks everywhere, then sleeps a random
//! delay below `retry_delay` (also after the last try), `retry_count` tries in all. No
//! extension, no fencing.
//!
//! Passed from the hello: the nodes as `RedLock::new(["redis://host:port/", ...])` and
//! `ttl_ms` as the ttl of `lock`. Everything else is the library's default, as read from
//! redlock 2.0.0 and the redis crate 0.23.5 it uses (the matrix prints adapters.toml's
//! `options` line beside every cell; adapters/python/defaults_check.py checks both against
//! the crates' sources in the cargo registry):
//! - The lock manager (redlock src/redlock.rs, RedLock::with_clients: `DEFAULT_RETRY_COUNT`,
//!   `DEFAULT_RETRY_DELAY`; the tries in RedLock::lock): 3 tries, a random sleep below
//!   200 ms after each failed try, the last one included.
//! - Each command's connection (redis src/client.rs, Client::get_connection:
//!   `connect(&self.connection_info, None)`): a new TCP connection with no connect or
//!   response timeout, so a request to a node behind a cut link waits until the link heals.
//!
//! Its acquire is bounded by its own tries; the adapter adds none. No `token` on a fail:
//! RedLock::lock draws the value inside the call and returns it only in the lock.
//!
//! Capabilities: validity; no extend, no fencing; exclusive only.

use lockstorm_adapters::{hex, run, Adapter, Answer, Capabilities, Library, Params};
use redlock::{Lock, RedLock};
use std::collections::BTreeMap;

struct RedlockRs {
    /// Leaked once at hello: the library's `Lock` borrows its manager, and both live as
    /// long as the process.
    manager: Option<&'static RedLock>,
    ttl_ms: usize,
    /// Lock name -> the library's lock of the current hold.
    holds: BTreeMap<String, Lock<'static>>,
}

impl Adapter for RedlockRs {
    fn hello(&mut self, params: &Params) -> Result<Library, String> {
        self.manager = Some(Box::leak(Box::new(RedLock::new(params.redis_urls()))));
        self.ttl_ms = params.ttl_ms as usize;
        Ok(Library {
            name: "redlock",
            version: "2.0.0", // as pinned in Cargo.toml
            capabilities: Capabilities {
                extend: false,
                validity: true,
            },
        })
    }

    fn acquire(&mut self, lock: &str) -> Answer {
        let manager = self.manager.expect("hello first");
        match manager.lock(lock.as_bytes(), self.ttl_ms) {
            Ok(Some(acquired)) => {
                let answer = Answer::Ok {
                    validity_ms: Some(acquired.validity_time as u64),
                    token: Some(hex(&acquired.val)),
                };
                self.holds.insert(lock.to_string(), acquired);
                answer
            }
            Ok(None) => Answer::Fail("not acquired".into(), None),
            // Some masters may have taken the key before the error: unknown outcome.
            Err(e) => Answer::Error(e.to_string(), None),
        }
    }

    fn release(&mut self, lock: &str) -> Answer {
        let Some(hold) = self.holds.remove(lock) else {
            return Answer::Fail("no hold of this lock to release".into(), None);
        };
        self.manager.expect("hello first").unlock(&hold);
        Answer::Ok {
            validity_ms: None,
            token: None,
        }
    }

    fn extend(&mut self, _lock: &str) -> Answer {
        Answer::Error("redlock has no extension".into(), None) // never asked: capabilities say so
    }
}

fn main() {
    run(RedlockRs {
        manager: None,
        ttl_ms: 0,
        holds: BTreeMap::new(),
    })
}
