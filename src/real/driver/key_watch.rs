//! The `node` lines the real nodes' own news give ([`crate::real::keyspace`]): `expired`
//! from the nodes' key events, `lost` after a crash and `replicated`, `unreplicated` and
//! `promoted` after a failover from the snapshots taken before the kill and when the node
//! was back; and, for worker clients (whose commands lockstorm does not read), their
//! keys' `set` and `deleted` from the key events. Lines the built-in clients' replies
//! give are in `node_lines.rs`.
//!
//! Nothing here is guessed. A line's `token` is the key's value as the node showed it:
//! read by the watcher right after the `set` (and only if nothing removed the key
//! between), or in a snapshot; a key whose value lockstorm did not read gets a line
//! without a token. A key the snapshot before the kill had is `lost` only if the node
//! came back without it while the node's own clock (its `TIME` in the two snapshots)
//! says it had not expired yet; no client reached the node in between.

use crate::command::NodeId;
use crate::history::{NodeAction, NodeEvent};
use crate::real::keyspace::{Back, News, Note, Snapshot, Value};
use std::collections::BTreeMap;

/// The value of each key the nodes' news showed present, per node.
#[derive(Default)]
pub(crate) struct KeyWatch {
    /// The clients are workers: their keys' sets and deletes come from the key events.
    workers: bool,
    /// (node, member of a Sentinel deployment, key) → the key's value, `None` if
    /// lockstorm did not read it.
    present: BTreeMap<(NodeId, Option<String>, String), Option<String>>,
}

impl KeyWatch {
    pub(crate) fn new(workers: bool) -> Self {
        KeyWatch {
            workers,
            present: BTreeMap::new(),
        }
    }

    /// The lines `news`, arrived at `t_us`, gives, in order.
    pub(crate) fn news(&mut self, t_us: u64, news: News, out: &mut Vec<NodeEvent>) {
        match news {
            News::Key {
                node,
                member,
                key,
                note,
                value,
            } => self.key(t_us, (node, member), key, note, value, out),
            News::Back(back) => self.back(t_us, &back, out),
            News::Present { node, snapshot } => {
                for (key, token, expire_at) in alive(&snapshot, snapshot.time_us) {
                    if let Some(mut l) = line(t_us, node, key, NodeAction::Present, Some(token.clone())) {
                        l.expire_at_node_us = expire_at;
                        // What was left of its ttl (rounded up): a key known only from
                        // this line lives that long, not for ever.
                        l.ttl_ms = expire_at.map(|x| (x - snapshot.time_us).div_ceil(1_000));
                        out.push(l);
                    }
                }
            }
        }
    }

    /// A key event: the value a set wrote is remembered; a delete or an expiry takes
    /// it, and its line names it. Built-in clients' sets and deletes have their lines
    /// from the replies; only the expiries are written here for them.
    fn key(
        &mut self,
        t_us: u64,
        (node, member): (NodeId, Option<String>),
        key: String,
        note: Note,
        value: Option<String>,
        out: &mut Vec<NodeEvent>,
    ) {
        let at = (node, member.clone(), key.clone());
        let token = match note {
            Note::Set => {
                self.present.insert(at, value.clone());
                value
            }
            Note::Deleted | Note::Expired => self.present.remove(&at).flatten(),
        };
        if note == Note::Expired || self.workers {
            out.extend(line(t_us, node, &key, action_of(note), token).map(|mut l| {
                l.member = member;
                l
            }));
        }
    }

    fn back(&mut self, t_us: u64, back: &Back, out: &mut Vec<NodeEvent>) {
        let node = back.node;
        self.present.retain(|(n, _, _), _| *n != node);
        let Some(after) = &back.after else { return };
        for e in &after.entries {
            if let Value::Str(v) = &e.value {
                self.present.insert((node, None, e.key.clone()), Some(v.clone()));
            }
        }
        let Some(before) = &back.before else { return };
        let lag_us = back.failover_lag.map(|d| d.as_micros() as u64);
        for (key, token, expire_at) in alive(before, after.time_us) {
            let kept = after.get(key).is_some_and(|e| match &e.value {
                Value::Str(v) => v == token,
                Value::Members(m) => m.iter().any(|m| m == token),
            });
            let action = match (kept, lag_us) {
                (true, None) => continue,
                (false, None) => NodeAction::Lost,
                (true, Some(_)) => NodeAction::Replicated,
                (false, Some(_)) => NodeAction::Unreplicated,
            };
            if let Some(mut l) = line(t_us, node, key, action, Some(token.clone())) {
                l.expire_at_node_us = expire_at;
                // Zero: a Sentinel failover, whose replica's lag is not measured.
                l.lag_us = lag_us.filter(|&l| action == NodeAction::Unreplicated && l > 0);
                out.push(l);
            }
        }
        if lag_us.is_some() {
            for (key, token, expire_at) in alive(after, after.time_us) {
                if let Some(mut l) = line(t_us, node, key, NodeAction::Promoted, Some(token.clone())) {
                    l.expire_at_node_us = expire_at;
                    out.push(l);
                }
            }
        }
    }
}

/// Each (key, token, expiry on the node's clock) of `s` that had not expired by the
/// node-clock time `at_us`: a string's value, each member of a sorted set.
fn alive(s: &Snapshot, at_us: u64) -> Vec<(&str, &String, Option<u64>)> {
    let mut out = Vec::new();
    for e in &s.entries {
        let expire_at = s.expire_at_us(e);
        if expire_at.is_some_and(|x| x <= at_us) {
            continue;
        }
        match &e.value {
            Value::Str(v) => out.push((e.key.as_str(), v, expire_at)),
            Value::Members(m) => out.extend(m.iter().map(|m| (e.key.as_str(), m, expire_at))),
        }
    }
    out
}

fn action_of(note: Note) -> NodeAction {
    match note {
        Note::Set => NodeAction::Set,
        Note::Deleted => NodeAction::Deleted,
        Note::Expired => NodeAction::Expired,
    }
}

/// A line about `key`, if it is a lock's key.
fn line(t_us: u64, node: NodeId, key: &str, action: NodeAction, token: Option<String>) -> Option<NodeEvent> {
    Some(NodeEvent {
        t_us,
        node,
        lock: lock_of(key)?.into(),
        key: key.into(),
        action,
        client: None,
        token: token.map(Into::into),
        ttl_ms: None,
        checked: None,
        expired_at_us: None,
        expire_at_node_us: None,
        lag_us: None,
        member: None,
    })
}

/// The lock a key belongs to: `L3`, `w_{L3}` and `r_{L3}` are lock L3's; a worker
/// library's own key is the lock's if it holds the lock's name as a word of its own,
/// between separators or the key's ends (`redlock:L3`, `lock_L3`, `{L3}:time`: a
/// semaphore's clock key is part of its lock's state too). lockstorm's other keys (the
/// fencing counter, the fair queue) are none.
fn lock_of(key: &str) -> Option<String> {
    // lockstorm's own keys that are no lock's state: the fencing counter, the fair queue.
    if key.starts_with("fence_{") || key.starts_with("fair_{") {
        return None;
    }
    let b = key.as_bytes();
    let apart = |i: usize| b.get(i).is_none_or(|c| !c.is_ascii_alphanumeric());
    key.match_indices('L').find_map(|(i, _)| {
        let digits = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        let end = i + 1 + digits;
        (digits > 0 && (i == 0 || apart(i - 1)) && apart(end)).then(|| key[i..end].to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::real::keyspace::Entry;
    use std::time::Duration;

    fn key(node: usize, key: &str, note: Note, value: Option<&str>) -> News {
        News::Key {
            node,
            member: None,
            key: key.into(),
            note,
            value: value.map(str::to_string),
        }
    }

    fn snap(time_us: u64, entries: &[(&str, &str, i64)]) -> Snapshot {
        Snapshot {
            time_us,
            entries: entries
                .iter()
                .map(|(k, v, pttl_ms)| Entry {
                    key: k.to_string(),
                    value: Value::Str(v.to_string()),
                    pttl_ms: *pttl_ms,
                })
                .collect(),
        }
    }

    fn run(w: &mut KeyWatch, news: Vec<News>) -> Vec<(NodeAction, String, Option<String>)> {
        let mut out = Vec::new();
        for n in news {
            w.news(7, n, &mut out);
        }
        out.into_iter()
            .map(|l| (l.action, l.key.to_string(), l.token.map(|t| t.to_string())))
            .collect()
    }

    #[test]
    fn a_lock_key_is_told_from_the_others() {
        assert_eq!(lock_of("L3").as_deref(), Some("L3"));
        assert_eq!(lock_of("w_{L12}").as_deref(), Some("L12"));
        assert_eq!(lock_of("r_{L0}").as_deref(), Some("L0"));
        assert_eq!(lock_of("redlock:L4").as_deref(), Some("L4"));
        // Libraries' own names: a prefix with an underscore, a hash tag with a suffix.
        assert_eq!(lock_of("lock_L0").as_deref(), Some("L0"));
        assert_eq!(lock_of("{L7}:time").as_deref(), Some("L7"));
        assert_eq!(lock_of("laravel_cache:L10").as_deref(), Some("L10"));
        assert_eq!(lock_of("L3x"), None);
        assert_eq!(lock_of("CL3"), None);
        assert_eq!(lock_of("fence_{L0}"), None);
        assert_eq!(lock_of("fair_{L0}"), None);
        assert_eq!(lock_of("XL3"), None);
        assert_eq!(lock_of("L"), None);
    }

    /// Two masters of one Sentinel deployment (a split brain) each hold the key: each
    /// member's lines name it, and an expiry on one carries that member's value, not the
    /// other's.
    #[test]
    fn each_member_of_a_deployment_keeps_its_own_value_and_its_lines_name_it() {
        let mut w = KeyWatch::new(true);
        let on = |member: &str, note, value: Option<&str>| News::Key {
            node: 0,
            member: Some(member.into()),
            key: "L0".into(),
            note,
            value: value.map(str::to_string),
        };
        let mut out = Vec::new();
        for n in [
            on("redis0", Note::Set, Some("aa")),
            on("redis1", Note::Set, Some("bb")),
            on("redis0", Note::Expired, None),
            on("redis1", Note::Deleted, None),
        ] {
            w.news(7, n, &mut out);
        }
        let lines: Vec<_> = out
            .into_iter()
            .map(|l| (l.action, l.member, l.token.map(|t| t.to_string())))
            .collect();
        let (r0, r1) = (Some("redis0".to_string()), Some("redis1".to_string()));
        assert_eq!(
            lines,
            vec![
                (NodeAction::Set, r0.clone(), Some("aa".into())),
                (NodeAction::Set, r1.clone(), Some("bb".into())),
                (NodeAction::Expired, r0, Some("aa".into())),
                (NodeAction::Deleted, r1, Some("bb".into())),
            ]
        );
    }

    #[test]
    fn an_expiry_carries_the_value_the_set_wrote_if_it_was_read() {
        let mut w = KeyWatch::new(false);
        let lines = run(
            &mut w,
            vec![
                key(0, "L0", Note::Set, Some("aa")),
                key(0, "L0", Note::Expired, None),
                key(0, "L0", Note::Set, None),
                key(0, "L0", Note::Expired, None),
                key(1, "L0", Note::Set, Some("bb")),
                key(1, "L0", Note::Deleted, None),
            ],
        );
        assert_eq!(
            lines,
            vec![
                (NodeAction::Expired, "L0".into(), Some("aa".into())),
                (NodeAction::Expired, "L0".into(), None),
            ],
            "the built-in clients' sets and deletes come from their replies"
        );
        let mut w = KeyWatch::new(true);
        let lines = run(
            &mut w,
            vec![
                key(1, "lock:L0", Note::Set, Some("bb")),
                key(1, "lock:L0", Note::Deleted, None),
            ],
        );
        assert_eq!(
            lines,
            vec![
                (NodeAction::Set, "lock:L0".into(), Some("bb".into())),
                (NodeAction::Deleted, "lock:L0".into(), Some("bb".into())),
            ]
        );
    }

    #[test]
    fn a_restart_loses_the_keys_it_came_back_without_that_had_not_expired() {
        let mut w = KeyWatch::new(false);
        let back = Back {
            node: 2,
            // At 1 s on the node's clock: L0 lives 10 s more, L1 0.5 s, L2 forever.
            before: Some(snap(
                1_000_000,
                &[("L0", "aa", 10_000), ("L1", "bb", 500), ("L2", "cc", -1)],
            )),
            // Back at 2 s: L1 had expired by then; L2 was kept.
            after: Some(snap(2_000_000, &[("L2", "cc", -1)])),
            failover_lag: None,
        };
        let mut out = Vec::new();
        w.news(9, News::Back(Box::new(back)), &mut out);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(
            (out[0].action, out[0].node, out[0].t_us),
            (NodeAction::Lost, 2, 9)
        );
        assert_eq!(out[0].token.as_deref(), Some("aa"));
        assert_eq!(out[0].expire_at_node_us, Some(11_000_000));
        // The kept key's value is known again: its expiry names its token.
        assert_eq!(
            run(&mut w, vec![key(2, "L2", Note::Expired, None)]),
            vec![(NodeAction::Expired, "L2".into(), Some("cc".into()))]
        );
    }

    #[test]
    fn nothing_is_lost_when_a_snapshot_is_missing() {
        let mut w = KeyWatch::new(false);
        let back = Back {
            node: 0,
            before: None,
            after: Some(snap(2_000_000, &[])),
            failover_lag: None,
        };
        assert!(run(&mut w, vec![News::Back(Box::new(back))]).is_empty());
        let back = Back {
            node: 0,
            before: Some(snap(1_000_000, &[("L0", "aa", -1)])),
            after: None,
            failover_lag: None,
        };
        assert!(run(&mut w, vec![News::Back(Box::new(back))]).is_empty());
    }

    #[test]
    fn a_failover_says_which_keys_reached_the_replica_and_what_it_serves() {
        let mut w = KeyWatch::new(false);
        let back = Back {
            node: 1,
            before: Some(snap(1_000_000, &[("L0", "aa", 10_000), ("L1", "bb", 10_000)])),
            after: Some(snap(1_500_000, &[("L0", "aa", 9_500)])),
            failover_lag: Some(Duration::from_millis(300)),
        };
        let mut out = Vec::new();
        w.news(9, News::Back(Box::new(back)), &mut out);
        let got: Vec<_> = out
            .iter()
            .map(|l| (l.action, l.key.as_str(), l.token.as_deref(), l.lag_us))
            .collect();
        assert_eq!(
            got,
            vec![
                (NodeAction::Replicated, "L0", Some("aa"), None),
                (NodeAction::Unreplicated, "L1", Some("bb"), Some(300_000)),
                (NodeAction::Promoted, "L0", Some("aa"), None),
            ]
        );
    }
}
