//! Reporting a broken problem rule ([`Problem::check`]) with the place it came from: the file,
//! the line (CSV) or element (JSON), and the field.

use super::json_places::element_line;
use crate::error::InputError;
use crate::problem::rules::TimeColumns;
use crate::problem::Problem;

/// Where each buffer came from, so that errors can name it.
pub enum BufferPlaces<'a> {
    /// `lines[i]` is the 1-based line of buffer `i` (CSV).
    Lines(&'a [usize]),
    /// Buffers are named by their index in the list of this JSON text, with the line where
    /// the element starts and the buffer's id.
    Json(&'a str),
    /// No per-buffer place is known (e.g. a problem built in code).
    None,
}

impl BufferPlaces<'_> {
    fn error(
        &self,
        file: &str,
        index: usize,
        id: &str,
        field: &str,
        message: String,
    ) -> InputError {
        match self {
            BufferPlaces::Lines(lines) => {
                InputError::at_line(file, lines.get(index).copied(), Some(field), message)
            }
            BufferPlaces::Json(text) => {
                let mut error = InputError::at_element(file, index, Some(field), message);
                error.location.line = element_line(text, index);
                error.location.id = Some(id.into());
                error
            }
            BufferPlaces::None => InputError::at_element(file, index, Some(field), message),
        }
    }

    fn describe(&self, index: usize) -> String {
        match self {
            BufferPlaces::Lines(lines) => match lines.get(index) {
                Some(line) => format!("line {line}"),
                None => format!("buffers[{index}]"),
            },
            _ => format!("buffers[{index}]"),
        }
    }
}

/// Checks `problem` under its own capacity (see [`Problem::check`]) and names the first broken
/// rule's file, line or element, and field.
pub fn check_problem(
    problem: &Problem,
    file: &str,
    places: &BufferPlaces<'_>,
) -> Result<(), InputError> {
    check_problem_for(
        problem,
        problem.capacity,
        file,
        places,
        &TimeColumns::HALF_OPEN,
    )
}

/// [`check_problem`] with `capacity` in place of the problem's own (`None`: the rules that do not
/// depend on a capacity), wording times as a file with `columns` writes them.
pub(crate) fn check_problem_for(
    problem: &Problem,
    capacity: Option<u64>,
    file: &str,
    places: &BufferPlaces<'_>,
    columns: &TimeColumns,
) -> Result<(), InputError> {
    let broken = match problem.check_as_written(capacity, columns) {
        Ok(()) => return Ok(()),
        Err(broken) => broken,
    };
    let mut message = broken.message;
    if let Some(first) = broken.first_use {
        message.push_str(&format!(" (first used at {})", places.describe(first)));
    }
    Err(match broken.buffer {
        Some(i) => {
            let id = problem.buffers.get(i).map_or("", |b| b.id.as_str());
            places.error(file, i, id, broken.field, message)
        }
        None => InputError::at_line(file, None, Some(broken.field), message),
    })
}
