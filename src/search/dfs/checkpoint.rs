//! A run's checkpoints: every half a problem's worth of nodes, the run's progress becomes
//! [`RunProgress`], whose features the observer hears and the run's judge (switch
//! `learned-restarts`, only on runs the portfolio lets end early) may end the run on.

use crate::search::features::RunProgress;
use crate::search::RunJudge;

/// The counters of a run at a node, as the searcher holds them.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Counters {
    /// The run's free buffers.
    pub free: u64,
    /// Nodes the run has expanded.
    pub nodes: u64,
    /// Buffers placed at the current node.
    pub placed: u64,
    /// Failures (minor backtracks) in the run.
    pub failures: u64,
    /// Node-cache hits in the run.
    pub cache_hits: u64,
}

/// Where a run is between checkpoints: what the next checkpoint's features need that the run's
/// counters do not hold.
pub(super) struct Checkpoints<'a> {
    /// Nodes between two checkpoints; 0: the run takes none (no observer, no judge).
    stride: u64,
    /// The node count of the next checkpoint.
    next_at: u64,
    /// The run's node budget.
    budget: u64,
    /// The judge that may end the run, when the run may end early.
    judge: Option<&'a dyn RunJudge>,
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
    /// buffers, when someone reads them (`watched`, or a `judge`).
    pub fn new(
        free: usize,
        budget: u64,
        judge: Option<&'a dyn RunJudge>,
        watched: bool,
    ) -> Checkpoints<'a> {
        let stride = if watched || judge.is_some() {
            (free as u64 / 2).max(32)
        } else {
            0
        };
        Checkpoints {
            stride,
            next_at: stride,
            budget,
            judge,
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

    /// The run's progress at the checkpoint where it has `counters`; the next checkpoint
    /// starts counting from here.
    pub fn progress(&mut self, counters: Counters) -> RunProgress {
        let progress = RunProgress {
            free: counters.free,
            nodes: counters.nodes,
            budget: self.budget,
            placed: counters.placed,
            deepest: self.deepest,
            deepest_at: self.deepest_at,
            shallowest: self.shallowest,
            failures: counters.failures,
            recent_failures: counters.failures - self.failures_then,
            recent_nodes: counters.nodes - self.nodes_then,
            cache_hits: counters.cache_hits,
        };
        self.next_at = counters.nodes + self.stride;
        self.shallowest = u64::MAX;
        self.failures_then = counters.failures;
        self.nodes_then = counters.nodes;
        progress
    }

    /// The judge of the run, if it may end early.
    pub fn judge(&self) -> Option<&'a dyn RunJudge> {
        self.judge
    }
}
