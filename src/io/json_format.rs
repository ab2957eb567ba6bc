//! JSON problems and solutions through serde: `{"capacity": N, "buffers": [...]}`.

use super::check::{check_problem, BufferPlaces};
use super::csv_format::collect_offsets;
use crate::error::InputError;
use crate::problem::{Buffer, Problem, Solution};
use serde::{Deserialize, Serialize};

fn json_error(e: serde_json::Error, file: &str, text: &str) -> InputError {
    let line = (e.line() > 0).then_some(e.line());
    let field = match e.classify() {
        serde_json::error::Category::Data => field_before(text, e.line(), e.column()),
        _ => None,
    };
    InputError::at_line(file, line, field.as_deref(), format!("malformed JSON: {e}"))
}

/// The key of the value at (1-based) `line` and `column`: the last `"key":` before it, when a
/// value of the wrong type or range was read there.
fn field_before(text: &str, line: usize, column: usize) -> Option<String> {
    let start = text
        .split_inclusive('\n')
        .take(line.checked_sub(1)?)
        .map(str::len)
        .sum::<usize>();
    let end = (start + column).min(text.len());
    let before = text.get(..end)?;
    let colon = before.rfind(':')?;
    let key = before[..colon].trim_end().strip_suffix('"')?;
    let open = key.rfind('"')?;
    let name = &key[open + 1..];
    (!name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        .then(|| name.to_string())
}

/// Parses and checks a problem from JSON text. `capacity`, if given, overrides the file's.
pub fn parse_json_problem(
    text: &str,
    file: &str,
    capacity: Option<u64>,
) -> Result<Problem, InputError> {
    if text.trim().is_empty() {
        return Err(InputError::at_line(file, None, None, "the file is empty"));
    }
    let mut problem: Problem = serde_json::from_str(text).map_err(|e| json_error(e, file, text))?;
    if capacity.is_some() {
        problem.capacity = capacity;
    }
    check_problem(&problem, file, &BufferPlaces::Elements)?;
    Ok(problem)
}

#[derive(Serialize)]
struct SolutionFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity: Option<u64>,
    peak: u64,
    buffers: Vec<Buffer>,
}

#[derive(Deserialize)]
struct OffsetOnly {
    id: String,
    offset: Option<u64>,
}

#[derive(Deserialize)]
struct OffsetsFile {
    buffers: Vec<OffsetOnly>,
}

/// Parses a solution (`buffers[].id` and `buffers[].offset`) for `problem`.
pub fn parse_json_solution(
    text: &str,
    file: &str,
    problem: &Problem,
) -> Result<Solution, InputError> {
    if text.trim().is_empty() {
        return Err(InputError::at_line(file, None, None, "the file is empty"));
    }
    let parsed: OffsetsFile = serde_json::from_str(text).map_err(|e| json_error(e, file, text))?;
    let index = problem.index_by_id();
    let mut offsets: Vec<Option<u64>> = vec![None; problem.buffers.len()];
    for (element, entry) in parsed.buffers.into_iter().enumerate() {
        let &i = index.get(entry.id.as_str()).ok_or_else(|| {
            InputError::at_element(
                file,
                element,
                Some("id"),
                format!("id '{}' is not a buffer of the problem", entry.id),
            )
        })?;
        let offset = entry.offset.ok_or_else(|| {
            InputError::at_element(file, element, Some("offset"), "missing offset")
        })?;
        if offsets[i].replace(offset).is_some() {
            return Err(InputError::at_element(
                file,
                element,
                Some("id"),
                format!("id '{}' appears twice", entry.id),
            ));
        }
    }
    collect_offsets(offsets, problem, file)
}

/// Writes a solution as JSON: the problem's fields, every buffer with its `offset`, and `peak`.
pub fn write_json_solution(problem: &Problem, solution: &Solution) -> String {
    let mut text = serde_json::to_string_pretty(&solution_file(problem, solution))
        .expect("plain data serialises");
    text.push('\n');
    text
}

/// The JSON of [`write_json_solution`] as a value, for reports that add fields to it.
pub fn json_solution_value(problem: &Problem, solution: &Solution) -> serde_json::Value {
    serde_json::to_value(solution_file(problem, solution)).expect("plain data serialises")
}

fn solution_file(problem: &Problem, solution: &Solution) -> SolutionFile {
    SolutionFile {
        capacity: problem.capacity,
        peak: solution.peak(problem),
        buffers: problem
            .buffers
            .iter()
            .zip(&solution.offsets)
            .map(|(b, &o)| Buffer {
                offset: Some(o),
                ..b.clone()
            })
            .collect(),
    }
}
