//! What a run's observer is told: its decision nodes, and how each try there ended with the
//! work it took.

use super::{node_view, Flow, Searcher};
use crate::search::observer::{TryCounts, TryEnd};
use crate::search::policy::Candidate;

impl Searcher<'_> {
    /// Tells the observer about a decision node at `(depth, unplaced)`; whether it watches this
    /// one. A node with fewer than two candidates offers no choice and is not reported.
    pub(super) fn watch_decision(
        &mut self,
        depth: u32,
        unplaced: usize,
        candidates: &[Candidate],
    ) -> bool {
        let Some(observer) = self.observer.as_mut().filter(|_| candidates.len() >= 2) else {
            return false;
        };
        let place = (depth, unplaced);
        let view = node_view(
            self.instance,
            self.state,
            &self.conflicts,
            &self.stats,
            place,
        );
        observer.on_decision(&view, candidates)
    }

    /// Tells the observer that the decision node it watched is done.
    pub(super) fn end_decision(&mut self) {
        if let Some(observer) = self.observer.as_mut() {
            observer.on_decision_end();
        }
    }

    /// The run's counters that a try's report measures.
    pub(super) fn counts(&self) -> TryCounts {
        TryCounts {
            nodes: self.stats.nodes,
            failures: self.stats.minor_backtracks,
            majors: self.stats.major_backtracks,
        }
    }

    /// Reports how the try of `candidate` ended, with the work done since `before`.
    pub(super) fn report_try(&mut self, candidate: &Candidate, before: TryCounts, child: Flow) {
        let now = self.counts();
        let counts = TryCounts {
            nodes: now.nodes - before.nodes,
            failures: now.failures - before.failures,
            majors: now.majors - before.majors,
        };
        let end = match child {
            Flow::Found => TryEnd::Found,
            Flow::Failed => TryEnd::Failed,
            Flow::Unwind(_) => TryEnd::Unwound,
            Flow::Stop(_) => TryEnd::Stopped,
        };
        if let Some(observer) = self.observer.as_mut() {
            observer.on_try(candidate, counts, end);
        }
    }
}
