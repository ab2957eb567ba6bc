//! The node cache: the keys of the nodes a policy's runs refuted, so that a node that comes back
//! fails at once.

use super::node::Node;
use crate::search::state::State;
use std::collections::HashSet;

/// The most refuted nodes a policy's node cache holds.
const NODE_CACHE_LIMIT: usize = 1_000_000;

/// A 128-bit mix (two rounds of a multiply-xorshift), for order-free node keys.
fn mix(x: u128) -> u128 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834);
    z = (z ^ (z >> 67)).wrapping_mul(0xbf58_476d_1ce4_e5b9_94d0_49bb_1331_11eb);
    z = (z ^ (z >> 59)).wrapping_mul(0x94d0_49bb_1331_11eb_bf58_476d_1ce4_e5b9);
    z ^ (z >> 71)
}

/// The key of `node` in `state` with the buffers' static `ranks`: its part's unplaced buffers
/// with their lowest offsets and ranks, the canonical bound and the rank of the last placement.
/// These decide the search below the node (placed buffers act only through the lowest offsets;
/// the ranks, which a part's policy may change between visits, through the canonical order). A
/// 128-bit hash of the unordered set: two different nodes share a key with probability about
/// 2^-128 per pair.
pub(super) fn node_key(state: &State, ranks: &[u32], node: &Node) -> u128 {
    let mut key = mix(u128::from(node.bound) | u128::from(node.bound_rank) << 64);
    for &b in node.buffers {
        let b = b as usize;
        if !state.is_placed(b) {
            let rank_and_buffer = u128::from(ranks[b]) << 32 | b as u128;
            key ^= mix(rank_and_buffer << 64 | u128::from(state.min_offsets[b]));
        }
    }
    key
}

/// The keys of the nodes refuted so far by one policy's runs (kept across its restarts, so its
/// owner holds the set), at most [`NODE_CACHE_LIMIT`] of them.
pub(super) struct NodeCache<'a> {
    refuted: &'a mut HashSet<u128>,
    limit: usize,
}

impl<'a> NodeCache<'a> {
    /// The cache over the keys in `refuted`.
    pub fn new(refuted: &'a mut HashSet<u128>) -> NodeCache<'a> {
        NodeCache {
            refuted,
            limit: NODE_CACHE_LIMIT,
        }
    }

    /// Whether the node with this key was refuted before.
    #[inline]
    pub fn refuted(&self, key: u128) -> bool {
        self.refuted.contains(&key)
    }

    /// Remembers that the node with this key is refuted. When full, the cache starts again,
    /// keeping its memory bounded and the newest keys.
    pub fn remember(&mut self, key: u128) {
        if self.refuted.len() >= self.limit {
            self.refuted.clear();
        }
        self.refuted.insert(key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Buffer, Problem};
    use crate::search::instance::Instance;

    /// Three buffers live together and one after them, in a capacity of 10.
    fn instance() -> Instance {
        let buffers = vec![
            Buffer::new("a", 0, 4, 3),
            Buffer::new("b", 0, 4, 2),
            Buffer::new("c", 1, 3, 4),
            Buffer::new("d", 5, 8, 5),
        ];
        Instance::new(&Problem::new(buffers, None), 10)
    }

    #[test]
    fn a_refuted_node_is_found_again_and_a_different_one_is_not() {
        let instance = instance();
        let mut state = State::new(&instance);
        let buffers = instance.free_u32();
        let ranks: Vec<u32> = (0..buffers.len() as u32).collect();
        let root = Node::root(&buffers, 0..state.floors.len(), 0);
        let mut refuted = HashSet::new();
        let mut cache = NodeCache::new(&mut refuted);
        let root_key = node_key(&state, &ranks, &root);
        cache.remember(root_key);

        // Placing `a` raises the others' lowest offsets: a different node.
        let mark = state.mark();
        state.place(&instance, 0, 0, 1, true);
        let child = root.child(0, ranks[0]);
        let child_key = node_key(&state, &ranks, &child);
        assert_ne!(child_key, root_key);
        assert!(!cache.refuted(child_key));
        // The same buffers under another canonical bound are another node too.
        assert!(!cache.refuted(node_key(&state, &ranks, &root.child(1, 0))));

        // Back where it was: the same key, found.
        state.undo(&instance, 0, mark);
        assert_eq!(node_key(&state, &ranks, &root), root_key);
        assert!(cache.refuted(root_key));
        // The ranks are part of the node (they decide the canonical order).
        let other_ranks: Vec<u32> = ranks.iter().rev().copied().collect();
        assert!(!cache.refuted(node_key(&state, &other_ranks, &root)));
    }

    #[test]
    fn the_key_does_not_depend_on_the_order_of_the_buffers() {
        let instance = instance();
        let state = State::new(&instance);
        let buffers = instance.free_u32();
        let reversed: Vec<u32> = buffers.iter().rev().copied().collect();
        let ranks: Vec<u32> = vec![0; buffers.len()];
        let sections = 0..state.floors.len();
        assert_eq!(
            node_key(&state, &ranks, &Node::root(&buffers, sections.clone(), 0)),
            node_key(&state, &ranks, &Node::root(&reversed, sections, 0)),
        );
    }

    #[test]
    fn a_full_cache_starts_again_with_the_newest_key() {
        let mut refuted = HashSet::new();
        let mut cache = NodeCache::new(&mut refuted);
        cache.limit = 2;
        cache.remember(1);
        cache.remember(2);
        assert!(cache.refuted(1) && cache.refuted(2));
        cache.remember(3);
        assert!(cache.refuted(3));
        assert!(!cache.refuted(1) && !cache.refuted(2));
    }
}
