//! What a solve says to a person or a program: the solution file (CSV, or JSON with how it was
//! found) and the one-line summaries.

use crate::io::{json_solution_value, write_csv_solution, Format};
use crate::problem::{Problem, Solution};
use crate::solver::{Allocation, Goal};

/// The solution file of a solved allocation: CSV (the problem's columns plus `offset`), or JSON
/// with the status, the algorithm, the search counters and the lower bound added.
pub fn solution_text(
    problem: &Problem,
    solution: &Solution,
    allocation: &Allocation,
    algorithm: &str,
    format: Format,
) -> String {
    if format == Format::Csv {
        return write_csv_solution(problem, solution);
    }
    let mut value = json_solution_value(problem, solution);
    value["status"] = allocation.status.label().into();
    value["algorithm"] = algorithm.into();
    if let Some(stats) = &allocation.search {
        value["stats"] = serde_json::to_value(stats).expect("plain data");
    }
    if let Some(stats) = &allocation.cpsat {
        value["cpsat"] = serde_json::to_value(stats).expect("plain data");
    }
    if let Some(bound) = allocation.lower_bound {
        value["lower_bound"] = bound.into();
    }
    if let Some(phase) = allocation.found_by {
        value["found_by"] = phase.to_string().into();
    }
    serde_json::to_string_pretty(&value).expect("plain data") + "\n"
}

/// The summary lines of a solve: how it ended, the peak against LOAD and the capacity, the time,
/// and for minimisation the phase that found the layout and the gap to the lower bound.
pub fn summary_lines(allocation: &Allocation, algorithm: &str, goal: Goal) -> Vec<String> {
    let seconds = allocation.elapsed.as_secs_f64();
    let Some(peak) = allocation.solution.as_ref().and(allocation.peak) else {
        return vec![format!(
            "{algorithm}: {} after {seconds:.3} s",
            allocation.status
        )];
    };
    let capacity = match goal {
        Goal::Fit(c) => format!(", capacity {c}"),
        Goal::Minimize => String::new(),
    };
    let mut lines = vec![format!(
        "solved by {algorithm}: peak {peak} (LOAD {}{capacity}) in {seconds:.3} s",
        allocation.load
    )];
    if let Some(phase) = allocation.found_by {
        lines.push(format!("found by {phase}"));
    }
    if let Some(bound) = allocation.lower_bound {
        let gap = peak - bound;
        lines.push(if gap == 0 {
            "gap to the lower bound: 0 (proven optimal)".to_string()
        } else {
            format!(
                "gap to the lower bound {bound}: {gap} bytes ({:.2}% of the peak; not proven optimal)",
                100.0 * gap as f64 / peak as f64
            )
        });
    }
    lines
}

/// With CP-SAT in the search's rounds (`--with cpsat`): its share of the solve, e.g.
/// `cpsat share: 5 solves, 0.412 deterministic s, 3.100 s of 6.200 s wall (50%)`.
pub fn cpsat_share_line(allocation: &Allocation) -> Option<String> {
    let stats = allocation.cpsat.as_ref()?;
    allocation.search.as_ref()?;
    let wall = allocation.elapsed.as_secs_f64();
    let percent = if wall > 0.0 {
        100.0 * stats.wall_time / wall
    } else {
        0.0
    };
    Some(format!(
        "cpsat share: {} solves, {:.3} deterministic s, {:.3} s of {wall:.3} s wall ({percent:.0}%)",
        stats.solves, stats.deterministic_time, stats.wall_time
    ))
}
