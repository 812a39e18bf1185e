//! The worker protocol, version 2, as types: what lockstorm sends a worker process and
//! what the worker answers, one JSON object per line (docs/worker-protocol.md is the
//! public page; this file is its contract in code).
//!
//! Both directions are plain serde types, used by lockstorm's side (the real driver)
//! and by `lockstorm worker` (the built-in algorithms behind the protocol). Unknown
//! fields are ignored both ways (serde's default), so either side may add fields
//! without breaking the other; an unknown `type` is not a protocol message.
//!
//! Version 2 only adds to version 1, and only on the worker's side: `expires: false` on an
//! `ok` (a hold with no expiry, held until released), the unsolicited `lost` message (the
//! library lost a lock it held), and the `ok`'s `token` now reaches the history. A
//! version-1 worker sends none of these and runs unchanged.

use crate::algorithm::{AlgorithmConfig, AlgorithmKind, Mode};
use crate::command::LockId;
use crate::rng::Dist;
use serde::{Deserialize, Serialize};

/// The protocol version this lockstorm speaks (a superset of every earlier one).
pub const VERSION: u32 = 2;

/// A message lockstorm sends to a worker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToWorker {
    Hello(Box<Hello>),
    Acquire { id: u64, lock: String, mode: Mode },
    Release { id: u64, lock: String },
    Extend { id: u64, lock: String },
    Write { id: u64, lock: String, value: String },
}

/// The first message: who the worker is and what it runs against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub id: u64,
    pub protocol: u32,
    /// This worker's client number, from 0.
    pub client: usize,
    pub clients: usize,
    /// This client's own addresses of the nodes (its proxies), in node order.
    pub nodes: Vec<String>,
    pub locks: Vec<String>,
    pub ttl_ms: u64,
    pub seed: u64,
    pub algorithm: HelloAlgorithm,
    /// On a Sentinel deployment (`[sentinel]`): where the sentinels are, and the name
    /// they watch the master under; `nodes` then holds the master at the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentinel: Option<HelloSentinel>,
    /// On a Redis Cluster (`[cluster]`): the nodes a cluster client starts from; `nodes`
    /// then holds the master of the lock's slot at the start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<HelloCluster>,
}

/// A Redis Cluster, as a library's cluster client is configured with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloCluster {
    /// Every node's address, `host:port` (masters and replicas; a client asks any of them
    /// for the slot map).
    pub nodes: Vec<String>,
}

/// A Sentinel deployment, as a library's Sentinel client is configured with it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HelloSentinel {
    /// The name the sentinels monitor the master under (`SENTINEL get-master-addr-by-name`).
    pub master: String,
    /// The sentinels' addresses, `host:port`.
    pub sentinels: Vec<String>,
}

/// The scenario's algorithm parameters, in the units libraries take.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HelloAlgorithm {
    pub kind: AlgorithmKind,
    pub quorum: usize,
    pub retry_count: u32,
    pub retry_delay_ms: DelayMs,
    pub drift_factor: f64,
    /// Rounded up to a whole millisecond.
    pub request_timeout_ms: u64,
    pub fencing: bool,
    /// lockstorm's own resolved configuration (microseconds, every knob), which
    /// `lockstorm worker` runs exactly; other workers ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<AlgorithmConfig>,
}

/// A retry delay in whole milliseconds: uniform in `min..=max`, or exponential with
/// `mean`, capped at `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelayMs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<u64>,
    pub max: u64,
}

impl DelayMs {
    pub fn from_dist(d: &Dist) -> DelayMs {
        let ms = |us: u64| us / 1_000;
        match *d {
            Dist::Fixed { us } => DelayMs {
                min: Some(ms(us)),
                mean: None,
                max: ms(us),
            },
            Dist::Uniform { min_us, max_us } => DelayMs {
                min: Some(ms(min_us)),
                mean: None,
                max: ms(max_us),
            },
            Dist::Exponential { mean_us, max_us } => DelayMs {
                min: None,
                mean: Some(ms(mean_us)),
                max: ms(max_us),
            },
        }
    }
}

impl HelloAlgorithm {
    pub fn from_config(a: &AlgorithmConfig) -> HelloAlgorithm {
        HelloAlgorithm {
            kind: a.kind,
            quorum: a.quorum,
            retry_count: a.retry_count,
            retry_delay_ms: DelayMs::from_dist(&a.retry_delay),
            drift_factor: a.drift_factor,
            request_timeout_ms: a.request_timeout_us.div_ceil(1_000),
            fencing: a.fencing,
            config: Some(a.clone()),
        }
    }
}

/// A message a worker sends to lockstorm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FromWorker {
    HelloOk {
        in_reply_to: u64,
        #[serde(default)]
        library: String,
        #[serde(default)]
        version: String,
        #[serde(default)]
        capabilities: Capabilities,
    },
    /// Done: the lock is held (acquire, extend), released, or the write is answered.
    Ok {
        in_reply_to: u64,
        /// How long the lock is valid from now on, by the library's account.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        validity_ms: Option<f64>,
        /// `false`: the hold has no expiry, it lasts until its release is sent (a lock
        /// without a ttl); `validity_ms` is then ignored. Absent or `true`: it expires.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expires: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fence: Option<u64>,
        /// A write's value, echoed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        value: Option<String>,
        /// How long the library's call took, by the worker's monotonic clock: the
        /// caller's hold starts `took_ms` after the request was sent, when that is before
        /// the answer came in (a worker stopped between its library's return and its
        /// answer).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        took_ms: Option<f64>,
        /// The nodes the acquisition (or extension) holds, as indices into the hello's
        /// `nodes`, if the library says: the hold is on them (else on the nodes whose
        /// lines carry its `token`), and a fault aimed at the holder's nodes strikes them.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        nodes: Option<Vec<usize>>,
    },
    /// Definitely not done.
    Fail {
        in_reply_to: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// A failed acquire's lock value (the library's), if it exposes it: the history
        /// records it as `worker_token`, so the attempt's keys can be told from the node
        /// lines.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// Unknown outcome (a timeout: it may or may not have happened).
    Error {
        in_reply_to: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        /// As for `Fail`: the acquire's lock value, if the library exposes it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        token: Option<String>,
    },
    /// Unsolicited, at any time: the library says it no longer holds `lock` (its
    /// watchdog saw the key gone, a renewal failed). Answers no request.
    Lost {
        lock: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

impl FromWorker {
    /// The request this message answers; `None` for an unsolicited `lost`.
    pub fn in_reply_to(&self) -> Option<u64> {
        match self {
            FromWorker::HelloOk { in_reply_to, .. }
            | FromWorker::Ok { in_reply_to, .. }
            | FromWorker::Fail { in_reply_to, .. }
            | FromWorker::Error { in_reply_to, .. } => Some(*in_reply_to),
            FromWorker::Lost { .. } => None,
        }
    }
}

/// What a worker says it can do; lockstorm asks nothing else of it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    #[serde(default)]
    pub extend: bool,
    /// Whether `ok` answers to acquire and extend carry `validity_ms`.
    #[serde(default)]
    pub validity: bool,
    #[serde(default)]
    pub fencing: bool,
    #[serde(default = "exclusive_only")]
    pub modes: Vec<Mode>,
}

fn exclusive_only() -> Vec<Mode> {
    vec![Mode::Exclusive]
}

impl Default for Capabilities {
    fn default() -> Self {
        Capabilities {
            extend: false,
            validity: false,
            fencing: false,
            modes: exclusive_only(),
        }
    }
}

/// A request of a client's lock cycle, before it gets its wire id: what a client's
/// `client::Action::Call` asks the worker to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Request {
    Acquire {
        lock: LockId,
        mode: Mode,
    },
    Release {
        lock: LockId,
    },
    Extend {
        lock: LockId,
    },
    /// The `seq`-th write of this client to the guarded resource of `lock`.
    Write {
        lock: LockId,
        seq: u32,
    },
}

impl Request {
    /// The message on the wire, with its id; `client` names the write's value.
    pub fn to_message(self, id: u64, client: usize) -> ToWorker {
        match self {
            Request::Acquire { lock, mode } => ToWorker::Acquire {
                id,
                lock: lock.to_string(),
                mode,
            },
            Request::Release { lock } => ToWorker::Release {
                id,
                lock: lock.to_string(),
            },
            Request::Extend { lock } => ToWorker::Extend {
                id,
                lock: lock.to_string(),
            },
            Request::Write { lock, seq } => ToWorker::Write {
                id,
                lock: lock.to_string(),
                value: write_value(client, seq),
            },
        }
    }

    /// The request's `type` on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Request::Acquire { .. } => "acquire",
            Request::Release { .. } => "release",
            Request::Extend { .. } => "extend",
            Request::Write { .. } => "write",
        }
    }
}

/// The value of client `client`'s `seq`-th write: `c3-w17`.
pub fn write_value(client: usize, seq: u32) -> String {
    format!("c{client}-w{seq}")
}

/// One message as a line (without the newline).
pub fn to_line<T: Serialize>(message: &T) -> String {
    serde_json::to_string(message).expect("protocol messages always serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_look_like_the_protocol_page() {
        let m = Request::Acquire {
            lock: LockId(0),
            mode: Mode::Exclusive,
        }
        .to_message(7, 3);
        assert_eq!(
            to_line(&m),
            r#"{"type":"acquire","id":7,"lock":"L0","mode":"exclusive"}"#
        );
        let w = Request::Write {
            lock: LockId(1),
            seq: 17,
        }
        .to_message(10, 3);
        assert_eq!(
            to_line(&w),
            r#"{"type":"write","id":10,"lock":"L1","value":"c3-w17"}"#
        );
    }

    #[test]
    fn answers_parse_with_unknown_fields_and_optional_ones_left_out() {
        let ok: FromWorker = serde_json::from_str(
            r#"{"type":"ok","in_reply_to":7,"validity_ms":9950,"token":"8f2c","fence":12,"extra":[1]}"#,
        )
        .unwrap();
        assert_eq!(
            ok,
            FromWorker::Ok {
                in_reply_to: 7,
                validity_ms: Some(9950.0),
                expires: None,
                token: Some("8f2c".into()),
                fence: Some(12),
                value: None,
                took_ms: None,
                nodes: None
            }
        );
        let forever: FromWorker =
            serde_json::from_str(r#"{"type":"ok","in_reply_to":3,"expires":false}"#).unwrap();
        assert!(matches!(
            forever,
            FromWorker::Ok {
                expires: Some(false),
                ..
            }
        ));
        let lost: FromWorker = serde_json::from_str(r#"{"type":"lost","lock":"L0"}"#).unwrap();
        assert_eq!(lost.in_reply_to(), None);
        assert!(
            serde_json::from_str::<FromWorker>(r#"{"type":"lost"}"#).is_err(),
            "a lost names its lock"
        );
        let hello: FromWorker = serde_json::from_str(r#"{"type":"hello_ok","in_reply_to":0}"#).unwrap();
        let FromWorker::HelloOk { capabilities, .. } = hello else {
            panic!("{hello:?}")
        };
        assert_eq!(capabilities, Capabilities::default());
        assert!(serde_json::from_str::<FromWorker>(r#"{"type":"okay","in_reply_to":1}"#).is_err());
        assert!(serde_json::from_str::<FromWorker>(r#"{"type":"ok"}"#).is_err());
    }
}
