//! JSON problems and solutions through serde: `{"capacity": N, "buffers": [...]}`. A leading
//! UTF-8 byte-order mark is skipped, and a `hint` of `-1` means no hint, as `null` or no `hint`
//! field do (MiniMalloc's convention, as in CSV). Errors name the line, the buffer (`buffers[i]`,
//! with its id when read before the fault) and the field, for malformed numbers too.

use super::check::{check_problem, BufferPlaces};
use super::json_places::{element_line, read_string};
use super::solution_rows::{RowMemory, SolutionRows};
use crate::error::{with_quotes_cut, InputError};
use crate::problem::{Assignment, Buffer, Memory, Problem, Solution};
use serde::{Deserialize, Serialize};

fn json_error(e: serde_json::Error, file: &str, text: &str) -> InputError {
    let line = (e.line() > 0).then_some(e.line());
    let mut error = InputError::at_line(
        file,
        line,
        None,
        format!("malformed JSON: {}", with_quotes_cut(&e.to_string())),
    );
    if e.classify() != serde_json::error::Category::Io {
        // A value of the wrong type or range, a missing or unknown field, a malformed number or
        // string, or a text cut short: name the buffer and field being read there.
        let mut open = open_at(text, e.line(), e.column());
        if let Some(missing) = quoted_name(&e.to_string(), "missing field `") {
            // Found on closing the object that lacks it: the innermost one open.
            match open.last_mut() {
                Some(object) if !matches!(object.step, Some(Step::Index(_))) => {
                    object.step = Some(Step::Key(missing));
                }
                _ => open.push(Open::at(Step::Key(missing))),
            }
        }
        let place = place_of(&open);
        error.location.element = place.element;
        error.location.id = place.id.map(String::into_boxed_str);
        error.location.field = place.field;
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

/// An object or array open at a point of the text, on the way from the root to the value read
/// there.
#[derive(Clone, Debug)]
struct Open {
    /// The key being read or last read (object), or the index (array); none in an object
    /// between a comma and the next key.
    step: Option<Step>,
    /// Whether an object's next string is a key.
    expecting_key: bool,
    /// An object's `id`, once its string value has been read whole.
    id: Option<String>,
}

impl Open {
    /// A container whose step is `step`.
    fn at(step: Step) -> Open {
        Open {
            step: Some(step),
            expecting_key: false,
            id: None,
        }
    }
}

/// Where in the buffer list a value is.
struct Place {
    /// `i` of `buffers[i]`.
    element: Option<usize>,
    /// That buffer's id, if read before.
    id: Option<String>,
    /// The field within it (`size`), or outside the list the key itself (`capacity`).
    field: Option<String>,
}

/// Where the value at the end of `open` is: `buffers[i]` becomes the element `i` (with its id
/// if read) and what follows it the field (`size`); any other path is the field itself
/// (`capacity`, `buffers`).
fn place_of(open: &[Open]) -> Place {
    let buffers = Some(Step::Key("buffers".to_string()));
    let (element, id, rest) = match open {
        [root, list, rest @ ..] if root.step == buffers => match list.step {
            Some(Step::Index(i)) => (Some(i), rest.first().and_then(|o| o.id.clone()), rest),
            _ => (None, None, open),
        },
        _ => (None, None, open),
    };
    let mut field = String::new();
    for step in rest.iter().filter_map(|o| o.step.as_ref()) {
        match step {
            Step::Key(key) if field.is_empty() => field.push_str(key),
            Step::Key(key) => field.push_str(&format!(".{key}")),
            Step::Index(i) => field.push_str(&format!("[{i}]")),
        }
    }
    Place {
        element,
        id,
        field: (!field.is_empty()).then_some(field),
    }
}

/// The name between `prefix` and the next backquote in `message` (serde's "missing field
/// `size`").
fn quoted_name(message: &str, prefix: &str) -> Option<String> {
    let start = message.find(prefix)? + prefix.len();
    let length = message[start..].find('`')?;
    Some(message[start..start + length].to_string())
}

/// The objects and arrays open at (1-based) `line` and `column`, the position serde_json gives
/// for an error (the text before it is well-formed JSON so far): a scan of the text up to that
/// character keeping each object's last key and `id`, and each array's index. Within an object
/// the path ends at the key being read or last read.
fn open_at(text: &str, line: usize, column: usize) -> Vec<Open> {
    let line_start: usize = text
        .split_inclusive('\n')
        .take(line.saturating_sub(1))
        .map(str::len)
        .sum();
    let end = (line_start + column).min(text.len());
    let bytes = &text.as_bytes()[..end];
    let mut open: Vec<Open> = Vec::new();
    let mut p = 0;
    while p < bytes.len() {
        match bytes[p] {
            b'{' => open.push(Open {
                step: None,
                expecting_key: true,
                id: None,
            }),
            b'[' => open.push(Open::at(Step::Index(0))),
            // The bracket at the error itself (a missing field is found on closing the object,
            // a malformed value on the bracket after it) leaves its container open.
            b'}' | b']' if p + 1 == bytes.len() => {}
            b'}' | b']' => {
                open.pop();
            }
            b',' => match open.last_mut() {
                Some(Open {
                    step: Some(Step::Index(i)),
                    ..
                }) => *i += 1,
                Some(object) => {
                    object.step = None;
                    object.expecting_key = true;
                }
                None => {}
            },
            b':' => {
                if let Some(object) = open.last_mut() {
                    object.expecting_key = false;
                }
            }
            b'"' => {
                let (string, next) = read_string(bytes, p);
                match open.last_mut() {
                    Some(object) if object.expecting_key => {
                        object.step = string.map(Step::Key);
                        object.expecting_key = false;
                    }
                    Some(object) if object.step == Some(Step::Key("id".to_string())) => {
                        object.id = string;
                    }
                    _ => {}
                }
                p = next;
                continue;
            }
            _ => {}
        }
        p += 1;
    }
    open
}

/// `text` without its UTF-8 byte-order mark, if it starts with one (as the CSV reader skips it).
fn without_byte_order_mark(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Parses and checks a problem from JSON text. `capacity`, if given, overrides the file's.
pub fn parse_json_problem(
    text: &str,
    file: &str,
    capacity: Option<u64>,
) -> Result<Problem, InputError> {
    parse_json_problem_in(text, file, capacity, None)
}

/// [`parse_json_problem`] with `memories`, if given, in place of the file's own.
pub fn parse_json_problem_in(
    text: &str,
    file: &str,
    capacity: Option<u64>,
    memories: Option<Vec<Memory>>,
) -> Result<Problem, InputError> {
    let text = without_byte_order_mark(text);
    if text.trim().is_empty() {
        return Err(InputError::at_line(file, None, None, "the file is empty"));
    }
    let mut problem: Problem = serde_json::from_str(text).map_err(|e| json_error(e, file, text))?;
    if capacity.is_some() {
        problem.capacity = capacity;
    }
    if let Some(memories) = memories {
        problem.memories = memories;
    }
    check_problem(&problem, file, &BufferPlaces::Json(text))?;
    Ok(problem)
}

#[derive(Serialize)]
struct SolutionFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    capacity: Option<u64>,
    peak: u64,
    buffers: Vec<Buffer>,
}

/// What a solution gives of each buffer: the rest (the problem's fields) is not read.
#[derive(Deserialize)]
struct PlacedOnly {
    id: String,
    offset: Option<u64>,
    /// Absent: a plain solution; `null`: moved out; else the memory's id.
    #[serde(default, deserialize_with = "present")]
    memory: Option<Option<String>>,
}

/// Reads a field that is present, `null` or not: `Some(None)` for `null`.
fn present<'de, D: serde::Deserializer<'de>>(
    reader: D,
) -> Result<Option<Option<String>>, D::Error> {
    Option::<String>::deserialize(reader).map(Some)
}

#[derive(Deserialize)]
struct PlacementsFile {
    buffers: Vec<PlacedOnly>,
}

/// Parses a solution (`buffers[].id` and `buffers[].offset`) for `problem`.
pub fn parse_json_solution(
    text: &str,
    file: &str,
    problem: &Problem,
) -> Result<Solution, InputError> {
    parse_json_assigned(text, file, problem).map(|(solution, _)| solution)
}

/// [`parse_json_solution`], and when the buffers have a `memory` field (as `solve --spill` and
/// `solve --memories` write it) each buffer's memory: an id of the problem's memories (`chip`
/// for a problem without), or `null` for a buffer moved out, which has no `offset`.
pub fn parse_json_assigned(
    text: &str,
    file: &str,
    problem: &Problem,
) -> Result<(Solution, Option<Assignment>), InputError> {
    let text = without_byte_order_mark(text);
    if text.trim().is_empty() {
        return Err(InputError::at_line(file, None, None, "the file is empty"));
    }
    let parsed: PlacementsFile =
        serde_json::from_str(text).map_err(|e| json_error(e, file, text))?;
    let mut rows = SolutionRows::new(problem);
    for (element, entry) in parsed.buffers.iter().enumerate() {
        let error = |field: &str, message: String| {
            let mut error = InputError::at_element(file, element, Some(field), message);
            error.location.line = element_line(text, element);
            error.location.id = Some(entry.id.as_str().into());
            error
        };
        let memory = match &entry.memory {
            None => RowMemory::Absent,
            Some(None) => RowMemory::MovedOut,
            Some(Some(name)) => RowMemory::Named(name),
        };
        rows.add(&entry.id, entry.offset, memory, &error)?;
    }
    rows.finish(file)
}

/// Writes a solution as JSON: the problem's fields, every buffer with its `offset`, and `peak`.
pub fn write_json_solution(problem: &Problem, solution: &Solution) -> String {
    let mut text = serde_json::to_string_pretty(&solution_file(problem, solution))
        .expect("plain data serialises");
    text.push('\n');
    text
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
