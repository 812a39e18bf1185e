//! What the sentinels say, as data: each sentinel publishes its decisions on its own
//! pub/sub channels (`+sdown`, `+odown`, `+switch-master`, ...), one channel per event,
//! with the instance as the message. lockstorm subscribes to every sentinel
//! (`PSUBSCRIBE *` on its direct address, which no cut reaches) and turns each message it
//! knows into a [`SentinelEvent`], stamped on arrival with the true time since the run's
//! origin. The history's node lines will be made from these.
//!
//! The message format (Redis's sentinel documentation, "Pub/Sub messages"):
//! `<instance-type> <name> <ip> <port> @ <master-name> <master-ip> <master-port>`, the
//! part from `@` only for an instance that is not a master; a master is
//! `master <name> <ip> <port>`, possibly followed by more (`#quorum 2/2`).
//! `+switch-master` alone is `<master-name> <old-ip> <old-port> <new-ip> <new-port>`.

use super::member::Member;
use futures_util::StreamExt;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// One thing a sentinel said.
#[derive(Clone, Debug, PartialEq)]
pub struct SentinelEvent {
    /// The sentinel that said it ([`Member::Sentinel`]).
    pub sentinel: Member,
    /// True time since the origin the deployment was given, when lockstorm received it.
    pub at: Duration,
    pub kind: EventKind,
    /// The instance it is about (for `+switch-master`, the new master).
    pub instance: Instance,
    /// The message as the sentinel wrote it.
    pub text: String,
}

/// The events lockstorm records; others (`+sentinel`, `+new-epoch`, hello messages,
/// ...) are dropped.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// `+sdown`: this sentinel gets no valid reply from the instance.
    Sdown,
    /// `-sdown`: it does again.
    SdownEnd,
    /// `+odown`: a quorum of sentinels agree the master is down.
    Odown,
    /// `-odown`.
    OdownEnd,
    /// `+try-failover`: this sentinel starts a failover (an election first).
    TryFailover,
    /// `+elected-leader`: it won the election and runs the failover.
    ElectedLeader,
    /// `+failover-state-<state>`: the failover's next step (`select-slave`,
    /// `send-slaveof-noone`, `wait-promotion`, `reconf-slaves`, ...).
    FailoverState(String),
    /// `-failover-abort-<why>`: the failover stopped (`no-good-slave`, ...).
    FailoverAbort(String),
    /// `+switch-master`: the master moved from this instance to [`SentinelEvent::instance`].
    SwitchMaster { from: Instance },
    /// `+failover-end`: every replica follows the new master (or the timeout passed).
    FailoverEnd,
    /// `+convert-to-slave`: a returning master is made a replica of the new one.
    ConvertToSlave,
    /// `+slave`: a replica was found and attached.
    Slave,
    /// A cluster node's own state (`CLUSTER INFO`'s `cluster_state`) turned `fail`
    /// (`ok: false`: it refuses every command, as a master cut from the majority does
    /// after the node timeout) or back to `ok`. Clusters only; no sentinel says it.
    ClusterState { ok: bool },
}

/// Which kind of process an event is about, as the sentinel sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Master,
    Replica,
    Sentinel,
}

/// The instance an event is about: its role, its announced address and which member of
/// the deployment that is (`None` for an address that is no member's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Instance {
    pub role: Role,
    pub addr: SocketAddr,
    pub member: Option<Member>,
}

/// Parses one message on `channel`; `None` for what lockstorm does not record or
/// cannot read. Members are looked up with `member_at`.
pub fn parse(
    channel: &str,
    text: &str,
    member_at: impl Fn(SocketAddr) -> Option<Member>,
) -> Option<(EventKind, Instance)> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let at = |ip: &str, port: &str| -> Option<SocketAddr> { format!("{ip}:{port}").parse().ok() };
    let instance = |role, addr| Instance {
        role,
        addr,
        member: member_at(addr),
    };
    if channel == "+switch-master" {
        let [_, old_ip, old_port, new_ip, new_port] = words[..] else {
            return None;
        };
        let from = instance(Role::Master, at(old_ip, old_port)?);
        return Some((
            EventKind::SwitchMaster { from },
            instance(Role::Master, at(new_ip, new_port)?),
        ));
    }
    let kind = match channel {
        "+sdown" => EventKind::Sdown,
        "-sdown" => EventKind::SdownEnd,
        "+odown" => EventKind::Odown,
        "-odown" => EventKind::OdownEnd,
        "+try-failover" => EventKind::TryFailover,
        "+elected-leader" => EventKind::ElectedLeader,
        "+failover-end" => EventKind::FailoverEnd,
        "+convert-to-slave" => EventKind::ConvertToSlave,
        "+slave" => EventKind::Slave,
        other => {
            if let Some(state) = other.strip_prefix("+failover-state-") {
                EventKind::FailoverState(state.to_string())
            } else if let Some(why) = other.strip_prefix("-failover-abort-") {
                EventKind::FailoverAbort(why.to_string())
            } else {
                return None;
            }
        }
    };
    let role = match *words.first()? {
        "master" => Role::Master,
        "slave" => Role::Replica,
        "sentinel" => Role::Sentinel,
        _ => return None,
    };
    // "<type> <name> <ip> <port> ...": a replica's and a sentinel's name is
    // "ip:port" (or a run id), the address is the two words after it.
    let addr = at(words.get(2)?, words.get(3)?)?;
    Some((kind, instance(role, addr)))
}

/// Subscribes to every channel of the sentinel at `direct` and sends each event it
/// knows to `events`, reconnecting after the sentinel restarts, until the task is
/// aborted. `subscribed` is told once the first subscription is in place.
pub async fn follow(
    sentinel: Member,
    direct: SocketAddr,
    origin: tokio::time::Instant,
    member_at: impl Fn(SocketAddr) -> Option<Member>,
    events: mpsc::UnboundedSender<SentinelEvent>,
    subscribed: oneshot::Sender<()>,
) {
    let mut subscribed = Some(subscribed);
    loop {
        if let Ok(mut pubsub) = subscribe(direct).await {
            if let Some(tx) = subscribed.take() {
                let _ = tx.send(());
            }
            let mut messages = pubsub.on_message();
            while let Some(msg) = messages.next().await {
                let at = origin.elapsed();
                let channel = msg.get_channel_name().to_string();
                let Ok(text) = msg.get_payload::<String>() else {
                    continue;
                };
                if let Some((kind, instance)) = parse(&channel, &text, &member_at) {
                    let event = SentinelEvent {
                        sentinel,
                        at,
                        kind,
                        instance,
                        text,
                    };
                    if events.send(event).is_err() {
                        return;
                    }
                }
            }
        }
        // The sentinel is down (killed, or not started yet): try again shortly.
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn subscribe(direct: SocketAddr) -> Result<redis::aio::PubSub, String> {
    let client = redis::Client::open(format!("redis://{direct}/")).map_err(|e| e.to_string())?;
    let mut pubsub = tokio::time::timeout(Duration::from_secs(2), client.get_async_pubsub())
        .await
        .map_err(|_| "no answer in 2 s".to_string())?
        .map_err(|e| e.to_string())?;
    tokio::time::timeout(Duration::from_secs(2), pubsub.psubscribe("*"))
        .await
        .map_err(|_| "no answer in 2 s".to_string())?
        .map_err(|e| e.to_string())?;
    Ok(pubsub)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn known(a: SocketAddr) -> Option<Member> {
        match a.port() {
            6000 => Some(Member::Data(0)),
            6001 => Some(Member::Data(1)),
            _ => None,
        }
    }

    #[test]
    fn messages_name_their_instance() {
        let (kind, i) = parse("+odown", "master m 127.77.0.2 6000 #quorum 2/2", known).unwrap();
        assert_eq!(kind, EventKind::Odown);
        assert_eq!(
            i,
            Instance {
                role: Role::Master,
                addr: addr("127.77.0.2:6000"),
                member: Some(Member::Data(0))
            }
        );
        let (kind, i) = parse(
            "+convert-to-slave",
            "slave 127.77.0.2:6000 127.77.0.2 6000 @ m 127.77.0.3 6001",
            known,
        )
        .unwrap();
        assert_eq!(kind, EventKind::ConvertToSlave);
        assert_eq!((i.role, i.member), (Role::Replica, Some(Member::Data(0))));
        let (kind, _) = parse("+failover-state-select-slave", "master m 127.77.0.2 6000", known).unwrap();
        assert_eq!(kind, EventKind::FailoverState("select-slave".into()));
        let (kind, _) = parse("-failover-abort-no-good-slave", "master m 127.77.0.2 6000", known).unwrap();
        assert_eq!(kind, EventKind::FailoverAbort("no-good-slave".into()));
    }

    #[test]
    fn a_switch_names_the_old_and_the_new_master() {
        let (kind, new) = parse("+switch-master", "m 127.77.0.2 6000 127.77.0.3 6001", known).unwrap();
        assert_eq!(new.member, Some(Member::Data(1)));
        let EventKind::SwitchMaster { from } = kind else {
            panic!("{kind:?}")
        };
        assert_eq!(from.member, Some(Member::Data(0)));
    }

    #[test]
    fn what_is_not_recorded_is_dropped() {
        assert_eq!(parse("+new-epoch", "3", known), None);
        assert_eq!(
            parse(
                "__sentinel__:hello",
                "127.0.0.1,26379,abc,1,m,127.0.0.1,6000,1",
                known
            ),
            None
        );
        assert_eq!(parse("+sdown", "", known), None);
    }
}
