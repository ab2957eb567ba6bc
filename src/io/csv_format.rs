//! CSV in the MiniMalloc interchange format: header `id,lower,upper,size`, optional
//! `alignment`, `hint` (`-1` or empty: none), `gaps`, `offset`, `memories` (the memory ids a
//! buffer may go to, space-separated; empty: any) and `benefit` columns, columns in any order.
//! LF, CRLF and CR-only line endings, `#` comments and a leading UTF-8 byte-order mark read
//! alike; errors name the physical line, and with MiniMalloc's inclusive `end` column they
//! speak of `end` and its value as written.

use super::check::{check_problem_for, BufferPlaces};
use super::csv_scan::{csv_error, reader, scan, Scanned};
use super::solution_rows::{RowMemory, SolutionRows, CHIP};
use crate::error::{quoted, InputError};
use crate::problem::rules::TimeColumns;
use crate::problem::{Assignment, Buffer, Gap, Memory, Problem, Solution};
use std::collections::HashMap;

const REQUIRED: [&str; 4] = ["id", "lower", "upper", "size"];
const OPTIONAL: [&str; 6] = ["alignment", "hint", "gaps", "offset", "memories", "benefit"];

/// MiniMalloc's other names for the columns: `buffer` and `buffer_id` for `id`, `start` and
/// `begin` for `lower`, and `end` for an inclusive last step (`upper = end + 1`).
const ALIASES: [(&str, &str); 5] = [
    ("buffer", "id"),
    ("buffer_id", "id"),
    ("start", "lower"),
    ("begin", "lower"),
    ("end", "upper"),
];

/// Column positions found in a header line.
struct Columns {
    index: HashMap<&'static str, usize>,
    /// The header's own name of each column found (`end` for `upper`, ...), for errors.
    names: HashMap<&'static str, &'static str>,
    /// Whether the file gives an inclusive `end` instead of `upper`.
    inclusive_end: bool,
}

impl Columns {
    /// The columns of `header`, found at line `line` of `file`.
    fn parse(
        header: &csv::StringRecord,
        (file, line): (&str, usize),
        required: &[&'static str],
        allow_unknown: bool,
    ) -> Result<Self, InputError> {
        let mut index = HashMap::new();
        let mut names: HashMap<&'static str, &'static str> = HashMap::new();
        let mut inclusive_end = false;
        for (position, name) in header.iter().enumerate() {
            let name = name.trim();
            let alias = ALIASES.iter().find(|(alias, _)| *alias == name);
            let canonical = alias.map_or(name, |(_, k)| k);
            let known = REQUIRED
                .iter()
                .chain(OPTIONAL.iter())
                .find(|&&k| k == canonical);
            match known {
                Some(&k) => {
                    if index.insert(k, position).is_some() {
                        let first = names[k];
                        return Err(InputError::at_line(
                            file,
                            Some(line),
                            Some(name),
                            if first == name {
                                format!("column '{k}' appears twice in the header")
                            } else {
                                format!("column {} and column {} both give '{k}'", quoted(name), quoted(first))
                            },
                        ));
                    }
                    names.insert(k, alias.map_or(k, |&(alias, _)| alias));
                    inclusive_end |= name == "end";
                }
                None if allow_unknown => {}
                None => {
                    return Err(InputError::at_line(
                        file,
                        Some(line),
                        Some(name),
                        format!(
                            "unknown column {} (expected id, lower, upper, size, and optionally alignment, hint, gaps, offset, memories, benefit; or MiniMalloc's buffer, buffer_id, start, begin, end)",
                            quoted(name)
                        ),
                    ))
                }
            }
        }
        for &name in required {
            if !index.contains_key(name) {
                return Err(InputError::at_line(
                    file,
                    Some(line),
                    Some(name),
                    format!("missing column '{name}' in the header"),
                ));
            }
        }
        Ok(Columns {
            index,
            names,
            inclusive_end,
        })
    }

    /// The header's own name for column `name`.
    fn name<'a>(&self, name: &'a str) -> &'a str {
        self.names.get(name).copied().unwrap_or(name)
    }

    /// How the header writes the time columns, for the rules' errors.
    fn time_columns(&self) -> TimeColumns {
        TimeColumns {
            lower: self.name("lower"),
            upper: self.name("upper"),
            inclusive_end: self.inclusive_end,
        }
    }

    fn get<'r>(&self, record: &'r csv::StringRecord, name: &str) -> Option<&'r str> {
        self.index
            .get(name)
            .and_then(|&i| record.get(i))
            .map(str::trim)
    }
}

/// Parses an unsigned integer field, saying precisely why it is not one.
pub(crate) fn parse_number(
    text: &str,
    file: &str,
    line: usize,
    field: &str,
) -> Result<u64, InputError> {
    let err = |m: String| InputError::at_line(file, Some(line), Some(field), m);
    if text.is_empty() {
        return Err(err("missing value".into()));
    }
    if text.starts_with('-') {
        return Err(err(format!("{} is negative", quoted(text))));
    }
    if text.starts_with('+') {
        return Err(err(format!(
            "{} is not an integer: write the digits alone, without a sign",
            quoted(text)
        )));
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(format!("{} is not an integer", quoted(text))));
    }
    text.parse::<u64>()
        .map_err(|_| err(format!("{} is too large (overflows 64 bits)", quoted(text))))
}

/// Parses a `hint` field: an offset, or empty or `-1` (MiniMalloc's "none").
fn parse_hint(text: &str, (file, line): (&str, usize)) -> Result<Option<u64>, InputError> {
    match text {
        "" | "-1" => Ok(None),
        _ => parse_number(text, file, line, "hint")
            .map(Some)
            .map_err(|mut e| {
                e.message
                    .push_str(" (a hint is an offset; -1 or an empty field means none)");
                e
            }),
    }
}

/// Parses a `gaps` field in MiniMalloc's syntax: space-separated `lower-upper` or
/// `lower-upper@low:high` (a window). With an inclusive `end` column, `upper` is inclusive too
/// (it reads as `upper + 1`), as MiniMalloc's converter reads it.
fn parse_gaps(
    text: &str,
    inclusive_end: bool,
    (file, line): (&str, usize),
) -> Result<Vec<Gap>, InputError> {
    let mut gaps = Vec::new();
    for word in text.split_whitespace() {
        let err = |why: &str| {
            InputError::at_line(
                file,
                Some(line),
                Some("gaps"),
                format!("malformed gap {}: {why} (expected LOWER-UPPER or LOWER-UPPER@LOW:HIGH, space-separated)", quoted(word)),
            )
        };
        let (times, window) = match word.split_once('@') {
            Some((times, window)) => (times, Some(window)),
            None => (word, None),
        };
        let pair = |text: &str, separator: char| -> Result<(u64, u64), InputError> {
            let (first, second) = text
                .split_once(separator)
                .ok_or_else(|| err(&format!("no '{separator}' in {}", quoted(text))))?;
            let number = |t: &str| {
                if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
                    return Err(err(&format!("{} is not a non-negative integer", quoted(t))));
                }
                t.parse::<u64>()
                    .map_err(|_| err(&format!("{} is too large (overflows 64 bits)", quoted(t))))
            };
            Ok((number(first)?, number(second)?))
        };
        let (lower, mut upper) = pair(times, '-')?;
        if inclusive_end {
            upper = upper
                .checked_add(1)
                .ok_or_else(|| err("the inclusive end + 1 overflows 64 bits"))?;
        }
        let window = window.map(|w| pair(w, ':')).transpose()?;
        gaps.push(Gap {
            lower,
            upper,
            window,
        });
    }
    Ok(gaps)
}

/// Writes a `gaps` field (half-open time, as the `upper` column).
fn write_gaps(gaps: &[Gap]) -> String {
    let words: Vec<String> = gaps
        .iter()
        .map(|g| match g.window {
            Some((low, high)) => format!("{}-{}@{low}:{high}", g.lower, g.upper),
            None => format!("{}-{}", g.lower, g.upper),
        })
        .collect();
    words.join(" ")
}

fn header(
    rdr: &mut csv::Reader<&[u8]>,
    file: &str,
    scanned: &Scanned,
) -> Result<csv::StringRecord, InputError> {
    let header = rdr
        .headers()
        .map_err(|e| csv_error(e, file, scanned))?
        .clone();
    if header.is_empty() {
        // Nothing but comments and blank lines: there is no line to name.
        return Err(InputError::at_line(
            file,
            None,
            None,
            "the file is empty: no header line (expected id,lower,upper,size; comments and blank lines do not count)",
        ));
    }
    if header.len() == 1 && header[0].trim().is_empty() {
        return Err(InputError::at_line(
            file,
            Some(scanned.header()),
            None,
            "the header line is empty (expected id,lower,upper,size)",
        ));
    }
    Ok(header)
}

/// Rejects a row with fewer or more fields than the header, naming the first missing column.
fn check_width(
    record: &csv::StringRecord,
    header: &csv::StringRecord,
    file: &str,
    line: usize,
) -> Result<(), InputError> {
    if record.len() < header.len() {
        let missing = header[record.len()].trim();
        return Err(InputError::at_line(
            file,
            Some(line),
            Some(missing),
            format!(
                "missing field (expected {} fields, found {})",
                header.len(),
                record.len()
            ),
        ));
    }
    if record.len() > header.len() {
        return Err(InputError::at_line(
            file,
            Some(line),
            None,
            format!(
                "too many fields (expected {}, found {})",
                header.len(),
                record.len()
            ),
        ));
    }
    Ok(())
}

/// Parses and checks a problem from CSV text. `file` names the source in errors.
pub fn parse_csv_problem(
    text: &str,
    file: &str,
    capacity: Option<u64>,
) -> Result<Problem, InputError> {
    parse_csv_problem_in(text, file, capacity, Vec::new())
}

/// [`parse_csv_problem`] for a problem with these `memories` (which the buffers' `memories`
/// column names; checked with the buffers, errors naming the line and field).
pub fn parse_csv_problem_in(
    text: &str,
    file: &str,
    capacity: Option<u64>,
    memories: Vec<Memory>,
) -> Result<Problem, InputError> {
    let scanned = scan(text);
    let mut rdr = reader(&scanned.text);
    let header = header(&mut rdr, file, &scanned)?;
    let columns = Columns::parse(&header, (file, scanned.header()), &REQUIRED, false)?;
    let mut buffers = Vec::new();
    let mut lines = Vec::new();
    for record in rdr.records() {
        let record = record.map_err(|e| csv_error(e, file, &scanned))?;
        let line = scanned.of(&record);
        check_width(&record, &header, file, line)?;
        let number = |name: &str| -> Result<u64, InputError> {
            let field = columns.name(name);
            parse_number(columns.get(&record, name).unwrap_or(""), file, line, field)
        };
        let upper = |end: u64| -> Result<u64, InputError> {
            if !columns.inclusive_end {
                return Ok(end);
            }
            end.checked_add(1).ok_or_else(|| {
                InputError::at_line(
                    file,
                    Some(line),
                    Some("end"),
                    format!("end {end} + 1 overflows 64 bits"),
                )
            })
        };
        let optional = |name: &str| -> Result<Option<u64>, InputError> {
            match columns.get(&record, name) {
                None | Some("") => Ok(None),
                Some(text) => parse_number(text, file, line, name).map(Some),
            }
        };
        let id = columns.get(&record, "id").unwrap_or("");
        if id.is_empty() {
            return Err(InputError::at_line(
                file,
                Some(line),
                Some("id"),
                "missing value",
            ));
        }
        let at = (file, line);
        buffers.push(Buffer {
            id: id.to_string(),
            lower: number("lower")?,
            upper: upper(number("upper")?)?,
            size: number("size")?,
            alignment: optional("alignment")?.unwrap_or(1),
            offset: optional("offset")?,
            hint: parse_hint(columns.get(&record, "hint").unwrap_or(""), at)?,
            gaps: parse_gaps(
                columns.get(&record, "gaps").unwrap_or(""),
                columns.inclusive_end,
                at,
            )?,
            memories: columns
                .get(&record, "memories")
                .unwrap_or("")
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            benefit: optional("benefit")?,
        });
        lines.push(line);
    }
    let problem = Problem {
        buffers,
        capacity,
        memories,
    };
    check_problem_for(
        &problem,
        capacity,
        file,
        &BufferPlaces::Lines(&lines),
        &columns.time_columns(),
    )?;
    Ok(problem)
}

/// Parses a solution (columns `id` and `offset`; other known columns are ignored) for `problem`.
/// Every buffer of the problem must appear exactly once.
pub fn parse_csv_solution(
    text: &str,
    file: &str,
    problem: &Problem,
) -> Result<Solution, InputError> {
    parse_csv_assigned(text, file, problem).map(|(solution, _)| solution)
}

/// [`parse_csv_solution`], and when the file has a `memory` column (as `solve --spill` and
/// `solve --memories` write it) each buffer's memory: an id of the problem's memories (`chip`
/// for a problem without), or empty for a buffer moved out, whose offset is empty too.
pub fn parse_csv_assigned(
    text: &str,
    file: &str,
    problem: &Problem,
) -> Result<(Solution, Option<Assignment>), InputError> {
    let scanned = scan(text);
    let mut rdr = reader(&scanned.text);
    let header = header(&mut rdr, file, &scanned)?;
    let columns = Columns::parse(&header, (file, scanned.header()), &["id", "offset"], true)?;
    let memory_column = header.iter().position(|name| name.trim() == "memory");
    let mut rows = SolutionRows::new(problem);
    for record in rdr.records() {
        let record = record.map_err(|e| csv_error(e, file, &scanned))?;
        let line = scanned.of(&record);
        check_width(&record, &header, file, line)?;
        let error = |field: &str, message: String| {
            InputError::at_line(file, Some(line), Some(field), message)
        };
        let offset = match columns.get(&record, "offset").unwrap_or("") {
            "" => None,
            text => Some(parse_number(text, file, line, "offset")?),
        };
        let memory = match memory_column.map(|column| record.get(column).map_or("", str::trim)) {
            None => RowMemory::Absent,
            Some("") => RowMemory::MovedOut,
            Some(name) => RowMemory::Named(name),
        };
        rows.add(
            columns.get(&record, "id").unwrap_or(""),
            offset,
            memory,
            &error,
        )?;
    }
    rows.finish(file)
}

/// The optional columns a problem needs: `alignment`, `hint` and `gaps` only where some buffer
/// has one (so files without them are written as before).
struct Extra {
    alignment: bool,
    hint: bool,
    gaps: bool,
    memories: bool,
    benefit: bool,
}

impl Extra {
    fn of(problem: &Problem) -> Extra {
        Extra {
            alignment: problem.buffers.iter().any(|b| b.alignment != 1),
            hint: problem.has_hints(),
            gaps: problem.has_gaps(),
            memories: problem.buffers.iter().any(|b| !b.memories.is_empty()),
            benefit: problem.buffers.iter().any(|b| b.benefit.is_some()),
        }
    }

    fn header(&self, out: &mut String) {
        out.push_str("id,lower,upper,size");
        if self.alignment {
            out.push_str(",alignment");
        }
        if self.hint {
            out.push_str(",hint");
        }
        if self.gaps {
            out.push_str(",gaps");
        }
        if self.memories {
            out.push_str(",memories");
        }
        if self.benefit {
            out.push_str(",benefit");
        }
    }

    /// The buffer's fields up to the optional ones, without a line end. A missing hint is
    /// written `-1`, as MiniMalloc writes it.
    fn row(&self, b: &Buffer, out: &mut String) {
        out.push_str(&format!(
            "{},{},{},{}",
            quote(&b.id),
            b.lower,
            b.upper,
            b.size
        ));
        if self.alignment {
            out.push_str(&format!(",{}", b.alignment));
        }
        if self.hint {
            match b.hint {
                Some(h) => out.push_str(&format!(",{h}")),
                None => out.push_str(",-1"),
            }
        }
        if self.gaps {
            out.push(',');
            out.push_str(&write_gaps(&b.gaps));
        }
        if self.memories {
            out.push(',');
            out.push_str(&b.memories.join(" "));
        }
        if self.benefit {
            out.push(',');
            if let Some(benefit) = b.benefit {
                out.push_str(&benefit.to_string());
            }
        }
    }
}

/// Writes a solution as CSV: `id,lower,upper,size`, `alignment`, `hint` and `gaps` if any buffer
/// has one, `offset`.
pub fn write_csv_solution(problem: &Problem, solution: &Solution) -> String {
    let extra = Extra::of(problem);
    let mut out = String::new();
    extra.header(&mut out);
    out.push_str(",offset\n");
    for (b, offset) in problem.buffers.iter().zip(&solution.offsets) {
        extra.row(b, &mut out);
        out.push_str(&format!(",{offset}\n"));
    }
    out
}

/// Writes the solution of a problem with memories or a spill goal as CSV: the columns of
/// [`write_csv_solution`], then `memory`, the id of the buffer's memory (`chip` for the one
/// capacity of the spill goal), or empty for a buffer moved out (whose `offset` is empty too).
pub fn write_csv_assigned(
    problem: &Problem,
    solution: &Solution,
    assignment: &Assignment,
) -> String {
    let extra = Extra::of(problem);
    let mut out = String::new();
    extra.header(&mut out);
    out.push_str(",offset,memory\n");
    for (i, b) in problem.buffers.iter().enumerate() {
        extra.row(b, &mut out);
        match assignment.memory[i] {
            Some(m) => {
                let name = problem.memories.get(m).map_or(CHIP, |m| m.id.as_str());
                out.push_str(&format!(",{},{name}\n", solution.offsets[i]));
            }
            None => out.push_str(",,\n"),
        }
    }
    out
}

/// Parses a memories file: header `id,capacity` and optionally `cost` (per byte, default 0),
/// one memory per line. Errors name the file, line and field.
pub fn parse_csv_memories(text: &str, file: &str) -> Result<Vec<Memory>, InputError> {
    let scanned = scan(text);
    let mut rdr = reader(&scanned.text);
    let header = header(&mut rdr, file, &scanned)?;
    let mut index: HashMap<&str, usize> = HashMap::new();
    for (position, name) in header.iter().enumerate() {
        let name = name.trim();
        let known = ["id", "capacity", "cost"].into_iter().find(|&k| k == name);
        let Some(known) = known else {
            return Err(InputError::at_line(
                file,
                Some(scanned.header()),
                Some(name),
                format!(
                    "unknown column {} (a memories file has id, capacity and optionally cost)",
                    quoted(name)
                ),
            ));
        };
        if index.insert(known, position).is_some() {
            return Err(InputError::at_line(
                file,
                Some(scanned.header()),
                Some(name),
                format!("column '{known}' appears twice in the header"),
            ));
        }
    }
    for name in ["id", "capacity"] {
        if !index.contains_key(name) {
            return Err(InputError::at_line(
                file,
                Some(scanned.header()),
                Some(name),
                format!("missing column '{name}' in the header"),
            ));
        }
    }
    let mut memories = Vec::new();
    let mut lines: HashMap<String, usize> = HashMap::new();
    for record in rdr.records() {
        let record = record.map_err(|e| csv_error(e, file, &scanned))?;
        let line = scanned.of(&record);
        check_width(&record, &header, file, line)?;
        let get = |name: &str| index.get(name).and_then(|&i| record.get(i)).map(str::trim);
        let err = |field: &str, message: String| {
            InputError::at_line(file, Some(line), Some(field), message)
        };
        let id = get("id").unwrap_or("");
        if id.is_empty() {
            return Err(err("id", "missing value".into()));
        }
        if id.contains(char::is_whitespace) {
            return Err(err(
                "id",
                format!(
                    "{} contains white space (a buffer's memories are a space-separated list)",
                    quoted(id)
                ),
            ));
        }
        if let Some(first) = lines.insert(id.to_string(), line) {
            return Err(err(
                "id",
                format!(
                    "duplicate memory id {} (first used at line {first})",
                    quoted(id)
                ),
            ));
        }
        let capacity = parse_number(get("capacity").unwrap_or(""), file, line, "capacity")?;
        if capacity == 0 {
            return Err(err("capacity", "capacity must be greater than 0".into()));
        }
        let cost = match get("cost") {
            None | Some("") => 0,
            Some(text) => parse_number(text, file, line, "cost")?,
        };
        memories.push(Memory::new(id, capacity, cost));
    }
    if memories.is_empty() {
        return Err(InputError::at_line(
            file,
            None,
            None,
            "no memories: the file has a header and no rows",
        ));
    }
    Ok(memories)
}

/// Quotes an id if it holds a comma, quote or line break, or starts with `#` (read as a comment).
fn quote(id: &str) -> String {
    if id.contains([',', '"', '\n', '\r']) || id.starts_with('#') {
        format!("\"{}\"", id.replace('"', "\"\""))
    } else {
        id.to_string()
    }
}

/// Writes a problem as CSV (with `alignment`, `hint`, `gaps` and `offset` columns only where
/// needed).
pub fn write_csv_problem(problem: &Problem) -> String {
    let extra = Extra::of(problem);
    let with_offset = problem.buffers.iter().any(|b| b.offset.is_some());
    let mut out = String::new();
    extra.header(&mut out);
    if with_offset {
        out.push_str(",offset");
    }
    out.push('\n');
    for b in &problem.buffers {
        extra.row(b, &mut out);
        if with_offset {
            match b.offset {
                Some(o) => out.push_str(&format!(",{o}")),
                None => out.push(','),
            }
        }
        out.push('\n');
    }
    out
}
