//! The network in burn: an MLP trunk (ReLU), a score head and a risk head, trained with a
//! listwise softmax loss over each node's candidates plus a logistic loss for the risk head.

use crate::data::{RankExample, RiskExample, WIDTH};
use burn::module::{Module, Param};
use burn::nn::Linear;
use burn::optim::{GradientsParams, ModuleOptimizer};
use burn::tensor::activation::{log_softmax, relu, softplus};
use burn::tensor::{Device, Tensor, TensorData};
use rand::rngs::StdRng;
use rand::RngExt;
use telamalloc::training::{DenseLayer, ModelFile};

/// The policy network.
#[derive(Module, Debug)]
pub struct PolicyNet {
    hidden: Vec<Linear>,
    score: Linear,
    risk: Linear,
    /// The order prior: ranking score = score - prior x position in the fixed order.
    prior: Param<Tensor<1>>,
}

/// A layer with weights drawn uniformly from `[-k, k]`, `k = sqrt(6 / (inputs + outputs))`
/// (Glorot), biases 0, from the seeded `rng`.
pub fn layer(inputs: usize, outputs: usize, rng: &mut StdRng, device: &Device) -> Linear {
    let k = (6.0 / (inputs + outputs) as f64).sqrt() as f32;
    let weights: Vec<f32> = (0..inputs * outputs)
        .map(|_| rng.random_range(-k..k))
        .collect();
    Linear {
        weight: Param::from_data(TensorData::new(weights, [inputs, outputs]), device),
        bias: Some(Param::from_data(
            TensorData::new(vec![0.0f32; outputs], [outputs]),
            device,
        )),
    }
}

impl PolicyNet {
    /// A fresh network with hidden widths `hidden`.
    pub fn new(hidden: &[usize], prior: f32, rng: &mut StdRng, device: &Device) -> PolicyNet {
        let mut width = WIDTH;
        let mut layers = Vec::new();
        for &h in hidden {
            layers.push(layer(width, h, rng, device));
            width = h;
        }
        PolicyNet {
            hidden: layers,
            score: layer(width, 1, rng, device),
            risk: layer(width, 1, rng, device),
            prior: Param::from_data(TensorData::new(vec![prior], [1]), device),
        }
    }

    /// The network of `model`'s trunk and heads (a fresh risk head from `rng` when it has
    /// none), with its trunk and risk head frozen: only the score head and the order prior train.
    pub fn frozen_trunk(model: &ModelFile, rng: &mut StdRng, device: &Device) -> PolicyNet {
        let width = model.hidden.last().map_or(WIDTH, |l| l.outputs);
        PolicyNet {
            hidden: model
                .hidden
                .iter()
                .map(|l| linear(l, device).no_grad())
                .collect(),
            score: linear(&model.score, device),
            risk: model
                .risk
                .as_ref()
                .map_or_else(|| layer(width, 1, rng, device), |l| linear(l, device))
                .no_grad(),
            prior: Param::from_data(TensorData::new(vec![model.order_prior], [1]), device),
        }
    }

    fn trunk(&self, x: Tensor<2>) -> Tensor<2> {
        self.hidden.iter().fold(x, |h, l| relu(l.forward(h)))
    }

    /// The weights as the core's layers: hidden, score head, risk head; and the order prior.
    pub fn export(&self) -> (Vec<DenseLayer>, DenseLayer, DenseLayer, f32) {
        let prior = self
            .prior
            .val()
            .into_data()
            .try_to_vec::<f32>()
            .expect("f32");
        (
            self.hidden.iter().map(dense).collect(),
            dense(&self.score),
            dense(&self.risk),
            prior[0],
        )
    }
}

/// The burn layer of a core layer (the inverse of [`dense`]).
pub fn linear(l: &DenseLayer, device: &Device) -> Linear {
    Linear {
        weight: Param::from_data(
            TensorData::new(l.weights.clone(), [l.inputs, l.outputs]),
            device,
        ),
        bias: Some(Param::from_data(
            TensorData::new(l.bias.clone(), [l.outputs]),
            device,
        )),
    }
}

/// The core layer of a burn layer.
pub fn dense(l: &Linear) -> DenseLayer {
    let [inputs, outputs] = l.weight.val().dims();
    DenseLayer {
        inputs,
        outputs,
        weights: l
            .weight
            .val()
            .into_data()
            .try_to_vec::<f32>()
            .expect("f32 weights"),
        bias: l
            .bias
            .as_ref()
            .map(|b| b.val().into_data().try_to_vec::<f32>().expect("f32 bias"))
            .unwrap_or_else(|| vec![0.0; outputs]),
    }
}

/// Mean and standard deviation (at least 1e-6) of each of the `width` columns of `rows`.
pub fn normalisation(rows: &[&[f32]], width: usize) -> (Vec<f32>, Vec<f32>) {
    let n = rows.len().max(1) as f64;
    let mut mean = vec![0f64; width];
    let mut var = vec![0f64; width];
    for row in rows {
        for (m, v) in mean.iter_mut().zip(row.iter()) {
            *m += *v as f64 / n;
        }
    }
    for row in rows {
        for ((s, v), m) in var.iter_mut().zip(row.iter()).zip(&mean) {
            *s += (*v as f64 - m).powi(2) / n;
        }
    }
    (
        mean.iter().map(|&m| m as f32).collect(),
        var.iter().map(|&v| (v.sqrt().max(1e-6)) as f32).collect(),
    )
}

/// Normalises one row of raw features into `out`.
pub fn push_normalised(out: &mut Vec<f32>, row: &[f32], mean: &[f32], std: &[f32]) {
    out.extend(
        row.iter()
            .zip(mean.iter().zip(std))
            .map(|(v, (m, s))| (v - m) / s),
    );
}

/// One optimisation step on a batch of ranking examples and a batch of risk examples; returns
/// the network and the two losses.
#[allow(clippy::too_many_arguments)]
pub fn step(
    net: PolicyNet,
    optim: &mut ModuleOptimizer,
    rank: &[&RankExample],
    risk: &[&RiskExample],
    hard_weight: f32,
    use_prior: bool,
    risk_weight: f32,
    lr: f64,
    (mean, std): (&[f32], &[f32]),
    device: &Device,
) -> (PolicyNet, f32, f32) {
    let b = rank.len();
    let c = rank.iter().map(|e| e.len()).max().unwrap_or(1);
    let mut x = Vec::with_capacity(b * c * WIDTH);
    let mut mask = vec![0f32; b * c];
    let mut target = vec![0f32; b * c];
    let mut total_weight = 0f64;
    let position: Vec<f32> = (0..b * c).map(|k| (k % c) as f32).collect();
    for (i, e) in rank.iter().enumerate() {
        for row in e.features.chunks_exact(WIDTH) {
            push_normalised(&mut x, row, mean, std);
        }
        x.resize((i + 1) * c * WIDTH, 0.0);
        for j in e.len()..c {
            mask[i * c + j] = -1e4;
        }
        let weight = if e.target == 0 { 1.0 } else { hard_weight };
        target[i * c + e.target] = weight;
        total_weight += weight as f64;
    }
    let x = Tensor::<2>::from_data(TensorData::new(x, [b * c, WIDTH]), device);
    let mask = Tensor::<2>::from_data(TensorData::new(mask, [b, c]), device);
    let target = Tensor::<2>::from_data(TensorData::new(target, [b, c]), device);
    let mut scores = net.score.forward(net.trunk(x)).reshape([b, c]) + mask;
    if use_prior {
        let position = Tensor::<2>::from_data(TensorData::new(position, [b, c]), device);
        scores = scores - position * net.prior.val().reshape([1, 1]).expand([b, c]);
    }
    let rank_loss = (log_softmax(scores, 1) * target).sum().neg() / total_weight.max(1e-9);
    let mut loss = rank_loss.clone();
    let mut risk_value = 0.0;
    if !risk.is_empty() && risk_weight > 0.0 {
        let r = risk.len();
        let mut xr = Vec::with_capacity(r * WIDTH);
        for e in risk {
            push_normalised(&mut xr, &e.features, mean, std);
        }
        let y: Vec<f32> = risk.iter().map(|e| e.failed).collect();
        let xr = Tensor::<2>::from_data(TensorData::new(xr, [r, WIDTH]), device);
        let y = Tensor::<2>::from_data(TensorData::new(y, [r, 1]), device);
        let z = net.risk.forward(net.trunk(xr));
        // Logistic loss with logits: softplus(z) - y z.
        let risk_loss = (softplus(z.clone(), 1.0) - y * z).mean();
        risk_value = risk_loss.clone().into_scalar::<f32>();
        loss = loss + risk_loss * risk_weight as f64;
    }
    let rank_value = rank_loss.into_scalar::<f32>();
    let grads = GradientsParams::from_grads(loss.backward(), &net);
    let net = optim.step(lr, net, grads);
    (net, rank_value, risk_value)
}
