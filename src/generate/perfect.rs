//! Perfect packings: a capacity x horizon rectangle cut into buffers, so a packing at LOAD
//! = capacity is known to exist.

use super::draw::{index, pick, pick_two, shuffle};
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
