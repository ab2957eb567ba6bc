//! The seeded draws every generator shares: integers and shuffles sampled as `u64`, so the
//! same on every platform.

use rand::rngs::StdRng;
use rand::RngExt;

/// A uniform integer in `[1, count]` (`count >= 1`).
pub(super) fn pick(rng: &mut StdRng, count: u64) -> u64 {
    rng.random_range(1..=count)
}

/// Two distinct uniform integers in `[1, count]`, ascending (`count >= 2`).
pub(super) fn pick_two(rng: &mut StdRng, count: u64) -> (u64, u64) {
    let first = pick(rng, count);
    let mut second = pick(rng, count - 1);
    if second >= first {
        second += 1;
    }
    (first.min(second), first.max(second))
}

/// A uniform index in `[0, len)` (`len >= 1`); sampled as `u64` so it is the same on every
/// platform.
pub(super) fn index(rng: &mut StdRng, len: usize) -> usize {
    rng.random_range(0..len as u64) as usize
}

/// Fisher–Yates shuffle drawing `u64` indices (portable across platforms).
pub(super) fn shuffle<T>(rng: &mut StdRng, items: &mut [T]) {
    for i in (1..items.len()).rev() {
        let j = index(rng, i + 1);
        items.swap(i, j);
    }
}
