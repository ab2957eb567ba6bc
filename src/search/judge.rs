//! The restart seam: a [`RunJudge`] reads a run's progress at a checkpoint
//! ([`RUN_FEATURES`](super::RUN_FEATURES)) and may end the run early (switch
//! `learned-restarts`; the learned one is [`crate::learned::RestartModel`]). It only ever ends
//! runs the portfolio lets end early, so no judge can make the search incomplete.

use super::features::RUN_FEATURES;

/// Decides at a run's checkpoints whether the run should end now.
pub trait RunJudge: Sync {
    /// Whether a run at a checkpoint with `features` should end now (as if its budget were
    /// spent).
    fn ends(&self, features: &[f32; RUN_FEATURES.len()]) -> bool;
}
