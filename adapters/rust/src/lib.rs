//! The worker side of lockstorm's worker protocol, shared by the Rust adapters. They need
//! what version 1 has; later versions only add to it, so any `protocol` from 1 up is served.
//! An acquire's `fail` or `error` may carry version 2's `token` (the library's lock value
//! of the attempt), which an earlier lockstorm ignores as an unknown field.
//!
//! lockstorm writes one JSON request per line on our stdin; [`run`] reads it, hands it to
//! the [`Adapter`] and writes the answer as one JSON line on stdout, flushed at once.
//! stdout carries protocol messages only (the libraries here print nothing); logs go to
//! stderr. An adapter is only the mapping onto its library: a library error whose outcome
//! is unknown is an [`Answer::Error`], which lockstorm records as `info`. `write` is
//! answered here (the value, with the hold's fence if the library issues one). When stdin
//! closes, the worker answers what it has already read and exits, releasing nothing; a
//! library call still blocking half a second later does not hold it up.

use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::io::{BufRead, Write};

/// The version these adapters were written for; a hello asking for it or a later one is served.
pub const PROTOCOL: u64 = 1;

/// How long a worker whose stdin closed may still finish the requests it read.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// What an adapter answers to acquire, release and extend.
#[derive(Debug)]
pub enum Answer {
    /// The library says yes; `validity_ms` only if it reports one, `token` its lock value.
    Ok {
        validity_ms: Option<u64>,
        token: Option<String>,
    },
    /// The library says no: definitely not acquired (or, for release/extend, not held).
    /// The reason, and the library's lock value of a failed acquire if it exposes one.
    Fail(String, Option<String>),
    /// Unknown outcome: the message, and the acquire's lock value as for `Fail`.
    Error(String, Option<String>),
}

/// What the worker can do, as the hello answer states it.
pub struct Capabilities {
    pub extend: bool,
    pub validity: bool,
}

/// The hello answer's library fields.
pub struct Library {
    pub name: &'static str,
    pub version: &'static str,
    pub capabilities: Capabilities,
}

/// One lock library behind the protocol.
pub trait Adapter {
    /// Connects to the hello's nodes; an error refuses the run (answered `error`).
    fn hello(&mut self, params: &Params) -> Result<Library, String>;
    fn acquire(&mut self, lock: &str) -> Answer;
    fn release(&mut self, lock: &str) -> Answer;
    fn extend(&mut self, lock: &str) -> Answer;
}

/// The hello's fields the adapters use (unknown fields are ignored): the nodes and the
/// lock's ttl, all a user must pass. Every other setting stays at the library's default,
/// so the hello's `algorithm` (lockstorm's own retries, delays, timeouts) is not read.
#[derive(Debug, Deserialize)]
pub struct Params {
    pub protocol: u64,
    pub nodes: Vec<String>,
    pub ttl_ms: u64,
}

impl Params {
    /// `redis://host:port/` for each node, in node order.
    pub fn redis_urls(&self) -> Vec<String> {
        self.nodes.iter().map(|node| format!("redis://{node}/")).collect()
    }
}

/// A lock value as the token field shows it.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Serves requests until stdin closes.
pub fn run(mut adapter: impl Adapter) -> ! {
    let (send, requests) = std::sync::mpsc::channel::<String>();
    // Reads stdin beside the main thread, so that a close (the shutdown) ends the process
    // even while a library call blocks: the channel closes, and after the grace the
    // process exits whatever the main thread is doing.
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if send.send(line).is_err() {
                break;
            }
        }
        drop(send);
        std::thread::sleep(EXIT_GRACE);
        std::process::exit(0);
    });
    let mut out = std::io::stdout().lock();
    let mut capabilities: Option<Capabilities> = None;
    for line in requests {
        let request: Map<String, Value> = match serde_json::from_str(&line) {
            Ok(Value::Object(map)) if map.get("id").is_some_and(Value::is_u64) => map,
            _ => {
                eprintln!("worker: not a protocol request: {line}");
                std::process::exit(2);
            }
        };
        let text = |key: &str| request.get(key).and_then(Value::as_str).unwrap_or_default();
        let lock = text("lock");
        let mut answer = match (text("type"), &capabilities) {
            ("hello", _) => match hello(&mut adapter, &request) {
                Ok((library, answer)) => {
                    capabilities = Some(library.capabilities);
                    answer
                }
                Err(message) => error(&message),
            },
            (_, None) => error("the first request must be a successful hello"),
            ("acquire", Some(_)) => match request.get("mode").and_then(Value::as_str) {
                None | Some("exclusive") => timed(|| adapter.acquire(lock)),
                Some(mode) => error(&format!("mode {mode:?} is not in this worker's capabilities")),
            },
            ("release", Some(_)) => answer_json(adapter.release(lock)),
            ("extend", Some(c)) if c.extend => timed(|| adapter.extend(lock)),
            ("extend", Some(_)) => error("extend is not in this worker's capabilities"),
            ("write", Some(_)) => json!({"type": "ok", "value": request.get("value")}),
            (kind, Some(_)) => error(&format!("unknown request type {kind:?}")),
        };
        answer["in_reply_to"] = request["id"].clone();
        let written = writeln!(out, "{answer}").and_then(|()| out.flush());
        if written.is_err() {
            std::process::exit(0); // lockstorm is gone
        }
    }
    std::process::exit(0)
}

fn hello(adapter: &mut impl Adapter, request: &Map<String, Value>) -> Result<(Library, Value), String> {
    let params: Params = serde_json::from_value(Value::Object(request.clone()))
        .map_err(|e| format!("malformed hello: {e}"))?;
    if params.protocol < PROTOCOL {
        return Err(format!(
            "protocol {} asked, this worker speaks {PROTOCOL} and later",
            params.protocol
        ));
    }
    let library = adapter.hello(&params)?;
    let c = &library.capabilities;
    let answer = json!({
        "type": "hello_ok",
        "library": library.name,
        "version": library.version,
        "capabilities": {"extend": c.extend, "validity": c.validity, "fencing": false, "modes": ["exclusive"]},
    });
    Ok((library, answer))
}

/// The library call's answer; an `ok` carries `took_ms`, how long the call took on the
/// monotonic clock: lockstorm counts the caller's hold from when the call returned, which
/// a stop of this process between the return and the answer would otherwise hide.
fn timed(call: impl FnOnce() -> Answer) -> Value {
    let start = std::time::Instant::now();
    let mut answer = answer_json(call());
    if answer["type"] == "ok" {
        answer["took_ms"] = json!(start.elapsed().as_secs_f64() * 1000.0);
    }
    answer
}

fn error(message: &str) -> Value {
    json!({"type": "error", "message": message})
}

fn answer_json(answer: Answer) -> Value {
    match answer {
        Answer::Ok { validity_ms, token } => {
            let mut ok = json!({"type": "ok"});
            if let Some(v) = validity_ms {
                ok["validity_ms"] = json!(v);
            }
            with_token(ok, token)
        }
        Answer::Fail(reason, token) => with_token(json!({"type": "fail", "reason": reason}), token),
        Answer::Error(message, token) => with_token(error(&message), token),
    }
}

fn with_token(mut answer: Value, token: Option<String>) -> Value {
    if let Some(t) = token {
        answer["token"] = json!(t);
    }
    answer
}
