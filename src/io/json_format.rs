//! JSON problems and solutions through serde: `{"capacity": N, "buffers": [...]}`.

use super::check::{check_problem, BufferPlaces};
use super::csv_format::collect_offsets;
use crate::error::{quoted, with_quotes_cut, InputError};
use crate::problem::{Buffer, Problem, Solution};
use serde::{Deserialize, Serialize};

fn json_error(e: serde_json::Error, file: &str, text: &str) -> InputError {
    let line = (e.line() > 0).then_some(e.line());
    let mut error = InputError::at_line(
        file,
        line,
        None,
        format!("malformed JSON: {}", with_quotes_cut(&e.to_string())),
    );
    if e.classify() == serde_json::error::Category::Data {
        // A value of the wrong type or range, a missing or unknown field: name where.
        let mut path = path_at(text, e.line(), e.column());
        if let Some(missing) = quoted_name(&e.to_string(), "missing field `") {
            path.push(Step::Key(missing));
        }
        let (element, field) = place_of(&path);
        error.location.element = element;
        error.location.field = field;
    }
    error
}

/// One step of the way from the document's root to a value: an object's key or an array's
/// index.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Step {
    Key(String),
    Index(usize),
}

/// Where a value of the buffer list is: `buffers[i]` becomes the element `i` and what follows
/// it the field (`size`); any other path is the field itself (`capacity`, `buffers`).
fn place_of(path: &[Step]) -> (Option<usize>, Option<String>) {
    let (element, rest) = match path {
        [Step::Key(key), Step::Index(i), rest @ ..] if key == "buffers" => (Some(*i), rest),
        _ => (None, path),
    };
    let mut field = String::new();
    for step in rest {
        match step {
            Step::Key(key) if field.is_empty() => field.push_str(key),
            Step::Key(key) => field.push_str(&format!(".{key}")),
            Step::Index(i) => field.push_str(&format!("[{i}]")),
        }
    }
    (element, (!field.is_empty()).then_some(field))
}

/// The name between `prefix` and the next backquote in `message` (serde's "missing field
/// `size`").
fn quoted_name(message: &str, prefix: &str) -> Option<String> {
    let start = message.find(prefix)? + prefix.len();
    let length = message[start..].find('`')?;
    Some(message[start..start + length].to_string())
}

/// The path to the value being read just before (1-based) `line` and `column`, the position
/// serde_json gives for an error of data (the text before it is well-formed JSON so far): a
/// scan of that text keeping the open objects and arrays, each object's last key and each
/// array's index. Within an object the path ends at the key being read or last read.
fn path_at(text: &str, line: usize, column: usize) -> Vec<Step> {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let end = (line_start + column).min(text.len());
    let bytes = &text.as_bytes()[..end];
    // Each open container: its path step so far, and for objects whether a key comes next.
    let mut open: Vec<(Option<Step>, bool)> = Vec::new();
    let mut p = 0;
    while p < bytes.len() {
        match bytes[p] {
            b'{' => open.push((None, true)),
            b'[' => open.push((Some(Step::Index(0)), false)),
            b'}' | b']' => {
                open.pop();
            }
            b',' => match open.last_mut() {
                Some((Some(Step::Index(i)), _)) => *i += 1,
                Some((step, expecting_key)) => {
                    *step = None;
                    *expecting_key = true;
                }
                None => {}
            },
            b':' => {
                if let Some((_, expecting_key)) = open.last_mut() {
                    *expecting_key = false;
                }
            }
            b'"' => {
                let (string, next) = read_string(bytes, p + 1);
                if let Some((step, expecting_key @ true)) = open.last_mut() {
                    *step = Some(Step::Key(string));
                    *expecting_key = false;
                }
                p = next;
                continue;
            }
            _ => {}
        }
        p += 1;
    }
    open.into_iter().filter_map(|(step, _)| step).collect()
}

/// The JSON string starting after its opening quote at `start` (escapes decoded well enough
/// for a key; the text may end inside it), and the position after its closing quote.
fn read_string(bytes: &[u8], start: usize) -> (String, usize) {
    let mut raw = Vec::new();
    let mut p = start;
    while p < bytes.len() {
        match bytes[p] {
            b'"' => return (String::from_utf8_lossy(&raw).into_owned(), p + 1),
            b'\\' if p + 1 < bytes.len() => {
                raw.push(match bytes[p + 1] {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    other => other,
                });
                p += 2;
            }
            b => {
                raw.push(b);
                p += 1;
            }
        }
    }
    (String::from_utf8_lossy(&raw).into_owned(), p)
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
                format!("id {} is not a buffer of the problem", quoted(&entry.id)),
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
                format!("id {} appears twice", quoted(&entry.id)),
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
