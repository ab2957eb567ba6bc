//! Helpers shared by the integration tests: random problems with known properties, naive
//! reference computations written independently of the library, and a brute-force optimum for
//! tiny problems.

#![allow(dead_code)]

pub mod protobuf;
pub mod tflite;

use proptest::prelude::*;
use telamalloc::placement::{Fit, Placer};
use telamalloc::{Buffer, Problem, Solution};

/// The default search options without the fast baselines tried first, so the search itself runs.
pub fn without_heuristics() -> telamalloc::search::SearchOptions {
    telamalloc::search::SearchOptions {
        heuristic_first: false,
        ..Default::default()
    }
}

/// A buffer with alignment 1 and no fixed offset.
pub fn buffer(id: &str, lower: u64, upper: u64, size: u64) -> Buffer {
    Buffer::new(id, lower, upper, size)
}

/// The shape of the random problems a strategy draws.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// At most this many buffers (at least one).
    pub max_buffers: usize,
    /// `lower` is drawn from `0..max_time`.
    pub max_time: u64,
    /// Lifetimes are drawn from `1..=max_lifetime`.
    pub max_lifetime: u64,
    /// Sizes are drawn from `1..=max_size`.
    pub max_size: u64,
    /// Whether alignments (powers of two up to 16) are drawn; otherwise all are 1.
    pub alignments: bool,
    /// Whether some buffers get fixed offsets (mutually consistent by construction).
    pub fixed: bool,
}

impl Shape {
    /// Small problems without alignment or fixed offsets.
    pub const PLAIN: Shape = Shape {
        max_buffers: 12,
        max_time: 30,
        max_lifetime: 12,
        max_size: 64,
        alignments: false,
        fixed: false,
    };

    /// Small problems with alignments and a few fixed offsets.
    pub const CONSTRAINED: Shape = Shape {
        max_buffers: 14,
        max_time: 30,
        max_lifetime: 12,
        max_size: 64,
        alignments: true,
        fixed: true,
    };
}

/// Rounds `value` up to a multiple of the power of two `alignment`.
pub fn round_up(value: u64, alignment: u64) -> u64 {
    value.div_ceil(alignment) * alignment
}

/// Random well-formed problems (no capacity) of the given shape.
///
/// Fixed offsets are consistent by construction: the fixed buffers are laid one above the other
/// from a random base, each aligned, so no two of them share an address whatever their times;
/// every other buffer can always be placed above all of them.
pub fn problems(shape: Shape) -> impl Strategy<Value = Problem> {
    let one = (
        0..shape.max_time,
        1..=shape.max_lifetime,
        1..=shape.max_size,
        0..=if shape.alignments { 4u32 } else { 0 },
        prop::bool::weighted(if shape.fixed { 0.2 } else { 0.0 }),
    );
    (
        prop::collection::vec(one, 1..=shape.max_buffers),
        0..=128u64,
    )
        .prop_map(|(drawn, base)| {
            let mut cursor = base;
            let buffers = drawn
                .into_iter()
                .enumerate()
                .map(|(i, (lower, lifetime, size, exponent, fixed))| {
                    let alignment = 1u64 << exponent;
                    let offset = fixed.then(|| {
                        let offset = round_up(cursor, alignment);
                        cursor = offset + size;
                        offset
                    });
                    Buffer {
                        id: format!("b{i}"),
                        lower,
                        upper: lower + lifetime,
                        size,
                        alignment,
                        offset,
                        hint: None,
                        gaps: Vec::new(),
                        memories: Vec::new(),
                        benefit: None,
                    }
                })
                .collect();
            Problem::new(buffers, None)
        })
}

/// Whether two buffers are live at a common time step: the later start comes before the
/// earlier end.
pub fn live_together(a: &Buffer, b: &Buffer) -> bool {
    a.lower.max(b.lower) < a.upper.min(b.upper)
}

/// Whether `a` at `a_offset` and `b` at `b_offset` share a byte at some time step, step by step
/// from their fields (in a gap a buffer occupies its window, or nothing).
pub fn collide(a: &Buffer, a_offset: u64, b: &Buffer, b_offset: u64) -> bool {
    let at =
        |x: &Buffer, offset: u64, t: u64| match x.gaps.iter().find(|g| g.lower <= t && t < g.upper)
        {
            Some(gap) => gap.window.map(|(low, high)| (offset + low, offset + high)),
            None => Some((offset, offset + x.size)),
        };
    (a.lower.max(b.lower)..a.upper.min(b.upper)).any(|t| {
        match (at(a, a_offset, t), at(b, b_offset, t)) {
            (Some((a_low, a_high)), Some((b_low, b_high))) => a_low < b_high && b_low < a_high,
            _ => false,
        }
    })
}

/// Whether two address ranges `[offset, offset + size)` share a byte.
pub fn share_address(a_offset: u64, a_size: u64, b_offset: u64, b_size: u64) -> bool {
    let a_end = a_offset as u128 + a_size as u128;
    let b_end = b_offset as u128 + b_size as u128;
    (a_offset as u128) < b_end && (b_offset as u128) < a_end
}

/// What a naive check finds wrong with a solution, as buffer indices.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NaiveFindings {
    /// Buffers whose offset breaks their alignment.
    pub misaligned: Vec<usize>,
    /// Fixed buffers placed elsewhere.
    pub moved: Vec<usize>,
    /// Buffers ending above the capacity.
    pub over_capacity: Vec<usize>,
    /// Pairs `(i, j)`, `i < j`, live together and sharing an address.
    pub overlaps: Vec<(usize, usize)>,
}

impl NaiveFindings {
    /// Whether nothing is wrong.
    pub fn is_valid(&self) -> bool {
        self.misaligned.is_empty()
            && self.moved.is_empty()
            && self.over_capacity.is_empty()
            && self.overlaps.is_empty()
    }

    /// How many faults were found in all.
    pub fn count(&self) -> usize {
        self.misaligned.len() + self.moved.len() + self.over_capacity.len() + self.overlaps.len()
    }
}

/// The O(n^2) reference check of a solution with as many offsets as buffers.
pub fn naive_check(problem: &Problem, offsets: &[u64], capacity: Option<u64>) -> NaiveFindings {
    assert_eq!(problem.buffers.len(), offsets.len());
    let capacity = capacity.or(problem.capacity).unwrap_or(u64::MAX) as u128;
    let mut findings = NaiveFindings::default();
    for (i, (b, &offset)) in problem.buffers.iter().zip(offsets).enumerate() {
        if offset % b.alignment != 0 {
            findings.misaligned.push(i);
        }
        if b.offset.is_some_and(|fixed| fixed != offset) {
            findings.moved.push(i);
        }
        if offset as u128 + b.size as u128 > capacity {
            findings.over_capacity.push(i);
        }
        for (j, (c, &other)) in problem.buffers.iter().zip(offsets).enumerate().skip(i + 1) {
            if live_together(b, c) && share_address(offset, b.size, other, c.size) {
                findings.overlaps.push((i, j));
            }
        }
    }
    findings
}

/// The total size live at each integer time step `0..horizon` (in a gap, what the buffer still
/// occupies).
pub fn naive_live_totals(problem: &Problem) -> Vec<u64> {
    (0..problem.horizon())
        .map(|t| {
            problem
                .buffers
                .iter()
                .filter(|b| b.lower <= t && t < b.upper)
                .map(
                    |b| match b.gaps.iter().find(|g| g.lower <= t && t < g.upper) {
                        // In a gap: a window's width, or nothing.
                        Some(gap) => gap.window.map_or(0, |(low, high)| high - low),
                        None => b.size,
                    },
                )
                .sum()
        })
        .collect()
}

/// LOAD by brute force: the largest live total over all integer time steps.
pub fn naive_load(problem: &Problem) -> u64 {
    naive_live_totals(problem).into_iter().max().unwrap_or(0)
}

/// Calls `visit` with every permutation of `items`.
pub fn for_each_permutation(items: &mut [usize], visit: &mut impl FnMut(&[usize])) {
    fn go(k: usize, items: &mut [usize], visit: &mut impl FnMut(&[usize])) {
        if k == items.len() {
            visit(items);
            return;
        }
        for i in k..items.len() {
            items.swap(k, i);
            go(k + 1, items, visit);
            items.swap(k, i);
        }
    }
    go(0, items, visit);
}

/// Places the fixed buffers, then the others in `order`, each at the lowest offset where it
/// fits ([`Fit::First`]); returns the offsets.
pub fn first_fit_in_order(problem: &Problem, order: &[usize]) -> Vec<u64> {
    let mut placer = Placer::new(problem);
    for (i, b) in problem.buffers.iter().enumerate() {
        if let Some(offset) = b.offset {
            placer.place(i, offset);
        }
    }
    for &i in order {
        let offset = placer.position(i, Fit::First);
        placer.place(i, offset);
    }
    placer.offsets().expect("every buffer placed")
}

/// The smallest peak over all layouts of a tiny problem, and a layout reaching it.
///
/// Complete because lowest-offset placement over every order reaches the optimum: take an
/// optimal layout S and place the free buffers in increasing order of their offset in S, each
/// at the lowest aligned offset where it fits. By induction every buffer lands at or below its
/// offset in S: the buffers already placed that are live with it lie at or below their own
/// S offsets, which in S end at or below its S offset (S has no overlap and they come before it
/// in S's order), and fixed buffers sit where S has them; so its S offset is free and aligned,
/// and the lowest free one is no higher. Hence that order's peak is at most S's peak.
pub fn brute_force_optimum(problem: &Problem) -> (u64, Solution) {
    let mut free: Vec<usize> = (0..problem.buffers.len())
        .filter(|&i| problem.buffers[i].offset.is_none())
        .collect();
    assert!(free.len() <= 8, "brute force is for tiny problems");
    let mut best: Option<(u64, Vec<u64>)> = None;
    for_each_permutation(&mut free, &mut |order| {
        let offsets = first_fit_in_order(problem, order);
        let peak = Solution {
            offsets: offsets.clone(),
        }
        .peak(problem);
        if best.as_ref().is_none_or(|(p, _)| peak < *p) {
            best = Some((peak, offsets));
        }
    });
    let (peak, offsets) = best.expect("at least one order");
    (peak, Solution { offsets })
}

/// A fresh folder under the system temporary folder, removed when dropped.
pub struct Scratch {
    dir: std::path::PathBuf,
}

impl Scratch {
    /// A new, empty folder whose name no other test (or test process) uses.
    pub fn new() -> Scratch {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!(
            "telamalloc-test-{}-{n}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        ));
        std::fs::create_dir_all(&dir).expect("create a temporary folder");
        Scratch { dir }
    }

    /// The folder itself.
    pub fn dir(&self) -> &std::path::Path {
        &self.dir
    }

    /// The path of `name` in the folder (not created).
    pub fn path(&self, name: &str) -> std::path::PathBuf {
        self.dir.join(name)
    }

    /// Writes `text` to `name` in the folder and returns its path.
    pub fn file(&self, name: &str, text: &str) -> std::path::PathBuf {
        let path = self.path(name);
        std::fs::write(&path, text).expect("write a temporary file");
        path
    }
}

impl Default for Scratch {
    fn default() -> Self {
        Scratch::new()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a run of the `telamalloc` binary gave.
pub struct Run {
    /// The exit code.
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

/// Runs the `telamalloc` binary built for the tests with `args`.
pub fn telamalloc<I, S>(args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    run_binary(std::process::Command::new(env!("CARGO_BIN_EXE_telamalloc")).args(args))
}

/// Runs the `telamalloc` binary built for the tests with `args`: its raw output.
pub fn telamalloc_output(args: &[&std::ffi::OsStr]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_telamalloc"))
        .args(args)
        .output()
        .expect("the binary runs")
}

/// Runs the `telamalloc` binary built for the tests with `args` in the working directory `dir`.
pub fn telamalloc_in<I, S>(dir: &std::path::Path, args: I) -> Run
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    run_binary(
        std::process::Command::new(env!("CARGO_BIN_EXE_telamalloc"))
            .current_dir(dir)
            .args(args),
    )
}

fn run_binary(command: &mut std::process::Command) -> Run {
    let output = command.output().expect("the binary runs");
    Run {
        code: output.status.code().expect("exited, not killed"),
        stdout: String::from_utf8(output.stdout).expect("UTF-8 output"),
        stderr: String::from_utf8(output.stderr).expect("UTF-8 output"),
    }
}

/// One solve through the front door: `algorithm` under `limits` and `seed`, for `goal`.
pub fn solve_with(
    problem: &Problem,
    algorithm: &telamalloc::Algorithm,
    goal: telamalloc::Goal,
    limits: telamalloc::Limits,
    seed: u64,
) -> telamalloc::Allocation {
    telamalloc::Solver::new()
        .algorithm(*algorithm)
        .limits(limits)
        .seed(seed)
        .solve(problem, goal)
        .expect("a valid problem")
}
