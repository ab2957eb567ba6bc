//! Shared helpers for the search integration tests: tiny random problems, an independent
//! brute-force solver, and a shrinker for failing cases.
//!
//! Nothing here uses the library's search, placement core or timeline: the brute force must be
//! able to disagree with the search.

#![allow(dead_code)] // Each test binary uses a different part of this module.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use telamalloc::io::write_csv_problem;
use telamalloc::{Buffer, Problem};

/// The default search options without the fast baselines tried first, so the search itself runs.
pub fn without_heuristics() -> telamalloc::search::SearchOptions {
    telamalloc::search::SearchOptions {
        heuristic_first: false,
        ..Default::default()
    }
}

/// The largest total size live at one time step (LOAD), computed naively step by step.
pub fn naive_load(problem: &Problem) -> u64 {
    let horizon = problem.buffers.iter().map(|b| b.upper).max().unwrap_or(0);
    (0..horizon)
        .map(|t| {
            problem
                .buffers
                .iter()
                .filter_map(|b| occupied_at(b, 0, t))
                .map(|(low, high)| high - low)
                .sum::<u64>()
        })
        .max()
        .unwrap_or(0)
}

/// Whether buffers `a` at `offset_a` and `b` at `offset_b` collide (share a time step and an
/// address). With gaps, time step by time step from the buffers' fields ([`occupied_at`]), not
/// through the library's pieces.
pub fn collide(a: &Buffer, offset_a: u64, b: &Buffer, offset_b: u64) -> bool {
    if a.gaps.is_empty() && b.gaps.is_empty() {
        let in_time = a.lower < b.upper && b.lower < a.upper;
        let in_space = offset_a < offset_b + b.size && offset_b < offset_a + a.size;
        return in_time && in_space;
    }
    (a.lower.max(b.lower)..a.upper.min(b.upper)).any(|t| {
        match (occupied_at(a, offset_a, t), occupied_at(b, offset_b, t)) {
            (Some((a_low, a_high)), Some((b_low, b_high))) => a_low < b_high && b_low < a_high,
            _ => false,
        }
    })
}

/// The addresses `b` at `offset` occupies at time step `t`: none outside its lifetime or in a
/// gap without a window, the window in a gap with one, else its whole range.
pub fn occupied_at(b: &Buffer, offset: u64, t: u64) -> Option<(u64, u64)> {
    if t < b.lower || t >= b.upper {
        return None;
    }
    match b.gaps.iter().find(|g| g.lower <= t && t < g.upper) {
        Some(g) => g.window.map(|(low, high)| (offset + low, offset + high)),
        None => Some((offset, offset + b.size)),
    }
}

/// The best packing the brute force found.
#[derive(Clone, Debug)]
pub struct Exact {
    /// The smallest peak of any valid packing (fixed buffers included).
    pub peak: u64,
    /// A packing reaching it.
    pub offsets: Vec<u64>,
}

/// The smallest peak over all valid packings of `problem` (alignments respected, fixed buffers
/// at their offsets), by gap-filling first-fit over every order of the free buffers.
///
/// Why this is complete: take any valid packing P and list its free buffers by increasing
/// offset. Place them in that order, each at the lowest aligned offset where it collides with
/// neither a fixed buffer nor an already placed buffer. By induction every buffer lands at or
/// below its offset in P: when buffer B comes, every already placed buffer X that shares a time
/// step with B has offset(P, X) <= offset(P, B), and since they are disjoint in P,
/// offset(P, X) + size(X) <= offset(P, B); X now sits at or below its P offset, so it ends at or
/// below offset(P, B) too. Hence offset(P, B) itself (aligned, clear of the fixed buffers as in
/// P) is free for B, and the lowest free aligned offset is no higher. So this order yields a
/// packing whose peak is at most P's, and the minimum over all orders is the optimum.
///
/// Branch and bound: a partial packing whose peak already reaches the best complete peak is
/// abandoned (peaks only grow as buffers are added), and the enumeration stops at a packing
/// that reaches LOAD (no packing does better).
///
/// Fixed buffers must not collide with each other (the generators below ensure it).
pub fn brute_force_optimum(problem: &Problem) -> Exact {
    let buffers = &problem.buffers;
    let mut offsets: Vec<Option<u64>> = buffers.iter().map(|b| b.offset).collect();
    let fixed_peak = buffers
        .iter()
        .filter_map(|b| b.offset.map(|o| o + b.size))
        .max()
        .unwrap_or(0);
    assert!(fixed_consistent(problem), "fixed buffers collide");
    let mut best = Exact {
        peak: u64::MAX,
        offsets: Vec::new(),
    };
    // No packing beats LOAD (nor the fixed buffers' top): stop on reaching that bound.
    let bound = naive_load(problem).max(fixed_peak);
    first_fit_orders(buffers, &mut offsets, fixed_peak, &mut best, bound);
    best
}

/// A packing of `problem` with peak at most `capacity`, if there is one: the same first-fit
/// enumeration as [`brute_force_optimum`] (complete for the same reason), stopping at the first
/// packing that fits.
pub fn brute_force_fits(problem: &Problem, capacity: u64) -> Option<Vec<u64>> {
    assert!(fixed_consistent(problem), "fixed buffers collide");
    let buffers = &problem.buffers;
    let mut offsets: Vec<Option<u64>> = buffers.iter().map(|b| b.offset).collect();
    let fixed_peak = buffers
        .iter()
        .filter_map(|b| b.offset.map(|o| o + b.size))
        .max()
        .unwrap_or(0);
    // An optimum search whose best so far starts just above the capacity, stopping early.
    let mut best = Exact {
        peak: capacity + 1,
        offsets: Vec::new(),
    };
    first_fit_orders(buffers, &mut offsets, fixed_peak, &mut best, capacity);
    (best.peak <= capacity).then_some(best.offsets)
}

/// The lowest aligned offset where buffer `i` collides with no placed (or fixed) buffer.
fn lowest_free_offset(buffers: &[Buffer], offsets: &[Option<u64>], i: usize) -> u64 {
    let b = &buffers[i];
    let mut offset = 0;
    loop {
        let clash = buffers
            .iter()
            .zip(offsets)
            .enumerate()
            .any(|(j, (other, placed))| {
                j != i && placed.is_some_and(|o| collide(b, offset, other, o))
            });
        if !clash {
            return offset;
        }
        offset += b.alignment;
    }
}

/// Places the unplaced free buffers in every order (first-fit), recording in `best` each packing
/// that beats it; returns true (and stops) once `best.peak <= stop`.
fn first_fit_orders(
    buffers: &[Buffer],
    offsets: &mut [Option<u64>],
    peak: u64,
    best: &mut Exact,
    stop: u64,
) -> bool {
    if peak >= best.peak {
        return false;
    }
    if offsets.iter().all(Option::is_some) {
        best.peak = peak;
        best.offsets = offsets.iter().map(|o| o.expect("all placed")).collect();
        return peak <= stop;
    }
    for i in 0..buffers.len() {
        if offsets[i].is_some() {
            continue;
        }
        let offset = lowest_free_offset(buffers, offsets, i);
        offsets[i] = Some(offset);
        let done = first_fit_orders(
            buffers,
            offsets,
            peak.max(offset + buffers[i].size),
            best,
            stop,
        );
        offsets[i] = None;
        if done {
            return true;
        }
    }
    false
}

/// The smallest peak by trying every aligned offset of every free buffer (no first-fit, no
/// argument needed): only for very small problems, to check [`brute_force_optimum`] itself.
pub fn exhaustive_optimum(problem: &Problem) -> u64 {
    let buffers = &problem.buffers;
    let mut offsets: Vec<Option<u64>> = buffers.iter().map(|b| b.offset).collect();
    let fixed_peak = buffers
        .iter()
        .filter_map(|b| b.offset.map(|o| o + b.size))
        .max()
        .unwrap_or(0);
    // Stacking every free buffer above everything else always works, so this bounds the optimum.
    let bound = fixed_peak + buffers.iter().map(|b| b.size + b.alignment).sum::<u64>();
    let mut best = bound + 1;
    every_offset(buffers, &mut offsets, fixed_peak, &mut best);
    best
}

fn every_offset(buffers: &[Buffer], offsets: &mut [Option<u64>], peak: u64, best: &mut u64) {
    if peak >= *best {
        return;
    }
    let Some(i) = offsets.iter().position(Option::is_none) else {
        *best = peak;
        return;
    };
    let b = &buffers[i];
    let mut offset = 0;
    while offset + b.size < *best {
        let clash = buffers
            .iter()
            .zip(offsets.iter())
            .any(|(other, placed)| placed.is_some_and(|o| collide(b, offset, other, o)));
        if !clash {
            offsets[i] = Some(offset);
            every_offset(buffers, offsets, peak.max(offset + b.size), best);
            offsets[i] = None;
        }
        offset += b.alignment;
    }
}

/// Shape of the tiny random problems.
#[derive(Clone, Copy, Debug)]
pub struct TinyShape {
    /// At most this many buffers (at least 1).
    pub max_buffers: usize,
    /// Sizes are drawn from `1..=max_size`.
    pub max_size: u64,
    /// Times lie in `0..=horizon`.
    pub horizon: u64,
}

impl Default for TinyShape {
    fn default() -> Self {
        TinyShape {
            max_buffers: 7,
            max_size: 6,
            horizon: 8,
        }
    }
}

/// A tiny random problem (no capacity): up to `max_buffers` buffers over times `0..horizon`,
/// sizes `1..=max_size`; about a third of the problems give their buffers alignments from
/// {1, 2, 4}, and about a quarter fix the offset of one buffer (a few fix a second one, clear
/// of the first).
/// A perfect packing of `buffers` buffers at capacity 4096 over 200 steps (mixed cuts).
pub fn perfect_problem(buffers: usize, seed: u64) -> Problem {
    use telamalloc::generate::{perfect, CutStyle, PerfectOptions};
    perfect(
        &PerfectOptions {
            capacity: 4096,
            horizon: 200,
            buffers,
            style: CutStyle::Mixed,
            remove: 0,
            alignment: 1,
            cuts: Default::default(),
        },
        seed,
    )
    .0
}

pub fn tiny_problem(seed: u64, shape: TinyShape) -> Problem {
    let mut rng = StdRng::seed_from_u64(seed);
    let count = rng.random_range(1..=shape.max_buffers as u64) as usize;
    let aligned = rng.random_ratio(1, 3);
    let mut buffers: Vec<Buffer> = (0..count)
        .map(|i| {
            let lower = rng.random_range(0..shape.horizon);
            let upper = rng.random_range(lower + 1..=shape.horizon);
            let size = rng.random_range(1..=shape.max_size);
            let mut b = Buffer::new(format!("b{i}"), lower, upper, size);
            if aligned {
                b.alignment = [1, 2, 4][rng.random_range(0..3u64) as usize];
            }
            b
        })
        .collect();
    if rng.random_ratio(1, 4) {
        let first = rng.random_range(0..count as u64) as usize;
        let alignment = buffers[first].alignment;
        buffers[first].offset = Some(alignment * rng.random_range(0..=3u64));
        if count > 1 && rng.random_ratio(1, 3) {
            let second = (first + 1) % count;
            let alignment = buffers[second].alignment;
            let offset = alignment * rng.random_range(0..=4u64);
            let (a, b) = (&buffers[first], &buffers[second]);
            if !collide(a, a.offset.expect("fixed"), b, offset) {
                buffers[second].offset = Some(offset);
            }
        }
    }
    Problem::new(buffers, None)
}

/// A tiny problem whose live total is the same at every time step (a random capacity from 3 to
/// 6), built step by step: some live buffers end, new ones start to fill the space back up, at
/// most `max_buffers` in all. No alignment, no fixed offsets. With no slack anywhere, these are
/// the problems where fragmentation alone can push the optimum above LOAD (random problems with
/// slack almost never do, at this size).
pub fn tight_problem(seed: u64, max_buffers: usize) -> Problem {
    let mut rng = StdRng::seed_from_u64(seed);
    let level = rng.random_range(3..=6u64);
    let horizon = rng.random_range(3..=7u64);
    let mut buffers: Vec<Buffer> = Vec::new();
    let mut live: Vec<usize> = Vec::new();
    for t in 0..horizon {
        live.retain(|&i| {
            let ends = rng.random_ratio(1, 2);
            if ends {
                buffers[i].upper = t;
            }
            !ends
        });
        let mut used: u64 = live.iter().map(|&i| buffers[i].size).sum();
        while used < level && buffers.len() < max_buffers {
            let size = rng.random_range(1..=(level - used).min(level - 1));
            live.push(buffers.len());
            buffers.push(Buffer::new(format!("b{}", buffers.len()), t, horizon, size));
            used += size;
        }
    }
    Problem::new(buffers, None)
}

/// The smallest fragmentation gadget we know: seven buffers, no alignment, no fixed offsets,
/// LOAD 4 but optimum 5 (why is spelled out at `pure_fragmentation` in `search_known.rs`).
pub fn fragmentation_gadget() -> Problem {
    let rows = [
        ("a", 0, 2, 2),
        ("b", 0, 1, 2),
        ("c", 1, 3, 1),
        ("d", 1, 4, 1),
        ("e", 2, 4, 1),
        ("f", 3, 5, 2),
        ("g", 4, 5, 2),
    ];
    let buffers = rows
        .iter()
        .map(|&(id, lower, upper, size)| Buffer::new(id, lower, upper, size))
        .collect();
    Problem::new(buffers, None)
}

/// A random variation of [`fragmentation_gadget`]: possibly mirrored in time, buffers shuffled,
/// then up to three random small edits (a size or an end of a lifetime moved by one). Many stay
/// above LOAD, many do not: the brute force tells which.
pub fn gadget_mutant(seed: u64) -> Problem {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut problem = fragmentation_gadget();
    let horizon = 5;
    if rng.random_bool(0.5) {
        for b in &mut problem.buffers {
            (b.lower, b.upper) = (horizon - b.upper, horizon - b.lower);
        }
    }
    for i in (1..problem.len()).rev() {
        let j = rng.random_range(0..=i as u64) as usize;
        problem.buffers.swap(i, j);
    }
    for _ in 0..rng.random_range(0..=3u64) {
        let i = rng.random_range(0..problem.len() as u64) as usize;
        let b = &mut problem.buffers[i];
        match rng.random_range(0..6u64) {
            0 => b.size += 1,
            1 if b.size > 1 => b.size -= 1,
            2 if b.lower > 0 => b.lower -= 1,
            3 if b.lower + 1 < b.upper => b.lower += 1,
            4 if b.upper < horizon + 1 => b.upper += 1,
            5 if b.upper > b.lower + 1 => b.upper -= 1,
            _ => {}
        }
    }
    for (i, b) in problem.buffers.iter_mut().enumerate() {
        b.id = format!("b{i}");
    }
    problem
}

/// The problem as CSV, for failure messages.
pub fn csv(problem: &Problem) -> String {
    write_csv_problem(problem)
}

/// Greedily shrinks a failing `(problem, capacity)` while `fails` keeps holding: drops buffers,
/// unfixes them, drops alignments, shrinks sizes and lifetimes, lowers the capacity. Returns a
/// case on which `fails` still holds, minimal under these steps.
pub fn shrink(
    problem: &Problem,
    capacity: u64,
    fails: &dyn Fn(&Problem, u64) -> bool,
) -> (Problem, u64) {
    let mut current = (problem.clone(), capacity);
    loop {
        let (p, c) = &current;
        let mut candidates: Vec<(Problem, u64)> = Vec::new();
        for i in 0..p.len() {
            let mut q = p.clone();
            q.buffers.remove(i);
            candidates.push((q, *c));
        }
        for i in 0..p.len() {
            let b = &p.buffers[i];
            let mut edits: Vec<Buffer> = Vec::new();
            if b.offset.is_some() {
                edits.push(Buffer {
                    offset: None,
                    ..b.clone()
                });
            }
            if let Some(o) = b.offset.filter(|&o| o >= b.alignment) {
                edits.push(Buffer {
                    offset: Some(o - b.alignment),
                    ..b.clone()
                });
            }
            if b.alignment > 1 {
                edits.push(Buffer {
                    alignment: b.alignment / 2,
                    ..b.clone()
                });
            }
            if b.size > 1 {
                edits.push(Buffer {
                    size: b.size - 1,
                    ..b.clone()
                });
            }
            if b.upper - b.lower > 1 {
                edits.push(Buffer {
                    upper: b.upper - 1,
                    ..b.clone()
                });
                edits.push(Buffer {
                    lower: b.lower + 1,
                    ..b.clone()
                });
            }
            if b.lower > 0 {
                edits.push(Buffer {
                    lower: b.lower - 1,
                    upper: b.upper - 1,
                    ..b.clone()
                });
            }
            for edit in edits {
                let mut q = p.clone();
                q.buffers[i] = edit;
                candidates.push((q, *c));
            }
        }
        if *c > 1 {
            candidates.push((p.clone(), c - 1));
        }
        let next = candidates
            .into_iter()
            .find(|(q, c)| fixed_consistent(q) && fails(q, *c));
        match next {
            Some(smaller) => current = smaller,
            None => {
                let (mut p, c) = current;
                for (i, b) in p.buffers.iter_mut().enumerate() {
                    b.id = format!("b{i}");
                }
                return (p, c);
            }
        }
    }
}

/// Whether no two fixed buffers collide (a shrinking step may break this).
pub fn fixed_consistent(problem: &Problem) -> bool {
    let fixed: Vec<&Buffer> = problem
        .buffers
        .iter()
        .filter(|b| b.offset.is_some())
        .collect();
    fixed.iter().enumerate().all(|(i, a)| {
        fixed[i + 1..]
            .iter()
            .all(|b| !collide(a, a.offset.expect("fixed"), b, b.offset.expect("fixed")))
    })
}

/// The search's verdict on a problem, in the shape these tests assert on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A solution (validated by the solver).
    Solved(telamalloc::Solution),
    /// Proven infeasible.
    Infeasible(telamalloc::Infeasibility),
    /// The limit came first.
    LimitReached,
    /// The solver refused the problem.
    InvalidProblem(String),
}

/// A search's verdict and counters.
#[derive(Clone, Debug)]
pub struct Searched {
    /// The verdict.
    pub outcome: Verdict,
    /// The counters (default when the problem was refused).
    pub stats: telamalloc::SearchStats,
}

/// Runs the search through the front door: `Solver` with `options`, `policy` (a spec name, or
/// the default portfolio) and `limits`, fitting `capacity`.
pub fn run_search(
    problem: &Problem,
    capacity: u64,
    options: &telamalloc::SearchOptions,
    policy: Option<&str>,
    limits: telamalloc::Limits,
) -> Searched {
    let spec = policy.map_or_else(telamalloc::PolicySpec::default, |name| {
        name.parse().expect("a known policy name")
    });
    let solver = telamalloc::Solver::new()
        .options(options.clone())
        .policy(spec)
        .limits(limits);
    verdict_of(solver.solve(problem, telamalloc::Goal::Fit(capacity)))
}

/// Checks a fit of `problem` at `capacity` against its brute-force `optimum`: solved only at or
/// above it, with a layout the validator accepts, refuted only below it; anything else (a wrong
/// answer, or no answer within the solve's limit) panics, naming `case`. Returns whether it was
/// solved.
pub fn check_against_optimum(
    problem: &Problem,
    capacity: u64,
    optimum: u64,
    result: telamalloc::Allocation,
    case: &str,
) -> bool {
    match (result.status, result.solution) {
        (telamalloc::Status::Solved, Some(solution)) => {
            assert!(capacity >= optimum, "{case}: solved below the optimum");
            let report = telamalloc::validate(problem, &solution, Some(capacity));
            assert!(report.is_valid(), "{case} at {capacity}: {report}");
            true
        }
        (telamalloc::Status::Infeasible(_), _) => {
            assert!(capacity < optimum, "{case} at {capacity}: wrongly refuted");
            false
        }
        (status, _) => panic!("{case} at {capacity}: {status:?} within the limit"),
    }
}

/// The verdict of a solve's result.
pub fn verdict_of(result: Result<telamalloc::Allocation, telamalloc::SolveError>) -> Searched {
    match result {
        Err(e) => Searched {
            outcome: Verdict::InvalidProblem(e.to_string()),
            stats: telamalloc::SearchStats::default(),
        },
        Ok(a) => Searched {
            outcome: match (a.status, a.solution) {
                (telamalloc::Status::Solved, Some(s)) => Verdict::Solved(s),
                (telamalloc::Status::Infeasible(why), _) => Verdict::Infeasible(why),
                _ => Verdict::LimitReached,
            },
            stats: a.search.unwrap_or_default(),
        },
    }
}

/// A tiny random problem with gaps (no capacity): up to `max_buffers` buffers over times
/// `0..=6`, sizes `1..=4`; about half the buffers have one or two gaps, about a third of those
/// with a window; about a quarter of the problems give a buffer a hint, and some fix one buffer.
/// With `windows` off, no gap has a window.
pub fn tiny_gapped_problem(seed: u64, max_buffers: usize, windows: bool) -> Problem {
    use telamalloc::Gap;
    let mut rng = StdRng::seed_from_u64(seed);
    let count = rng.random_range(1..=max_buffers as u64) as usize;
    let mut buffers: Vec<Buffer> = (0..count)
        .map(|i| {
            let lower = rng.random_range(0..5u64);
            let upper = rng.random_range(lower + 1..=6);
            let size = rng.random_range(1..=4u64);
            let mut b = Buffer::new(format!("b{i}"), lower, upper, size);
            let mut cursor = lower;
            while cursor + 1 < upper && rng.random_ratio(1, 2) && b.gaps.len() < 2 {
                let gap_lower = rng.random_range(cursor..upper - 1);
                let gap_upper = rng.random_range(gap_lower + 1..upper);
                let mut gap = Gap::new(gap_lower, gap_upper);
                if windows && rng.random_ratio(1, 3) {
                    let low = rng.random_range(0..size);
                    gap.window = Some((low, rng.random_range(low + 1..=size)));
                }
                b.gaps.push(gap);
                cursor = gap_upper;
            }
            if rng.random_ratio(1, 8) {
                b.hint = Some(rng.random_range(0..=4u64));
            }
            b
        })
        .collect();
    if rng.random_ratio(1, 6) {
        let first = rng.random_range(0..count as u64) as usize;
        buffers[first].offset = Some(rng.random_range(0..=3u64));
    }
    Problem::new(buffers, None)
}
