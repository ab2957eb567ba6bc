//! The placement core shared by all allocators: which placed buffers overlap a buffer in time,
//! and where the buffer fits among them (first-fit, best-fit, stack, or XLA's best-fit).

use crate::problem::{align_up, for_each_overlap, Problem};

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

/// A placed buffer as the index stores it: its address range and its index.
#[derive(Clone, Copy, Debug)]
struct Placed {
    offset: u64,
    end: u64,
    buffer: u32,
}

/// The placed buffers indexed by time, so that those overlapping a lifetime are found in
/// `O(log n + k)` without duplicates: a buffer overlapping `[lower, upper)` is either live at
/// `lower` (a stabbing query over a segment tree that stores each buffer at the `O(log n)` nodes
/// its lifetime covers, each at most once on a root-to-leaf path) or starts strictly inside it
/// (a list of placed buffers per start point).
#[derive(Clone, Debug)]
struct TimeIndex {
    points: Vec<u64>,
    covering: Vec<Vec<Placed>>,
    starting: Vec<Vec<Placed>>,
    leaves: usize,
}

impl TimeIndex {
    fn new(problem: &Problem) -> TimeIndex {
        let mut points: Vec<u64> = problem
            .buffers
            .iter()
            .flat_map(|b| [b.lower, b.upper])
            .collect();
        points.sort_unstable();
        points.dedup();
        let leaves = points.len().saturating_sub(1).max(1);
        TimeIndex {
            covering: vec![Vec::new(); 4 * leaves],
            starting: vec![Vec::new(); points.len().max(1)],
            points,
            leaves,
        }
    }

    fn interval(&self, lower: u64, upper: u64) -> (usize, usize) {
        let lo = self.points.partition_point(|&p| p < lower);
        let hi = self.points.partition_point(|&p| p < upper);
        (lo, hi)
    }

    fn insert(&mut self, placed: Placed, lower: u64, upper: u64) {
        let (lo, hi) = self.interval(lower, upper);
        self.starting[lo].push(placed);
        self.insert_at(1, 0, self.leaves, lo, hi, placed);
    }

    fn insert_at(&mut self, node: usize, l: usize, r: usize, lo: usize, hi: usize, b: Placed) {
        if hi <= l || r <= lo {
            return;
        }
        if lo <= l && r <= hi {
            self.covering[node].push(b);
            return;
        }
        let mid = (l + r) / 2;
        self.insert_at(2 * node, l, mid, lo, hi, b);
        self.insert_at(2 * node + 1, mid, r, lo, hi, b);
    }

    /// Calls `visit` once for every stored buffer overlapping `[lower, upper)`.
    fn query(&self, lower: u64, upper: u64, visit: &mut impl FnMut(&Placed)) {
        let (lo, hi) = self.interval(lower, upper);
        // Live at the first elementary interval `lo`.
        let (mut node, mut l, mut r) = (1, 0, self.leaves);
        loop {
            self.covering[node].iter().for_each(&mut *visit);
            if r - l == 1 {
                break;
            }
            let mid = (l + r) / 2;
            if lo < mid {
                node *= 2;
                r = mid;
            } else {
                node = 2 * node + 1;
                l = mid;
            }
        }
        // Starting strictly after `lower` and before `upper`.
        for list in &self.starting[(lo + 1).min(hi)..hi] {
            list.iter().for_each(&mut *visit);
        }
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
    index: TimeIndex,
    offsets: Vec<Option<u64>>,
    peak: u64,
    scratch: Vec<(u64, u64)>,
    /// Whether some buffer has gaps (then a neighbour's range is what its pieces forbid).
    gapped: bool,
}

impl<'p> Placer<'p> {
    /// An empty placement for `problem`.
    pub fn new(problem: &'p Problem) -> Placer<'p> {
        Placer {
            problem,
            index: TimeIndex::new(problem),
            offsets: vec![None; problem.buffers.len()],
            peak: 0,
            scratch: Vec::new(),
            gapped: problem.has_gaps(),
        }
    }

    /// Records `buffer` at `offset`. Each buffer is placed at most once.
    pub fn place(&mut self, buffer: usize, offset: u64) {
        debug_assert!(self.offsets[buffer].is_none(), "buffer placed twice");
        let b = &self.problem.buffers[buffer];
        self.offsets[buffer] = Some(offset);
        self.peak = self.peak.max(offset.saturating_add(b.size));
        let placed = Placed {
            offset,
            end: offset.saturating_add(b.size),
            buffer: buffer as u32,
        };
        self.index.insert(placed, b.lower, b.upper);
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
    /// sorted by offset: `buffer`'s whole range `[x, x + size)` collides iff it meets one. With
    /// gaps, a neighbour gives one range per pair of pieces live at a common time (their
    /// [`shadow`](crate::problem::Piece::shadow)), none if they never meet: `buffer` may then
    /// sit in a neighbour's gap.
    pub fn neighbours(&mut self, buffer: usize) -> &[(u64, u64)] {
        let problem = self.problem;
        let b = &problem.buffers[buffer];
        let scratch = &mut self.scratch;
        let gapped = self.gapped;
        scratch.clear();
        self.index.query(b.lower, b.upper, &mut |p: &Placed| {
            if p.buffer as usize == buffer {
                return;
            }
            let other = &problem.buffers[p.buffer as usize];
            if !gapped || (other.gaps.is_empty() && b.gaps.is_empty()) {
                scratch.push((p.offset, p.end));
                return;
            }
            for_each_overlap(other, b, |theirs, ours| {
                scratch.push(theirs.shadow(p.offset, &ours, b.size));
            });
        });
        scratch.sort_unstable_by_key(|&(offset, _)| offset);
        scratch
    }

    /// The highest end among the placed buffers that overlap `buffer` in time (0 if none):
    /// with gaps, the lowest offset at which `buffer` lies wholly above them.
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
