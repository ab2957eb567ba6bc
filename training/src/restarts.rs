//! `telamalloc-train restarts`: trains the restart model (`telamalloc::learned::RestartModel`),
//! an MLP over a run's progress at a checkpoint that gives the probability that the run will
//! spend its node budget without deciding (doomed).
//!
//! The data are the run lines of solve logs (`telamalloc collect --record-limit 0`): every
//! checkpoint of a run that ended by its budget is a doomed example (label 1), every checkpoint
//! of a run that found a layout or exhausted its tree is a live one (label 0); runs the limits
//! stopped are left out. Each run's checkpoints share one unit of weight, and the two classes
//! weigh the same in the loss. The epoch with the lowest validation loss is kept.
//!
//! ```sh
//! cargo run --release -- restarts --logs ../logs/restarts/train --validation-logs \
//!     ../logs/restarts/validation --threshold 0.9 --out ../models/restarts.json
//! ```

use burn::module::Module;
use burn::nn::Linear;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::{relu, softplus};
use burn::tensor::{Device, Tensor, TensorData};
use clap::Parser;
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::path::PathBuf;
use telamalloc::training::{
    read_log_file, RestartModel, RunJudge, RunResult, RESTART_MODEL_FORMAT,
    RESTART_MODEL_FORMAT_VERSION, RUN_FEATURES, RUN_FEATURE_SCHEMA_VERSION,
};

/// Trains the restart model from the run lines of solve logs.
#[derive(Parser, Debug)]
#[command(bin_name = "telamalloc-train restarts")]
pub struct RestartArgs {
    /// Folders of training logs (comma-separated).
    #[arg(long, value_delimiter = ',', required = true)]
    logs: Vec<PathBuf>,
    /// Folders of validation logs (other problems), which choose the epoch.
    #[arg(long, value_delimiter = ',', required = true)]
    validation_logs: Vec<PathBuf>,
    /// Hidden layer widths, comma-separated (empty: logistic).
    #[arg(long, default_value = "16", value_delimiter = ',')]
    hidden: Vec<usize>,
    /// Full-batch epochs.
    #[arg(long, default_value_t = 600)]
    epochs: usize,
    /// Adam's learning rate.
    #[arg(long, default_value_t = 0.01)]
    lr: f64,
    /// The probability of doom from which the search ends a run.
    #[arg(long, default_value_t = 0.9)]
    threshold: f32,
    /// Seed of the initial weights.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Where to write the model.
    #[arg(long, default_value = "../models/restarts.json")]
    out: PathBuf,
}

/// One run: whether it was doomed, its nodes and its checkpoints' features.
struct RunExample {
    doomed: bool,
    nodes: u64,
    checkpoints: Vec<Vec<f32>>,
}

/// The runs of every log in `folders` that did not end by the limits.
fn read_runs(folders: &[PathBuf]) -> Result<(Vec<RunExample>, usize), String> {
    let mut runs = Vec::new();
    let mut logs = 0;
    for folder in folders {
        for file in crate::data::log_files(folder)? {
            let log = read_log_file(&file)?;
            logs += 1;
            for run in log.runs {
                let doomed = match run.result {
                    RunResult::Budget => true,
                    RunResult::Found | RunResult::Exhausted => false,
                    RunResult::Stopped => continue,
                };
                if run.checkpoints.is_empty() {
                    continue;
                }
                if run
                    .checkpoints
                    .iter()
                    .any(|c| c.len() != RUN_FEATURES.len())
                {
                    return Err(format!("{}: a checkpoint of another width", file.display()));
                }
                runs.push(RunExample {
                    doomed,
                    nodes: run.nodes,
                    checkpoints: run.checkpoints,
                });
            }
        }
    }
    Ok((runs, logs))
}

#[derive(Module, Debug)]
struct Mlp {
    layers: Vec<Linear>,
}

impl Mlp {
    fn new(hidden: &[usize], rng: &mut StdRng, device: &Device) -> Mlp {
        let mut width = RUN_FEATURES.len();
        let mut layers = Vec::new();
        for &h in hidden.iter().chain(&[1]) {
            layers.push(crate::net::layer(width, h, rng, device));
            width = h;
        }
        Mlp { layers }
    }

    fn logits(&self, x: Tensor<2>) -> Tensor<2> {
        let last = self.layers.len() - 1;
        self.layers.iter().enumerate().fold(x, |h, (i, l)| {
            let out = l.forward(h);
            if i < last {
                relu(out)
            } else {
                out
            }
        })
    }
}

/// Features, labels and weights of `runs` as tensors: each run's checkpoints share one unit of
/// weight, and each class sums to the same weight.
fn tensors(runs: &[RunExample], device: &Device) -> [Tensor<2>; 3] {
    let doomed = runs.iter().filter(|r| r.doomed).count().max(1) as f32;
    let live = runs.iter().filter(|r| !r.doomed).count().max(1) as f32;
    let (mut x, mut y, mut w) = (Vec::new(), Vec::new(), Vec::new());
    for run in runs {
        let class = if run.doomed { 1.0 / doomed } else { 1.0 / live };
        for c in &run.checkpoints {
            x.extend_from_slice(c);
            y.push(f32::from(u8::from(run.doomed)));
            w.push(class / run.checkpoints.len() as f32);
        }
    }
    let n = y.len();
    let column = |v: Vec<f32>| Tensor::<2>::from_data(TensorData::new(v, [n, 1]), device);
    [
        Tensor::<2>::from_data(TensorData::new(x, [n, RUN_FEATURES.len()]), device),
        column(y),
        column(w),
    ]
}

/// The weighted logistic loss of `net` on `x` against `labels`.
fn loss(net: &Mlp, x: Tensor<2>, labels: Tensor<2>, weights: Tensor<2>) -> Tensor<1> {
    let z = net.logits(x);
    let per = softplus(z.clone(), 1.0) - labels * z;
    let total = weights.clone().sum();
    (per * weights).sum() / total
}

fn model_of(net: &Mlp, threshold: f32) -> RestartModel {
    RestartModel {
        format: RESTART_MODEL_FORMAT.to_string(),
        version: RESTART_MODEL_FORMAT_VERSION,
        feature_schema: RUN_FEATURE_SCHEMA_VERSION,
        features: RUN_FEATURES.iter().map(|s| s.to_string()).collect(),
        layers: net.layers.iter().map(crate::net::dense).collect(),
        threshold,
        training: serde_json::Value::Null,
    }
}

/// What ending runs at `model`'s threshold would have done to `runs`, were the runs after them
/// unchanged: the share of live runs it ends (each loses its answer), and the share of the doomed
/// runs' nodes it saves (from the first checkpoint it ends at to the run's end).
fn effect(model: &RestartModel, runs: &[RunExample]) -> (f64, f64) {
    let (mut live, mut live_ended, mut doomed_nodes, mut saved) = (0, 0, 0.0, 0.0);
    for run in runs {
        let first = run.checkpoints.iter().find(|c| {
            let features: [f32; RUN_FEATURES.len()] = c.as_slice().try_into().expect("width");
            model.ends(&features)
        });
        if run.doomed {
            doomed_nodes += run.nodes as f64;
            if let Some(c) = first {
                // Feature 1 is the share of the budget spent at the checkpoint.
                saved += run.nodes as f64 * (1.0 - f64::from(c[1]));
            }
        } else {
            live += 1;
            live_ended += usize::from(first.is_some());
        }
    }
    (
        live_ended as f64 / f64::from(live.max(1)),
        saved / doomed_nodes.max(1.0),
    )
}

pub fn run(args: RestartArgs) -> Result<(), String> {
    if !(args.threshold > 0.0 && args.threshold <= 1.0) {
        return Err(format!("--threshold {} is not in (0, 1]", args.threshold));
    }
    let (train, train_logs) = read_runs(&args.logs)?;
    let (valid, valid_logs) = read_runs(&args.validation_logs)?;
    let count = |runs: &[RunExample]| runs.iter().filter(|r| r.doomed).count();
    println!(
        "training: {train_logs} logs, {} runs ({} doomed); validation: {valid_logs} logs, {} runs ({} doomed)",
        train.len(),
        count(&train),
        valid.len(),
        count(&valid)
    );
    if count(&train) == 0 || count(&train) == train.len() || valid.is_empty() {
        return Err("the training runs need both doomed and live runs, and validation runs".into());
    }
    let device = Device::flex().autodiff();
    device.seed(args.seed);
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut net = Mlp::new(&args.hidden, &mut rng, &device);
    let mut optim = AdamConfig::new().init();
    let [x, y, w] = tensors(&train, &device);
    let [vx, vy, vw] = tensors(&valid, &device);
    let mut best: Option<(f32, usize, RestartModel)> = None;
    for epoch in 0..args.epochs {
        let objective = loss(&net, x.clone(), y.clone(), w.clone());
        let grads = GradientsParams::from_grads(objective.backward(), &net);
        net = optim.step(args.lr, net, grads);
        let validation: f32 = loss(&net, vx.clone(), vy.clone(), vw.clone()).into_scalar();
        if best.as_ref().is_none_or(|b| validation < b.0 - 1e-7) {
            best = Some((validation, epoch + 1, model_of(&net, args.threshold)));
        }
    }
    let (validation_loss, best_epoch, mut model) = best.ok_or("no epochs")?;
    let mut table = Vec::new();
    for threshold in [0.5f32, 0.7, 0.8, 0.9, 0.95, 0.98] {
        let at = RestartModel {
            threshold,
            ..model.clone()
        };
        let (train_lost, train_saved) = effect(&at, &train);
        let (valid_lost, valid_saved) = effect(&at, &valid);
        println!(
            "threshold {threshold:.2}: live runs ended {:.1}% (validation {:.1}%), doomed nodes \
             saved {:.1}% (validation {:.1}%)",
            100.0 * train_lost,
            100.0 * valid_lost,
            100.0 * train_saved,
            100.0 * valid_saved
        );
        table.push(serde_json::json!({
            "threshold": threshold,
            "validation_live_runs_ended": valid_lost,
            "validation_doomed_nodes_saved": valid_saved,
        }));
    }
    model.training = serde_json::json!({
        "train_logs": train_logs,
        "train_runs": train.len(),
        "train_doomed_runs": count(&train),
        "validation_logs": valid_logs,
        "validation_runs": valid.len(),
        "validation_doomed_runs": count(&valid),
        "hidden": args.hidden,
        "epochs": args.epochs,
        "best_epoch": best_epoch,
        "validation_loss": validation_loss,
        "lr": args.lr,
        "seed": args.seed,
        "offline_effect": table,
    });
    model
        .check()
        .map_err(|e| format!("the trained model: {e}"))?;
    println!("epoch {best_epoch}: validation loss {validation_loss:.4}");
    let text = serde_json::to_string_pretty(&model).expect("plain data") + "\n";
    std::fs::write(&args.out, text)
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}
