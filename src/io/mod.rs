//! Reading and writing problems and solutions (CSV compatible with MiniMalloc, and JSON).
//!
//! Every reader checks the problem with [`check_problem`] (the rules of [`Problem::check`]), so
//! what it returns is well formed:
//! `lower < upper`, `size > 0`, alignments are powers of two, ids are unique, fixed offsets are
//! aligned and fit, and no sum of sizes can overflow.

mod check;
mod csv_format;
mod csv_scan;
mod files;
mod format;
mod json_format;
mod json_places;
mod solution_rows;

pub use check::{check_problem, BufferPlaces};
pub use csv_format::{
    parse_csv_assigned, parse_csv_memories, parse_csv_problem, parse_csv_problem_in,
    parse_csv_solution, write_csv_assigned, write_csv_problem, write_csv_solution,
};
pub use files::{file_name, is_solution_file, problem_files, split_files, write_file};
pub use format::Format;
pub use json_format::{
    parse_json_assigned, parse_json_problem, parse_json_problem_in, parse_json_solution,
    write_json_solution,
};
pub(crate) use solution_rows::CHIP;

use crate::error::InputError;
use crate::problem::{Assignment, Memory, Problem, Solution};
use std::path::Path;

/// The capacity named in a file name `NAME.CAPACITY.csv` (MiniMalloc's, e.g. `A.1048576.csv`)
/// or `NAME.capCAPACITY.csv` (e.g. `rand_1.cap294.csv`).
pub fn capacity_from_file_name(path: &Path) -> Option<u64> {
    capacity_digits(path)?.parse().ok().filter(|&c| c > 0)
}

/// The digits of a file name's capacity part: the last dot-separated part of the stem, all
/// digits, after an optional `cap` (any case).
fn capacity_digits(path: &Path) -> Option<&str> {
    let stem = path.file_stem()?.to_str()?;
    let (_, last) = stem.rsplit_once('.')?;
    let digits = match last.get(..3) {
        Some(prefix) if prefix.eq_ignore_ascii_case("cap") => &last[3..],
        _ => last,
    };
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

/// A file name whose capacity part is all digits (`NAME.DIGITS.csv`, `NAME.capDIGITS.csv`) but
/// gives no capacity (0, or more than 64 bits hold) is an error: read as no capacity, it would
/// be reported as missing though the name gives one.
fn check_file_name_capacity(path: &Path, from_name: Option<u64>) -> Result<(), InputError> {
    match (capacity_digits(path), from_name) {
        (Some(digits), None) => Err(InputError::at_line(
            &path.display().to_string(),
            None,
            Some("capacity"),
            if digits.bytes().all(|b| b == b'0') {
                format!("the file name gives capacity {digits}, which must be greater than 0")
            } else {
                format!("the file name gives capacity {digits}, which overflows 64 bits")
            },
        )),
        _ => Ok(()),
    }
}

fn read_text(path: &Path) -> Result<String, InputError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| InputError::at_line(&name, None, None, format!("cannot read file: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        // Name the line and column (in bytes) of the first byte that is not UTF-8.
        let bytes = e.as_bytes();
        let bad = e.utf8_error().valid_up_to();
        let ends: Vec<usize> = (0..bad)
            .filter(|&i| {
                bytes[i] == b'\n' || (bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n'))
            })
            .collect();
        let column = bad - ends.last().map_or(0, |&end| end + 1) + 1;
        InputError::at_line(
            &name,
            Some(ends.len() + 1),
            None,
            format!(
                "file is not valid UTF-8 text (byte 0x{:02x} at column {column})",
                bytes[bad]
            ),
        )
    })
}

/// Reads and checks a problem file (format from the extension).
///
/// The capacity is, in order of preference: `capacity` if given, the file's own (`"capacity"`
/// in JSON), or the MiniMalloc file-name convention `NAME.CAPACITY.csv`.
pub fn read_problem(path: &Path, capacity: Option<u64>) -> Result<Problem, InputError> {
    read_problem_in(path, capacity, None)
}

/// Reads a memories file (CSV: `id,capacity[,cost]`, one memory per line; see
/// [`parse_csv_memories`]).
pub fn read_memories(path: &Path) -> Result<Vec<Memory>, InputError> {
    parse_csv_memories(&read_text(path)?, &path.display().to_string())
}

/// [`read_problem`] with `memories`, if given, in place of the file's own (a CSV problem has
/// none of its own); the buffers' `memories` columns are checked against them.
pub fn read_problem_in(
    path: &Path,
    capacity: Option<u64>,
    memories: Option<Vec<Memory>>,
) -> Result<Problem, InputError> {
    let name = path.display().to_string();
    let text = read_text(path)?;
    let from_name = capacity_from_file_name(path);
    match Format::from_path(path) {
        Format::Csv => {
            if capacity.is_none() {
                check_file_name_capacity(path, from_name)?;
            }
            let memories = memories.unwrap_or_default();
            parse_csv_problem_in(&text, &name, capacity.or(from_name), memories)
        }
        Format::Json => {
            let mut problem = parse_json_problem_in(&text, &name, capacity, memories)?;
            if problem.capacity.is_none() {
                check_file_name_capacity(path, from_name)?;
            }
            if problem.capacity.is_none() && from_name.is_some() {
                problem.capacity = from_name;
                check_problem(&problem, &name, &BufferPlaces::Json(&text))?;
            }
            Ok(problem)
        }
    }
}

/// [`read_problem_in`] for the spill goal: a buffer (or fixed offset) beyond the capacity is not
/// an error, since spill moves it out. The capacity is `capacity` if given, else the file's own
/// (JSON) or its name's, and every other rule is checked as usual.
pub fn read_problem_to_spill(
    path: &Path,
    capacity: Option<u64>,
    memories: Option<Vec<Memory>>,
) -> Result<Problem, InputError> {
    let own = match (capacity, Format::from_path(path)) {
        (Some(c), _) => Some(c),
        (None, Format::Json) => {
            let text = read_text(path)?;
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            serde_json::from_str::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("capacity").and_then(serde_json::Value::as_u64))
        }
        (None, Format::Csv) => None,
    };
    let from_name = capacity_from_file_name(path);
    if own.is_none() {
        check_file_name_capacity(path, from_name)?;
    }
    let mut problem = read_problem_in(path, Some(u64::MAX), memories)?;
    problem.capacity = own.or(from_name);
    Ok(problem)
}

/// The error for a problem without a capacity: how to give one, and, when the file name's last
/// dot-separated part is not a capacity, what that part was. `or_minimize` also offers
/// `--minimize`.
pub fn no_capacity_message(path: &Path, or_minimize: bool) -> String {
    let suffix = path
        .file_stem()
        .and_then(|stem| stem.to_str())
        .and_then(|stem| stem.rsplit_once('.'))
        .map(|(_, last)| last);
    let seen = match suffix {
        Some(last) if capacity_digits(path).is_none() => {
            format!(" (the name's last part '{last}' is not a capacity)")
        }
        _ => String::new(),
    };
    let minimize = if or_minimize { " or --minimize" } else { "" };
    format!(
        "no capacity: give --capacity N{minimize}, or name the file NAME.CAPACITY.csv or NAME.capCAPACITY.csv{seen}"
    )
}

/// Reads every problem of `paths` (files, or folders: see [`problem_files`]) and of the split
/// `split` (see [`split_files`]), all before any work is done, so that bad input stops a batch
/// before it starts. `capacity` overrides the files' own; with `need_capacity`, a problem
/// without one is an error naming its file and the `capacity` field.
pub fn read_problem_set(
    paths: &[std::path::PathBuf],
    split: Option<&str>,
    capacity: Option<u64>,
    need_capacity: bool,
) -> Result<Vec<(std::path::PathBuf, Problem)>, InputError> {
    let mut paths = paths.to_vec();
    if let Some(split) = split {
        paths.extend(split_files(split)?);
    }
    problem_files(&paths)?
        .into_iter()
        .map(|file| {
            let problem = read_problem(&file, capacity)?;
            if need_capacity && problem.capacity.is_none() {
                return Err(InputError::at_line(
                    &file.display().to_string(),
                    None,
                    Some("capacity"),
                    no_capacity_message(&file, false),
                ));
            }
            Ok((file, problem))
        })
        .collect()
}

/// Reads a solution file for `problem` (format from the extension): every buffer's offset by id.
pub fn read_solution(path: &Path, problem: &Problem) -> Result<Solution, InputError> {
    read_assigned(path, problem).map(|(solution, _)| solution)
}

/// [`read_solution`], with each buffer's memory when the file gives one (a CSV `memory`
/// column, a JSON `memory` field; see [`parse_csv_assigned`] and [`parse_json_assigned`]).
pub fn read_assigned(
    path: &Path,
    problem: &Problem,
) -> Result<(Solution, Option<Assignment>), InputError> {
    let name = path.display().to_string();
    let text = read_text(path)?;
    match Format::from_path(path) {
        Format::Csv => parse_csv_assigned(&text, &name, problem),
        Format::Json => parse_json_assigned(&text, &name, problem),
    }
}

/// Renders a solution in `format` (the problem's columns plus `offset`).
pub fn render_solution(problem: &Problem, solution: &Solution, format: Format) -> String {
    match format {
        Format::Csv => write_csv_solution(problem, solution),
        Format::Json => write_json_solution(problem, solution),
    }
}
