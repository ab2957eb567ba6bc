//! The shipped examples (`datasets/examples/`) have the answers their README states, checked by
//! exhaustive search; the exhaustive search itself is checked against a plain search over
//! offsets.

use crate::common;

use common::{brute_force_optimum, live_together, naive_load, round_up, share_address, solve_with};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::time::Duration;
use telamalloc::baselines::Baseline;
use telamalloc::io::read_problem;
use telamalloc::{validate, Buffer, Problem, Solution};
use telamalloc::{Algorithm, Goal, Infeasibility, Limits, Status};

/// One example and its known answer.
struct Known {
    file: &'static str,
    buffers: usize,
    capacity: u64,
    load: u64,
    optimum: u64,
    /// A layout reaching the optimum, found by hand or by the exhaustive search.
    witness: &'static [u64],
}

const KNOWN: [Known; 5] = [
    Known {
        file: "tiny.12.csv",
        buffers: 5,
        capacity: 12,
        load: 12,
        optimum: 12,
        witness: &[0, 0, 4, 0, 8],
    },
    Known {
        file: "aligned-fixed.48.csv",
        buffers: 5,
        capacity: 48,
        load: 44,
        optimum: 48,
        witness: &[0, 16, 12, 16, 40],
    },
    Known {
        file: "best-fit-trap.8.csv",
        buffers: 5,
        capacity: 8,
        load: 8,
        optimum: 8,
        witness: &[0, 7, 3, 0, 4],
    },
    Known {
        file: "infeasible-at-load.9.csv",
        buffers: 7,
        capacity: 9,
        load: 9,
        optimum: 10,
        witness: &[0, 0, 8, 0, 4, 3, 4],
    },
    Known {
        file: "gaps-hints.8.csv",
        buffers: 5,
        capacity: 8,
        load: 8,
        optimum: 8,
        witness: &[0, 0, 4, 4, 6],
    },
];

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("datasets")
        .join("examples")
}

fn load_example(known: &Known) -> Problem {
    read_problem(&examples_dir().join(known.file), None)
        .unwrap_or_else(|e| panic!("{}: {e}", known.file))
}

fn limits() -> Limits {
    Limits {
        timeout: Some(Duration::from_secs(20)),
        nodes: None,
    }
}

#[test]
fn examples_have_their_known_answers() {
    for known in &KNOWN {
        let problem = load_example(known);
        let name = known.file;
        assert_eq!(problem.len(), known.buffers, "{name}");
        assert_eq!(problem.capacity, Some(known.capacity), "{name}");
        assert_eq!(naive_load(&problem), known.load, "{name}");
        assert_eq!(telamalloc::analysis::load(&problem), known.load, "{name}");
        // The witness reaches the optimum...
        let witness = Solution {
            offsets: known.witness.to_vec(),
        };
        let report = validate(&problem, &witness, Some(known.optimum));
        assert!(report.is_valid(), "{name}: {report}");
        assert_eq!(witness.peak(&problem), known.optimum, "{name}");
        // ...and nothing does better.
        let (optimum, best) = brute_force_optimum(&problem);
        assert_eq!(optimum, known.optimum, "{name}");
        assert!(
            validate(&problem, &best, Some(optimum)).is_valid(),
            "{name}"
        );
    }
}

#[test]
fn readme_table_matches_the_known_answers() {
    let readme = std::fs::read_to_string(examples_dir().join("README.md")).unwrap();
    let rows: Vec<Vec<String>> = readme
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(|cell| cell.trim().trim_matches('`').to_string())
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), KNOWN.len(), "one README row per example");
    for known in &KNOWN {
        let row = rows
            .iter()
            .find(|row| row[0] == known.file)
            .unwrap_or_else(|| panic!("{} is not in the README", known.file));
        let expected = [
            known.buffers.to_string(),
            known.capacity.to_string(),
            known.load.to_string(),
            known.optimum.to_string(),
        ];
        assert_eq!(&row[1..5], &expected, "README row of {}", known.file);
    }
    // Every example file is in the table.
    for entry in std::fs::read_dir(examples_dir()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".csv") {
            assert!(
                KNOWN.iter().any(|k| k.file == name),
                "{name} has no known answer"
            );
        }
    }
}

#[test]
fn every_allocator_solves_the_tiny_example() {
    let problem = load_example(&KNOWN[0]);
    for baseline in Baseline::ALL {
        let result = solve_with(
            &problem,
            &Algorithm::Baseline(baseline),
            Goal::Fit(12),
            limits(),
            0,
        );
        assert_eq!(result.status, Status::Solved, "{}", baseline.name());
    }
}

#[test]
fn size_descending_placement_misses_the_packing_at_load() {
    let problem = load_example(&KNOWN[2]);
    for baseline in [Baseline::Tflite, Baseline::TfliteMicro] {
        let peak = baseline.allocate(&problem, 0).peak(&problem);
        assert_eq!(peak, 11, "{}", baseline.name());
        let result = solve_with(
            &problem,
            &Algorithm::Baseline(baseline),
            Goal::Fit(8),
            limits(),
            0,
        );
        assert_eq!(result.status, Status::HeuristicExceeded { peak: 11 });
    }
}

#[test]
fn the_gap_example_is_infeasible_at_its_capacity() {
    let known = &KNOWN[3];
    let problem = load_example(known);
    assert!(known.load <= known.capacity && known.capacity < known.optimum);
    for baseline in Baseline::ALL {
        let result = solve_with(
            &problem,
            &Algorithm::Baseline(baseline),
            Goal::Fit(known.capacity),
            limits(),
            0,
        );
        assert!(
            matches!(result.status, Status::HeuristicExceeded { peak } if peak >= known.optimum),
            "{}: {:?}",
            baseline.name(),
            result.status
        );
    }
}

/// The search is exact on the examples: it fits every one at its optimum and proves that one
/// byte less is impossible.
#[test]
fn search_finds_the_known_optimum() {
    let search = Algorithm::from_name("search").expect("the search is an algorithm");
    for known in &KNOWN {
        let problem = load_example(known);
        let name = known.file;
        let result = solve_with(&problem, &search, Goal::Fit(known.optimum), limits(), 0);
        assert_eq!(result.status, Status::Solved, "{name}");
        let solution = result.solution.expect("solved");
        assert!(
            validate(&problem, &solution, Some(known.optimum)).is_valid(),
            "{name}"
        );
        let below = known.optimum - 1;
        let result = solve_with(&problem, &search, Goal::Fit(below), limits(), 0);
        let expected = if below < known.load {
            Status::Infeasible(Infeasibility::LoadExceedsCapacity { load: known.load })
        } else {
            Status::Infeasible(Infeasibility::Exhausted)
        };
        assert_eq!(result.status, expected, "{name} at {below}");
        let result = solve_with(&problem, &search, Goal::Minimize, limits(), 0);
        assert_eq!(result.status, Status::Solved, "{name}");
        assert_eq!(result.peak, Some(known.optimum), "{name}");
    }
}

/// The smallest peak by a plain depth-first search over every aligned offset of every buffer,
/// pruned only by the best peak found so far: independent of the placement core.
fn offset_search_optimum(problem: &Problem) -> u64 {
    fn go(problem: &Problem, offsets: &mut Vec<u64>, peak: u64, best: &mut u64) {
        let i = offsets.len();
        if i == problem.len() {
            *best = (*best).min(peak);
            return;
        }
        let b = &problem.buffers[i];
        let candidates: Vec<u64> = match b.offset {
            Some(fixed) => vec![fixed],
            None => (0..*best).step_by(b.alignment as usize).collect(),
        };
        for offset in candidates {
            let end = offset + b.size;
            if end.max(peak) >= *best && b.offset.is_none() {
                break;
            }
            let clash = problem.buffers[..i]
                .iter()
                .zip(offsets.iter())
                .any(|(c, &o)| live_together(b, c) && share_address(offset, b.size, o, c.size));
            if !clash {
                offsets.push(offset);
                go(problem, offsets, peak.max(end), best);
                offsets.pop();
            }
        }
    }
    // Every free buffer stacked above the fixed ones is a valid layout with peak `stacked`; the
    // search looks for peaks below `best`, so it starts one above.
    let fixed_top = problem
        .buffers
        .iter()
        .filter_map(|b| b.offset.map(|o| o + b.size))
        .max()
        .unwrap_or(0);
    let stacked = problem
        .buffers
        .iter()
        .filter(|b| b.offset.is_none())
        .fold(fixed_top, |top, b| round_up(top, b.alignment) + b.size);
    let mut best = stacked + 1;
    go(problem, &mut Vec::new(), 0, &mut best);
    best
}

/// Tiny random problems: up to 5 buffers, sizes up to 4, alignments up to 4, and some fixed
/// offsets laid side by side (so they never conflict).
fn tiny_problems() -> impl Strategy<Value = Problem> {
    let one = (
        0..6u64,
        1..4u64,
        1..=4u64,
        0..=2u32,
        prop::bool::weighted(0.2),
    );
    (prop::collection::vec(one, 1..=5), 0..6u64).prop_map(|(drawn, base)| {
        let mut cursor = base;
        let buffers = drawn
            .into_iter()
            .enumerate()
            .map(|(i, (lower, lifetime, size, exponent, fixed))| {
                let alignment = 1 << exponent;
                let offset = fixed.then(|| {
                    let offset = round_up(cursor, alignment);
                    cursor = offset + size;
                    offset
                });
                Buffer {
                    id: format!("b{i}"),
                    lower,
                    upper: lower + lifetime,
                    size,
                    alignment,
                    offset,
                    hint: None,
                    gaps: Vec::new(),
                    memories: Vec::new(),
                    benefit: None,
                }
            })
            .collect();
        Problem::new(buffers, None)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The exhaustive order search used for the known answers agrees with a plain search over
    /// offsets, and bounds every baseline from below and LOAD from above.
    #[test]
    fn order_search_is_exact(problem in tiny_problems()) {
        let (optimum, best) = brute_force_optimum(&problem);
        prop_assert!(validate(&problem, &best, None).is_valid());
        prop_assert_eq!(best.peak(&problem), optimum);
        prop_assert_eq!(optimum, offset_search_optimum(&problem));
        prop_assert!(optimum >= naive_load(&problem));
        for baseline in Baseline::ALL {
            prop_assert!(baseline.allocate(&problem, 0).peak(&problem) >= optimum);
        }
    }
}
