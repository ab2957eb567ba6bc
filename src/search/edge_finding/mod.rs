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
//!
//! This file keeps the bounds along the search path and the queue of sections to pass over;
//! `cells` buckets a pass's tasks into a grid of windows, `rules` applies the rules to them, and
//! `few` is the bucketing's scratch space when a section has few distinct bounds.

mod cells;
mod few;
mod rules;

use super::instance::Instance;
use super::state::State;
use crate::problem::align_up;
use few::Few;
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
    /// Scratch of the sort that ranks many tasks' values (`cells::rank_by_sorting`).
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
}

#[cfg(test)]
mod tests;
