//! Inference with `ndarray`: a checked model file becomes a [`Network`] (the candidate score and
//! risk heads) and, when it has one, a [`PortfolioNetwork`] (the per-problem strategy head). The
//! input normalisation is folded into the first layer; batches are one matrix product per layer.

use super::model_file::{
    DenseLayer, ModelError, ModelFile, Normalisation, PortfolioHead, ShareSchedule,
};
use crate::search::{PlacementRisk, SearchOptions, CANDIDATE_FEATURES};
use ndarray::{Array1, Array2, ArrayView2, Axis};
use std::sync::{Arc, OnceLock};

impl DenseLayer {
    fn to_dense(&self) -> Dense {
        Dense {
            w: Array2::from_shape_vec((self.inputs, self.outputs), self.weights.clone())
                .expect("shape checked"),
            b: Array1::from_vec(self.bias.clone()),
        }
    }
}

/// A dense layer ready for inference.
#[derive(Clone, Debug)]
struct Dense {
    w: Array2<f32>,
    b: Array1<f32>,
}

impl Dense {
    fn apply(&self, x: ArrayView2<'_, f32>) -> Array2<f32> {
        let mut y = x.dot(&self.w);
        y += &self.b;
        y
    }

    /// `x W + b` for one row, into `out`.
    fn apply_row(&self, x: &[f32], out: &mut Vec<f32>) {
        out.clear();
        out.extend(self.b.iter());
        for (&xi, row) in x.iter().zip(self.w.rows()) {
            for (o, &w) in out.iter_mut().zip(row) {
                *o += xi * w;
            }
        }
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
struct Trunk {
    hidden: Vec<Dense>,
}

impl Trunk {
    /// The trunk of checked `hidden` layers; folds `normalisation` into its first layer or,
    /// without hidden layers, into each of `heads`.
    fn new(
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
    fn run(&self, x: ArrayView2<'_, f32>) -> Option<Array2<f32>> {
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
    backjump_risk: Option<f32>,
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
            backjump_risk: model.backjump_risk,
            portfolio: model
                .portfolio
                .as_ref()
                .map(PortfolioNetwork::new)
                .transpose()?,
        })
    }

    /// The network of the built-in model ([`ModelFile::built_in`]): parsed and built once per
    /// process, then shared.
    pub fn built_in() -> Result<Arc<Network>, ModelError> {
        Network::built_in_shared().clone()
    }

    /// The process's one built network of the built-in model (or why there is none).
    fn built_in_shared() -> &'static Result<Arc<Network>, ModelError> {
        static BUILT_IN: OnceLock<Result<Arc<Network>, ModelError>> = OnceLock::new();
        BUILT_IN.get_or_init(|| {
            ModelFile::built_in()
                .and_then(|m| Network::new(&m))
                .map(Arc::new)
        })
    }

    /// Whether the policy reorders candidates (see [`ModelFile::rank_candidates`]).
    pub(crate) fn ranks_candidates(&self) -> bool {
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

    pub(crate) fn reorder_into(&self, scores: &[f32], order: &mut Vec<usize>) -> bool {
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

    /// The risk head's estimate for one row of features, without building a batch (what the
    /// search asks at every placement with `learned-backjump`); `None` without a risk head.
    pub fn risk_of_row(&self, features: &[f32]) -> Option<f32> {
        let head = self.risk.as_ref()?;
        let (mut x, mut y) = (features.to_vec(), Vec::new());
        for layer in &self.trunk.hidden {
            layer.apply_row(&x, &mut y);
            y.iter_mut().for_each(|v| *v = v.max(0.0));
            std::mem::swap(&mut x, &mut y);
        }
        head.apply_row(&x, &mut y);
        Some(1.0 / (1.0 + (-y[0]).exp()))
    }

    /// The scores of a batch (see [`Network::forward`]).
    pub fn scores(&self, features: ArrayView2<'_, f32>) -> Array1<f32> {
        self.forward(features, false).0
    }
}

/// A checked portfolio head ready for inference.
#[derive(Clone, Debug)]
pub struct PortfolioNetwork {
    strategies: Vec<String>,
    trunk: Trunk,
    output: Dense,
    lead: u32,
    confidence_lead: bool,
    shares: Option<ShareSchedule>,
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
            shares: head.shares,
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

    /// One score per strategy for a problem with these features (see
    /// [`PROBLEM_FEATURES`](crate::search::PROBLEM_FEATURES)).
    pub fn scores(&self, features: &[f32]) -> Vec<f32> {
        let x = ArrayView2::from_shape((1, features.len()), features).expect("one row");
        let h = self.trunk.run(x);
        let last = h.as_ref().map_or(x, |h| h.view());
        self.output.apply(last).remove_axis(Axis(0)).to_vec()
    }

    /// The strategies' indices from most to least promising for a problem with these
    /// [`PROBLEM_FEATURES`](crate::search::PROBLEM_FEATURES) (equal or non-finite
    /// scores keep the stored order), and each one's budget weight in that order: from the
    /// head's [`ShareSchedule`] when it has one (the order is then by weight first), else the
    /// first one's lead and 1 for the others.
    pub fn rank(&self, features: &[f32]) -> (Vec<usize>, Vec<u32>) {
        let scores: Vec<f32> = self
            .scores(features)
            .into_iter()
            .map(|s| if s.is_finite() { s } else { f32::NEG_INFINITY })
            .collect();
        let mut order: Vec<usize> = (0..scores.len()).collect();
        order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
        if let Some(shares) = &self.shares {
            let weights = shares.weights(&scores);
            // Stable: equal weights keep the score order.
            order.sort_by(|&a, &b| weights[b].cmp(&weights[a]));
            let in_order = order.iter().map(|&i| weights[i]).collect();
            return (order, in_order);
        }
        let lead = self.lead_for(&scores, &order);
        let in_order = (0..order.len())
            .map(|i| if i == 0 { lead } else { 1 })
            .collect();
        (order, in_order)
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

impl PlacementRisk for Network {
    /// The risk head's estimate; 0 (no risk) without a risk head.
    fn risk(&self, features: &[f32; CANDIDATE_FEATURES.len()]) -> f32 {
        self.risk_of_row(features).unwrap_or(0.0)
    }

    fn threshold(&self) -> f32 {
        self.backjump_risk.unwrap_or(0.0)
    }
}

/// The risk head that steers major backtracks (switch `learned-backjump`): that of `model` (the
/// policy's, else the built-in one) when the model sets `backjump_risk`.
pub(crate) fn placement_risk(
    options: &SearchOptions,
    model: Option<&Arc<Network>>,
) -> Option<Arc<dyn PlacementRisk + Send>> {
    if !options.learned_backjump {
        return None;
    }
    let network = match model {
        Some(network) => network.clone(),
        None => Network::built_in_shared().clone().ok()?,
    };
    (network.has_risk() && network.backjump_risk.is_some())
        .then_some(network as Arc<dyn PlacementRisk + Send>)
}
