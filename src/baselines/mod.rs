//! The production heuristics every result is compared against (REFERENCE.md s.2), each an order
//! of the buffers plus a [`Fit`] rule over the shared placement core. None backtracks.

mod hill_climb;

use crate::analysis::Timeline;
use crate::outcome::Deadline;
use crate::placement::{Fit, Placer};
use crate::problem::{align_up, Problem, Solution};
use std::cmp::Reverse;

/// A baseline allocator, named as on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Baseline {
    /// TFLite arena planner: whole-run buffers first, then size descending (ties: earlier
    /// first use), best-fit.
    Tflite,
    /// TFLite Micro: size descending (stable), first-fit.
    TfliteMicro,
    /// XLA heap simulator: best-fit counting the space up to the heap top as a gap; ordered by
    /// size then lifetime, and by lifetime then size; the smaller peak is kept.
    Xla,
    /// TVM USMP greedy_by_size: size descending, each buffer on top of its highest neighbour.
    TvmGreedySize,
    /// TVM USMP greedy_by_conflicts: most time-overlapping buffers first, on top of the highest.
    TvmGreedyConflicts,
    /// TVM USMP hill_climb: up to 500 seeded random swaps of the greedy-by-size order, placed
    /// first-fit, accepting some worse orders (simulated annealing).
    TvmHillClimb,
    /// First-fit in start-time order (the BFC-like baseline of the TelaMalloc paper).
    StartOrder,
    /// TelaMalloc's own heuristic: buffers at the time of highest contention first, each at the
    /// lowest address free over its whole lifetime.
    Contention,
}

impl Baseline {
    /// Every baseline, in the order the CLI lists them.
    pub const ALL: [Baseline; 8] = [
        Baseline::Tflite,
        Baseline::TfliteMicro,
        Baseline::Xla,
        Baseline::TvmGreedySize,
        Baseline::TvmGreedyConflicts,
        Baseline::TvmHillClimb,
        Baseline::StartOrder,
        Baseline::Contention,
    ];

    /// The fast baselines: all but hill climbing, whose hundreds of placements cost the most.
    pub(crate) const FAST: [Baseline; 7] = [
        Baseline::Tflite,
        Baseline::TfliteMicro,
        Baseline::Xla,
        Baseline::TvmGreedySize,
        Baseline::TvmGreedyConflicts,
        Baseline::StartOrder,
        Baseline::Contention,
    ];

    /// The command-line name (`tflite`, `tflite-micro`, `xla`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Baseline::Tflite => "tflite",
            Baseline::TfliteMicro => "tflite-micro",
            Baseline::Xla => "xla",
            Baseline::TvmGreedySize => "tvm-greedy-size",
            Baseline::TvmGreedyConflicts => "tvm-greedy-conflicts",
            Baseline::TvmHillClimb => "tvm-hill-climb",
            Baseline::StartOrder => "start-order",
            Baseline::Contention => "contention",
        }
    }

    /// The baseline with this command-line name.
    pub fn from_name(name: &str) -> Option<Baseline> {
        Baseline::ALL.into_iter().find(|b| b.name() == name)
    }

    /// Places every buffer; the result always has a valid layout (its peak may exceed the
    /// problem's capacity, which the caller compares). `seed` matters only for hill climbing.
    pub fn allocate(self, problem: &Problem, seed: u64) -> Solution {
        self.allocate_within(problem, seed, &Deadline::none())
            .expect("no deadline")
    }

    /// [`Baseline::allocate`] that gives up (`None`) once `deadline` passes before every buffer
    /// is placed (it looks before it starts, after its order is made, and every
    /// [`DEADLINE_STRIDE`] placements); hill climbing returns its best layout so far once it has
    /// one.
    pub(crate) fn allocate_within(
        self,
        problem: &Problem,
        seed: u64,
        deadline: &Deadline<'_>,
    ) -> Option<Solution> {
        if deadline.passed() {
            return None;
        }
        let n = problem.buffers.len();
        let b = &problem.buffers;
        let size = |i: usize| b[i].size;
        let life = |i: usize| b[i].lifetime();
        match self {
            Baseline::Tflite => {
                let (first, last) = time_span(problem);
                let whole_run = |i: usize| b[i].lower == first && b[i].upper == last;
                let order = order_by(n, |i| (!whole_run(i), Reverse(b[i].size), b[i].lower));
                place_within(problem, &order, Fit::Best, deadline)
            }
            Baseline::TfliteMicro => {
                let order = order_by(n, |i| Reverse(size(i)));
                place_within(problem, &order, Fit::First, deadline)
            }
            Baseline::Xla => {
                let by_size = order_by(n, |i| (Reverse(size(i)), Reverse(life(i))));
                let by_life = order_by(n, |i| (Reverse(life(i)), Reverse(size(i))));
                let a = place_within(problem, &by_size, Fit::BestWithHeapTop, deadline)?;
                let c = place_within(problem, &by_life, Fit::BestWithHeapTop, deadline)?;
                Some(if c.peak(problem) < a.peak(problem) {
                    c
                } else {
                    a
                })
            }
            Baseline::TvmGreedySize => {
                let order = order_by(n, |i| (Reverse(size(i)), Reverse(life(i))));
                place_within(problem, &order, Fit::Stack, deadline)
            }
            Baseline::TvmGreedyConflicts => {
                let conflicts = conflict_counts(problem);
                let order = order_by(n, |i| (Reverse(conflicts[i]), Reverse(size(i))));
                place_within(problem, &order, Fit::Stack, deadline)
            }
            Baseline::TvmHillClimb => {
                let order = order_by(n, |i| (Reverse(size(i)), Reverse(life(i))));
                hill_climb::improve(problem, order, seed, deadline)
            }
            Baseline::StartOrder => {
                let order = order_by(n, |i| (b[i].lower, Reverse(b[i].size)));
                place_within(problem, &order, Fit::First, deadline)
            }
            Baseline::Contention => {
                let contention = contention(problem);
                let order = order_by(n, |i| (Reverse(contention[i]), Reverse(size(i))));
                place_within(problem, &order, Fit::First, deadline)
            }
        }
    }
}

/// The buffers `0..n` by `key`, ties in index order (a stable sort by `key`): the keys are made
/// once and sorted with the index, not looked up in the problem at every comparison.
fn order_by<K: Ord>(n: usize, key: impl Fn(usize) -> K) -> Vec<usize> {
    let mut keyed: Vec<(K, usize)> = (0..n).map(|i| (key(i), i)).collect();
    keyed.sort_unstable();
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The layout of smallest peak among the fast baselines (all but hill climbing, whose hundreds
/// of placements cost the most), each placed within `deadline`; `None` if none finished.
pub(crate) fn best_fast(problem: &Problem, deadline: &Deadline<'_>) -> Option<Solution> {
    Baseline::FAST
        .iter()
        .filter_map(|b| b.allocate_within(problem, 0, deadline))
        .min_by_key(|s| s.peak(problem))
}

/// A layout that always comes back: TFLite Micro's first-fit by size descending until
/// `deadline` passes, then the buffers not yet placed laid out in lanes above all the others
/// ([`lay_in_lanes`]: `O(n log n)`, however little time is left). Also the number of buffers
/// laid out in lanes (0 when first-fit finished).
pub(crate) fn first_fit_or_lanes(problem: &Problem, deadline: &Deadline<'_>) -> (Solution, usize) {
    let n = problem.buffers.len();
    if deadline.passed() {
        // Not even the placer's index: the fixed buffers where they are, the rest in lanes.
        let mut offsets: Vec<Option<u64>> = problem.buffers.iter().map(|b| b.offset).collect();
        let floor = problem
            .buffers
            .iter()
            .filter_map(|b| b.offset.map(|o| o.saturating_add(b.size)))
            .max();
        let mut left: Vec<usize> = (0..n).filter(|&i| offsets[i].is_none()).collect();
        lay_in_lanes(problem, &mut left, floor.unwrap_or(0), &mut offsets);
        let offsets = offsets.into_iter().collect::<Option<Vec<u64>>>();
        return (
            Solution {
                offsets: offsets.expect("every buffer fixed or in a lane"),
            },
            left.len(),
        );
    }
    let mut placer = Placer::new(problem);
    for (i, b) in problem.buffers.iter().enumerate() {
        if let Some(offset) = b.offset {
            placer.place(i, offset);
        }
    }
    let order = order_by(n, |i| Reverse(problem.buffers[i].size));
    let mut left: Vec<usize> = Vec::new();
    let mut fitted = 0;
    for (k, &i) in order.iter().enumerate() {
        if placer.offset(i).is_some() {
            continue;
        }
        if fitted % DEADLINE_STRIDE == 0 && deadline.passed() {
            left = order[k..]
                .iter()
                .copied()
                .filter(|&j| placer.offset(j).is_none())
                .collect();
            break;
        }
        let offset = placer.position(i, Fit::First);
        placer.place(i, offset);
        fitted += 1;
    }
    let mut offsets: Vec<Option<u64>> = (0..n).map(|i| placer.offset(i)).collect();
    lay_in_lanes(problem, &mut left, placer.peak(), &mut offsets);
    let offsets = offsets.into_iter().collect::<Option<Vec<u64>>>();
    let offsets = offsets.expect("every buffer placed or in a lane");
    (Solution { offsets }, left.len())
}

/// Lays `buffers` out above `floor`, into `offsets`: taken by start time, each goes to the lane
/// whose last buffer ended earliest, if that was by its start, else to a new lane (so the
/// lanes are as few as the most of them live at once); each lane is as high as its largest
/// buffer, at its largest alignment, and the lanes lie one above the other.
fn lay_in_lanes(problem: &Problem, buffers: &mut [usize], floor: u64, offsets: &mut [Option<u64>]) {
    use std::collections::BinaryHeap;
    let b = &problem.buffers;
    buffers.sort_unstable_by_key(|&i| (b[i].lower, i));
    let mut ending: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new(); // (end, lane)
    let mut lanes: Vec<(u64, u64)> = Vec::new(); // (height, alignment)
    let mut lane_of = Vec::with_capacity(buffers.len());
    for &i in buffers.iter() {
        let lane = match ending.peek() {
            Some(&Reverse((end, lane))) if end <= b[i].lower => {
                ending.pop();
                lane
            }
            _ => {
                lanes.push((0, 1));
                lanes.len() - 1
            }
        };
        ending.push(Reverse((b[i].upper, lane)));
        let (height, alignment) = &mut lanes[lane];
        *height = (*height).max(b[i].size);
        *alignment = (*alignment).max(b[i].alignment);
        lane_of.push(lane);
    }
    let mut top = floor;
    let bases: Vec<u64> = lanes
        .iter()
        .map(|&(height, alignment)| {
            let base = align_up(top, alignment).unwrap_or(u64::MAX);
            top = base.saturating_add(height);
            base
        })
        .collect();
    for (&i, &lane) in buffers.iter().zip(&lane_of) {
        offsets[i] = Some(bases[lane]);
    }
}

/// The earliest `lower` and latest `upper` of the problem.
fn time_span(problem: &Problem) -> (u64, u64) {
    let first = problem.buffers.iter().map(|b| b.lower).min().unwrap_or(0);
    (first, problem.horizon())
}

/// Places the fixed buffers at their offsets, then the others in `order` by `fit`.
pub fn place_in_order(problem: &Problem, order: &[usize], fit: Fit) -> Solution {
    place_within(problem, order, fit, &Deadline::none()).expect("no deadline")
}

/// How many placements go between two looks at the deadline (one look costs a clock read, one
/// placement a query over the placed buffers live beside it).
pub(crate) const DEADLINE_STRIDE: usize = 64;

/// [`place_in_order`] that gives up (`None`) once `deadline` passes: it looks before the first
/// placement and every [`DEADLINE_STRIDE`] placements.
pub(crate) fn place_within(
    problem: &Problem,
    order: &[usize],
    fit: Fit,
    deadline: &Deadline<'_>,
) -> Option<Solution> {
    place_again(&mut Placer::new(problem), order, fit, deadline)
}

/// [`place_within`] on `placer` (emptied first), so that placing the same problem again (hill
/// climbing) keeps the placer's index.
fn place_again(
    placer: &mut Placer<'_>,
    order: &[usize],
    fit: Fit,
    deadline: &Deadline<'_>,
) -> Option<Solution> {
    placer.clear();
    for (i, b) in placer.problem().buffers.iter().enumerate() {
        if let Some(offset) = b.offset {
            placer.place(i, offset);
        }
    }
    for (k, &i) in order.iter().enumerate() {
        if k % DEADLINE_STRIDE == 0 && deadline.passed() {
            return None;
        }
        placer.prefetch(&order[k + 1..]);
        if placer.offset(i).is_none() {
            let offset = placer.position(i, fit);
            placer.place(i, offset);
        }
    }
    Some(Solution {
        offsets: placer.offsets().expect("every buffer placed"),
    })
}

/// For each buffer, how many other buffers overlap it in time (`O(n log n)`).
pub(crate) fn conflict_counts(problem: &Problem) -> Vec<usize> {
    let mut lowers: Vec<u64> = problem.buffers.iter().map(|b| b.lower).collect();
    let mut uppers: Vec<u64> = problem.buffers.iter().map(|b| b.upper).collect();
    lowers.sort_unstable();
    uppers.sort_unstable();
    problem
        .buffers
        .iter()
        .map(|b| {
            let started_before_end = lowers.partition_point(|&l| l < b.upper);
            let ended_before_start = uppers.partition_point(|&u| u <= b.lower);
            started_before_end - ended_before_start - 1
        })
        .collect()
}

/// For each buffer, the largest live total over the sections of its lifetime (0 for a buffer
/// live in none): a range maximum over the section totals, from a bottom-up segment tree in
/// `O(log sections)` per buffer (a scan of each lifetime took `O(buffers x sections)` when many
/// buffers live long).
pub fn contention(problem: &Problem) -> Vec<u64> {
    let timeline = Timeline::new(problem);
    let sections = timeline.len();
    // tree[sections + k] = totals[k]; tree[i] = the larger of its two children.
    let mut tree = vec![0u64; 2 * sections];
    tree[sections..].copy_from_slice(&timeline.totals);
    for i in (1..sections).rev() {
        tree[i] = tree[2 * i].max(tree[2 * i + 1]);
    }
    timeline
        .buffer_sections
        .iter()
        .map(|r| {
            let (mut lo, mut hi) = (r.start + sections, r.end + sections);
            let mut largest = 0;
            while lo < hi {
                if lo % 2 == 1 {
                    largest = largest.max(tree[lo]);
                    lo += 1;
                }
                if hi % 2 == 1 {
                    hi -= 1;
                    largest = largest.max(tree[hi]);
                }
                lo /= 2;
                hi /= 2;
            }
            largest
        })
        .collect()
}
