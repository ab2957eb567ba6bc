//! The CP-SAT gate: from a whole problem's features, a logistic model gives the probability that
//! CP-SAT decides the problem sooner than the search's round robin, and that sets CP-SAT's share
//! of the work when it runs beside the search (`--with cpsat`, switch `cpsat-gate`).
//!
//! The share is `low * (high / low)^p`: a problem the gate is sure about gives CP-SAT `high`
//! policies' worth of the work (or `low` when it is sure CP-SAT loses), an undecided one (`p =
//! 1/2`) their geometric mean. Every share is above zero, so a wrong guess costs a bounded factor
//! and the search stays complete. Trained offline (`telamalloc-train cpsat-gate`, burn) on races of
//! CP-SAT and the round robin; the shipped gate (`models/cpsat_gate.json`) is compiled in.

use super::model_file::{check_feature_layout, check_format, ModelError, Normalisation};
use crate::search::features::{PROBLEM_FEATURES, PROBLEM_FEATURE_SCHEMA_VERSION};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// The `format` field of a gate file.
pub const GATE_FORMAT: &str = "telamalloc-cpsat-gate";

/// The version of the gate file format this build reads and writes.
pub const GATE_FORMAT_VERSION: u32 = 1;

/// The shipped gate (`models/cpsat_gate.json`), compiled into the binary.
pub const BUILT_IN_GATE: &str = include_str!("../../models/cpsat_gate.json");

/// A trained CP-SAT gate, as stored in its JSON file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CpSatGate {
    /// Always [`GATE_FORMAT`].
    pub format: String,
    /// [`GATE_FORMAT_VERSION`] when written.
    pub version: u32,
    /// The problem-feature layout it was trained on ([`PROBLEM_FEATURE_SCHEMA_VERSION`]).
    pub feature_schema: u32,
    /// The feature names, in order (must equal [`PROBLEM_FEATURES`]).
    pub features: Vec<String>,
    /// Mean and standard deviation of each feature over the training problems (stored as the
    /// file's top-level `mean` and `std`).
    #[serde(flatten)]
    pub normalisation: Normalisation,
    /// One weight per normalised feature.
    pub weights: Vec<f32>,
    /// The logit's constant term.
    pub bias: f32,
    /// CP-SAT's share, in policies, when the gate is sure CP-SAT loses (`p = 0`).
    pub low_share: f64,
    /// CP-SAT's share, in policies, when the gate is sure CP-SAT wins (`p = 1`).
    pub high_share: f64,
    /// How it was trained and how it scored (free-form figures for the model card).
    #[serde(default)]
    pub training: serde_json::Value,
}

impl CpSatGate {
    /// Reads and checks a gate from its JSON text.
    pub fn from_json(text: &str) -> Result<CpSatGate, ModelError> {
        let gate: CpSatGate =
            serde_json::from_str(text).map_err(|e| ModelError::Invalid(e.to_string()))?;
        gate.check()?;
        Ok(gate)
    }

    /// The shipped gate, parsed once.
    pub fn built_in() -> &'static CpSatGate {
        static GATE: OnceLock<CpSatGate> = OnceLock::new();
        GATE.get_or_init(|| {
            CpSatGate::from_json(BUILT_IN_GATE)
                .expect("the compiled-in CP-SAT gate is checked by a test")
        })
    }

    /// Checks the format, the feature layout, the shapes and that every number is usable.
    pub fn check(&self) -> Result<(), ModelError> {
        let bad = |what: String| Err(ModelError::Malformed(what));
        check_format(
            (&self.format, self.version),
            (GATE_FORMAT, GATE_FORMAT_VERSION),
            "gate",
        )?;
        check_feature_layout(
            (self.feature_schema, &self.features),
            (PROBLEM_FEATURE_SCHEMA_VERSION, &PROBLEM_FEATURES),
            "problem",
        )?;
        let width = PROBLEM_FEATURES.len();
        self.normalisation.check(width, "")?;
        if self.weights.len() != width {
            return bad(format!("{} weights, not {width}", self.weights.len()));
        }
        if self.weights.iter().any(|v| !v.is_finite()) {
            return bad("a weight is not finite".to_string());
        }
        if !self.bias.is_finite() {
            return bad("the bias is not finite".to_string());
        }
        let shares_ok = self.low_share.is_finite()
            && self.high_share.is_finite()
            && self.low_share > 0.0
            && self.low_share <= self.high_share;
        if !shares_ok {
            return bad(format!(
                "shares {} and {} are not 0 < low <= high",
                self.low_share, self.high_share
            ));
        }
        Ok(())
    }

    /// The probability that CP-SAT decides the problem of `features` sooner than the search.
    pub fn probability(&self, features: &[f32]) -> f64 {
        let logit = features
            .iter()
            .zip(&self.normalisation.mean)
            .zip(&self.normalisation.std)
            .zip(&self.weights)
            .fold(f64::from(self.bias), |sum, (((&x, &m), &s), &w)| {
                sum + f64::from(w) * f64::from((x - m) / s)
            });
        1.0 / (1.0 + (-logit).exp())
    }

    /// CP-SAT's share of the work, in policies, on the problem of `features`.
    pub fn share(&self, features: &[f32]) -> f64 {
        let p = self.probability(features);
        self.low_share * (self.high_share / self.low_share).powf(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_gate_is_valid() {
        let gate = CpSatGate::from_json(BUILT_IN_GATE).expect("valid");
        let features = [0.5f32; 13];
        let share = gate.share(&features);
        assert!(share >= gate.low_share && share <= gate.high_share);
    }

    #[test]
    fn the_share_moves_from_low_to_high_with_the_probability() {
        let mut gate = CpSatGate::from_json(BUILT_IN_GATE).expect("valid");
        gate.normalisation.mean = vec![0.0; 13];
        gate.normalisation.std = vec![1.0; 13];
        gate.weights = vec![0.0; 13];
        gate.weights[0] = 1.0;
        gate.bias = 0.0;
        gate.low_share = 0.25;
        gate.high_share = 4.0;
        let mut features = [0.0f32; 13];
        assert!(
            (gate.share(&features) - 1.0).abs() < 1e-9,
            "p = 1/2: the geometric mean"
        );
        features[0] = 30.0;
        assert!((gate.share(&features) - 4.0).abs() < 1e-6);
        features[0] = -30.0;
        assert!((gate.share(&features) - 0.25).abs() < 1e-6);
    }

    #[test]
    fn a_gate_that_cannot_be_used_is_refused() {
        let gate = CpSatGate::from_json(BUILT_IN_GATE).expect("valid");
        let text = |g: &CpSatGate| serde_json::to_string(g).expect("plain data");
        let mut short = gate.clone();
        short.weights.pop();
        assert!(CpSatGate::from_json(&text(&short)).is_err());
        let mut zero = gate.clone();
        zero.low_share = 0.0;
        assert!(CpSatGate::from_json(&text(&zero)).is_err());
        let mut other = gate.clone();
        other.features[0] = "something else".to_string();
        assert!(CpSatGate::from_json(&text(&other)).is_err());
        let mut nan = gate;
        nan.normalisation.std[2] = f32::NAN;
        assert!(CpSatGate::from_json(&text(&nan)).is_err());
        assert!(CpSatGate::from_json("{").is_err());
    }
}
