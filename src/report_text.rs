//! What a solve says to a person or a program: the solution file (CSV, or JSON with how it was
//! found) and the one-line summaries.

use crate::io::{json_solution_value, write_csv_assigned, write_csv_solution, Format};
use crate::problem::{Assignment, Problem, Solution};
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
        return match &allocation.assignment {
            Some(assignment) => write_csv_assigned(problem, solution, assignment),
            None => write_csv_solution(problem, solution),
        };
    }
    let mut value = json_solution_value(problem, solution);
    if let Some(assignment) = &allocation.assignment {
        // Each buffer's memory (`chip` for the one capacity), and no offset for one moved out.
        let buffers = value["buffers"].as_array_mut().expect("a list of buffers");
        for (entry, memory) in buffers.iter_mut().zip(&assignment.memory) {
            entry["memory"] = match memory {
                Some(m) => problem
                    .memories
                    .get(*m)
                    .map_or("chip", |m| m.id.as_str())
                    .into(),
                None => serde_json::Value::Null,
            };
            if memory.is_none() {
                entry.as_object_mut().expect("a buffer").remove("offset");
            }
        }
        // The peak of what is kept (a buffer moved out holds no address).
        value["peak"] = allocation.peak.into();
        value["cost"] = (assignment.cost(problem) as u64).into();
        value["kept_bytes"] = (assignment.kept_bytes(problem) as u64).into();
        value["proven_best"] = assignment.proven_best.into();
    }
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
    if let Some(source) = &allocation.lower_bound_source {
        value["lower_bound_source"] = source.to_string().into();
    }
    if let Some(phase) = allocation.found_by {
        value["found_by"] = phase.to_string().into();
    }
    serde_json::to_string_pretty(&value).expect("plain data") + "\n"
}

/// The summary lines of a solve: how it ended, the peak against LOAD and the capacity, the time,
/// and for minimisation the phase that found the layout, the lower bound and its source, and
/// the gap to it.
pub fn summary_lines(allocation: &Allocation, algorithm: &str, goal: Goal) -> Vec<String> {
    let seconds = allocation.elapsed.as_secs_f64();
    if let (Some(_), Some(assignment)) = (&allocation.solution, &allocation.assignment) {
        let exact = if assignment.proven_best {
            "proven best"
        } else {
            "best found, not proven"
        };
        let moved = assignment.moved_out().len();
        return vec![match goal {
            Goal::Spill(capacity) => format!(
                "solved by {algorithm}: kept within capacity {capacity}, moved out {moved} of {} buffers ({exact}) in {seconds:.3} s",
                assignment.memory.len()
            ),
            _ => format!(
                "solved by {algorithm}: every buffer in a memory ({exact}) in {seconds:.3} s"
            ),
        }];
    }
    let Some(peak) = allocation.solution.as_ref().and(allocation.peak) else {
        return vec![format!(
            "{algorithm}: {} after {seconds:.3} s",
            allocation.status
        )];
    };
    let capacity = match goal {
        Goal::Fit(c) | Goal::Spill(c) => format!(", capacity {c}"),
        Goal::Minimize | Goal::Memories => String::new(),
    };
    let mut lines = vec![format!(
        "solved by {algorithm}: peak {peak} (LOAD {}{capacity}) in {seconds:.3} s",
        allocation.load
    )];
    if let Some(phase) = allocation.found_by {
        lines.push(format!("found by {phase}"));
    }
    if let Some(bound) = allocation.lower_bound {
        if let Some(source) = &allocation.lower_bound_source {
            let over = bound.saturating_sub(allocation.load);
            lines.push(format!(
                "lower bound {bound} (LOAD + {over}, {:.2}% over LOAD), from {source}",
                percent(over, allocation.load)
            ));
        }
        let gap = peak - bound;
        lines.push(if gap == 0 {
            "gap to the lower bound: 0 (proven optimal)".to_string()
        } else {
            format!(
                "gap to the lower bound {bound}: {gap} bytes ({:.2}% of the peak; not proven optimal)",
                percent(gap, peak)
            )
        });
    }
    lines
}

/// `part` as a percentage of `whole` (0 for an empty whole).
fn percent(part: u64, whole: u64) -> f64 {
    match whole {
        0 => 0.0,
        _ => 100.0 * part as f64 / whole as f64,
    }
}

/// The spill goal's answer against greedy admission's (see
/// [`greedy_admission`](crate::greedy_admission)): bytes and benefit kept by each, e.g.
/// `kept on chip: 1000 bytes (benefit 1000) of 1200, moved out 3; greedy admission keeps 900 bytes (benefit 900), moves out 5`.
pub fn spill_line(problem: &Problem, spill: &Assignment, greedy: &Assignment) -> String {
    let total: u128 = problem.buffers.iter().map(|b| b.size as u128).sum();
    format!(
        "kept on chip: {} bytes (benefit {}) of {total}, moved out {}; greedy admission keeps {} bytes (benefit {}), moves out {}",
        spill.kept_bytes(problem),
        spill.kept(problem),
        spill.moved_out().len(),
        greedy.kept_bytes(problem),
        greedy.kept(problem),
        greedy.moved_out().len()
    )
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
