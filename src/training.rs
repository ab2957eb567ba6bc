//! The contract between this crate and the offline trainer (`training/`, with burn): what it
//! reads (the feature layouts and the solve logs) and what it writes (the model file). Anything
//! the trainer uses comes from here, so a change to the contract shows in one place.

pub use crate::learned::{
    is_strategy_name, DenseLayer, ModelError, ModelFile, Network, Normalisation, PortfolioHead,
    PortfolioNetwork, ShareSchedule, TrainingInfo, MAX_LEAD, MODEL_FORMAT, MODEL_FORMAT_VERSION,
};
pub use crate::search::features::{
    CANDIDATE_FEATURES, FEATURE_SCHEMA_VERSION, NODE_FEATURES, PROBLEM_FEATURES,
    PROBLEM_FEATURE_SCHEMA_VERSION,
};
pub use crate::search::schedule::budget as round_budget;
pub use crate::search::Schedule;
pub use crate::solve_log::{
    read_log, read_log_file, CandidateRecord, Decision, Footer, Header, LogLine, SolveLog,
    TryRecord, TryResult, LOG_SCHEMA, LOG_SCHEMA_VERSION,
};

/// The features of a whole problem under `capacity` (see [`PROBLEM_FEATURES`]), as the
/// portfolio head sees them; `problem` must pass [`crate::Problem::check`].
pub fn problem_features(problem: &crate::Problem, capacity: u64) -> [f32; PROBLEM_FEATURES.len()] {
    crate::search::RootNode::new(problem, capacity)
        .problem_view()
        .features()
}
