//! Watching a search: the search calls a [`SearchObserver`] when it starts and ends and around
//! each run, and a [`RunObserver`] at the decisions, tries and conflicts of one run. The solve
//! log ([`crate::solve_log`]) is one observer; the search never knows what is done with what it
//! reports.
//!
//! Runs of a portfolio may go on several threads: each run has its own [`RunObserver`], handed
//! back to the [`SearchObserver`] in run order once the run ends, so what an observer sees does
//! not depend on the thread count.

use super::policy::{Candidate, NodeView};
use super::stats::SearchStats;
use crate::outcome::Status;
use crate::problem::Problem;

/// What a search is about, told before the first run.
pub struct SearchStart<'a> {
    /// The problem.
    pub problem: &'a Problem,
    /// The capacity searched.
    pub capacity: u64,
    /// LOAD of the problem.
    pub load: u64,
}

/// How one tried candidate ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TryEnd {
    /// Led to a solution: the choice is on the final solution path (of this run).
    Found,
    /// Its subtree holds no solution (refuted).
    Failed,
    /// Interrupted by a major backtrack.
    Unwound,
    /// The run stopped (budget, time or cancellation) inside it.
    Stopped,
}

/// The work below one tried candidate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TryCounts {
    /// Search nodes spent below it.
    pub nodes: u64,
    /// Minor backtracks (failures) below it, the immediate one included.
    pub failures: u64,
    /// Major backtracks fired below it.
    pub majors: u64,
}

/// Watches one run of a portfolio. Decisions nest (depth first): a decision's tries and their
/// subtrees' decisions come before its [`RunObserver::on_decision_end`].
pub trait RunObserver: Send {
    /// A decision node is about to try `candidates` (in the policy's order). Returns whether
    /// the observer wants to hear this node's tries and end.
    fn on_decision(&mut self, node: &NodeView<'_>, candidates: &[Candidate]) -> bool;

    /// `candidate`, one of the innermost watched decision's, was tried.
    fn on_try(&mut self, candidate: &Candidate, counts: TryCounts, end: TryEnd);

    /// The innermost watched decision is done.
    fn on_decision_end(&mut self);

    /// A conflict involved `buffers` (the unplaced buffers of a failing section).
    fn on_conflict(&mut self, buffers: &[u32]) {
        let _ = buffers;
    }

    /// A checkpoint of the run: its progress as [`RUN_FEATURES`](super::RUN_FEATURES).
    fn on_checkpoint(&mut self, features: &[f32]) {
        let _ = features;
    }
}

/// How a run of a portfolio ended.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// The run's number in the search (0-based).
    pub run: u32,
    /// Its policy.
    pub policy: String,
    /// Its counters.
    pub stats: SearchStats,
    /// How it ended.
    pub ended: RunEnded,
}

/// How one run of a portfolio ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnded {
    /// It found a layout.
    Found,
    /// It searched its whole tree (of the problem, or of a restriction) and found nothing.
    Exhausted,
    /// Its node budget was spent (or the restart model ended it) without deciding.
    Budget,
    /// The deadline, the node limit or cancellation stopped it.
    Stopped,
}

/// Watches a whole search.
pub trait SearchObserver: Send {
    /// The search starts (after the problem was checked).
    fn on_start(&mut self, start: &SearchStart<'_>) {
        let _ = start;
    }

    /// Run `run` of `policy` is about to start: the observer of its decisions, if wanted.
    fn run_observer(&mut self, run: u32, policy: &str) -> Option<Box<dyn RunObserver>> {
        let _ = (run, policy);
        None
    }

    /// A run ended; its observer comes back. Called in run order.
    fn on_run_end(&mut self, summary: &RunSummary, observer: Option<Box<dyn RunObserver>>) {
        let _ = (summary, observer);
    }

    /// The search ended with `status` (not yet validated: a solution is validated by the
    /// caller before it is returned) and these counters.
    fn on_finish(&mut self, status: &Status, stats: &SearchStats) {
        let _ = (status, stats);
    }
}
