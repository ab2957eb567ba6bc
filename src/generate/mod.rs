//! Deterministic problem generators: perfect packings, all-overlapping sets, random problems,
//! CNN-like layers and on-chip scratchpads.
//!
//! Every generator is a pure function of its parameters and a `u64` seed: the same inputs give
//! the same [`Problem`] bit for bit on any machine. They draw only from
//! [`StdRng::seed_from_u64`], sample only integers (the one `f64` input, the tightness of
//! [`RandomOptions`], is converted once to an integer ratio) and never iterate hash maps.

mod draw;
mod layers;
mod onchip;
mod perfect;
mod random;
#[cfg(test)]
mod tests;

pub use layers::{layers, LayersOptions};
pub use onchip::{onchip, Benefit, OnchipOptions, Tiling};
pub use perfect::{perfect, CutPositions, CutStyle, PerfectOptions, EDGE_DRAWS};
#[cfg(test)]
pub(crate) use random::random_gapped;
pub use random::{random, random_with_long, LongLived, RandomOptions};

use crate::problem::{Buffer, Problem};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// `count` buffers all live over the same time interval `[0, 10)`, with sizes uniform in
/// `[min_size, max_size]`, and capacity `Some(total size)`: LOAD equals the capacity and the
/// only packings are the stackings of all the buffers, in any order.
///
/// `min_size` is clamped to at least 1 and `max_size` to at least `min_size`. `count == 0` gives
/// an empty problem with capacity `Some(0)`. The total saturates at `u64::MAX`, so keep
/// `count * max_size` within 64 bits for a meaningful problem.
pub fn overlap(count: usize, min_size: u64, max_size: u64, seed: u64) -> Problem {
    let mut rng = StdRng::seed_from_u64(seed);
    let min_size = min_size.max(1);
    let max_size = max_size.max(min_size);
    let buffers: Vec<Buffer> = (0..count)
        .map(|i| Buffer::new(i.to_string(), 0, 10, rng.random_range(min_size..=max_size)))
        .collect();
    let total = buffers
        .iter()
        .fold(0u64, |sum, b| sum.saturating_add(b.size));
    Problem::new(buffers, Some(total))
}
