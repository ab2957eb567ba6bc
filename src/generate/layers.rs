//! CNN-like layered problems: a convolutional network's activations computed tile by tile, each
//! layer's tiles staggered in time behind the layer before, with residual skips; capacity =
//! LOAD.

use crate::analysis;
use crate::problem::{Buffer, Problem};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Parameters of [`layers`].
#[derive(Clone, Debug, PartialEq)]
pub struct LayersOptions {
    /// How many buffers: `ceil(buffers / tiles)` layers of `tiles` tiles each, the last one
    /// cut short to make the count (at least 1).
    pub buffers: usize,
    /// Tiles per layer (at least 1): each layer's output is computed in this many row tiles.
    pub tiles: usize,
    /// Layers per stage (at least 1): each stage halves the tiles' size.
    pub stage: usize,
    /// The first layer's tile size before jitter (at least 4).
    pub max_size: u64,
    /// Residual skips per thousand layers: a layer's output is also read by a layer 2 to 6
    /// later (at most 1000).
    pub skip_per_mille: u64,
    /// Alignment of every buffer, a power of two: sizes are rounded up to it.
    pub alignment: u64,
}

impl Default for LayersOptions {
    /// 1,000 buffers in tiles of 20, stages of 8 layers, tiles up to 4,096 bytes, 300 skips per
    /// thousand layers, alignment 1.
    fn default() -> Self {
        LayersOptions {
            buffers: 1000,
            tiles: 20,
            stage: 8,
            max_size: 4096,
            skip_per_mille: 300,
            alignment: 1,
        }
    }
}

/// A layered problem. Tile `j` of layer `l` is computed at step `j + 2l`, after the tiles
/// `j - 1 ..= j + 1` of layer `l - 1` it reads (a 3x3 halo), and lives until the last tile of
/// layer `l + 1` that reads it is computed; a layer with a residual skip is read again, tile by
/// tile, by a layer 2 to 6 later. A layer's tiles have one size, drawn within 25% of the stage's
/// (the first layer's `max_size`, halved per stage, at least 1), the last tile of a layer a
/// smaller remainder (a row count that does not divide evenly). When `buffers` is not a multiple
/// of `tiles`, the last layer keeps only its first tiles, so that there are `buffers` buffers.
/// Buffers are named `l.j`; the capacity is LOAD.
pub fn layers(options: &LayersOptions, seed: u64) -> Problem {
    let mut rng = StdRng::seed_from_u64(seed);
    let tiles = options.tiles.max(1);
    let count = options.buffers.div_ceil(tiles).max(1);
    let stage = options.stage.max(1);
    let alignment = options.alignment.max(1);
    let step = |layer: usize, tile: usize| (tile + 2 * layer) as u64;
    // The last step at which each layer is read: by the next layer's halo, and by its skip.
    let mut last_reader: Vec<Option<usize>> = (0..count)
        .map(|l| (l + 1 < count).then_some(l + 1))
        .collect();
    let mut sizes = Vec::with_capacity(count);
    for (layer, reader) in last_reader.iter_mut().enumerate() {
        let base = (options.max_size.max(4) >> (layer / stage).min(63)).max(1);
        let size = rng.random_range(base - base / 4..=base + base / 4).max(1);
        let remainder = rng.random_range(size / 4..=size).max(1);
        sizes.push((size, remainder));
        if rng.random_range(0..1000) < options.skip_per_mille.min(1000) {
            let later = layer + rng.random_range(2..=6usize);
            if later < count {
                *reader = Some(later);
            }
        }
    }
    let wanted = options.buffers.max(1);
    let mut buffers = Vec::with_capacity(wanted);
    for (layer, &(size, remainder)) in sizes.iter().enumerate() {
        for tile in 0..tiles.min(wanted - layer * tiles) {
            let lower = step(layer, tile);
            let upper = match last_reader[layer] {
                // The reader's tile `tile + 1` (the halo) or, for a skip, its tile `tile`; at
                // least the next step.
                Some(reader) if reader == layer + 1 => step(reader, (tile + 1).min(tiles - 1)),
                Some(reader) => step(reader, tile),
                None => lower,
            } + 1;
            let size = if tile + 1 == tiles { remainder } else { size };
            let size = size.div_ceil(alignment).saturating_mul(alignment);
            let mut buffer = Buffer::new(format!("{layer}.{tile}"), lower, upper, size);
            buffer.alignment = alignment;
            buffers.push(buffer);
        }
    }
    let mut problem = Problem::new(buffers, None);
    problem.capacity = Some(analysis::load(&problem));
    problem
}
