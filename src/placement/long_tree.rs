//! The buffers too long for the time buckets: a segment tree over their own time points.

use super::flat::{for_each_cover, leaves_under, running_sums};
use super::long_unions::{Block, LongUnions};
use super::prefetch;
use super::range::{top, Range};

/// A placed long buffer: its address range and its index (`buffer == EMPTY` until placed).
#[derive(Clone, Copy, Debug)]
pub(super) struct Placed {
    pub(super) offset: u64,
    pub(super) end: u64,
    pub(super) buffer: u32,
}

/// The `buffer` of a start slot not placed yet.
const EMPTY: u32 = u32::MAX;

impl Placed {
    const EMPTY: Placed = Placed {
        offset: 0,
        end: 0,
        buffer: EMPTY,
    };
}

/// Where a buffer's lifetime falls among the long buffers' time points: the first point after
/// its `lo`, the first at or after its `hi`; and for a long buffer, its start slot.
#[derive(Clone, Copy, Debug, Default)]
struct Span {
    after_lower: u32,
    from_upper: u32,
    slot: u32,
}

/// The placed long buffers indexed by time, laid out once, flat. A segment tree over the long
/// buffers' own time points finds those live at a buffer's `lo` (each long buffer is stored at
/// the `O(log n)` nodes its lifetime covers, exactly one on each covered leaf's path to the
/// root), and an array by start those starting strictly inside its lifetime. Empty (every
/// query answers nothing at once) when no buffer is long.
#[derive(Clone, Debug, Default)]
pub(super) struct LongTree {
    /// Each buffer's place among the long time points (empty when no buffer is long).
    of: Vec<Span>,
    /// `leaves` a power of two, node 1 the root, leaf `i` node `leaves + i`; node `v`'s placed
    /// buffers are `covering[nodes[v].0..nodes[v].0 + nodes[v].1]`.
    leaves: usize,
    nodes: Vec<(usize, u32)>,
    covering: Vec<Placed>,
    /// The long buffers by start point; those starting at point `i` from `long_from[i]`.
    starting: Vec<Placed>,
    long_from: Vec<usize>,
    /// The placed long buffers' ranges as unions, for the sorted queries.
    unions: LongUnions,
}

impl LongTree {
    /// The tree for the buffers with `is_long`, lifetimes `spans` as ranks `[lo, hi)`.
    pub(super) fn new(spans: &[(u32, u32)], is_long: &[bool]) -> LongTree {
        if !is_long.iter().any(|&long| long) {
            return LongTree::default();
        }
        let times: Vec<u32> = {
            let mut t: Vec<u32> = spans
                .iter()
                .zip(is_long)
                .filter(|(_, &long)| long)
                .flat_map(|(&(lo, hi), _)| [lo, hi])
                .collect();
            t.sort_unstable();
            t.dedup();
            t
        };
        let mut of: Vec<Span> = spans
            .iter()
            .map(|&(lo, hi)| Span {
                after_lower: times.partition_point(|&t| t <= lo) as u32,
                from_upper: times.partition_point(|&t| t < hi) as u32,
                slot: 0,
            })
            .collect();
        // A leaf per long time: the last one, after every long lifetime, stays empty.
        let leaves = times.len().max(1).next_power_of_two();
        let mut node_len = vec![0u32; 2 * leaves];
        let mut start_counts = vec![0u32; times.len() + 1];
        let long_spans = || of.iter().zip(is_long).filter(|p| *p.1).map(|p| p.0);
        for span in long_spans() {
            for_each_cover(
                leaves,
                (span.after_lower - 1) as usize,
                span.from_upper as usize,
                |node| node_len[node] += 1,
            );
            start_counts[span.after_lower as usize - 1] += 1;
        }
        let node_start = running_sums(&node_len);
        let long_from = running_sums(&start_counts);
        let covers: Vec<(usize, usize)> = long_spans()
            .map(|span| ((span.after_lower - 1) as usize, span.from_upper as usize))
            .collect();
        let mut next = long_from.clone();
        for (span, _) in of.iter_mut().zip(is_long).filter(|p| *p.1) {
            let at = &mut next[span.after_lower as usize - 1];
            span.slot = *at as u32;
            *at += 1;
        }
        LongTree {
            of,
            leaves,
            nodes: node_start.iter().map(|&start| (start, 0)).collect(),
            covering: vec![Placed::EMPTY; *node_start.last().unwrap_or(&0)],
            starting: vec![Placed::EMPTY; *long_from.last().unwrap_or(&0)],
            long_from,
            unions: LongUnions::new(leaves, &covers, spans.len()),
        }
    }

    /// Whether no buffer is long (every query answers nothing).
    pub(super) fn is_empty(&self) -> bool {
        self.of.is_empty()
    }

    /// Empties the tree, keeping its layout.
    pub(super) fn clear(&mut self) {
        self.nodes.iter_mut().for_each(|node| node.1 = 0);
        self.starting.iter_mut().for_each(|p| *p = Placed::EMPTY);
        self.unions.clear();
    }

    /// Keeps the unions of the nodes in 64 bits from now on ([`LongUnions::widen`]).
    pub(super) fn widen(&mut self) {
        self.unions.widen();
    }

    /// Stores the long buffer `buffer` at `[offset, end)`.
    pub(super) fn insert(&mut self, buffer: usize, offset: u64, end: u64) {
        let span = self.of[buffer];
        let placed = Placed {
            offset,
            end,
            buffer: buffer as u32,
        };
        self.starting[span.slot as usize] = placed;
        let (first, last) = ((span.after_lower - 1) as usize, span.from_upper as usize);
        self.unions.insert(first, last, offset, end);
        let (nodes, covering) = (&mut self.nodes, &mut self.covering);
        for_each_cover(self.leaves, first, last, |node| {
            let (start, len) = &mut nodes[node];
            covering[*start + *len as usize] = placed;
            *len += 1;
        });
    }

    /// Calls `visit` for every stored long buffer but `buffer` itself that overlaps the
    /// lifetime of `buffer`, once each: those live at its `lo` (the tree), then those starting
    /// strictly inside it.
    pub(super) fn for_each(&self, buffer: usize, mut visit: impl FnMut(&Placed)) {
        if self.is_empty() {
            return;
        }
        let span = self.of[buffer];
        let (after_lower, from_upper) = (span.after_lower, span.from_upper);
        let mut keep = |p: &Placed| {
            if p.buffer != EMPTY && p.buffer as usize != buffer {
                visit(p);
            }
        };
        if after_lower > 0 {
            let mut node = self.leaves + after_lower as usize - 1;
            while node > 0 {
                let (start, len) = self.nodes[node];
                self.covering[start..start + len as usize]
                    .iter()
                    .for_each(&mut keep);
                node /= 2;
            }
        }
        if after_lower < from_upper {
            let (from, to) = (after_lower as usize, from_upper as usize);
            self.starting[self.long_from[from]..self.long_from[to]]
                .iter()
                .for_each(&mut keep);
        }
    }

    /// The stored long buffers overlapping the lifetime of `buffer`, which is not stored
    /// itself, for a sorted query: the union of the ranges of those covering its block, if
    /// any, returned; `visit` gets other unions (each sorted, in the
    /// [`compact`](super::unions::compact) form) and `raw` the ranges of the rest, unsorted.
    /// Those live at its `lo`: the union of its block, and the buffers stored below the block
    /// on its leaf's path; those starting strictly inside it: the unions of the cover's nodes
    /// at or above the block level, and the starts under the lower ones.
    /// The unions go to `visit` in `R`, the width they are kept in.
    pub(super) fn cover<R: Range>(
        &self,
        buffer: usize,
        raw: &mut Vec<(u64, u64)>,
        mut visit: impl FnMut(&[R]),
    ) -> Block<'_> {
        if self.is_empty() {
            return Block::Wide(&[]);
        }
        let span = self.of[buffer];
        let (after_lower, from_upper) = (span.after_lower as usize, span.from_upper as usize);
        let mut gather = |p: &Placed| {
            if p.buffer != EMPTY {
                raw.push((p.offset, p.end));
            }
        };
        if after_lower < from_upper {
            for_each_cover(self.leaves, after_lower, from_upper, |node| {
                match self.unions.starts(node) {
                    Some(union) => visit(union),
                    None => {
                        let (from, to) = leaves_under(self.leaves, node);
                        self.starting[self.long_from[from]..self.long_from[to]]
                            .iter()
                            .for_each(&mut gather);
                    }
                }
            });
        }
        if after_lower == 0 {
            return Block::Wide(&[]);
        }
        let leaf = after_lower - 1;
        let mut node = self.leaves + leaf;
        for _ in 0..self.unions.level() {
            let (start, len) = self.nodes[node];
            self.covering[start..start + len as usize]
                .iter()
                .for_each(&mut gather);
            node /= 2;
        }
        self.unions.block(leaf)
    }

    /// Starts loading the record of `buffer`.
    pub(super) fn prefetch_records(&self, buffer: usize) {
        if let Some(span) = self.of.get(buffer) {
            prefetch::line(span);
        }
    }

    /// Starts loading the first `lines` cache lines of the union of `buffer`'s block, and the
    /// nodes below the block on its leaf's path.
    pub(super) fn prefetch_block(&self, buffer: usize, lines: usize) {
        match self.of.get(buffer) {
            Some(span) if span.after_lower > 0 => {
                let leaf = span.after_lower as usize - 1;
                self.unions.prefetch_block(leaf, lines);
                let mut node = self.leaves + leaf;
                for _ in 0..self.unions.level() {
                    prefetch::line(&self.nodes[node]);
                    node /= 2;
                }
            }
            _ => {}
        }
    }

    /// The highest end among the stored long buffers overlapping the lifetime of `buffer`,
    /// which is not stored itself (0 if none), through the unions of [`LongTree::cover`] (a
    /// union's last range ends highest); `raw` is scratch.
    pub(super) fn highest_end(&self, buffer: usize, raw: &mut Vec<(u64, u64)>) -> u64 {
        raw.clear();
        let mut highest = 0;
        let block = match self.unions.is_narrow() {
            true => self.cover(buffer, raw, |u: &[(u32, u32)]| {
                highest = highest.max(top(u))
            }),
            false => self.cover(buffer, raw, |u: &[(u64, u64)]| {
                highest = highest.max(top(u))
            }),
        };
        let gathered = raw.iter().map(|r| r.1).max().unwrap_or(0);
        highest.max(block.top()).max(gathered)
    }
}
