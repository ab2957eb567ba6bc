//! Minimise's own switches, taken once from the search options: the techniques only minimise
//! (and the fit by lowering above 100,000 buffers) runs. Each is on by default.

use crate::search::SearchOptions;

/// Minimise's switches; [`SearchOptions`] documents each under the same name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MinimizeOptions {
    /// Large-neighbourhood search after the probes (the only search above 100,000 buffers).
    pub(crate) lns: bool,
    /// Ruin and recreate after the windows.
    pub(crate) reinsert: bool,
    /// The window of the largest live totals laid out first.
    pub(crate) window_first: bool,
    /// Window-first's window grown where the others end above its target.
    pub(crate) window_grow: bool,
    /// A window's held buffers joined into few fixed obstacles.
    pub(crate) lns_obstacles: bool,
    /// Above 100,000 buffers, the bands of the tops first, widened.
    pub(crate) lns_bands: bool,
    /// A bound above LOAD proven on windows of time at the end.
    pub(crate) window_bound: bool,
}

impl MinimizeOptions {
    /// Minimise's switches among `options`.
    pub(crate) fn of(options: &SearchOptions) -> MinimizeOptions {
        MinimizeOptions {
            lns: options.lns,
            reinsert: options.reinsert,
            window_first: options.window_first,
            window_grow: options.window_grow,
            lns_obstacles: options.lns_obstacles,
            lns_bands: options.lns_bands,
            window_bound: options.window_bound,
        }
    }
}
