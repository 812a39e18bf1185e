//! How the algorithms' [`Cmd`]s go over the wire to a real Redis, and how replies come back.
//!
//! Plain commands are sent as they are (`SET k token NX PX ttl`); every script is one of
//! the Lua files in `src/scripts/`, loaded with `SCRIPT LOAD` when a node starts or
//! restarts and run with `EVALSHA`. The match on [`Cmd`] has no wildcard on purpose: a new
//! command does not compile until it is mapped here.

use crate::command::{Cmd, Reply};

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

/// Every script a node must have loaded.
pub const SCRIPTS: &[&Script] = &[&UNLOCK];

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
    }
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
