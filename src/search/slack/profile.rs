//! The slack profile of a nearly full problem: how much of the capacity is free over each
//! section, as the rises and falls that [`super::cuts`] cuts into phantom buffers, and the
//! one routine every cut closes open slack with.

use crate::search::instance::Instance;
use std::collections::VecDeque;

/// Each section's slack: the capacity less the sizes live there; None when a section is over
/// the capacity.
pub(crate) fn section_slack(instance: &Instance) -> Option<Vec<u64>> {
    instance
        .totals
        .iter()
        .map(|&total| instance.capacity.checked_sub(total))
        .collect()
}

/// A change of a slack profile at a section boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// The slack rises by this much.
    Rise(u64),
    /// The slack falls by this much.
    Fall(u64),
}

/// The rises and falls of a slack profile, in time order: `slack[s]` is the slack over
/// `[starts[s], ends[s])` (sections in time order); a gap between two sections closes all the
/// slack before it, and so does the end.
pub(crate) fn steps(slack: &[u64], starts: &[u64], ends: &[u64]) -> Vec<(u64, Step)> {
    let mut out = Vec::new();
    let mut level = 0;
    for s in 0..slack.len() {
        if s > 0 && ends[s - 1] != starts[s] && level > 0 {
            out.push((ends[s - 1], Step::Fall(level)));
            level = 0;
        }
        let here = slack[s];
        if here > level {
            out.push((starts[s], Step::Rise(here - level)));
        } else if here < level {
            out.push((starts[s], Step::Fall(level - here)));
        }
        level = here;
    }
    if let (Some(&end), true) = (ends.last(), level > 0) {
        out.push((end, Step::Fall(level)));
    }
    out
}

/// Closes at most `amount` of open slack `i` at time `at` as a phantom added to `out` (the
/// slack leaves `open` once all of it is closed); returns the amount closed.
pub(crate) fn close_part(
    open: &mut VecDeque<(u64, u64)>,
    i: usize,
    (at, amount): (u64, u64),
    out: &mut Vec<(u64, u64, u64)>,
) -> u64 {
    let (start, size) = open[i];
    let taken = size.min(amount);
    out.push((start, at, taken));
    if taken == size {
        open.remove(i);
    } else {
        open[i].1 -= taken;
    }
    taken
}

/// Over each section (starting at `starts`), the sizes of the phantoms `(lower, upper, size)`
/// live there: a cut of a profile gives back its slack.
#[cfg(test)]
pub(crate) fn covered(phantoms: &[(u64, u64, u64)], starts: &[u64]) -> Vec<u64> {
    starts
        .iter()
        .map(|&t| {
            phantoms
                .iter()
                .filter(|&&(lower, upper, _)| lower <= t && t < upper)
                .map(|p| p.2)
                .sum()
        })
        .collect()
}
