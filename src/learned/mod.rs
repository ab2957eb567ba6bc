//! The learned components: a small MLP, trained offline on solve logs (the `training/` crate,
//! with burn), run here with plain `ndarray`; no training framework enters this crate.
//!
//! - [`model_file`]: the JSON format of a trained model and its checks (feature layout, shapes,
//!   finite numbers);
//! - [`network`]: batched inference for the candidate heads and the portfolio head;
//! - [`node_policy`]: [`LearnedPolicy`], a [`NodePolicy`](crate::search::NodePolicy) that
//!   reorders a node's candidates where the model is confident;
//! - [`portfolio_head`]: [`PortfolioRanker`], a [`StrategyRanker`](crate::search::StrategyRanker)
//!   that orders a portfolio per problem;
//! - [`cpsat_gate`]: [`CpSatGate`], a logistic model that sets CP-SAT's share of the work per
//!   problem when it runs beside the search (`models/cpsat_gate.json`, compiled in);
//! - [`hole_model`]: [`HoleModel`], a linear score over the ways a hole can end or start at a
//!   step of a slack profile, which guides the slack-filling lottery's draws
//!   (`models/hole_shapes.json`, compiled in);
//! - [`restart_model`]: [`RestartModel`], an MLP over a run's progress that ends runs it predicts
//!   will not decide (switch `learned-restarts`; `models/restarts.json`, compiled in).
//!
//! The shipped model (`models/policy.json`) is compiled in ([`BUILT_IN_MODEL`],
//! [`ModelFile::built_in`]): `--policy learned` needs no file and works from any directory.
//!
//! A model file that is missing, unreadable or trained on other features never stops a search:
//! the policy then behaves exactly as the fixed policy, and the reason is returned to the caller
//! as a warning ([`crate::Allocation::warnings`]).
//!
//! ```
//! use telamalloc::learned::{LearnedPolicy, ModelFile};
//! // A hand-made model: prefer the lowest offset (feature 3), then the best static rank (7).
//! let mut weights = [0.0f32; 9];
//! weights[3] = -1000.0;
//! weights[7] = -1.0;
//! let model = ModelFile::linear(&weights, 0.0);
//! let policy = LearnedPolicy::from_model(model, 10, true);
//! assert!(policy.fallback_reason().is_none());
//! ```

pub mod cpsat_gate;
pub mod hole_model;
pub mod model_file;
pub mod network;
pub mod node_policy;
pub mod portfolio_head;
pub mod restart_model;

pub use cpsat_gate::CpSatGate;
pub use hole_model::HoleModel;
pub use model_file::{
    is_strategy_name, DenseLayer, ModelError, ModelFile, Normalisation, PortfolioHead,
    ShareSchedule, TrainingInfo, BUILT_IN_MODEL, DEFAULT_MODEL_PATH, MAX_LEAD, MODEL_FORMAT,
    MODEL_FORMAT_VERSION,
};
pub use network::{Network, PortfolioNetwork};
pub use node_policy::{fallback_warning, LearnedPolicy};
pub use portfolio_head::PortfolioRanker;
pub use restart_model::RestartModel;

use crate::search::{LearnedHooks, SearchOptions};
use std::sync::Arc;

/// The learned hooks of one solve under `options` (each only when its switch is on): the
/// compiled-in hole-shape and restart models, and the risk head of `model` (the network of the
/// policy's model file) or else of the built-in model.
pub(crate) fn hooks(options: &SearchOptions, model: Option<&Arc<Network>>) -> LearnedHooks {
    LearnedHooks {
        hole_model: hole_model::lottery_weights(options),
        run_judge: restart_model::run_judge(options),
        placement_risk: network::placement_risk(options, model),
    }
}
