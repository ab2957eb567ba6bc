//! The placement core shared by all allocators: which placed buffers overlap a buffer in time,
//! and where the buffer fits among them (first-fit, best-fit, stack, or XLA's best-fit).

use crate::problem::{align_up, Problem};

/// How to choose an offset among the gaps left by the placed buffers that overlap in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// The lowest offset where the buffer fits.
    First,
    /// The smallest gap between placed buffers that fits; if none, directly above the highest.
    Best,
    /// Directly above the highest overlapping buffer (no gap filling).
    Stack,
    /// Best-fit where the space between the highest overlapping buffer and the current peak of
    /// all placed buffers also counts as a gap (XLA's heap simulator).
    BestWithHeapTop,
}

/// A static segment tree over the problem's time points holding the placed buffers.
///
/// A placed buffer is stored in the `covering` list of each node whose time range it covers
/// (at most `O(log n)` of them) and in the `inside` list of every node it only partly covers.
#[derive(Clone, Debug)]
struct TimeTree {
    points: Vec<u64>,
    covering: Vec<Vec<u32>>,
    inside: Vec<Vec<u32>>,
    leaves: usize,
}

impl TimeTree {
    fn new(problem: &Problem) -> TimeTree {
        let mut points: Vec<u64> = problem
            .buffers
            .iter()
            .flat_map(|b| [b.lower, b.upper])
            .collect();
        points.sort_unstable();
        points.dedup();
        let leaves = points.len().saturating_sub(1).max(1);
        TimeTree {
            points,
            covering: vec![Vec::new(); 4 * leaves],
            inside: vec![Vec::new(); 4 * leaves],
            leaves,
        }
    }

    fn interval(&self, lower: u64, upper: u64) -> (usize, usize) {
        let lo = self.points.partition_point(|&p| p < lower);
        let hi = self.points.partition_point(|&p| p < upper);
        (lo, hi)
    }

    fn insert(&mut self, buffer: u32, lower: u64, upper: u64) {
        let (lo, hi) = self.interval(lower, upper);
        self.insert_at(1, 0, self.leaves, lo, hi, buffer);
    }

    fn insert_at(&mut self, node: usize, l: usize, r: usize, lo: usize, hi: usize, b: u32) {
        if hi <= l || r <= lo {
            return;
        }
        if lo <= l && r <= hi {
            self.covering[node].push(b);
            return;
        }
        self.inside[node].push(b);
        let mid = (l + r) / 2;
        self.insert_at(2 * node, l, mid, lo, hi, b);
        self.insert_at(2 * node + 1, mid, r, lo, hi, b);
    }

    /// Calls `visit` for every stored buffer overlapping `[lower, upper)`, possibly repeatedly.
    fn query(&self, lower: u64, upper: u64, visit: &mut impl FnMut(u32)) {
        let (lo, hi) = self.interval(lower, upper);
        self.query_at(1, 0, self.leaves, lo, hi, visit);
    }

    fn query_at(
        &self,
        node: usize,
        l: usize,
        r: usize,
        lo: usize,
        hi: usize,
        visit: &mut impl FnMut(u32),
    ) {
        if hi <= l || r <= lo {
            return;
        }
        self.covering[node].iter().for_each(|&b| visit(b));
        if lo <= l && r <= hi {
            self.inside[node].iter().for_each(|&b| visit(b));
            return;
        }
        let mid = (l + r) / 2;
        self.query_at(2 * node, l, mid, lo, hi, visit);
        self.query_at(2 * node + 1, mid, r, lo, hi, visit);
    }
}

/// Placed buffers and the queries that allocators build on.
///
/// ```
/// use telamalloc::{Buffer, Problem, placement::{Fit, Placer}};
/// let problem = Problem::new(vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 1, 3, 4)], None);
/// let mut placer = Placer::new(&problem);
/// let offset = placer.position(0, Fit::Best);
/// placer.place(0, offset);
/// assert_eq!(placer.position(1, Fit::First), 4);
/// ```
#[derive(Clone, Debug)]
pub struct Placer<'p> {
    problem: &'p Problem,
    tree: TimeTree,
    offsets: Vec<Option<u64>>,
    seen: Vec<u32>,
    stamp: u32,
    peak: u64,
    scratch: Vec<(u64, u64)>,
}

impl<'p> Placer<'p> {
    /// An empty placement for `problem`.
    pub fn new(problem: &'p Problem) -> Placer<'p> {
        Placer {
            problem,
            tree: TimeTree::new(problem),
            offsets: vec![None; problem.buffers.len()],
            seen: vec![0; problem.buffers.len()],
            stamp: 0,
            peak: 0,
            scratch: Vec::new(),
        }
    }

    /// Records `buffer` at `offset`. Each buffer is placed at most once.
    pub fn place(&mut self, buffer: usize, offset: u64) {
        debug_assert!(self.offsets[buffer].is_none(), "buffer placed twice");
        let b = &self.problem.buffers[buffer];
        self.offsets[buffer] = Some(offset);
        self.peak = self.peak.max(offset.saturating_add(b.size));
        self.tree.insert(buffer as u32, b.lower, b.upper);
    }

    /// The offset of `buffer`, if placed.
    pub fn offset(&self, buffer: usize) -> Option<u64> {
        self.offsets[buffer]
    }

    /// The highest `offset + size` of the placed buffers.
    pub fn peak(&self) -> u64 {
        self.peak
    }

    /// Whether every buffer is placed.
    pub fn is_complete(&self) -> bool {
        self.offsets.iter().all(Option::is_some)
    }

    /// The offsets of all buffers, once all are placed.
    pub fn offsets(&self) -> Option<Vec<u64>> {
        self.offsets.iter().copied().collect()
    }

    /// The address ranges `(offset, end)` of the placed buffers overlapping `buffer` in time,
    /// sorted by offset.
    pub fn neighbours(&mut self, buffer: usize) -> &[(u64, u64)] {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.seen.iter_mut().for_each(|s| *s = 0);
            self.stamp = 1;
        }
        let b = &self.problem.buffers[buffer];
        let (stamp, seen, offsets, scratch) =
            (self.stamp, &mut self.seen, &self.offsets, &mut self.scratch);
        scratch.clear();
        let buffers = &self.problem.buffers;
        self.tree.query(b.lower, b.upper, &mut |j| {
            let j = j as usize;
            if seen[j] != stamp && j != buffer {
                seen[j] = stamp;
                let offset = offsets[j].expect("only placed buffers are stored");
                scratch.push((offset, offset.saturating_add(buffers[j].size)));
            }
        });
        scratch.sort_unstable();
        scratch
    }

    /// The highest end among the placed buffers that overlap `buffer` in time (0 if none).
    pub fn highest_neighbour_end(&mut self, buffer: usize) -> u64 {
        self.neighbours(buffer)
            .iter()
            .map(|&(_, end)| end)
            .max()
            .unwrap_or(0)
    }

    /// The offset `fit` chooses for `buffer` among the placed buffers overlapping it in time,
    /// honouring its alignment. A fixed offset is returned as it is.
    pub fn position(&mut self, buffer: usize, fit: Fit) -> u64 {
        let b = &self.problem.buffers[buffer];
        if let Some(fixed) = b.offset {
            return fixed;
        }
        let (size, alignment) = (b.size, b.alignment);
        let heap_top = self.peak;
        let ranges = self.neighbours(buffer);
        let mut top = 0u64; // the highest end seen so far while scanning upward
        let mut best: Option<(u64, u64)> = None; // (gap length, offset)
        for &(offset, end) in ranges {
            if offset > top {
                // A gap [top, offset).
                if let Some(candidate) = fits(top, offset, size, alignment) {
                    match fit {
                        Fit::First => return candidate,
                        Fit::Best | Fit::BestWithHeapTop => {
                            let length = offset - top;
                            if best.is_none_or(|(l, _)| length < l) {
                                best = Some((length, candidate));
                            }
                        }
                        Fit::Stack => {}
                    }
                }
            }
            top = top.max(end);
        }
        if fit == Fit::BestWithHeapTop && heap_top > top {
            if let Some(candidate) = fits(top, heap_top, size, alignment) {
                let length = heap_top - top;
                if best.is_none_or(|(l, _)| length < l) {
                    best = Some((length, candidate));
                }
            }
        }
        match best {
            Some((_, offset)) => offset,
            None => align_up(top, alignment).unwrap_or(u64::MAX),
        }
    }
}

/// The aligned offset at which `size` bytes fit in `[low, high)`, if any.
fn fits(low: u64, high: u64, size: u64, alignment: u64) -> Option<u64> {
    let offset = align_up(low, alignment)?;
    (offset.checked_add(size)? <= high).then_some(offset)
}
