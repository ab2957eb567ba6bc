//! Edge finding over address windows, per maximal section: the 1-D disjunctive reasoning CP-SAT
//! runs on each clique of simultaneously live buffers, from below and from the top.
//!
//! At a node every unplaced buffer `u` has a window: it starts at or above its lowest offset
//! `lb(u)` (its placed neighbours' ends and the canonical bound) and ends at or below
//! `lct(u)`, the capacity at first. For a window `[e, l]` let `W` be the unplaced buffers of a
//! section whose windows lie inside it, and `p(W)` their total size:
//! - **overload**: `e + p(W) > l` fails the node;
//! - **from below**: if a buffer `u` outside `W` cannot fit in the window together with `W`
//!   (`min(e, lb(u)) + p(W) + size(u) > l`), it does not end by `l`, so it goes above all of
//!   `W`: `lb(u) >= e + p(W)`;
//! - **from the top**: if `u` cannot go below `e` together with `W` (`max(l, lct(u)) - p(W) -
//!   size(u) < e`), it goes below all of `W`: `lct(u) <= l - p(W)`.
//!
//! Raised lowest offsets and lowered ends feed each other, across sections, until nothing
//! changes. A buffer whose raised lowest offset is above the offset the search would place it
//! at cannot be placed there: the search leaves it out of the node's candidates. The deductions
//! hold for every solution below the node, so the search stays complete.

use super::instance::Instance;
use super::state::State;
use crate::problem::align_up;
use std::ops::Range;

/// Section passes per node at most, in multiples of the node's section count: the fixpoint
/// stops there (stopping early is sound, only weaker).
const MAX_PASSES_PER_SECTION: usize = 16;

/// What a pass reads of one buffer, side by side (one place in memory per task).
#[derive(Clone, Copy, Debug)]
struct Bounds {
    /// The lowest offset proved at the current node (for an unplaced buffer).
    lowest: u64,
    /// The highest end proved at the current node.
    end: u64,
    /// The buffer's size.
    size: u64,
}

/// One unplaced buffer of a section, as the section's pass sees it.
#[derive(Clone, Copy, Debug)]
struct Task {
    buffer: u32,
    lowest: u64,
    end: u64,
    size: u64,
}

/// The edge finder of one search run: its bounds, kept along the search path (what a node
/// proves holds below it; [`EdgeFinder::undo`] takes it back on the way up), and scratch space.
pub struct EdgeFinder {
    /// Per buffer, its bounds at the current node and its size.
    bounds: Vec<Bounds>,
    /// The bounds before each change: buffer, lowest offset, end.
    trail: Vec<(u32, u64, u64)>,
    /// Per section, whether its free buffers are not all live in a neighbouring section too
    /// (only those sections are passed over: a section whose buffers a neighbour holds as well
    /// deduces nothing the neighbour does not).
    maximal: Vec<bool>,
    tasks: Vec<Task>,
    lows: Vec<u64>,
    highs: Vec<u64>,
    /// Per task of a pass, the position of its lowest offset in `lows` and of its end in
    /// `highs`.
    rows: Vec<u32>,
    columns: Vec<u32>,
    /// Scratch of [`EdgeFinder::bucket_few`]: the free members of a section.
    free_members: Vec<u32>,
    /// Scratch of [`rank_by_sorting`].
    ranking: Vec<(u64, u32)>,
    /// Scratch of [`EdgeFinder::bucket_few`].
    few: Box<Few>,
    /// Per cell `(i, j)` of a pass (`lows[i]`, `highs[j]`; row-major): the total size of the
    /// tasks starting at or above `lows[i]` and ending by `highs[j]` (the window's contents;
    /// per cell before it is cumulated).
    inside: Vec<u64>,
    /// Per cell `(i, j)`: the largest size of the tasks starting at or above `lows[i]` and
    /// ending above `highs[j]` (outside the window; per cell before it is cumulated).
    largest_ending_above: Vec<u64>,
    /// Per distinct lowest offset, the largest size of the tasks starting below it.
    largest_below: Vec<u64>,
    /// The sections waiting for a pass.
    queue: std::collections::VecDeque<usize>,
    /// One bit per section, set while it is maximal and not queued: the sections an enqueue
    /// may add, found a word at a time.
    waiting: Vec<u64>,
    /// The buffers whose bounds the current pass moved.
    moved: Vec<u32>,
}

impl EdgeFinder {
    /// An edge finder for `instance`.
    pub fn new(instance: &Instance) -> EdgeFinder {
        let count = instance.members.len();
        let maximal = (0..count)
            .map(|s| {
                let within = |other: usize| {
                    let others = &instance.members[other];
                    instance.members[s]
                        .iter()
                        .all(|b| others.binary_search(b).is_ok())
                };
                let held_by_a_neighbour =
                    (s > 0 && within(s - 1)) || (s + 1 < count && within(s + 1));
                !instance.members[s].is_empty() && !held_by_a_neighbour
            })
            .collect::<Vec<bool>>();
        let bounds = instance
            .sizes
            .iter()
            .map(|&size| Bounds {
                lowest: 0,
                end: instance.capacity,
                size,
            })
            .collect();
        let mut waiting = vec![0u64; count.div_ceil(64)];
        for t in (0..count).filter(|&t| maximal[t]) {
            waiting[t / 64] |= 1 << (t % 64);
        }
        EdgeFinder {
            bounds,
            trail: Vec::new(),
            maximal,
            tasks: Vec::new(),
            lows: Vec::new(),
            highs: Vec::new(),
            rows: Vec::new(),
            columns: Vec::new(),
            free_members: Vec::new(),
            ranking: Vec::new(),
            few: Box::new(Few::new()),
            inside: Vec::new(),
            largest_ending_above: Vec::new(),
            largest_below: Vec::new(),
            queue: std::collections::VecDeque::new(),
            waiting,
            moved: Vec::new(),
        }
    }

    /// Per section, whether it is maximal (only those get passes): the sections whose free
    /// members [`State::track_free_members`] is worth keeping for the passes.
    pub fn maximal_sections(&self) -> &[bool] {
        &self.maximal
    }

    /// The lowest offset the last propagation proved for unplaced buffer `b`.
    pub fn lowest(&self, b: usize) -> u64 {
        self.bounds[b].lowest
    }

    /// Where the trail stands: [`EdgeFinder::undo`] with it takes back what follows.
    pub fn mark(&self) -> usize {
        self.trail.len()
    }

    /// Restores the bounds as they were at `mark`.
    pub fn undo(&mut self, mark: usize) {
        while self.trail.len() > mark {
            let (b, lowest, end) = self.trail.pop().expect("above the mark");
            let bounds = &mut self.bounds[b as usize];
            bounds.lowest = lowest;
            bounds.end = end;
        }
    }

    /// Forgets what was proved for the unplaced buffers of `buffers` (undone by
    /// [`EdgeFinder::undo`]): an independent part is searched in a canonical order of its own,
    /// starting again from offset 0, so bounds proved under the order above it do not hold.
    pub fn forget(&mut self, instance: &Instance, state: &State, buffers: &[u32]) {
        for &b in buffers {
            let b = b as usize;
            let bounds = self.bounds[b];
            if !state.is_placed(b) && (bounds.lowest, bounds.end) != (0, instance.capacity) {
                self.save(b);
                self.bounds[b].lowest = 0;
                self.bounds[b].end = instance.capacity;
            }
        }
    }

    /// Records buffer `b`'s bounds before they change.
    fn save(&mut self, b: usize) {
        let bounds = self.bounds[b];
        self.trail.push((b as u32, bounds.lowest, bounds.end));
    }

    /// Propagates at a node whose unplaced buffers are those of `buffers` and whose sections
    /// are `sections`, starting from the bounds its parent proved (they hold below it too).
    /// `canonical`: the canonical bound and rank (every unplaced buffer starts at or above the
    /// bound, and above it if its rank is below the bound's), with `ranks` the buffers' ranks.
    /// Only the sections of buffers whose bounds move get a pass. `Err(section)`: a section
    /// cannot hold its unplaced buffers, so no solution extends the node. Call
    /// [`EdgeFinder::undo`] with the mark taken before, on the way up. Once `cancelled()` turns
    /// true (it is asked before each pass, and in a pass before each end's windows), stops
    /// with what it proved so far: fewer bounds, all sound.
    pub fn propagate(
        &mut self,
        instance: &Instance,
        state: &State,
        buffers: &[u32],
        sections: Range<usize>,
        canonical: Option<(u64, u32, &[u32])>,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), usize> {
        self.queue.clear();
        let mut verdict = Ok(());
        for &b in buffers {
            let b = b as usize;
            if state.is_placed(b) {
                continue;
            }
            let mut lowest = state.min_offsets[b];
            if let Some((bound, bound_rank, ranks)) = canonical {
                if lowest < bound || (lowest == bound && ranks[b] < bound_rank) {
                    // Not at the bound: at the next offset its alignment allows above it.
                    let above = if ranks[b] < bound_rank {
                        bound + 1
                    } else {
                        bound
                    };
                    lowest = align_up(above, instance.alignments[b].max(1)).unwrap_or(u64::MAX);
                }
            }
            if lowest > self.bounds[b].lowest {
                self.save(b);
                self.bounds[b].lowest = lowest;
                if lowest.saturating_add(instance.sizes[b]) > self.bounds[b].end {
                    verdict = Err(instance.sections[b].start);
                    break;
                }
                self.enqueue(instance, b, &sections);
            }
        }
        let mut passes = sections.len().saturating_mul(MAX_PASSES_PER_SECTION);
        while verdict.is_ok() {
            let Some(s) = self.queue.pop_front() else {
                break;
            };
            self.waiting[s / 64] |= 1 << (s % 64);
            if passes == 0 || cancelled() {
                continue; // out of work or time: drain the queue
            }
            passes -= 1;
            if self.section(instance, state, s, cancelled).is_err() {
                verdict = Err(s);
                break;
            }
            // Every maximal section of a buffer whose bounds moved gets another pass.
            for i in 0..self.moved.len() {
                self.enqueue(instance, self.moved[i] as usize, &sections);
            }
            self.moved.clear();
        }
        for s in self.queue.drain(..) {
            self.waiting[s / 64] |= 1 << (s % 64);
        }
        self.moved.clear();
        verdict
    }

    /// Queues the maximal sections of buffer `b` within `sections` that are not queued yet, in
    /// increasing order.
    fn enqueue(&mut self, instance: &Instance, b: usize, sections: &Range<usize>) {
        let span = &instance.sections[b];
        let (start, end) = (span.start.max(sections.start), span.end.min(sections.end));
        let mut word = start / 64;
        while word * 64 < end {
            let mut bits = self.waiting[word];
            if word == start / 64 {
                bits &= u64::MAX << (start % 64);
            }
            if (word + 1) * 64 > end {
                bits &= (1 << (end % 64)) - 1;
            }
            self.waiting[word] &= !bits;
            while bits != 0 {
                self.queue
                    .push_back(word * 64 + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
            word += 1;
        }
    }

    /// One pass over section `s` (the buffers whose bounds it moves go to `moved`); `Err` if
    /// the section fails. Cut short (with what it proved) once `cancelled()`.
    fn section(
        &mut self,
        instance: &Instance,
        state: &State,
        s: usize,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), ()> {
        let free = |b: usize| !state.is_placed(b);
        let tracked = state.free_members(s);
        self.pass(instance, &instance.members[s], tracked, &free, cancelled)
    }

    /// The windows of one section's tasks (its `members` that are `free`, in that order; the
    /// same as `tracked`'s buffers, in any order, if given):
    /// overload and both rules. A window `[e, l]` is a distinct lowest offset and a distinct
    /// end; the tasks are bucketed by both, so each window's contents come from cumulated cells
    /// rather than a scan of the tasks, which are listed and scanned only where some task
    /// outside a window is larger than the window's free room.
    fn pass(
        &mut self,
        instance: &Instance,
        members: &[u32],
        tracked: Option<&[u32]>,
        free: &impl Fn(usize) -> bool,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), ()> {
        let mut tasks = std::mem::take(&mut self.tasks);
        tasks.clear();
        let count = match self.bucket_few(members, tracked, free) {
            Some(count) => count,
            None => self.bucket_many(members, free, &mut tasks),
        };
        let result = if count < 2 {
            Ok(())
        } else {
            self.cumulate();
            self.windows(instance, members, free, &mut tasks, cancelled)
        };
        self.tasks = tasks;
        result
    }

    /// Buckets the tasks by lowest offset and end as it reads them, while there are at most
    /// [`FEW`] of each (`None` past that), into the cells of `inside` and
    /// `largest_ending_above` (before they are cumulated), with `lows` and `highs`; returns
    /// the number of tasks.
    fn bucket_few(
        &mut self,
        members: &[u32],
        tracked: Option<&[u32]>,
        free: &impl Fn(usize) -> bool,
    ) -> Option<usize> {
        let mut compacted = std::mem::take(&mut self.free_members);
        let free_members = match tracked {
            Some(list) => list,
            None => {
                // Without a branch on each member (placed and free ones alternate at random,
                // which a branch predictor cannot follow).
                compacted.resize(members.len(), 0);
                let mut count = 0;
                for &b in members {
                    compacted[count] = b;
                    count += usize::from(free(b as usize));
                }
                &compacted[..count]
            }
        };
        let count = self.scan_few(free_members);
        self.free_members = compacted;
        if count.is_some() {
            self.sort_few();
        }
        count
    }

    /// Buckets the tasks, the buffers of `free_members`, into [`Few`]'s cells, in the order
    /// their values first appear: `None` past [`FEW`] distinct lowest offsets or ends, else the
    /// number of tasks.
    fn scan_few(&mut self, free_members: &[u32]) -> Option<usize> {
        let few = &mut *self.few;
        let (mut d, mut h) = (0, 0);
        for &b in free_members {
            let t = self.bounds[b as usize];
            let i = match few.lows[..d].iter().position(|&v| v == t.lowest) {
                Some(i) => i,
                None if d == FEW => return None,
                None => {
                    few.lows[d] = t.lowest;
                    for j in 0..h {
                        few.clear(d, j);
                    }
                    d += 1;
                    d - 1
                }
            };
            let j = match few.highs[..h].iter().position(|&v| v == t.end) {
                Some(j) => j,
                None if h == FEW => return None,
                None => {
                    few.highs[h] = t.end;
                    for i in 0..d {
                        few.clear(i, h);
                    }
                    h += 1;
                    h - 1
                }
            };
            let cell = Few::cell(i, j);
            few.inside[cell] += t.size;
            few.largest[cell] = few.largest[cell].max(t.size);
        }
        (few.d, few.h) = (d, h);
        Some(free_members.len())
    }

    /// Moves [`Few`]'s cells to `inside` and `largest_ending_above`, and its values to `lows`
    /// and `highs`, in ascending order of the values.
    #[inline(never)]
    fn sort_few(&mut self) {
        let few = &mut *self.few;
        let (d, h) = (few.d, few.h);
        ascending_order(&few.lows[..d], &mut few.rows[..d]);
        ascending_order(&few.highs[..h], &mut few.columns[..h]);
        let (rows, columns) = (&few.rows[..d], &few.columns[..h]);
        self.lows.clear();
        self.lows.extend(rows.iter().map(|&i| few.lows[i]));
        self.highs.clear();
        self.highs.extend(columns.iter().map(|&j| few.highs[j]));
        self.inside.clear();
        self.largest_ending_above.clear();
        for &i in rows {
            let cells = columns.iter().map(|&j| Few::cell(i, j));
            self.inside
                .extend(cells.clone().map(|cell| few.inside[cell]));
            self.largest_ending_above
                .extend(cells.map(|cell| few.largest[cell]));
        }
    }

    /// [`EdgeFinder::bucket_few`] for many distinct lowest offsets or ends: lists the tasks in
    /// `tasks` and ranks their values by sorting; returns the number of tasks.
    fn bucket_many(
        &mut self,
        members: &[u32],
        free: &impl Fn(usize) -> bool,
        tasks: &mut Vec<Task>,
    ) -> usize {
        self.list_tasks(members, free, tasks);
        let ranking = &mut self.ranking;
        rank_by_sorting(&mut self.lows, &mut self.rows, ranking, tasks, |t| t.lowest);
        rank_by_sorting(&mut self.highs, &mut self.columns, ranking, tasks, |t| {
            t.end
        });
        let (d, h) = (self.lows.len(), self.highs.len());
        self.inside.clear();
        self.inside.resize(d * h, 0);
        self.largest_ending_above.clear();
        self.largest_ending_above.resize(d * h, 0);
        for (k, t) in tasks.iter().enumerate() {
            let cell = self.rows[k] as usize * h + self.columns[k] as usize;
            self.inside[cell] += t.size;
            let largest = &mut self.largest_ending_above[cell];
            *largest = (*largest).max(t.size);
        }
        tasks.len()
    }

    /// Lists the `free` buffers of `members` as tasks, with their bounds as they are now.
    fn list_tasks(&self, members: &[u32], free: &impl Fn(usize) -> bool, tasks: &mut Vec<Task>) {
        tasks.clear();
        for &b in members {
            if free(b as usize) {
                let bounds = self.bounds[b as usize];
                tasks.push(Task {
                    buffer: b,
                    lowest: bounds.lowest,
                    end: bounds.end,
                    size: bounds.size,
                });
            }
        }
    }

    /// Cumulates the cells of a pass: `inside` over the ends up to each and the lowest offsets
    /// from each up, `largest_ending_above` over the ends above each and the lowest offsets
    /// from each up, and fills `largest_below`.
    #[inline(never)]
    fn cumulate(&mut self) {
        let h = self.highs.len();
        // Per row: its largest task (for the rows above it), then totals over the ends up to
        // `j` and the largest over the ends above `j`.
        self.largest_below.clear();
        let mut largest_below = 0;
        let rows = self.inside.chunks_exact_mut(h);
        for (totals, largest) in rows.zip(self.largest_ending_above.chunks_exact_mut(h)) {
            self.largest_below.push(largest_below);
            largest_below = largest.iter().fold(largest_below, |a, &b| a.max(b));
            let mut total = 0;
            for cell in totals.iter_mut() {
                total += *cell;
                *cell = total;
            }
            let mut above = 0;
            for cell in largest.iter_mut().rev() {
                let here = *cell;
                *cell = above;
                above = above.max(here);
            }
        }
        // Then over the rows from the highest lowest offset down: at or above `lows[i]`.
        for i in (1..self.lows.len()).rev() {
            let (lower, upper) = self.inside.split_at_mut(i * h);
            for (cell, higher) in lower[(i - 1) * h..].iter_mut().zip(&upper[..h]) {
                *cell += higher;
            }
            let (lower, upper) = self.largest_ending_above.split_at_mut(i * h);
            for (cell, higher) in lower[(i - 1) * h..].iter_mut().zip(&upper[..h]) {
                *cell = (*cell).max(*higher);
            }
        }
    }

    /// The windows of a pass, over its cumulated cells: overload and both rules. The tasks
    /// (`tasks`, if listed already, else listed here before the first bound moves) are scanned
    /// only where some task outside a window is larger than the window's free room.
    #[inline(never)]
    fn windows(
        &mut self,
        instance: &Instance,
        members: &[u32],
        free: &impl Fn(usize) -> bool,
        tasks: &mut Vec<Task>,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), ()> {
        let (d, h) = (self.lows.len(), self.highs.len());
        let cell = |i: usize, j: usize| i * h + j;
        for j in 0..h {
            if cancelled() {
                // Each deduction so far is sound on its own; the windows left prove nothing
                // wrong by being skipped.
                return Ok(());
            }
            let l = self.highs[j];
            // Highest lowest offset first, as the windows grow.
            for i in (0..d).rev() {
                let e = self.lows[i];
                let inside = self.inside[cell(i, j)];
                if inside == 0 || l <= e {
                    continue;
                }
                if e + inside > l {
                    return Err(());
                }
                // Either rule needs a task outside the window larger than its free room (the
                // window's lowest start is at most `e`, its highest end at least `l`).
                let room = l - e - inside;
                if self.largest_ending_above[cell(i, j)].max(self.largest_below[i]) <= room {
                    continue;
                }
                if tasks.is_empty() {
                    // No bound has moved in this pass yet: the tasks as the pass found them.
                    self.list_tasks(members, free, tasks);
                }
                for t in tasks.iter() {
                    if t.size <= room || (t.lowest >= e && t.end <= l) {
                        continue; // too small to be pushed, or in the window
                    }
                    if self.push_out(instance, *t, (e, l), inside)? {
                        self.moved.push(t.buffer);
                    }
                }
            }
        }
        Ok(())
    }

    /// The two edge-finding rules for task `t` outside window `(e, l)` holding `inside` bytes
    /// of buffers; whether a bound moved.
    fn push_out(
        &mut self,
        instance: &Instance,
        t: Task,
        (e, l): (u64, u64),
        inside: u64,
    ) -> Result<bool, ()> {
        let from = e.min(t.lowest);
        let to = l.max(t.end);
        let needed = from + inside + t.size;
        if needed > to {
            return Err(());
        }
        let b = t.buffer as usize;
        let alignment = instance.alignments[b].max(1);
        let mut changed = false;
        if needed > l {
            // It does not end by `l`: above the window's buffers.
            let raised = align_up(e + inside, alignment).unwrap_or(u64::MAX);
            if raised > self.bounds[b].lowest {
                self.save(b);
                self.bounds[b].lowest = raised;
                changed = true;
            }
        }
        if to < e + inside + t.size {
            // It cannot start at `e` or above: below the window's buffers.
            let Some(start) = l.checked_sub(inside + t.size) else {
                return Err(());
            };
            let lowered = start / alignment * alignment + t.size;
            if lowered < self.bounds[b].end {
                self.save(b);
                self.bounds[b].end = lowered;
                changed = true;
            }
        }
        let bounds = self.bounds[b];
        if bounds.lowest.saturating_add(t.size) > bounds.end {
            return Err(());
        }
        Ok(changed)
    }
}

/// Distinct lowest offsets (and ends) at most for which a pass buckets its tasks as it reads
/// them (a section's tasks share a handful of each); with more it lists them and sorts.
const FEW: usize = 16;

/// Scratch space of [`EdgeFinder::scan_few`]: the `d` lowest offsets and `h` ends in the order
/// they first appear, `FEW x FEW` cells in that order, and the order of ascending values.
struct Few {
    lows: [u64; FEW],
    highs: [u64; FEW],
    d: usize,
    h: usize,
    rows: [usize; FEW],
    columns: [usize; FEW],
    inside: [u64; FEW * FEW],
    largest: [u64; FEW * FEW],
}

impl Few {
    /// An empty scratch space.
    fn new() -> Few {
        Few {
            lows: [0; FEW],
            highs: [0; FEW],
            d: 0,
            h: 0,
            rows: [0; FEW],
            columns: [0; FEW],
            inside: [0; FEW * FEW],
            largest: [0; FEW * FEW],
        }
    }

    /// The cell of the `i`-th lowest offset and `j`-th end seen (both below [`FEW`]; the
    /// remainder only tells the compiler so).
    #[inline(always)]
    fn cell(i: usize, j: usize) -> usize {
        (i * FEW + j) % (FEW * FEW)
    }

    /// Empties cell `(i, j)`.
    #[inline(always)]
    fn clear(&mut self, i: usize, j: usize) {
        let cell = Few::cell(i, j);
        self.inside[cell] = 0;
        self.largest[cell] = 0;
    }
}

/// Fills `order` with the positions of `values` (distinct, a handful) in ascending order of
/// the values, by insertion.
fn ascending_order(values: &[u64], order: &mut [usize]) {
    for (k, &v) in values.iter().enumerate() {
        let mut p = k;
        while p > 0 && values[order[p - 1]] > v {
            order[p] = order[p - 1];
            p -= 1;
        }
        order[p] = k;
    }
}

/// Fills `distinct` with the distinct values `value(t)` of `tasks`, in ascending order, and
/// `ranks` with each task's position of its value in `distinct`: one sort of (value, task)
/// pairs.
fn rank_by_sorting(
    distinct: &mut Vec<u64>,
    ranks: &mut Vec<u32>,
    pairs: &mut Vec<(u64, u32)>,
    tasks: &[Task],
    value: impl Fn(&Task) -> u64,
) {
    pairs.clear();
    pairs.extend(tasks.iter().enumerate().map(|(k, t)| (value(t), k as u32)));
    pairs.sort_unstable();
    distinct.clear();
    ranks.clear();
    ranks.resize(tasks.len(), 0);
    for &(v, k) in pairs.iter() {
        if distinct.last() != Some(&v) {
            distinct.push(v);
        }
        ranks[k as usize] = (distinct.len() - 1) as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Buffer, Problem};

    /// Capacity 10. `w` (size 2, live at 0-2) is placed at 0; `v` (size 6, live at 0-3) then
    /// starts at 2 or above; `u` (size 4, live at 2-3) shares the section 2-3 with `v`, where
    /// the two fill the capacity. `v` cannot go under `u` (2 + 6 + 4 > 10), so `u` ends by 4
    /// (from the top), and then `v` starts at 4 or above (from below).
    fn squeezed() -> (Instance, State) {
        let buffers = vec![
            Buffer::new("w", 0, 2, 2),
            Buffer::new("v", 0, 3, 6),
            Buffer::new("u", 2, 3, 4),
        ];
        let problem = Problem::new(buffers, None);
        let instance = Instance::new(&problem, 10);
        let mut state = State::new(&instance);
        state.place(&instance, 0, 0, 1, true);
        (instance, state)
    }

    #[test]
    fn both_rules_fire_and_feed_each_other() {
        let (instance, state) = squeezed();
        let mut edge = EdgeFinder::new(&instance);
        let all = 0..instance.members.len();
        assert_eq!(state.min_offsets[1], 2);
        assert_eq!(
            edge.propagate(&instance, &state, &[0, 1, 2], all, None, &|| false),
            Ok(())
        );
        assert_eq!(edge.bounds[2].end, 4, "u goes under v");
        assert_eq!(edge.lowest(1), 4, "v goes above u");
        assert_eq!(edge.lowest(2), 0);
        // Taken back on the way up.
        edge.undo(0);
        assert_eq!((edge.lowest(1), edge.bounds[2].end), (0, 10));
    }

    #[test]
    fn a_cancelled_propagation_skips_its_passes() {
        let (instance, state) = squeezed();
        let mut edge = EdgeFinder::new(&instance);
        let all = 0..instance.members.len();
        let cancelled = edge.propagate(&instance, &state, &[0, 1, 2], all.clone(), None, &|| true);
        assert_eq!(cancelled, Ok(()));
        // The bounds the placement of w gives (v at 2), none of the passes' (v at 4, u by 4).
        assert_eq!((edge.lowest(1), edge.bounds[2].end), (2, 10));
        edge.undo(0);
        // Not cancelled: asked before each pass, and the passes prove both bounds.
        let asked = std::cell::Cell::new(0);
        let full = edge.propagate(&instance, &state, &[0, 1, 2], all, None, &|| {
            asked.set(asked.get() + 1);
            false
        });
        assert_eq!(full, Ok(()));
        assert!(asked.get() >= 2, "{} passes", asked.get());
        assert_eq!((edge.lowest(1), edge.bounds[2].end), (4, 4));
    }

    #[test]
    fn an_overfull_window_fails_the_node() {
        let (instance, state) = squeezed();
        let mut edge = EdgeFinder::new(&instance);
        let all = 0..instance.members.len();
        // With every buffer at or above 1 (a canonical bound), u and v need 1 + 4 + 6 > 10.
        let ranks = [0, 0, 0];
        let failed = edge.propagate(
            &instance,
            &state,
            &[0, 1, 2],
            all,
            Some((1, 0, &ranks)),
            &|| false,
        );
        assert!(failed.is_err());
    }

    #[test]
    fn the_canonical_rank_lifts_a_buffer_off_the_bound() {
        let (instance, state) = squeezed();
        let mut edge = EdgeFinder::new(&instance);
        let all = 0..instance.members.len();
        // The last placement was at 0 with rank 1. u, ranked after it, may still start at 0,
        // under v; ranked before it (rank 0), u must start above 0 and no longer fits under v.
        let after = [0, 2, 2];
        let mark = edge.mark();
        let ok = edge.propagate(
            &instance,
            &state,
            &[0, 1, 2],
            all.clone(),
            Some((0, 1, &after)),
            &|| false,
        );
        assert_eq!(ok, Ok(()));
        assert_eq!(edge.lowest(2), 0);
        edge.undo(mark);
        let before = [0, 2, 0];
        let lifted = edge.propagate(
            &instance,
            &state,
            &[0, 1, 2],
            all,
            Some((0, 1, &before)),
            &|| false,
        );
        assert!(lifted.is_err());
    }

    #[test]
    fn a_part_forgets_what_was_proved_above_it_until_undone() {
        let (instance, state) = squeezed();
        let mut edge = EdgeFinder::new(&instance);
        let all = 0..instance.members.len();
        assert_eq!(
            edge.propagate(&instance, &state, &[1, 2], all.clone(), None, &|| false),
            Ok(())
        );
        let proved = (edge.lowest(1), edge.lowest(2), edge.bounds[2].end);
        assert_eq!(proved, (4, 0, 4));
        // An independent part starts an order of its own: it starts from nothing proved.
        let mark = edge.mark();
        edge.forget(&instance, &state, &[1, 2]);
        assert_eq!(
            (edge.lowest(1), edge.lowest(2), edge.bounds[2].end),
            (0, 0, 10)
        );
        // Its own propagation proves what the placements imply, and is taken back with it.
        assert_eq!(
            edge.propagate(&instance, &state, &[1, 2], all, None, &|| false),
            Ok(())
        );
        assert_eq!((edge.lowest(1), edge.lowest(2), edge.bounds[2].end), proved);
        edge.undo(mark);
        assert_eq!((edge.lowest(1), edge.lowest(2), edge.bounds[2].end), proved);
        edge.undo(0);
        assert_eq!(
            (edge.lowest(1), edge.lowest(2), edge.bounds[2].end),
            (0, 0, 10)
        );
    }

    #[test]
    fn only_sections_no_neighbour_contains_are_passed_over() {
        let (instance, _) = squeezed();
        let edge = EdgeFinder::new(&instance);
        // Sections 0-2 (w, v) and 2-3 (v, u): neither holds the other's buffers.
        let live: Vec<&Vec<u32>> = instance.members.iter().collect();
        assert_eq!(live, [&vec![0, 1], &vec![1, 2]]);
        assert_eq!(edge.maximal, [true, true]);
    }

    /// Draws below a bound, from a xorshift generator started at `seed`.
    fn draws(mut seed: u64) -> impl FnMut(u64) -> u64 {
        move |below| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        }
    }

    #[test]
    fn each_section_knows_whether_it_is_maximal() {
        let mut next = draws(0x2545_f491_4f6c_dd1d);
        for _ in 0..50 {
            let buffers = (0..2 + next(30))
                .map(|i| {
                    let start = next(40);
                    Buffer::new(format!("b{i}"), start, start + 1 + next(10), 1 + next(5))
                })
                .collect();
            let instance = Instance::new(&Problem::new(buffers, None), 1000);
            let edge = EdgeFinder::new(&instance);
            let count = instance.members.len();
            let within = |s: usize, other: usize| {
                let others: std::collections::HashSet<_> = instance.members[other].iter().collect();
                instance.members[s].iter().all(|b| others.contains(b))
            };
            let maximal = |t: usize| {
                let held = (t > 0 && within(t, t - 1)) || (t + 1 < count && within(t, t + 1));
                !instance.members[t].is_empty() && !held
            };
            for t in 0..count {
                assert_eq!(edge.maximal[t], maximal(t), "section {t} of {count}");
            }
        }
    }

    #[test]
    fn enqueue_adds_the_waiting_maximal_sections_in_order() {
        let mut next = draws(0x1234_5678_9abc_def1);
        for _ in 0..30 {
            // Long horizons, so that sections run over several words of the bit set.
            let buffers: Vec<Buffer> = (0..20 + next(60))
                .map(|i| {
                    let start = next(400);
                    Buffer::new(format!("b{i}"), start, start + 1 + next(150), 1)
                })
                .collect();
            let count = buffers.len();
            let instance = Instance::new(&Problem::new(buffers, None), 1000);
            let mut edge = EdgeFinder::new(&instance);
            let maximal = edge.maximal_sections().to_vec();
            let sections = instance.members.len();
            // The model: a queue and whether each section is in it.
            let (mut queue, mut queued) = (Vec::new(), vec![false; sections]);
            for _ in 0..200 {
                if next(3) == 0 {
                    // A pass takes the first section off the queue.
                    if let Some(s) = edge.queue.pop_front() {
                        edge.waiting[s / 64] |= 1 << (s % 64);
                        assert_eq!(s, queue.remove(0));
                        queued[s] = false;
                    }
                    continue;
                }
                let b = next(count as u64) as usize;
                let lo = next(sections as u64 + 1) as usize;
                let range = lo..lo + next((sections - lo) as u64 + 1) as usize;
                edge.enqueue(&instance, b, &range);
                let span = instance.sections[b].clone();
                for t in span.start.max(range.start)..span.end.min(range.end) {
                    if maximal[t] && !queued[t] {
                        queued[t] = true;
                        queue.push(t);
                    }
                }
                assert_eq!(edge.queue.iter().copied().collect::<Vec<_>>(), queue);
            }
        }
    }

    impl EdgeFinder {
        /// Every buffer's lowest offset and end.
        fn proved(&self) -> Vec<(u64, u64)> {
            self.bounds.iter().map(|b| (b.lowest, b.end)).collect()
        }
    }

    /// One pass with every window `[e, l]` (each task's lowest offset and end) and every task
    /// outside it, with no shortcut: what [`EdgeFinder::pass`] must deduce.
    fn every_window(edge: &mut EdgeFinder, instance: &Instance, tasks: &[Task]) -> Result<(), ()> {
        for l in tasks.iter().map(|t| t.end) {
            for e in tasks.iter().map(|t| t.lowest) {
                let inside: u64 = tasks
                    .iter()
                    .filter(|t| t.lowest >= e && t.end <= l)
                    .map(|t| t.size)
                    .sum();
                if inside == 0 || l <= e {
                    continue;
                }
                if e + inside > l {
                    return Err(());
                }
                for t in tasks.iter().filter(|t| t.lowest < e || t.end > l) {
                    edge.push_out(instance, *t, (e, l), inside)?;
                }
            }
        }
        Ok(())
    }

    #[test]
    fn a_pass_deduces_what_every_window_deduces() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        let (mut failed, mut many) = (0, 0);
        for _ in 0..3000 {
            // Up to 50 tasks (more distinct offsets than the insertion path takes), sizes 1-12,
            // alignments 1 or 2, lowest offsets and ends on a coarse grid so that they repeat.
            let count = 2 + next(49) as usize;
            let capacity = 40 + next(160);
            let buffers = (0..count)
                .map(|i| {
                    let mut buffer = Buffer::new(format!("b{i}"), 0, 1, 1 + next(12));
                    buffer.alignment = 1 + next(2);
                    buffer
                })
                .collect();
            let instance = Instance::new(&Problem::new(buffers, None), capacity);
            let all: Vec<Task> = (0..count)
                .map(|i| {
                    let size = instance.sizes[i];
                    let lowest = next(40) * 2;
                    let end = capacity.saturating_sub(next(20) * 3).max(lowest + size);
                    Task {
                        buffer: i as u32,
                        lowest,
                        end,
                        size,
                    }
                })
                .collect();
            // About one buffer in four is placed: a member of the section, not a task.
            let free: Vec<bool> = all
                .iter()
                .map(|t| t.end <= capacity && next(4) != 0)
                .collect();
            let tasks: Vec<Task> = all
                .iter()
                .copied()
                .filter(|t| free[t.buffer as usize])
                .collect();
            let (mut fast, mut slow) = (EdgeFinder::new(&instance), EdgeFinder::new(&instance));
            for edge in [&mut fast, &mut slow] {
                for t in &all {
                    edge.bounds[t.buffer as usize].lowest = t.lowest;
                    edge.bounds[t.buffer as usize].end = t.end;
                }
            }
            let distinct = |value: fn(&Task) -> u64| {
                let values: std::collections::BTreeSet<u64> = tasks.iter().map(value).collect();
                values.len()
            };
            if distinct(|t| t.lowest) > FEW || distinct(|t| t.end) > FEW {
                many += 1;
            }
            let members: Vec<u32> = (0..count as u32).collect();
            let verdict = fast.pass(&instance, &members, None, &|b| free[b], &|| false);
            assert_eq!(
                verdict,
                every_window(&mut slow, &instance, &tasks),
                "{tasks:?}"
            );
            if verdict.is_ok() {
                assert_eq!(fast.proved(), slow.proved(), "{tasks:?}");
            } else {
                failed += 1;
            }
        }
        // Both outcomes are exercised, and both ways of bucketing the tasks.
        assert!((100..2900).contains(&failed), "{failed} of 3000 failed");
        assert!(
            (100..2900).contains(&many),
            "{many} of 3000 with many values"
        );
    }
}
