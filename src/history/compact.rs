//! The compact values of a history event: what its lock, key, token and nodes are
//! stored as, in memory, from the driver that makes an event to the checker that judges
//! it.
//!
//! A long history has millions of events but only a few lock names, tokens of 16 hex
//! digits and at most [`MAX_NODES`] nodes. Stored as strings and vectors, every event
//! cost up to four heap allocations; these types keep the same meaning without them,
//! and serialize, deserialize and display exactly as the original string or list did,
//! so a history's JSONL and summary.json do not change:
//!
//! - [`LockName`]: a lock's name (or one of its Redis keys), shared by every event that
//!   names it: a driver makes each once ([`Names`]), and a checker numbers each name for
//!   records that keep only a [`LockId`] ([`Locks`]);
//! - [`Token`]: a lock token, kept inline when short (the algorithms' 16 hex digits are
//!   written straight from their `u64`), boxed otherwise;
//! - [`NodeSet`]: the nodes that granted an acquisition, as a bit mask.

use crate::command::{Key, KeyKind};
use crate::limits::MAX_NODES;
use serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// For a type that reads as a `str` (its `as_str`): it orders and hashes as that string
/// would (given its own `Ord`), compares equal to it, and displays, debugs and
/// serializes as it, so a history and summary.json read as they did with strings.
macro_rules! reads_as_str {
    ($t:ty) => {
        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
                Some(self.cmp(other))
            }
        }

        impl std::hash::Hash for $t {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                self.as_str().hash(state)
            }
        }

        impl PartialEq<str> for $t {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $t {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl PartialEq<String> for $t {
            fn eq(&self, other: &String) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<$t> for String {
            fn eq(&self, other: &$t) -> bool {
                self == other.as_str()
            }
        }

        impl PartialEq<$t> for str {
            fn eq(&self, other: &$t) -> bool {
                self == other.as_str()
            }
        }

        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl fmt::Debug for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Debug::fmt(self.as_str(), f)
            }
        }

        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

reads_as_str!(LockName);
reads_as_str!(Token);

/// A lock's name. Clones share one allocation (a thin pointer: a hold is among the
/// most numerous records); it reads as a `str`.
#[derive(Clone, Eq)]
pub struct LockName(Arc<String>);

impl LockName {
    pub fn new(name: &str) -> Self {
        LockName(Arc::new(name.to_string()))
    }

    /// `name`, shared with the names this thread read lately: a history names a few
    /// locks and keys millions of times, and reading one need not allocate it again.
    /// Only which allocation a name uses depends on what came before, never its value.
    pub fn read(name: &str) -> Self {
        thread_local! {
            static RECENT: std::cell::RefCell<Vec<LockName>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        RECENT.with_borrow_mut(|recent| {
            if let Some(known) = recent.iter().find(|n| n.as_str() == name) {
                return known.clone();
            }
            let new = LockName::new(name);
            if recent.len() == RECENT_NAMES {
                recent.remove(0);
            }
            recent.push(new.clone());
            new
        })
    }

    /// Whether both are one allocation (one driver's or checker's name for it).
    pub fn same(&self, other: &LockName) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl Deref for LockName {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for LockName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl PartialEq for LockName {
    fn eq(&self, other: &Self) -> bool {
        // Names from one checker are interned: equal names are usually one allocation.
        Arc::ptr_eq(&self.0, &other.0) || self.0 == other.0
    }
}

impl Ord for LockName {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return std::cmp::Ordering::Equal;
        }
        self.as_str().cmp(other.as_str())
    }
}

/// How many names [`LockName::read`] remembers per thread: more than the locks and keys
/// of any shipped scenario.
const RECENT_NAMES: usize = 32;

impl<'de> Deserialize<'de> for LockName {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Text(LockName::read))
    }
}

impl From<&str> for LockName {
    fn from(name: &str) -> Self {
        LockName::new(name)
    }
}

impl From<String> for LockName {
    fn from(name: String) -> Self {
        LockName(Arc::new(name))
    }
}

/// Reads a JSON string as `String` does (the same errors), into what `.0` makes of it.
/// (JSON has no byte strings, so it takes only `str`s.)
struct Text<F>(F);

impl<T, F: FnOnce(&str) -> T> Visitor<'_> for Text<F> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        Ok((self.0)(v))
    }
}

/// The lock and key names a driver writes into its events, each made once and shared
/// after (the simulator names a lock in nearly every event, and a key in every `node`
/// line): `L{n}`, and the keys `w_{L{n}}`, `r_{L{n}}` and the like.
#[derive(Debug, Default)]
pub struct Names {
    by_lock: Vec<[Option<LockName>; KEY_KINDS]>,
}

/// How many kinds of key a lock has ([`KeyKind`]).
const KEY_KINDS: usize = KeyKind::Fence as usize + 1;

impl Names {
    /// The name of `lock`, as operation lines give it.
    pub fn lock(&mut self, lock: crate::command::LockId) -> LockName {
        self.key(Key::plain(lock))
    }

    /// The name of `key`, as `node` lines give it (a plain key is named as its lock).
    pub fn key(&mut self, key: Key) -> LockName {
        let i = key.lock.0 as usize;
        if self.by_lock.len() <= i {
            self.by_lock.resize(i + 1, Default::default());
        }
        self.by_lock[i][key.kind as usize]
            .get_or_insert_with(|| LockName::from(key.to_string()))
            .clone()
    }
}

/// A lock's number in its checker's [`Locks`], for records that keep no name.
pub type LockId = u32;

/// The lock names of one history, each stored once, numbered in order of appearance.
#[derive(Default)]
pub struct Locks {
    names: Vec<LockName>,
    ids: BTreeMap<LockName, LockId>,
}

impl Locks {
    /// The number of `name`, adding it if new.
    pub fn intern(&mut self, name: &str) -> LockId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = LockId::try_from(self.names.len()).expect("fewer than 2^32 lock names");
        let name = LockName::new(name);
        self.names.push(name.clone());
        self.ids.insert(name, id);
        id
    }

    /// The number of `name`, if it has appeared.
    pub fn id(&self, name: &str) -> Option<LockId> {
        self.ids.get(name).copied()
    }

    pub fn name(&self, id: LockId) -> &LockName {
        &self.names[id as usize]
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// Every lock, in the order of the names.
    pub fn by_name(&self) -> impl Iterator<Item = (LockId, &LockName)> {
        self.ids.iter().map(|(name, &id)| (id, name))
    }
}

/// Tokens up to this many bytes are kept inline: 16 hex digits fit, and the type is no
/// larger than a boxed string with its tag.
const INLINE: usize = 22;

/// A lock token, as the client sent it: inline when short, else boxed. It reads as a
/// `str`, and displays and serializes as the original string.
#[derive(Clone, PartialEq, Eq)]
pub struct Token(Repr);

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Boxed(Box<str>),
}

impl Token {
    pub fn new(text: &str) -> Self {
        if text.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Token(Repr::Inline {
                len: text.len() as u8,
                bytes,
            })
        } else {
            Token(Repr::Boxed(text.into()))
        }
    }

    pub fn as_str(&self) -> &str {
        match &self.0 {
            // Copied from a `str` whole: valid UTF-8.
            Repr::Inline { len, bytes } => std::str::from_utf8(&bytes[..*len as usize]).unwrap_or_default(),
            Repr::Boxed(s) => s,
        }
    }

    /// An algorithm's token, as its 16 lowercase hex digits (as its `Display` writes
    /// it), written inline without the formatting machinery or a string in between.
    pub fn hex(token: crate::command::Token) -> Self {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut bytes = [0; INLINE];
        for (i, b) in bytes[..16].iter_mut().enumerate() {
            *b = DIGITS[(token.0 >> (60 - 4 * i) & 0xf) as usize];
        }
        Token(Repr::Inline { len: 16, bytes })
    }

    /// Whether the token is kept without an allocation.
    pub fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline { .. })
    }
}

impl Deref for Token {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl Ord for Token {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl<'de> Deserialize<'de> for Token {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Text(Token::new))
    }
}

impl From<&str> for Token {
    fn from(text: &str) -> Self {
        Token::new(text)
    }
}

impl From<String> for Token {
    fn from(text: String) -> Self {
        Token::new(&text)
    }
}

impl From<crate::command::Token> for Token {
    fn from(token: crate::command::Token) -> Self {
        Token::hex(token)
    }
}

/// Node indices below [`MAX_NODES`] (the checker's bounds refuse any other), as a bit
/// mask; it iterates and serializes in ascending order, as a list of numbers.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct NodeSet(u64);

const _: () = assert!(MAX_NODES <= 64);

/// Every node index, for [`NodeSet::iter`] to lend.
static INDICES: [usize; 64] = {
    let mut all = [0; 64];
    let mut i = 0;
    while i < 64 {
        all[i] = i;
        i += 1;
    }
    all
};

impl NodeSet {
    /// The nodes in ascending order, by reference like a `Vec<usize>`'s `iter()`.
    pub fn iter(&self) -> Nodes {
        Nodes(self.0)
    }

    pub fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    pub fn contains(&self, node: &usize) -> bool {
        *node < 64 && self.0 & (1 << node) != 0
    }

    pub fn insert(&mut self, node: usize) {
        assert!(node < MAX_NODES, "node {node} is beyond the limit of {MAX_NODES}");
        self.0 |= 1 << node;
    }

    pub fn to_vec(&self) -> Vec<usize> {
        self.iter().copied().collect()
    }

    /// An algorithm's set of nodes ([`crate::algorithm::NodeSet`]), the same bits.
    pub fn from_bits(bits: u64) -> Self {
        NodeSet(bits)
    }
}

impl FromIterator<usize> for NodeSet {
    fn from_iter<I: IntoIterator<Item = usize>>(iter: I) -> Self {
        let mut set = NodeSet::default();
        for n in iter {
            set.insert(n);
        }
        set
    }
}

impl<'a> FromIterator<&'a usize> for NodeSet {
    fn from_iter<I: IntoIterator<Item = &'a usize>>(iter: I) -> Self {
        iter.into_iter().copied().collect()
    }
}

impl IntoIterator for &NodeSet {
    type Item = &'static usize;
    type IntoIter = Nodes;
    fn into_iter(self) -> Nodes {
        self.iter()
    }
}

/// The nodes of a [`NodeSet`], in ascending order.
#[derive(Clone)]
pub struct Nodes(u64);

impl Iterator for Nodes {
    type Item = &'static usize;
    fn next(&mut self) -> Option<&'static usize> {
        (self.0 != 0).then(|| {
            let n = self.0.trailing_zeros() as usize;
            self.0 &= self.0 - 1;
            &INDICES[n]
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Nodes {}

impl fmt::Debug for NodeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl Serialize for NodeSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter())
    }
}

/// Read from a list of node numbers, as `Vec<usize>` reads it (the same errors), in any
/// order; a number twice counts once, and one of [`MAX_NODES`] or more is refused.
impl<'de> Deserialize<'de> for NodeSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Nodes;
        impl<'de> Visitor<'de> for Nodes {
            type Value = NodeSet;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a sequence")
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NodeSet, A::Error> {
                let mut set = NodeSet::default();
                while let Some(n) = seq.next_element::<usize>()? {
                    if n >= MAX_NODES {
                        return Err(de::Error::custom(format_args!(
                            "node {n} does not exist (a history names at most {MAX_NODES} nodes)"
                        )));
                    }
                    set.0 |= 1 << n;
                }
                Ok(set)
            }
        }
        d.deserialize_seq(Nodes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_name_reads_compares_and_serializes_as_its_string() {
        let mut locks = Locks::default();
        let a = locks.intern("L0");
        assert_eq!(locks.intern("L1"), a + 1);
        assert_eq!(locks.intern("L0"), a, "interned once");
        assert_eq!(locks.id("L1"), Some(a + 1));
        assert_eq!(locks.id("L2"), None);
        let name = locks.name(a).clone();
        assert_eq!(name.to_string(), "L0");
        assert_eq!(format!("{name:?}"), "\"L0\"");
        assert_eq!(serde_json::to_string(&name).unwrap(), "\"L0\"");
        let owned = String::from("L0");
        assert_eq!(name, "L0");
        assert!(name == *"L0");
        assert_eq!(name, owned);
        assert_eq!(owned, name);
        assert_eq!(name, LockName::new("L0"), "equal across allocations");
        assert!(LockName::new("L0") < *locks.name(a + 1));
        assert_eq!(&name[..1], "L");
        let ids: Vec<LockId> = locks.by_name().map(|(id, _)| id).collect();
        assert_eq!(ids, vec![a, a + 1]);
    }

    #[test]
    fn a_token_round_trips_through_display_and_serde() {
        for text in [
            "20104e383f5137d0",
            "",
            "tok1",
            "not hex, but short",
            "a token far longer than any inline buffer",
            "ünïcödé-token",
        ] {
            let t = Token::new(text);
            assert_eq!(t.to_string(), text);
            assert_eq!(&*t, text);
            assert_eq!(format!("{t:?}"), format!("{text:?}"));
            let json = serde_json::to_string(&t).unwrap();
            assert_eq!(json, serde_json::to_string(text).unwrap());
            assert_eq!(serde_json::from_str::<String>(&json).unwrap(), text);
            let owned = String::from(text);
            assert_eq!(t, text);
            assert_eq!(t, owned);
            assert_eq!(owned, t);
        }
        assert!(
            Token::new("20104e383f5137d0").is_inline(),
            "the usual token allocates nothing"
        );
        let long = Token::new("a token far longer than any inline buffer");
        assert!(!long.is_inline(), "falls back to a boxed string");
        assert!(Token::new("a") < Token::new("b"));
        assert_eq!(std::mem::size_of::<Option<Token>>(), 24);
    }

    #[test]
    fn a_drivers_names_are_made_once_and_read_as_the_keys_do() {
        use crate::command::LockId as Lock;
        let mut names = Names::default();
        let l3 = names.lock(Lock(3));
        assert_eq!(l3, "L3");
        assert!(names.lock(Lock(3)).same(&l3), "one allocation, shared");
        assert!(
            names.key(Key::plain(Lock(3))).same(&l3),
            "a plain key is its lock"
        );
        for key in [Key::writer(Lock(12)), Key::readers(Lock(0)), Key::fence(Lock(7))] {
            assert_eq!(names.key(key), key.to_string());
            assert!(names.key(key).same(&names.key(key)));
        }
    }

    #[test]
    fn names_read_from_a_history_share_their_allocation() {
        let a: LockName = serde_json::from_str("\"Lread\"").unwrap();
        let b: LockName = serde_json::from_str("\"Lread\"").unwrap();
        assert!(a.same(&b) && a == "Lread");
        // More names than it remembers: still read right, the oldest made afresh.
        let many: Vec<LockName> = (0..2 * RECENT_NAMES)
            .map(|i| LockName::read(&format!("M{i}")))
            .collect();
        assert!(many.iter().enumerate().all(|(i, n)| *n == format!("M{i}")));
        assert!(!LockName::read("M0").same(&many[0]));
        assert!(LockName::read(&format!("M{}", 2 * RECENT_NAMES - 1)).same(many.last().unwrap()));
    }

    #[test]
    fn an_algorithms_token_is_written_as_its_hex_digits() {
        for t in [
            0,
            1,
            0xab,
            u64::MAX,
            0x0123_4567_89ab_cdef,
            0xd663ce37f822838c,
            0x0f00,
        ] {
            let token = crate::command::Token(t);
            let written = Token::hex(token);
            assert_eq!(written, token.to_string());
            assert_eq!(
                written,
                Token::new(&token.to_string()),
                "equal to the same text read"
            );
            assert!(written.is_inline());
        }
    }

    #[test]
    fn a_node_set_iterates_and_serializes_in_ascending_order() {
        let set: NodeSet = [4usize, 0, 63, 2].iter().collect();
        assert_eq!(set.to_vec(), vec![0, 2, 4, 63]);
        assert_eq!(serde_json::to_string(&set).unwrap(), "[0,2,4,63]");
        assert_eq!(format!("{set:?}"), "[0, 2, 4, 63]");
        assert_eq!(set.len(), 4);
        assert!(set.contains(&63) && !set.contains(&1) && !set.contains(&64));
        assert!(NodeSet::default().is_empty());
        assert_eq!(serde_json::to_string(&NodeSet::default()).unwrap(), "[]");
    }
}
