//! The placement core shared by all allocators: which placed buffers overlap a buffer in time,
//! and where the buffer fits among them (first-fit, best-fit, stack, or XLA's best-fit).
//!
//! The placed buffers are indexed by time (`index.rs`): in buckets of time that keep them sorted
//! by offset (`buckets.rs`), so that a buffer's neighbours come in address order without a sort;
//! in unions over stretches of buckets (`unions.rs`) for lifetimes that span many; and, for the
//! few lifetimes too long for the buckets, in a segment tree (`long_tree.rs`), whose ranges are
//! also kept as unions by stretch of time (`long_unions.rs`), so that a query reads a union
//! where the tree holds thousands of buffers, in 32 bits while the addresses fit (`range.rs`).

mod buckets;
mod flat;
mod index;
mod long_tree;
mod long_unions;
mod prefetch;
mod range;
mod unions;

use crate::problem::{align_up, for_each_overlap, Problem};
use index::{Merged, Sorted, TimeIndex};

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

    /// Hints that the buffers `next` come next, in this order (as when a baseline places a
    /// fixed order): starts loading the records of the second, and the first cache lines of
    /// the lists that the first one's query reads (its records were asked for a step
    /// before). Changes no result; on a large problem, most of these are in no cache.
    pub(crate) fn prefetch(&self, next: &[usize]) {
        if let Some(&second) = next.get(1) {
            prefetch::line(&self.problem.buffers[second]);
            prefetch::line(&self.offsets[second]);
            self.index.prefetch_records(second);
        }
        if let Some(&first) = next.first() {
            if !self.gapped {
                self.index.prefetch_lists(first);
            }
        }
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
        if self.gapped {
            self.gapped_neighbours(buffer);
        } else {
            self.scratch.clear();
            let scratch = &mut self.scratch;
            self.index.for_each(buffer, |_, range| scratch.push(range));
        }
        self.scratch.sort_unstable_by_key(|&(offset, _)| offset);
        &self.scratch
    }

    /// [`Placer::neighbours`] for a problem with gaps, unsorted, in the scratch: the shadows of
    /// the piece pairs live at a common time.
    fn gapped_neighbours(&mut self, buffer: usize) {
        let problem = self.problem;
        let b = &problem.buffers[buffer];
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        self.index.for_each(buffer, |id, _| ids.push(id));
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
    }

    /// The highest end among the placed buffers that overlap `buffer` in time (0 if none); no
    /// sort, unlike [`Placer::neighbours`]. With gaps, the lowest offset at which `buffer` lies
    /// wholly above them.
    pub(crate) fn highest_neighbour_end(&mut self, buffer: usize) -> u64 {
        if !self.gapped && self.offsets[buffer].is_none() {
            return self.index.highest_end(buffer);
        }
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
        if fit == Fit::Stack {
            // Above every neighbour: only the highest end matters.
            return align_up(self.highest_neighbour_end(buffer), alignment).unwrap_or(u64::MAX);
        }
        let heap_top = self.peak;
        // The index's sorted answer serves an unplaced buffer without gaps; the others (a
        // placed buffer must not meet itself) take the exact neighbours.
        let sorted = if self.gapped || self.offsets[buffer].is_some() {
            Sorted::Wide(Merged::new(self.neighbours(buffer), &[]))
        } else {
            self.index.sorted(buffer)
        };
        match sorted {
            Sorted::Narrow(ranges) => choose(ranges, fit, size, alignment, heap_top),
            Sorted::Wide(ranges) => choose(ranges, fit, size, alignment, heap_top),
            Sorted::NarrowWide(ranges) => choose(ranges, fit, size, alignment, heap_top),
            Sorted::WideNarrow(ranges) => choose(ranges, fit, size, alignment, heap_top),
        }
    }
}

/// The offset `fit` (not [`Fit::Stack`]) chooses for `size` bytes aligned to `alignment`
/// among `ranges`, sorted by offset: the gaps are where no range lies below the highest end,
/// `heap_top` the peak of all placed buffers.
#[inline(always)]
fn choose(
    ranges: impl Iterator<Item = (u64, u64)>,
    fit: Fit,
    size: u64,
    alignment: u64,
    heap_top: u64,
) -> u64 {
    if fit == Fit::First {
        let mut top = 0u64; // the highest end seen so far while scanning upward
        for (offset, end) in ranges {
            if let (candidate, true) = fits_between(top, offset, size, alignment) {
                return candidate;
            }
            top = top.max(end);
        }
        return align_up(top, alignment).unwrap_or(u64::MAX);
    }
    debug_assert!(fit != Fit::Stack, "answered by the highest end");
    let (top, mut best) = smallest_gap(ranges, size, alignment);
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

/// The highest end among `ranges` (sorted by offset), and the length and aligned offset of the
/// smallest gap between them where `size` bytes aligned to `alignment` fit, the lowest of
/// equals; the gaps are where no range lies below the highest end so far.
fn smallest_gap(
    ranges: impl Iterator<Item = (u64, u64)>,
    size: u64,
    alignment: u64,
) -> (u64, Option<(u64, u64)>) {
    // Unaligned buffers (most) are scanned by a loop of about half the instructions.
    match alignment {
        1 => smallest_gap_with::<true>(ranges, size, 1),
        _ => smallest_gap_with::<false>(ranges, size, alignment),
    }
}

/// [`smallest_gap`], for `alignment` 1 if `UNALIGNED`: a gap `[low, high)` then fits when it
/// is not empty and `high - low >= size`, as [`fits_between`] finds.
#[inline(always)]
fn smallest_gap_with<const UNALIGNED: bool>(
    ranges: impl Iterator<Item = (u64, u64)>,
    size: u64,
    alignment: u64,
) -> (u64, Option<(u64, u64)>) {
    // Kept without a branch: most gaps on a long list fit, and whether the next is smaller
    // cannot be predicted. `for_each`, not `for`: a merged pair of lists is read without a
    // branch either ([`Merged`]'s `fold`). A gap's key is its length less one (a fitting gap
    // is not empty), `u64::MAX` until one fits; its offset is aligned once chosen.
    let mut top = 0u64;
    let (mut best_key, mut best_low) = (u64::MAX, 0u64);
    ranges.for_each(|(offset, end)| {
        let length = offset.wrapping_sub(top);
        let fitting = match UNALIGNED {
            true => (offset > top) & (length >= size),
            false => fits_between(top, offset, size, alignment).1,
        };
        let key = length.wrapping_sub(1);
        let better = fitting & (key < best_key);
        best_key = if better { key } else { best_key };
        best_low = if better { top } else { best_low };
        top = top.max(end);
    });
    let aligned = |low: u64| fits_between(low, 0, size, alignment).0;
    (
        top,
        (best_key != u64::MAX).then(|| (best_key + 1, aligned(best_low))),
    )
}

/// [`fits`] without branches: the aligned offset above `low`, and whether `size` bytes there
/// end at or below `high` (false for an empty or reversed `[low, high)`, or on overflow).
#[inline]
fn fits_between(low: u64, high: u64, size: u64, alignment: u64) -> (u64, bool) {
    let mask = alignment - 1;
    let (raised, over) = low.overflowing_add(mask);
    let offset = raised & !mask;
    let (end, past) = offset.overflowing_add(size);
    (offset, (high > low) & !over & !past & (end <= high))
}

/// The aligned offset at which `size` bytes fit in `[low, high)`, if any.
fn fits(low: u64, high: u64, size: u64, alignment: u64) -> Option<u64> {
    let offset = align_up(low, alignment)?;
    (offset.checked_add(size)? <= high).then_some(offset)
}

#[cfg(test)]
mod tests {
    use super::unions::random_sorted;
    use super::*;
    use crate::problem::Buffer;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    /// `n` buffers over 4,000 time steps: mostly short lifetimes, `long_percent` percent long
    /// ones (400 steps to the whole horizon), so that some lifetimes span many buckets and,
    /// when long ones are many, some go to the long tree; sizes from 1 (a few 0: placement
    /// must stay exact on them too; a few over 4 GiB, which also go to the tree), alignments
    /// 1 to 8.
    fn random_problem(rng: &mut StdRng, n: usize, long_percent: u32) -> Problem {
        let buffers = (0..n)
            .map(|i| {
                let lower = rng.random_range(0..4000u64);
                let length = match rng.random_range(0..100) {
                    c if c < long_percent => rng.random_range(400..4000u64),
                    _ => rng.random_range(1..8u64),
                };
                let size = match rng.random_range(0..100) {
                    0 | 1 => 0,
                    2 => 5_000_000_000, // larger than a bucket entry holds
                    _ => rng.random_range(1..100u64),
                };
                let mut buffer = Buffer::new(format!("b{i}"), lower, lower + length, size);
                buffer.alignment = 1 << rng.random_range(0..4);
                buffer
            })
            .collect();
        Problem::new(buffers, None)
    }

    /// The ranges of the placed buffers but `buffer` that overlap it in time, by a scan of
    /// every buffer, sorted.
    fn scanned(placer: &Placer<'_>, buffer: usize) -> Vec<(u64, u64)> {
        let problem = placer.problem();
        let b = &problem.buffers[buffer];
        let mut ranges: Vec<(u64, u64)> = (0..problem.buffers.len())
            .filter(|&j| j != buffer)
            .filter_map(|j| {
                let o = &problem.buffers[j];
                let overlaps = o.lower < b.upper && b.lower < o.upper;
                let offset = placer.offset(j).filter(|_| overlaps)?;
                Some((offset, offset + o.size))
            })
            .collect();
        ranges.sort_unstable();
        ranges
    }

    /// The offset `fit` chooses for `buffer`, written plainly from the definition: the gaps
    /// between the sorted ranges below their highest end, the smallest (or lowest) one where
    /// the aligned buffer fits, else above the highest end; XLA's variant also counts the gap
    /// from the highest end up to the peak of all placed buffers.
    fn reference_position(placer: &Placer<'_>, buffer: usize, fit: Fit) -> u64 {
        let b = &placer.problem().buffers[buffer];
        let align = |x: u64| x.div_ceil(b.alignment) * b.alignment;
        let ranges = scanned(placer, buffer);
        let top = ranges.iter().map(|r| r.1).max().unwrap_or(0);
        if fit == Fit::Stack {
            return align(top);
        }
        let mut gaps = Vec::new(); // (start, end) of each gap, upward
        let mut highest = 0;
        for &(offset, end) in &ranges {
            if offset > highest {
                gaps.push((highest, offset));
            }
            highest = highest.max(end);
        }
        if fit == Fit::BestWithHeapTop && placer.peak() > top {
            gaps.push((top, placer.peak()));
        }
        let fitting = gaps.iter().filter(|g| align(g.0) + b.size <= g.1);
        let chosen = match fit {
            Fit::First => fitting.take(1).next(),
            // The smallest, the lowest of equals.
            _ => fitting.min_by_key(|g| (g.1 - g.0, g.0)),
        };
        chosen.map_or(align(top), |g| align(g.0))
    }

    /// Some buffers placed at random offsets (overlapping), then queries of every buffer: the
    /// index's neighbours are those a scan over every placed buffer finds, and the highest end
    /// and the buffers it gives agree.
    #[test]
    fn neighbours_match_a_scan_of_every_placed_buffer() {
        let mut rng = StdRng::seed_from_u64(7);
        for round in 0..20 {
            let n = 50 + 20 * round;
            let problem = random_problem(&mut rng, n, 5 * (round as u32 % 5));
            let mut placer = Placer::new(&problem);
            for i in 0..n {
                if rng.random_range(0..3) > 0 {
                    let offset = rng.random_range(0..1000u64);
                    placer.place(i, offset);
                }
            }
            for i in 0..n {
                let expected = scanned(&placer, i);
                let highest = expected.iter().map(|&(_, end)| end).max().unwrap_or(0);
                let mut found = placer.neighbours(i).to_vec();
                found.sort_unstable();
                assert_eq!(found, expected, "round {round}, buffer {i}");
                assert_eq!(placer.highest_neighbour_end(i), highest);
                // The indices the gapped path reads give the same ranges.
                let mut ids = Vec::new();
                placer.index.for_each(i, |id, _| ids.push(id));
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

    /// Buffers placed one by one in a random order, each by a random fit (some at a random
    /// offset instead, overlapping others): every position the placer gives, through the
    /// buckets, the unions and the long tree, is the one a scan of every placed buffer gives.
    /// The rounds use lifetimes spanning many buckets and the long tree (checked).
    #[test]
    fn positions_match_the_gap_scan_of_every_placed_buffer() {
        let mut rng = StdRng::seed_from_u64(11);
        let (mut wide, mut long) = (0, 0);
        for round in 0..40 {
            let n = 20 + 25 * round;
            let problem = random_problem(&mut rng, n, 5 * (round as u32 % 4));
            let mut placer = Placer::new(&problem);
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, rng.random_range(0..=i));
            }
            for &i in &order {
                wide += usize::from(placer.index.buckets_spanned(i) >= 3);
                long += usize::from(placer.index.is_long(i));
                let fit = [Fit::First, Fit::Best, Fit::Stack, Fit::BestWithHeapTop]
                    [rng.random_range(0..4)];
                let expected = reference_position(&placer, i, fit);
                assert_eq!(
                    placer.position(i, fit),
                    expected,
                    "round {round}, {i}, {fit:?}"
                );
                let offset = match rng.random_range(0..8) {
                    0 => rng.random_range(0..2 * placer.peak().min(1 << 40) + 10),
                    _ => expected,
                };
                placer.place(i, offset);
            }
        }
        assert!(
            wide > 1000 && long > 50,
            "{wide} wide lifetimes, {long} long"
        );
    }

    /// As above, with buffers placed about the highest 32-bit address (none larger than 4
    /// GiB): the index joins its unions in 32 bits until a range ends above it, then in 64,
    /// and every position is still that of the scan in 64 bits. Both widths are checked.
    #[test]
    fn positions_match_the_gap_scan_about_the_highest_32_bit_address() {
        let mut rng = StdRng::seed_from_u64(13);
        let (mut narrow, mut wide) = (0, 0);
        for round in 0..30 {
            let n = 40 + 20 * round;
            let problem = random_problem(&mut rng, n, 10 + 5 * (round as u32 % 3));
            let small = |mut b: Buffer| {
                b.size = b.size.min(90);
                b
            };
            let problem = Problem::new(problem.buffers.into_iter().map(small).collect(), None);
            let mut placer = Placer::new(&problem);
            let base = u32::MAX as u64 - 16 * n as u64;
            for i in 0..n {
                let (spanned, long) = (placer.index.buckets_spanned(i), placer.index.is_long(i));
                if spanned >= 3 || long {
                    narrow += usize::from(placer.index.is_narrow());
                    wide += usize::from(!placer.index.is_narrow());
                }
                let fit = [Fit::First, Fit::Best, Fit::BestWithHeapTop][rng.random_range(0..3)];
                let expected = reference_position(&placer, i, fit);
                assert_eq!(placer.position(i, fit), expected, "round {round}, {i}");
                let offset = match rng.random_range(0..3) {
                    0 => expected,
                    _ => base + rng.random_range(0..16 * n as u64 + 40),
                };
                placer.place(i, offset);
            }
        }
        assert!(narrow > 200 && wide > 200, "{narrow} narrow, {wide} wide");
    }

    /// The ranges of `a` and `b` merged by [`Merged`], read through `fold`.
    fn fold_merged<A: range::Range, B: range::Range>(a: &[A], b: &[B]) -> Vec<(u64, u64)> {
        let mut ranges = Vec::new();
        Merged::new(a, b).for_each(|range| ranges.push(range));
        ranges
    }

    /// Two sorted lists with many equal offsets between and within them (and empty ranges),
    /// of like lengths or the second far longer (read in runs): [`Merged`] read through `fold`
    /// (as `for_each` does) gives the ranges `next` gives, in the same order, and so does the
    /// pair with either list or both in 32 bits.
    #[test]
    fn folding_a_merged_pair_gives_the_ranges_in_the_order_of_next() {
        let mut rng = StdRng::seed_from_u64(13);
        for round in 0..600 {
            let longer = [round % 23, 4 * (round % 17) + round % 50][round % 2];
            let (a, b) = (
                random_sorted(&mut rng, round % 17, 40, 10),
                random_sorted(&mut rng, longer, 40, 10),
            );
            // A `for` loop calls `next`.
            let mut stepped = Vec::new();
            for range in Merged::new(&a, &b) {
                stepped.push(range);
            }
            let mut folded = Vec::new();
            Merged::new(&a, &b).for_each(|range| folded.push(range));
            assert_eq!(folded, stepped, "round {round}, {a:?} and {b:?}");
            assert_eq!(stepped.len(), a.len() + b.len());
            let narrow: Vec<(u32, u32)> = b.iter().map(|r| (r.0 as u32, r.1 as u32)).collect();
            assert_eq!(
                fold_merged(&a, &narrow),
                stepped,
                "round {round}, in 32 bits"
            );
            // The first list in 32 bits too, with the second in either width.
            let narrow_a: Vec<(u32, u32)> = a.iter().map(|r| (r.0 as u32, r.1 as u32)).collect();
            let both = fold_merged(&narrow_a, &narrow);
            assert_eq!(both, stepped, "round {round}, both in 32 bits");
            let first = fold_merged(&narrow_a, &b);
            assert_eq!(first, stepped, "round {round}, the first in 32 bits");
            let mut stepped_narrow = Vec::new();
            for range in Merged::new(&narrow_a, &narrow) {
                stepped_narrow.push(range);
            }
            assert_eq!(stepped_narrow, stepped, "round {round}, stepped in 32 bits");
        }
    }
}
