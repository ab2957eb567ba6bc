//! Which phase of minimise produced its answer, and how it is told to a user.

use crate::baselines::Baseline;

/// Which phase of minimise produced its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MinimizePhase {
    /// The first phase, which always answers: TFLite Micro's first-fit by size descending;
    /// when the limit came first, the buffers it had not placed yet were laid out in lanes
    /// above the others, one lane per buffer live at once (`in_lanes`: how many; 0 when
    /// first-fit placed every buffer).
    Guarantee {
        /// How many buffers were laid out in lanes at the limit.
        in_lanes: usize,
    },
    /// Another fast baseline, run after the first phase while time remained.
    Baseline(Baseline),
    /// The search, fitting this capacity.
    Search {
        /// The capacity the search fitted.
        capacity: u64,
    },
    /// The improvement phase (large-neighbourhood search, the `lns` switch) from the best layout
    /// of the phases before.
    Improve {
        /// How many windows of time it re-placed.
        windows: u64,
    },
    /// The layout built from the window of the largest live totals (the `window-first` switch).
    WindowFirst,
    /// Ruin and recreate (the `reinsert` switch) from the best layout of the phases before.
    Reinsert {
        /// How many moves were kept.
        moves: u64,
    },
}

impl std::fmt::Display for MinimizePhase {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MinimizePhase::Guarantee { in_lanes: 0 } => {
                write!(
                    f,
                    "first-fit by size (tflite-micro), the phase that always answers"
                )
            }
            MinimizePhase::Guarantee { in_lanes } => write!(
                f,
                "first-fit by size (tflite-micro), stopped by the limit: {in_lanes} buffers \
                 laid out in lanes above the others"
            ),
            MinimizePhase::Baseline(baseline) => write!(f, "baseline {}", baseline.name()),
            MinimizePhase::Search { capacity } => {
                write!(f, "the search, fitting capacity {capacity}")
            }
            MinimizePhase::Improve { windows } => write!(
                f,
                "large-neighbourhood search, {windows} windows of time re-placed"
            ),
            MinimizePhase::WindowFirst => write!(
                f,
                "the search on the window of the largest live totals, the rest around it"
            ),
            MinimizePhase::Reinsert { moves } => write!(
                f,
                "ruin and recreate, {moves} moves of the buffers topping the peak kept"
            ),
        }
    }
}
