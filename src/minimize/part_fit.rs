//! One search of a small problem cut from a larger one (a window of time), under a capacity,
//! a node budget and the whole solve's deadline.

use crate::analysis::Timeline;
use crate::outcome::{Deadline, Limits};
use crate::problem::Problem;
use crate::search::{self, FitRequest, PortfolioConfig, SearchOptions, SearchResult};

/// Fits `part` (which passed [`Problem::check`]) under `capacity` with the search, within
/// `nodes` and `deadline`; `portfolio(buffers)` gives its portfolio.
pub(crate) fn fit_part(
    part: &Problem,
    capacity: u64,
    options: &SearchOptions,
    portfolio: &dyn Fn(usize) -> PortfolioConfig,
    (deadline, nodes): (&Deadline<'_>, u64),
) -> SearchResult {
    let timeline = Timeline::new(part);
    let timeout = deadline
        .at
        .map(|at| at.saturating_duration_since(std::time::Instant::now()));
    let request = FitRequest {
        portfolio: portfolio(part.len()),
        timeline: &timeline,
        options,
        limits: Limits {
            timeout,
            nodes: Some(nodes),
        },
        cancel: deadline.cancel,
        observer: None,
        external: None,
    };
    search::fit(part, capacity, request)
}
