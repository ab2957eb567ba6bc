//! The placed buffers indexed by time: which of them overlap a buffer's lifetime, in address
//! order for the gap scan.

use super::buckets::{Buckets, Entry, Window, LARGEST, WIDEST};
use super::long_tree::LongTree;
use super::long_unions::Block;
use super::prefetch;
use super::range::{top, Range};
use super::unions::{join, Unions};
use crate::problem::Problem;

/// How many bucket entries the index may hold per buffer: buffers are stored in the buckets,
/// shortest lifetime first, while the entries stay within this many times the buffers (and
/// meet at most [`MOST_BUCKETS_MET`] buckets each); the rest go to the long tree. Every
/// lifetime within two buckets always fits (at most two entries each). An entry costs 20
/// bytes (with its buffer's index), but scanning it costs a query far less than gathering and
/// sorting the same buffer from the tree: on 1M random buffers with 1% living up to 100,000
/// steps, best-fit took 31.6G instructions with 8 (every long buffer in the buckets) and
/// 42.5G with 4 (the longest third in the tree), for 4% more memory (measured when an entry
/// took 28 bytes, before the tree kept unions).
const ENTRIES_PER_BUFFER: usize = 8;

/// The most buckets a buffer's lifetime may meet in the buckets. A long buffer there is read
/// at every query beside it; in the tree, mostly through a union with its neighbours in
/// address ([`LongUnions`]), at a cost per query that pays when such buffers are many. On 1M
/// random buffers (`bench --footprint --algo tflite`, one run each, side by side), with 5%
/// living up to 100,000 steps: 23.3 s with no such limit, 15.3 s with 256, 11.1 s with 64,
/// 10.0 s with 32; with 5% up to 10,000 steps (which meet at most about 70 buckets): 3.7 s
/// with no limit, 3.2 s with 64, 4.0 s with 32 (xla there: 6.6 s before the tree kept unions,
/// 6.2 s with 64, 7.4 s with 32); with 1% up to 100,000 steps: 3.8 s with 256, 3.5 s with 64,
/// 3.3 s with 32.
///
/// [`LongUnions`]: super::long_unions::LongUnions
const MOST_BUCKETS_MET: usize = 64;

/// How many cache lines of each list a query reads are loaded ahead of it.
const PREFETCH_LINES: usize = 8;

/// The placed buffers indexed by time, so that those overlapping a buffer's lifetime are found
/// without scanning all placed buffers. Times are ranks among the problem's distinct time
/// points. Most buffers are in [`Buckets`], which keep them sorted by offset; those whose
/// lifetimes span too many buckets (see [`ENTRIES_PER_BUFFER`]) are in a [`LongTree`].
#[derive(Clone, Debug)]
pub(super) struct TimeIndex {
    /// Each buffer's lifetime as ranks `[lo, hi)`.
    spans: Vec<(u32, u32)>,
    /// Whether each buffer is in the long tree (not in the buckets).
    is_long: Vec<bool>,
    buckets: Buckets,
    /// The unions over stretches of buckets, for lifetimes spanning more than two.
    unions: Unions,
    long: LongTree,
    /// Whether the unions and the long tree's node unions are kept in 32 bits (every address
    /// stored so far fits), so that a query joins them in 32 bits (`narrow`), else in 64
    /// (`wide`). Once wide, they stay so.
    is_narrow: bool,
    /// Scratch for the long buffers' ranges gathered one by one.
    raw: Vec<(u64, u64)>,
    /// Scratch for joining the unions and the long buffers' ranges, in either width.
    narrow: Joined<(u32, u32)>,
    wide: Joined<(u64, u64)>,
}

impl TimeIndex {
    /// The empty index for `problem`'s buffers.
    pub(super) fn new(problem: &Problem) -> TimeIndex {
        let (spans, points) = ranks(problem);
        let width = bucket_width(&spans);
        let is_long = long_lifetimes(problem, &spans, width, points);
        let bucketed = spans.iter().zip(&is_long).filter(|p| !*p.1).map(|p| *p.0);
        let buckets = Buckets::new(width, points, bucketed);
        let long = LongTree::new(&spans, &is_long);
        // The most buckets a lifetime spans (as a query: long ones too).
        let widest = spans.iter().map(|&(lo, hi)| {
            let (first, last) = buckets.span(lo, hi);
            last - first + 1
        });
        let unions = Unions::new(buckets.count(), widest.max().unwrap_or(0));
        TimeIndex {
            spans,
            is_long,
            buckets,
            unions,
            long,
            is_narrow: true,
            raw: Vec::new(),
            narrow: Joined::default(),
            wide: Joined::default(),
        }
    }

    /// Empties the index, keeping its layout.
    pub(super) fn clear(&mut self) {
        self.buckets.clear();
        self.unions.clear();
        self.long.clear();
    }

    /// Stores `buffer` at `[offset, end)`. Each buffer is stored at most once.
    pub(super) fn insert(&mut self, buffer: usize, offset: u64, end: u64) {
        if self.is_narrow && !<(u32, u32)>::fits(end) {
            self.is_narrow = false;
            self.unions.widen();
            self.long.widen();
        }
        if self.is_long[buffer] {
            self.long.insert(buffer, offset, end);
        } else {
            let (lo, hi) = self.spans[buffer];
            self.buckets.insert(buffer, lo, hi, offset, end - offset);
            let (first, last) = self.buckets.span(lo, hi);
            self.unions.insert(first, last, offset, end);
        }
    }

    /// The address ranges of the stored buffers overlapping the lifetime of `buffer`, which is
    /// not stored itself, sorted by offset, for the gap scan. When the lifetime lies within
    /// two buckets, one range per buffer: the buckets' entries, already in address order,
    /// filtered by time and merged. Otherwise the buckets at either end filtered, and for the
    /// buckets in between (whose buffers all overlap the lifetime) the [`Unions`] of their
    /// ranges, joined: fewer ranges, with the same gaps and the same highest end. The long
    /// buffers' unions are joined likewise ([`Joined::add_long`]), but for the union of its
    /// block, often the longest list, merged with the rest as it is read.
    pub(super) fn sorted(&mut self, buffer: usize) -> Sorted<'_> {
        let (lo, hi) = self.spans[buffer];
        let (buckets, others, long) = (&self.buckets, &self.unions, &self.long);
        let index = (buckets, others, long);
        match self.is_narrow {
            true => match self.narrow.sorted(index, &mut self.raw, buffer, (lo, hi)) {
                (rest, Block::Narrow(block)) => Sorted::Narrow(Merged::new(rest, block)),
                (rest, Block::Wide(block)) => Sorted::NarrowWide(Merged::new(rest, block)),
            },
            false => match self.wide.sorted(index, &mut self.raw, buffer, (lo, hi)) {
                (rest, Block::Narrow(block)) => Sorted::WideNarrow(Merged::new(rest, block)),
                (rest, Block::Wide(block)) => Sorted::Wide(Merged::new(rest, block)),
            },
        }
    }

    /// The highest end among the stored buffers overlapping the lifetime of `buffer`, which is
    /// not stored itself (0 if none): in the buckets at its ends from the highest offset down
    /// ([`Buckets::highest_end`]), and in between through the [`Unions`] like
    /// [`TimeIndex::sorted`] (a union's last range ends highest); the long buffers likewise
    /// ([`LongTree::highest_end`]).
    pub(super) fn highest_end(&mut self, buffer: usize) -> u64 {
        let (lo, hi) = self.spans[buffer];
        let (first, last) = self.buckets.span(lo, hi);
        let buckets = &self.buckets;
        let mut highest = buckets.highest_end(first, buckets.window(first, lo, hi, false), 0);
        if last > first {
            highest = buckets.highest_end(last, buckets.window(last, lo, hi, false), highest);
        }
        if last > first + 1 {
            match self.is_narrow {
                true => {
                    self.unions
                        .cover(buckets, first + 1, last, &mut self.narrow.scratch, |u| {
                            highest = highest.max(top(u))
                        })
                }
                false => self
                    .unions
                    .cover(buckets, first + 1, last, &mut self.wide.scratch, |u| {
                        highest = highest.max(top(u))
                    }),
            }
        }
        highest.max(self.long.highest_end(buffer, &mut self.raw))
    }

    /// Starts loading the records of `buffer`, for a query a little later.
    pub(super) fn prefetch_records(&self, buffer: usize) {
        prefetch::line(&self.spans[buffer]);
        prefetch::line(&self.is_long[buffer]);
        self.long.prefetch_records(buffer);
    }

    /// Starts loading the first lines of what a sorted query of `buffer` reads: its buckets'
    /// runs and its block's union.
    pub(super) fn prefetch_lists(&self, buffer: usize) {
        let (lo, hi) = self.spans[buffer];
        let (first, last) = self.buckets.span(lo, hi);
        prefetch::lines(self.buckets.run(first), PREFETCH_LINES);
        if last != first {
            prefetch::lines(self.buckets.run(last), PREFETCH_LINES);
        }
        self.long.prefetch_block(buffer, PREFETCH_LINES);
        if !self.is_long[buffer] {
            self.unions.prefetch_tops(first, last);
        }
    }

    /// How many buckets the lifetime of `buffer` spans.
    #[cfg(test)]
    pub(super) fn buckets_spanned(&self, buffer: usize) -> usize {
        let (lo, hi) = self.spans[buffer];
        let (first, last) = self.buckets.span(lo, hi);
        last - first + 1
    }

    /// Whether the unions are kept, and joined, in 32 bits.
    #[cfg(test)]
    pub(super) fn is_narrow(&self) -> bool {
        self.is_narrow
    }

    /// Whether `buffer` is in the long tree.
    #[cfg(test)]
    pub(super) fn is_long(&self, buffer: usize) -> bool {
        self.is_long[buffer]
    }

    /// Calls `visit` with the index and address range of every stored buffer but `buffer`
    /// itself that overlaps the lifetime of `buffer`, once each, in no particular order.
    pub(super) fn for_each(&self, buffer: usize, mut visit: impl FnMut(u32, (u64, u64))) {
        let (lo, hi) = self.spans[buffer];
        let (first, last) = self.buckets.span(lo, hi);
        for k in first..=last {
            // An entry met in an earlier bucket of the lifetime is not met again.
            let window = self.buckets.window(k, lo, hi, k > first);
            let run = self.buckets.run(k).iter();
            for (e, &id) in run.zip(self.buckets.run_ids(k)) {
                if e.keep(window) && id as usize != buffer {
                    visit(id, e.range());
                }
            }
        }
        self.long
            .for_each(buffer, |p| visit(p.buffer, (p.offset, p.end)));
    }
}

/// Sorted lists of ranges joined into one, compacted (a list alone is kept as it is): the
/// same gaps and highest end as all their ranges sorted, in fewer ranges. The lists are kept
/// as they come and joined at [`Joined::finish`], shortest first: a list is copied once more
/// for each join after its own, and the longest come last. In `R`, the width the index keeps
/// its unions in.
#[derive(Clone, Debug, Default)]
struct Joined<R> {
    ranges: Vec<R>,
    /// For the next join.
    spare: Vec<R>,
    /// The lists to join, one after another, and where each starts and ends there.
    pending: Vec<R>,
    lists: Vec<(usize, usize)>,
    /// Scratch for the unions made from buckets' runs.
    scratch: Vec<R>,
    /// Scratch for the sorted queries.
    first: Ranges<R>,
    second: Ranges<R>,
    merged: Ranges<R>,
}

impl<R: Range> Joined<R> {
    fn clear(&mut self) {
        self.ranges.clear();
        self.pending.clear();
        self.lists.clear();
    }

    /// [`TimeIndex::sorted`] in this width, for `buffer` (lifetime `[lo, hi)`, not stored
    /// itself) in `(buckets, unions, long)`: the ranges but its block's union, which is
    /// returned beside them (`raw` is scratch).
    fn sorted<'a>(
        &'a mut self,
        (buckets, unions, long): (&Buckets, &Unions, &'a LongTree),
        raw: &mut Vec<(u64, u64)>,
        buffer: usize,
        (lo, hi): (u32, u32),
    ) -> (&'a [R], Block<'a>) {
        let (first, last) = buckets.span(lo, hi);
        let mut out = std::mem::take(&mut self.merged);
        out.clear();
        let window = |k: usize, starting: bool| buckets.window(k, lo, hi, starting);
        if last == first {
            out.keep(buckets.run(first), window(first, false));
        } else {
            // An entry of the last bucket met in an earlier one too is kept there, or is in
            // the unions of those in between.
            self.first.clear();
            self.first.keep(buckets.run(first), window(first, false));
            self.second.clear();
            self.second.keep(buckets.run(last), window(last, true));
            out.merge(self.first.as_slice(), self.second.as_slice());
        }
        let block = self.join(buckets, unions, long, raw, buffer, (first, last));
        let mut joined = std::mem::take(&mut self.first);
        if joined.merge_joined(&out, self.as_slice()) {
            std::mem::swap(&mut out, &mut joined);
        }
        self.first = joined;
        self.merged = out;
        (self.merged.as_slice(), block)
    }

    /// The joined list, once [`Joined::finish`]ed.
    fn as_slice(&self) -> &[R] {
        &self.ranges
    }

    /// Joins what a sorted query of `buffer`, spanning buckets `(first, last)` of `buckets`,
    /// reads beside its end buckets' entries and its block's union, which is returned: the
    /// [`Unions`] over the buckets in between, and the long buffers' ranges ([`add_long`];
    /// `raw` is scratch).
    ///
    /// [`add_long`]: Joined::add_long
    fn join<'a>(
        &mut self,
        buckets: &Buckets,
        unions: &Unions,
        long: &'a LongTree,
        raw: &mut Vec<(u64, u64)>,
        buffer: usize,
        (first, last): (usize, usize),
    ) -> Block<'a> {
        self.clear();
        if last > first + 1 {
            let mut scratch = std::mem::take(&mut self.scratch);
            unions.cover(buckets, first + 1, last, &mut scratch, |union| {
                self.add(union)
            });
            self.scratch = scratch;
        }
        let block = self.add_long(long, buffer, raw);
        self.finish();
        block
    }

    /// Keeps `sorted`, sorted by offset, to join.
    fn add(&mut self, sorted: &[R]) {
        if !sorted.is_empty() {
            let start = self.pending.len();
            self.pending.extend_from_slice(sorted);
            self.lists.push((start, self.pending.len()));
        }
    }

    /// Joins the lists kept, shortest first (the result is the same in any order). A list
    /// alone (most queries' long buffers gathered below their block) is taken as it is:
    /// sorted, not compacted, it has the same gaps and highest end.
    fn finish(&mut self) {
        if self.lists.len() == 1 {
            return std::mem::swap(&mut self.ranges, &mut self.pending);
        }
        self.lists.sort_unstable_by_key(|&(start, end)| end - start);
        for &(start, end) in &self.lists {
            self.spare.clear();
            join(&self.ranges, &self.pending[start..end], &mut self.spare);
            std::mem::swap(&mut self.ranges, &mut self.spare);
        }
    }

    /// Joins the ranges of the long buffers overlapping the lifetime of `buffer` (not stored
    /// itself) but those covering its block, whose union is returned: together, the same gaps
    /// and highest end as all of them ([`LongTree::cover`]). `raw` is scratch.
    fn add_long<'a>(
        &mut self,
        long: &'a LongTree,
        buffer: usize,
        raw: &mut Vec<(u64, u64)>,
    ) -> Block<'a> {
        raw.clear();
        let block = long.cover(buffer, raw, |union| self.add(union));
        if !raw.is_empty() {
            raw.sort_unstable_by_key(|&(offset, _)| offset);
            let start = self.pending.len();
            let narrowed = raw.iter().map(|&(offset, end)| R::new(offset, end));
            self.pending.extend(narrowed);
            self.lists.push((start, self.pending.len()));
        }
        block
    }
}

/// A query's ranges sorted by offset, as [`TimeIndex::sorted`] gives them: with its block's
/// union in 32 bits or in 64.
pub(super) enum Sorted<'a> {
    Narrow(Merged<'a, (u32, u32), (u32, u32)>),
    Wide(Merged<'a, (u64, u64), (u64, u64)>),
    /// A narrow index's query with no long buffer's block (given empty, in 64 bits).
    NarrowWide(Merged<'a, (u32, u32), (u64, u64)>),
    WideNarrow(Merged<'a, (u64, u64), (u32, u32)>),
}

/// The ranges of two lists sorted by offset, in offset order, read without writing them; the
/// second, `b`, a block's union, in either width.
pub(super) struct Merged<'a, A, R> {
    a: &'a [A],
    b: &'a [R],
}

impl<'a, A: Range, R: Range> Merged<'a, A, R> {
    /// The ranges of `a` and `b`, both sorted by offset.
    pub(super) fn new(a: &'a [A], b: &'a [R]) -> Merged<'a, A, R> {
        Merged { a, b }
    }
}

impl<A: Range, R: Range> Iterator for Merged<'_, A, R> {
    type Item = (u64, u64);

    #[inline]
    fn next(&mut self) -> Option<(u64, u64)> {
        match (self.a.first(), self.b.first()) {
            (Some(&x), Some(&y)) => {
                if x.offset() <= y.offset() {
                    self.a = &self.a[1..];
                    Some(x.wide())
                } else {
                    self.b = &self.b[1..];
                    Some(y.wide())
                }
            }
            (Some(&x), None) => {
                self.a = &self.a[1..];
                Some(x.wide())
            }
            (None, Some(&y)) => {
                self.b = &self.b[1..];
                Some(y.wide())
            }
            (None, None) => None,
        }
    }

    /// The ranges in the order of [`Merged::next`], the next one chosen without a branch:
    /// which list gives it cannot be predicted.
    #[inline]
    fn fold<B, F: FnMut(B, (u64, u64)) -> B>(self, init: B, mut f: F) -> B {
        let (a, b) = (self.a, self.b);
        if b.len() >= RUNS_FROM * a.len() {
            return fold_runs(a, b, init, f);
        }
        let (mut acc, mut i, mut j) = (init, 0, 0);
        while i < a.len() && j < b.len() {
            // `next` takes from `a` on equal offsets.
            let (x, y) = (a[i].wide(), b[j].wide());
            let take_a = x.0 <= y.0;
            acc = f(acc, if take_a { x } else { y });
            i += usize::from(take_a);
            j += usize::from(!take_a);
        }
        let acc = a[i..].iter().fold(acc, |acc, &x| f(acc, x.wide()));
        b[j..].iter().fold(acc, |acc, &y| f(acc, y.wide()))
    }
}

/// How many times longer than `a` the list `b` of a [`Merged`] pair must be for `fold` to read
/// it in runs ([`fold_runs`]) rather than choose every range without a branch.
const RUNS_FROM: usize = 4;

/// [`Merged`]'s `fold` for a `b` much longer than `a` (a query's block union against its other
/// ranges): the ranges of `b` below each range of `a` read as a run, with one mispredicted
/// branch at its end, where the branch-free choice waits at every range for the one before.
#[inline(always)]
fn fold_runs<B, F: FnMut(B, (u64, u64)) -> B, A: Range, R: Range>(
    a: &[A],
    b: &[R],
    init: B,
    mut f: F,
) -> B {
    let (mut acc, mut j) = (init, 0);
    for &x in a {
        let x = x.wide();
        // `next` takes from `a` on equal offsets.
        while j < b.len() && b[j].offset() < x.0 {
            acc = f(acc, b[j].wide());
            j += 1;
        }
        acc = f(acc, x);
    }
    b[j..].iter().fold(acc, |acc, &y| f(acc, y.wide()))
}

/// Address ranges written without branches, in width `R`: the vector only grows, the first
/// `len` are current.
#[derive(Clone, Debug)]
struct Ranges<R> {
    data: Vec<R>,
    len: usize,
}

impl<R> Default for Ranges<R> {
    fn default() -> Ranges<R> {
        Ranges {
            data: Vec::new(),
            len: 0,
        }
    }
}

impl<R: Range> Ranges<R> {
    fn clear(&mut self) {
        self.len = 0;
    }

    fn as_slice(&self) -> &[R] {
        &self.data[..self.len]
    }

    /// `extra` writable places after the current ranges.
    fn room(&mut self, extra: usize) -> &mut [R] {
        let need = self.len + extra;
        if self.data.len() < need {
            self.data.resize(need.next_power_of_two(), R::new(0, 0));
        }
        &mut self.data[self.len..need]
    }

    /// Appends the ranges of the entries of `run` that [`Entry::keep`] keeps for `window`,
    /// in order (in width `R`: every entry's end fits it, as the index's width follows them).
    fn keep(&mut self, run: &[Entry], window: Window) {
        let out = self.room(run.len());
        let mut kept = 0;
        for e in run {
            let (offset, end) = e.range();
            out[kept] = R::new(offset, end);
            kept += usize::from(e.keep(window));
        }
        self.len += kept;
    }

    /// Appends `a` and `b`, both sorted by offset, merged in offset order.
    fn merge(&mut self, a: &[R], b: &[R]) {
        let out = self.room(a.len() + b.len());
        let (mut i, mut j, mut k) = (0, 0, 0);
        while i < a.len() && j < b.len() {
            let (x, y) = (a[i], b[j]);
            let take_a = x.offset() <= y.offset();
            out[k] = if take_a { x } else { y };
            i += usize::from(take_a);
            j += usize::from(!take_a);
            k += 1;
        }
        out[k..k + a.len() - i].copy_from_slice(&a[i..]);
        k += a.len() - i;
        out[k..k + b.len() - j].copy_from_slice(&b[j..]);
        self.len += a.len() + b.len();
    }

    /// Empties these ranges and, if `joined` is not empty, merges it and `out` into them;
    /// whether it did.
    fn merge_joined(&mut self, out: &Ranges<R>, joined: &[R]) -> bool {
        if joined.is_empty() {
            return false;
        }
        self.clear();
        self.merge(out.as_slice(), joined);
        true
    }
}

/// Each buffer's `(lower, upper)` as ranks among the distinct times of all of them, and the
/// number of ranks. Times within a range of a few per buffer are ranked through a table
/// (no sort); others by sorting and binary search.
fn ranks(problem: &Problem) -> (Vec<(u32, u32)>, usize) {
    let buffers = &problem.buffers;
    let times = buffers.iter().flat_map(|b| [b.lower, b.upper]);
    let (Some(first), Some(last)) = (times.clone().min(), times.clone().max()) else {
        return (Vec::new(), 1);
    };
    let range = last - first;
    if range < 8 * buffers.len() as u64 {
        // rank[t - first]: 1 where some buffer starts or ends, then how many such times
        // come before t.
        let mut rank = vec![0u32; range as usize + 1];
        times.for_each(|t| rank[(t - first) as usize] = 1);
        let mut count = 0;
        for r in rank.iter_mut() {
            (*r, count) = (count, count + *r);
        }
        let at = |t: u64| rank[(t - first) as usize];
        let spans = buffers.iter().map(|b| (at(b.lower), at(b.upper)));
        return (spans.collect(), count as usize);
    }
    let mut sorted: Vec<u64> = times.collect();
    sorted.sort_unstable();
    sorted.dedup();
    let at = |t: u64| sorted.partition_point(|&p| p < t) as u32;
    let spans = buffers.iter().map(|b| (at(b.lower), at(b.upper)));
    (spans.collect(), sorted.len())
}

/// The bucket width in ranks: twice the lifetime (in ranks) that four in five buffers do not
/// exceed, so that most lifetimes lie within one bucket and nearly all within two (on
/// random problems with short lifetimes, narrower buckets, down to the lifetime itself, were
/// slower: more lifetimes straddle two buckets, whose entries must be merged).
fn bucket_width(spans: &[(u32, u32)]) -> u32 {
    let mut lengths: Vec<u32> = spans
        .iter()
        .map(|&(lo, hi)| hi.saturating_sub(lo))
        .collect();
    if lengths.is_empty() {
        return 1;
    }
    let at = lengths.len() * 4 / 5;
    let (_, &mut length, _) = lengths.select_nth_unstable(at);
    length.saturating_mul(2).clamp(1, WIDEST)
}

/// Which buffers go to the long tree: those whose lifetimes meet the most buckets, while the
/// others' entries would exceed [`ENTRIES_PER_BUFFER`] per buffer, those meeting more than
/// [`MOST_BUCKETS_MET`], and those larger than a bucket entry holds ([`LARGEST`]).
fn long_lifetimes(problem: &Problem, spans: &[(u32, u32)], width: u32, points: usize) -> Vec<bool> {
    let buckets_met = |&(lo, hi): &(u32, u32)| {
        let last = lo.max(hi.saturating_sub(1));
        (last / width - lo / width) as usize + 1
    };
    // by_met[m]: how many buffers meet m buckets.
    let mut by_met = vec![0usize; points / width as usize + 2];
    spans.iter().for_each(|s| by_met[buckets_met(s)] += 1);
    let budget = ENTRIES_PER_BUFFER * spans.len();
    let (mut entries, mut most) = (0usize, 0usize);
    for (met, &count) in by_met.iter().enumerate() {
        if entries + met * count > budget {
            break;
        }
        entries += met * count;
        most = met;
    }
    let large = problem.buffers.iter().map(|b| b.size > LARGEST);
    spans
        .iter()
        .zip(large)
        .map(|(s, large)| large || buckets_met(s) > most.min(MOST_BUCKETS_MET))
        .collect()
}
