//! The hole-shape model: a linear score over the features of each way a step of a slack profile
//! can go (the search's private `slack::walk` module), which the slack-filling lottery turns into
//! the probability of that move (switch `learned-holes`). Trained offline (`telamalloc-train
//! hole-shapes`, burn) on the removed pieces of the training split's slack packings; the
//! shipped model (`models/hole_shapes.json`) is compiled in.

use super::model_file::{check_feature_layout, check_format, ModelError};
use crate::search::slack::walk::{HOLE_FEATURES, HOLE_FEATURE_SCHEMA_VERSION};
use crate::search::SearchOptions;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The `format` field of a hole-shape model file.
pub const HOLE_MODEL_FORMAT: &str = "telamalloc-hole-shapes";

/// The version of the hole-shape model file format this build reads and writes.
pub const HOLE_MODEL_FORMAT_VERSION: u32 = 1;

/// The shipped hole-shape model (`models/hole_shapes.json`), compiled into the binary.
pub const BUILT_IN_HOLE_MODEL: &str = include_str!("../../models/hole_shapes.json");

/// A trained hole-shape model, as stored in its JSON file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HoleModel {
    /// Always [`HOLE_MODEL_FORMAT`].
    pub format: String,
    /// [`HOLE_MODEL_FORMAT_VERSION`] when written.
    pub version: u32,
    /// The move-feature layout it was trained on ([`HOLE_FEATURE_SCHEMA_VERSION`]).
    pub feature_schema: u32,
    /// The feature names, in order (must equal [`HOLE_FEATURES`]).
    pub features: Vec<String>,
    /// One weight per feature: a move's score is their dot product with its features.
    pub weights: Vec<f32>,
    /// How it was trained and how it scored (free-form figures for the model card).
    #[serde(default)]
    pub training: serde_json::Value,
}

impl HoleModel {
    /// Reads and checks a model from its JSON text.
    pub fn from_json(text: &str) -> Result<HoleModel, ModelError> {
        let model: HoleModel =
            serde_json::from_str(text).map_err(|e| ModelError::Invalid(e.to_string()))?;
        model.check()?;
        Ok(model)
    }

    /// The shipped model, parsed once.
    pub fn built_in() -> &'static HoleModel {
        static MODEL: OnceLock<HoleModel> = OnceLock::new();
        MODEL.get_or_init(|| {
            HoleModel::from_json(BUILT_IN_HOLE_MODEL)
                .expect("the compiled-in hole-shape model is checked by a test")
        })
    }

    /// Checks the format, the feature layout and that every weight is finite.
    pub fn check(&self) -> Result<(), ModelError> {
        check_format(
            (&self.format, self.version),
            (HOLE_MODEL_FORMAT, HOLE_MODEL_FORMAT_VERSION),
            "hole-shape model",
        )?;
        check_feature_layout(
            (self.feature_schema, &self.features),
            (HOLE_FEATURE_SCHEMA_VERSION, &HOLE_FEATURES),
            "move",
        )?;
        if self.weights.len() != HOLE_FEATURES.len() {
            return Err(ModelError::Malformed(format!(
                "{} weights, not {}",
                self.weights.len(),
                HOLE_FEATURES.len()
            )));
        }
        if self.weights.iter().any(|w| !w.is_finite()) {
            return Err(ModelError::Malformed("a weight is not finite".to_string()));
        }
        Ok(())
    }
}

/// The compiled-in model's weights when `options` draw the slack-filling lottery's cuts with
/// it (switch `learned-holes`); None for the hand-made draws.
pub(crate) fn lottery_weights(options: &SearchOptions) -> Option<&'static [f32]> {
    options
        .learned_holes
        .then(|| HoleModel::built_in().weights.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_model_is_valid() {
        let model = HoleModel::from_json(BUILT_IN_HOLE_MODEL).expect("valid");
        assert_eq!(model.weights.len(), HOLE_FEATURES.len());
        assert!(
            model.weights.iter().any(|&w| w != 0.0),
            "trained, not zeros"
        );
    }

    #[test]
    fn a_model_that_cannot_be_used_is_refused() {
        let good = HoleModel::built_in().clone();
        let text = |m: &HoleModel| serde_json::to_string(m).expect("serialises");
        assert!(HoleModel::from_json(&text(&good)).is_ok());
        let mut other_format = good.clone();
        other_format.format = "telamalloc-policy".to_string();
        assert!(matches!(
            HoleModel::from_json(&text(&other_format)),
            Err(ModelError::Invalid(_))
        ));
        let mut other_features = good.clone();
        other_features.features.swap(0, 1);
        assert!(matches!(
            HoleModel::from_json(&text(&other_features)),
            Err(ModelError::SchemaMismatch(_))
        ));
        let mut short = good.clone();
        short.weights.pop();
        assert!(matches!(
            HoleModel::from_json(&text(&short)),
            Err(ModelError::Malformed(_))
        ));
        let mut not_finite = good;
        not_finite.weights[3] = f32::INFINITY;
        assert!(matches!(not_finite.check(), Err(ModelError::Malformed(_))));
        assert!(matches!(
            HoleModel::from_json("{"),
            Err(ModelError::Invalid(_))
        ));
    }
}
