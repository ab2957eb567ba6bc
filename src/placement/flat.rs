//! Flat layouts: many variable-length runs in one array, each starting where the last ends; and
//! the canonical cover of a bottom-up tree laid out in one array (node 1 the root, leaf `i` node
//! `leaves + i`).

/// `[0, c0, c0 + c1, ...]`: where each count's run starts, and the total last.
pub(super) fn running_sums(counts: &[u32]) -> Vec<usize> {
    let mut sums = Vec::with_capacity(counts.len() + 1);
    let mut total = 0usize;
    sums.push(0);
    for &count in counts {
        total += count as usize;
        sums.push(total);
    }
    sums
}

/// Calls `visit` with each node of the canonical cover of leaves `[lo, hi)` in a bottom-up tree
/// of `leaves` leaves: disjoint nodes, at most two a level, together exactly those leaves.
pub(super) fn for_each_cover(leaves: usize, lo: usize, hi: usize, mut visit: impl FnMut(usize)) {
    let (mut l, mut r) = (lo + leaves, hi.min(leaves) + leaves);
    while l < r {
        if l % 2 == 1 {
            visit(l);
            l += 1;
        }
        if r % 2 == 1 {
            r -= 1;
            visit(r);
        }
        l /= 2;
        r /= 2;
    }
}

/// The leaves `[from, to)` under `node` in a bottom-up tree of `leaves` leaves.
pub(super) fn leaves_under(leaves: usize, node: usize) -> (usize, usize) {
    let level = leaves.ilog2() - node.ilog2();
    let from = (node << level) - leaves;
    (from, from + (1 << level))
}
