//! The portfolio head of a learned model: from a whole problem's features
//! ([`PROBLEM_FEATURES`]), a score per strategy of the portfolio (a policy name such as `fixed`,
//! `TWA` or `TWA+`), larger = run first. The search runs the strategies round robin in that
//! order and gives the first one `lead` times the node budget of the others each round, so a
//! right guess costs little more than running that strategy alone, and a wrong one still ends in
//! the round robin (the search stays complete).

use super::features::{problem_features, PROBLEM_FEATURES, PROBLEM_FEATURE_SCHEMA_VERSION};
use super::learned::{check_hidden, Dense, DenseLayer, ModelError, Normalisation, Trunk};
use super::model::Model;
use ndarray::{ArrayView2, Axis};
use serde::{Deserialize, Serialize};

/// The most budget the first-ranked strategy may get per round, relative to the others.
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
    /// Budget multiplier of the first-ranked strategy in each round (1 to [`MAX_LEAD`]); with
    /// `confidence_lead`, the most it may get.
    pub lead: u32,
    /// Scale the lead per problem by the head's confidence: the softmax probability of the
    /// first choice over that of the second, rounded, between 1 and `lead`.
    #[serde(default)]
    pub confidence_lead: bool,
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
/// `T`, `Z`, or such a word followed by `+` (with conflict boosting).
pub fn is_strategy_name(name: &str) -> bool {
    let word = name.strip_suffix('+').unwrap_or(name);
    name == "fixed" || super::policy::parse_order(word).is_some()
}

/// A checked portfolio head ready for inference.
#[derive(Clone, Debug)]
pub struct PortfolioNetwork {
    strategies: Vec<String>,
    trunk: Trunk,
    output: Dense,
    lead: u32,
    confidence_lead: bool,
}

impl PortfolioNetwork {
    /// The network of a head (checked first).
    pub fn new(head: &PortfolioHead) -> Result<PortfolioNetwork, ModelError> {
        head.check()?;
        let mut output = head.output.to_dense();
        let trunk = Trunk::new(&head.hidden, &head.normalisation, &mut [&mut output]);
        Ok(PortfolioNetwork {
            strategies: head.strategies.clone(),
            trunk,
            output,
            lead: head.lead,
            confidence_lead: head.confidence_lead,
        })
    }

    /// The strategies, in output order.
    pub fn strategies(&self) -> &[String] {
        &self.strategies
    }

    /// The (largest) budget multiplier of the first-ranked strategy.
    pub fn lead(&self) -> u32 {
        self.lead
    }

    /// One score per strategy for a problem with these [`PROBLEM_FEATURES`].
    pub fn scores(&self, features: &[f32]) -> Vec<f32> {
        let x = ArrayView2::from_shape((1, features.len()), features).expect("one row");
        let h = self.trunk.run(x);
        let last = h.as_ref().map_or(x, |h| h.view());
        self.output.apply(last).remove_axis(Axis(0)).to_vec()
    }

    /// The strategies' indices from most to least promising for `model`'s problem (equal or
    /// non-finite scores keep the stored order), and the first one's lead for this problem.
    pub fn rank(&self, model: &Model) -> (Vec<usize>, u32) {
        let scores: Vec<f32> = self
            .scores(&problem_features(model))
            .into_iter()
            .map(|s| if s.is_finite() { s } else { f32::NEG_INFINITY })
            .collect();
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        (order.clone(), self.lead_for(&scores, &order))
    }

    fn lead_for(&self, scores: &[f32], order: &[usize]) -> u32 {
        if !self.confidence_lead {
            return self.lead;
        }
        let [first, second, ..] = order else {
            return self.lead;
        };
        // Softmax ratio p(first) / p(second) = exp(score difference).
        let ratio = f64::from(scores[*first] - scores[*second]).exp();
        if !ratio.is_finite() {
            return self.lead;
        }
        (ratio.round() as u32).clamp(1, self.lead)
    }
}
