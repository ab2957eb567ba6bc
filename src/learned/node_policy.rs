//! The learned node policy: the fixed policy's static order and conflict boosting, with a node's
//! candidates reordered by the model's score head where it is confident, and optionally the
//! risky ones postponed by its risk head.

use super::model_file::{ModelError, ModelFile};
use super::network::Network;
use crate::search::features::{candidate_features, CANDIDATE_FEATURES};
use crate::search::{Candidate, FixedPolicy, NodePolicy, NodeView};
use ndarray::{Array1, ArrayView2};
use std::path::Path;
use std::sync::Arc;

/// The warning for a learned policy that runs as the fixed policy.
pub fn fallback_warning(reason: &str) -> String {
    format!("warning: learned policy: {reason}; searching with the fixed policy instead")
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
    /// Scratch: the features of a node's candidates, row-major.
    batch: Vec<f32>,
    /// Scratch: candidate positions, sorted by score.
    order: Vec<usize>,
    /// Scratch: the reordered candidates.
    reordered: Vec<Candidate>,
}

impl LearnedPolicy {
    /// The policy of a loaded model, or the fixed policy with the reason when there is none.
    /// `buffers` and `boost` are as for [`FixedPolicy::new`]. Does not print anything.
    pub fn new(model: Result<ModelFile, ModelError>, buffers: usize, boost: bool) -> LearnedPolicy {
        let network = model.and_then(|m| Network::new(&m)).map(Arc::new);
        LearnedPolicy::with_network(network, buffers, boost)
    }

    /// The policy of an already built network (shared between policies and threads), or the
    /// fixed policy with the reason when there is none.
    pub(crate) fn with_network(
        network: Result<Arc<Network>, ModelError>,
        buffers: usize,
        boost: bool,
    ) -> LearnedPolicy {
        let (network, fallback) = match network {
            Ok(net) => (Some(net), None),
            Err(e) => (None, Some(e.to_string())),
        };
        LearnedPolicy {
            fixed: FixedPolicy::new(buffers, boost),
            network,
            fallback,
            batch: Vec::new(),
            order: Vec::new(),
            reordered: Vec::new(),
        }
    }

    /// The policy of `model` (see [`LearnedPolicy::new`]).
    pub fn from_model(model: ModelFile, buffers: usize, boost: bool) -> LearnedPolicy {
        LearnedPolicy::new(Ok(model), buffers, boost)
    }

    /// The policy of the built-in model ([`ModelFile::built_in`], what `--policy learned`
    /// runs); if this build's features differ from the model's, the fixed policy, with the reason
    /// in [`LearnedPolicy::fallback_reason`].
    pub fn built_in(buffers: usize, boost: bool) -> LearnedPolicy {
        LearnedPolicy::with_network(Network::built_in(), buffers, boost)
    }

    /// The policy of the model file at `path`, or why that file cannot be used: it is missing
    /// or unreadable, is not a model file, or holds a model this build cannot run (another
    /// feature schema, shapes that do not chain). A file that was asked for is never replaced
    /// by the fixed policy in silence; to fall back on purpose, pass
    /// [`ModelFile::load`]'s result to [`LearnedPolicy::new`] and read
    /// [`LearnedPolicy::fallback_reason`].
    pub fn from_path(
        path: impl AsRef<Path>,
        buffers: usize,
        boost: bool,
    ) -> Result<LearnedPolicy, ModelError> {
        let network = Network::new(&ModelFile::load(path.as_ref())?)?;
        Ok(LearnedPolicy::with_network(
            Ok(Arc::new(network)),
            buffers,
            boost,
        ))
    }

    /// Why the policy runs as the fixed policy, if it does.
    pub fn fallback_reason(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The warning for the fallback, if any.
    pub fn warning(&self) -> Option<String> {
        self.fallback_reason().map(fallback_warning)
    }

    /// The network, when a model is in use.
    pub fn network(&self) -> Option<&Network> {
        self.network.as_deref()
    }

    /// Fills the scratch batch with the features of `candidates`.
    fn fill_batch(&mut self, view: &NodeView<'_>, candidates: &[Candidate]) {
        let width = CANDIDATE_FEATURES.len();
        self.batch.clear();
        self.batch.reserve(candidates.len() * width);
        for c in candidates {
            let f = candidate_features(view, c);
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
        self.forward_head(view, candidates, Network::scores)
    }

    /// What the policy ranks `candidates` (given in the fixed order) by: the scores less the
    /// order prior (see [`Network::ranking_scores`]); `None` without a model.
    pub fn ranking_scores(
        &mut self,
        view: &NodeView<'_>,
        candidates: &[Candidate],
    ) -> Option<Array1<f32>> {
        self.forward_head(view, candidates, Network::ranking_scores)
    }

    /// Fills the batch with the candidates' features and applies `head` of the network to it;
    /// `None` without a model.
    fn forward_head(
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

    /// The risk head's estimate for `candidate` at the node of `view` (the probability that its
    /// subtree holds no solution); `None` without a model or a risk head.
    pub fn risk(&mut self, view: &NodeView<'_>, candidate: &Candidate) -> Option<f32> {
        let network = self.network.clone()?;
        if !network.has_risk() {
            return None;
        }
        self.fill_batch(view, std::slice::from_ref(candidate));
        let batch = ArrayView2::from_shape((1, network.inputs()), &self.batch).expect("one row");
        network.forward(batch, true).1.map(|r| r[0])
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

impl NodePolicy for LearnedPolicy {
    fn name(&self) -> String {
        "learned".into()
    }

    fn preorder(&mut self, view: &NodeView<'_>, buffers: &mut [u32]) {
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

    fn on_run_start(&mut self) {
        self.fixed.on_run_start();
    }

    fn on_conflict(&mut self, buffers: &[u32]) {
        self.fixed.on_conflict(buffers);
    }

    fn reads_conflicts(&self) -> bool {
        // The candidate features (the last one counts conflicts) are computed only when the
        // model reorders or postpones candidates.
        self.network
            .as_deref()
            .is_some_and(|n| n.ranks_candidates() || n.postpone_risk().is_some())
    }
}
