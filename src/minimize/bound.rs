//! The bound phase of minimise: a lower bound above LOAD, proved on windows of time. Every
//! layout of the problem gives a layout of the buffers live in a window of time, their
//! lifetimes clipped to it (clipping only removes overlaps), under the same peak; so a window
//! the search proves does not fit under a height `H` proves that no layout of the whole
//! problem has a peak of `H` or less.

use super::by_time::{clipped, ByTime};
use super::part_fit::fit_part;
use crate::analysis::Timeline;
use crate::outcome::Deadline;
use crate::problem::{Problem, Solution};
use crate::search::{Outcome, PortfolioConfig, SearchOptions, SearchStats};
use std::collections::{HashMap, HashSet};

/// How much work the bound phase gives its windows: fixed numbers, so that the same windows give
/// the same bound on any machine.
struct Effort {
    /// Search nodes a window gets per buffer it holds.
    nodes_per_buffer: u64,
    /// The least node budget of a window.
    least_nodes: u64,
    /// The most buffers a window holds: a larger one is not searched.
    most_held: usize,
    /// How many buffers ending at the layout's peak give a window's centre (by start).
    peak_centres: usize,
    /// How many sections of the largest live totals give a window's centre.
    load_centres: usize,
}

/// The bound phase's effort.
const EFFORT: Effort = Effort {
    nodes_per_buffer: 64,
    least_nodes: 2_000,
    most_held: 2_000,
    peak_centres: 8,
    load_centres: 32,
};

/// Where a proven lower bound on the peak comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BoundSource {
    /// LOAD: the most bytes live at one time.
    Load,
    /// The search on the whole problem: it does not fit under one byte less than the bound.
    WholeProblem,
    /// CP-SAT's bound on the whole problem (`--algo cpsat`).
    CpSat,
    /// A window of time whose buffers, lifetimes clipped to it, do not fit under `height` (the
    /// bound is the next multiple of the problem's granule above it).
    Window {
        /// The window's first time step.
        from: u64,
        /// One past the window's last time step.
        to: u64,
        /// How many buffers are live in it.
        buffers: usize,
        /// The height the search proved they do not fit under.
        height: u64,
    },
}

impl std::fmt::Display for BoundSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let &BoundSource::Window {
            from,
            to,
            buffers,
            height,
        } = self
        else {
            return f.write_str(match self {
                BoundSource::WholeProblem => "the search on the whole problem",
                BoundSource::CpSat => "CP-SAT",
                _ => "LOAD",
            });
        };
        write!(
            f,
            "window [{from},{to}) of {buffers} buffers infeasible at {height}"
        )
    }
}

/// The result of [`prove`].
pub(crate) struct Bound {
    /// The proven lower bound (never below the one given).
    pub(crate) lower: u64,
    /// Where it comes from.
    pub(crate) source: BoundSource,
    /// The search's counters, summed over every window.
    pub(crate) stats: SearchStats,
}

impl Bound {
    /// The bound `lower` from `source`, nothing searched.
    pub(crate) fn of((lower, source): (u64, BoundSource)) -> Bound {
        Bound {
            lower,
            source,
            stats: SearchStats::default(),
        }
    }
}

/// Whether the bound phase can search a window at the time of LOAD: the first section of the
/// largest total holds at most [`Effort::most_held`] buffers (on some large graphs thousands
/// live at once, and no window there is searched).
pub(crate) fn can_search_at_load(timeline: &Timeline) -> bool {
    let Some(most) = timeline.totals.iter().max() else {
        return false;
    };
    let at = timeline.totals.iter().position(|t| t == most);
    let at = at.expect("the largest total is one of them");
    let live = timeline.buffer_sections.iter().filter(|s| s.contains(&at));
    live.count() <= EFFORT.most_held
}

/// Raises `lower` (a proven bound, from `source`) on `problem` (no gaps; `timeline` is its
/// timeline) by windows of time: around each centre (the first section of the buffers ending
/// at `layout`'s peak, then the sections of the largest totals), windows of 1, 3, 5, 9, 17, ...
/// sections are asked, each within its [`Effort`] of nodes, whether their buffers fit under
/// the bound. One proven not to raises the bound to the next multiple of the problem's
/// [`granule`] (the optimum is one) and is asked again; one that fits widens; one the budget
/// does not decide moves on to the next centre. Stops at `deadline`, when `nodes` are spent,
/// or when the bound reaches the layout's peak.
pub(crate) fn prove(
    (problem, timeline, layout): (&Problem, &Timeline, &Solution),
    (lower, source): (u64, BoundSource),
    options: &SearchOptions,
    portfolio: &dyn Fn(usize) -> PortfolioConfig,
    (deadline, mut nodes): (&Deadline<'_>, Option<u64>),
) -> Bound {
    let peak = layout.peak(problem);
    let mut bound = Bound::of((lower, source));
    if timeline.is_empty() || lower >= peak || deadline.passed() {
        return bound;
    }
    let granule = granule(problem);
    let by_time = ByTime::new(problem);
    // Each window asked, by its sections and height: whether its buffers fit (else undecided).
    let mut asked = HashMap::new();
    'centres: for centre in centres(problem, timeline, layout) {
        for radius in radii(timeline.len()) {
            if deadline.passed() {
                break 'centres;
            }
            let sections = (
                centre.saturating_sub(radius),
                (centre + radius).min(timeline.len() - 1),
            );
            let window = (timeline.starts[sections.0], timeline.ends[sections.1]);
            let part = clipped(problem, &by_time.overlapping(problem, window), window);
            if part.len() > EFFORT.most_held {
                continue 'centres;
            }
            loop {
                if bound.lower >= peak {
                    break 'centres;
                }
                if deadline.passed() || nodes == Some(0) {
                    break 'centres;
                }
                match asked.get(&(sections, bound.lower)) {
                    Some(true) => break,
                    Some(false) => continue 'centres,
                    None => {}
                }
                let budget = EFFORT.nodes_per_buffer * part.len() as u64;
                let budget = budget.max(EFFORT.least_nodes);
                let budget = nodes.map_or(budget, |left| left.min(budget));
                let result = fit_part(&part, bound.lower, options, portfolio, (deadline, budget));
                bound.stats.add(&result.stats);
                if let Some(left) = nodes.as_mut() {
                    *left = left.saturating_sub(result.stats.nodes);
                }
                let fits = matches!(result.outcome, Outcome::Found(_));
                asked.insert((sections, bound.lower), fits);
                match result.outcome {
                    Outcome::Infeasible(_) => {
                        bound.source = BoundSource::Window {
                            from: window.0,
                            to: window.1,
                            buffers: part.len(),
                            height: bound.lower,
                        };
                        bound.lower = (bound.lower / granule + 1) * granule;
                    }
                    Outcome::Found(_) => break,
                    Outcome::LimitReached => continue 'centres,
                }
            }
            if sections == (0, timeline.len() - 1) {
                continue 'centres;
            }
        }
    }
    bound
}

/// The greatest common divisor of the sizes, the fixed offsets and the alignments above 1: some
/// optimal layout has every offset a multiple of it (take one and push its buffers down in order
/// of offset: each lands on 0, on the top of a buffer below it or a fixed one, or on its
/// alignment above such a top, all multiples), so the optimum is a multiple of it too.
fn granule(problem: &Problem) -> u64 {
    let gcd = |mut a: u64, mut b: u64| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let values = problem.buffers.iter().flat_map(|b| {
        let alignment = (b.alignment > 1).then_some(b.alignment);
        [Some(b.size), b.offset, alignment].into_iter().flatten()
    });
    values.fold(0, gcd).max(1)
}

/// The sections around which windows are tried, in order, each once: the first section of each
/// of the first few buffers (by start) ending at `layout`'s peak, then the
/// sections of the largest totals (the earliest first among equals).
fn centres(problem: &Problem, timeline: &Timeline, layout: &Solution) -> Vec<usize> {
    let peak = layout.peak(problem);
    let mut at_peak: Vec<usize> = (0..problem.len())
        .filter(|&i| layout.offsets[i] + problem.buffers[i].size == peak)
        .collect();
    at_peak.sort_by_key(|&i| (problem.buffers[i].lower, i));
    let mut by_total: Vec<usize> = (0..timeline.len()).collect();
    let key = |&k: &usize| (std::cmp::Reverse(timeline.totals[k]), k);
    if by_total.len() > EFFORT.load_centres {
        by_total.select_nth_unstable_by_key(EFFORT.load_centres, key);
        by_total.truncate(EFFORT.load_centres);
    }
    by_total.sort_by_key(key);
    let mut seen = HashSet::new();
    at_peak
        .iter()
        .take(EFFORT.peak_centres)
        .map(|&i| timeline.buffer_sections[i].start)
        .chain(by_total.into_iter().take(EFFORT.load_centres))
        .filter(|&k| seen.insert(k))
        .collect()
}

/// The radii of the windows around a centre: 0, 1, 2, 4, ... up to the timeline's length.
fn radii(sections: usize) -> impl Iterator<Item = usize> {
    std::iter::once(0).chain(
        std::iter::successors(Some(1usize), |r| r.checked_mul(2)).take_while(move |&r| {
            // The last radius reaches every section from any centre.
            r / 2 < sections
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::load;
    use crate::generate::{random, RandomOptions};
    use crate::minimize::test_layouts::{portfolio_of, stacked};
    use crate::problem::Buffer;

    /// Seven buffers with LOAD 4 and optimum 5 (the search tests' fragmentation gadget), at
    /// times from `at`.
    fn gadget(at: u64) -> Vec<Buffer> {
        let rows = [
            (0, 2, 2),
            (0, 1, 2),
            (1, 3, 1),
            (1, 4, 1),
            (2, 4, 1),
            (3, 5, 2),
            (4, 5, 2),
        ];
        let named = rows.iter().enumerate();
        named
            .map(|(i, &(lower, upper, size))| {
                Buffer::new(format!("g{at}-{i}"), at + lower, at + upper, size)
            })
            .collect()
    }

    /// The default portfolio for a problem of `buffers` buffers.
    fn portfolio(buffers: usize) -> PortfolioConfig {
        portfolio_of(&SearchOptions::default())(buffers)
    }

    /// The bound phase on `problem` from its stacked layout and LOAD, within `nodes`.
    fn run(problem: &Problem, nodes: u64) -> Bound {
        let timeline = Timeline::new(problem);
        prove(
            (problem, &timeline, &stacked(problem)),
            (timeline.load(), BoundSource::Load),
            &SearchOptions::default(),
            &portfolio,
            (&Deadline::none(), Some(nodes)),
        )
    }

    /// The gadget at times 0 to 5 and again at 1000 to 1005, between them four lanes of unit
    /// buffers (LOAD 4 everywhere): a window of the gadget's seven buffers proves 5.
    #[test]
    fn a_window_of_the_gadget_proves_one_byte_over_load() {
        let mut buffers = gadget(0);
        for lane in 0..4u64 {
            let mut t = 5;
            while t < 1000 {
                let upper = (t + 1 + (t * 7 + lane * 3) % 4).min(1000);
                buffers.push(Buffer::new(format!("lane{lane}-{t}"), t, upper, 1));
                t = upper;
            }
        }
        buffers.extend(gadget(1000));
        let problem = Problem::new(buffers, None);
        assert_eq!(load(&problem), 4);
        let bound = run(&problem, 100_000);
        assert_eq!(bound.lower, 5);
        let BoundSource::Window {
            buffers, height, ..
        } = bound.source
        else {
            panic!("not a window: {:?}", bound.source);
        };
        assert!(buffers <= 7 && height == 4, "{buffers} buffers at {height}");
        assert_eq!(run(&problem, 100_000).stats.nodes, bound.stats.nodes);
    }

    /// The gadget with every size times 1024: its optimum is a multiple of 1024, so the proof
    /// that it does not fit under 4096 gives 5120 at once.
    #[test]
    fn a_bound_rises_by_the_granule_of_the_sizes() {
        let mut buffers = gadget(0);
        for b in &mut buffers {
            b.size *= 1024;
        }
        let problem = Problem::new(buffers, None);
        assert_eq!(granule(&problem), 1024);
        let bound = run(&problem, 100_000);
        assert_eq!(bound.lower, 5 * 1024);
        assert!(matches!(
            bound.source,
            BoundSource::Window { height: 4096, .. }
        ));
        let mut aligned = problem.clone();
        aligned.buffers[0].alignment = 512;
        aligned.buffers[1].offset = Some(2048);
        assert_eq!(granule(&aligned), 512);
    }

    /// On random small problems the bound is never below LOAD nor above the peak minimise finds
    /// with many nodes.
    #[test]
    fn the_bound_never_passes_a_found_peak_on_random_problems() {
        let limits = crate::outcome::Limits {
            timeout: None,
            nodes: Some(200_000),
        };
        for seed in 0..40 {
            let shape = RandomOptions {
                buffers: 6 + (seed % 7) as usize,
                horizon: 8,
                max_lifetime: 5,
                max_size: 4,
                ..RandomOptions::default()
            };
            let problem = random(&shape, seed);
            let bound = run(&problem, 20_000);
            let timeline = Timeline::new(&problem);
            let options = SearchOptions::default();
            let portfolios = crate::minimize::Portfolios {
                own: &portfolio,
                lowering: &portfolio,
            };
            let found = crate::minimize::minimize(
                &problem,
                &timeline,
                &options,
                &portfolios,
                (limits, None),
                None,
            );
            let peak = found.solution.peak(&problem);
            assert!(
                timeline.load() <= bound.lower && bound.lower <= peak,
                "seed {seed}: bound {} above peak {peak}",
                bound.lower
            );
        }
    }
}
