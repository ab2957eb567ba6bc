//! Predicted culprits (switch `learned-backjump`): each placement's risk, estimated by the
//! learned risk head as it is made, and the placement behind a conflict that a major backtrack
//! goes back to: the earliest risky one (the predicted culprit), else the riskiest.

use crate::search::features::candidate_features;
use crate::search::policy::{Candidate, NodeView};
use crate::search::state::State;
use crate::search::PlacementRisk;

/// The risk of every placed buffer, as estimated when it was placed.
pub(super) struct Culprits<'a> {
    judge: &'a dyn PlacementRisk,
    /// Per buffer: the estimate of its current placement (stale for unplaced buffers).
    risk: Vec<f32>,
}

impl<'a> Culprits<'a> {
    /// Estimates for a problem of `buffers` buffers, by `judge`.
    pub fn new(judge: &'a dyn PlacementRisk, buffers: usize) -> Culprits<'a> {
        Culprits {
            judge,
            risk: vec![0.0; buffers],
        }
    }

    /// Estimates the risk of placing `c` at the node of `view`.
    pub fn note_placement(&mut self, view: &NodeView<'_>, c: &Candidate) {
        let features = candidate_features(view, c);
        self.risk[c.buffer as usize] = self.judge.risk(&features);
    }

    /// The decision depth of the predicted culprit among the placed buffers of `buffers`: the
    /// earliest whose risk reaches the judge's threshold, else the riskiest (the earliest among
    /// equals); `u32::MAX` if none is placed. Buffers placed without a choice (forced) count as
    /// riskless.
    pub fn culprit(&self, state: &State, buffers: impl Iterator<Item = u32>) -> u32 {
        let threshold = self.judge.threshold();
        let mut riskiest = (f32::NEG_INFINITY, u32::MAX);
        let mut earliest_risky = u32::MAX;
        for b in buffers {
            let b = b as usize;
            if !state.is_placed(b) {
                continue;
            }
            let (risk, level) = (self.risk[b], state.levels[b]);
            if risk >= threshold {
                earliest_risky = earliest_risky.min(level);
            }
            if risk > riskiest.0 || (risk == riskiest.0 && level < riskiest.1) {
                riskiest = (risk, level);
            }
        }
        if earliest_risky != u32::MAX {
            earliest_risky
        } else {
            riskiest.1
        }
    }

    /// Marks `b`, placed without a choice, as riskless.
    pub fn note_forced(&mut self, b: usize) {
        self.risk[b] = 0.0;
    }
}
