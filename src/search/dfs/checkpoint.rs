//! A run's checkpoints: every half a problem's worth of nodes, the run's progress becomes
//! [`RunProgress`]; the observer hears its features, and the restart model (switch
//! `learned-restarts`, only on runs the portfolio lets end early) may end the run.

use super::{Searcher, Stop};
use crate::learned::RestartModel;
use crate::search::features::{run_features, RunProgress};

/// Where a run is between checkpoints: what the next checkpoint's features need that the run's
/// counters do not hold.
pub(super) struct Checkpoints<'a> {
    /// Nodes between two checkpoints; 0: the run takes none (no observer, no model).
    stride: u64,
    /// The node count of the next checkpoint.
    next_at: u64,
    /// The run's node budget.
    budget: u64,
    /// The model that may end the run, when the run may end early.
    model: Option<&'a RestartModel>,
    /// The most buffers placed at once so far, and the node count when it was last raised.
    deepest: u64,
    deepest_at: u64,
    /// The fewest buffers placed at a node since the last checkpoint.
    shallowest: u64,
    /// The run's failures and nodes at the last checkpoint.
    failures_then: u64,
    nodes_then: u64,
}

impl<'a> Checkpoints<'a> {
    /// Checkpoints every `max(free / 2, 32)` nodes of a run of `budget` nodes over `free`
    /// buffers, when someone reads them (`watched`, or a `model`).
    pub fn new(
        free: usize,
        budget: u64,
        model: Option<&'a RestartModel>,
        watched: bool,
    ) -> Checkpoints<'a> {
        let stride = if watched || model.is_some() {
            (free as u64 / 2).max(32)
        } else {
            0
        };
        Checkpoints {
            stride,
            next_at: stride,
            budget,
            model,
            deepest: 0,
            deepest_at: 0,
            shallowest: u64::MAX,
            failures_then: 0,
            nodes_then: 0,
        }
    }

    /// Notes the node numbered `nodes`, with `placed` buffers placed; whether it is a
    /// checkpoint.
    #[inline]
    pub fn due(&mut self, nodes: u64, placed: u64) -> bool {
        if self.stride == 0 {
            return false;
        }
        self.shallowest = self.shallowest.min(placed);
        if placed > self.deepest {
            self.deepest = placed;
            self.deepest_at = nodes;
        }
        nodes >= self.next_at
    }
}

impl Searcher<'_> {
    /// A checkpoint at the current node: tells the observer the run's features and stops the
    /// run (as if its budget were spent) when the restart model predicts it doomed.
    #[inline(never)]
    pub(super) fn checkpoint(&mut self) -> Option<Stop> {
        let at = &mut self.checkpoints;
        let nodes = self.stats.nodes;
        let failures = self.stats.minor_backtracks;
        let progress = RunProgress {
            free: self.instance.free.len() as u64,
            nodes,
            budget: at.budget,
            placed: self.state.placed as u64,
            deepest: at.deepest,
            deepest_at: at.deepest_at,
            shallowest: at.shallowest,
            failures,
            recent_failures: failures - at.failures_then,
            recent_nodes: nodes - at.nodes_then,
            cache_hits: self.stats.cache_hits,
        };
        at.next_at = nodes + at.stride;
        at.shallowest = u64::MAX;
        at.failures_then = failures;
        at.nodes_then = nodes;
        let features = run_features(&progress);
        if let Some(observer) = self.observer.as_mut() {
            observer.on_checkpoint(&features);
        }
        if at.model.is_some_and(|model| model.ends(&features)) {
            self.stats.doomed_runs += 1;
            return Some(Stop::Budget);
        }
        None
    }
}
