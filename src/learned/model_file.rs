//! The model file: the JSON format a trained policy is stored in (written by the `training/`
//! crate, read here), and the checks that make a file a usable network before any inference.

use crate::search::features::{
    CANDIDATE_FEATURES, FEATURE_SCHEMA_VERSION, PROBLEM_FEATURES, PROBLEM_FEATURE_SCHEMA_VERSION,
};
use crate::search::{parse_policy_name, PolicyName};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Name of the model-file format, in every model file.
pub const MODEL_FORMAT: &str = "telamalloc-policy-model";
/// Version of the model-file format; bumped whenever a field changes meaning.
pub const MODEL_FORMAT_VERSION: u32 = 1;
/// Where the shipped model lives in the repository, relative to its root. Its bytes are compiled
/// into the library as [`BUILT_IN_MODEL`], which `--policy learned` uses from any directory; the
/// file itself is read only when named (`--policy models/policy.json`).
pub const DEFAULT_MODEL_PATH: &str = "models/policy.json";

/// The shipped model's JSON: the bytes of [`DEFAULT_MODEL_PATH`] when this crate was built (cargo
/// rebuilds the crate when the file changes; a test checks the two are equal).
///
/// ```
/// use telamalloc::learned::{ModelFile, BUILT_IN_MODEL};
/// let model = ModelFile::built_in().unwrap();
/// assert_eq!(model, ModelFile::from_json(BUILT_IN_MODEL).unwrap());
/// ```
pub const BUILT_IN_MODEL: &str = include_str!("../../models/policy.json");

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
    /// With a risk head: the search backjumps by it (switch `learned-backjump`, on by default):
    /// major backtracks are on, and each goes back to the earliest placement behind the last
    /// conflict whose risk, estimated when it was made, is at least this; if none is, to the
    /// riskiest one (0: always the earliest, the hand-made rule). `None`: no learned backjumps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backjump_risk: Option<f32>,
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
            backjump_risk: None,
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

    /// The shipped model ([`BUILT_IN_MODEL`]), checked against this build's feature layout.
    pub fn built_in() -> Result<ModelFile, ModelError> {
        ModelFile::from_json(BUILT_IN_MODEL).map_err(|e| match e {
            ModelError::Invalid(why) => {
                ModelError::Invalid(format!("the built-in {DEFAULT_MODEL_PATH}: {why}"))
            }
            other => other,
        })
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
        if let Some(threshold) = self.backjump_risk {
            if self.risk.is_none() || !(0.0..=1.0).contains(&threshold) {
                return malformed(format!(
                    "backjump_risk {threshold} needs a risk head and a value in [0, 1]"
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
    pub(crate) fn check(&self, n: usize, name: &str) -> Result<(), ModelError> {
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

/// Checks the `format` and `version` of one of the small compiled-in model files (the CP-SAT
/// gate, the hole-shape model) against what this build reads, `expected`; `kind` names the file
/// in the version message.
pub(crate) fn check_format(
    (format, version): (&str, u32),
    expected: (&str, u32),
    kind: &str,
) -> Result<(), ModelError> {
    if format != expected.0 {
        let why = format!("format is '{format}', not '{}'", expected.0);
        return Err(ModelError::Invalid(why));
    }
    if version != expected.1 {
        return Err(ModelError::Invalid(format!(
            "{kind} format version {version} (this build reads {})",
            expected.1
        )));
    }
    Ok(())
}

/// Checks that a small model file was trained on this build's feature layout: schema version
/// `expected.0` and feature names `expected.1`, in order; `kind` names the features in the
/// message.
pub(crate) fn check_feature_layout(
    (schema, features): (u32, &[String]),
    expected: (u32, &[&str]),
    kind: &str,
) -> Result<(), ModelError> {
    if schema != expected.0
        || features
            .iter()
            .map(String::as_str)
            .ne(expected.1.iter().copied())
    {
        let why = format!("trained on other {kind} features than this build's");
        return Err(ModelError::SchemaMismatch(why));
    }
    Ok(())
}

/// Checks that `hidden` chains from `inputs` features; returns the last width. Layer names are
/// prefixed with `name`.
pub(crate) fn check_hidden(
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
    pub(crate) fn check(&self, name: &str, inputs: usize) -> Result<(), ModelError> {
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
}

/// The most runs a strategy may make per round (its weight; the others make at least one).
pub const MAX_LEAD: u32 = 64;

/// A per-problem strategy ranker, as stored in a model file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PortfolioHead {
    /// The [`PROBLEM_FEATURE_SCHEMA_VERSION`] it was trained on; it must equal the reader's.
    pub feature_schema_version: u32,
    /// The input feature names; they must equal [`PROBLEM_FEATURES`].
    pub features: Vec<String>,
    /// The strategies it ranks, as policy names (`fixed`, order words, order words with `+`),
    /// in the order of the output layer. `fixed` stands for the learned policy itself.
    pub strategies: Vec<String>,
    /// Input normalisation: `x' = (x - mean) / std`.
    pub normalisation: Normalisation,
    /// Hidden layers, each followed by a ReLU.
    pub hidden: Vec<DenseLayer>,
    /// The output layer: one score per strategy.
    pub output: DenseLayer,
    /// Runs per round of the first-ranked strategy (1 to [`MAX_LEAD`]; the others make one);
    /// with `confidence_lead`, the most it may get.
    pub lead: u32,
    /// Scale the lead per problem by the head's confidence: the softmax probability of the
    /// first choice over that of the second, rounded, between 1 and `lead`.
    #[serde(default)]
    pub confidence_lead: bool,
    /// Budget shares for every strategy instead of one lead: when present, `lead` and
    /// `confidence_lead` are not used (see [`ShareSchedule`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shares: Option<ShareSchedule>,
}

/// How a portfolio head's scores become every strategy's share of each restart round (its
/// weight: how many runs of its own restart schedule it makes per round):
/// `p = softmax(scores / temperature)`, each share `max(p, floor)`, and each strategy's weight
/// its share over the smallest share, rounded, between 1 and [`MAX_LEAD`]. The floor bounds the
/// regret: a strategy never gets less than about `floor` of the nodes, so a wrong first choice
/// costs at most about `1 / floor` times running the right strategy alone.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShareSchedule {
    /// Softmax temperature over the head's scores (above 0; higher: flatter shares).
    pub temperature: f32,
    /// The least share a strategy gets (above 0, at most 1).
    pub floor: f32,
}

impl ShareSchedule {
    /// Each strategy's budget weight (1 to [`MAX_LEAD`]) from the head's scores, in score order;
    /// non-finite scores get the floor.
    pub fn weights(&self, scores: &[f32]) -> Vec<u32> {
        let scaled: Vec<f64> = scores
            .iter()
            .map(|&s| f64::from(s) / f64::from(self.temperature))
            .map(|s| if s.is_finite() { s } else { f64::NEG_INFINITY })
            .collect();
        let top = scaled.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let floor = f64::from(self.floor);
        let shares: Vec<f64> = if top.is_finite() {
            let exp: Vec<f64> = scaled.iter().map(|&s| (s - top).exp()).collect();
            let total: f64 = exp.iter().sum();
            exp.iter().map(|&e| (e / total).max(floor)).collect()
        } else {
            vec![floor; scores.len()]
        };
        let least = shares.iter().copied().fold(f64::INFINITY, f64::min);
        shares
            .iter()
            .map(|&share| (share / least).round().clamp(1.0, f64::from(MAX_LEAD)) as u32)
            .collect()
    }

    fn check(&self) -> Result<(), String> {
        if !(self.temperature.is_finite() && self.temperature > 0.0) {
            return Err(format!(
                "share temperature {} is not a positive number",
                self.temperature
            ));
        }
        if !(self.floor > 0.0 && self.floor <= 1.0) {
            return Err(format!("share floor {} is not within (0, 1]", self.floor));
        }
        Ok(())
    }
}

impl PortfolioHead {
    /// Checks the feature layout against this build's and that the numbers make a network.
    pub fn check(&self) -> Result<(), ModelError> {
        if self.feature_schema_version != PROBLEM_FEATURE_SCHEMA_VERSION
            || self.features.len() != PROBLEM_FEATURES.len()
            || self
                .features
                .iter()
                .zip(PROBLEM_FEATURES)
                .any(|(a, b)| a != b)
        {
            return Err(ModelError::SchemaMismatch(format!(
                "the portfolio head was trained on problem-feature schema {} ({} features), this \
                 build computes schema {} ({} features)",
                self.feature_schema_version,
                self.features.len(),
                PROBLEM_FEATURE_SCHEMA_VERSION,
                PROBLEM_FEATURES.len()
            )));
        }
        let malformed = |why: String| Err(ModelError::Malformed(format!("portfolio head: {why}")));
        self.normalisation
            .check(self.features.len(), "portfolio head: ")?;
        if self.strategies.is_empty() {
            return malformed("no strategies".into());
        }
        for (i, name) in self.strategies.iter().enumerate() {
            if !is_strategy_name(name) {
                return malformed(format!(
                    "'{name}' is not a strategy (fixed or an order word)"
                ));
            }
            if self.strategies[..i].contains(name) {
                return malformed(format!("strategy '{name}' is listed twice"));
            }
        }
        if !(1..=MAX_LEAD).contains(&self.lead) {
            return malformed(format!("lead {} is not within 1 to {MAX_LEAD}", self.lead));
        }
        if let Some(shares) = &self.shares {
            shares.check().or_else(malformed)?;
        }
        let width = check_hidden(&self.hidden, self.features.len(), "portfolio ")?;
        self.output.check("portfolio output", width)?;
        if self.output.outputs != self.strategies.len() {
            return malformed(format!(
                "{} outputs for {} strategies",
                self.output.outputs,
                self.strategies.len()
            ));
        }
        Ok(())
    }

    /// Number of trainable numbers.
    pub fn parameters(&self) -> usize {
        self.hidden
            .iter()
            .chain(std::iter::once(&self.output))
            .map(|l| l.weights.len() + l.bias.len())
            .sum()
    }
}

/// Whether `name` is a strategy a portfolio head may rank: `fixed`, an order word over `W`, `A`,
/// `T`, `Z`, or such a word followed by `+` (with conflict boosting) and/or `~` (diversified
/// restarts).
pub fn is_strategy_name(name: &str) -> bool {
    name == "fixed" || matches!(parse_policy_name(name), Some(PolicyName::Order { .. }))
}
