//! The learned seams of a run. A [`RunJudge`] reads a run's progress at a checkpoint
//! ([`RUN_FEATURES`](super::RUN_FEATURES)) and may end the run early (switch
//! `learned-restarts`; the learned one is [`crate::learned::RestartModel`]). It only ever ends
//! runs the portfolio lets end early, so no judge can make the search incomplete. A
//! [`PlacementRisk`] estimates, as each placement is made, how likely its subtree is to hold no
//! solution; with `learned-backjump`, a major backtrack goes to the riskiest placement behind a
//! conflict (the predicted culprit) instead of the earliest. Major backtracks keep doubling
//! their failure budget, so the search stays complete whatever the estimates.

use super::features::{CANDIDATE_FEATURES, RUN_FEATURES};

/// Decides at a run's checkpoints whether the run should end now.
pub trait RunJudge: Sync {
    /// Whether a run at a checkpoint with `features` should end now (as if its budget were
    /// spent).
    fn ends(&self, features: &[f32; RUN_FEATURES.len()]) -> bool;
}

/// Estimates the probability that a placement's subtree holds no solution.
pub trait PlacementRisk: Sync {
    /// The estimate for a candidate with `features` ([`CANDIDATE_FEATURES`]), in [0, 1].
    fn risk(&self, features: &[f32; CANDIDATE_FEATURES.len()]) -> f32;

    /// A major backtrack goes to the earliest placement behind the conflict whose risk is at
    /// least this, or to the riskiest one if none is.
    fn threshold(&self) -> f32;
}
