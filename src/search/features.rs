//! Candidate and node features: cheap, normalised numbers describing a search decision, shared by
//! the solve logs and any learned policy. The layout is versioned by [`FEATURE_SCHEMA_VERSION`].

use super::instance::Instance;
use super::policy::{Candidate, NodeView};

/// Version of the feature layout; bump it whenever [`CANDIDATE_FEATURES`] or
/// [`NODE_FEATURES`] change meaning or order.
pub const FEATURE_SCHEMA_VERSION: u32 = 1;

/// Names of the per-candidate features, in order.
pub const CANDIDATE_FEATURES: [&str; 9] = [
    "lifetime / horizon",
    "size / capacity",
    "area / (capacity x horizon)",
    "offset / capacity",
    "slack above: (capacity - offset - size) / capacity",
    "tightest section slack over the lifetime / capacity",
    "unplaced neighbours / unplaced buffers",
    "static rank / unplaced buffers",
    "ln(1 + conflicts involving the buffer) / 10",
];

/// Names of the per-node features, in order.
pub const NODE_FEATURES: [&str; 4] = [
    "depth / buffers",
    "placed share of the (sub)problem",
    "ln(1 + failures so far) / 10",
    "candidates / unplaced buffers",
];

/// The features of candidate `c` at the node of `view` (see [`CANDIDATE_FEATURES`]).
pub fn candidate_features(view: &NodeView<'_>, c: &Candidate) -> [f32; 9] {
    let capacity = view.capacity().max(1) as f64;
    let horizon = view.horizon().max(1) as f64;
    let size = view.size(c.buffer) as f64;
    let lifetime = view.lifetime(c.buffer) as f64;
    let offset = c.offset as f64;
    let tightest = view.tightest_slack(c.buffer, c.offset);
    let unplaced = view.unplaced().max(1) as f64;
    let conflicts = view.conflicts(c.buffer) as f64;
    [
        (lifetime / horizon) as f32,
        (size / capacity) as f32,
        (size * lifetime / (capacity * horizon)) as f32,
        (offset / capacity) as f32,
        ((capacity - offset - size) / capacity) as f32,
        (tightest / capacity) as f32,
        (view.unplaced_neighbours(c.buffer) as f64 / unplaced) as f32,
        (c.rank as f64 / unplaced) as f32,
        ((1.0 + conflicts).ln() / 10.0) as f32,
    ]
}

/// The features of the node of `view` with `candidates` candidates (see [`NODE_FEATURES`]).
pub fn node_features(view: &NodeView<'_>, candidates: usize) -> [f32; 4] {
    let buffers = view.buffers().max(1) as f64;
    let total = view.free_buffers().max(1) as f64;
    let unplaced = view.unplaced();
    [
        (view.depth() as f64 / buffers) as f32,
        (1.0 - unplaced as f64 / total) as f32,
        ((1.0 + view.failures() as f64).ln() / 10.0) as f32,
        (candidates as f64 / unplaced.max(1) as f64) as f32,
    ]
}

/// Version of the problem-feature layout ([`PROBLEM_FEATURES`]); bump it whenever they change
/// meaning or order.
pub const PROBLEM_FEATURE_SCHEMA_VERSION: u32 = 1;

/// Names of the per-problem features, in order: what a portfolio head sees of a whole problem
/// before the search starts (over the free buffers; fixed ones only take capacity away).
pub const PROBLEM_FEATURES: [&str; 13] = [
    "ln(1 + free buffers) / 10",
    "largest section total / capacity",
    "time-weighted mean section total / capacity",
    "share of time with a section total at 95% of the capacity or more",
    "mean lifetime / horizon",
    "longest lifetime / horizon",
    "mean size / capacity",
    "largest size / capacity",
    "coefficient of variation of sizes",
    "distinct sizes / free buffers",
    "distinct lifetimes / free buffers",
    "mean time-overlapping buffers / free buffers",
    "share of buffers larger than capacity / 8",
];

/// The features of a whole problem under `capacity` (see [`PROBLEM_FEATURES`]), as the
/// portfolio head and the CP-SAT gate see them; `problem` must pass [`crate::Problem::check`].
pub fn problem_features_of(
    problem: &crate::Problem,
    capacity: u64,
) -> [f32; PROBLEM_FEATURES.len()] {
    problem_features(&Instance::new(problem, capacity))
}

/// The features of a whole problem (see [`PROBLEM_FEATURES`]), from its search instance; O(n log n
/// + sections + overlaps), computed once per search.
pub(crate) fn problem_features(instance: &Instance) -> [f32; 13] {
    let capacity = instance.capacity.max(1) as f64;
    let horizon = instance.horizon.max(1) as f64;
    let free = &instance.free;
    let n = free.len().max(1) as f64;
    let sizes: Vec<f64> = free.iter().map(|&b| instance.sizes[b] as f64).collect();
    let lifetimes: Vec<f64> = free.iter().map(|&b| instance.lifetimes[b] as f64).collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / n;
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let distinct = |v: &[f64]| {
        let mut sorted = v.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted.dedup();
        sorted.len() as f64 / n
    };
    let mean_size = mean(&sizes);
    let variance = sizes.iter().map(|s| (s - mean_size).powi(2)).sum::<f64>() / n;
    // Section totals weighted by how long each section lasts.
    let (mut weighted, mut tight, mut covered) = (0.0, 0.0, 0.0);
    for (s, &total) in instance.totals.iter().enumerate() {
        let length = (instance.section_ends[s] - instance.section_starts[s]) as f64;
        covered += length;
        weighted += length * total as f64;
        if total as f64 >= 0.95 * capacity {
            tight += length;
        }
    }
    let covered = covered.max(1.0);
    let largest_total = instance.totals.iter().copied().max().unwrap_or(0) as f64;
    let overlaps: usize = free.iter().map(|&b| instance.degree(b)).sum();
    let large = sizes.iter().filter(|&&s| s > capacity / 8.0).count() as f64;
    [
        ((1.0 + free.len() as f64).ln() / 10.0) as f32,
        (largest_total / capacity) as f32,
        (weighted / covered / capacity) as f32,
        (tight / covered) as f32,
        (mean(&lifetimes) / horizon) as f32,
        (max(&lifetimes) / horizon) as f32,
        (mean_size / capacity) as f32,
        (max(&sizes) / capacity) as f32,
        (variance.sqrt() / mean_size.max(1.0)) as f32,
        distinct(&sizes) as f32,
        distinct(&lifetimes) as f32,
        (overlaps as f64 / n / n) as f32,
        (large / n) as f32,
    ]
}
