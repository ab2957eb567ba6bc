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
    hole_choices, hole_odds, HoleChoice, HoleModel, OddsBudget, HOLE_FEATURES,
    HOLE_FEATURE_SCHEMA_VERSION, HOLE_MODEL_FORMAT, HOLE_MODEL_FORMAT_VERSION,
};

/// Trains the hole-shape model from the removed pieces of generated slack packings.
#[derive(Parser, Debug)]
#[command(bin_name = "telamalloc-train hole-shapes")]
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

/// A slack packing of a split and its holes (the pieces removed from its full packing).
struct SlackPacking {
    file: String,
    problem: telamalloc::Problem,
    holes: Vec<(u64, u64, u64)>,
}

/// Every slack packing in the manifest at `path` (files relative to `root`), with its holes.
fn slack_packings(path: &Path, root: &Path, horizon: u64) -> Result<Vec<SlackPacking>, String> {
    let mut out = Vec::new();
    for row in crate::data::manifest_rows(path, &["file"])? {
        let Some((options, seed)) = full_packing_options(&row, horizon) else {
            continue;
        };
        let file = root.join(&row["file"]);
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
        out.push(SlackPacking {
            file: row["file"].clone(),
            problem,
            holes,
        });
    }
    Ok(out)
}

/// The choices of every slack packing in the manifest at `path`.
fn split(path: &Path, args: &HoleArgs) -> Result<Split, String> {
    let mut out = Split {
        choices: Vec::new(),
        packings: 0,
        unreproduced: 0,
    };
    for packing in slack_packings(path, &args.root, args.horizon)? {
        out.packings += 1;
        match hole_choices(&packing.problem, &packing.holes) {
            Some(choices) => out.choices.extend(choices),
            None => out.unreproduced += 1,
        }
    }
    Ok(out)
}

/// `telamalloc-train hole-odds`: how hard each slack packing's holes are for the lottery to
/// draw with a hole-shape model.
#[derive(Parser, Debug)]
#[command(bin_name = "telamalloc-train hole-odds")]
pub struct OddsArgs {
    /// The split's manifest (as for `hole-shapes`).
    #[arg(long)]
    split: PathBuf,
    /// The folder the manifest's `file` paths are relative to.
    #[arg(long, default_value = ".")]
    root: PathBuf,
    /// The time extent the generator cut.
    #[arg(long, default_value_t = 1024)]
    horizon: u64,
    /// The hole-shape model (default: the built-in one).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Only the packings whose file name contains one of these (comma-separated).
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// How many ranked cuts to look among.
    #[arg(long, default_value_t = 1000)]
    count: usize,
    /// The most partial walks the ranking expands.
    #[arg(long, default_value_t = 100_000)]
    expansions: usize,
    /// How many seeded draws to look among.
    #[arg(long, default_value_t = 1000)]
    draws: usize,
}

/// Prints, for each slack packing, its holes' odds per draw, their rank among the most likely
/// cuts and the first seeded draw that gives them, then how many of the packings each finds
/// within 1, 10, 100 and all of its tries.
pub fn odds(args: OddsArgs) -> Result<(), String> {
    let model = match &args.model {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            HoleModel::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))?
        }
        None => HoleModel::built_in().clone(),
    };
    let (mut by_rank, mut by_draw) = ([0usize; 4], [0usize; 4]);
    let (mut walked, mut packings) = (0, 0);
    let limits = [1, 10, 100, usize::MAX];
    println!("file\tchoices\tlog10 p\trank\tranked\tmillis\tfirst draw");
    for packing in slack_packings(&args.split, &args.root, args.horizon)? {
        if !args.only.is_empty() && !args.only.iter().any(|o| packing.file.contains(o)) {
            continue;
        }
        packings += 1;
        let started = std::time::Instant::now();
        let odds = hole_odds(
            &packing.problem,
            &packing.holes,
            &model.weights,
            OddsBudget {
                ranked: args.count,
                expansions: args.expansions,
                draws: 0,
            },
        );
        let millis = started.elapsed().as_secs_f64() * 1e3;
        let first_draw = hole_odds(
            &packing.problem,
            &packing.holes,
            &model.weights,
            OddsBudget {
                draws: args.draws,
                ..OddsBudget::default()
            },
        )
        .and_then(|o| o.first_draw);
        let Some(odds) = odds else {
            println!("{}\tno walk", packing.file);
            continue;
        };
        walked += 1;
        let shown = |v: Option<usize>| v.map_or("-".to_string(), |v| v.to_string());
        println!(
            "{}\t{}\t{:.2}\t{}\t{}\t{millis:.1}\t{}",
            packing.file,
            odds.choices,
            odds.log_probability / std::f64::consts::LN_10,
            shown(odds.rank),
            odds.ranked,
            shown(first_draw)
        );
        for (k, &limit) in limits.iter().enumerate() {
            by_rank[k] += usize::from(odds.rank.is_some_and(|r| r < limit));
            by_draw[k] += usize::from(first_draw.is_some_and(|d| d < limit));
        }
    }
    println!(
        "{packings} slack packings, {walked} made by a walk; found within 1, 10, 100, all tries: \
         ranked {by_rank:?}, drawn {by_draw:?}"
    );
    Ok(())
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
