//! Minimise's bound phase: lower bounds above LOAD proved on windows of time, checked against
//! brute-force optima. Every solve runs under a node limit only, so no result depends on the
//! speed of the machine.

use crate::support as common;

use common::{brute_force_optimum, csv, fragmentation_gadget, gadget_mutant, tight_problem};
use telamalloc::analysis::load;
use telamalloc::{Allocation, BoundSource, Goal, Limits, Problem, SearchOptions, Solver};

/// Minimise under a node limit alone (no clock), with the search's options.
fn minimise(problem: &Problem, options: SearchOptions, nodes: u64) -> Allocation {
    Solver::new()
        .options(options)
        .limits(Limits {
            timeout: None,
            nodes: Some(nodes),
        })
        .solve(problem, Goal::Minimize)
        .expect("a valid problem")
}

/// The fragmentation gadget (LOAD 4, optimum 5): minimise proves its optimum, with the bound
/// phase or without it (the probes of the whole problem prove it too; the bound phase's own
/// proof on a window is tested beside it, in `src/minimize/bound.rs`).
#[test]
fn minimise_proves_the_gadget_needs_one_byte_over_load() {
    let problem = fragmentation_gadget();
    assert_eq!(load(&problem), 4);
    assert_eq!(brute_force_optimum(&problem).peak, 5);
    for window_bound in [true, false] {
        let options = SearchOptions {
            window_bound,
            ..SearchOptions::default()
        };
        let result = minimise(&problem, options, 50_000);
        assert_eq!((result.lower_bound, result.peak), (Some(5), Some(5)));
        assert_ne!(result.lower_bound_source, Some(BoundSource::Load));
    }
}

/// On tiny problems whose optimum the brute force knows (problems without slack and variations
/// of the gadget, many of them above LOAD): the bound is at least LOAD, never above the optimum
/// nor the peak found, and proven where the optimum is above LOAD.
#[test]
fn the_bound_never_passes_the_optimum_on_tiny_problems() {
    let problems = (0..60u64)
        .map(|seed| tight_problem(9_100_000 + seed, 8))
        .chain((0..60u64).map(|seed| gadget_mutant(9_200_000 + seed)));
    let mut above_load = 0;
    for problem in problems {
        let optimum = brute_force_optimum(&problem).peak;
        let result = minimise(&problem, SearchOptions::default(), 100_000);
        let (bound, peak) = (result.lower_bound.expect("a bound"), result.peak.unwrap());
        let what = format!("optimum {optimum}, bound {bound}\n{}", csv(&problem));
        assert!(
            result.load <= bound && bound <= optimum && optimum <= peak,
            "{what}"
        );
        if optimum > result.load {
            above_load += 1;
            assert_eq!(bound, optimum, "{what}");
            assert_ne!(result.lower_bound_source, Some(BoundSource::Load), "{what}");
        }
    }
    assert!(above_load >= 5, "only {above_load} problems above LOAD");
}
