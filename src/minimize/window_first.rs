//! A layout built from the time of LOAD outwards: the buffers live in the window of time where
//! the live totals are largest, lifetimes clipped to it, are laid out by the search under a
//! target (LOAD first), kept there over their whole lifetimes, and every other buffer is placed
//! around them by first-fit, in the order of its offset in the best layout so far. When the peak is made by buffers living over most of the run, no
//! window of time frees them, but this one lays them out together with the largest stack.
//! Where the others then end above the target (a large buffer far from the window, with no
//! room left by the long-lived ones laid out in it), the fullest sections of the buffers
//! ending highest join the window of the largest totals, the time between cut out, and the
//! search lays out the buffers live in any of them again (`window-grow`), until the rest fits
//! or comes no lower.

use super::by_time::{clipped_to_windows, ByTime};
use super::options::MinimizeOptions;
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

/// The most searches of one window and those added to it where the rest ended above the target.
const MOST_WINDOWS: usize = 16;

/// How many searches in a row may give layouts no lower than the best before the window
/// stops growing (a grown window's layout may come out higher, and the next lower again).
const PATIENCE: u32 = 2;

/// A grown window holds at most twice the buffers of the first, and this many more.
const GROWN_MORE: usize = 1000;

/// The most windows added after a search: the fullest sections of the buffers ending highest.
const WINDOWS_ADDED: usize = 4;

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
/// with each window of [`SHARES`] (grown as the module doc says) fitted under `lower` (a
/// proven bound) by the search within
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
        if by_time.overlapping(problem, window).len() > MOST_HELD {
            break; // the wider windows hold more
        }
        for target in [lower + excess / 2, lower + excess / 4, lower] {
            if deadline.passed() || nodes == Some(0) {
                break;
            }
            if target >= peak.min(best_peak) {
                continue;
            }
            let built = windows_first(
                (problem, timeline, &by_time),
                (window, target, current),
                (
                    options,
                    MinimizeOptions::of(options).window_grow && share == SHARES[0],
                ),
                portfolio,
                (deadline, &mut nodes, &mut result.stats),
            );
            let Some(layout) = built else {
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

/// The layout of the lowest peak built from `first` and, with `grow`, the windows added to it:
/// the buffers live in them searched under `target`, the rest placed around them. The second
/// search takes `first` again with every first step of its buffers on the clock (their order
/// of starts kept); then each search adds the fullest sections of the buffers ending highest
/// above the target ([`highest_over`]), until the rest fits under it, [`PATIENCE`] searches
/// in a row come no lower, or the window holds more than twice the first's buffers and
/// [`GROWN_MORE`]. `None` when no search finds a layout.
fn windows_first(
    (problem, timeline, by_time): (&Problem, &Timeline, &ByTime),
    (first, target, current): ((u64, u64), u64, &Solution),
    (options, grow): (&SearchOptions, bool),
    portfolio: &dyn Fn(usize) -> PortfolioConfig,
    (deadline, nodes, stats): (&Deadline<'_>, &mut Option<u64>, &mut SearchStats),
) -> Option<Solution> {
    let mut windows = vec![first];
    let mut best: Option<Solution> = None;
    let mut best_over = Vec::new(); // where the best layout ends above the target
    let mut stale = 0; // searches in a row whose layout came no lower than the best
    let mut most = MOST_HELD;
    let searches = if grow { MOST_WINDOWS } else { 1 };
    for search in 0..searches {
        if deadline.passed() || *nodes == Some(0) {
            break;
        }
        // The second search: the first window again, with every first step of its buffers.
        let ordered = search == 1;
        let mut live: Vec<usize> = windows
            .iter()
            .flat_map(|&w| by_time.overlapping(problem, w))
            .collect();
        live.sort_unstable();
        live.dedup();
        if live.len() > most {
            break;
        }
        if search == 0 {
            most = most.min(2 * live.len() + GROWN_MORE);
        }
        let clock = with_starts(problem, &live, &windows, ordered);
        let part = clipped_to_windows(problem, &live, &clock);
        let budget = NODES_PER_BUFFER * live.len() as u64;
        let budget = nodes.map_or(budget, |left| left.min(budget));
        let searched = fit_part(&part, target, options, portfolio, (deadline, budget));
        stats.add(&searched.stats);
        if let Some(left) = nodes.as_mut() {
            *left = left.saturating_sub(searched.stats.nodes);
        }
        let layout = match searched.outcome {
            Outcome::Found(inside) => around(problem, &live, &inside.offsets, current, deadline),
            _ => None,
        };
        let Some(layout) = layout else {
            match search {
                0 if searches > 1 => continue, // the ordered clock may do better
                1 if best.is_some() => {
                    windows.extend(best_over.iter().copied());
                    windows.sort_unstable();
                    continue;
                }
                _ => break,
            }
        };
        let layout_peak = layout.peak(problem);
        let over = highest_over(problem, timeline, (&layout, target), &live);
        if over.is_empty() {
            best = Some(layout); // under the target: the lowest peak yet
            break;
        }
        match best.as_ref().is_none_or(|b| layout_peak < b.peak(problem)) {
            true => (best, best_over, stale) = (Some(layout), over.clone(), 0),
            false if ordered => {}
            false => stale += 1,
        }
        if stale == PATIENCE {
            break; // the window grew and the rest came no lower
        }
        match search {
            0 => {}
            1 => windows.extend(best_over.iter().copied()),
            _ => windows.extend(over),
        }
        windows.sort_unstable();
        windows.dedup();
    }
    best
}

/// `windows` (in order, apart) with the steps where two buffers `live` meet outside them: by
/// Helly's property of intervals, two live buffers that meet and share a window meet in it;
/// two that share none meet at the later one's first step, between windows, which is added.
/// So over these windows the buffers `live` meet exactly where they meet in the whole problem
/// (one window: none added). With `every`, the first step of every live buffer starting
/// outside the windows is added.
fn with_starts(
    problem: &Problem,
    live: &[usize],
    windows: &[(u64, u64)],
    every: bool,
) -> Vec<(u64, u64)> {
    let b = &problem.buffers;
    let first = |i: usize| windows.partition_point(|w| w.1 <= b[i].lower);
    let last = |i: usize| windows.partition_point(|w| w.0 < b[i].upper) - 1;
    // The latest end of the live buffers whose last window is at most `k`.
    let mut latest = vec![0; windows.len()];
    for &i in live {
        latest[last(i)] = latest[last(i)].max(b[i].upper);
    }
    for k in 1..latest.len() {
        latest[k] = latest[k].max(latest[k - 1]);
    }
    let mut all = windows.to_vec();
    all.extend(
        live.iter()
            .filter(|&&i| match every {
                true => !(first(i) < windows.len() && windows[first(i)].0 <= b[i].lower),
                false => first(i) > 0 && latest[first(i) - 1] > b[i].lower,
            })
            .map(|&i| (b[i].lower, b[i].lower + 1)),
    );
    all.sort_unstable();
    all.dedup();
    all
}

/// The fullest sections of the buffers of `layout` ending above `target` (not in `live`): of the
/// highest first, at most [`WINDOWS_ADDED`] sections, as windows of time.
fn highest_over(
    problem: &Problem,
    timeline: &Timeline,
    (layout, target): (&Solution, u64),
    live: &[usize],
) -> Vec<(u64, u64)> {
    let end = |i: usize| layout.offsets[i].saturating_add(problem.buffers[i].size);
    let mut over: Vec<usize> = (0..problem.len())
        .filter(|&i| end(i) > target && live.binary_search(&i).is_err())
        .collect();
    over.sort_by_key(|&i| (std::cmp::Reverse(end(i)), i));
    let mut windows: Vec<(u64, u64)> = Vec::new();
    for i in over {
        let fullest = timeline.fullest_section(i);
        let window = (timeline.starts[fullest], timeline.ends[fullest]);
        if !windows.contains(&window) {
            windows.push(window);
        }
        if windows.len() == WINDOWS_ADDED {
            break;
        }
    }
    windows
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
    use crate::minimize::test_layouts::{hand_made, portfolio_of, stacked};
    use crate::problem::Buffer;
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

    /// Over windows with the live buffers' first steps added, two live buffers meet on the
    /// joined clock exactly when they meet in the whole problem; over the windows alone, some
    /// meeting only between windows do not (the steps are needed).
    #[test]
    fn buffers_meet_over_the_joined_windows_exactly_where_they_meet() {
        let problem = crate::minimize::test_layouts::random_400();
        let meet = |a: &Buffer, b: &Buffer| a.lower < b.upper && b.lower < a.upper;
        let by_time = ByTime::new(&problem);
        let mut missed = 0;
        for windows in [
            vec![(10, 12), (40, 45)],
            vec![(100, 101), (130, 131), (160, 170)],
        ] {
            let mut live: Vec<usize> = windows
                .iter()
                .flat_map(|&w| by_time.overlapping(&problem, w))
                .collect();
            live.sort_unstable();
            live.dedup();
            let joined = clipped_to_windows(
                &problem,
                &live,
                &with_starts(&problem, &live, &windows, false),
            );
            let bare = clipped_to_windows(&problem, &live, &windows);
            for x in 0..live.len() {
                for y in 0..x {
                    let whole = meet(&problem.buffers[live[x]], &problem.buffers[live[y]]);
                    assert_eq!(meet(&joined.buffers[x], &joined.buffers[y]), whole);
                    if whole && !meet(&bare.buffers[x], &bare.buffers[y]) {
                        missed += 1;
                    }
                }
            }
        }
        assert!(missed > 0, "{missed}");
    }

    /// Long buffers `a` (3 bytes) and `b` (2) live through the window of LOAD (steps 8 and 9,
    /// LOAD 13) and through step 2, where `d` needs 5 free bytes in one piece. The window's
    /// own layout parts `a` and `b` so that `d` ends above the target; step 2 is added to the
    /// window and the layout reaches LOAD. Without `window-grow` it stays above.
    #[test]
    fn a_window_grows_where_the_rest_does_not_fit() {
        let mut buffers = vec![
            Buffer::new("a", 0, 10, 3),
            Buffer::new("b", 0, 10, 2),
            Buffer::new("d", 2, 3, 5),
        ];
        for (k, size) in [3, 4, 1].into_iter().enumerate() {
            buffers.push(Buffer::new(format!("c{k}"), 8, 10, size));
        }
        let problem = Problem::new(buffers, None);
        let timeline = Timeline::new(&problem);
        assert_eq!(timeline.load(), 13);
        let run = |grow: bool, threads: usize| {
            let options = SearchOptions {
                window_grow: grow,
                ..hand_made(threads)
            };
            let portfolio = portfolio_of(&options);
            window_first(
                (&problem, &timeline),
                (timeline.load(), &stacked(&problem)),
                &options,
                &portfolio,
                (&Deadline::none(), Some(20_000)),
            )
        };
        let grown = run(true, 1).solution.expect("a layout");
        assert!(validate(&problem, &grown, Some(13)).is_valid());
        assert_eq!(grown.peak(&problem), 13);
        assert_eq!(run(true, 2).solution, Some(grown));
        let alone = run(false, 1).solution.map(|l| l.peak(&problem));
        assert!(alone.is_none_or(|peak| peak > 13), "{alone:?}");
    }
}
