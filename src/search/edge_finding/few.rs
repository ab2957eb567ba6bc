//! Scratch space for a section with few distinct bounds: its cells bucketed as the tasks are
//! read, without a sort.

/// Distinct lowest offsets (and ends) at most for which a pass buckets its tasks as it reads
/// them (a section's tasks share a handful of each); with more it lists them and sorts.
pub(super) const FEW: usize = 16;

/// Scratch space of [`EdgeFinder::scan_few`]: the `d` lowest offsets and `h` ends in the order
/// they first appear, `FEW x FEW` cells in that order, and the order of ascending values.
pub(super) struct Few {
    pub(super) lows: [u64; FEW],
    pub(super) highs: [u64; FEW],
    pub(super) d: usize,
    pub(super) h: usize,
    pub(super) rows: [usize; FEW],
    pub(super) columns: [usize; FEW],
    pub(super) inside: [u64; FEW * FEW],
    pub(super) largest: [u64; FEW * FEW],
}

impl Few {
    /// An empty scratch space.
    pub(super) fn new() -> Few {
        Few {
            lows: [0; FEW],
            highs: [0; FEW],
            d: 0,
            h: 0,
            rows: [0; FEW],
            columns: [0; FEW],
            inside: [0; FEW * FEW],
            largest: [0; FEW * FEW],
        }
    }

    /// The cell of the `i`-th lowest offset and `j`-th end seen (both below [`FEW`]; the
    /// remainder only tells the compiler so).
    #[inline(always)]
    pub(super) fn cell(i: usize, j: usize) -> usize {
        (i * FEW + j) % (FEW * FEW)
    }

    /// Empties cell `(i, j)`.
    #[inline(always)]
    pub(super) fn clear(&mut self, i: usize, j: usize) {
        let cell = Few::cell(i, j);
        self.inside[cell] = 0;
        self.largest[cell] = 0;
    }
}

/// Fills `order` with the positions of `values` (distinct, a handful) in ascending order of
/// the values, by insertion.
pub(super) fn ascending_order(values: &[u64], order: &mut [usize]) {
    for (k, &v) in values.iter().enumerate() {
        let mut p = k;
        while p > 0 && values[order[p - 1]] > v {
            order[p] = order[p - 1];
            p -= 1;
        }
        order[p] = k;
    }
}
