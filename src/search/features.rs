//! Candidate and node features: cheap, normalised numbers describing a search decision, shared by
//! the solve logs and any learned policy. The layout is versioned by [`FEATURE_SCHEMA_VERSION`].

use super::model::Model;
use super::policy::Candidate;
use super::state::State;

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

/// The features of candidate `c` (see [`CANDIDATE_FEATURES`]).
pub fn candidate_features(
    model: &Model,
    state: &State,
    c: &Candidate,
    unplaced: usize,
    conflicts: u64,
) -> [f32; 9] {
    let b = c.buffer as usize;
    let capacity = model.capacity.max(1) as f64;
    let horizon = model.horizon.max(1) as f64;
    let size = model.sizes[b] as f64;
    let lifetime = model.lifetimes[b] as f64;
    let offset = c.offset as f64;
    let tightest = model.sections[b]
        .clone()
        .map(|s| {
            let floor = state.floors[s].max(c.offset);
            model.capacity as f64 - floor as f64 - state.totals[s] as f64
        })
        .fold(f64::INFINITY, f64::min);
    let unplaced = unplaced.max(1) as f64;
    [
        (lifetime / horizon) as f32,
        (size / capacity) as f32,
        (size * lifetime / (capacity * horizon)) as f32,
        (offset / capacity) as f32,
        ((capacity - offset - size) / capacity) as f32,
        (tightest / capacity) as f32,
        (state.unplaced_neighbours[b] as f64 / unplaced) as f32,
        (c.rank as f64 / unplaced) as f32,
        ((1.0 + conflicts as f64).ln() / 10.0) as f32,
    ]
}

/// The features of a node (see [`NODE_FEATURES`]).
pub fn node_features(
    model: &Model,
    depth: u32,
    unplaced: usize,
    total: usize,
    failures: u64,
    candidates: usize,
) -> [f32; 4] {
    let buffers = model.sizes.len().max(1) as f64;
    let total = total.max(1) as f64;
    [
        (depth as f64 / buffers) as f32,
        (1.0 - unplaced as f64 / total) as f32,
        ((1.0 + failures as f64).ln() / 10.0) as f32,
        (candidates as f64 / unplaced.max(1) as f64) as f32,
    ]
}

/// Version of the problem-feature layout ([`PROBLEM_FEATURES`]); bump it whenever they change
/// meaning or order.
pub const PROBLEM_FEATURE_SCHEMA_VERSION: u32 = 1;

/// Names of the per-problem features, in order: what a portfolio model sees of a whole problem
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

/// The features of a whole problem (see [`PROBLEM_FEATURES`]), from its search model; O(n log n
/// + sections + overlaps), computed once per search.
pub fn problem_features(model: &Model) -> [f32; 13] {
    let capacity = model.capacity.max(1) as f64;
    let horizon = model.horizon.max(1) as f64;
    let free = &model.free;
    let n = free.len().max(1) as f64;
    let sizes: Vec<f64> = free.iter().map(|&b| model.sizes[b] as f64).collect();
    let lifetimes: Vec<f64> = free.iter().map(|&b| model.lifetimes[b] as f64).collect();
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
    for (s, &total) in model.totals.iter().enumerate() {
        let length = (model.section_ends[s] - model.section_starts[s]) as f64;
        covered += length;
        weighted += length * total as f64;
        if total as f64 >= 0.95 * capacity {
            tight += length;
        }
    }
    let covered = covered.max(1.0);
    let largest_total = model.totals.iter().copied().max().unwrap_or(0) as f64;
    let overlaps: usize = free.iter().map(|&b| model.neighbours[b].len()).sum();
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
