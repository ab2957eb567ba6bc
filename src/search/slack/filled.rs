//! A filled problem: the problem with phantom buffers added over its slack, cut in one shape.

use crate::problem::{Buffer, Problem};
use crate::search::instance::Instance;

/// How the slack profile is cut into phantoms. Each rise of the profile opens slack and each
/// fall closes some: the shapes differ in which open slack a fall closes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    /// The latest opened first: bands between levels, nested in time (a profile with `k` rises
    /// gives `k` phantoms).
    Nested,
    /// The earliest opened first: pieces that overlap in time, as two holes do when one starts
    /// before the other ends.
    Crossing,
    /// By amount: each fall closes the open slack of its own amount, as a rectangular hole
    /// closes what it opened (the latest such; failing that, the largest open slack within the
    /// fall, then the latest opened).
    Matching,
    /// The learned hole-shape model's most likely cut: at each step the move it scores highest.
    Likely,
    /// Drawn: each fall closes open slack chosen at random (seeded by the draw), a new shape for
    /// every run of its member ([`Drawer`]).
    Drawn,
}

impl Shape {
    /// The name of the filled problem's runs (in `--stats` and solve logs).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Shape::Nested => "slack-fill",
            Shape::Crossing => "slack-fill-fifo",
            Shape::Matching => "slack-fill-match",
            Shape::Likely => "slack-fill-likely",
            Shape::Drawn => "slack-fill-draw",
        }
    }
}

/// A filled problem for the portfolio: its instance, and how many of its first buffers are the
/// problem's (the phantoms follow them).
pub(crate) struct Filled {
    /// How its phantoms were cut.
    pub(crate) shape: Shape,
    /// The search instance of the filled problem, at the problem's capacity.
    pub(crate) instance: Instance,
    /// The problem's buffers: a layout's first `buffers` offsets are the problem's layout.
    pub(crate) buffers: usize,
}

/// `problem` with `phantoms` added, as a [`Filled`] of `shape` at `capacity`.
pub(crate) fn with_phantoms(
    problem: &Problem,
    capacity: u64,
    shape: Shape,
    phantoms: &[(u64, u64, u64)],
) -> Filled {
    let mut filled = problem.clone();
    filled.buffers.extend(
        phantoms
            .iter()
            .enumerate()
            .map(|(k, &(lower, upper, size))| {
                Buffer::new(format!("slack-{k}"), lower, upper, size)
            }),
    );
    Filled {
        shape,
        instance: Instance::new(&filled, capacity),
        buffers: problem.buffers.len(),
    }
}
