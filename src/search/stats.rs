//! The counters of a search, reported with every answer and in the solve logs' footers.

use serde::{Deserialize, Serialize};

/// Counters of a search.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchStats {
    /// Search nodes expanded.
    pub nodes: u64,
    /// Minor backtracks: candidates that failed at once or whose subtree failed.
    pub minor_backtracks: u64,
    /// Major backtracks: jumps back to the placements behind a conflict.
    pub major_backtracks: u64,
    /// The most free buffers placed at once at any node of any run: how far the search got.
    /// Independent parts are searched one after another and each solved part is set aside,
    /// so a solved problem may show fewer than all its buffers.
    #[serde(default)]
    pub deepest: u64,
    /// Restarts (runs after the first).
    pub restarts: u64,
    /// Runs the restart model ended early (switch `learned-restarts`).
    #[serde(default)]
    pub doomed_runs: u64,
    /// Nodes refuted at once by the node cache.
    #[serde(default)]
    pub cache_hits: u64,
    /// Nodes whose candidates cover branching narrowed to the covers of one point.
    #[serde(default)]
    pub cover_branches: u64,
    /// Times a placement cut the timeline into independent parts.
    pub decompositions: u64,
    /// The policy that produced the answer, if the search ran.
    pub policy: Option<String>,
    /// Whether a baseline already fitted (no search ran).
    pub heuristic: Option<String>,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Decision lines written to the solve log (0 when not recording).
    #[serde(default)]
    pub recorded_decisions: u64,
    /// Decision lines dropped by the per-run record limit.
    #[serde(default)]
    pub dropped_decisions: u64,
    /// The portfolio's policies in the order they ran (empty if the search did not run).
    #[serde(default)]
    pub portfolio: Vec<String>,
    /// Each policy's runs per round, in the order of `portfolio` (all 1: the plain round robin;
    /// empty if the search did not run).
    #[serde(default)]
    pub weights: Vec<u64>,
    /// Wall-clock seconds spent in the external member of the rounds (CP-SAT with `--with
    /// cpsat`; 0 without one).
    #[serde(default)]
    pub external_seconds: f64,
}

impl SearchStats {
    /// Adds the work counters of `other` (nodes, backtracks, decompositions, the external
    /// member's seconds).
    pub(crate) fn add(&mut self, other: &SearchStats) {
        self.nodes += other.nodes;
        self.deepest = self.deepest.max(other.deepest);
        self.external_seconds += other.external_seconds;
        self.minor_backtracks += other.minor_backtracks;
        self.major_backtracks += other.major_backtracks;
        self.decompositions += other.decompositions;
        self.cache_hits += other.cache_hits;
        self.doomed_runs += other.doomed_runs;
        self.cover_branches += other.cover_branches;
    }
}
