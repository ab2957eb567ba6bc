//! What a solve says to a person or a program: the solution file (CSV, or JSON with how it was
//! found) and the one-line summaries.

use crate::io::{write_csv_assigned, write_csv_solution, Format, CHIP};
use crate::problem::{Assignment, Buffer, Problem, Solution};
use crate::solver::{Allocation, Goal};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};

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
    let mut value = Map::new();
    if let Some(capacity) = problem.capacity {
        value.insert("capacity".into(), capacity.into());
    }
    value.insert("peak".into(), solution.peak(problem).into());
    if let Some(assignment) = &allocation.assignment {
        // The peak of what is kept (a buffer moved out holds no address).
        value.insert("peak".into(), allocation.peak.into());
        value.insert("cost".into(), (assignment.cost(problem) as u64).into());
        value.insert(
            "kept_bytes".into(),
            (assignment.kept_bytes(problem) as u64).into(),
        );
        value.insert("proven_best".into(), assignment.proven_best.into());
    }
    value.insert("status".into(), allocation.status.label().into());
    value.insert("algorithm".into(), algorithm.into());
    if let Some(stats) = &allocation.search {
        value.insert("stats".into(), to_value(stats));
    }
    if let Some(stats) = &allocation.cpsat {
        value.insert("cpsat".into(), to_value(stats));
    }
    if let Some(bound) = allocation.lower_bound {
        value.insert("lower_bound".into(), bound.into());
    }
    if let Some(source) = &allocation.lower_bound_source {
        value.insert("lower_bound_source".into(), source.to_string().into());
    }
    if let Some(phase) = allocation.found_by {
        value.insert("found_by".into(), phase.to_string().into());
    }
    let file = SolutionFile {
        fields: value,
        buffers: PlacedBuffers {
            problem,
            solution,
            assignment: allocation.assignment.as_ref(),
        },
    };
    serde_json::to_string_pretty(&file).expect("plain data") + "\n"
}

fn to_value(data: &impl Serialize) -> Value {
    serde_json::to_value(data).expect("plain data")
}

/// A JSON solution file: its fields, and `buffers` among them in key order, written one buffer
/// at a time (a million buffers held as one JSON value took 1.2 GiB).
struct SolutionFile<'a> {
    fields: Map<String, Value>,
    buffers: PlacedBuffers<'a>,
}

impl Serialize for SolutionFile<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.fields.len() + 1))?;
        let mut buffers = Some(&self.buffers);
        for (key, value) in &self.fields {
            if key.as_str() > "buffers" {
                if let Some(buffers) = buffers.take() {
                    map.serialize_entry("buffers", buffers)?;
                }
            }
            map.serialize_entry(key, value)?;
        }
        if let Some(buffers) = buffers {
            map.serialize_entry("buffers", buffers)?;
        }
        map.end()
    }
}

/// Every buffer of a solved problem with its offset, and with its memory (`chip` for the one
/// capacity; no offset for one moved out) when the allocation assigned memories.
struct PlacedBuffers<'a> {
    problem: &'a Problem,
    solution: &'a Solution,
    assignment: Option<&'a Assignment>,
}

impl Serialize for PlacedBuffers<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let problem = self.problem;
        let mut seq = serializer.serialize_seq(Some(problem.buffers.len()))?;
        for (i, (b, &offset)) in problem
            .buffers
            .iter()
            .zip(&self.solution.offsets)
            .enumerate()
        {
            let mut entry = to_value(&Buffer {
                offset: Some(offset),
                ..b.clone()
            });
            if let Some(assignment) = self.assignment {
                let memory = assignment.memory[i];
                entry["memory"] = match memory {
                    Some(m) => problem
                        .memories
                        .get(m)
                        .map_or(CHIP, |m| m.id.as_str())
                        .into(),
                    None => Value::Null,
                };
                if memory.is_none() {
                    entry.as_object_mut().expect("a buffer").remove("offset");
                }
            }
            seq.serialize_element(&entry)?;
        }
        seq.end()
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Buffer;
    use crate::solver::Solver;

    /// The JSON solution file of a spill: every field in key order, `buffers` among them, each
    /// buffer with its memory, the one moved out without an offset, the peak of what is kept.
    #[test]
    fn a_json_solution_file_lists_its_fields_in_order_with_each_buffers_memory() {
        let problem = Problem::new(
            vec![
                Buffer::new("a", 0, 4, 4),
                Buffer::new("b", 2, 6, 4),
                Buffer::new("c", 0, 6, 4),
            ],
            Some(8),
        );
        let allocation = Solver::new().solve(&problem, Goal::Spill(8)).unwrap();
        let solution = allocation
            .solution
            .clone()
            .expect("a spill always keeps some");
        let text = solution_text(&problem, &solution, &allocation, "search", Format::Json);
        let value: Value = serde_json::from_str(&text).unwrap();
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        let at = |key: &str| text.find(&format!("\n  \"{key}\":")).expect(key);
        let mut in_text = keys.clone();
        in_text.sort_by_key(|k| at(k));
        assert_eq!(in_text, keys, "top-level fields in key order");
        assert!(keys.iter().any(|k| *k == "buffers") && keys.iter().any(|k| *k == "cost"));
        let buffers = value["buffers"].as_array().unwrap();
        assert_eq!(buffers.len(), 3);
        let moved: Vec<&Value> = buffers.iter().filter(|b| b["memory"].is_null()).collect();
        assert_eq!(
            moved.len(),
            1,
            "8 bytes keep two of the three 4-byte buffers"
        );
        assert!(moved[0].get("offset").is_none());
        for kept in buffers.iter().filter(|b| !b["memory"].is_null()) {
            assert_eq!(kept["memory"], "chip");
            assert!(kept["offset"].as_u64().unwrap() + 4 <= 8);
        }
        assert_eq!(value["peak"], 8);
        assert_eq!(value["status"], "solved");
    }
}
