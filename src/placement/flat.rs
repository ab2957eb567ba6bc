//! Flat layouts: many variable-length runs in one array, each starting where the last ends.

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
