//! How the algorithms' [`Cmd`]s go over the wire to a real Redis, and how replies come back.
//!
//! Plain commands are sent as they are (`SET k token NX PX ttl`, `DEL`, `PEXPIRE`,
//! `ZREM`, `INCR`); every script is one of the Lua files in `src/scripts/`, loaded with
//! `SCRIPT LOAD` when a node starts or restarts and run with `EVALSHA`. The match on
//! [`Cmd`] has no wildcard on purpose: a new command does not compile until it is
//! mapped here.

use crate::command::{Cmd, FairArgs, Key, KeyKind, LockId, Reply};

/// A Lua script of the repo, with the SHA1 Redis knows it by.
pub struct Script {
    pub name: &'static str,
    pub source: &'static str,
}

/// The compare-and-delete release.
pub const UNLOCK: Script = Script {
    name: "unlock.lua",
    source: include_str!("../scripts/unlock.lua"),
};

/// `src/scripts/rw_write_lock.lua`.
pub const RW_WRITE_LOCK: Script = Script {
    name: "rw_write_lock.lua",
    source: include_str!("../scripts/rw_write_lock.lua"),
};

/// `src/scripts/rw_read_lock.lua`.
pub const RW_READ_LOCK: Script = Script {
    name: "rw_read_lock.lua",
    source: include_str!("../scripts/rw_read_lock.lua"),
};

/// `src/scripts/extend.lua`.
pub const EXTEND: Script = Script {
    name: "extend.lua",
    source: include_str!("../scripts/extend.lua"),
};

/// `src/scripts/extend_read.lua`.
pub const EXTEND_READ: Script = Script {
    name: "extend_read.lua",
    source: include_str!("../scripts/extend_read.lua"),
};

/// `src/scripts/fence_raise.lua`.
pub const FENCE_RAISE: Script = Script {
    name: "fence_raise.lua",
    source: include_str!("../scripts/fence_raise.lua"),
};

/// `src/scripts/fair_write_lock.lua`.
pub const FAIR_WRITE_LOCK: Script = Script {
    name: "fair_write_lock.lua",
    source: include_str!("../scripts/fair_write_lock.lua"),
};

/// `src/scripts/fair_read_lock.lua`.
pub const FAIR_READ_LOCK: Script = Script {
    name: "fair_read_lock.lua",
    source: include_str!("../scripts/fair_read_lock.lua"),
};

/// `src/scripts/fair_leave.lua`.
pub const FAIR_LEAVE: Script = Script {
    name: "fair_leave.lua",
    source: include_str!("../scripts/fair_leave.lua"),
};

/// Every script a node must have loaded.
pub const SCRIPTS: &[&Script] = &[
    &UNLOCK,
    &RW_WRITE_LOCK,
    &RW_READ_LOCK,
    &EXTEND,
    &EXTEND_READ,
    &FENCE_RAISE,
    &FAIR_WRITE_LOCK,
    &FAIR_READ_LOCK,
    &FAIR_LEAVE,
];

impl Script {
    /// The SHA1 hex digest `EVALSHA` names the script by.
    pub fn sha(&self) -> String {
        redis::Script::new(self.source).get_hash().to_string()
    }
}

/// The Redis command for `cmd`.
pub fn to_redis(cmd: &Cmd) -> redis::Cmd {
    match *cmd {
        Cmd::SetNxPx { key, token, ttl_ms } => {
            let mut c = redis::cmd("SET");
            c.arg(key.to_string())
                .arg(token.to_string())
                .arg("NX")
                .arg("PX")
                .arg(ttl_ms);
            c
        }
        Cmd::DelIfEq { key, token } => evalsha(&UNLOCK, &[key.to_string()], &[token.to_string()]),
        Cmd::WriteLock {
            lock,
            token,
            now_ms,
            ttl_ms,
        } => evalsha(
            &RW_WRITE_LOCK,
            &rw_keys(lock),
            &[token.to_string(), now_ms.to_string(), ttl_ms.to_string()],
        ),
        Cmd::ReadLock {
            lock,
            token,
            exp_at_ms,
        } => evalsha(
            &RW_READ_LOCK,
            &rw_keys(lock),
            &[token.to_string(), exp_at_ms.to_string()],
        ),
        Cmd::Del { key } => {
            let mut c = redis::cmd("DEL");
            c.arg(key.to_string());
            c
        }
        Cmd::PExpire { key, ttl_ms } => {
            let mut c = redis::cmd("PEXPIRE");
            c.arg(key.to_string()).arg(ttl_ms);
            c
        }
        Cmd::ZRem { key, token } => {
            let mut c = redis::cmd("ZREM");
            c.arg(key.to_string()).arg(token.to_string());
            c
        }
        Cmd::PExpireIfEq { key, token, ttl_ms } => evalsha(
            &EXTEND,
            &[key.to_string()],
            &[token.to_string(), ttl_ms.to_string()],
        ),
        Cmd::ExtendRead {
            lock,
            token,
            now_ms,
            exp_at_ms,
        } => evalsha(
            &EXTEND_READ,
            &rw_keys(lock),
            &[token.to_string(), now_ms.to_string(), exp_at_ms.to_string()],
        ),
        Cmd::Incr { key } => {
            let mut c = redis::cmd("INCR");
            c.arg(key.to_string());
            c
        }
        Cmd::RaiseTo { key, value } => evalsha(&FENCE_RAISE, &[key.to_string()], &[value.to_string()]),
        Cmd::FairWriteLock {
            lock,
            token,
            fair,
            ttl_ms,
        } => evalsha(
            &FAIR_WRITE_LOCK,
            &fair_keys(lock),
            &fair_args(token.to_string(), ttl_ms, &fair),
        ),
        Cmd::FairReadLock {
            lock,
            token,
            fair,
            exp_at_ms,
        } => evalsha(
            &FAIR_READ_LOCK,
            &fair_keys(lock),
            &fair_args(token.to_string(), exp_at_ms, &fair),
        ),
        Cmd::FairLeave { lock, ticket } => {
            let keys = fair_keys(lock);
            evalsha(&FAIR_LEAVE, &keys[2..], &[ticket.to_string()])
        }
        Cmd::Wait {
            replicas, timeout_ms, ..
        } => {
            let mut c = redis::cmd("WAIT");
            c.arg(replicas).arg(timeout_ms);
            c
        }
    }
}

fn key(kind: KeyKind, lock: LockId) -> String {
    Key { kind, lock }.to_string()
}

/// KEYS of seed 000's scripts: the readers' sorted set, then the writer's key.
fn rw_keys(lock: LockId) -> [String; 2] {
    [key(KeyKind::Readers, lock), key(KeyKind::Writer, lock)]
}

/// KEYS of the fair scripts: readers, writer, queue, queue expiries.
fn fair_keys(lock: LockId) -> [String; 4] {
    [
        key(KeyKind::Readers, lock),
        key(KeyKind::Writer, lock),
        key(KeyKind::Fair, lock),
        key(KeyKind::FairExpiry, lock),
    ]
}

/// ARGV of the fair scripts: token, now, ttl or expiry, member, enqueue, queued_at,
/// ticket expiry.
fn fair_args(token: String, ttl_or_exp_ms: u64, fair: &FairArgs) -> [String; 7] {
    [
        token,
        fair.now_ms.to_string(),
        ttl_or_exp_ms.to_string(),
        fair.ticket.to_string(),
        if fair.enqueue { "1" } else { "0" }.to_string(),
        fair.queued_at_ms.to_string(),
        fair.ticket_exp_at_ms.to_string(),
    ]
}

fn evalsha(script: &Script, keys: &[String], args: &[String]) -> redis::Cmd {
    let mut c = redis::cmd("EVALSHA");
    c.arg(script.sha()).arg(keys.len()).arg(keys).arg(args);
    c
}

/// The algorithm's view of a Redis reply.
pub fn from_redis(value: &redis::Value) -> Reply {
    match value {
        redis::Value::Okay => Reply::Ok,
        redis::Value::Nil => Reply::Nil,
        redis::Value::Int(i) => Reply::Int(*i),
        redis::Value::SimpleString(s) if s == "OK" => Reply::Ok,
        _ => Reply::Error,
    }
}

/// Loads every script into the node behind `conn`; checks Redis agrees on each SHA.
pub async fn load_scripts<C: redis::aio::ConnectionLike>(conn: &mut C) -> redis::RedisResult<()> {
    for script in SCRIPTS {
        let sha: String = redis::cmd("SCRIPT")
            .arg("LOAD")
            .arg(script.source)
            .query_async(conn)
            .await?;
        if sha != script.sha() {
            return Err(redis::RedisError::from((
                redis::ErrorKind::Client,
                "SCRIPT LOAD returned an unexpected SHA",
                format!("{}: {sha}", script.name),
            )));
        }
    }
    Ok(())
}
