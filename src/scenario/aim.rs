//! Aimed faults as a scenario file writes them: a `when` (the trigger), an optional
//! `after`, and targets relative to the triggering hold (`node = "holder"`), parsed
//! strictly and resolved into the [`Aim`] of [`crate::fault::aim`]. Errors name the key
//! (`faults[2].when`, `faults[2].node`, `nemesis.crash.node`).
//!
//! ```toml
//! when = "acquired"                      # or "acquiring", "contended"
//! when = { acquired = { client = 1 } }   # client 1's first success
//! when = { acquired = { nth = 3 } }      # the 3rd success of the run
//! when = { acquiring = { replied = 2 } } # mid-acquisition: when its 2nd node answers
//! when = { acquiring = { uncontended = true } } # an acquisition begun with the lock free
//! after = "100ms"                        # start this long after the trigger (default 0)
//! node = "holder"                        # or "majority", "shared", "pending" (the nodes
//!                                        # yet to answer, with `acquiring`); `nodes` for a set
//! client = "holder"                      # or "others"; `clients` for a set
//! ```

use super::{invalid, Dur, Invalid};
use crate::fault::{Aim, ClientAim, NodeAim, On, Trigger};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use std::fmt;

/// A node or client target: one index, a list of them, or a name relative to the hold
/// that triggers an aimed fault.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum RawTarget {
    Index(i64),
    List(Vec<i64>),
    Named(String),
}

impl<'de> Deserialize<'de> for RawTarget {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawTarget;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an index, a list of indices, or a relative target such as \"holder\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawTarget, E> {
                Ok(RawTarget::Index(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawTarget, E> {
                Ok(RawTarget::Index(v.min(i64::MAX as u64) as i64))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawTarget, E> {
                Ok(RawTarget::Named(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawTarget, A::Error> {
                let mut out = Vec::new();
                while let Some(i) = seq.next_element::<i64>()? {
                    out.push(i);
                }
                Ok(RawTarget::List(out))
            }
        }
        d.deserialize_any(V)
    }
}

/// `when`: a trigger's name, or a one-key table naming it with its options.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RawWhen {
    on: String,
    args: RawWhenArgs,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWhenArgs {
    client: Option<i64>,
    nth: Option<i64>,
    replied: Option<i64>,
    uncontended: Option<bool>,
}

impl<'de> Deserialize<'de> for RawWhen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawWhen;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("\"acquiring\", \"acquired\" or \"contended\", or a table such as { acquired = { client = 1 } }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RawWhen, E> {
                Ok(RawWhen {
                    on: v.to_string(),
                    args: RawWhenArgs::default(),
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawWhen, A::Error> {
                let Some(on) = map.next_key::<String>()? else {
                    return Err(de::Error::custom("`when` is an empty table: name a trigger"));
                };
                let args = map.next_value::<RawWhenArgs>()?;
                if map.next_key::<String>()?.is_some() {
                    return Err(de::Error::custom("`when` names one trigger"));
                }
                Ok(RawWhen { on, args })
            }
        }
        d.deserialize_any(V)
    }
}

/// The parts of a `[[faults]]` entry or a nemesis kind that aim it.
#[derive(Debug, Default)]
pub(super) struct Aiming {
    pub nodes: Option<NodeAim>,
    pub clients: Option<ClientAim>,
}

impl Aiming {
    /// A node target: one index, or (aimed) a relative name; `key` names it in errors
    /// (`faults[2].node`). An aimed one returns the placeholder 0.
    pub fn node(&mut self, t: &RawTarget, count: usize, key: &str) -> Result<usize, Invalid> {
        match t {
            RawTarget::Index(i) => index(*i, count, key, "node"),
            RawTarget::Named(name) => {
                self.nodes = Some(node_aim(name, key)?);
                Ok(0)
            }
            RawTarget::List(_) => Err(invalid(
                key,
                format!("{key}: give one node, or \"holder\", \"majority\" or \"shared\""),
            )),
        }
    }

    /// A set of nodes: a list of indices (`None`: all), or a relative name.
    pub fn node_set(
        &mut self,
        t: Option<&RawTarget>,
        count: usize,
        key: &str,
    ) -> Result<Vec<usize>, Invalid> {
        match t {
            None => Ok((0..count).collect()),
            Some(RawTarget::List(ids)) => list(ids, count, key, "node"),
            Some(RawTarget::Named(name)) => {
                self.nodes = Some(node_aim(name, key)?);
                Ok(Vec::new())
            }
            Some(RawTarget::Index(_)) => Err(invalid(
                key,
                format!("{key}: give a list of nodes, or \"holder\", \"majority\" or \"shared\""),
            )),
        }
    }

    /// A client target: one index, or (aimed) "holder" / "others".
    pub fn client(&mut self, t: &RawTarget, count: usize, key: &str) -> Result<usize, Invalid> {
        match t {
            RawTarget::Index(i) => index(*i, count, key, "client"),
            RawTarget::Named(name) => {
                self.clients = Some(client_aim(name, key)?);
                Ok(0)
            }
            RawTarget::List(_) => Err(invalid(
                key,
                format!("{key}: give one client, or \"holder\" or \"others\""),
            )),
        }
    }

    /// A set of clients: a list of indices (`None`: all), or a relative name.
    pub fn client_set(
        &mut self,
        t: Option<&RawTarget>,
        count: usize,
        key: &str,
    ) -> Result<Vec<usize>, Invalid> {
        match t {
            None => Ok((0..count).collect()),
            Some(RawTarget::List(ids)) => list(ids, count, key, "client"),
            Some(RawTarget::Named(name)) => {
                self.clients = Some(client_aim(name, key)?);
                Ok(Vec::new())
            }
            Some(RawTarget::Index(_)) => Err(invalid(
                key,
                format!("{key}: give a list of clients, or \"holder\" or \"others\""),
            )),
        }
    }

    /// The aim of an entry with `when` and `after` (`what` is `faults[2]` or
    /// `nemesis.crash`): `None` without `when`, an error if it has relative targets or
    /// an `after` but no `when`.
    pub fn resolve(
        self,
        when: Option<&RawWhen>,
        after: Option<Dur>,
        clients: usize,
        what: &str,
    ) -> Result<Option<Aim>, Invalid> {
        let Some(when) = when else {
            if let Some(a) = self.nodes {
                return Err(invalid(
                    format!("{what}.node"),
                    format!(
                        "{what}.node = \"{}\" is relative to a hold: it needs a `when`",
                        a.name()
                    ),
                ));
            }
            if let Some(a) = self.clients {
                return Err(invalid(
                    format!("{what}.client"),
                    format!(
                        "{what}.client = \"{}\" is relative to a hold: it needs a `when`",
                        a.name()
                    ),
                ));
            }
            if after.is_some() {
                return Err(invalid(
                    format!("{what}.after"),
                    format!("{what}.after is a delay after a `when`, and there is none"),
                ));
            }
            return Ok(None);
        };
        let key = format!("{what}.when");
        let on = match when.on.as_str() {
            "acquiring" => On::Acquiring,
            "acquired" => On::Acquired,
            "contended" => On::Contended,
            other => {
                return Err(invalid(
                    &key,
                    format!("{key} = \"{other}\": a trigger is \"acquiring\", \"acquired\" or \"contended\""),
                ))
            }
        };
        let client = match when.args.client {
            Some(c) => Some(index(c, clients, &format!("{key}.client"), "client")?),
            None => None,
        };
        let nth = match when.args.nth {
            None => 1,
            Some(n) if (1..=u32::MAX as i64).contains(&n) => n as u32,
            Some(n) => {
                return Err(invalid(
                    format!("{key}.nth"),
                    format!("{key}.nth = {n}: the count starts at 1 (the first match)"),
                ))
            }
        };
        let replied = match when.args.replied {
            None => None,
            Some(_) if on != On::Acquiring => {
                return Err(invalid(
                    format!("{key}.replied"),
                    format!(
                    "{key}.replied counts the nodes that answered an acquisition: it goes with \"acquiring\""
                ),
                ))
            }
            Some(k) if (0..=crate::limits::MAX_NODES as i64).contains(&k) => Some(k as u32),
            Some(k) => {
                return Err(invalid(
                    format!("{key}.replied"),
                    format!(
                        "{key}.replied = {k}: a number of nodes, 0 to {}",
                        crate::limits::MAX_NODES
                    ),
                ))
            }
        };
        let uncontended = when.args.uncontended.unwrap_or(false);
        if uncontended && on != On::Acquiring {
            return Err(invalid(
                format!("{key}.uncontended"),
                format!("{key}.uncontended picks acquisitions that begin with the lock free: it goes with \"acquiring\""),
            ));
        }
        if self.nodes == Some(NodeAim::Pending) && on != On::Acquiring {
            return Err(invalid(
                format!("{what}.node"),
                format!("{what}.node = \"pending\" is the nodes yet to answer an acquisition: it needs `when = \"acquiring\"`"),
            ));
        }
        Ok(Some(Aim {
            when: Trigger {
                on,
                client,
                nth,
                replied,
                uncontended,
            },
            after_us: after.map_or(0, Dur::us),
            nodes: self.nodes,
            clients: self.clients,
        }))
    }
}

fn node_aim(name: &str, key: &str) -> Result<NodeAim, Invalid> {
    match name {
        "holder" => Ok(NodeAim::Holder),
        "majority" => Ok(NodeAim::Majority),
        "shared" => Ok(NodeAim::Shared),
        "pending" => Ok(NodeAim::Pending),
        _ => Err(invalid(
            key,
            format!("{key} = \"{name}\": a relative node target is \"holder\", \"majority\", \"shared\" or \"pending\""),
        )),
    }
}

fn client_aim(name: &str, key: &str) -> Result<ClientAim, Invalid> {
    match name {
        "holder" => Ok(ClientAim::Holder),
        "others" => Ok(ClientAim::Others),
        _ => Err(invalid(
            key,
            format!("{key} = \"{name}\": a relative client target is \"holder\" or \"others\""),
        )),
    }
}

fn index(id: i64, count: usize, key: &str, what: &str) -> Result<usize, Invalid> {
    if id < 0 || id as usize >= count {
        return Err(invalid(
            key,
            format!(
                "{key}: {what} {id} does not exist (there are {count}, numbered 0 to {})",
                count.saturating_sub(1)
            ),
        ));
    }
    Ok(id as usize)
}

fn list(ids: &[i64], count: usize, key: &str, what: &str) -> Result<Vec<usize>, Invalid> {
    let mut out = ids
        .iter()
        .map(|&id| index(id, count, key, what))
        .collect::<Result<Vec<_>, _>>()?;
    out.sort_unstable();
    out.dedup();
    if out.is_empty() {
        return Err(invalid(key, format!("{key}: {what}s is empty")));
    }
    Ok(out)
}

/// How `to_toml` writes an aim's trigger back.
pub(super) fn write_when(t: &Trigger) -> String {
    let mut args = Vec::new();
    if let Some(c) = t.client {
        args.push(format!("client = {c}"));
    }
    if t.nth != 1 {
        args.push(format!("nth = {}", t.nth));
    }
    if let Some(k) = t.replied {
        args.push(format!("replied = {k}"));
    }
    if t.uncontended {
        args.push("uncontended = true".into());
    }
    if args.is_empty() {
        format!("\"{}\"", t.on.name())
    } else {
        format!("{{ {} = {{ {} }} }}", t.on.name(), args.join(", "))
    }
}
