//! The placement core shared by all allocators: which placed buffers overlap a buffer in time,
//! and where the buffer fits among them (first-fit, best-fit, stack, or XLA's best-fit).

mod time_index;

use crate::problem::{align_up, for_each_overlap, Problem};
use time_index::TimeIndex;

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
    /// The neighbours' indices, for problems with gaps.
    ids: Vec<u32>,
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
            ids: Vec::new(),
            gapped: problem.has_gaps(),
        }
    }

    /// Records `buffer` at `offset`. Each buffer is placed at most once (a second placement
    /// panics: the index keeps one slot per buffer).
    pub fn place(&mut self, buffer: usize, offset: u64) {
        assert!(self.offsets[buffer].is_none(), "buffer placed twice");
        let b = &self.problem.buffers[buffer];
        self.offsets[buffer] = Some(offset);
        self.peak = self.peak.max(offset.saturating_add(b.size));
        self.index
            .insert(buffer, offset, offset.saturating_add(b.size));
    }

    /// Removes every placement, keeping the index's layout (cheaper than a new [`Placer`] when
    /// the same problem is placed again, as hill climbing does).
    pub fn clear(&mut self) {
        self.index.clear();
        self.offsets.iter_mut().for_each(|o| *o = None);
        self.peak = 0;
    }

    /// The problem being placed.
    pub fn problem(&self) -> &'p Problem {
        self.problem
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
        let found = if self.gapped {
            self.gapped_neighbours(buffer)
        } else {
            self.index.query(buffer, &mut self.scratch)
        };
        let neighbours = &mut self.scratch[..found];
        neighbours.sort_unstable_by_key(|&(offset, _)| offset);
        neighbours
    }

    /// [`Placer::neighbours`] for a problem with gaps, unsorted, at the front of the scratch:
    /// the shadows of the piece pairs live at a common time; returns how many.
    fn gapped_neighbours(&mut self, buffer: usize) -> usize {
        let problem = self.problem;
        let b = &problem.buffers[buffer];
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        self.index.query_ids(buffer, &mut ids);
        self.scratch.clear();
        for &j in &ids {
            let other = &problem.buffers[j as usize];
            let offset = self.offsets[j as usize].expect("the index holds placed buffers");
            if other.gaps.is_empty() && b.gaps.is_empty() {
                self.scratch
                    .push((offset, offset.saturating_add(other.size)));
                continue;
            }
            let scratch = &mut self.scratch;
            for_each_overlap(other, b, |theirs, ours| {
                scratch.push(theirs.shadow(offset, &ours, b.size));
            });
        }
        self.ids = ids;
        self.scratch.len()
    }

    /// The highest end among the placed buffers that overlap `buffer` in time (0 if none); no
    /// sort, unlike [`Placer::neighbours`]. With gaps, the lowest offset at which `buffer` lies
    /// wholly above them.
    pub fn highest_neighbour_end(&mut self, buffer: usize) -> u64 {
        let found = if self.gapped {
            self.gapped_neighbours(buffer)
        } else {
            self.index.query(buffer, &mut self.scratch)
        };
        self.scratch[..found]
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
        if fit == Fit::Stack {
            // Above every neighbour: only the highest end matters.
            return align_up(self.highest_neighbour_end(buffer), alignment).unwrap_or(u64::MAX);
        }
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
                        Fit::Stack => unreachable!("answered above"),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    /// Mostly short lifetimes, some long, some buffers placed: the index's neighbours are those
    /// a scan over every placed buffer finds, and the highest end agrees.
    #[test]
    fn neighbours_match_a_scan_of_every_placed_buffer() {
        let mut rng = StdRng::seed_from_u64(7);
        for round in 0..20 {
            let n = 50 + 20 * round;
            let buffers: Vec<Buffer> = (0..n)
                .map(|i| {
                    let lower = rng.random_range(0..200u64);
                    let length = match rng.random_range(0..10) {
                        0 => rng.random_range(1..200u64),
                        _ => rng.random_range(1..8u64),
                    };
                    let size = rng.random_range(1..100u64);
                    Buffer::new(format!("b{i}"), lower, lower + length, size)
                })
                .collect();
            let problem = Problem::new(buffers, None);
            let mut placer = Placer::new(&problem);
            for i in 0..n {
                if rng.random_range(0..3) > 0 {
                    let offset = rng.random_range(0..1000u64);
                    placer.place(i, offset);
                }
            }
            for i in 0..n {
                let b = &problem.buffers[i];
                let mut expected: Vec<(u64, u64)> = (0..n)
                    .filter(|&j| j != i)
                    .filter_map(|j| {
                        let o = &problem.buffers[j];
                        let overlaps = o.lower < b.upper && b.lower < o.upper;
                        let offset = placer.offset(j).filter(|_| overlaps)?;
                        Some((offset, offset + o.size))
                    })
                    .collect();
                expected.sort_unstable();
                let highest = expected.iter().map(|&(_, end)| end).max().unwrap_or(0);
                let mut found = placer.neighbours(i).to_vec();
                found.sort_unstable();
                assert_eq!(found, expected, "round {round}, buffer {i}");
                assert_eq!(placer.highest_neighbour_end(i), highest);
                // The indices the gapped path reads give the same ranges.
                let mut ids = Vec::new();
                placer.index.query_ids(i, &mut ids);
                let mut by_ids: Vec<(u64, u64)> = ids
                    .iter()
                    .map(|&j| {
                        let offset = placer.offset(j as usize).expect("placed");
                        (offset, offset + problem.buffers[j as usize].size)
                    })
                    .collect();
                by_ids.sort_unstable();
                assert_eq!(by_ids, expected, "round {round}, buffer {i}, by index");
            }
        }
    }
}
