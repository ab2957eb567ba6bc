//! What the buckets' buffers cover in address over stretches of buckets: a tree of unions,
//! for lifetimes that span many buckets.

use super::buckets::Buckets;
use super::flat::{for_each_cover, leaves_under};
use super::range::{Lists, Range};

/// For every node of a binary tree over the buckets, up to a height, the union of the address
/// ranges of the buffers stored in or below it: ranges sorted by offset, each starting above
/// the end of the one before (the form [`compact`] gives). A buffer whose lifetime spans many
/// buckets meets every buffer stored in the buckets strictly inside its lifetime, and its gaps
/// are the same whether it scans those buffers or the unions of the `O(log n)` nodes covering
/// those buckets; over a long stretch of time a union is a few ranges where its buffers are
/// thousands.
///
/// A buffer is stored at the nodes that together cover exactly its buckets (a segment tree's
/// canonical cover): their unions, and those of their ancestors, take its range, and each
/// such node also keeps it in `whole`, the ranges of the buffers covering all its buckets. A
/// query reads the unions of the nodes covering its buckets and, above them, the `whole` of
/// the nodes on the paths to its first and last bucket: `O(log n)` lists for a store or a
/// query however many buckets either spans. Adding a range to a union is a search from where
/// an even spread of its ranges would put it ([`interpolated`]); usually the range falls
/// inside one already there, and nothing moves.
///
/// The lowest [`RUN_LEVELS`] levels keep nothing: a query compacts their buckets' runs
/// (sorted by offset already) instead. Their nodes are the most numerous and their unions the
/// longest, so keeping them would cost every store the most cache misses, for the few queries
/// that read at most two such nodes a level.
#[derive(Clone, Debug, Default)]
pub(super) struct Unions {
    shape: Shape,
    /// In 32 bits while every address fits ([`Unions::widen`]).
    union: Lists,
    whole: Lists,
}

/// How many levels, from the leaves up, are made from the buckets' runs at each query
/// rather than kept.
const RUN_LEVELS: u32 = 2;

impl Unions {
    /// The tree over `buckets` buckets for stores and queries spanning at most `widest` of
    /// them; empty (nothing stored, no query expected) when `widest` is below 3, since a
    /// query spanning at most two buckets has none strictly inside.
    pub(super) fn new(buckets: usize, widest: usize) -> Unions {
        if widest < 3 {
            return Unions::default();
        }
        let leaves = buckets.next_power_of_two();
        Unions {
            shape: Shape {
                leaves,
                height: widest.ilog2().min(leaves.ilog2()),
            },
            union: Lists::new(2 * leaves),
            whole: Lists::new(leaves),
        }
    }

    /// Whether the tree is empty (no query spans more than two buckets).
    pub(super) fn is_empty(&self) -> bool {
        self.union.len() == 0
    }

    /// Keeps the unions in 64 bits from now on (they widen by themselves once a range ends
    /// above 4 GiB; this widens them with the other lists a query reads).
    pub(super) fn widen(&mut self) {
        self.union.widen();
        self.whole.widen();
    }

    /// Starts loading the last range of the unions of the lowest kept nodes above buckets
    /// `first` and `last`: where storing a buffer of those buckets starts its search.
    pub(super) fn prefetch_tops(&self, first: usize, last: usize) {
        if self.is_empty() {
            return;
        }
        for bucket in [first, last] {
            let node = (self.shape.leaves + bucket) >> RUN_LEVELS;
            self.union.prefetch_top(node);
        }
    }

    /// Adds `[offset, end)`, a buffer stored in buckets `first..=last`.
    pub(super) fn insert(&mut self, first: usize, last: usize, offset: u64, end: u64) {
        if self.is_empty() {
            return;
        }
        let (shape, union, whole) = (self.shape, &mut self.union, &mut self.whole);
        shape.for_each_cover(first, last + 1, |node| {
            if shape.is_kept(node) {
                add_to(union, node, offset, end);
                add_to(whole, node, offset, end);
            }
        });
        // The ancestors of the cover: the nodes above `first` or `last` not inside the stretch,
        // from each upward, up to the first whose union covered the range already (a node's
        // union holds its children's, so all above it cover the range too).
        let ends = [first, last];
        let ends = if first == last { &ends[..1] } else { &ends[..] };
        for &bucket in ends {
            let mut node = shape.leaves + bucket;
            for level in 0..=shape.height {
                if shape.is_kept(node)
                    && shape.is_outside(node, level, first, last + 1)
                    && !add_to(union, node, offset, end)
                {
                    break;
                }
                node /= 2;
            }
        }
    }

    /// Empties every union.
    pub(super) fn clear(&mut self) {
        self.union.clear();
        self.whole.clear();
    }

    /// Calls `visit` with ranges that together cover what the buffers stored in buckets
    /// `[first, last)` of `buckets` cover, in the [`compact`] form each: the unions of the
    /// nodes covering those buckets (made in `scratch` on the levels not kept), and the ranges
    /// of the buffers stored above them; in `R`, the width the unions are kept in.
    pub(super) fn cover<R: Range>(
        &self,
        buckets: &Buckets,
        first: usize,
        last: usize,
        scratch: &mut Vec<R>,
        mut visit: impl FnMut(&[R]),
    ) {
        let shape = self.shape;
        let (union, whole) = (self.union.get::<R>(), self.whole.get::<R>());
        shape.for_each_cover(first, last, |node| {
            if shape.is_kept(node) {
                return visit(&union[node]);
            }
            // A leaf or a pair of leaves (RUN_LEVELS = 2): its runs, merged and compacted.
            let (from, to) = shape.buckets_of(node);
            let runs = |k: usize| buckets.run(k).iter().map(|e| e.range());
            scratch.clear();
            match to - from {
                1 => compact(runs(from), scratch),
                _ => compact(merged(runs(from), runs(from + 1)), scratch),
            }
            visit(scratch);
        });
        shape.for_each_above(first, last, |node| {
            if shape.is_kept(node) {
                visit(&whole[node]);
            }
        });
    }
}

/// The tree's layout: which node holds which buckets.
#[derive(Clone, Copy, Debug, Default)]
struct Shape {
    /// A power of two; node 1 is the root, bucket `k`'s leaf node `leaves + k`.
    leaves: usize,
    /// The highest level kept (leaves are level 0): that of the widest stretch stored or
    /// asked for, so that no cover needs a node above it.
    height: u32,
}

impl Shape {
    /// Whether `node`'s lists are kept (it is above the [`RUN_LEVELS`] lowest levels).
    #[inline]
    fn is_kept(&self, node: usize) -> bool {
        node < self.leaves >> (RUN_LEVELS - 1)
    }

    /// The buckets `[from, to)` under `node`.
    fn buckets_of(&self, node: usize) -> (usize, usize) {
        leaves_under(self.leaves, node)
    }

    /// Calls `visit` with each node of the canonical cover of buckets `[first, last)`: at
    /// most two a level, none above the highest level kept as long as the stretch spans at
    /// most `2^(height + 1) - 1` buckets (a node above holds more).
    fn for_each_cover(&self, first: usize, last: usize, mut visit: impl FnMut(usize)) {
        for_each_cover(self.leaves, first, last, |node| {
            debug_assert!(
                self.leaves.ilog2() - node.ilog2() <= self.height,
                "a stretch wider than the tree's widest"
            );
            visit(node)
        });
    }

    /// Calls `visit` once with each node up to the highest level kept that holds bucket
    /// `first` or bucket `last - 1` and some bucket outside `[first, last)`: the ancestors of
    /// the nodes of its cover.
    fn for_each_above(&self, first: usize, last: usize, mut visit: impl FnMut(usize)) {
        let (mut l, mut r) = (self.leaves + first, self.leaves + last - 1);
        for level in 0..=self.height {
            if self.is_outside(l, level, first, last) {
                visit(l);
            }
            if r != l && self.is_outside(r, level, first, last) {
                visit(r);
            }
            l /= 2;
            r /= 2;
        }
    }

    /// Whether `node`, on `level`, holds some bucket outside `[first, last)`.
    #[inline]
    fn is_outside(&self, node: usize, level: u32, first: usize, last: usize) -> bool {
        let start = (node << level) - self.leaves;
        start < first || start + (1 << level) > last
    }
}

/// Adds `[offset, end)` to `union` (sorted, each range starting above the end of the one
/// before), joining the ranges it meets or touches; false if a range already covered it (then
/// nothing changes).
pub(super) fn add<R: Range>(union: &mut Vec<R>, offset: u64, end: u64) -> bool {
    // The first range ending at or above `offset`: the first the new one may join.
    let first = search_near(union, interpolated(union, offset), |r| r.end() < offset);
    add_at(union, first, offset, end)
}

/// [`add`] to list `index` of `lists`, widening them first if `end` does not fit them.
pub(super) fn add_to(lists: &mut Lists, index: usize, offset: u64, end: u64) -> bool {
    if lists.is_narrow() && !<(u32, u32)>::fits(end) {
        lists.widen();
    }
    match lists {
        Lists::Narrow(lists) => add(&mut lists[index], offset, end),
        Lists::Wide(lists) => add(&mut lists[index], offset, end),
    }
}

/// Where `offset` would fall in `union` if its ranges were spread evenly up to the highest
/// end: a place to start [`search_near`] from. On the harsh 1M mix (benches/RESULTS.md) the
/// unions' ranges are spread evenly enough that adding a range from there cost the best-fit
/// run less than half the time of a binary search, whose first steps each miss the cache.
pub(super) fn interpolated<R: Range>(union: &[R], offset: u64) -> usize {
    let top = union.last().map_or(0, |r| r.end());
    if offset >= top {
        return union.len();
    }
    // A float is enough for a starting place (and `top` is above `offset`, so not 0).
    ((offset as f64 / top as f64) * union.len() as f64) as usize
}

/// [`add`], the place of `[offset, end)` searched outward from `hint` (where it went in a
/// union much like this one), and returned: a range added to the unions of neighbouring
/// blocks of time falls at about the same place in each, and a search from there reads a few
/// nearby cache lines, where a binary search from the middle misses the cache at each step.
pub(super) fn add_near<R: Range>(
    union: &mut Vec<R>,
    offset: u64,
    end: u64,
    hint: usize,
) -> (bool, usize) {
    let first = search_near(union, hint, |r| r.end() < offset);
    (add_at(union, first, offset, end), first)
}

/// The first index of `sorted` where `below` is false (it is true before and false after),
/// found by doubling steps away from `hint`, then a binary search between the last two.
fn search_near<R>(sorted: &[R], hint: usize, below: impl Fn(&R) -> bool) -> usize {
    let hint = hint.min(sorted.len());
    let (lo, hi) = if hint < sorted.len() && below(&sorted[hint]) {
        // Upward: the answer is above `hint`.
        let (mut lo, mut hi, mut step) = (hint + 1, sorted.len(), 1);
        while lo + step <= sorted.len() {
            if !below(&sorted[lo + step - 1]) {
                hi = lo + step - 1;
                break;
            }
            lo += step;
            step *= 2;
        }
        (lo, hi)
    } else {
        // Downward: the answer is at or below `hint`.
        let (mut lo, mut hi, mut step) = (0, hint, 1);
        while hi >= step {
            if below(&sorted[hi - step]) {
                lo = hi - step + 1;
                break;
            }
            hi -= step;
            step *= 2;
        }
        (lo, hi)
    };
    lo + sorted[lo..hi].partition_point(below)
}

/// [`add`] with `first`, the first range of `union` ending at or above `offset`, known.
fn add_at<R: Range>(union: &mut Vec<R>, first: usize, offset: u64, end: u64) -> bool {
    match union.get(first) {
        Some(r) if r.offset() <= offset && end <= r.end() => return false, // already covered
        Some(r) if r.offset() <= end => {
            // Joins ranges first..last.
            let last = first + union[first..].partition_point(|r| r.offset() <= end);
            let joined = R::new(offset.min(r.offset()), end.max(union[last - 1].end()));
            union[first] = joined;
            union.drain(first + 1..last);
        }
        _ => union.insert(first, R::new(offset, end)),
    }
    true
}

/// Appends to `out` the ranges `sorted` (by offset) with each range that starts at or below
/// the highest end before it joined to the previous one: the ranges of `out` cover the same
/// addresses, and a scan upward for the gaps between them (a gap where a range starts above
/// the highest end so far) finds the same gaps, and the same highest end, as on `sorted`.
pub(super) fn compact<R: Range>(sorted: impl Iterator<Item = (u64, u64)>, out: &mut Vec<R>) {
    for (offset, end) in sorted {
        match out.last_mut() {
            Some(last) if offset <= last.end() => {
                *last = R::new(last.offset(), last.end().max(end))
            }
            _ => out.push(R::new(offset, end)),
        }
    }
}

/// Appends to `out` the ranges of `a` and `b`, both sorted by offset, merged and compacted as
/// by [`compact`]: the same gaps and the same highest end as on all of them sorted.
/// When `b` is much shorter than `a` (`a` already compacted: often a long union joined with a
/// few ranges), the stretches of `a` between `b`'s ranges are found by binary search and
/// copied whole.
pub(super) fn join<R: Range>(a: &[R], b: &[R], out: &mut Vec<R>) {
    if b.len() * 8 > a.len() {
        return merge_compacted(a, b, out);
    }
    let mut from = 0;
    for &range in b {
        let to = from + a[from..].partition_point(|r| r.offset() <= range.offset());
        push_compacted(&a[from..to], out);
        compact(std::iter::once(range.wide()), out);
        from = to;
    }
    push_compacted(&a[from..], out);
}

/// Appends to `out` the ranges of `a` and `b`, both sorted by offset, merged (those of `a`
/// first on equal offsets) and compacted as by [`compact`], without a branch per range: which
/// list gives the next range, and whether it joins the last one, are both unpredictable.
fn merge_compacted<R: Range>(a: &[R], b: &[R], out: &mut Vec<R>) {
    let (mut i, mut j) = (0, 0);
    // The range still open to joins: the last of `out`, else the first to come.
    let mut open = match (out.pop(), a.first(), b.first()) {
        (Some(last), _, _) => last,
        (None, Some(&x), Some(&y)) if x.offset() <= y.offset() => (i += 1, x).1,
        (None, Some(&x), None) => (i += 1, x).1,
        (None, _, Some(&y)) => (j += 1, y).1,
        (None, None, None) => return,
    };
    out.reserve(a.len() + b.len() + 1);
    // The open range is written each time, and kept only if the next range does not join it.
    let mut push = |range: R| {
        let joins = range.offset() <= open.end();
        out.push(open);
        out.truncate(out.len() - usize::from(joins));
        open = if joins {
            R::new(open.offset(), open.end().max(range.end()))
        } else {
            range
        };
    };
    while i < a.len() && j < b.len() {
        let take_a = a[i].offset() <= b[j].offset();
        push(if take_a { a[i] } else { b[j] });
        i += usize::from(take_a);
        j += usize::from(!take_a);
    }
    a[i..].iter().chain(&b[j..]).for_each(|&range| push(range));
    out.push(open);
}

/// Appends `run`, sorted by offset and compacted, to `out` as [`compact`] would: the ranges
/// that join the last one there one by one, the rest copied whole.
fn push_compacted<R: Range>(run: &[R], out: &mut Vec<R>) {
    let mut joining = 0;
    if let Some(last) = out.last_mut() {
        while joining < run.len() && run[joining].offset() <= last.end() {
            *last = R::new(last.offset(), last.end().max(run[joining].end()));
            joining += 1;
        }
    }
    out.extend_from_slice(&run[joining..]);
}

/// The ranges of `a` and `b`, both sorted by offset, in offset order.
fn merged(
    a: impl Iterator<Item = (u64, u64)>,
    b: impl Iterator<Item = (u64, u64)>,
) -> impl Iterator<Item = (u64, u64)> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if x.0 <= y.0 => a.next(),
        (_, Some(_)) => b.next(),
        (Some(_), None) => a.next(),
        (None, None) => None,
    })
}

/// `count` random ranges sorted by offset: offsets below `offsets`, lengths below
/// `longest` (some 0).
#[cfg(test)]
pub(super) fn random_sorted(
    rng: &mut rand::rngs::StdRng,
    count: usize,
    offsets: u64,
    longest: u64,
) -> Vec<(u64, u64)> {
    use rand::RngExt;
    let mut ranges: Vec<(u64, u64)> = (0..count)
        .map(|_| {
            let offset = rng.random_range(0..offsets);
            (offset, offset + rng.random_range(0..longest))
        })
        .collect();
    ranges.sort_unstable();
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{RngExt, SeedableRng};

    /// Ranges added one by one, some empty, many touching or overlapping: the union kept is
    /// always the compacted list of every range added so far.
    #[test]
    fn adding_a_range_keeps_the_compacted_union() {
        let mut rng = StdRng::seed_from_u64(5);
        for round in 0..200 {
            let (mut union, mut added) = (Vec::<(u64, u64)>::new(), Vec::new());
            let span = 10 + 5 * round as u64;
            for _ in 0..rng.random_range(1..60) {
                let offset = rng.random_range(0..span);
                let end = offset + rng.random_range(0..span / 4);
                add(&mut union, offset, end);
                added.push((offset, end));
                added.sort_unstable();
                let mut expected = Vec::new();
                compact(added.iter().copied(), &mut expected);
                assert_eq!(union, expected, "round {round}, after {added:?}");
            }
        }
    }

    /// Ranges added one by one to a union with [`add`] and to a copy with [`add_near`], the
    /// hint anywhere (often near the place, as from a neighbouring block, or past the end):
    /// the same unions, and the place returned is the first range ending at or above the
    /// offset, as a binary search over the whole union finds it. A copy in 32 bits, added to
    /// from the same hints, holds the same ranges.
    #[test]
    fn adding_near_a_hint_is_adding() {
        let mut rng = StdRng::seed_from_u64(21);
        for round in 0..300 {
            let mut union = Vec::<(u64, u64)>::new();
            let mut near = union.clone();
            let mut narrow = Vec::<(u32, u32)>::new();
            let span = 10 + 7 * round as u64;
            for _ in 0..rng.random_range(1..80) {
                let offset = rng.random_range(0..span);
                let end = offset + rng.random_range(0..span / 6);
                let first = union.partition_point(|r: &(u64, u64)| r.1 < offset);
                let hint = match rng.random_range(0..3) {
                    0 => rng.random_range(0..union.len() + 3),
                    _ => (first + rng.random_range(0..9usize)).saturating_sub(4),
                };
                let added = add(&mut union, offset, end);
                assert_eq!(
                    add_near(&mut near, offset, end, hint),
                    (added, first),
                    "round {round}, [{offset}, {end}) from {hint}"
                );
                assert_eq!(near, union, "round {round}");
                assert_eq!(add_near(&mut narrow, offset, end, hint), (added, first));
                let widened: Vec<(u64, u64)> = narrow.iter().map(|r| r.wide()).collect();
                assert_eq!(widened, union, "round {round}, in 32 bits");
            }
        }
    }

    /// A compacted list joined with a sorted one, long or short (both ways of joining), with
    /// ranges touching, overlapping, empty and equal: the compacted list of all their ranges.
    /// And the sorted one merged with a third without branches, after the compacted list in
    /// `out`: the list [`compact`] appends. Both again in 32 bits, the same ranges.
    #[test]
    fn joining_and_merging_give_the_compacted_list_of_all() {
        let mut rng = StdRng::seed_from_u64(9);
        for round in 0..300 {
            let span = 20 + 10 * round as u64;
            let mut ranges = |count: usize| random_sorted(&mut rng, count, span, span / 8);
            let mut a = Vec::new();
            compact(ranges(rng_count(round, 0)).into_iter(), &mut a);
            let (b, c) = (ranges(rng_count(round, 1)), ranges(round % 7));
            let mut all: Vec<(u64, u64)> = a.iter().chain(&b).copied().collect();
            all.sort_unstable();
            let mut expected = Vec::new();
            compact(all.into_iter(), &mut expected);
            let mut joined = Vec::new();
            join(&a, &b, &mut joined);
            assert_eq!(joined, expected, "round {round}, {a:?} and {b:?}");
            let narrowed = |list: &[(u64, u64)]| -> Vec<(u32, u32)> {
                list.iter().map(|&(o, e)| Range::new(o, e)).collect()
            };
            let mut narrow = Vec::new();
            join(&narrowed(&a), &narrowed(&b), &mut narrow);
            assert_eq!(narrow, narrowed(&expected), "round {round}, in 32 bits");
            let mut expected = a.clone();
            compact(merged(b.iter().copied(), c.iter().copied()), &mut expected);
            let mut narrow = narrowed(&a);
            merge_compacted(&narrowed(&b), &narrowed(&c), &mut narrow);
            assert_eq!(
                narrow,
                narrowed(&expected),
                "round {round}, merged in 32 bits"
            );
            let mut found = a;
            merge_compacted(&b, &c, &mut found);
            assert_eq!(
                found, expected,
                "round {round}, {b:?} and {c:?} after the first"
            );
        }
    }

    /// How many ranges list `which` of `round` gets: from none to many, the second list often
    /// far shorter than the first.
    fn rng_count(round: usize, which: usize) -> usize {
        match (round % 3, which) {
            (0, 0) => round % 7,
            (0, _) => round % 5,
            (_, 0) => 40 + round % 90,
            (_, _) => round % 4,
        }
    }
}
