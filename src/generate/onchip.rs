//! On-chip scratchpad problems drawn from a whole-model problem: the buffers kept greedily
//! while they fit under a fraction of its LOAD.

use super::draw::pick;
use crate::analysis;
use crate::problem::{Buffer, Problem};
use rand::rngs::StdRng;
use rand::SeedableRng;
use std::cmp::Reverse;

/// `tightness * TIGHTNESS_SCALE`, rounded to an integer (a negative or non-finite tightness
/// counts as 1; huge values saturate).
/// The order in which [`onchip`] offers buffers to the scratchpad (most beneficial first). Every
/// order multiplies its measure by a seeded factor in [0.75, 1.25), so that seeds differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Benefit {
    /// Size x lifetime: the bytes x steps kept off external memory.
    #[default]
    Area,
    /// Size alone: the largest tensors first.
    Size,
    /// Size per step of lifetime: large, short-lived tensors first.
    Density,
    /// No measure: the seeded factor alone, a random order.
    Random,
}

impl Benefit {
    /// The measure of `buffer`, scaled by 2^20 so that integer division keeps precision.
    fn measure(self, buffer: &Buffer) -> u128 {
        match self {
            Benefit::Area => buffer.area(),
            Benefit::Size => buffer.size as u128,
            Benefit::Density => ((buffer.size as u128) << 20) / buffer.lifetime().max(1) as u128,
            Benefit::Random => 1,
        }
    }
}

/// How [`onchip`] tiles buffers larger than half the capacity (same lifetime, as a compiler
/// tiling a large tensor would).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tiling {
    /// Tiles of a quarter of the capacity (the last one smaller).
    #[default]
    Quarters,
    /// This many tiles of equal size (within one byte), or more if a tile would still exceed
    /// half the capacity.
    Count(u64),
    /// No tiling: buffers larger than the capacity are dropped, the others offered whole.
    Off,
}

/// Options of [`onchip`].
#[derive(Clone, Debug, PartialEq)]
pub struct OnchipOptions {
    /// Capacity as a share of the source problem's LOAD (e.g. 0.15 to 0.5), in per mille.
    pub per_mille: u64,
    /// How buffers larger than half the capacity are tiled.
    pub tiling: Tiling,
    /// The order in which buffers are offered.
    pub benefit: Benefit,
    /// Every buffer's alignment (a power of two); sizes are rounded up to a multiple of it.
    pub alignment: u64,
}

impl Default for OnchipOptions {
    fn default() -> Self {
        OnchipOptions {
            per_mille: 300,
            tiling: Tiling::Quarters,
            benefit: Benefit::Area,
            alignment: 1,
        }
    }
}

/// The tiles of `buffer` for `capacity`: the buffer itself when it needs none, nothing when it
/// cannot fit at all.
pub(super) fn tiles(buffer: &Buffer, capacity: u64, tiling: Tiling) -> Vec<Buffer> {
    let count = match tiling {
        _ if buffer.size <= capacity / 2 || capacity < 4 => 1,
        Tiling::Off => 1,
        Tiling::Quarters => buffer.size.div_ceil((capacity / 4).max(1)),
        Tiling::Count(count) => count
            .max(buffer.size.div_ceil(capacity / 2))
            .min(buffer.size),
    };
    if count == 1 {
        return if buffer.size <= capacity {
            vec![buffer.clone()]
        } else {
            Vec::new()
        };
    }
    let size = |k: u64| match tiling {
        // Whole quarters, the last tile what is left.
        Tiling::Quarters => {
            let quarter = (capacity / 4).max(1);
            quarter.min(buffer.size - quarter * k)
        }
        // Equal shares, the first `size % count` one byte larger.
        _ => buffer.size / count + u64::from(k < buffer.size % count),
    };
    (0..count)
        .map(|k| Buffer {
            id: format!("{}#{k}", buffer.id),
            size: size(k),
            ..buffer.clone()
        })
        .collect()
}

/// An on-chip scratchpad problem drawn from a whole-model problem: capacity = `per_mille` x LOAD
/// / 1000; the buffers (tiled and aligned as the options say) are considered in a benefit order
/// (see [`Benefit`]; each measure scaled by a seeded factor in [0.75, 1.25) so that seeds differ)
/// and one is kept on chip only if the live total stays within the capacity at every step. Kept
/// buffers fill the capacity at many steps at once: the hard case for memory planning.
/// Deterministic from the seed; the default options give what this generator always gave.
pub fn onchip(source: &Problem, options: &OnchipOptions, seed: u64) -> Problem {
    let load = analysis::load(source);
    let capacity = ((load as u128 * options.per_mille.max(1) as u128).div_ceil(1000) as u64).max(1);
    let alignment = options.alignment.max(1);
    let mut rng = StdRng::seed_from_u64(seed);
    let pieces: Vec<Buffer> = source
        .buffers
        .iter()
        .filter(|b| b.offset.is_none())
        .flat_map(|b| tiles(b, capacity, options.tiling))
        .filter_map(|b| {
            let size = crate::problem::align_up(b.size, alignment)?;
            (size <= capacity).then_some(Buffer {
                size,
                alignment: b.alignment.max(alignment),
                ..b
            })
        })
        .collect();
    let candidates = Problem::new(pieces, None);
    let timeline = analysis::Timeline::new(&candidates);
    // Benefit order with seeded factors (integers only: per mille).
    let mut order: Vec<(u128, usize)> = candidates
        .buffers
        .iter()
        .enumerate()
        .map(|(i, b)| {
            let factor = 750 + pick(&mut rng, 500) as u128;
            (options.benefit.measure(b) * factor, i)
        })
        .collect();
    order.sort_by_key(|&(benefit, i)| (Reverse(benefit), i));
    let mut live = crate::search::max_tree::MaxTree::new(&vec![0i128; timeline.len()]);
    let mut kept = vec![false; candidates.len()];
    for &(_, i) in &order {
        let span = timeline.buffer_sections[i].clone();
        let size = candidates.buffers[i].size as i128;
        let (peak, _) = live.max(span.clone()).unwrap_or((0, 0));
        if peak + size <= capacity as i128 {
            live.add(span, size);
            kept[i] = true;
        }
    }
    let buffers = candidates
        .buffers
        .into_iter()
        .zip(kept)
        .filter_map(|(b, keep)| keep.then_some(b))
        .collect();
    Problem::new(buffers, Some(capacity))
}
