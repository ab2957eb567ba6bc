//! Random problems: lifetimes and sizes drawn uniformly, optionally with long-lived buffers;
//! capacity = tightness x LOAD.

use crate::analysis;
use crate::problem::{Buffer, Problem};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Parameters of [`random`].
#[derive(Clone, Debug, PartialEq)]
pub struct RandomOptions {
    /// Number of buffers.
    pub buffers: usize,
    /// Buffers start in `[0, horizon)` and end by `horizon` (clamped to at least 1).
    pub horizon: u64,
    /// Lifetimes are drawn from `[1, max_lifetime]` (clamped to at least 1), then cut at the
    /// horizon.
    pub max_lifetime: u64,
    /// Smallest size (clamped to at least 1).
    pub min_size: u64,
    /// Largest size (clamped to at least `min_size`).
    pub max_size: u64,
    /// The capacity is `ceil(tightness * LOAD)`. The value is rounded to a multiple of 10⁻⁶
    /// first, so the arithmetic is integer and portable. Below 1 the problem is infeasible;
    /// a negative or non-finite value counts as 1.
    pub tightness: f64,
}

impl Default for RandomOptions {
    /// 100 buffers over 200 steps, lifetimes up to 50, sizes in `[1, 1024]`, tightness 1.2.
    fn default() -> Self {
        RandomOptions {
            buffers: 100,
            horizon: 200,
            max_lifetime: 50,
            min_size: 1,
            max_size: 1024,
            tightness: 1.2,
        }
    }
}

/// The scale of the integer tightness ratio: tightness is rounded to a multiple of `1 / SCALE`.
const TIGHTNESS_SCALE: u128 = 1_000_000;

/// A random problem: each buffer starts uniformly in `[0, horizon)`, lives a uniform
/// `[1, max_lifetime]` steps (cut at the horizon) and has a uniform size in
/// `[min_size, max_size]`; the capacity is `Some(ceil(tightness * LOAD))` (saturating at
/// `u64::MAX`). Buffers are named `"0"`, `"1"`, … and have alignment 1.
pub fn random(options: &RandomOptions, seed: u64) -> Problem {
    random_lifetimes(options, None, seed)
}

/// Some long-lived buffers among the short ones of [`random`] (`gen random --long-per-mille N
/// --long-lifetime L`), as in a real model, where most tensors live a few operators and a few
/// (skip connections, inputs kept for later) live long.
#[derive(Clone, Debug, PartialEq)]
pub struct LongLived {
    /// How many buffers in a thousand are long-lived (at most 1000).
    pub per_mille: u64,
    /// Their lifetimes are drawn from `[1, max_lifetime]` (clamped to at least 1) instead.
    pub max_lifetime: u64,
}

/// [`random`] where each buffer is long-lived with probability `long.per_mille / 1000`: one
/// more draw per buffer decides, before its lifetime is drawn, so the problem is deterministic
/// from the seed (and differs from [`random`]'s with the same seed).
pub fn random_with_long(options: &RandomOptions, long: &LongLived, seed: u64) -> Problem {
    random_lifetimes(options, Some(long), seed)
}

fn random_lifetimes(options: &RandomOptions, long: Option<&LongLived>, seed: u64) -> Problem {
    let mut rng = StdRng::seed_from_u64(seed);
    let horizon = options.horizon.max(1);
    let max_lifetime = options.max_lifetime.max(1);
    let min_size = options.min_size.max(1);
    let max_size = options.max_size.max(min_size);
    let buffers: Vec<Buffer> = (0..options.buffers)
        .map(|i| {
            let lower = rng.random_range(0..horizon);
            let max_lifetime = match long {
                Some(long) if rng.random_range(0..1000) < long.per_mille => {
                    long.max_lifetime.max(1)
                }
                _ => max_lifetime,
            };
            let lifetime = rng.random_range(1..=max_lifetime);
            let upper = lower.saturating_add(lifetime).min(horizon);
            let size = rng.random_range(min_size..=max_size);
            Buffer::new(i.to_string(), lower, upper, size)
        })
        .collect();
    let mut problem = Problem::new(buffers, None);
    let load = analysis::load(&problem) as u128;
    let ratio = tightness_ratio(options.tightness);
    let capacity = (load * ratio).div_ceil(TIGHTNESS_SCALE);
    problem.capacity = Some(capacity.min(u64::MAX as u128) as u64);
    problem
}

fn tightness_ratio(tightness: f64) -> u128 {
    let tightness = if tightness.is_finite() && tightness >= 0.0 {
        tightness
    } else {
        1.0
    };
    // One IEEE multiplication and rounding: the same on every machine. `as` saturates.
    (tightness * TIGHTNESS_SCALE as f64).round() as u64 as u128
}

/// A random problem of 60 buffers with a gap in about a third of those living 3 steps or
/// more (half with a window) and one fixed buffer: for tests of gapped problems.
#[cfg(test)]
pub(crate) fn random_gapped(seed: u64) -> Problem {
    let options = RandomOptions {
        buffers: 60,
        horizon: 40,
        max_lifetime: 3 + seed % 28,
        ..RandomOptions::default()
    };
    let mut problem = random(&options, seed);
    for (i, b) in problem.buffers.iter_mut().enumerate() {
        if b.lifetime() >= 3 && (i as u64 + seed).is_multiple_of(3) {
            let mut gap = crate::problem::Gap::new(b.lower + 1, b.upper - 1);
            if i % 2 == 0 {
                gap.window = Some((b.size / 2, b.size));
            }
            b.gaps.push(gap);
        }
    }
    problem.buffers[3].offset = Some(0);
    problem
}
