//! Improvement by ruin and recreate in address as well as time: over the lifetime of a buffer
//! that makes the peak, the buffers whose tops lie in a band below the peak are taken out and
//! put back one at a time (best-fit or first-fit) in several orders, among the buffers that
//! stay; the best of the orders replaces them when it lowers that part of the layout.

use super::by_time::ByTime;
use crate::analysis::Timeline;
use crate::outcome::Deadline;
use crate::placement::{Fit, Placer};
use crate::problem::{Buffer, Problem, Solution};
use crate::search::policy::mix;

/// The bands tried, as multiples of the peak's excess over the lower bound (at least one
/// byte): a buffer is taken out when its top lies within the band below the peak.
const BANDS: [u64; 5] = [1, 2, 4, 8, 16];

/// How far the time of a move reaches around the buffer it is made for, in starts of buffers
/// before and after it (0: its own lifetime).
const REACHES: [usize; 4] = [0, 16, 64, 256];

/// The most buffers a move takes out: a deeper band is cut to the highest ones.
const MOST_FREED: usize = 3000;

/// The orders each move puts the buffers back in.
const ORDERS: u64 = 6;

/// The result of [`reinsert`].
pub(crate) struct Reinserted {
    /// The layout, never worse than the one given.
    pub(crate) solution: Solution,
    /// How many moves were kept.
    pub(crate) moves: u64,
    /// How many buffers were put back, over every order of every move (the work done, counted
    /// as search nodes: the budget `nodes` limits it).
    pub(crate) placements: u64,
}

/// Lowers the peak of `start`, a valid layout of `problem` (no gaps), towards `lower` (a proven
/// bound) by ruin and recreate (see the module doc) until `deadline`, until `nodes` buffers
/// have been put back, or until the peak reaches `lower` or is at most `enough` (0 when only
/// the bound is). Each move is drawn from `seed` and the move's number alone, so the same call
/// gives the same layout on any machine.
pub(crate) fn reinsert(
    (problem, timeline): (&Problem, &Timeline),
    start: Solution,
    (lower, enough): (u64, u64),
    seed: u64,
    (deadline, nodes): (&Deadline<'_>, Option<u64>),
) -> Reinserted {
    let by_time = ByTime::new(problem);
    let mut result = Reinserted {
        solution: start,
        moves: 0,
        placements: 0,
    };
    let offsets = &mut result.solution.offsets;
    let end = |offsets: &[u64], i: usize| offsets[i].saturating_add(problem.buffers[i].size);
    let mut tops = Vec::new();
    let mut peak = 0;
    for draw in 0u64.. {
        if deadline.passed() || nodes.is_some_and(|n| result.placements >= n) {
            break;
        }
        if draw % 64 == 0 || tops.is_empty() {
            // The buffers making the peak, found again now and then (a kept move changes them).
            peak = (0..problem.len())
                .map(|i| end(offsets, i))
                .max()
                .unwrap_or(0);
            tops = (0..problem.len())
                .filter(|&i| end(offsets, i) == peak && problem.buffers[i].offset.is_none())
                .collect();
            if peak <= lower.max(enough) || tops.is_empty() {
                break;
            }
        }
        let h = mix(seed ^ draw.wrapping_mul(0x2545_f491_4f6c_dd1d));
        let at = tops[(h % tops.len() as u64) as usize];
        if end(offsets, at) < peak {
            tops.swap_remove((h % tops.len() as u64) as usize);
            continue; // lowered by an earlier move
        }
        let reach = REACHES[((h >> 24) % REACHES.len() as u64) as usize];
        let (span, floor) = match (h >> 32) % 2 {
            0 => {
                let band = BANDS[((h >> 16) % BANDS.len() as u64) as usize] * (peak - lower).max(1);
                (
                    by_time.around(&problem.buffers[at], reach),
                    peak.saturating_sub(band),
                )
            }
            _ => {
                // Everything live around the fullest time under the buffer.
                let t = timeline.starts[timeline.fullest_section(at)];
                let column = Buffer::new(String::new(), t, t + 1, 1);
                (by_time.around(&column, reach), 0)
            }
        };
        let Some(part) = Part::cut((problem, &by_time, offsets), span, floor) else {
            continue;
        };
        let left = nodes.map(|n| n - result.placements);
        let (found, placed) = part.recreate(problem, offsets, h, (deadline, left));
        if placed == 0 && left.is_some_and(|left| (part.freed.len() as u64) > left) {
            break; // not one order of this move within the nodes left
        }
        result.placements += placed;
        if let Some(new) = found {
            for (k, &i) in part.freed.iter().enumerate() {
                offsets[i] = new[k];
            }
            result.moves += 1;
            tops.retain(|&i| end(offsets, i) == peak);
        }
    }
    result
}

/// One move's part of the problem: the buffers taken out, and those that stay while they are
/// put back (live at some time of a freed buffer).
struct Part {
    freed: Vec<usize>,
    held: Vec<usize>,
}

impl Part {
    /// The buffers live in `(from, to)` whose tops lie above `floor` (not fixed in the
    /// problem), at most [`MOST_FREED`] of the highest; and those they meet in time. `None`
    /// when none is free.
    fn cut(
        (problem, by_time, offsets): (&Problem, &ByTime, &[u64]),
        span: (u64, u64),
        floor: u64,
    ) -> Option<Part> {
        let top = |i: usize| offsets[i].saturating_add(problem.buffers[i].size);
        let mut freed: Vec<usize> = by_time
            .overlapping(problem, span)
            .into_iter()
            .filter(|&i| top(i) > floor && problem.buffers[i].offset.is_none())
            .collect();
        if freed.is_empty() {
            return None;
        }
        if freed.len() > MOST_FREED {
            freed.sort_by_key(|&i| (std::cmp::Reverse(top(i)), i));
            freed.truncate(MOST_FREED);
            freed.sort_unstable();
        }
        let from = freed.iter().map(|&i| problem.buffers[i].lower).min();
        let to = freed.iter().map(|&i| problem.buffers[i].upper).max();
        let hull = (from.unwrap_or(0), to.unwrap_or(0));
        let held = by_time
            .overlapping(problem, hull)
            .into_iter()
            .filter(|i| freed.binary_search(i).is_err())
            .collect();
        Some(Part { freed, held })
    }

    /// The freed buffers put back in [`ORDERS`] orders drawn from `h`: the new offsets (in the
    /// order of `freed`) of the best, when it lowers the part's peak, or keeps it and lowers
    /// the freed buffers' weighted height; and how many buffers were put back.
    fn recreate(
        &self,
        problem: &Problem,
        offsets: &[u64],
        h: u64,
        (deadline, budget): (&Deadline<'_>, Option<u64>),
    ) -> (Option<Vec<u64>>, u64) {
        let sub = self.problem(problem);
        let mut base = Placer::new(&sub);
        let freed = self.freed.len();
        for (k, &i) in self.held.iter().enumerate() {
            if k % 4096 == 4095 && deadline.passed() {
                return (None, 0);
            }
            base.place(freed + k, offsets[i]);
        }
        let current: Vec<u64> = self.freed.iter().map(|&i| offsets[i]).collect();
        let current_peak = (current.iter().zip(&sub.buffers))
            .map(|(&o, b)| o.saturating_add(b.size))
            .fold(base.peak(), u64::max);
        let mut best = (self.score(&sub, current_peak, &current), None);
        let mut placed = 0;
        for order in 0..ORDERS {
            // An order is tried only if its placements fit the budget left.
            if deadline.passed() || budget.is_some_and(|b| placed + freed as u64 > b) {
                break;
            }
            let mut placer = base.clone();
            let (sequence, fit) = sequence(&sub, freed, order, mix(h ^ order), &current);
            for (n, &k) in sequence.iter().enumerate() {
                if n % 64 == 63 && deadline.passed() {
                    return (best.1, placed + n as u64); // this order unfinished
                }
                let offset = placer.position(k, fit);
                placer.place(k, offset);
            }
            placed += freed as u64;
            let new: Vec<u64> = (0..freed).map(|k| placer.offset(k).unwrap_or(0)).collect();
            let score = self.score(&sub, placer.peak(), &new);
            if score < best.0 {
                best = (score, Some(new));
            }
        }
        (best.1, placed)
    }

    /// What a move lowers: the part's peak, then the freed buffers' height weighted by their
    /// area (lower is better).
    fn score(&self, sub: &Problem, peak: u64, offsets: &[u64]) -> (u64, u128) {
        let weighted = offsets
            .iter()
            .zip(&sub.buffers)
            .map(|(&o, b)| {
                let area = u128::from(b.size) * u128::from(b.lifetime());
                area * u128::from(o.saturating_add(b.size))
            })
            .sum();
        (peak, weighted)
    }

    /// The part as a problem of its own: the freed buffers first, then the held (none fixed:
    /// the held are placed where they are).
    fn problem(&self, problem: &Problem) -> Problem {
        let copy = |&i: &usize| {
            let b = &problem.buffers[i];
            let mut c = Buffer::new(String::new(), b.lower, b.upper, b.size);
            c.alignment = b.alignment;
            c
        };
        let buffers = self.freed.iter().chain(&self.held).map(copy).collect();
        Problem::new(buffers, None)
    }
}

/// The order `order` of the first `freed` buffers of `sub` and how each is placed: by size,
/// by lifetime, by area (best-fit, largest first), by current offset (first-fit: no buffer
/// rises), then by size with a random factor up to two drawn from `h` (best-fit, then first-fit).
fn sequence(sub: &Problem, freed: usize, order: u64, h: u64, current: &[u64]) -> (Vec<usize>, Fit) {
    let b = &sub.buffers;
    let mut sequence: Vec<usize> = (0..freed).collect();
    let noise = |k: usize| 1.0 + (mix(h ^ k as u64) >> 11) as f64 / (1u64 << 53) as f64;
    let fit = match order {
        0 => {
            sequence.sort_by_key(|&k| (std::cmp::Reverse((b[k].size, b[k].lifetime())), k));
            Fit::Best
        }
        1 => {
            sequence.sort_by_key(|&k| (std::cmp::Reverse((b[k].lifetime(), b[k].size)), k));
            Fit::Best
        }
        2 => {
            sequence.sort_by_key(|&k| {
                (
                    std::cmp::Reverse(u128::from(b[k].size) * u128::from(b[k].lifetime())),
                    k,
                )
            });
            Fit::Best
        }
        3 => {
            sequence.sort_by_key(|&k| (current[k], k));
            Fit::First
        }
        _ => {
            let key = |k: usize| b[k].size as f64 * noise(k);
            sequence.sort_by(|&x, &y| key(y).total_cmp(&key(x)).then(x.cmp(&y)));
            match order % 2 {
                0 => Fit::Best,
                _ => Fit::First,
            }
        }
    };
    (sequence, fit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::minimize::test_layouts::{random_400 as problem, stacked};
    use crate::validate::validate;

    fn run(problem: &Problem, nodes: u64) -> Reinserted {
        let timeline = Timeline::new(problem);
        reinsert(
            (problem, &timeline),
            stacked(problem),
            (timeline.load(), 0),
            7,
            (&Deadline::none(), Some(nodes)),
        )
    }

    /// From the worst layout (peak about five times LOAD), the moves bring the peak within a
    /// fifth of LOAD, the layout valid; the same moves and layout again under the same budget.
    #[test]
    fn moves_lower_a_stacked_layout_the_same_way_every_time() {
        let problem = problem();
        let lower = Timeline::new(&problem).load();
        assert!(stacked(&problem).peak(&problem) > 4 * lower);
        let done = run(&problem, 200_000);
        let peak = done.solution.peak(&problem);
        assert!(validate(&problem, &done.solution, Some(u64::MAX)).is_valid());
        assert!(done.moves > 0);
        assert!(peak * 5 <= lower * 6, "peak {peak}, LOAD {lower}");
        let again = run(&problem, 200_000);
        assert_eq!(again.solution, done.solution);
        assert_eq!(
            (again.moves, again.placements),
            (done.moves, done.placements)
        );
    }

    /// Under small budgets the buffers put back never exceed the budget (a move tries only the
    /// orders that fit what is left), and a larger budget does at least as much.
    #[test]
    fn the_buffers_put_back_stay_within_the_budget() {
        let problem = problem();
        let mut before = 0;
        for nodes in [0, 1, 50, 399, 400, 1_000, 5_000] {
            let done = run(&problem, nodes);
            assert!(done.placements <= nodes, "{} > {nodes}", done.placements);
            assert!(done.placements >= before, "{} < {before}", done.placements);
            assert!(validate(&problem, &done.solution, Some(u64::MAX)).is_valid());
            before = done.placements;
        }
        assert!(before > 0);
    }
}
