//! Compact values for the checker's per-hold and per-attempt records.
//!
//! A long history has millions of holds and acquisitions but only a few lock names,
//! tokens of 16 hex digits and at most [`MAX_NODES`] nodes. Stored as the history's
//! strings and vectors, every hold cost three heap allocations; these types keep the
//! same meaning without them, and serialize and display exactly as the original
//! string or list did, so summary.json does not change:
//!
//! - [`LockName`]: a lock's name, shared by every record of that lock ([`Locks`]
//!   interns it, and numbers each name for records that keep only a [`LockId`]);
//! - [`Token`]: a lock token, kept inline when short (the usual 16 hex digits), boxed
//!   otherwise;
//! - [`NodeSet`]: the nodes that granted an acquisition, as a bit mask.

use crate::limits::MAX_NODES;
use serde::{Serialize, Serializer};
use std::borrow::Borrow;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A lock's name. Clones share one allocation (a thin pointer: a hold is among the
/// most numerous records); it reads as a `str`.
#[derive(Clone, Eq)]
pub struct LockName(Arc<String>);

impl LockName {
    pub fn new(name: &str) -> Self {
        LockName(Arc::new(name.to_string()))
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

impl PartialOrd for LockName {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::hash::Hash for LockName {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq<str> for LockName {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for LockName {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for LockName {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<LockName> for String {
    fn eq(&self, other: &LockName) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<LockName> for str {
    fn eq(&self, other: &LockName) -> bool {
        self == other.as_str()
    }
}

impl fmt::Display for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for LockName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for LockName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
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

impl PartialOrd for Token {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq<str> for Token {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Token {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Token {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Token> for String {
    fn eq(&self, other: &Token) -> bool {
        self == other.as_str()
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Serialize for Token {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self)
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
    pub fn iter(&self) -> impl Iterator<Item = &'static usize> {
        let mut left = self.0;
        std::iter::from_fn(move || {
            (left != 0).then(|| {
                let n = left.trailing_zeros() as usize;
                left &= left - 1;
                &INDICES[n]
            })
        })
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
