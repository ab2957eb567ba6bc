//! What the long buffers cover in address, kept as unions for the sorted queries: per block of
//! the long tree's leaves, the buffers live over all of it; per node, those starting under it.

use super::prefetch;
use super::range::{Lists, Range};
use super::unions::{add_near, add_to, interpolated};

/// How many block entries (a long buffer's range added to a block it covers) the unions may
/// take per buffer of the problem: the blocks are the narrowest whose entries stay within this
/// (at most 16 bytes each, fewer once ranges join).
const BLOCK_ENTRIES_PER_BUFFER: usize = 4;

/// The narrowest blocks, as a level of the long tree: below it, the leaves' buffers are few
/// enough to gather and sort at each query.
const LOWEST_BLOCK_LEVEL: u32 = 2;

/// Unions of the long buffers' address ranges (each sorted, each range starting above the end
/// of the one before: the [`compact`](super::unions::compact) form), over the long tree's
/// leaves. The buffers live at a leaf are those stored on its path to the root; those stored
/// at its block's node (level `level`) or above cover the whole block, and their union is
/// `blocks[leaf >> level]`, so that a query reads one union instead of the thousands of
/// buffers stored high in the tree, and gathers only those stored below the block. For the
/// buffers starting in a stretch of leaves, each node at the block level or above keeps the
/// union of those starting under it, `starts[node]`: a query reads the unions of the nodes
/// covering the stretch, and gathers the starts under the lower nodes of the cover.
#[derive(Clone, Debug, Default)]
pub(super) struct LongUnions {
    /// A power of two, as in the long tree.
    leaves: usize,
    /// The level of the blocks: `1 << level` leaves each.
    level: u32,
    /// The blocks' unions, in 32 bits until a range ends above 4 GiB (then in 64, even once
    /// cleared): a query reads its block's union whole, and narrow ranges halve the bytes read.
    blocks: Lists,
    /// Indexed by node, for the nodes at or above the block level; in 32 bits while every
    /// address fits ([`LongUnions::widen`]).
    starts: Lists,
}

impl LongUnions {
    /// The empty unions over `leaves` leaves (a power of two) for long buffers covering the
    /// leaves `covers` (each `[first, end)`), among `buffers` buffers in all.
    pub(super) fn new(leaves: usize, covers: &[(usize, usize)], buffers: usize) -> LongUnions {
        let budget = BLOCK_ENTRIES_PER_BUFFER * buffers;
        let top = leaves.ilog2();
        let level = (LOWEST_BLOCK_LEVEL.min(top)..=top)
            .find(|&level| {
                let entries = covers.iter().map(|&(s, e)| whole_blocks(level, s, e).len());
                entries.sum::<usize>() <= budget
            })
            .unwrap_or(top);
        LongUnions {
            leaves,
            level,
            blocks: Lists::new(leaves >> level),
            starts: Lists::new((2 * leaves) >> level),
        }
    }

    /// Empties every union.
    pub(super) fn clear(&mut self) {
        self.blocks.clear();
        self.starts.clear();
    }

    /// Keeps the nodes' unions in 64 bits from now on (they widen by themselves once a range
    /// ends above 4 GiB; this widens them with the other lists a query reads).
    pub(super) fn widen(&mut self) {
        self.starts.widen();
    }

    /// The level of the blocks in the long tree.
    pub(super) fn level(&self) -> u32 {
        self.level
    }

    /// Adds `[offset, end)`, a long buffer covering leaves `[first, last)` (and so starting
    /// at leaf `first`).
    pub(super) fn insert(&mut self, first: usize, last: usize, offset: u64, end: u64) {
        let blocks = whole_blocks(self.level, first, last);
        if !<(u32, u32)>::fits(end) {
            self.blocks.widen();
        }
        match &mut self.blocks {
            Lists::Narrow(unions) => add_to_blocks(&mut unions[blocks], offset, end),
            Lists::Wide(unions) => add_to_blocks(&mut unions[blocks], offset, end),
        }
        // The unions of the nodes above hold their children's: once one covers the range
        // already, so do all above it.
        let mut node = (self.leaves + first) >> self.level;
        while node > 0 && add_to(&mut self.starts, node, offset, end) {
            node /= 2;
        }
    }

    /// The union of the long buffers covering all of `leaf`'s block.
    pub(super) fn block(&self, leaf: usize) -> Block<'_> {
        match &self.blocks {
            Lists::Narrow(unions) => Block::Narrow(&unions[leaf >> self.level]),
            Lists::Wide(unions) => Block::Wide(&unions[leaf >> self.level]),
        }
    }

    /// Starts loading the first `lines` cache lines of the union of `leaf`'s block.
    pub(super) fn prefetch_block(&self, leaf: usize, lines: usize) {
        match self.block(leaf) {
            Block::Narrow(union) => prefetch::lines(union, lines),
            Block::Wide(union) => prefetch::lines(union, lines),
        }
    }

    /// The union of the long buffers starting under `node`, if kept (the node is at or above
    /// the block level), in `R`, the width the unions are kept in.
    pub(super) fn starts<R: Range>(&self, node: usize) -> Option<&[R]> {
        self.starts.get::<R>().get(node).map(Vec::as_slice)
    }

    /// Whether the nodes' unions are kept in 32 bits.
    pub(super) fn is_narrow(&self) -> bool {
        self.starts.is_narrow()
    }
}

/// The union of the long buffers covering a block, as stored.
#[derive(Clone, Copy, Debug)]
pub(super) enum Block<'a> {
    Narrow(&'a [(u32, u32)]),
    Wide(&'a [(u64, u64)]),
}

impl Block<'_> {
    /// The highest end of the union (0 if empty).
    pub(super) fn top(self) -> u64 {
        match self {
            Block::Narrow(union) => union.last().map_or(0, |r| r.end()),
            Block::Wide(union) => union.last().map_or(0, |r| r.end()),
        }
    }
}

/// Adds `[offset, end)` to the unions of neighbouring blocks, `unions`. They hold mostly the
/// same buffers: the range falls at about the same place in each, and the search in the next
/// starts there.
fn add_to_blocks<R: Range>(unions: &mut [Vec<R>], offset: u64, end: u64) {
    let mut place = None;
    for union in unions {
        let hint = place.unwrap_or_else(|| interpolated(union, offset));
        place = Some(add_near(union, offset, end, hint).1);
    }
}

/// The blocks of `1 << level` leaves lying wholly within leaves `[first, last)`.
fn whole_blocks(level: u32, first: usize, last: usize) -> std::ops::Range<usize> {
    let from = first.div_ceil(1 << level);
    let to = last >> level;
    from..to.max(from)
}

#[cfg(test)]
mod tests {
    use super::super::flat::leaves_under;
    use super::super::unions::compact;
    use super::*;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    /// `union` in 64 bits.
    fn widened(union: &[(u32, u32)]) -> Vec<(u64, u64)> {
        union.iter().map(|r| r.wide()).collect()
    }

    /// The compacted union of `ranges`.
    fn union_of(mut ranges: Vec<(u64, u64)>) -> Vec<(u64, u64)> {
        ranges.sort_unstable();
        let mut out = Vec::new();
        compact(ranges.into_iter(), &mut out);
        out
    }

    /// The ranges of `block` in 64 bits, and whether it is kept in 32.
    fn wide(block: Block<'_>) -> (Vec<(u64, u64)>, bool) {
        match block {
            Block::Narrow(union) => (union.iter().map(|r| r.wide()).collect(), true),
            Block::Wide(union) => (union.to_vec(), false),
        }
    }

    /// Long buffers over random stretches of leaves, stored one by one at random ranges (some
    /// empty, many touching or overlapping), with a clear halfway: after each store, every
    /// block's union is that of the buffers covering the whole block, and every kept node's
    /// union that of the buffers starting under it. Every other round, the ranges lie about
    /// the highest 32-bit address: the blocks and the nodes' unions are kept in 32 bits until
    /// one ends above it.
    #[test]
    fn unions_hold_the_buffers_covering_each_block_and_starting_under_each_node() {
        let mut rng = StdRng::seed_from_u64(3);
        for round in 0..60 {
            let base = [0, u32::MAX as u64 - 150][round % 2];
            let mut highest = 0;
            let leaves = 1usize << rng.random_range(0..7);
            let n = rng.random_range(1..40);
            let covers: Vec<(usize, usize)> = (0..n)
                .map(|_| {
                    let first = rng.random_range(0..leaves);
                    (first, rng.random_range(first + 1..=leaves))
                })
                .collect();
            let mut unions = LongUnions::new(leaves, &covers, n + rng.random_range(0..4 * n));
            let mut stored = Vec::new();
            for (i, &(first, last)) in covers.iter().enumerate() {
                if i == n / 2 {
                    unions.clear();
                    stored.clear();
                }
                let offset = base + rng.random_range(0..200u64);
                let end = offset + rng.random_range(0..30u64);
                unions.insert(first, last, offset, end);
                stored.push((first, last, (offset, end)));
                highest = highest.max(end);
                let level = unions.level();
                for leaf in 0..leaves {
                    let (from, to) = leaves_under(leaves, (leaves + leaf) >> level);
                    let covering = stored.iter().filter(|s| s.0 <= from && to <= s.1);
                    let expected = union_of(covering.map(|s| s.2).collect());
                    let (found, narrow) = wide(unions.block(leaf));
                    assert_eq!(found, expected, "round {round}, leaf {leaf}");
                    assert_eq!(narrow, highest <= u32::MAX as u64, "round {round}");
                }
                for node in 1..2 * leaves {
                    let union: Option<Vec<(u64, u64)>> = match unions.is_narrow() {
                        true => unions.starts::<(u32, u32)>(node).map(widened),
                        false => unions.starts::<(u64, u64)>(node).map(<[_]>::to_vec),
                    };
                    let Some(union) = union else {
                        continue;
                    };
                    assert_eq!(unions.is_narrow(), highest <= u32::MAX as u64);
                    let (from, to) = leaves_under(leaves, node);
                    let starting = stored.iter().filter(|s| (from..to).contains(&s.0));
                    let expected = union_of(starting.map(|s| s.2).collect());
                    assert_eq!(union, expected, "round {round}, node {node}");
                }
            }
        }
    }
}
