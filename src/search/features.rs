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

/// Version of the run-feature layout ([`RUN_FEATURES`]); bump it whenever they change meaning
/// or order.
pub const RUN_FEATURE_SCHEMA_VERSION: u32 = 1;

/// Names of the per-checkpoint run features, in order: what the restart model sees of a run's
/// progress (n: the run's free buffers).
pub const RUN_FEATURES: [&str; 10] = [
    "ln(1 + run nodes / n)",
    "run nodes / run budget",
    "ln(run budget / n)",
    "buffers placed now / n",
    "most buffers placed at once in the run / n",
    "fewest buffers placed at a node since the last checkpoint / n",
    "ln(1 + failures / run nodes)",
    "ln(1 + failures since the last checkpoint / nodes since it)",
    "share of the run's nodes since the most placed last grew",
    "node-cache hits / run nodes",
];

/// A run's counters at a checkpoint, from which [`run_features`] are computed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RunProgress {
    /// The run's free buffers.
    pub free: u64,
    /// Nodes the run has expanded.
    pub nodes: u64,
    /// The run's node budget.
    pub budget: u64,
    /// Buffers placed at the current node.
    pub placed: u64,
    /// The most buffers placed at once in the run.
    pub deepest: u64,
    /// The node count when `deepest` was last raised.
    pub deepest_at: u64,
    /// The fewest buffers placed at a node since the last checkpoint.
    pub shallowest: u64,
    /// Failures (minor backtracks) in the run.
    pub failures: u64,
    /// Failures since the last checkpoint.
    pub recent_failures: u64,
    /// Nodes since the last checkpoint.
    pub recent_nodes: u64,
    /// Node-cache hits in the run.
    pub cache_hits: u64,
}

/// The features of a run at a checkpoint (see [`RUN_FEATURES`]).
pub fn run_features(p: &RunProgress) -> [f32; RUN_FEATURES.len()] {
    let n = p.free.max(1) as f64;
    let nodes = p.nodes.max(1) as f64;
    let budget = p.budget.max(1) as f64;
    [
        (1.0 + nodes / n).ln() as f32,
        (nodes / budget).min(1.0) as f32,
        (budget / n).ln().clamp(0.0, 30.0) as f32,
        (p.placed as f64 / n) as f32,
        (p.deepest as f64 / n) as f32,
        (p.shallowest.min(p.placed) as f64 / n) as f32,
        (1.0 + p.failures as f64 / nodes).ln() as f32,
        (1.0 + p.recent_failures as f64 / p.recent_nodes.max(1) as f64).ln() as f32,
        (nodes.min(p.nodes.saturating_sub(p.deepest_at) as f64) / nodes) as f32,
        (p.cache_hits as f64 / nodes) as f32,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_features_describe_a_runs_progress() {
        let progress = RunProgress {
            free: 100,
            nodes: 300,
            budget: 400,
            placed: 40,
            deepest: 80,
            deepest_at: 150,
            shallowest: 30,
            failures: 600,
            recent_failures: 100,
            recent_nodes: 50,
            cache_hits: 30,
        };
        let f = run_features(&progress);
        let expected = [
            4f32.ln(),
            0.75,
            4f32.ln(),
            0.4,
            0.8,
            0.3,
            3f32.ln(),
            3f32.ln(),
            0.5,
            0.1,
        ];
        for (i, (got, want)) in f.iter().zip(expected).enumerate() {
            assert!(
                (got - want).abs() < 1e-6,
                "{}: {got} against {want}",
                RUN_FEATURES[i]
            );
        }
        // The fewest placed never exceeds the placed now (no node since the checkpoint).
        let fresh = RunProgress {
            shallowest: u64::MAX,
            ..progress
        };
        assert_eq!(run_features(&fresh)[5], 0.4);
    }
}
