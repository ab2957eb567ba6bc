//! Improvement by large-neighbourhood search: a layout's peak lowered window by window. Around
//! each buffer that ends above a target, the buffers living wholly inside a window of time are
//! freed, those crossing its edges stay where they are (fixed), and the search re-places the
//! freed ones under the target; a window that fits replaces its part of the layout. With
//! `lns-obstacles` the held buffers reach the search joined into few fixed obstacles
//! ([`compressed`]), so a window holding thousands (long-lived buffers crossing it) is searched.

use super::by_time::ByTime;
use super::obstacles::compressed;
use super::options::MinimizeOptions;
use super::part_fit::fit_part;
use crate::outcome::Deadline;
use crate::problem::{Problem, Solution};
use crate::search::{Outcome, PortfolioConfig, SearchOptions, SearchStats};

/// Search nodes a window gets per freed buffer (a fixed budget: the same windows give the same
/// layout on any machine).
const NODES_PER_FREED: u64 = 2;

/// Search nodes a window gets per freed buffer on a problem too large for probes of the whole,
/// where the windows are the only search (on the 1M mix, windows of 464 to 2,005 freed buffers
/// around the time of LOAD that fail at two find layouts at eight).
const NODES_PER_FREED_ALONE: u64 = 8;

/// A window first reaches this many starts of buffers before and after the buffer it is made
/// for (then twice as many at each widening).
const WINDOW_STARTS: usize = 256;

/// The last tries around a buffer free, in the widest window, only the buffers ending in the
/// top band of the layout: above the target less these many times the peak's excess over the
/// lower bound (so a window as long as a long-lived buffer frees few); the first alone without
/// `lns-obstacles`, whose windows would hold too many.
const BANDS: [u64; 3] = [2, 8, 32];

/// With `lns-bands`, when the windows are the only search, the bands tried, each window widened
/// over the buffers crossing it with tops in its band: on the 1M mix, the windows that lower
/// the peak free the buffers of the top 16 and 32 times the excess, over the lifetimes of the
/// long-lived ones among them.
const WIDENED_BANDS: [u64; 4] = [2, 8, 16, 32];

/// One try at lowering a buffer: the window reaching `WINDOW_STARTS << widening` starts around
/// it, freeing the buffers inside it ending above `band` (0: all), widened over the buffers
/// crossing it that end above `band` when `over_band` (else only over those above the target).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Attempt {
    widening: u32,
    band: u64,
    over_band: bool,
}

/// The attempts at a buffer for `target`, `excess` the peak's excess over the lower bound: the
/// windows widening, then the widest with only its top band freed. With `lns-bands`, when the
/// windows are `alone`, the bands come first, each widened over the buffers crossing it (most
/// fail before a node, for want of room under the target, where a window freeing every buffer
/// costs a second at a million buffers). On smaller problems the bands stay as they were: the
/// widened ones, first or last, gave no lower peaks under the same nodes (3,000 buffers: as
/// often higher as lower).
fn attempts(own: &MinimizeOptions, target: u64, excess: u64, alone: bool) -> Vec<Attempt> {
    let band = |k: u64| target.saturating_sub(k * excess);
    let whole = (0..=WIDENINGS).map(|widening| Attempt {
        widening,
        band: 0,
        over_band: false,
    });
    let banded = |bands: &[u64], over_band: bool| -> Vec<Attempt> {
        let at = |&k: &u64| Attempt {
            widening: WIDENINGS,
            band: band(k),
            over_band,
        };
        bands.iter().map(at).collect()
    };
    match (own.lns_obstacles, own.lns_bands && alone) {
        (true, true) => banded(&WIDENED_BANDS, true)
            .into_iter()
            .chain(whole)
            .collect(),
        (true, false) => whole.chain(banded(&BANDS, false)).collect(),
        (false, _) => whole.chain(banded(&BANDS[..1], false)).collect(),
    }
}

/// The most buffers a window frees: a larger one is not searched.
const MOST_FREED: usize = 4000;

/// The most buffers a window holds without `lns-obstacles`: the search's model of a larger one
/// costs too much time and memory before its first node (at 28,000 buffers, idealloc's S_1,
/// it went past the time limit and took 900 MB).
const MOST_HELD: usize = 12_000;

/// How many times a window that does not fit is widened (doubling its reach) before the target
/// is given up for a nearer one.
const WIDENINGS: u32 = 2;

/// The result of [`improve`].
pub(crate) struct Improved {
    /// The layout, never worse than the one given.
    pub(crate) solution: Solution,
    /// How many windows were re-placed.
    pub(crate) windows: u64,
    /// The search's counters, summed over every window.
    pub(crate) stats: SearchStats,
}

/// Lowers the peak of `start`, a valid layout of `problem` (no gaps), towards `lower` (a proven
/// bound) or until it is at most `enough` (0 when only the bound is): each round sets a target
/// below the peak, and re-places a window of time around every buffer ending above it (see the
/// module doc), each window with [`NODES_PER_FREED`] nodes per freed buffer, or
/// [`NODES_PER_FREED_ALONE`] when the windows are `alone`, the only search of the problem (see
/// [`attempts`]); when every buffer is under the target, the next round aims lower, else
/// nearer.
/// Stops at `deadline`, when `nodes` are spent, or when no target below the peak is left.
/// `portfolio(buffers)` gives each window's search its portfolio.
pub(crate) fn improve(
    problem: &Problem,
    start: Solution,
    (lower, enough): (u64, u64),
    options: &SearchOptions,
    portfolio: &dyn Fn(usize) -> PortfolioConfig,
    (deadline, mut nodes, alone): (&Deadline<'_>, Option<u64>, bool),
) -> Improved {
    let by_time = ByTime::new(problem);
    let per_freed = match alone {
        true => NODES_PER_FREED_ALONE,
        false => NODES_PER_FREED,
    };
    let windows = Windows {
        problem,
        by_time: &by_time,
        options,
        own: MinimizeOptions::of(options),
        portfolio,
        deadline,
        per_freed,
        alone,
    };
    let mut offsets = start.offsets;
    let mut result = Improved {
        solution: Solution {
            offsets: Vec::new(),
        },
        windows: 0,
        stats: SearchStats::default(),
    };
    let end = |offsets: &[u64], i: usize| offsets[i].saturating_add(problem.buffers[i].size);
    let mut peak = (0..problem.len())
        .map(|i| end(&offsets, i))
        .max()
        .unwrap_or(0);
    let mut step = peak.saturating_sub(lower) / 4;
    'rounds: while step > 0 && peak > lower.max(enough) {
        let target = peak - step;
        let mut above: Vec<usize> = (0..problem.len())
            .filter(|&i| end(&offsets, i) > target)
            .collect();
        above.sort_by_key(|&i| (problem.buffers[i].lower, i));
        let mut reached = true;
        for &i in &above {
            if end(&offsets, i) <= target {
                continue; // moved by an earlier window
            }
            if deadline.passed() || nodes == Some(0) {
                break 'rounds;
            }
            let excess = peak.saturating_sub(lower);
            match windows.lower(i, (target, excess), &mut offsets, &mut nodes, &mut result) {
                Lowering::Placed => {}
                Lowering::Stopped => break 'rounds,
                Lowering::NotPlaced => {
                    reached = false;
                    break;
                }
            }
        }
        let new_peak = (0..problem.len())
            .map(|i| end(&offsets, i))
            .max()
            .unwrap_or(0);
        if reached {
            peak = new_peak;
            step = step.max(1).min(peak.saturating_sub(lower) / 2).max(1);
        } else {
            peak = new_peak;
            step /= 2;
        }
    }
    result.solution = Solution { offsets };
    result
}

/// How a try at lowering one buffer ended.
enum Lowering {
    /// A window around it was re-placed under the target.
    Placed,
    /// No window around it fits under the target.
    NotPlaced,
    /// The deadline passed or the nodes ran out.
    Stopped,
}

/// What the windows of [`improve`] are searched with.
struct Windows<'a> {
    problem: &'a Problem,
    by_time: &'a ByTime,
    options: &'a SearchOptions,
    own: MinimizeOptions,
    portfolio: &'a dyn Fn(usize) -> PortfolioConfig,
    deadline: &'a Deadline<'a>,
    per_freed: u64,
    alone: bool,
}

impl Windows<'_> {
    /// Tries the [`attempts`] at buffer `i` for `target` (`excess`: the peak's excess over the
    /// lower bound), each window with `per_freed` nodes per freed buffer out of `nodes`; the
    /// first that fits replaces its part of `offsets` and counts in `result`.
    fn lower(
        &self,
        i: usize,
        (target, excess): (u64, u64),
        offsets: &mut [u64],
        nodes: &mut Option<u64>,
        result: &mut Improved,
    ) -> Lowering {
        let (problem, options) = (self.problem, self.options);
        for attempt in attempts(&self.own, target, excess, self.alone) {
            let window = self
                .by_time
                .around(&problem.buffers[i], WINDOW_STARTS << attempt.widening);
            let Some(window) =
                Window::around((problem, self.by_time, offsets), window, target, attempt)
            else {
                continue;
            };
            let held_most = match self.own.lns_obstacles {
                true => usize::MAX,
                false => MOST_HELD,
            };
            if window.freed.len() > MOST_FREED || window.held.len() > held_most {
                continue; // too large for a short search
            }
            let budget = self.per_freed * window.freed.len() as u64;
            let budget = nodes.map_or(budget, |left| left.min(budget));
            let (found, stats) = window.fit(
                (problem, offsets),
                target,
                (options, self.own.lns_obstacles),
                self.portfolio,
                (self.deadline, budget),
            );
            result.stats.add(&stats);
            if let Some(left) = nodes.as_mut() {
                *left = left.saturating_sub(stats.nodes);
            }
            if let Some(sub) = found {
                for (k, &j) in window.freed.iter().enumerate() {
                    offsets[j] = sub.offsets[k];
                }
                result.windows += 1;
                return Lowering::Placed;
            }
            if self.deadline.passed() || *nodes == Some(0) {
                return Lowering::Stopped;
            }
        }
        Lowering::NotPlaced
    }
}

/// A window of time: the buffers freed (living wholly inside it, free in the problem) and those
/// held at their offsets (crossing its edges, or fixed in the problem).
struct Window {
    freed: Vec<usize>,
    held: Vec<usize>,
}

impl Window {
    /// The window `(from, to)` widened until no held buffer ends above `target` (a few times
    /// at most; first over those ending above the attempt's band, when it says so): freed, the
    /// buffers living wholly inside it (not fixed in the problem) and ending above the band;
    /// held, the others live in it. `None` when one held still ends above `target`.
    fn around(
        (problem, by_time, offsets): (&Problem, &ByTime, &[u64]),
        (mut from, mut to): (u64, u64),
        target: u64,
        attempt: Attempt,
    ) -> Option<Window> {
        let band = attempt.band;
        for pass in 0..4 {
            let mut window = Window {
                freed: Vec::new(),
                held: Vec::new(),
            };
            let mut widened = false;
            // The first pass widens over the crossing buffers a band frees when they are inside.
            let over = match attempt.over_band && pass == 0 && band > 0 {
                true => band,
                false => target,
            };
            for i in by_time.overlapping(problem, (from, to)) {
                let b = &problem.buffers[i];
                let top = offsets[i].saturating_add(b.size);
                if from <= b.lower && b.upper <= to && b.offset.is_none() && top > band {
                    window.freed.push(i);
                    continue;
                }
                window.held.push(i);
                if top > over && b.offset.is_none() {
                    (from, to) = (from.min(b.lower), to.max(b.upper));
                    widened = true;
                } else if top > target {
                    return None; // fixed in the problem above the target
                }
            }
            if !widened {
                return Some(window);
            }
        }
        None
    }

    /// The freed buffers' offsets under `target` (in the order of `freed`), from the search on
    /// the window alone with the held buffers fixed at `offsets`, within `nodes`; and its
    /// counters.
    fn fit(
        &self,
        (problem, offsets): (&Problem, &[u64]),
        target: u64,
        (options, obstacles): (&SearchOptions, bool),
        portfolio: &dyn Fn(usize) -> PortfolioConfig,
        (deadline, nodes): (&Deadline<'_>, u64),
    ) -> (Option<Solution>, SearchStats) {
        let window = match obstacles {
            true => Problem {
                capacity: Some(target),
                ..compressed(problem, offsets, (&self.freed, &self.held))
            },
            false => {
                let freed = self.freed.iter().map(|&i| problem.buffers[i].clone());
                let held = self.held.iter().map(|&i| {
                    let mut b = problem.buffers[i].clone();
                    b.offset = Some(offsets[i]);
                    b
                });
                Problem::new(freed.chain(held).collect(), Some(target))
            }
        };
        let result = fit_part(&window, target, options, portfolio, (deadline, nodes));
        match result.outcome {
            Outcome::Found(solution) => (Some(solution), result.stats),
            _ => (None, result.stats),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load;
    use crate::minimize::test_layouts::{hand_made, portfolio_of, random_400 as problem, stacked};
    use crate::problem::Buffer;
    use crate::validate::validate;

    fn run(problem: &Problem, threads: usize) -> Improved {
        // What minimise gives the windows with the default policy.
        let options = hand_made(threads);
        let portfolio = portfolio_of(&options);
        let start = stacked(problem);
        let deadline = Deadline::none();
        let lower = load(problem);
        improve(
            problem,
            start,
            (lower, 0),
            &options,
            &portfolio,
            (&deadline, Some(50_000), false),
        )
    }

    /// A long-lived buffer laid 5 bytes too high under a short one over 2,400 steps of tiles
    /// filling the 100 bytes below (LOAD 120, peak 125): every window around the short one is
    /// crossed by the long one, which it holds, so without `lns-bands` (or with it, where the
    /// windows are not alone) nothing moves; the band widened over the long one frees both and
    /// the search lays them out at LOAD, the same way with one and two threads.
    #[test]
    fn a_band_widened_over_a_long_lived_buffer_frees_it() {
        const STEPS: u64 = 2400;
        let mut buffers: Vec<Buffer> = (0..STEPS)
            .map(|t| Buffer::new(format!("tile{t}"), t, t + 1, 100))
            .collect();
        buffers.push(Buffer::new("long", 0, STEPS, 10));
        buffers.push(Buffer::new("short", STEPS / 2, STEPS / 2 + 1, 10));
        let problem = Problem::new(buffers, None);
        let mut offsets = vec![0; STEPS as usize];
        offsets.extend([105, 115]);
        let start = Solution { offsets };
        let lower = load(&problem);
        assert_eq!((start.peak(&problem), lower), (125, 120));
        let run = |lns_bands: bool, threads: usize, alone: bool| {
            let options = SearchOptions {
                lns_bands,
                ..hand_made(threads)
            };
            let portfolio = portfolio_of(&options);
            let deadline = Deadline::none();
            let nodes = Some(50_000);
            improve(
                &problem,
                start.clone(),
                (lower, 0),
                &options,
                &portfolio,
                (&deadline, nodes, alone),
            )
        };
        assert_eq!(run(false, 1, true).solution.peak(&problem), 125);
        assert_eq!(run(true, 1, false).solution.peak(&problem), 125);
        let lowered = run(true, 1, true);
        assert_eq!(lowered.solution.peak(&problem), 120);
        assert!(validate(&problem, &lowered.solution, Some(120)).is_valid());
        assert_eq!(run(true, 2, true).solution, lowered.solution);
    }

    /// From the worst layout (every buffer stacked, peak about five times LOAD), the windows
    /// bring the peak within a fifth of LOAD, every layout valid; under a node budget the
    /// answer is the same again and with two threads.
    #[test]
    fn windows_lower_a_stacked_layout_the_same_way_every_time() {
        let problem = problem();
        let lower = load(&problem);
        let start_peak = stacked(&problem).peak(&problem);
        assert!(start_peak > 4 * lower, "{start_peak} against LOAD {lower}");
        let improved = run(&problem, 1);
        let peak = improved.solution.peak(&problem);
        assert!(validate(&problem, &improved.solution, Some(u64::MAX)).is_valid());
        assert!(improved.windows > 0);
        assert!(peak * 5 <= lower * 6, "peak {peak}, LOAD {lower}");
        for threads in [1, 2] {
            let again = run(&problem, threads);
            assert_eq!(again.solution, improved.solution, "{threads} threads");
            assert_eq!(again.stats.nodes, improved.stats.nodes, "{threads} threads");
        }
    }
}
