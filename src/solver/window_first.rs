//! A layout built from the time of LOAD outwards: the buffers live in the window of time where
//! the live totals are largest, lifetimes clipped to it, are laid out by the search under a
//! target (LOAD first), kept there over their whole lifetimes, and every other buffer is placed
//! around them by first-fit, in the order of its offset in the best layout so far. When the peak is made by buffers living over most of the run, no
//! window of time frees them, but this one lays them out together with the largest stack.

use super::by_time::{clipped, ByTime};
use super::part_fit::fit_part;
use crate::analysis::Timeline;
use crate::outcome::Deadline;
use crate::placement::{Fit, Placer};
use crate::problem::{Problem, Solution};
use crate::search::{Outcome, PortfolioConfig, SearchOptions, SearchStats};

/// The windows tried: the sections whose live total is at least this many thousandths of LOAD,
/// from the first to the last of them.
const SHARES: [u64; 4] = [990, 970, 900, 800];

/// The most buffers a window holds: a larger one is not searched.
const MOST_HELD: usize = 6000;

/// Search nodes a window gets per buffer it holds.
const NODES_PER_BUFFER: u64 = 1;

/// The result of [`window_first`].
pub(crate) struct WindowFirst {
    /// The best layout built, if one was (not compared with any other).
    pub(crate) solution: Option<Solution>,
    /// The search's counters, summed over every window.
    pub(crate) stats: SearchStats,
}

/// Lays out `problem` (no gaps; `timeline` is its timeline) window first (see the module doc;
/// nothing when a buffer has a fixed offset),
/// with each window of [`SHARES`] fitted under `lower` (a proven bound) by the search within
/// [`NODES_PER_BUFFER`] nodes per buffer (and what is left of `nodes`), and the others placed
/// around them ([`around`]); the layout of the lowest peak, the first of equals.
pub(crate) fn window_first(
    (problem, timeline): (&Problem, &Timeline),
    (lower, current): (u64, &Solution),
    options: &SearchOptions,
    portfolio: &dyn Fn(usize) -> PortfolioConfig,
    (deadline, mut nodes): (&Deadline<'_>, Option<u64>),
) -> WindowFirst {
    let mut result = WindowFirst {
        solution: None,
        stats: SearchStats::default(),
    };
    if problem.buffers.iter().any(|b| b.offset.is_some()) {
        // A buffer fixed outside the window may meet, there, one laid out inside it.
        return result;
    }
    let by_time = ByTime::new(problem);
    let load = timeline.load();
    let mut best_peak = u64::MAX;
    let peak = current.peak(problem);
    let excess = peak.saturating_sub(lower);
    let mut tried = Vec::new();
    for share in SHARES {
        if deadline.passed() || nodes == Some(0) {
            break;
        }
        let full = |k: &usize| {
            u128::from(timeline.totals[*k]) * 1000 >= u128::from(load) * u128::from(share)
        };
        let (Some(first), Some(last)) = (
            (0..timeline.len()).find(full),
            (0..timeline.len()).rev().find(full),
        ) else {
            continue;
        };
        let window = (timeline.starts[first], timeline.ends[last]);
        if tried.contains(&window) {
            continue;
        }
        tried.push(window);
        let live = by_time.overlapping(problem, window);
        if live.len() > MOST_HELD {
            break; // the wider windows hold more
        }
        let part = clipped(problem, &live, window);
        for target in [lower + excess / 2, lower + excess / 4, lower] {
            if deadline.passed() || nodes == Some(0) {
                break;
            }
            if target >= peak.min(best_peak) {
                continue;
            }
            let budget = NODES_PER_BUFFER * live.len() as u64;
            let budget = nodes.map_or(budget, |left| left.min(budget));
            let searched = fit_part(&part, target, options, portfolio, (deadline, budget));
            result.stats.add(&searched.stats);
            if let Some(left) = nodes.as_mut() {
                *left = left.saturating_sub(searched.stats.nodes);
            }
            let Outcome::Found(inside) = searched.outcome else {
                break;
            };
            let Some(layout) = around(problem, &live, &inside.offsets, current, deadline) else {
                break;
            };
            let layout_peak = layout.peak(problem);
            if layout_peak >= peak {
                break; // the rest does not fit around this window: a lower target will not help
            }
            if layout_peak < best_peak {
                (best_peak, result.solution) = (layout_peak, Some(layout));
            }
        }
    }
    result
}

/// A layout of `problem` with the buffers `live` at `offsets` (in the order of `live`) and the
/// others placed around them by first-fit in the order of their offsets in `current` (the
/// rest of that layout, each buffer as low as it goes); `None` when `deadline` passes first.
fn around(
    problem: &Problem,
    live: &[usize],
    offsets: &[u64],
    current: &Solution,
    deadline: &Deadline<'_>,
) -> Option<Solution> {
    let mut placer = Placer::new(problem);
    for (k, &i) in live.iter().enumerate() {
        placer.place(i, offsets[k]);
    }
    let mut rest: Vec<usize> = (0..problem.len())
        .filter(|i| live.binary_search(i).is_err())
        .collect();
    rest.sort_by_key(|&i| (current.offsets[i], i));
    for (n, &i) in rest.iter().enumerate() {
        if n % 1024 == 0 && deadline.passed() {
            return None;
        }
        let offset = placer.position(i, Fit::First);
        placer.place(i, offset);
    }
    placer.offsets().map(|offsets| Solution { offsets })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{perfect, PerfectOptions};
    use crate::problem::Buffer;
    use crate::solver::test_layouts::{hand_made, portfolio_of, stacked};
    use crate::validate::validate;

    /// A perfect packing of 60 buffers at LOAD 1024 over steps [0, 100), then 40 small buffers
    /// one after another over [100, 140), far below LOAD: a layout at LOAD exists.
    fn problem() -> Problem {
        let options = PerfectOptions {
            buffers: 60,
            ..PerfectOptions::default()
        };
        let (packed, _) = perfect(&options, 7);
        let mut buffers = packed.buffers;
        for k in 0..40u64 {
            let size = 1 + (k * 37) % 200;
            buffers.push(Buffer::new(format!("tail{k}"), 100 + k, 101 + k, size));
        }
        Problem::new(buffers, None)
    }

    fn run(problem: &Problem, threads: usize) -> WindowFirst {
        // The hand-made round robin, whose first dive packs this window (a window gets about
        // one node per buffer).
        let options = hand_made(threads);
        let portfolio = portfolio_of(&options);
        let timeline = Timeline::new(problem);
        window_first(
            (problem, &timeline),
            (timeline.load(), &stacked(problem)),
            &options,
            &portfolio,
            (&Deadline::none(), Some(20_000)),
        )
    }

    /// From the stacked layout, the window of the packing is laid out at LOAD by the search and
    /// the tail around it: the layout is valid and at LOAD, the same under a node budget with
    /// one thread or two.
    #[test]
    fn the_window_of_the_largest_totals_is_laid_out_first_at_load() {
        let problem = problem();
        let timeline = Timeline::new(&problem);
        assert_eq!(timeline.load(), 1024);
        assert!(stacked(&problem).peak(&problem) > 2 * 1024);
        let built = run(&problem, 1);
        let layout = built.solution.expect("a layout");
        assert!(validate(&problem, &layout, Some(1024)).is_valid());
        assert_eq!(layout.peak(&problem), 1024);
        for threads in [1, 2] {
            let again = run(&problem, threads);
            assert_eq!(again.solution, Some(layout.clone()), "{threads} threads");
            assert_eq!(again.stats.nodes, built.stats.nodes, "{threads} threads");
        }
    }
}
