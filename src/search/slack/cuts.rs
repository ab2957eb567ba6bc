//! The fixed cuts of a slack profile into phantom buffers: nested bands, first-in-first-out
//! pieces, pieces matched by amount, and the hand-made random draws that let a hole end where
//! another starts. Over every section, each cut's phantoms add up to its slack.

use super::profile::{close_part, steps, Step};
use std::collections::{HashMap, VecDeque};

/// The nested cut of a slack profile: `slack[s]` over `[starts[s], ends[s])` (sections in time
/// order; a gap between two sections counts as no slack). Each fall closes the latest opened
/// slack first, so each phantom `(lower, upper, size)` is the band between two levels over a
/// maximal stretch where the slack reaches the upper level: a profile with `k` rises gives `k`
/// phantoms, and over every section the phantoms live there add up to its slack.
pub(super) fn nested(slack: &[u64], starts: &[u64], ends: &[u64]) -> Vec<(u64, u64, u64)> {
    matched(slack, starts, ends, |open, _| open.len() - 1)
}

/// The first-in-first-out cut of a slack profile (arguments as for [`nested`]): each fall
/// closes the earliest opened slack first, so a rise and the fall that closes it make one
/// phantom, split where amounts differ. Over every section the phantoms add up to its slack.
pub(super) fn crossing(slack: &[u64], starts: &[u64], ends: &[u64]) -> Vec<(u64, u64, u64)> {
    matched(slack, starts, ends, |_, _| 0)
}

/// The by-amount cut of a slack profile (arguments as for [`nested`]): each piece of a fall
/// closes the latest open slack of exactly its amount, as a rectangular hole closes what it
/// opened; failing that, the largest open slack within it (two holes ending together), then the
/// latest opened. Over every section the phantoms add up to its slack.
pub(super) fn by_amount(slack: &[u64], starts: &[u64], ends: &[u64]) -> Vec<(u64, u64, u64)> {
    matched(slack, starts, ends, |open, amount| {
        let latest = |keep: &dyn Fn(u64) -> bool| (0..open.len()).rev().find(|&i| keep(open[i].1));
        latest(&|a| a == amount)
            .or_else(|| {
                let within = open.iter().map(|o| o.1).filter(|&a| a < amount).max()?;
                latest(&|a| a == within)
            })
            .unwrap_or(open.len() - 1)
    })
}

/// A drawn cut of a slack profile (arguments as for [`nested`]) in which a hole may also end
/// where another starts, which the profile shows only as their difference; `coin(n)` draws a
/// number below `n`. At a rise, open slack `a` is closed and `a + rise` opened instead when a
/// later fall closes exactly `a + rise` (always when no later fall closes the rise alone, else
/// on a coin flip). At a fall, open slack of the fall's amount is closed when there is some;
/// else a larger one whose rest a later fall closes, either partly (the rest stays open from
/// its start) or wholly with the rest reopened here (on a coin flip); else any.
pub(super) fn swapping(
    slack: &[u64],
    starts: &[u64],
    ends: &[u64],
    mut coin: impl FnMut(u64) -> u64,
) -> Vec<(u64, u64, u64)> {
    let steps = steps(slack, starts, ends);
    // How many falls of each amount are still ahead (a step's own fall is taken out as it comes).
    let mut falls_ahead: HashMap<u64, usize> = HashMap::new();
    for &(_, step) in &steps {
        if let Step::Fall(fall) = step {
            *falls_ahead.entry(fall).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    // Open slack in the order it opened: (start time, amount).
    let mut open: VecDeque<(u64, u64)> = VecDeque::new();
    for (at, step) in steps {
        if let Step::Fall(fall) = step {
            if let Some(count) = falls_ahead.get_mut(&fall) {
                *count -= 1;
            }
        }
        let closes_later = |amount: u64| falls_ahead.get(&amount).is_some_and(|&n| n > 0);
        let mut fall = match step {
            Step::Rise(rise) => {
                let swaps: Vec<usize> = (0..open.len())
                    .filter(|&i| closes_later(open[i].1 + rise))
                    .collect();
                if !swaps.is_empty() && (!closes_later(rise) || coin(2) == 0) {
                    let i = swaps[coin(swaps.len() as u64) as usize];
                    let amount = open[i].1;
                    close_part(&mut open, i, (at, amount), &mut out);
                    open.push_back((at, amount + rise));
                } else {
                    open.push_back((at, rise));
                }
                continue;
            }
            Step::Fall(fall) => fall,
        };
        while fall > 0 && !open.is_empty() {
            let pick = |keep: &dyn Fn(u64) -> bool| -> Vec<usize> {
                (0..open.len()).filter(|&i| keep(open[i].1)).collect()
            };
            let exact = pick(&|a| a == fall);
            let larger = pick(&|a| a > fall && closes_later(a - fall));
            let i = if !exact.is_empty() {
                exact[coin(exact.len() as u64) as usize]
            } else if !larger.is_empty() {
                let i = larger[coin(larger.len() as u64) as usize];
                if coin(2) == 0 {
                    let amount = open[i].1;
                    close_part(&mut open, i, (at, amount), &mut out);
                    open.push_back((at, amount - fall));
                    break;
                }
                i
            } else {
                coin(open.len() as u64) as usize
            };
            fall -= close_part(&mut open, i, (at, fall), &mut out);
        }
    }
    out
}

/// Cuts a slack profile (arguments as for [`nested`]) by matching falls to open slack: at each
/// piece of a fall of `amount`, `pick(open, amount)` chooses which of the open slacks
/// (`(opened at, amount)`, earliest first) it closes.
/// Over every section the phantoms add up to its slack.
pub(super) fn matched(
    slack: &[u64],
    starts: &[u64],
    ends: &[u64],
    mut pick: impl FnMut(&VecDeque<(u64, u64)>, u64) -> usize,
) -> Vec<(u64, u64, u64)> {
    let mut out = Vec::new();
    // Open slack, earliest first: (start time, amount); the amounts add up to the level.
    let mut open: VecDeque<(u64, u64)> = VecDeque::new();
    for (at, step) in steps(slack, starts, ends) {
        match step {
            Step::Rise(rise) => open.push_back((at, rise)),
            Step::Fall(mut fall) => {
                while fall > 0 && !open.is_empty() {
                    let i = pick(&open, fall).min(open.len() - 1);
                    fall -= close_part(&mut open, i, (at, fall), &mut out);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::policy::mix;
    use crate::search::slack::profile::covered as profile;

    #[test]
    fn the_levels_of_a_profile_become_bands() {
        // Slack 3, 5, 8, 3 over [0,5), [5,10), [10,12), [12,15), then a gap, then 2 over [20,25).
        let (starts, ends) = ([0, 5, 10, 12, 20], [5, 10, 12, 15, 25]);
        let slack = [3, 5, 8, 3, 2];
        let mut bands = nested(&slack, &starts, &ends);
        bands.sort();
        assert_eq!(
            bands,
            [(0, 15, 3), (5, 12, 2), (10, 12, 3), (20, 25, 2)],
            "one band per rise"
        );
        assert_eq!(profile(&bands, &starts), slack);
    }

    #[test]
    fn first_in_first_out_gives_holes_that_overlap_in_time() {
        // Two holes, 5 over [0,10) and 3 over [5,15): slack 5, 8, 3.
        let (starts, ends) = ([0, 5, 10], [5, 10, 15]);
        let slack = [5, 8, 3];
        let mut pieces = crossing(&slack, &starts, &ends);
        pieces.sort();
        assert_eq!(pieces, [(0, 10, 5), (5, 15, 3)]);
        assert_eq!(profile(&pieces, &starts), slack);
        // The nested bands of the same profile are three.
        assert_eq!(nested(&slack, &starts, &ends).len(), 3);
        // Nested holes, 5 over [0,15) and 3 over [5,10): split where the inner one ends.
        let slack = [5, 8, 5];
        let pieces = crossing(&slack, &starts, &ends);
        assert_eq!(profile(&pieces, &starts), slack);
    }

    #[test]
    fn closing_by_amount_recovers_rectangular_holes_the_other_cuts_miss() {
        // Three holes: 5 over [0,20), 3 over [5,10) and 4 over [8,15).
        let (starts, ends) = ([0, 5, 8, 10, 15], [5, 8, 10, 15, 20]);
        let slack = [5, 8, 12, 9, 5];
        let holes = vec![(0, 20, 5), (5, 10, 3), (8, 15, 4)];
        let mut pieces = by_amount(&slack, &starts, &ends);
        pieces.sort();
        assert_eq!(pieces, holes);
        // Latest first and earliest first both split a hole at the first fall.
        for other in [
            nested(&slack, &starts, &ends),
            crossing(&slack, &starts, &ends),
        ] {
            assert_eq!(profile(&other, &starts), slack);
            assert_ne!(other.len(), 3, "{other:?}");
        }
        // Two holes ending together, 5 over [0,6) and 3 over [2,6), beside 1 over [4,9): each
        // closes whole (the largest open slack within the fall first).
        let (starts, ends) = ([0, 2, 4, 6], [2, 4, 6, 9]);
        let slack = [5, 8, 9, 1];
        let mut pieces = by_amount(&slack, &starts, &ends);
        pieces.sort();
        assert_eq!(pieces, [(0, 6, 5), (2, 6, 3), (4, 9, 1)]);
        assert_eq!(nested(&slack, &starts, &ends).len(), 4);
    }

    #[test]
    fn a_swapping_draw_lets_a_hole_end_where_another_starts() {
        // 3 over [0,4), then 5 over [4,8): the profile rises by 2 at 4.
        let (starts, ends) = ([0, 4], [4, 8]);
        let slack = [3, 5];
        for seed in 0..8u64 {
            let mut n = 0;
            let mut pieces = swapping(&slack, &starts, &ends, |k| {
                n += 1;
                mix(seed ^ n) % k
            });
            pieces.sort();
            assert_eq!(pieces, [(0, 4, 3), (4, 8, 5)], "seed {seed}");
        }
        // The nested bands keep the first hole open to the end.
        let mut bands = nested(&slack, &starts, &ends);
        bands.sort();
        assert_eq!(bands, [(0, 8, 3), (4, 8, 2)]);
        // Any draw fills the profile exactly.
        let (starts, ends) = ([0, 2, 4, 6, 9], [2, 4, 6, 9, 12]);
        let slack = [4, 6, 3, 7, 2];
        for seed in 0..32u64 {
            let mut n = 0;
            let pieces = swapping(&slack, &starts, &ends, |k| {
                n += 1;
                mix(seed ^ n) % k
            });
            assert_eq!(profile(&pieces, &starts), slack, "seed {seed}");
            assert!(pieces
                .iter()
                .all(|&(lower, upper, size)| lower < upper && size > 0));
        }
    }

    #[test]
    fn no_slack_gives_no_phantoms() {
        assert!(nested(&[0, 0], &[0, 4], &[4, 9]).is_empty());
        assert!(crossing(&[0, 0], &[0, 4], &[4, 9]).is_empty());
    }
}
