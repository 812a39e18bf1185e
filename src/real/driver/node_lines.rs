//! The nodes' `node` lines on the real backend, from what lockstorm's own clients sent
//! and what the nodes answered (see [`crate::history`]).
//!
//! A command that changed a lock key (a SET that was answered OK, a delete or an
//! extension that answered 1, a script that answered "acquired") is recorded at the
//! moment its reply arrived: the node applied it before then, after the request left.
//! What no reply tells (a key's expiry, a key lost at a crash, what a replica had) comes
//! from the nodes themselves (`key_watch.rs`), and so do worker clients' lines: their
//! commands are the library's own and pass the proxy unread.

use crate::command::{rw_reply, Cmd, Key, NodeId, Reply};
use crate::history::{Names, NodeAction, NodeEvent};

/// The `node` line for `cmd`, sent by `client` to `node` and answered `reply` at
/// `t_us`, if it changed a lock key; its lock and key named from the driver's `names`.
pub(crate) fn node_line(
    names: &mut Names,
    t_us: u64,
    client: usize,
    node: NodeId,
    cmd: Cmd,
    reply: Reply,
) -> Option<NodeEvent> {
    let acquired = reply == Reply::Int(rw_reply::ACQUIRED);
    let one = reply == Reply::Int(1);
    let (key, action, token, ttl_ms, checked) = match cmd {
        Cmd::SetNxPx { key, token, ttl_ms } if reply == Reply::Ok => {
            (key, NodeAction::Set, Some(token), Some(ttl_ms), None)
        }
        Cmd::DelIfEq { key, token } if one => (key, NodeAction::Deleted, Some(token), None, Some(true)),
        Cmd::Del { key } if one => (key, NodeAction::Deleted, None, None, Some(false)),
        Cmd::PExpire { key, ttl_ms } if one => (key, NodeAction::Extended, None, Some(ttl_ms), Some(false)),
        Cmd::PExpireIfEq { key, token, ttl_ms } if one => {
            (key, NodeAction::Extended, Some(token), Some(ttl_ms), Some(true))
        }
        Cmd::ZRem { key, token } if one => (key, NodeAction::Deleted, Some(token), None, Some(true)),
        Cmd::WriteLock {
            lock, token, ttl_ms, ..
        }
        | Cmd::FairWriteLock {
            lock, token, ttl_ms, ..
        } if acquired => (
            Key::writer(lock),
            NodeAction::Set,
            Some(token),
            Some(ttl_ms),
            None,
        ),
        Cmd::ReadLock { lock, token, .. } | Cmd::FairReadLock { lock, token, .. } if acquired => {
            (Key::readers(lock), NodeAction::Set, Some(token), None, None)
        }
        _ => return None,
    };
    Some(NodeEvent {
        t_us,
        node,
        lock: names.lock(key.lock),
        key: names.key(key),
        action,
        client: Some(client),
        token: token.map(crate::history::Token::hex),
        ttl_ms,
        checked,
        expired_at_us: None,
        expire_at_node_us: None,
        lag_us: None,
        member: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::LockId;

    #[test]
    fn only_commands_that_changed_a_key_give_a_line() {
        let key = Key::plain(LockId(0));
        let set = Cmd::SetNxPx {
            key,
            token: crate::command::Token(7),
            ttl_ms: 100,
        };
        let line = node_line(&mut Names::default(), 5, 1, 2, set, Reply::Ok).unwrap();
        assert_eq!(
            (line.action, line.node, line.client),
            (NodeAction::Set, 2, Some(1))
        );
        assert_eq!(line.token.as_deref(), Some("0000000000000007"));
        assert_eq!(
            node_line(&mut Names::default(), 5, 1, 2, set, Reply::Nil),
            None,
            "refused: nothing changed"
        );
        let del = node_line(&mut Names::default(), 6, 1, 2, Cmd::Del { key }, Reply::Int(1)).unwrap();
        assert_eq!((del.action, del.checked), (NodeAction::Deleted, Some(false)));
        assert_eq!(
            node_line(&mut Names::default(), 6, 1, 2, Cmd::Del { key }, Reply::Int(0)),
            None
        );
    }
}
