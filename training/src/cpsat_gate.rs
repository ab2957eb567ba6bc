//! `telamalloc-train cpsat-gate`: trains the CP-SAT gate (`telamalloc::learned::CpSatGate`), a
//! logistic model over the problem features that gives the probability that CP-SAT decides a
//! problem sooner than the search's round robin; the core turns it into CP-SAT's share of the
//! work when it runs beside the search (`--with cpsat`).
//!
//! The data are two races at the same limit: the round robin (`telamalloc eval --policies
//! portfolio --nodes N`) and CP-SAT alone (`telamalloc eval --algo cpsat --nodes N`, whose nodes
//! are the node equivalents of its deterministic time), so the labels follow from node counts,
//! not wall time. A problem's label is 1 when CP-SAT's cost is below the round robin's (a cost is
//! the nodes to decide, or twice the limit when undecided: PAR2), and its weight is the log ratio
//! of the two costs, each plus `--floor` nodes (about a tenth of a second: what both decide
//! within that is a tie however the counts compare), so that near ties barely count and problems
//! neither decides not at all.
//!
//! ```sh
//! cargo run --release -- cpsat-gate --search S/eval.json --cpsat C/eval.json \
//!     --validation-search VS/eval.json --validation-cpsat VC/eval.json \
//!     --problems ../datasets/splits/effort-train,... --out ../models/cpsat_gate.json
//! ```

use crate::schedule::{read_runs, Run};
use burn::module::Module;
use burn::nn::Linear;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::softplus;
use burn::tensor::{Device, Tensor, TensorData};
use clap::Parser;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::collections::HashMap;
use std::path::PathBuf;
use telamalloc::learned::cpsat_gate::{GATE_FORMAT, GATE_FORMAT_VERSION};
use telamalloc::learned::{CpSatGate, Normalisation};
use telamalloc::training::{PROBLEM_FEATURES, PROBLEM_FEATURE_SCHEMA_VERSION};

/// Trains the CP-SAT gate from races of the round robin and of CP-SAT.
#[derive(Parser, Debug)]
#[command(bin_name = "telamalloc-train cpsat-gate")]
pub struct GateArgs {
    /// The round robin's race on the training problems (`eval.json` files, comma-separated).
    #[arg(long, value_delimiter = ',', required = true)]
    search: Vec<PathBuf>,
    /// CP-SAT's race on the same problems.
    #[arg(long, value_delimiter = ',', required = true)]
    cpsat: Vec<PathBuf>,
    /// The round robin's race on the validation problems (which choose the epoch).
    #[arg(long, value_delimiter = ',', required = true)]
    validation_search: Vec<PathBuf>,
    /// CP-SAT's race on the validation problems.
    #[arg(long, value_delimiter = ',', required = true)]
    validation_cpsat: Vec<PathBuf>,
    /// Folders holding the problem files the races name.
    #[arg(long, value_delimiter = ',', required = true)]
    problems: Vec<PathBuf>,
    /// The races' node limit (costs of undecided runs are twice this).
    #[arg(long, default_value_t = 600_000)]
    limit: u64,
    /// Nodes added to both costs before their ratio is taken: differences among problems both
    /// decide within about this many nodes (a tenth of a second) weigh little.
    #[arg(long, default_value_t = 10_000)]
    floor: u64,
    /// CP-SAT's share, in policies, when the gate is sure CP-SAT loses.
    #[arg(long, default_value_t = 0.25)]
    low_share: f64,
    /// CP-SAT's share, in policies, when the gate is sure CP-SAT wins.
    #[arg(long, default_value_t = 4.0)]
    high_share: f64,
    /// Full-batch epochs (the one with the lowest validation loss is kept).
    #[arg(long, default_value_t = 1000)]
    epochs: usize,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 0.03)]
    lr: f64,
    /// L2 penalty on the weights.
    #[arg(long, default_value_t = 0.01)]
    l2: f64,
    /// Seed of the initial weights.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the gate.
    #[arg(long, default_value = "../models/cpsat_gate.json")]
    out: PathBuf,
}

/// One problem: its features, its label (CP-SAT is cheaper) and its weight.
struct Example {
    name: String,
    features: Vec<f32>,
    label: f32,
    weight: f32,
}

/// The cost of a run: its nodes when it decided, else twice the limit.
fn cost(run: &Run, limit: u64) -> f64 {
    if run.decided() && run.nodes <= limit {
        run.nodes.max(1) as f64
    } else {
        2.0 * limit as f64
    }
}

/// The examples of the problems both races ran.
fn examples(
    search: &[PathBuf],
    cpsat: &[PathBuf],
    index: &HashMap<String, PathBuf>,
    (limit, floor): (u64, u64),
) -> Result<Vec<Example>, String> {
    let search = read_runs(search)?;
    let cpsat: HashMap<String, Run> = read_runs(cpsat)?
        .into_iter()
        .map(|r| (r.problem.clone(), r))
        .collect();
    let floor = floor as f64;
    let mut out = Vec::new();
    for s in &search {
        let Some(c) = cpsat.get(&s.problem) else {
            continue;
        };
        let (search_cost, cpsat_cost) = (cost(s, limit) + floor, cost(c, limit) + floor);
        out.push(Example {
            name: s.problem.clone(),
            features: crate::portfolio::features_of(index, &s.problem)?,
            label: f32::from(u8::from(cpsat_cost < search_cost)),
            weight: (search_cost / cpsat_cost).ln().abs() as f32,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    if out.is_empty() {
        return Err("the races share no problem".to_string());
    }
    Ok(out)
}

#[derive(Module, Debug)]
struct Logistic {
    linear: Linear,
}

/// The weighted logistic loss of `net` on `x` (normalised features) against `labels`.
fn loss(net: &Logistic, x: Tensor<2>, labels: Tensor<2>, weights: Tensor<2>) -> Tensor<1> {
    let z = net.linear.forward(x);
    // -[y ln s(z) + (1 - y) ln(1 - s(z))] = softplus(z) - y z
    let per = softplus(z.clone(), 1.0) - labels * z;
    let total = weights.clone().sum();
    (per * weights).sum() / total
}

/// Normalised features, labels and weights of `data` as tensors.
fn tensors(data: &[Example], mean: &[f32], std: &[f32], device: &Device) -> [Tensor<2>; 3] {
    let width = PROBLEM_FEATURES.len();
    let mut x = Vec::with_capacity(data.len() * width);
    for e in data {
        crate::net::push_normalised(&mut x, &e.features, mean, std);
    }
    let n = data.len();
    let column = |v: Vec<f32>| Tensor::<2>::from_data(TensorData::new(v, [n, 1]), device);
    [
        Tensor::<2>::from_data(TensorData::new(x, [n, width]), device),
        column(data.iter().map(|e| e.label).collect()),
        column(data.iter().map(|e| e.weight).collect()),
    ]
}

/// The gate of `net`'s current weights.
fn gate_of(net: &Logistic, args: &GateArgs, (mean, std): (&[f32], &[f32])) -> CpSatGate {
    let layer = crate::net::dense(&net.linear);
    CpSatGate {
        format: GATE_FORMAT.to_string(),
        version: GATE_FORMAT_VERSION,
        feature_schema: PROBLEM_FEATURE_SCHEMA_VERSION,
        features: PROBLEM_FEATURES.iter().map(|s| s.to_string()).collect(),
        normalisation: Normalisation {
            mean: mean.to_vec(),
            std: std.to_vec(),
        },
        weights: layer.weights,
        bias: layer.bias[0],
        low_share: args.low_share,
        high_share: args.high_share,
        training: serde_json::Value::Null,
    }
}

/// Weighted accuracy of `gate` on `data` (ties, of weight 0, do not count), and how many
/// problems it sends to CP-SAT (probability above 1/2) against how many CP-SAT wins.
fn accuracy(gate: &CpSatGate, data: &[Example]) -> (f64, usize, usize) {
    let (mut right, mut total, mut sent, mut wins) = (0.0, 0.0, 0, 0);
    for e in data {
        let p = gate.probability(&e.features);
        let says = p > 0.5;
        let w = f64::from(e.weight);
        total += w;
        if says == (e.label > 0.5) {
            right += w;
        }
        sent += usize::from(says);
        wins += usize::from(e.label > 0.5 && e.weight > 0.0);
    }
    (right / total.max(1e-12), sent, wins)
}

pub fn run(args: GateArgs) -> Result<(), String> {
    let args = &args;
    let index = crate::portfolio::problem_index(&args.problems)?;
    let costs = (args.limit, args.floor);
    let train = examples(&args.search, &args.cpsat, &index, costs)?;
    let valid = examples(
        &args.validation_search,
        &args.validation_cpsat,
        &index,
        costs,
    )?;
    let rows: Vec<&[f32]> = train.iter().map(|e| e.features.as_slice()).collect();
    let (mean, std) = crate::net::normalisation(&rows, PROBLEM_FEATURES.len());
    let device = Device::flex().autodiff();
    device.seed(args.seed);
    let mut rng = StdRng::seed_from_u64(args.seed);
    let width = PROBLEM_FEATURES.len();
    let mut net = Logistic {
        linear: crate::net::layer(width, 1, &mut rng, &device),
    };
    let mut optim = AdamConfig::new().init();
    let [x, y, w] = tensors(&train, &mean, &std, &device);
    let [vx, vy, vw] = tensors(&valid, &mean, &std, &device);
    let mut best: Option<(f32, usize, CpSatGate)> = None;
    for epoch in 0..args.epochs {
        let l2 = net.linear.weight.val().powi_scalar(2).sum() * args.l2 as f32;
        let objective = loss(&net, x.clone(), y.clone(), w.clone()) + l2;
        let grads = GradientsParams::from_grads(objective.backward(), &net);
        net = optim.step(args.lr, net, grads);
        let validation: f32 = loss(&net, vx.clone(), vy.clone(), vw.clone()).into_scalar();
        if best.as_ref().is_none_or(|b| validation < b.0 - 1e-7) {
            best = Some((validation, epoch + 1, gate_of(&net, args, (&mean, &std))));
        }
    }
    let (validation_loss, best_epoch, mut gate) = best.ok_or("no epochs")?;
    let (train_acc, train_sent, train_wins) = accuracy(&gate, &train);
    let (valid_acc, valid_sent, valid_wins) = accuracy(&gate, &valid);
    gate.training = serde_json::json!({
        "train_problems": train.len(),
        "validation_problems": valid.len(),
        "race_limit_nodes": args.limit,
        "floor_nodes": args.floor,
        "epochs": args.epochs,
        "best_epoch": best_epoch,
        "validation_loss": validation_loss,
        "train_weighted_accuracy": train_acc,
        "validation_weighted_accuracy": valid_acc,
        "validation_sent_to_cpsat": valid_sent,
        "validation_cpsat_wins": valid_wins,
        "lr": args.lr,
        "l2": args.l2,
        "seed": args.seed,
    });
    gate.check().map_err(|e| format!("the trained gate: {e}"))?;
    println!(
        "epoch {best_epoch}: validation loss {validation_loss:.4}; weighted accuracy train \
         {train_acc:.3} ({train_sent} sent to CP-SAT, {train_wins} where it wins), validation \
         {valid_acc:.3} ({valid_sent} sent, {valid_wins} wins)"
    );
    for e in &valid {
        let p = gate.probability(&e.features);
        if (p > 0.5) != (e.label > 0.5) && e.weight > 0.5 {
            println!("  validation miss: {} p {p:.2}, label {}", e.name, e.label);
        }
    }
    let text = serde_json::to_string_pretty(&gate).expect("plain data") + "\n";
    std::fs::write(&args.out, text)
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}
