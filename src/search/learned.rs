//! The learned policy: a small MLP, trained offline on solve logs (the `training/` crate), that
//! scores the candidates of a node from their features ([`super::features`]) and reorders them
//! when it is confident. Everything else (the static order, conflict boosting, and the candidate
//! order whenever the model is unsure or absent) is the [`FixedPolicy`]'s, by composition.
//!
//! Inference is a plain `ndarray` forward pass over all candidates of a node at once; no
//! training framework enters this crate. The weights live in a JSON [`ModelFile`] that records
//! the feature layout it was trained on; a missing, unreadable or mismatched file never stops
//! the search: the policy then behaves exactly as the fixed policy and says why, once, on
//! standard error.
//!
//! ```
//! use telamalloc::search::learned::{LearnedPolicy, ModelFile};
//! // A hand-made model: prefer the lowest offset (feature 3), then the best static rank (7).
//! let mut weights = [0.0f32; 9];
//! weights[3] = -1000.0;
//! weights[7] = -1.0;
//! let model = ModelFile::linear(&weights, 0.0);
//! let policy = LearnedPolicy::from_model(model, 10, true);
//! assert!(policy.fallback_reason().is_none());
//! ```

use super::features::{candidate_features, CANDIDATE_FEATURES, FEATURE_SCHEMA_VERSION};
use super::policy::{Candidate, FixedPolicy, NodeView, Policy};
use super::portfolio_model::{PortfolioHead, PortfolioNetwork};
use ndarray::{Array1, Array2, ArrayView2, Axis};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Name of the model-file format, in every model file.
pub const MODEL_FORMAT: &str = "telamalloc-policy-model";
/// Version of the model-file format; bumped whenever a field changes meaning.
pub const MODEL_FORMAT_VERSION: u32 = 1;
/// Where `--policy learned` looks for its model, relative to the working directory.
pub const DEFAULT_MODEL_PATH: &str = "models/policy.json";

/// A trained policy model as stored on disk (JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelFile {
    /// Always [`MODEL_FORMAT`].
    pub format: String,
    /// [`MODEL_FORMAT_VERSION`] of the writer.
    pub format_version: u32,
    /// The [`FEATURE_SCHEMA_VERSION`] the model was trained on; it must equal the reader's.
    pub feature_schema_version: u32,
    /// The input feature names, in order; they must equal [`CANDIDATE_FEATURES`].
    pub features: Vec<String>,
    /// Input normalisation: `x' = (x - mean) / std`, per feature.
    pub normalisation: Normalisation,
    /// Hidden layers, each followed by a ReLU.
    pub hidden: Vec<DenseLayer>,
    /// The score head on the last hidden layer (or the normalised input): one output, larger =
    /// try earlier.
    pub score: DenseLayer,
    /// The optional risk head on the same input as the score head: one logit; its sigmoid
    /// estimates the probability that the candidate's subtree holds no solution.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub risk: Option<DenseLayer>,
    /// The policy reorders a node's candidates (by score, equal scores in the fixed order) only
    /// when the best-scored candidate is not the fixed policy's first choice and outscores it
    /// by at least this much; otherwise it keeps the fixed order.
    pub confidence_margin: f32,
    /// The fixed order as a prior: a node's candidates are ranked by
    /// `score - order_prior x position`, position 0 being the fixed policy's first choice, so
    /// the model learns where to depart from the fixed order (0: by the score alone).
    #[serde(default)]
    pub order_prior: f32,
    /// Whether the policy reorders candidates with the score head at all; `false` keeps the fixed
    /// order at every node (and skips the features), e.g. when the head did not beat the fixed
    /// order on validation.
    #[serde(default = "yes")]
    pub rank_candidates: bool,
    /// With a risk head: candidates whose estimated risk is at least this are tried after the
    /// others at each node (each group keeps its order). `None`: the risk head is not used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postpone_risk: Option<f32>,
    /// The optional per-problem portfolio head: which strategies to run first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub portfolio: Option<PortfolioHead>,
    /// Where the model came from.
    pub training: TrainingInfo,
    /// Evaluation figures (validation top-1 agreement and so on), by name.
    #[serde(default)]
    pub metrics: BTreeMap<String, f64>,
}

fn yes() -> bool {
    true
}

/// Per-feature normalisation constants.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Normalisation {
    /// Mean of each feature over the training data.
    pub mean: Vec<f32>,
    /// Standard deviation of each feature (must be positive).
    pub std: Vec<f32>,
}

/// A fully connected layer, `y = x W + b`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DenseLayer {
    /// Input width.
    pub inputs: usize,
    /// Output width.
    pub outputs: usize,
    /// `W`, row-major `[inputs][outputs]` (`inputs x outputs` numbers).
    pub weights: Vec<f32>,
    /// `b`, `outputs` numbers.
    pub bias: Vec<f32>,
}

/// Provenance of a model.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TrainingInfo {
    /// A hash of the training logs (FNV-1a over their bytes, in file-name order), in hex.
    pub data_hash: String,
    /// The same hash over the validation logs.
    #[serde(default)]
    pub validation_hash: String,
    /// What the data was, in words (e.g. "generated problems").
    #[serde(default)]
    pub data: String,
    /// Training logs read.
    #[serde(default)]
    pub logs: u64,
    /// Training examples (decisions) used.
    #[serde(default)]
    pub examples: u64,
    /// Epochs run (the best one's weights are kept).
    #[serde(default)]
    pub epochs: u64,
    /// The seed of the run.
    #[serde(default)]
    pub seed: u64,
}

/// Why a model file cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// No file at the path.
    Missing(PathBuf),
    /// The file exists but could not be read.
    Unreadable(PathBuf, String),
    /// Not a model file (bad JSON, wrong format name or version).
    Invalid(String),
    /// Trained on another feature layout.
    SchemaMismatch(String),
    /// The numbers do not make a network (shapes, non-finite values).
    Malformed(String),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Missing(path) => write!(f, "no model file at {}", path.display()),
            ModelError::Unreadable(path, e) => write!(f, "cannot read {}: {e}", path.display()),
            ModelError::Invalid(why) => write!(f, "not a policy model file: {why}"),
            ModelError::SchemaMismatch(why) => write!(f, "feature schema mismatch: {why}"),
            ModelError::Malformed(why) => write!(f, "malformed model: {why}"),
        }
    }
}

impl std::error::Error for ModelError {}

impl ModelFile {
    /// A model without hidden layers: `score = weights . x` on the raw features (mean 0, std 1),
    /// no risk head. Handy for hand-made policies and tests.
    pub fn linear(weights: &[f32], confidence_margin: f32) -> ModelFile {
        let n = CANDIDATE_FEATURES.len();
        let mut w = weights.to_vec();
        w.resize(n, 0.0);
        ModelFile {
            format: MODEL_FORMAT.into(),
            format_version: MODEL_FORMAT_VERSION,
            feature_schema_version: FEATURE_SCHEMA_VERSION,
            features: CANDIDATE_FEATURES.iter().map(|s| s.to_string()).collect(),
            normalisation: Normalisation {
                mean: vec![0.0; n],
                std: vec![1.0; n],
            },
            hidden: Vec::new(),
            score: DenseLayer {
                inputs: n,
                outputs: 1,
                weights: w,
                bias: vec![0.0],
            },
            risk: None,
            confidence_margin,
            order_prior: 0.0,
            rank_candidates: true,
            postpone_risk: None,
            portfolio: None,
            training: TrainingInfo {
                data: "hand-made".into(),
                ..TrainingInfo::default()
            },
            metrics: BTreeMap::new(),
        }
    }

    /// Parses a model file's JSON and checks it (see [`ModelFile::check`]).
    pub fn from_json(text: &str) -> Result<ModelFile, ModelError> {
        let model: ModelFile =
            serde_json::from_str(text).map_err(|e| ModelError::Invalid(e.to_string()))?;
        model.check()?;
        Ok(model)
    }

    /// Reads and checks the model file at `path`.
    pub fn load(path: &Path) -> Result<ModelFile, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ModelError::Missing(path.to_path_buf()),
            _ => ModelError::Unreadable(path.to_path_buf(), e.to_string()),
        })?;
        ModelFile::from_json(&text).map_err(|e| match e {
            ModelError::Invalid(why) => ModelError::Invalid(format!("{}: {why}", path.display())),
            other => other,
        })
    }

    /// The model as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a model file serialises")
    }

    /// Checks the format, the feature layout against this build's, and that the numbers make a
    /// network: shapes chain, every value is finite, every std is positive.
    pub fn check(&self) -> Result<(), ModelError> {
        if self.format != MODEL_FORMAT || self.format_version != MODEL_FORMAT_VERSION {
            return Err(ModelError::Invalid(format!(
                "format {} version {} is not {MODEL_FORMAT} version {MODEL_FORMAT_VERSION}",
                self.format, self.format_version
            )));
        }
        if self.feature_schema_version != FEATURE_SCHEMA_VERSION {
            return Err(ModelError::SchemaMismatch(format!(
                "the model was trained on feature schema {}, this build computes schema {}",
                self.feature_schema_version, FEATURE_SCHEMA_VERSION
            )));
        }
        if self.features.len() != CANDIDATE_FEATURES.len()
            || self
                .features
                .iter()
                .zip(CANDIDATE_FEATURES)
                .any(|(a, b)| a != b)
        {
            return Err(ModelError::SchemaMismatch(format!(
                "the model's {} feature names differ from this build's {} candidate features",
                self.features.len(),
                CANDIDATE_FEATURES.len()
            )));
        }
        let malformed = |why: String| Err(ModelError::Malformed(why));
        self.normalisation.check(self.features.len(), "")?;
        if !self.confidence_margin.is_finite() || !self.order_prior.is_finite() {
            return malformed("the confidence margin and the order prior must be finite".into());
        }
        let width = check_hidden(&self.hidden, self.features.len(), "")?;
        self.score.check("score head", width)?;
        if self.score.outputs != 1 {
            return malformed("the score head must have one output".into());
        }
        if let Some(risk) = &self.risk {
            risk.check("risk head", width)?;
            if risk.outputs != 1 {
                return malformed("the risk head must have one output".into());
            }
        }
        if let Some(threshold) = self.postpone_risk {
            if self.risk.is_none() || !(threshold > 0.0 && threshold <= 1.0) {
                return malformed(format!(
                    "postpone_risk {threshold} needs a risk head and a value in (0, 1]"
                ));
            }
        }
        if let Some(portfolio) = &self.portfolio {
            portfolio.check()?;
        }
        Ok(())
    }

    /// Number of trainable numbers.
    pub fn parameters(&self) -> usize {
        self.hidden
            .iter()
            .chain(std::iter::once(&self.score))
            .chain(self.risk.as_ref())
            .map(|l| l.weights.len() + l.bias.len())
            .sum::<usize>()
            + self.portfolio.as_ref().map_or(0, PortfolioHead::parameters)
    }
}

impl Normalisation {
    /// Checks that there are `n` means and stds, all finite, the stds positive; errors are
    /// prefixed with `name`.
    pub(super) fn check(&self, n: usize, name: &str) -> Result<(), ModelError> {
        let malformed = |why: &str| Err(ModelError::Malformed(format!("{name}{why}")));
        if self.mean.len() != n || self.std.len() != n {
            return malformed(&format!("normalisation needs {n} means and {n} stds"));
        }
        if self.mean.iter().any(|v| !v.is_finite())
            || self.std.iter().any(|v| !(v.is_finite() && *v > 0.0))
        {
            return malformed("normalisation values must be finite, stds positive");
        }
        Ok(())
    }
}

/// Checks that `hidden` chains from `inputs` features; returns the last width. Layer names are
/// prefixed with `name`.
pub(super) fn check_hidden(
    hidden: &[DenseLayer],
    inputs: usize,
    name: &str,
) -> Result<usize, ModelError> {
    let mut width = inputs;
    for (i, layer) in hidden.iter().enumerate() {
        layer.check(&format!("{name}hidden layer {i}"), width)?;
        width = layer.outputs;
    }
    Ok(width)
}

impl DenseLayer {
    pub(super) fn check(&self, name: &str, inputs: usize) -> Result<(), ModelError> {
        let fail = |why: String| Err(ModelError::Malformed(format!("{name}: {why}")));
        if self.inputs != inputs {
            return fail(format!("takes {} inputs, gets {inputs}", self.inputs));
        }
        if self.outputs == 0 || self.outputs > 1 << 16 || self.inputs > 1 << 16 {
            return fail(format!(
                "{} x {} is not a usable shape",
                self.inputs, self.outputs
            ));
        }
        if self.weights.len() != self.inputs * self.outputs || self.bias.len() != self.outputs {
            return fail(format!(
                "{} x {} needs {} weights and {} biases, has {} and {}",
                self.inputs,
                self.outputs,
                self.inputs * self.outputs,
                self.outputs,
                self.weights.len(),
                self.bias.len()
            ));
        }
        if self
            .weights
            .iter()
            .chain(&self.bias)
            .any(|v| !v.is_finite())
        {
            return fail("non-finite weight".into());
        }
        Ok(())
    }

    pub(super) fn to_dense(&self) -> Dense {
        Dense {
            w: Array2::from_shape_vec((self.inputs, self.outputs), self.weights.clone())
                .expect("shape checked"),
            b: Array1::from_vec(self.bias.clone()),
        }
    }
}

/// A dense layer ready for inference.
#[derive(Clone, Debug)]
pub(super) struct Dense {
    w: Array2<f32>,
    b: Array1<f32>,
}

impl Dense {
    pub(super) fn apply(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let mut y = x.dot(&self.w);
        y += &self.b;
        y
    }

    /// Folds the input normalisation `x' = (x - mean) * inv_std` into the layer:
    /// `x' W + b = x (diag(inv_std) W) + (b - mean . diag(inv_std) W)`.
    fn fold_normalisation(&mut self, mean: &[f32], inv_std: &[f32]) {
        for (mut row, &s) in self.w.rows_mut().into_iter().zip(inv_std) {
            row *= s;
        }
        let shift = Array1::from_vec(mean.to_vec()).dot(&self.w);
        self.b -= &shift;
    }
}

/// The hidden layers of a network (ReLU after each), with the input normalisation folded into
/// the first layer, or into the heads when there is no hidden layer.
#[derive(Clone, Debug)]
pub(super) struct Trunk {
    hidden: Vec<Dense>,
}

impl Trunk {
    /// The trunk of checked `hidden` layers; folds `normalisation` into its first layer or,
    /// without hidden layers, into each of `heads`.
    pub(super) fn new(
        hidden: &[DenseLayer],
        normalisation: &Normalisation,
        heads: &mut [&mut Dense],
    ) -> Trunk {
        let mean = &normalisation.mean;
        let inv_std: Vec<f32> = normalisation.std.iter().map(|s| 1.0 / s).collect();
        let mut hidden: Vec<Dense> = hidden.iter().map(DenseLayer::to_dense).collect();
        match hidden.first_mut() {
            Some(first) => first.fold_normalisation(mean, &inv_std),
            None => {
                for head in heads {
                    head.fold_normalisation(mean, &inv_std);
                }
            }
        }
        Trunk { hidden }
    }

    /// The last hidden activations for a batch, or `None` without hidden layers (the heads
    /// then read the input itself).
    pub(super) fn run(&self, x: ArrayView2<'_, f32>) -> Option<Array2<f32>> {
        let mut h: Option<Array2<f32>> = None;
        for layer in &self.hidden {
            let mut next = layer.apply(h.as_ref().map_or(x, |h| h.view()));
            next.mapv_inplace(|v| v.max(0.0));
            h = Some(next);
        }
        h
    }
}

/// A checked model ready for inference: batched forward passes with `ndarray`.
#[derive(Clone, Debug)]
pub struct Network {
    inputs: usize,
    trunk: Trunk,
    score: Dense,
    risk: Option<Dense>,
    margin: f32,
    prior: f32,
    rank_candidates: bool,
    postpone_risk: Option<f32>,
    portfolio: Option<PortfolioNetwork>,
}

impl Network {
    /// The network of a model file (checked first).
    pub fn new(model: &ModelFile) -> Result<Network, ModelError> {
        model.check()?;
        let mut score = model.score.to_dense();
        let mut risk = model.risk.as_ref().map(DenseLayer::to_dense);
        let mut heads: Vec<&mut Dense> = std::iter::once(&mut score).chain(risk.as_mut()).collect();
        let trunk = Trunk::new(&model.hidden, &model.normalisation, &mut heads);
        Ok(Network {
            inputs: model.normalisation.mean.len(),
            trunk,
            score,
            risk,
            margin: model.confidence_margin,
            prior: model.order_prior,
            rank_candidates: model.rank_candidates,
            postpone_risk: model.postpone_risk,
            portfolio: model
                .portfolio
                .as_ref()
                .map(PortfolioNetwork::new)
                .transpose()?,
        })
    }

    /// Whether the policy reorders candidates (see [`ModelFile::rank_candidates`]).
    pub fn ranks_candidates(&self) -> bool {
        self.rank_candidates
    }

    /// The risk from which candidates are postponed (see [`ModelFile::postpone_risk`]).
    pub fn postpone_risk(&self) -> Option<f32> {
        self.postpone_risk
    }

    /// The portfolio head, if the model has one.
    pub fn portfolio(&self) -> Option<&PortfolioNetwork> {
        self.portfolio.as_ref()
    }

    /// Number of input features.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// Whether the model has a risk head.
    pub fn has_risk(&self) -> bool {
        self.risk.is_some()
    }

    /// The confidence margin (see [`ModelFile::confidence_margin`]).
    pub fn margin(&self) -> f32 {
        self.margin
    }

    /// The order prior (see [`ModelFile::order_prior`]).
    pub fn order_prior(&self) -> f32 {
        self.prior
    }

    /// What the policy ranks by: the scores of a batch of candidates given in the fixed order,
    /// less the order prior times each one's position.
    pub fn ranking_scores(&self, features: ArrayView2<'_, f32>) -> Array1<f32> {
        let mut scores = self.scores(features);
        if self.prior != 0.0 {
            for (i, s) in scores.iter_mut().enumerate() {
                *s -= self.prior * i as f32;
            }
        }
        scores
    }

    /// Where the policy puts the candidates whose [`Network::ranking_scores`] are `scores`:
    /// `None` to keep the fixed order (the best-ranked candidate, the first of equals, is the
    /// fixed first choice or beats it by less than the margin), or else the positions sorted
    /// by score, equal scores in the fixed order.
    pub fn reorder(&self, scores: &[f32]) -> Option<Vec<usize>> {
        let mut order = Vec::new();
        self.reorder_into(scores, &mut order).then_some(order)
    }

    fn reorder_into(&self, scores: &[f32], order: &mut Vec<usize>) -> bool {
        if scores.len() < 2 || scores.iter().any(|s| !s.is_finite()) {
            return false;
        }
        let best = (1..scores.len()).fold(0, |b, i| if scores[i] > scores[b] { i } else { b });
        if best == 0 || scores[best] - scores[0] < self.margin {
            return false;
        }
        order.clear();
        order.extend(0..scores.len());
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        true
    }

    /// One forward pass over a batch (`rows x inputs`): the scores, and the risks (sigmoid of
    /// the risk head) when asked for and present.
    pub fn forward(
        &self,
        features: ArrayView2<'_, f32>,
        with_risk: bool,
    ) -> (Array1<f32>, Option<Array1<f32>>) {
        let h = self.trunk.run(features);
        let last = h.as_ref().map_or(features, |h| h.view());
        let scores = self.score.apply(last).remove_axis(Axis(1));
        let risks = match (&self.risk, with_risk) {
            (Some(head), true) => Some(
                head.apply(last)
                    .remove_axis(Axis(1))
                    .mapv(|z| 1.0 / (1.0 + (-z).exp())),
            ),
            _ => None,
        };
        (scores, risks)
    }

    /// The scores of a batch (see [`Network::forward`]).
    pub fn scores(&self, features: ArrayView2<'_, f32>) -> Array1<f32> {
        self.forward(features, false).0
    }
}

/// The warning printed when the learned policy falls back to the fixed one.
pub fn fallback_warning(reason: &str) -> String {
    format!("warning: learned policy: {reason}; searching with the fixed policy instead")
}

/// Prints `text` on standard error unless this process already printed it.
fn warn_once(text: &str) {
    static PRINTED: Mutex<Option<HashSet<String>>> = Mutex::new(None);
    let mut printed = PRINTED.lock().unwrap_or_else(|e| e.into_inner());
    if printed
        .get_or_insert_with(HashSet::new)
        .insert(text.to_string())
    {
        eprintln!("{text}");
    }
}

/// The learned policy: the fixed policy's static order and conflict boosting, with the node's
/// candidates reordered by the model's scores when it is confident (its best candidate is not
/// the fixed first choice and outscores it by at least the model's `confidence_margin`).
/// Without a usable model it is exactly the fixed policy.
#[derive(Clone, Debug)]
pub struct LearnedPolicy {
    fixed: FixedPolicy,
    network: Option<Arc<Network>>,
    fallback: Option<String>,
    /// Conflict notifications per buffer in the current run (the last candidate feature).
    /// The search's own count, which the solve logs record, leaves out the notifications for a
    /// buffer that no longer fits on its own, so a buffer can count a little higher here.
    conflicts: Vec<u64>,
    /// Scratch: the features of a node's candidates, row-major.
    batch: Vec<f32>,
    /// Scratch: candidate positions, sorted by score.
    order: Vec<usize>,
    /// Scratch: the reordered candidates.
    reordered: Vec<Candidate>,
    /// The lead the portfolio head gave the last problem it ranked (1 before any).
    lead: u32,
}

impl LearnedPolicy {
    /// The policy of a loaded model, or the fixed policy with the reason when there is none.
    /// `buffers` and `boost` are as for [`FixedPolicy::new`]. Does not print anything.
    pub fn new(model: Result<ModelFile, ModelError>, buffers: usize, boost: bool) -> LearnedPolicy {
        let (network, fallback) = match model.and_then(|m| Network::new(&m)) {
            Ok(net) => (Some(Arc::new(net)), None),
            Err(e) => (None, Some(e.to_string())),
        };
        LearnedPolicy {
            fixed: FixedPolicy::new(buffers, boost),
            network,
            fallback,
            conflicts: vec![0; buffers],
            batch: Vec::new(),
            order: Vec::new(),
            reordered: Vec::new(),
            lead: 1,
        }
    }

    /// The policy of `model` (see [`LearnedPolicy::new`]).
    pub fn from_model(model: ModelFile, buffers: usize, boost: bool) -> LearnedPolicy {
        LearnedPolicy::new(Ok(model), buffers, boost)
    }

    /// The policy of the model file at `path`; if it cannot be used, the fixed policy, with
    /// one warning on standard error naming the reason (once per process and reason).
    pub fn from_path(path: impl AsRef<Path>, buffers: usize, boost: bool) -> LearnedPolicy {
        let policy = LearnedPolicy::new(ModelFile::load(path.as_ref()), buffers, boost);
        if let Some(reason) = policy.fallback_reason() {
            warn_once(&fallback_warning(reason));
        }
        policy
    }

    /// Why the policy runs as the fixed policy, if it does.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The warning for the fallback, if any (what [`LearnedPolicy::from_path`] prints).
    pub fn warning(&self) -> Option<String> {
        self.fallback_reason().map(fallback_warning)
    }

    /// The network, when a model is in use.
    pub fn network(&self) -> Option<&Network> {
        self.network.as_deref()
    }

    fn conflicts_of(&self, buffer: u32) -> u64 {
        self.conflicts.get(buffer as usize).copied().unwrap_or(0)
    }

    /// Fills the scratch batch with the features of `candidates`.
    fn fill_batch(&mut self, view: &NodeView<'_>, candidates: &[Candidate]) {
        let width = CANDIDATE_FEATURES.len();
        self.batch.clear();
        self.batch.reserve(candidates.len() * width);
        for c in candidates {
            let f = candidate_features(
                view.model,
                view.state,
                c,
                view.unplaced,
                self.conflicts_of(c.buffer),
            );
            self.batch.extend_from_slice(&f);
        }
    }

    /// The features the policy computes for `candidates` at the node of `view`, row-major (one
    /// row of [`CANDIDATE_FEATURES`] per candidate), as the model sees them.
    pub fn features(&mut self, view: &NodeView<'_>, candidates: &[Candidate]) -> &[f32] {
        self.fill_batch(view, candidates);
        &self.batch
    }

    /// The model's scores of `candidates` at the node of `view`, one batched forward pass;
    /// `None` without a model.
    pub fn score_candidates(
        &mut self,
        view: &NodeView<'_>,
        candidates: &[Candidate],
    ) -> Option<Array1<f32>> {
        self.forward(view, candidates, Network::scores)
    }

    /// What the policy ranks `candidates` (given in the fixed order) by: the scores less the
    /// order prior (see [`Network::ranking_scores`]); `None` without a model.
    pub fn ranking_scores(
        &mut self,
        view: &NodeView<'_>,
        candidates: &[Candidate],
    ) -> Option<Array1<f32>> {
        self.forward(view, candidates, Network::ranking_scores)
    }

    /// Fills the batch with the candidates' features and applies `head` of the network to it;
    /// `None` without a model.
    fn forward(
        &mut self,
        view: &NodeView<'_>,
        candidates: &[Candidate],
        head: impl Fn(&Network, ArrayView2<'_, f32>) -> Array1<f32>,
    ) -> Option<Array1<f32>> {
        let network = self.network.clone()?;
        self.fill_batch(view, candidates);
        let batch = ArrayView2::from_shape((candidates.len(), network.inputs()), &self.batch)
            .expect("one row per candidate");
        Some(head(&network, batch))
    }
    /// Reorders `candidates` by the score head where the model is confident.
    fn rerank(&mut self, view: &NodeView<'_>, candidates: &mut [Candidate], network: &Network) {
        let Some(scores) = self.ranking_scores(view, candidates) else {
            return;
        };
        let scores = scores.as_slice().expect("a fresh, contiguous array");
        if !network.reorder_into(scores, &mut self.order) {
            return; // Not confident: keep the fixed order.
        }
        self.reordered.clear();
        self.reordered
            .extend(self.order.iter().map(|&i| candidates[i]));
        candidates.copy_from_slice(&self.reordered);
    }

    /// Moves the candidates whose estimated risk is at least `threshold` after the others,
    /// keeping the order within each group (one batched pass of the risk head).
    fn postpone_risky(
        &mut self,
        view: &NodeView<'_>,
        candidates: &mut [Candidate],
        network: &Network,
        threshold: f32,
    ) {
        self.fill_batch(view, candidates);
        let batch = ArrayView2::from_shape((candidates.len(), network.inputs()), &self.batch)
            .expect("one row per candidate");
        let Some(risks) = network.forward(batch, true).1 else {
            return;
        };
        let risky = |i: usize| risks[i].is_nan() || risks[i] >= threshold;
        if (0..candidates.len()).all(|i| !risky(i)) {
            return;
        }
        self.reordered.clear();
        self.reordered.extend(
            (0..candidates.len())
                .filter(|&i| !risky(i))
                .chain((0..candidates.len()).filter(|&i| risky(i)))
                .map(|i| candidates[i]),
        );
        candidates.copy_from_slice(&self.reordered);
    }
}

impl Policy for LearnedPolicy {
    fn name(&self) -> String {
        "learned".into()
    }

    fn preorder(&mut self, view: &NodeView<'_>, buffers: &mut [u32]) {
        if view.depth == 0 {
            // A run starts (or, under major backtracking, re-explores from its root): the
            // search counts conflicts per run, and so do the features it was trained on.
            for &b in buffers.iter() {
                if let Some(count) = self.conflicts.get_mut(b as usize) {
                    *count = 0;
                }
            }
        }
        self.fixed.preorder(view, buffers);
    }

    fn order_candidates(&mut self, view: &NodeView<'_>, candidates: &mut [Candidate]) {
        self.fixed.order_candidates(view, candidates);
        // Most nodes end here: no model, one candidate, or a model that leaves the order alone.
        let acts = |n: &Network| n.ranks_candidates() || n.postpone_risk().is_some();
        if candidates.len() < 2 || !self.network.as_deref().is_some_and(acts) {
            return;
        }
        let network = self.network.clone().expect("checked above");
        if network.ranks_candidates() {
            self.rerank(view, candidates, &network);
        }
        if let Some(threshold) = network.postpone_risk() {
            self.postpone_risky(view, candidates, &network, threshold);
        }
    }

    fn risk(&mut self, view: &NodeView<'_>, candidate: &Candidate) -> Option<f32> {
        let network = self.network.clone()?;
        if !network.has_risk() {
            return None;
        }
        self.fill_batch(view, std::slice::from_ref(candidate));
        let batch = ArrayView2::from_shape((1, network.inputs()), &self.batch).expect("one row");
        network.forward(batch, true).1.map(|r| r[0])
    }

    fn rank_portfolio(&mut self, view: &NodeView<'_>, names: &[String]) -> Option<Vec<usize>> {
        let network = self.network.clone()?;
        let portfolio = network.portfolio()?;
        let (ranked, lead) = portfolio.rank(view.model);
        self.lead = lead;
        // The head calls this policy's own slot `fixed`.
        let me = self.name();
        let slot = |strategy: &str| {
            names
                .iter()
                .position(|n| n == strategy || (strategy == "fixed" && *n == me))
        };
        let mut order: Vec<usize> = ranked
            .into_iter()
            .filter_map(|i| slot(&portfolio.strategies()[i]))
            .collect();
        let missing: Vec<usize> = (0..names.len()).filter(|i| !order.contains(i)).collect();
        order.extend(missing);
        Some(order)
    }

    fn portfolio_strategies(&self) -> Vec<String> {
        self.network
            .as_ref()
            .and_then(|n| n.portfolio())
            .map_or_else(Vec::new, |p| p.strategies().to_vec())
    }

    fn portfolio_lead(&self) -> u32 {
        self.lead
    }

    fn on_conflict(&mut self, buffers: &[u32]) {
        self.fixed.on_conflict(buffers);
        for &b in buffers {
            let b = b as usize;
            if b >= self.conflicts.len() {
                self.conflicts.resize(b + 1, 0);
            }
            self.conflicts[b] += 1;
        }
    }

    fn boxed_clone(&self) -> Box<dyn Policy> {
        Box::new(self.clone())
    }
}
