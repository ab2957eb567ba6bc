//! The restart model: from a run's progress at a checkpoint ([`RUN_FEATURES`]), the probability
//! that the run will spend its node budget without deciding; with the `learned-restarts` switch
//! the search ends such a run early when the probability reaches the model's threshold. Trained
//! offline (`telamalloc-train restarts`, burn) on the runs recorded in solve logs; the shipped
//! model (`models/restarts.json`) is compiled in.

use super::model_file::{check_feature_layout, check_format, check_hidden, DenseLayer, ModelError};
use crate::search::features::{RUN_FEATURES, RUN_FEATURE_SCHEMA_VERSION};
use crate::search::{RunJudge, SearchOptions};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The `format` field of a restart model file.
pub const RESTART_MODEL_FORMAT: &str = "telamalloc-restarts";

/// The version of the restart model file format this build reads and writes.
pub const RESTART_MODEL_FORMAT_VERSION: u32 = 1;

/// The shipped restart model (`models/restarts.json`), compiled into the binary.
pub const BUILT_IN_RESTART_MODEL: &str = include_str!("../../models/restarts.json");

/// A trained restart model, as stored in its JSON file: an MLP (ReLU between layers) whose one
/// output is the logit of the probability that the run is doomed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RestartModel {
    /// Always [`RESTART_MODEL_FORMAT`].
    pub format: String,
    /// [`RESTART_MODEL_FORMAT_VERSION`] when written.
    pub version: u32,
    /// The run-feature layout it was trained on ([`RUN_FEATURE_SCHEMA_VERSION`]).
    pub feature_schema: u32,
    /// The feature names, in order (must equal [`RUN_FEATURES`]).
    pub features: Vec<String>,
    /// The layers, input first; the last has one output.
    pub layers: Vec<DenseLayer>,
    /// A run is ended when its probability of being doomed is at least this, in (0, 1].
    pub threshold: f32,
    /// How it was trained and how it scored (free-form figures for the model card).
    #[serde(default)]
    pub training: serde_json::Value,
}

impl RestartModel {
    /// Reads and checks a model from its JSON text.
    pub fn from_json(text: &str) -> Result<RestartModel, ModelError> {
        let model: RestartModel =
            serde_json::from_str(text).map_err(|e| ModelError::Invalid(e.to_string()))?;
        model.check()?;
        Ok(model)
    }

    /// The shipped model, parsed once.
    pub fn built_in() -> &'static RestartModel {
        static MODEL: OnceLock<RestartModel> = OnceLock::new();
        MODEL.get_or_init(|| {
            RestartModel::from_json(BUILT_IN_RESTART_MODEL)
                .expect("the compiled-in restart model is checked by a test")
        })
    }

    /// Checks the format, the feature layout, the layers' shapes (one output at the end) and
    /// the threshold.
    pub fn check(&self) -> Result<(), ModelError> {
        check_format(
            (&self.format, self.version),
            (RESTART_MODEL_FORMAT, RESTART_MODEL_FORMAT_VERSION),
            "restart model",
        )?;
        check_feature_layout(
            (self.feature_schema, &self.features),
            (RUN_FEATURE_SCHEMA_VERSION, &RUN_FEATURES),
            "run",
        )?;
        if self.layers.is_empty() || check_hidden(&self.layers, RUN_FEATURES.len(), "")? != 1 {
            return Err(ModelError::Malformed(
                "the restart model needs layers ending in one output".into(),
            ));
        }
        if !(self.threshold > 0.0 && self.threshold <= 1.0) {
            return Err(ModelError::Malformed(format!(
                "threshold {} is not in (0, 1]",
                self.threshold
            )));
        }
        Ok(())
    }

    /// The probability that a run at a checkpoint with `features` is doomed.
    pub fn doomed(&self, features: &[f32; RUN_FEATURES.len()]) -> f32 {
        let mut values: Vec<f32> = features.to_vec();
        for (i, layer) in self.layers.iter().enumerate() {
            let mut next = layer.bias.clone();
            for (input, &x) in values.iter().enumerate() {
                let row = &layer.weights[input * layer.outputs..(input + 1) * layer.outputs];
                for (out, &w) in next.iter_mut().zip(row) {
                    *out += x * w;
                }
            }
            if i + 1 < self.layers.len() {
                next.iter_mut().for_each(|v| *v = v.max(0.0));
            }
            values = next;
        }
        1.0 / (1.0 + (-values[0]).exp())
    }
}

impl RunJudge for RestartModel {
    /// Whether the probability that the run is doomed reaches the threshold.
    fn ends(&self, features: &[f32; RUN_FEATURES.len()]) -> bool {
        self.doomed(features) >= self.threshold
    }
}

/// The compiled-in restart model when `options` end runs with it (switch `learned-restarts`).
pub(crate) fn run_judge(options: &SearchOptions) -> Option<&'static dyn RunJudge> {
    options
        .learned_restarts
        .then(|| RestartModel::built_in() as &dyn RunJudge)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linear(weights: &[f32], bias: f32, threshold: f32) -> RestartModel {
        RestartModel {
            format: RESTART_MODEL_FORMAT.into(),
            version: RESTART_MODEL_FORMAT_VERSION,
            feature_schema: RUN_FEATURE_SCHEMA_VERSION,
            features: RUN_FEATURES.iter().map(|s| s.to_string()).collect(),
            layers: vec![DenseLayer {
                inputs: weights.len(),
                outputs: 1,
                weights: weights.to_vec(),
                bias: vec![bias],
            }],
            threshold,
            training: serde_json::Value::Null,
        }
    }

    #[test]
    fn the_shipped_model_is_valid() {
        let model = RestartModel::from_json(BUILT_IN_RESTART_MODEL).expect("valid");
        assert_eq!(model.layers[0].inputs, RUN_FEATURES.len());
    }

    #[test]
    fn a_linear_model_is_the_sigmoid_of_its_dot_product() {
        let mut weights = [0.0f32; RUN_FEATURES.len()];
        weights[0] = 2.0;
        let model = linear(&weights, -1.0, 0.5);
        model.check().expect("valid");
        let mut features = [0.0f32; RUN_FEATURES.len()];
        features[0] = 0.5; // logit 0: probability one half, at the threshold
        assert!((model.doomed(&features) - 0.5).abs() < 1e-6);
        assert!(model.ends(&features));
        features[0] = 0.25;
        assert!((model.doomed(&features) - 1.0 / (1.0 + 0.5f32.exp())).abs() < 1e-6);
        assert!(!model.ends(&features));
    }

    #[test]
    fn a_hidden_layer_applies_relu() {
        let n = RUN_FEATURES.len();
        let mut model = linear(&vec![0.0; n], 0.0, 0.5);
        // Hidden: one unit copying -feature 0; out: that unit times 1.
        let mut hidden = vec![0.0; n];
        hidden[0] = -1.0;
        model.layers = vec![
            DenseLayer {
                inputs: n,
                outputs: 1,
                weights: hidden,
                bias: vec![0.0],
            },
            DenseLayer {
                inputs: 1,
                outputs: 1,
                weights: vec![1.0],
                bias: vec![0.0],
            },
        ];
        model.check().expect("valid");
        let mut features = [0.0f32; RUN_FEATURES.len()];
        features[0] = 3.0; // -3 cut to 0 by ReLU: probability one half
        assert!((model.doomed(&features) - 0.5).abs() < 1e-6);
        features[0] = -2.0; // 2 passes
        assert!((model.doomed(&features) - 1.0 / (1.0 + (-2.0f32).exp())).abs() < 1e-6);
    }

    #[test]
    fn a_model_that_cannot_be_used_is_refused() {
        let n = RUN_FEATURES.len();
        let good = linear(&vec![0.1; n], 0.0, 0.9);
        assert!(good.check().is_ok());
        let mut bad = good.clone();
        bad.threshold = 0.0;
        assert!(matches!(bad.check(), Err(ModelError::Malformed(_))));
        let mut bad = good.clone();
        bad.features[0] = "something else".into();
        assert!(matches!(bad.check(), Err(ModelError::SchemaMismatch(_))));
        let mut bad = good.clone();
        bad.layers[0].outputs = 2;
        bad.layers[0].weights = vec![0.0; 2 * n];
        bad.layers[0].bias = vec![0.0; 2];
        assert!(matches!(bad.check(), Err(ModelError::Malformed(_))));
        let mut bad = good;
        bad.format = "telamalloc-hole-shapes".into();
        assert!(matches!(bad.check(), Err(ModelError::Invalid(_))));
    }
}
