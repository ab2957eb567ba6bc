//! The placed buffers indexed by time: which of them overlap a buffer's lifetime.

use crate::problem::Problem;

/// A placed buffer in the long buffers' tree: its address range and its index.
#[derive(Clone, Copy, Debug)]
struct Placed {
    offset: u64,
    end: u64,
    buffer: u32,
}

/// A short buffer's slot: its address range once placed, and the rank its lifetime ends at
/// (`hi = 0` while unplaced, which overlaps nothing).
#[derive(Clone, Copy, Debug)]
struct Slot {
    offset: u64,
    end: u64,
    hi: u32,
}

impl Slot {
    const EMPTY: Slot = Slot {
        offset: 0,
        end: 0,
        hi: 0,
    };
}

/// The placed buffers indexed by time, so that those overlapping a buffer's lifetime are found
/// without scanning all placed buffers. Every lifetime is known when the index is made, so its
/// storage is laid out once, flat (no vector per node or time point), and a query reads a few
/// contiguous runs. Times are ranks among the problem's distinct time points.
///
/// Buffers live at most `reach` ranks (chosen from the lifetimes, see [`TimeIndex::new`]) are
/// *short*: one array of them by start rank, so those overlapping `[lo, hi)` are among the run
/// starting in `[lo - reach + 1, hi)`, scanned in order. The others are *long*: a segment tree
/// over their own time points finds those live at a buffer's `lower` (each long buffer is stored
/// at the `O(log n)` nodes its lifetime covers, exactly one on each covered leaf's path to the
/// root), and an array by start those starting strictly inside its lifetime.
#[derive(Clone, Debug)]
pub(super) struct TimeIndex {
    /// Where each buffer is (one record, read once per query).
    of: Vec<Span>,
    /// The longest short lifetime, in ranks.
    reach: u32,
    /// The short buffers' slots by start rank; those starting at rank `r` from `short_from[r]`.
    short: Vec<Slot>,
    /// The buffer in each short slot (for queries that need the buffers, not only ranges).
    short_buffer: Vec<u32>,
    short_from: Vec<usize>,
    /// The long tree: `leaves` a power of two, node 1 the root, leaf `i` node `leaves + i`; node
    /// `v`'s placed buffers are `covering[nodes[v].0..nodes[v].0 + nodes[v].1]`.
    leaves: usize,
    nodes: Vec<(usize, u32)>,
    covering: Vec<Placed>,
    /// The long buffers by start point, `buffer == u32::MAX` until placed; those starting at
    /// the long tree's point `i` from `long_from[i]`.
    starting: Vec<Placed>,
    long_from: Vec<usize>,
}

impl TimeIndex {
    pub(super) fn new(problem: &Problem) -> TimeIndex {
        let buffers = &problem.buffers;
        let spans = ranks(buffers.iter().map(|b| (b.lower, b.upper)), buffers.len());
        let points = spans
            .iter()
            .map(|&(lo, hi)| lo.max(hi) as usize + 1)
            .max()
            .unwrap_or(1);
        let reach = short_reach(&spans, points);
        let reach = spans
            .iter()
            .map(|&(lo, hi)| hi.saturating_sub(lo))
            .filter(|&length| length <= reach)
            .max()
            .unwrap_or(0);
        let is_long: Vec<bool> = spans
            .iter()
            .map(|&(lo, hi)| hi.saturating_sub(lo) > reach)
            .collect();
        // Short: slots by start rank.
        let mut counts = vec![0u32; points + 1];
        for (&(lo, _), _) in spans.iter().zip(&is_long).filter(|(_, &long)| !long) {
            counts[lo as usize] += 1;
        }
        let short_from = running_sums(&counts);
        // Long: their own time points; each buffer's position among them.
        let long_times: Vec<u64> = {
            let mut t: Vec<u64> = buffers
                .iter()
                .zip(&is_long)
                .filter(|(_, &long)| long)
                .flat_map(|(b, _)| [b.lower, b.upper])
                .collect();
            t.sort_unstable();
            t.dedup();
            t
        };
        let long_span: Vec<(u32, u32)> = buffers
            .iter()
            .map(|b| {
                let after_lower = long_times.partition_point(|&t| t <= b.lower);
                let from_upper = long_times.partition_point(|&t| t < b.upper);
                (after_lower as u32, from_upper as u32)
            })
            .collect();
        // A leaf per long time: the last one, after every long lifetime, stays empty.
        let leaves = long_times.len().max(1).next_power_of_two();
        let mut node_len = vec![0u32; 2 * leaves];
        let mut long_counts = vec![0u32; long_times.len() + 1];
        for (&(after_lower, from_upper), _) in long_span.iter().zip(&is_long).filter(|p| *p.1) {
            for_each_cover(leaves, after_lower - 1, from_upper, |node| {
                node_len[node] += 1
            });
            long_counts[after_lower as usize - 1] += 1;
        }
        let node_start = running_sums(&node_len);
        let long_from = running_sums(&long_counts);
        // Each buffer's slot: short by start rank, long by start point.
        let (mut next_short, mut next_long) = (short_from.clone(), long_from.clone());
        let slot_of: Vec<u32> = (0..buffers.len())
            .map(|b| {
                let next = if is_long[b] {
                    &mut next_long[long_span[b].0 as usize - 1]
                } else {
                    &mut next_short[spans[b].0 as usize]
                };
                *next += 1;
                (*next - 1) as u32
            })
            .collect();
        let mut short_buffer = vec![0u32; *short_from.last().unwrap_or(&0)];
        for b in (0..buffers.len()).filter(|&b| !is_long[b]) {
            short_buffer[slot_of[b] as usize] = b as u32;
        }
        let covering = vec![Placed::EMPTY; *node_start.last().unwrap_or(&0)];
        TimeIndex {
            of: (0..buffers.len())
                .map(|b| Span {
                    lo: spans[b].0,
                    hi: spans[b].1,
                    slot: slot_of[b],
                    after_lower: long_span[b].0,
                    from_upper: long_span[b].1,
                    long: is_long[b],
                })
                .collect(),
            short: vec![Slot::EMPTY; *short_from.last().unwrap_or(&0)],
            short_buffer,
            short_from,
            starting: vec![Placed::EMPTY; *long_from.last().unwrap_or(&0)],
            long_from,
            nodes: node_start.iter().map(|&start| (start, 0)).collect(),
            covering,
            leaves,
            reach,
        }
    }

    /// Empties the index, keeping its layout.
    pub(super) fn clear(&mut self) {
        self.nodes.iter_mut().for_each(|node| node.1 = 0);
        self.short.iter_mut().for_each(|s| *s = Slot::EMPTY);
        self.starting.iter_mut().for_each(|p| *p = Placed::EMPTY);
    }

    pub(super) fn insert(&mut self, buffer: usize, offset: u64, end: u64) {
        let span = self.of[buffer];
        let slot = span.slot as usize;
        if !span.long {
            let hi = span.hi;
            self.short[slot] = Slot { offset, end, hi };
            return;
        }
        let placed = Placed {
            offset,
            end,
            buffer: buffer as u32,
        };
        self.starting[slot] = placed;
        let (after_lower, from_upper) = (span.after_lower, span.from_upper);
        let (nodes, covering) = (&mut self.nodes, &mut self.covering);
        for_each_cover(self.leaves, after_lower - 1, from_upper, |node| {
            let (start, len) = &mut nodes[node];
            covering[*start + *len as usize] = placed;
            *len += 1;
        });
    }

    /// Writes to the front of `out` the address range of every stored buffer but `buffer`
    /// itself that overlaps the lifetime of `buffer`, each once, and returns how many; `out`
    /// only grows, and what lies past that count is left over from earlier queries.
    pub(super) fn query(&self, buffer: usize, out: &mut Vec<(u64, u64)>) -> usize {
        let span = self.of[buffer];
        let (lo, hi) = (span.lo, span.hi);
        // Short: those starting in [lo - reach + 1, hi) that end after lo. Written without a
        // branch (each slot is written, and kept by moving on), which a mix of placed and
        // unplaced slots would mispredict.
        let own = match span.long {
            true => usize::MAX,
            false => span.slot as usize,
        };
        let first = self.short_from[(lo + 1).saturating_sub(self.reach) as usize];
        let last = self.short_from[hi as usize].max(first);
        let window = &self.short[first..last];
        if out.len() < window.len() {
            out.resize(window.len(), (0, 0));
        }
        let mut kept = 0;
        for (i, s) in window.iter().enumerate() {
            out[kept] = (s.offset, s.end);
            kept += usize::from(s.hi > lo && first + i != own);
        }
        self.for_each_long(buffer, |p| {
            if kept == out.len() {
                out.push((p.offset, p.end));
            } else {
                out[kept] = (p.offset, p.end);
            }
            kept += 1;
        });
        kept
    }

    /// Appends to `out` the index of every stored buffer but `buffer` itself that overlaps the
    /// lifetime of `buffer`, each once (the buffers [`TimeIndex::query`] gives the ranges of).
    pub(super) fn query_ids(&self, buffer: usize, out: &mut Vec<u32>) {
        let span = self.of[buffer];
        let own = match span.long {
            true => usize::MAX,
            false => span.slot as usize,
        };
        let first = self.short_from[(span.lo + 1).saturating_sub(self.reach) as usize];
        let last = self.short_from[span.hi as usize].max(first);
        for (slot, s) in self.short[first..last].iter().enumerate() {
            if s.hi > span.lo && first + slot != own {
                out.push(self.short_buffer[first + slot]);
            }
        }
        self.for_each_long(buffer, |p| out.push(p.buffer));
    }

    /// Calls `visit` for every stored long buffer but `buffer` itself that overlaps the lifetime
    /// of `buffer`, once each: those live at its `lower` (the tree), then those starting
    /// strictly inside it.
    fn for_each_long(&self, buffer: usize, mut visit: impl FnMut(&Placed)) {
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
}

/// Where a buffer is in the [`TimeIndex`].
#[derive(Clone, Copy, Debug)]
struct Span {
    /// Its lifetime as ranks `[lo, hi)` among the problem's distinct times.
    lo: u32,
    hi: u32,
    /// Its slot: in the short array, or among the long ones by start.
    slot: u32,
    /// Among the long buffers' times: the first after its `lower`, the first at or after its
    /// `upper`.
    after_lower: u32,
    from_upper: u32,
    /// Whether it is long (in the tree).
    long: bool,
}

/// The `buffer` of a long start slot not placed yet.
const EMPTY: u32 = u32::MAX;

impl Placed {
    const EMPTY: Placed = Placed {
        offset: 0,
        end: 0,
        buffer: EMPTY,
    };
}

/// Each `(lower, upper)` as ranks among the distinct times of all of them.
fn ranks(lifetimes: impl Iterator<Item = (u64, u64)> + Clone, n: usize) -> Vec<(u32, u32)> {
    let mut times: Vec<u64> = Vec::with_capacity(2 * n);
    times.extend(lifetimes.clone().flat_map(|(lower, upper)| [lower, upper]));
    times.sort_unstable();
    times.dedup();
    let rank = |t: u64| times.partition_point(|&p| p < t) as u32;
    lifetimes
        .map(|(lower, upper)| (rank(lower), rank(upper)))
        .collect()
}

/// The longest lifetime (in ranks) kept in the short array: the power of two (or 0) that
/// minimises the estimated cost of a query, the short slots scanned in vain (about
/// `short buffers x reach / points`, read in order) plus a level of the long tree for every
/// doubling of the long buffers, counted as 64 slots (a cache miss each, on a large tree: the
/// first weight tried, 8, put all of a 1M-buffer problem with 1% long lifetimes in the tree,
/// at 1.7 times the time).
fn short_reach(spans: &[(u32, u32)], points: usize) -> u32 {
    // by_class[c]: lifetimes of 2^(c-1) < length <= 2^c ranks (class 0: length <= 1).
    let mut by_class = [0usize; 34];
    for &(lo, hi) in spans {
        let length = hi.saturating_sub(lo);
        by_class[(u32::BITS - length.saturating_sub(1).leading_zeros()) as usize] += 1;
    }
    let n = spans.len();
    let cost = |short: usize, reach: f64| {
        short as f64 * reach / points.max(1) as f64 + 64.0 * ((n - short) as f64 + 1.0).log2()
    };
    let (mut best, mut best_cost) = (0u32, cost(0, 0.0));
    let mut short = 0;
    for (class, count) in by_class.iter().enumerate().take(33) {
        short += count;
        let reach = 1u64 << class;
        let c = cost(short, reach as f64);
        if c < best_cost {
            (best, best_cost) = (reach.min(u32::MAX as u64) as u32, c);
        }
    }
    best
}

/// Calls `visit` with each node of the canonical cover of leaves `[lo, hi)` in a bottom-up tree
/// of `leaves` leaves: disjoint nodes, together exactly those leaves.
fn for_each_cover(leaves: usize, lo: u32, hi: u32, mut visit: impl FnMut(usize)) {
    let (mut l, mut r) = (lo as usize + leaves, (hi as usize).min(leaves) + leaves);
    while l < r {
        if l % 2 == 1 {
            visit(l);
            l += 1;
        }
        if r % 2 == 1 {
            r -= 1;
            visit(r);
        }
        l /= 2;
        r /= 2;
    }
}

/// `[0, c0, c0 + c1, ...]`: where each count's run starts, and the total last.
fn running_sums(counts: &[u32]) -> Vec<usize> {
    let mut sums = Vec::with_capacity(counts.len() + 1);
    let mut total = 0usize;
    sums.push(0);
    for &count in counts {
        total += count as usize;
        sums.push(total);
    }
    sums
}
