//! The learned seams of a run. A [`RunJudge`] reads a run's progress at a checkpoint
//! ([`RUN_FEATURES`](super::RUN_FEATURES)) and may end the run early (switch
//! `learned-restarts`; the learned one is [`crate::learned::RestartModel`]). It only ever ends
//! runs the portfolio lets end early, so no judge can make the search incomplete. A
//! [`PlacementRisk`] estimates, as each placement is made, how likely its subtree is to hold no
//! solution; with `learned-backjump`, a major backtrack goes to the riskiest placement behind a
//! conflict (the predicted culprit) instead of the earliest. Major backtracks keep doubling
//! their failure budget, so the search stays complete whatever the estimates.

use super::features::{CANDIDATE_FEATURES, RUN_FEATURES};
use std::sync::Arc;

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

/// The learned parts one solve's searches consult, each `None` when its switch is off: built
/// once per solve by the front door (`fit::Engine`) and carried by every fit's portfolio, so
/// that a plain fit, minimise's probes and windows, and each memory's fits see the same ones.
#[derive(Clone, Default)]
pub(crate) struct LearnedHooks {
    /// The weights of the hole-shape model, by which the slack-filling lottery draws its cuts
    /// (switch `learned-holes`; see `slack::walk`).
    pub(crate) hole_model: Option<&'static [f32]>,
    /// The judge that may end runs early (switch `learned-restarts`).
    pub(crate) run_judge: Option<&'static dyn RunJudge>,
    /// The placement risk a major backtrack reads (switch `learned-backjump`): the risk head of
    /// the policy's model file, else the built-in model's.
    pub(crate) placement_risk: Option<Arc<dyn PlacementRisk + Send>>,
}

impl LearnedHooks {
    /// What one run reads of them: the judge only when the run may end early.
    pub(crate) fn for_run(&self, may_end_early: bool) -> RunHooks<'_> {
        RunHooks {
            run_judge: self.run_judge.filter(|_| may_end_early),
            placement_risk: self
                .placement_risk
                .as_deref()
                .map(|r| r as &dyn PlacementRisk),
        }
    }
}

/// The learned parts one run of the search reads.
#[derive(Clone, Copy, Default)]
pub(crate) struct RunHooks<'a> {
    /// The judge that may end this run early (switch `learned-restarts`), for a run the
    /// portfolio lets end early.
    pub(crate) run_judge: Option<&'a dyn RunJudge>,
    /// The placement risk that chooses major backtracks' targets (switch `learned-backjump`).
    pub(crate) placement_risk: Option<&'a dyn PlacementRisk>,
}
