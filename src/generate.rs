//! Deterministic problem generators: perfect packings, all-overlapping sets and random problems.
//!
//! Every generator is a pure function of its parameters and a `u64` seed: the same inputs give
//! the same [`Problem`] bit for bit on any machine. They draw only from
//! [`StdRng::seed_from_u64`], sample only integers (the one `f64` input, the tightness of
//! [`RandomOptions`], is converted once to an integer ratio) and never iterate hash maps.

use crate::analysis;
use crate::problem::{Buffer, Problem, Solution};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// How [`perfect`] cuts the address × time rectangle into buffers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CutStyle {
    /// Only full cuts across a piece (address or time), so the packing is guillotine-separable.
    Guillotine,
    /// Pinwheel cuts (a centre piece with four arms around it) wherever a piece is large enough
    /// and the buffer budget allows, full cuts otherwise; the packing is then not
    /// guillotine-separable.
    NonGuillotine,
    /// Each split is a pinwheel or a full cut with equal chance.
    #[default]
    Mixed,
    /// Full cuts only (guillotine-separable), three in four of them across addresses where both
    /// are possible: mostly long-lived, small buffers ("thin" shapes).
    Thin,
    /// Full cuts only (guillotine-separable), three in four of them across time where both are
    /// possible: mostly short-lived, large buffers ("time slabs").
    TimeSlab,
}

impl CutStyle {
    /// Whether a full cut goes across addresses, when both an address and a time cut are
    /// possible. The three original styles draw one fair bit (their streams are unchanged).
    fn address_cut(self, rng: &mut StdRng) -> bool {
        match self {
            CutStyle::Guillotine | CutStyle::NonGuillotine | CutStyle::Mixed => {
                rng.random_range(0..2u64) == 0
            }
            CutStyle::Thin => rng.random_range(0..4u64) < 3,
            CutStyle::TimeSlab => rng.random_range(0..4u64) == 0,
        }
    }
}

/// How many uniform draws [`CutPositions::Edge`] takes the smallest of (expected position: a
/// fifth of the way in).
pub const EDGE_DRAWS: u32 = 4;

/// Where [`perfect`] places a cut inside a piece, among the positions possible.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CutPositions {
    /// Every position equally likely.
    #[default]
    Uniform,
    /// Near the middle (the mean of two uniform draws): pieces of similar sizes.
    Central,
    /// Near either edge (the smallest of [`EDGE_DRAWS`] uniform draws, from a random side): a
    /// thin piece beside a large one, so many small buffers beside larger ones.
    Edge,
}

impl CutPositions {
    /// A position in `[1, count]` (`count >= 1`) drawn from this distribution. [`Uniform`]
    /// draws once, as the generator always did, so its streams are unchanged.
    ///
    /// [`Uniform`]: CutPositions::Uniform
    fn pick(self, rng: &mut StdRng, count: u64) -> u64 {
        match self {
            CutPositions::Uniform => pick(rng, count),
            CutPositions::Central => {
                let (a, b) = (pick(rng, count), pick(rng, count));
                (a + b).div_ceil(2)
            }
            CutPositions::Edge => {
                let near = (0..EDGE_DRAWS).fold(count, |near, _| near.min(pick(rng, count)));
                if rng.random_range(0..2u64) == 0 {
                    near
                } else {
                    count + 1 - near
                }
            }
        }
    }

    /// Two distinct positions in `[1, count]`, ascending (`count >= 2`).
    fn pick_two(self, rng: &mut StdRng, count: u64) -> (u64, u64) {
        if self == CutPositions::Uniform {
            return pick_two(rng, count);
        }
        let first = self.pick(rng, count);
        let mut second = self.pick(rng, count - 1);
        if second >= first {
            second += 1;
        }
        (first.min(second), first.max(second))
    }
}

/// Parameters of [`perfect`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PerfectOptions {
    /// The capacity: the address extent of the rectangle that is cut (clamped to at least 1).
    pub capacity: u64,
    /// The time extent of the rectangle that is cut (clamped to at least 1).
    pub horizon: u64,
    /// How many pieces to cut (clamped to at least 1). Fewer come out when the pieces cannot be
    /// cut further (e.g. capacity 1 and horizon 1 give one buffer).
    pub buffers: usize,
    /// How the pieces are cut.
    pub style: CutStyle,
    /// How many random pieces to remove after cutting (at most all of them).
    pub remove: usize,
    /// Address cuts fall on multiples of this, and every buffer gets it as its alignment.
    /// Rounded up to a power of two (0 counts as 1).
    pub alignment: u64,
    /// Where cuts fall inside a piece.
    pub cuts: CutPositions,
}

impl Default for PerfectOptions {
    /// Capacity 1024, horizon 100, 50 buffers, [`CutStyle::Mixed`], nothing removed, alignment
    /// 1, uniform cut positions.
    fn default() -> Self {
        PerfectOptions {
            capacity: 1024,
            horizon: 100,
            buffers: 50,
            style: CutStyle::Mixed,
            remove: 0,
            alignment: 1,
            cuts: CutPositions::Uniform,
        }
    }
}

/// One piece of the cut rectangle: addresses `[addr, addr + size)` over times `[lower, upper)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rect {
    addr: u64,
    size: u64,
    lower: u64,
    upper: u64,
}

impl Rect {
    fn area(&self) -> u128 {
        self.size as u128 * (self.upper - self.lower) as u128
    }

    /// How many aligned addresses lie strictly inside the piece (possible address cuts).
    /// `addr` is always a multiple of `alignment`.
    fn address_cuts(&self, alignment: u64) -> u64 {
        (self.size - 1) / alignment
    }

    /// How many time steps lie strictly inside the piece (possible time cuts).
    fn time_cuts(&self) -> u64 {
        self.upper - self.lower - 1
    }
}

/// A uniform integer in `[1, count]` (`count >= 1`).
fn pick(rng: &mut StdRng, count: u64) -> u64 {
    rng.random_range(1..=count)
}

/// Two distinct uniform integers in `[1, count]`, ascending (`count >= 2`).
fn pick_two(rng: &mut StdRng, count: u64) -> (u64, u64) {
    let first = pick(rng, count);
    let mut second = pick(rng, count - 1);
    if second >= first {
        second += 1;
    }
    (first.min(second), first.max(second))
}

/// A uniform index in `[0, len)` (`len >= 1`); sampled as `u64` so it is the same on every
/// platform.
fn index(rng: &mut StdRng, len: usize) -> usize {
    rng.random_range(0..len as u64) as usize
}

/// Cuts `r` in two by a full address or time cut, or `None` if neither is possible.
fn guillotine_cut(
    rng: &mut StdRng,
    r: Rect,
    alignment: u64,
    (style, cuts): (CutStyle, CutPositions),
) -> Option<[Rect; 2]> {
    let (address, time) = (r.address_cuts(alignment), r.time_cuts());
    let by_address = match (address > 0, time > 0) {
        (false, false) => return None,
        (true, false) => true,
        (false, true) => false,
        (true, true) => style.address_cut(rng),
    };
    Some(if by_address {
        let cut = r.addr + cuts.pick(rng, address) * alignment;
        [
            Rect {
                size: cut - r.addr,
                ..r
            },
            Rect {
                addr: cut,
                size: r.addr + r.size - cut,
                ..r
            },
        ]
    } else {
        let cut = r.lower + cuts.pick(rng, time);
        [Rect { upper: cut, ..r }, Rect { lower: cut, ..r }]
    })
}

/// Cuts `r` into a pinwheel: a centre piece and four arms turning around it, either way round,
/// so that no full cut separates the five. `None` if `r` lacks two inner cuts in each dimension.
fn pinwheel_cut(
    rng: &mut StdRng,
    r: Rect,
    alignment: u64,
    cuts: CutPositions,
) -> Option<[Rect; 5]> {
    let (address, time) = (r.address_cuts(alignment), r.time_cuts());
    if address < 2 || time < 2 {
        return None;
    }
    let (j1, j2) = cuts.pick_two(rng, address);
    let (k1, k2) = cuts.pick_two(rng, time);
    let a = [
        r.addr,
        r.addr + j1 * alignment,
        r.addr + j2 * alignment,
        r.addr + r.size,
    ];
    let t = [r.lower, r.lower + k1, r.lower + k2, r.upper];
    // A piece covering address slots [a[a0], a[a1]) and time slots [t[t0], t[t1]).
    let piece = |a0: usize, a1: usize, t0: usize, t1: usize| Rect {
        addr: a[a0],
        size: a[a1] - a[a0],
        lower: t[t0],
        upper: t[t1],
    };
    let centre = piece(1, 2, 1, 2);
    Some(if rng.random_range(0..2u64) == 0 {
        [
            centre,
            piece(0, 2, 0, 1), // early, from the bottom address up to the centre's top
            piece(2, 3, 0, 2), // high addresses, from the start to the centre's end
            piece(1, 3, 2, 3), // late, from the centre's bottom up
            piece(0, 1, 1, 3), // low addresses, from the centre's start to the end
        ]
    } else {
        [
            centre,
            piece(1, 3, 0, 1), // early, from the centre's bottom up
            piece(2, 3, 1, 3), // high addresses, from the centre's start to the end
            piece(0, 2, 2, 3), // late, from the bottom address up to the centre's top
            piece(0, 1, 0, 2), // low addresses, from the start to the centre's end
        ]
    })
}

/// Cuts the `capacity × horizon` rectangle (address × time) into about `options.buffers`
/// rectangles and returns them as a problem together with the packing they came from.
///
/// With `remove == 0` the known packing fills the rectangle exactly, so LOAD, the peak of the
/// returned solution and the problem's capacity (`Some(capacity)`) are all equal: the problem is
/// feasible with no slack at all. Removing pieces keeps the packing valid at that capacity but
/// may lower LOAD.
///
/// The largest piece (by area) is split next, by a full cut or a pinwheel as `options.style`
/// says; address cuts fall on multiples of the alignment, time cuts leave at least one step on
/// each side. Every buffer has size ≥ 1 and lifetime ≥ 1. The buffers are shuffled (so their
/// order gives no hint of the packing) and named `"0"`, `"1"`, … in their final order.
pub fn perfect(options: &PerfectOptions, seed: u64) -> (Problem, Solution) {
    let mut rng = StdRng::seed_from_u64(seed);
    let capacity = options.capacity.max(1);
    let horizon = options.horizon.max(1);
    let alignment = options
        .alignment
        .max(1)
        .checked_next_power_of_two()
        .unwrap_or(1 << 63);
    let target = options.buffers.max(1);

    let mut pieces = vec![Rect {
        addr: 0,
        size: capacity,
        lower: 0,
        upper: horizon,
    }];
    // Largest area first; among equal areas the earliest-made piece, so the order is total.
    let mut heap: BinaryHeap<(u128, Reverse<usize>)> = BinaryHeap::new();
    heap.push((pieces[0].area(), Reverse(0)));
    while pieces.len() < target {
        let Some((_, Reverse(i))) = heap.pop() else {
            break; // nothing left can be split
        };
        let r = pieces[i];
        let want_pinwheel = match options.style {
            CutStyle::Guillotine | CutStyle::Thin | CutStyle::TimeSlab => false,
            CutStyle::NonGuillotine => true,
            CutStyle::Mixed => rng.random_range(0..2u64) == 0,
        };
        let pinwheel = if want_pinwheel && pieces.len() + 4 <= target {
            pinwheel_cut(&mut rng, r, alignment, options.cuts).map(|parts| parts.to_vec())
        } else {
            None
        };
        let Some(parts) = pinwheel.or_else(|| {
            guillotine_cut(&mut rng, r, alignment, (options.style, options.cuts))
                .map(|parts| parts.to_vec())
        }) else {
            continue; // a piece that cannot be cut stays as it is
        };
        pieces[i] = parts[0];
        heap.push((parts[0].area(), Reverse(i)));
        for &part in &parts[1..] {
            heap.push((part.area(), Reverse(pieces.len())));
            pieces.push(part);
        }
    }

    for _ in 0..options.remove.min(pieces.len()) {
        let i = index(&mut rng, pieces.len());
        pieces.swap_remove(i);
    }
    shuffle(&mut rng, &mut pieces);

    let buffers = pieces
        .iter()
        .enumerate()
        .map(|(i, r)| Buffer {
            alignment,
            ..Buffer::new(i.to_string(), r.lower, r.upper, r.size)
        })
        .collect();
    let offsets = pieces.iter().map(|r| r.addr).collect();
    (Problem::new(buffers, Some(capacity)), Solution { offsets })
}

/// Fisher–Yates shuffle drawing `u64` indices (portable across platforms).
fn shuffle<T>(rng: &mut StdRng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = index(rng, i + 1);
        items.swap(i, j);
    }
}

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
fn tiles(buffer: &Buffer, capacity: u64, tiling: Tiling) -> Vec<Buffer> {
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

fn tightness_ratio(tightness: f64) -> u128 {
    let tightness = if tightness.is_finite() && tightness >= 0.0 {
        tightness
    } else {
        1.0
    };
    // One IEEE multiplication and rounding: the same on every machine. `as` saturates.
    (tightness * TIGHTNESS_SCALE as f64).round() as u64 as u128
}

#[cfg(test)]
mod tests {
    #[test]
    fn onchip_keeps_load_within_the_capacity_and_is_deterministic() {
        let source = onchip_source();
        for per_mille in [150, 300, 500] {
            let options = OnchipOptions {
                per_mille,
                ..Default::default()
            };
            for seed in 0..5 {
                let p = onchip(&source, &options, seed);
                let capacity = p.capacity.expect("a capacity");
                assert!(analysis::load(&p) <= capacity);
                assert!(p.buffers.iter().all(|b| b.size <= capacity));
                assert_eq!(p, onchip(&source, &options, seed));
                // Tight: some step is filled to at least 90% of the capacity.
                assert!(
                    analysis::load(&p) * 10 >= capacity * 9,
                    "{per_mille} {seed}"
                );
            }
            assert_ne!(onchip(&source, &options, 1), onchip(&source, &options, 2));
        }
    }

    use super::*;
    use crate::validate::validate;

    /// The rectangles of a packing as `(addr_lo, addr_hi, time_lo, time_hi)`.
    fn rects(problem: &Problem, solution: &Solution) -> Vec<(u64, u64, u64, u64)> {
        problem
            .buffers
            .iter()
            .zip(&solution.offsets)
            .map(|(b, &o)| (o, o + b.size, b.lower, b.upper))
            .collect()
    }

    /// Whether a set of rectangles can be separated recursively by full cuts, in address or
    /// time, that cross no rectangle. A tiling that is not contains a pinwheel-like structure.
    fn is_guillotine(rects: &[(u64, u64, u64, u64)]) -> bool {
        if rects.len() <= 1 {
            return true;
        }
        // Try every address boundary, then every time boundary, as a separating line.
        for by_time in [false, true] {
            let span = |r: &(u64, u64, u64, u64)| if by_time { (r.2, r.3) } else { (r.0, r.1) };
            let mut lines: Vec<u64> = rects.iter().map(|r| span(r).0).collect();
            lines.sort_unstable();
            lines.dedup();
            for &line in &lines[1..] {
                if rects.iter().all(|r| {
                    let (lo, hi) = span(r);
                    hi <= line || lo >= line
                }) {
                    let (below, above): (Vec<_>, Vec<_>) =
                        rects.iter().partition(|r| span(r).1 <= line);
                    return is_guillotine(&below) && is_guillotine(&above);
                }
            }
        }
        false
    }

    fn options(style: CutStyle, seed: u64) -> PerfectOptions {
        PerfectOptions {
            capacity: 16 + seed % 50,
            horizon: 8 + seed % 30,
            buffers: 1 + (seed % 40) as usize,
            style,
            remove: 0,
            alignment: 1,
            cuts: Default::default(),
        }
    }

    const STYLES: [CutStyle; 5] = [
        CutStyle::Guillotine,
        CutStyle::NonGuillotine,
        CutStyle::Mixed,
        CutStyle::Thin,
        CutStyle::TimeSlab,
    ];

    #[test]
    fn perfect_is_a_tight_valid_packing() {
        let cuts = [
            CutPositions::Uniform,
            CutPositions::Central,
            CutPositions::Edge,
        ];
        for style in STYLES {
            for seed in 0..300 {
                let o = PerfectOptions {
                    cuts: cuts[seed as usize % 3],
                    ..options(style, seed)
                };
                let (problem, solution) = perfect(&o, seed);
                let report = validate(&problem, &solution, None);
                assert!(report.is_valid(), "{style:?} seed {seed}: {report}");
                assert_eq!(problem.capacity, Some(o.capacity));
                assert_eq!(solution.peak(&problem), o.capacity, "{style:?} seed {seed}");
                assert_eq!(
                    analysis::load(&problem),
                    o.capacity,
                    "{style:?} seed {seed}"
                );
                let area: u128 = problem.buffers.iter().map(Buffer::area).sum();
                assert_eq!(area, o.capacity as u128 * o.horizon as u128);
                assert_eq!(problem.len(), o.buffers, "{style:?} seed {seed}");
                for (i, b) in problem.buffers.iter().enumerate() {
                    assert_eq!(b.id, i.to_string());
                    assert!(b.size >= 1 && b.lower < b.upper && b.upper <= o.horizon);
                }
            }
        }
    }

    /// The spread of a packing's buffer areas: their coefficient of variation.
    fn area_spread(cuts: CutPositions, seed: u64) -> f64 {
        let o = PerfectOptions {
            capacity: 1 << 20,
            horizon: 1024,
            buffers: 200,
            style: CutStyle::Guillotine,
            cuts,
            ..Default::default()
        };
        let areas: Vec<f64> = perfect(&o, seed)
            .0
            .buffers
            .iter()
            .map(|b| b.area() as f64)
            .collect();
        let mean = areas.iter().sum::<f64>() / areas.len() as f64;
        let variance = areas.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / areas.len() as f64;
        variance.sqrt() / mean
    }

    #[test]
    fn edge_cuts_spread_sizes_and_central_cuts_even_them() {
        let mean = |cuts| (0..20).map(|seed| area_spread(cuts, seed)).sum::<f64>() / 20.0;
        let (central, uniform, edge) = (
            mean(CutPositions::Central),
            mean(CutPositions::Uniform),
            mean(CutPositions::Edge),
        );
        assert!(
            central < uniform && uniform < edge,
            "{central} {uniform} {edge}"
        );
        assert!(edge > 1.5 * central, "{central} {edge}");
    }

    #[test]
    fn uniform_cuts_keep_the_generators_streams() {
        // CutPositions::Uniform must draw exactly as the generator did before it had a choice.
        let o = PerfectOptions {
            capacity: 1 << 20,
            horizon: 1024,
            buffers: 150,
            style: CutStyle::Mixed,
            ..Default::default()
        };
        let (a, _) = perfect(&o, 7);
        let (b, _) = perfect(
            &PerfectOptions {
                cuts: CutPositions::Central,
                ..o.clone()
            },
            7,
        );
        assert_ne!(a, b);
        assert_eq!(a, perfect(&o, 7).0);
    }

    /// A whole-model-like source problem for the on-chip tests.
    fn onchip_source() -> Problem {
        random(
            &RandomOptions {
                buffers: 300,
                horizon: 200,
                max_lifetime: 40,
                min_size: 1,
                max_size: 5000,
                tightness: 1.0,
            },
            5,
        )
    }

    #[test]
    fn onchip_alignment_rounds_sizes_and_sets_alignment() {
        let source = onchip_source();
        let options = OnchipOptions {
            alignment: 64,
            ..Default::default()
        };
        let p = onchip(&source, &options, 3);
        assert!(!p.is_empty());
        assert!(p
            .buffers
            .iter()
            .all(|b| b.size % 64 == 0 && b.alignment == 64));
        assert!(analysis::load(&p) <= p.capacity.unwrap());
    }

    #[test]
    fn onchip_tile_counts_split_large_buffers_evenly() {
        let mut source = onchip_source();
        source.buffers.push(Buffer::new("huge", 0, 200, 1_000_000));
        for count in [2, 3, 4] {
            let options = OnchipOptions {
                per_mille: 500,
                tiling: Tiling::Count(count),
                ..Default::default()
            };
            let capacity = onchip(&source, &options, 1).capacity.unwrap();
            // Tiles of the huge buffer, whether kept or not: their number and sizes.
            let tiles = tiles(&source.buffers[300], capacity, Tiling::Count(count));
            let expected = count.max(1_000_000u64.div_ceil(capacity / 2));
            assert_eq!(tiles.len() as u64, expected);
            assert_eq!(tiles.iter().map(|b| b.size).sum::<u64>(), 1_000_000);
            let (low, high) = (
                tiles.iter().map(|b| b.size).min().unwrap(),
                tiles.iter().map(|b| b.size).max().unwrap(),
            );
            assert!(high - low <= 1 && high <= capacity / 2 + 1, "{low} {high}");
        }
        // A buffer that needs no tiling stays whole; one above the capacity is dropped untiled.
        let small = Buffer::new("s", 0, 1, 10);
        assert_eq!(tiles(&small, 100, Tiling::Count(3)), vec![small.clone()]);
        assert!(tiles(&Buffer::new("l", 0, 1, 101), 100, Tiling::Off).is_empty());
        assert_eq!(
            tiles(&Buffer::new("m", 0, 1, 7), 8, Tiling::Count(4)).len(),
            4
        );
    }

    #[test]
    fn onchip_benefit_orders_keep_different_buffers() {
        let source = onchip_source();
        let kept = |benefit| {
            let options = OnchipOptions {
                benefit,
                ..Default::default()
            };
            let p = onchip(&source, &options, 2);
            assert!(analysis::load(&p) <= p.capacity.unwrap());
            p.buffers.into_iter().map(|b| b.id).collect::<Vec<_>>()
        };
        let all = [
            kept(Benefit::Area),
            kept(Benefit::Size),
            kept(Benefit::Density),
            kept(Benefit::Random),
        ];
        for i in 0..4 {
            for j in i + 1..4 {
                assert_ne!(all[i], all[j], "orders {i} and {j} kept the same buffers");
            }
        }
    }

    #[test]
    fn perfect_respects_alignment() {
        for style in STYLES {
            for seed in 0..50 {
                let o = PerfectOptions {
                    capacity: 1000,
                    horizon: 20,
                    buffers: 30,
                    style,
                    remove: 0,
                    alignment: 8,
                    cuts: Default::default(),
                };
                let (problem, solution) = perfect(&o, seed);
                assert!(validate(&problem, &solution, None).is_valid());
                assert!(problem.buffers.iter().all(|b| b.alignment == 8));
                assert_eq!(analysis::load(&problem), 1000);
            }
        }
    }

    #[test]
    fn perfect_with_removals_stays_feasible() {
        for style in STYLES {
            for seed in 0..50 {
                let o = PerfectOptions {
                    remove: 5,
                    ..options(style, seed + 20)
                };
                let (problem, solution) = perfect(&o, seed);
                assert!(validate(&problem, &solution, None).is_valid());
                assert_eq!(problem.len(), o.buffers.saturating_sub(5));
                assert!(analysis::load(&problem) <= o.capacity);
            }
        }
    }

    #[test]
    fn guillotine_style_is_guillotine_and_non_guillotine_is_not() {
        let mut pinwheels = 0;
        for seed in 0..100 {
            let o = PerfectOptions {
                capacity: 64,
                horizon: 32,
                buffers: 20,
                ..Default::default()
            };
            let g = perfect(
                &PerfectOptions {
                    style: CutStyle::Guillotine,
                    ..o.clone()
                },
                seed,
            );
            assert!(is_guillotine(&rects(&g.0, &g.1)), "seed {seed}");
            let n = perfect(
                &PerfectOptions {
                    style: CutStyle::NonGuillotine,
                    ..o
                },
                seed,
            );
            if !is_guillotine(&rects(&n.0, &n.1)) {
                pinwheels += 1;
            }
        }
        // The first split of a 64 x 32 rectangle is always a pinwheel.
        assert_eq!(pinwheels, 100);
    }

    #[test]
    fn thin_and_time_slab_are_guillotine_and_skewed() {
        // How many buffers are longer (as a share of the horizon) than they are large (as a
        // share of the capacity), out of how many.
        let long = |style: CutStyle, seed: u64| {
            let o = PerfectOptions {
                capacity: 1 << 20,
                horizon: 1024,
                buffers: 200,
                style,
                remove: 0,
                alignment: 1024,
                cuts: Default::default(),
            };
            let (problem, solution) = perfect(&o, seed);
            assert!(
                is_guillotine(&rects(&problem, &solution)),
                "{style:?} {seed}"
            );
            let long = problem
                .buffers
                .iter()
                .filter(|b| b.lifetime() << 20 > b.size * 1024)
                .count();
            (long, problem.len())
        };
        for seed in 0..20 {
            let (thin, n) = long(CutStyle::Thin, seed);
            assert!(thin * 3 >= n * 2, "thin seed {seed}: {thin} of {n}");
            let (slab, n) = long(CutStyle::TimeSlab, seed);
            assert!(slab * 2 < n, "time slab seed {seed}: {slab} of {n}");
        }
    }

    #[test]
    fn mixed_style_makes_some_pinwheels() {
        // With 5 buffers only the first split can be a pinwheel, which Mixed picks half the time.
        let o = PerfectOptions {
            capacity: 64,
            horizon: 32,
            buffers: 5,
            style: CutStyle::Mixed,
            ..Default::default()
        };
        let non_guillotine = (0..100)
            .filter(|&seed| {
                let (problem, solution) = perfect(&o, seed);
                !is_guillotine(&rects(&problem, &solution))
            })
            .count();
        assert!((20..=80).contains(&non_guillotine), "{non_guillotine}");
    }

    /// Pins a few outputs, so a change of generator or of `rand`'s streams shows up here.
    #[test]
    fn golden_outputs() {
        let sizes: Vec<u64> = overlap(4, 1, 100, 1)
            .buffers
            .iter()
            .map(|b| b.size)
            .collect();
        assert_eq!(sizes, [98, 70, 43, 18]);
        let o = PerfectOptions {
            capacity: 10,
            horizon: 6,
            buffers: 5,
            style: CutStyle::NonGuillotine,
            ..Default::default()
        };
        let (problem, solution) = perfect(&o, 1);
        let shapes: Vec<(u64, u64, u64)> = problem
            .buffers
            .iter()
            .map(|b| (b.lower, b.upper, b.size))
            .collect();
        assert_eq!(
            shapes,
            [(1, 3, 3), (3, 6, 4), (0, 3, 1), (0, 1, 9), (1, 6, 6)]
        );
        assert_eq!(solution.offsets, [6, 6, 9, 0, 0]);
        let o = RandomOptions {
            buffers: 3,
            ..Default::default()
        };
        let problem = random(&o, 1);
        let shapes: Vec<(u64, u64, u64)> = problem
            .buffers
            .iter()
            .map(|b| (b.lower, b.upper, b.size))
            .collect();
        assert_eq!(shapes, [(194, 200, 439), (35, 48, 986), (77, 113, 533)]);
        assert_eq!(problem.capacity, Some(1184));
    }

    #[test]
    fn pinwheel_detector_sees_a_pinwheel() {
        let pinwheel = [
            (1, 2, 1, 2),
            (0, 2, 0, 1),
            (2, 3, 0, 2),
            (1, 3, 2, 3),
            (0, 1, 1, 3),
        ];
        assert!(!is_guillotine(&pinwheel));
        assert!(is_guillotine(&[(0, 1, 0, 2), (1, 2, 0, 1), (1, 2, 1, 2)]));
    }

    #[test]
    fn perfect_degenerate_parameters() {
        for (capacity, horizon, buffers) in [(1, 1, 10), (0, 0, 0), (1, 5, 3), (5, 1, 3)] {
            for style in STYLES {
                let o = PerfectOptions {
                    capacity,
                    horizon,
                    buffers,
                    style,
                    remove: 0,
                    alignment: 0,
                    cuts: Default::default(),
                };
                let (problem, solution) = perfect(&o, 7);
                assert!(validate(&problem, &solution, None).is_valid());
                assert!(!problem.is_empty());
                assert_eq!(analysis::load(&problem), capacity.max(1));
                assert!(problem.len() <= buffers.max(1));
            }
        }
        let o = PerfectOptions {
            remove: 100,
            ..Default::default()
        };
        let (problem, solution) = perfect(&o, 1);
        assert!(problem.is_empty() && solution.offsets.is_empty());
        // A non-power-of-two alignment is rounded up.
        let o = PerfectOptions {
            alignment: 6,
            ..Default::default()
        };
        let (problem, solution) = perfect(&o, 1);
        assert!(problem.buffers.iter().all(|b| b.alignment == 8));
        assert!(validate(&problem, &solution, None).is_valid());
    }

    #[test]
    fn generators_are_deterministic() {
        for style in STYLES {
            let o = PerfectOptions {
                style,
                remove: 3,
                ..Default::default()
            };
            assert_eq!(perfect(&o, 42), perfect(&o, 42));
            assert_ne!(perfect(&o, 42), perfect(&o, 43));
        }
        assert_eq!(overlap(20, 1, 100, 5), overlap(20, 1, 100, 5));
        assert_ne!(overlap(20, 1, 100, 5), overlap(20, 1, 100, 6));
        let r = RandomOptions::default();
        assert_eq!(random(&r, 9), random(&r, 9));
        assert_ne!(random(&r, 9), random(&r, 10));
    }

    #[test]
    fn overlap_load_is_capacity() {
        for seed in 0..50 {
            let problem = overlap(1 + seed as usize % 30, 3, 40, seed);
            assert_eq!(Some(analysis::load(&problem)), problem.capacity);
            assert!(problem
                .buffers
                .iter()
                .all(|b| (3..=40).contains(&b.size) && b.lower == 0 && b.upper == 10));
        }
        let empty = overlap(0, 0, 0, 1);
        assert!(empty.is_empty() && empty.capacity == Some(0));
        let clamped = overlap(4, 0, 0, 1);
        assert!(clamped.buffers.iter().all(|b| b.size == 1));
        assert_eq!(clamped.capacity, Some(4));
    }

    #[test]
    fn random_capacity_covers_load() {
        for seed in 0..50 {
            for tightness in [1.0, 1.05, 1.5, 2.0] {
                let o = RandomOptions {
                    tightness,
                    ..Default::default()
                };
                let problem = random(&o, seed);
                let load = analysis::load(&problem);
                let capacity = problem.capacity.unwrap();
                assert!(capacity >= load);
                assert_eq!(
                    capacity,
                    (load as u128 * (tightness * 1e6).round() as u128).div_ceil(1_000_000) as u64
                );
                assert!(problem.buffers.iter().all(|b| b.lower < b.upper
                    && b.upper <= o.horizon
                    && b.lifetime() <= o.max_lifetime
                    && (o.min_size..=o.max_size).contains(&b.size)));
            }
        }
        let exact = random(&RandomOptions::default(), 3);
        let load = analysis::load(&exact);
        assert_eq!(
            random(
                &RandomOptions {
                    tightness: f64::NAN,
                    ..Default::default()
                },
                3
            )
            .capacity,
            Some(load)
        );
        let degenerate = RandomOptions {
            buffers: 0,
            horizon: 0,
            max_lifetime: 0,
            min_size: 0,
            max_size: 0,
            tightness: -1.0,
        };
        assert_eq!(random(&degenerate, 1), Problem::new(vec![], Some(0)));
        let one = random(
            &RandomOptions {
                buffers: 5,
                ..degenerate
            },
            1,
        );
        assert!(one
            .buffers
            .iter()
            .all(|b| b.lower == 0 && b.upper == 1 && b.size == 1));
        assert_eq!(one.capacity, Some(5));
    }
}
