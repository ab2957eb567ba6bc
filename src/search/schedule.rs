//! The restart schedule: node budgets that grow, geometrically or by the Luby sequence.

use super::options::Schedule;

/// The Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, ... (`i` from 1).
pub fn luby(i: u64) -> u64 {
    let mut i = i.max(1);
    loop {
        // Find k with 2^(k-1) <= i < 2^k.
        let k = 64 - i.leading_zeros() as u64;
        if i == (1u64 << k) - 1 {
            return 1u64 << (k - 1);
        }
        i -= (1u64 << (k - 1)) - 1;
    }
}

/// The node budget of round `round` (from 0) for a problem of `buffers` buffers.
/// Geometric: `buffers * 2^(round + 1)`; Luby: `buffers * 4 * luby(round + 1)`.
pub fn budget(schedule: Schedule, round: u32, buffers: usize) -> u64 {
    let unit = (buffers as u64).max(16);
    match schedule {
        Schedule::Geometric => unit.saturating_mul(1u64 << (round + 1).min(62)),
        Schedule::Luby => unit.saturating_mul(4 * luby(round as u64 + 1)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn luby_sequence_starts_as_published() {
        let seq: Vec<u64> = (1..=15).map(luby).collect();
        assert_eq!(seq, [1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8]);
    }

    #[test]
    fn geometric_budgets_double() {
        assert_eq!(budget(Schedule::Geometric, 0, 100), 200);
        assert_eq!(budget(Schedule::Geometric, 3, 100), 1600);
    }
}
