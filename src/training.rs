//! The contract between this crate and the offline trainer (`training/`, with burn): what it
//! reads (the feature layouts and the solve logs) and what it writes (the model file). Anything
//! the trainer uses comes from here, so a change to the contract shows in one place.

pub use crate::learned::hole_model::{HoleModel, HOLE_MODEL_FORMAT, HOLE_MODEL_FORMAT_VERSION};
pub use crate::learned::restart_model::{
    RestartModel, RESTART_MODEL_FORMAT, RESTART_MODEL_FORMAT_VERSION,
};
pub use crate::learned::{
    is_strategy_name, DenseLayer, ModelError, ModelFile, Network, Normalisation, PortfolioHead,
    PortfolioNetwork, ShareSchedule, TrainingInfo, MAX_LEAD, MODEL_FORMAT, MODEL_FORMAT_VERSION,
};
pub use crate::search::features::problem_features_of as problem_features;
pub use crate::search::schedule::budget as round_budget;
pub use crate::search::slack::truth::{HoleChoice, HoleOdds, OddsBudget};
pub use crate::search::slack::walk::{MoveFeatures, HOLE_FEATURES, HOLE_FEATURE_SCHEMA_VERSION};
pub use crate::search::RunJudge;
pub use crate::search::{
    Schedule, CANDIDATE_FEATURES, FEATURE_SCHEMA_VERSION, NODE_FEATURES, PROBLEM_FEATURES,
    PROBLEM_FEATURE_SCHEMA_VERSION, RUN_FEATURES, RUN_FEATURE_SCHEMA_VERSION,
};
pub use crate::solve_log::{
    read_log, read_log_file, CandidateRecord, Decision, Footer, Header, LogLine, RunRecord,
    RunResult, SolveLog, TryRecord, TryResult, LOG_SCHEMA, LOG_SCHEMA_VERSION,
};

/// The choices of the slack-filling walk ([`crate::learned::HoleModel`]'s moves) that cuts the
/// slack profile of `problem` (at its capacity; it must pass [`crate::Problem::check`]) into
/// exactly `holes`, `(lower, upper, size)` each: the examples the hole-shape model is trained
/// on, where `holes` are the pieces removed from a generated perfect packing. None when the
/// problem has no capacity, a section is over it, or no walk gives those holes.
pub fn hole_choices(
    problem: &crate::Problem,
    holes: &[(u64, u64, u64)],
) -> Option<Vec<HoleChoice>> {
    let instance = crate::search::instance::Instance::new(problem, problem.capacity?);
    crate::search::slack::truth::truth_of(&instance, holes)
}

/// How hard `holes` (as for [`hole_choices`]) are for the slack-filling lottery to draw on
/// `problem` under the hole-shape model's `weights` (see [`HoleOdds`]): the probability of one
/// draw, the rank among the `budget.ranked` most likely cuts (a best-first search expanding at
/// most `budget.expansions` partial walks), and the first of `budget.draws` seeded draws to
/// give them. None when
/// no walk makes them or the problem has no capacity or a section over it.
pub fn hole_odds(
    problem: &crate::Problem,
    holes: &[(u64, u64, u64)],
    weights: &[f32],
    budget: OddsBudget,
) -> Option<HoleOdds> {
    let instance = crate::search::instance::Instance::new(problem, problem.capacity?);
    crate::search::slack::truth::odds(&instance, holes, weights, budget)
}
