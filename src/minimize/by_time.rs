//! The buffers of a problem indexed by time: those overlapping a window of time found without
//! a scan of all, and windows that reach so many starts of buffers around one.

use crate::problem::{Buffer, Problem};

/// The buffers of a problem by time, to find those overlapping a window without a scan of all:
/// the short ones by start, the few long ones apart.
pub(crate) struct ByTime {
    /// The short buffers by `lower`, and their `lower`s.
    short: Vec<u32>,
    lowers: Vec<u64>,
    /// The longest lifetime among the short buffers.
    longest_short: u64,
    /// The buffers living longer (about one in a hundred).
    long: Vec<u32>,
}

impl ByTime {
    /// The index of `problem`'s buffers.
    pub(crate) fn new(problem: &Problem) -> ByTime {
        let b = &problem.buffers;
        let mut lifetimes: Vec<u64> = b.iter().map(|x| x.lifetime()).collect();
        let at = lifetimes.len() * 99 / 100;
        let longest_short = if lifetimes.is_empty() {
            0
        } else {
            *lifetimes.select_nth_unstable(at).1
        };
        let (mut short, mut long) = (Vec::new(), Vec::new());
        for (i, x) in b.iter().enumerate() {
            if x.lifetime() <= longest_short {
                short.push(i as u32);
            } else {
                long.push(i as u32);
            }
        }
        short.sort_by_key(|&i| (b[i as usize].lower, i));
        let lowers = short.iter().map(|&i| b[i as usize].lower).collect();
        ByTime {
            short,
            lowers,
            longest_short,
            long,
        }
    }

    /// The window of time `(from, to)` around `buffer`'s lifetime that reaches `starts` starts
    /// of short buffers before it and after it.
    pub(crate) fn around(&self, buffer: &Buffer, starts: usize) -> (u64, u64) {
        if self.lowers.is_empty() {
            return (buffer.lower, buffer.upper);
        }
        let at = self.lowers.partition_point(|&l| l < buffer.lower);
        let before = self.lowers[at.saturating_sub(starts)];
        let after = self.lowers[(at + starts).min(self.lowers.len() - 1)];
        (buffer.lower.min(before), buffer.upper.max(after))
    }

    /// The buffers live at some time in `[from, to)`, in index order.
    pub(crate) fn overlapping(&self, problem: &Problem, (from, to): (u64, u64)) -> Vec<usize> {
        let b = &problem.buffers;
        let first = self
            .lowers
            .partition_point(|&l| l < from.saturating_sub(self.longest_short));
        let last = self.lowers.partition_point(|&l| l < to);
        let live = |i: usize| b[i].lower < to && from < b[i].upper;
        let mut found: Vec<usize> = self.short[first..last]
            .iter()
            .chain(&self.long)
            .map(|&i| i as usize)
            .filter(|&i| live(i))
            .collect();
        found.sort_unstable();
        found
    }
}

/// The buffers `live` of `problem` (indices, in order) as a problem of their own, their
/// lifetimes clipped to `(from, to)` (fixed offsets and alignments kept; hints, memories and
/// benefits dropped).
pub(crate) fn clipped(problem: &Problem, live: &[usize], (from, to): (u64, u64)) -> Problem {
    let buffers = live
        .iter()
        .map(|&i| {
            let b = &problem.buffers[i];
            retimed(b, (b.lower.max(from), b.upper.min(to)))
        })
        .collect();
    Problem::new(buffers, None)
}

/// The buffers `live` of `problem` (indices, in order) as a problem of their own over the
/// windows of time `windows` (in order, apart) alone: the time between two windows is cut out,
/// so a buffer living through it lives on from one window into the next. Every layout of the
/// problem is a layout of this one (fixed offsets and alignments kept; hints, memories and
/// benefits dropped).
pub(crate) fn clipped_to_windows(
    problem: &Problem,
    live: &[usize],
    windows: &[(u64, u64)],
) -> Problem {
    let mut shifts = Vec::with_capacity(windows.len());
    let mut at = 0;
    for &(from, to) in windows {
        shifts.push(at);
        at += to - from;
    }
    // The time `t` of window `k` (clipped to it) on the joined clock.
    let joined = |k: usize, t: u64| shifts[k] + t.clamp(windows[k].0, windows[k].1) - windows[k].0;
    let buffers = live
        .iter()
        .map(|&i| {
            let b = &problem.buffers[i];
            let first = windows.partition_point(|w| w.1 <= b.lower);
            let last = windows.partition_point(|w| w.0 < b.upper) - 1;
            retimed(b, (joined(first, b.lower), joined(last, b.upper)))
        })
        .collect();
    Problem::new(buffers, None)
}

/// Buffer `b` living over `(lower, upper)` instead, for a problem of part of the buffers (fixed
/// offset and alignment kept; hint, memories and benefit dropped).
fn retimed(b: &Buffer, (lower, upper): (u64, u64)) -> Buffer {
    Buffer {
        lower,
        upper,
        hint: None,
        memories: Vec::new(),
        benefit: None,
        ..b.clone()
    }
}
