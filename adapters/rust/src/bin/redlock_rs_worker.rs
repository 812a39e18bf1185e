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
//! request timeout (the connections are opened without one), no extension, no fencing.
//!
//! Options used, from the hello:
//! - nodes -> `RedLock::new(["redis://host:port/", ...])`; request_timeout_ms is ignored.
//! - ttl_ms -> the ttl of `lock`.
//! - retry_count (retries after the first attempt) -> `set_retry(retry_count + 1, max
//!   delay)`; a zero max delay becomes 1 ms (the library draws from `0..delay`, which
//!   panics on an empty range).
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
        let mut manager = RedLock::new(params.redis_urls());
        let delay_ms = (params.algorithm.retry_delay_ms.max as u32).max(1);
        manager.set_retry(params.algorithm.retry_count + 1, delay_ms);
        self.manager = Some(Box::leak(Box::new(manager)));
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
            Ok(None) => Answer::Fail("not acquired".into()),
            // Some masters may have taken the key before the error: unknown outcome.
            Err(e) => Answer::Error(e.to_string()),
        }
    }

    fn release(&mut self, lock: &str) -> Answer {
        let Some(hold) = self.holds.remove(lock) else {
            return Answer::Fail("no hold of this lock to release".into());
        };
        self.manager.expect("hello first").unlock(&hold);
        Answer::Ok {
            validity_ms: None,
            token: None,
        }
    }

    fn extend(&mut self, _lock: &str) -> Answer {
        Answer::Error("redlock has no extension".into()) // never asked: capabilities say so
    }
}

fn main() {
    run(RedlockRs {
        manager: None,
        ttl_ms: 0,
        holds: BTreeMap::new(),
    })
}
