//! `telamalloc-train hole-shapes`: trains the hole-shape model (`telamalloc::learned::HoleModel`),
//! a linear score over the moves of the slack-filling walk that the lottery draws its cuts with.
//!
//! The labels need no search at all. Every slack packing of a split was made by `telamalloc gen
//! perfect` with some pieces removed; generating it again with nothing removed (same style, cut
//! positions, buffers, seed, horizon and alignment, read from the split's manifest and the file
//! name) gives the full packing, and the buffers it has beyond the problem are the removed
//! pieces: the holes. `telamalloc::training::hole_choices` replays the walk that cuts the
//! problem's slack profile into exactly those holes, and each of its choices among two or more
//! moves is one example (the features of every move, and which one the holes took). The model
//! is fitted by maximum likelihood (a softmax over each choice's moves) with burn; the epoch is
//! chosen on the validation split's choices.
//!
//! ```sh
//! cargo run --release -- hole-shapes \
//!     --train ../datasets/splits/effort-train-manifest.csv \
//!     --validation ../datasets/splits/effort-validation-manifest.csv \
//!     --root .. --out ../models/hole_shapes.json
//! ```

use burn::module::{Module, Param};
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Device, Tensor, TensorData};
use clap::Parser;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use telamalloc::generate::{self, CutPositions, CutStyle, PerfectOptions};
use telamalloc::training::{
    hole_choices, HoleChoice, HoleModel, HOLE_FEATURES, HOLE_FEATURE_SCHEMA_VERSION,
    HOLE_MODEL_FORMAT, HOLE_MODEL_FORMAT_VERSION,
};

/// Trains the hole-shape model from the removed pieces of generated slack packings.
#[derive(Parser, Debug)]
pub struct HoleArgs {
    /// The training split's manifest (CSV with `file`, `source`, `style`, `cuts`, `remove`,
    /// `capacity`, `alignment` and `seed` columns).
    #[arg(long)]
    train: PathBuf,
    /// The validation split's manifest (chooses the epoch).
    #[arg(long)]
    validation: PathBuf,
    /// The folder the manifests' `file` paths are relative to.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// The time extent the generator cut (the splits were made with 1024).
    #[arg(long, default_value_t = 1024)]
    horizon: u64,
    /// Where to write the model.
    #[arg(long, default_value = "../models/hole_shapes.json")]
    out: PathBuf,
    #[arg(long, default_value_t = 400)]
    epochs: usize,
    #[arg(long, default_value_t = 0.05)]
    lr: f64,
    /// L2 penalty on the weights.
    #[arg(long, default_value_t = 1e-3)]
    l2: f64,
}

/// The choices of one split, and how many of its slack packings gave none.
struct Split {
    choices: Vec<HoleChoice>,
    packings: usize,
    unreproduced: usize,
}

/// The generator options of a manifest row with pieces removed, with nothing removed; None for
/// rows that are not slack packings of `gen perfect`.
fn full_packing_options(
    row: &HashMap<String, String>,
    horizon: u64,
) -> Option<(PerfectOptions, u64)> {
    let get = |k: &str| row.get(k).map(String::as_str).unwrap_or("");
    if get("source") != "generator" || get("remove").parse::<usize>().ok()? == 0 {
        return None;
    }
    // The buffers asked for are in the file name (`.n450.`); the manifest has those left.
    let buffers = get("file")
        .split('.')
        .find_map(|part| part.strip_prefix('n')?.parse::<usize>().ok())?;
    let style = match get("style") {
        "guillotine" => CutStyle::Guillotine,
        "non-guillotine" => CutStyle::NonGuillotine,
        "mixed" => CutStyle::Mixed,
        "thin" => CutStyle::Thin,
        "time-slab" => CutStyle::TimeSlab,
        _ => return None,
    };
    let cuts = match get("cuts") {
        "uniform" => CutPositions::Uniform,
        "central" => CutPositions::Central,
        "edge" => CutPositions::Edge,
        _ => return None,
    };
    let options = PerfectOptions {
        capacity: get("capacity").parse().ok()?,
        horizon,
        buffers,
        style,
        remove: 0,
        alignment: get("alignment").parse().ok()?,
        cuts,
    };
    Some((options, get("seed").parse().ok()?))
}

/// The choices of every slack packing in the manifest at `path`.
fn split(path: &Path, args: &HoleArgs) -> Result<Split, String> {
    let mut out = Split {
        choices: Vec::new(),
        packings: 0,
        unreproduced: 0,
    };
    for row in crate::data::manifest_rows(path, &["file"])? {
        let Some((options, seed)) = full_packing_options(&row, args.horizon) else {
            continue;
        };
        let file = args.root.join(&row["file"]);
        let problem = telamalloc::io::read_problem(&file, None).map_err(|e| e.to_string())?;
        let (full, _) = generate::perfect(&options, seed);
        // The removed pieces: the full packing's buffers less the problem's (as multisets).
        let key = |b: &telamalloc::Buffer| (b.lower, b.upper, b.size);
        let mut left: HashMap<(u64, u64, u64), i64> = HashMap::new();
        for b in &full.buffers {
            *left.entry(key(b)).or_default() += 1;
        }
        for b in &problem.buffers {
            *left.entry(key(b)).or_default() -= 1;
        }
        if left.values().any(|&n| n < 0) {
            return Err(format!("{} is not the generator's packing", file.display()));
        }
        let mut holes: Vec<(u64, u64, u64)> = left
            .into_iter()
            .flat_map(|(hole, n)| std::iter::repeat_n(hole, n as usize))
            .collect();
        holes.sort_unstable();
        out.packings += 1;
        match hole_choices(&problem, &holes) {
            Some(choices) => out.choices.extend(choices),
            None => out.unreproduced += 1,
        }
    }
    Ok(out)
}

/// The last component of `path` (the model records which manifests, not where they were).
fn file_name(path: &Path) -> String {
    path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    )
}

#[derive(Module, Debug)]
struct Scorer {
    weights: Param<Tensor<2>>,
}

/// The batch of `choices` as tensors: move features `[b * m, f]`, an additive mask `[b, m]`
/// (0 for moves, a large negative number for padding) and one-hot targets `[b, m]`.
fn tensors(choices: &[HoleChoice], device: &Device) -> (Tensor<2>, Tensor<2>, Tensor<2>, usize) {
    let width = HOLE_FEATURES.len();
    let b = choices.len();
    let m = choices.iter().map(|c| c.moves.len()).max().unwrap_or(1);
    let mut x = vec![0.0f32; b * m * width];
    let mut mask = vec![-1e4f32; b * m];
    let mut target = vec![0.0f32; b * m];
    for (i, c) in choices.iter().enumerate() {
        for (j, features) in c.moves.iter().enumerate() {
            let at = (i * m + j) * width;
            x[at..at + width].copy_from_slice(features);
            mask[i * m + j] = 0.0;
        }
        target[i * m + c.taken] = 1.0;
    }
    let x = Tensor::<2>::from_data(TensorData::new(x, [b * m, width]), device);
    let mask = Tensor::<2>::from_data(TensorData::new(mask, [b, m]), device);
    let target = Tensor::<2>::from_data(TensorData::new(target, [b, m]), device);
    (x, mask, target, m)
}

/// The mean negative log-likelihood of the moves taken, per choice.
fn loss(
    scorer: &Scorer,
    (x, mask, target, m): &(Tensor<2>, Tensor<2>, Tensor<2>, usize),
) -> Tensor<1> {
    let b = mask.dims()[0];
    let scores = x.clone().matmul(scorer.weights.val()).reshape([b, *m]) + mask.clone();
    (log_softmax(scores, 1) * target.clone()).sum().neg() / b.max(1) as f32
}

pub fn run(args: HoleArgs) -> Result<(), String> {
    let train = split(&args.train, &args)?;
    let valid = split(&args.validation, &args)?;
    println!(
        "train: {} slack packings, {} not reproduced by any walk, {} choices; validation: {}, {}, {}",
        train.packings,
        train.unreproduced,
        train.choices.len(),
        valid.packings,
        valid.unreproduced,
        valid.choices.len()
    );
    if train.choices.is_empty() || valid.choices.is_empty() {
        return Err("no choices to train or validate on".to_string());
    }
    let device = Device::flex().autodiff();
    let width = HOLE_FEATURES.len();
    let mut scorer = Scorer {
        weights: Param::from_data(TensorData::new(vec![0.0f32; width], [width, 1]), &device),
    };
    let mut optim = AdamConfig::new().init();
    let train_batch = tensors(&train.choices, &device);
    let valid_batch = tensors(&valid.choices, &device);
    let mut best: Option<(f32, usize, Vec<f32>, f32)> = None;
    for epoch in 0..args.epochs {
        let l2 = scorer.weights.val().powi_scalar(2).sum() * args.l2 as f32;
        let train_loss = loss(&scorer, &train_batch);
        let train_value: f32 = train_loss.clone().into_scalar();
        let grads = GradientsParams::from_grads((train_loss + l2).backward(), &scorer);
        scorer = optim.step(args.lr, scorer, grads);
        let validation: f32 = loss(&scorer, &valid_batch).into_scalar();
        if best.as_ref().is_none_or(|b| validation < b.0 - 1e-7) {
            let weights: Vec<f32> = scorer
                .weights
                .val()
                .into_data()
                .try_to_vec::<f32>()
                .map_err(|e| format!("{e:?}"))?;
            best = Some((validation, epoch + 1, weights, train_value));
        }
    }
    let (validation_loss, best_epoch, weights, train_loss) = best.ok_or("no epochs")?;
    let model = HoleModel {
        format: HOLE_MODEL_FORMAT.to_string(),
        version: HOLE_MODEL_FORMAT_VERSION,
        feature_schema: HOLE_FEATURE_SCHEMA_VERSION,
        features: HOLE_FEATURES.iter().map(|s| s.to_string()).collect(),
        weights: weights.iter().map(|w| (w * 1e4).round() / 1e4).collect(),
        training: serde_json::json!({
            "train_manifest": file_name(&args.train),
            "validation_manifest": file_name(&args.validation),
            "train_slack_packings": train.packings,
            "train_not_reproduced": train.unreproduced,
            "train_choices": train.choices.len(),
            "validation_slack_packings": valid.packings,
            "validation_not_reproduced": valid.unreproduced,
            "validation_choices": valid.choices.len(),
            "epochs": args.epochs,
            "best_epoch": best_epoch,
            "train_loss_per_choice": train_loss,
            "validation_loss_per_choice": validation_loss,
            "lr": args.lr,
            "l2": args.l2,
        }),
    };
    model
        .check()
        .map_err(|e| format!("the trained model: {e}"))?;
    println!(
        "epoch {best_epoch}: loss per choice train {train_loss:.4}, validation {validation_loss:.4}"
    );
    for (name, w) in HOLE_FEATURES.iter().zip(&model.weights) {
        println!("  {name:16} {w:+.3}");
    }
    let text = serde_json::to_string_pretty(&model).expect("plain data") + "\n";
    std::fs::write(&args.out, text)
        .map_err(|e| format!("cannot write {}: {e}", args.out.display()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}
