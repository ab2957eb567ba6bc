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
