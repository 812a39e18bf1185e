//! A node's string keyspace: a map of the few keys a node holds (one or two per lock),
//! sorted by key like the `BTreeMap` it replaces, so iteration order and behaviour are
//! the same. It keeps up to two entries inline: setting and deleting a lock key, a
//! node's commonest commands, allocate nothing, and neither does cloning a node (the
//! explorer clones every node of every world it makes).

use smallvec::SmallVec;

#[derive(Debug, Hash)]
pub struct SortedMap<K, V> {
    /// Ascending by key, no key twice.
    entries: SmallVec<[(K, V); 2]>,
}

/// Plain data is copied in one piece, not entry by entry.
impl<K: Copy, V: Copy> Clone for SortedMap<K, V> {
    fn clone(&self) -> Self {
        SortedMap {
            entries: SmallVec::from_slice(&self.entries),
        }
    }
}

impl<K, V> Default for SortedMap<K, V> {
    fn default() -> Self {
        SortedMap {
            entries: SmallVec::new(),
        }
    }
}

impl<K: Ord, V> SortedMap<K, V> {
    fn find(&self, key: &K) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.cmp(key))
    }

    pub fn get(&self, key: &K) -> Option<&V> {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    pub fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    pub fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &K) -> Option<V> {
        self.find(key).ok().map(|i| self.entries.remove(i).1)
    }

    /// In ascending key order.
    pub fn iter(&self) -> impl Iterator<Item = (&K, &V)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn behaves_as_a_btree_map() {
        // Random inserts, removes and lookups against a BTreeMap, from a small LCG.
        let (mut ours, mut model) = (SortedMap::default(), BTreeMap::new());
        let mut x = 11u64;
        for _ in 0..5_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let (key, value) = ((x >> 40) % 7, x >> 50);
            match (x >> 33) % 4 {
                0 | 1 => assert_eq!(ours.insert(key, value), model.insert(key, value)),
                2 => assert_eq!(ours.remove(&key), model.remove(&key)),
                _ => {
                    if let Some(v) = ours.get_mut(&key) {
                        *v += 1;
                    }
                    if let Some(v) = model.get_mut(&key) {
                        *v += 1;
                    }
                }
            }
            assert_eq!(ours.get(&key), model.get(&key));
            assert!(ours.iter().eq(model.iter()));
        }
    }
}
