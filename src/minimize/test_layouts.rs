//! Layouts and problems the tests of the minimise phases start from.

use crate::generate::{random, RandomOptions};
use crate::policy_spec::PolicySpec;
use crate::problem::{Problem, Solution};
use crate::search::{PortfolioConfig, SearchOptions};

/// The default options on `threads` threads with the hand-made round robin (what minimise
/// gives the searches that lower a layout: `Engine::lowering_portfolio`).
pub(crate) fn hand_made(threads: usize) -> SearchOptions {
    SearchOptions {
        threads,
        learned_order: false,
        ..SearchOptions::default()
    }
}

/// The default portfolio of `options`, seed 0, for a problem of a given number of buffers,
/// with the learned hooks a solve under `options` gives it.
pub(crate) fn portfolio_of(options: &SearchOptions) -> impl Fn(usize) -> PortfolioConfig + '_ {
    move |buffers| {
        let mut config = PolicySpec::Portfolio.configure(buffers, options, 0, None).0;
        config.learned = crate::learned::hooks(options, None);
        config
    }
}

/// Every buffer stacked on the one before: a valid layout, its peak the sum of the sizes.
pub(crate) fn stacked(problem: &Problem) -> Solution {
    let mut top = 0;
    let offsets = problem.buffers.iter().map(|b| {
        top += b.size;
        top - b.size
    });
    Solution {
        offsets: offsets.collect(),
    }
}

/// 400 random buffers over 400 steps, about 50 live at once.
pub(crate) fn random_400() -> Problem {
    let options = RandomOptions {
        buffers: 400,
        horizon: 400,
        max_lifetime: 100,
        min_size: 1,
        max_size: 1000,
        tightness: 1.0,
    };
    random(&options, 3)
}
