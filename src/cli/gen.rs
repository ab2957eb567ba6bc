//! `telamalloc gen`: deterministic problem generators (same seed, same file, bit for bit).

use super::{write_file, CliError, EXIT_SOLVED};
use clap::{Args, ValueEnum};
use std::path::{Path, PathBuf};
use telamalloc::generate::{
    self, Benefit, CutPositions, CutStyle, OnchipOptions, PerfectOptions, RandomOptions, Tiling,
};
use telamalloc::io::{check_problem, write_csv_problem, BufferPlaces};

#[derive(Clone, Copy, ValueEnum)]
enum Kind {
    /// Cut a capacity x horizon rectangle into rectangles: a packing at LOAD = capacity exists.
    Perfect,
    /// Buffers all live at once (the paper's worst case); capacity = their total.
    Overlap,
    /// Random lifetimes and sizes; capacity = tightness x LOAD.
    Random,
    /// An on-chip scratchpad drawn from a whole-model problem (`--from`): capacity = fraction x
    /// LOAD, buffers kept greedily (seeded benefit order) while they fit at every step.
    Onchip,
    /// CNN-like layers: tiles of each layer staggered behind the layer before, residual skips;
    /// capacity = LOAD.
    Layers,
}

#[derive(Clone, Copy, ValueEnum)]
enum Style {
    Guillotine,
    NonGuillotine,
    Mixed,
    /// Full cuts, mostly across addresses: long-lived, small buffers.
    Thin,
    /// Full cuts, mostly across time: short-lived, large buffers.
    TimeSlab,
}

#[derive(Clone, Copy, ValueEnum)]
enum Cuts {
    /// Every cut position equally likely.
    Uniform,
    /// Cuts near the middle of a piece: buffers of similar sizes.
    Central,
    /// Cuts near an edge: a few large buffers and many small ones.
    Edge,
}

#[derive(Clone, Copy, ValueEnum)]
enum BenefitOrder {
    /// Size x lifetime.
    Area,
    /// Size.
    Size,
    /// Size per step of lifetime.
    Density,
    /// A random order.
    Random,
}

#[derive(Args)]
pub struct GenArgs {
    /// What to generate.
    #[arg(value_enum)]
    kind: Kind,
    /// Seed: the same seed gives the same problem.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Number of buffers (at most 100000000).
    #[arg(long, default_value_t = 100, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=MAX_BUFFERS))]
    buffers: usize,
    /// Capacity (perfect).
    #[arg(long, default_value_t = 1 << 20, value_parser = clap::value_parser!(u64).range(1..))]
    capacity: u64,
    /// Time steps (perfect, random).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    horizon: u64,
    /// Cut style (perfect).
    #[arg(long, value_enum, default_value = "mixed")]
    style: Style,
    /// Rectangles to remove after cutting (perfect).
    #[arg(long, default_value_t = 0)]
    remove: usize,
    /// Where cuts fall inside a piece (perfect).
    #[arg(long, value_enum, default_value = "uniform")]
    cuts: Cuts,
    /// Alignment of every buffer, a power of two (perfect, onchip, layers: sizes rounded up to
    /// it).
    #[arg(long, default_value_t = 1, value_parser = power_of_two)]
    alignment: u64,
    /// Smallest size (overlap, random).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    min_size: u64,
    /// Largest size (overlap, random; layers: the first layer's tile size).
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..))]
    max_size: u64,
    /// Longest lifetime (random).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    max_lifetime: u64,
    /// Long-lived buffers per thousand (random; 0: none, the plain mix): each buffer is long
    /// with this probability, its lifetime up to --long-lifetime.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1000))]
    long_per_mille: u64,
    /// Longest lifetime of a long-lived buffer (random, with --long-per-mille).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..))]
    long_lifetime: u64,
    /// Capacity / LOAD (random).
    #[arg(long, default_value_t = 1.2)]
    tightness: f64,
    /// The whole-model problem to draw from (onchip).
    #[arg(long)]
    from: Option<PathBuf>,
    /// Capacity / LOAD of the source (onchip), rounded to per mille.
    #[arg(long, default_value_t = 0.3)]
    fraction: f64,
    /// Do not tile buffers larger than half the capacity (onchip).
    #[arg(long, conflicts_with = "tiles")]
    no_tile: bool,
    /// Tile each buffer larger than half the capacity into this many equal tiles, or more if a
    /// tile would still exceed half the capacity (onchip; default: tiles of a quarter of the
    /// capacity); layers: tiles per layer (default 20).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=64))]
    tiles: Option<u64>,
    /// Layers per stage; each stage halves the tile size (layers).
    #[arg(long, default_value_t = 8, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    stage: usize,
    /// Residual skips per thousand layers, each read again 2 to 6 layers later (layers).
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(0..=1000))]
    skips_per_mille: u64,
    /// The order in which buffers are offered to the scratchpad, each measure scaled by a seeded
    /// factor in [0.75, 1.25) (onchip).
    #[arg(long, value_enum, default_value = "area")]
    benefit: BenefitOrder,
    /// Output CSV file (default: standard output). `{capacity}` in it is replaced by the
    /// problem's capacity, so that `-o DIR/NAME.{capacity}.csv` writes a file that `solve`,
    /// `eval` and `learn` read at its capacity; the capacity is also printed on standard error.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// The most buffers `gen` makes: about 10 GB of problem in memory; far more would only fail to
/// allocate.
const MAX_BUFFERS: u64 = 100_000_000;

fn power_of_two(text: &str) -> Result<u64, String> {
    let value: u64 = text.parse().map_err(|e| format!("{e}"))?;
    if value.is_power_of_two() {
        Ok(value)
    } else {
        Err(format!("{value} is not a power of two"))
    }
}

pub fn run(args: GenArgs) -> Result<i32, CliError> {
    if args.min_size > args.max_size {
        return Err(CliError::Usage(format!(
            "--min-size {} is larger than --max-size {}",
            args.min_size, args.max_size
        )));
    }
    if !(args.tightness.is_finite() && args.tightness > 0.0) {
        return Err(CliError::Usage(format!(
            "--tightness must be a positive, finite number, not {}",
            args.tightness
        )));
    }
    let problem = match args.kind {
        Kind::Perfect => perfect(&args),
        Kind::Overlap => generate::overlap(args.buffers, args.min_size, args.max_size, args.seed),
        Kind::Random => random(&args),
        Kind::Onchip => onchip(&args)?,
        Kind::Layers => layers(&args),
    };
    // What is written must read back: sizes whose sum overflows 64 bits (huge --max-size or
    // --alignment), or a capacity of 0 or below a buffer (a tiny --tightness), would not.
    check_problem(&problem, "the generated problem", &BufferPlaces::None).map_err(|e| {
        CliError::Usage(format!(
            "{e} (the options ask for a problem no reader accepts; make sizes, alignment or buffers smaller, or the tightness larger)"
        ))
    })?;
    let text = write_csv_problem(&problem);
    match &args.output {
        Some(path) => write_file(&with_capacity(path, problem.capacity)?, &text)?,
        None => print!("{text}"),
    }
    if let Some(capacity) = problem.capacity {
        eprintln!("capacity {capacity}");
    }
    eprintln!(
        "buffers {} load {}",
        problem.len(),
        telamalloc::analysis::load(&problem)
    );
    Ok(EXIT_SOLVED)
}

/// The placeholder `-o` replaces by the capacity.
const CAPACITY_PLACEHOLDER: &str = "{capacity}";

/// `path` with every `{capacity}` replaced by `capacity`; an error when it holds one and the
/// problem has no capacity.
fn with_capacity(path: &Path, capacity: Option<u64>) -> Result<PathBuf, CliError> {
    let Some(text) = path.to_str().filter(|t| t.contains(CAPACITY_PLACEHOLDER)) else {
        return Ok(path.to_path_buf());
    };
    match capacity {
        Some(capacity) => Ok(PathBuf::from(
            text.replace(CAPACITY_PLACEHOLDER, &capacity.to_string()),
        )),
        None => Err(CliError::Usage(format!(
            "-o {text}: this problem has no capacity to put in the file name"
        ))),
    }
}

/// A perfect packing as the flags ask.
fn perfect(args: &GenArgs) -> telamalloc::Problem {
    let options = PerfectOptions {
        capacity: args.capacity,
        horizon: args.horizon,
        buffers: args.buffers,
        style: match args.style {
            Style::Guillotine => CutStyle::Guillotine,
            Style::NonGuillotine => CutStyle::NonGuillotine,
            Style::Mixed => CutStyle::Mixed,
            Style::Thin => CutStyle::Thin,
            Style::TimeSlab => CutStyle::TimeSlab,
        },
        remove: args.remove,
        alignment: args.alignment,
        cuts: match args.cuts {
            Cuts::Uniform => CutPositions::Uniform,
            Cuts::Central => CutPositions::Central,
            Cuts::Edge => CutPositions::Edge,
        },
    };
    generate::perfect(&options, args.seed).0
}

/// A random problem as the flags ask, with long-lived buffers when `--long-per-mille` is set.
fn random(args: &GenArgs) -> telamalloc::Problem {
    let options = RandomOptions {
        buffers: args.buffers,
        horizon: args.horizon,
        max_lifetime: args.max_lifetime,
        min_size: args.min_size,
        max_size: args.max_size,
        tightness: args.tightness,
    };
    match args.long_per_mille {
        0 => generate::random(&options, args.seed),
        per_mille => {
            let long = generate::LongLived {
                per_mille,
                max_lifetime: args.long_lifetime,
            };
            generate::random_with_long(&options, &long, args.seed)
        }
    }
}

/// A layered problem as the flags ask.
fn layers(args: &GenArgs) -> telamalloc::Problem {
    let options = generate::LayersOptions {
        buffers: args.buffers,
        tiles: args.tiles.map_or(20, |t| t as usize),
        stage: args.stage,
        max_size: args.max_size,
        skip_per_mille: args.skips_per_mille,
        alignment: args.alignment,
    };
    generate::layers(&options, args.seed)
}

/// An on-chip problem drawn from `--from` as the flags ask.
fn onchip(args: &GenArgs) -> Result<telamalloc::Problem, CliError> {
    let from = args
        .from
        .as_ref()
        .ok_or_else(|| CliError::Usage("gen onchip needs --from FILE".into()))?;
    let source = super::read_problem(from, None)?;
    if !(args.fraction.is_finite() && args.fraction > 0.0 && args.fraction <= 1.0) {
        return Err(CliError::Usage(format!(
            "--fraction must be in (0, 1], not {}",
            args.fraction
        )));
    }
    let options = OnchipOptions {
        per_mille: (args.fraction * 1000.0).round().max(1.0) as u64,
        tiling: match (args.no_tile, args.tiles) {
            (true, _) => Tiling::Off,
            (false, Some(count)) => Tiling::Count(count),
            (false, None) => Tiling::Quarters,
        },
        benefit: match args.benefit {
            BenefitOrder::Area => Benefit::Area,
            BenefitOrder::Size => Benefit::Size,
            BenefitOrder::Density => Benefit::Density,
            BenefitOrder::Random => Benefit::Random,
        },
        alignment: args.alignment,
    };
    Ok(generate::onchip(&source, &options, args.seed))
}
