//! CSV in the MiniMalloc interchange format: header `id,lower,upper,size`, optional
//! `alignment`, `hint`, `gaps` and `offset` columns, columns in any order.

use super::check::{check_problem, BufferPlaces};
use crate::error::InputError;
use crate::problem::{Buffer, Gap, Problem, Solution};
use std::collections::HashMap;

const REQUIRED: [&str; 4] = ["id", "lower", "upper", "size"];
const OPTIONAL: [&str; 4] = ["alignment", "hint", "gaps", "offset"];

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
    names: HashMap<&'static str, String>,
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
        let mut names = HashMap::new();
        let mut inclusive_end = false;
        for (position, name) in header.iter().enumerate() {
            let name = name.trim();
            let canonical = ALIASES
                .iter()
                .find(|(alias, _)| *alias == name)
                .map_or(name, |(_, k)| k);
            let known = REQUIRED
                .iter()
                .chain(OPTIONAL.iter())
                .find(|&&k| k == canonical);
            match known {
                Some(&k) => {
                    if index.insert(k, position).is_some() {
                        let first = &names[k];
                        return Err(InputError::at_line(
                            file,
                            Some(line),
                            Some(name),
                            if first == name {
                                format!("column '{k}' appears twice in the header")
                            } else {
                                format!("column '{name}' and column '{first}' both give '{k}'")
                            },
                        ));
                    }
                    names.insert(k, name.to_string());
                    inclusive_end |= name == "end";
                }
                None if allow_unknown => {}
                None => {
                    return Err(InputError::at_line(
                        file,
                        Some(line),
                        Some(name),
                        format!(
                            "unknown column '{name}' (expected id, lower, upper, size, and optionally alignment, hint, gaps, offset; or MiniMalloc's buffer, buffer_id, start, begin, end)"
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
    fn name<'a>(&'a self, name: &'a str) -> &'a str {
        self.names.get(name).map_or(name, String::as_str)
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
        return Err(err(format!("'{text}' is negative")));
    }
    let digits = text.strip_prefix('+').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(err(format!("'{text}' is not an integer")));
    }
    digits
        .parse::<u64>()
        .map_err(|_| err(format!("'{text}' is too large (overflows 64 bits)")))
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
                format!("malformed gap '{word}': {why} (expected LOWER-UPPER or LOWER-UPPER@LOW:HIGH, space-separated)"),
            )
        };
        let (times, window) = match word.split_once('@') {
            Some((times, window)) => (times, Some(window)),
            None => (word, None),
        };
        let pair = |text: &str, separator: char| -> Result<(u64, u64), InputError> {
            let (first, second) = text
                .split_once(separator)
                .ok_or_else(|| err(&format!("no '{separator}' in '{text}'")))?;
            let number = |t: &str| {
                if t.is_empty() || !t.bytes().all(|c| c.is_ascii_digit()) {
                    return Err(err(&format!("'{t}' is not a non-negative integer")));
                }
                t.parse::<u64>()
                    .map_err(|_| err(&format!("'{t}' is too large (overflows 64 bits)")))
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

/// Maps byte offsets of the text to 1-based line numbers (exact with LF, CRLF and CR-only line
/// endings, blank lines and comments, unlike the CSV reader's own record count).
struct Lines<'t> {
    text: &'t [u8],
    starts: Vec<usize>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t str) -> Lines<'t> {
        let bytes = text.as_bytes();
        let starts = (0..=bytes.len())
            .filter(|&p| is_line_start(bytes, p))
            .collect();
        Lines {
            text: bytes,
            starts,
        }
    }

    /// The line of the header: the first content line.
    fn header(&self) -> usize {
        self.at(0)
    }

    /// The line of the first content at or after `byte`: the reader's positions may point at
    /// the previous line's terminator, or at blank and comment lines before the record.
    fn at(&self, byte: usize) -> usize {
        let text = self.text;
        let mut p = byte.min(text.len());
        while p < text.len() {
            if text[p] == b'\r' || text[p] == b'\n' {
                p += 1;
            } else if is_line_start(text, p) && text[p] == b'#' {
                p += text[p..]
                    .iter()
                    .position(|&c| c == b'\n' || c == b'\r')
                    .map_or(text.len() - p, |i| i + 1);
            } else {
                break;
            }
        }
        self.starts.partition_point(|&start| start <= p)
    }

    fn of(&self, record: &csv::StringRecord) -> usize {
        self.at(record.position().map(|p| p.byte() as usize).unwrap_or(0))
    }
}

/// The text with every `\r` that no `\n` follows, outside quoted fields, turned into `\n` (old
/// Mac line endings), byte for byte, so that the reader's comments end where the lines do and
/// positions stay the same.
fn lone_cr_to_lf(text: &str) -> std::borrow::Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut quoted = false;
    let mut lone = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => quoted = !quoted,
            b'\r' if !quoted && bytes.get(i + 1) != Some(&b'\n') => lone.push(i),
            _ => {}
        }
    }
    if lone.is_empty() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut fixed = bytes.to_vec();
    for i in lone {
        fixed[i] = b'\n';
    }
    std::borrow::Cow::Owned(String::from_utf8(fixed).expect("one ASCII byte for another"))
}

/// Whether a line starts at byte `p`: the start of the text, after `\n`, or after a `\r` that
/// no `\n` follows (an old Mac line ending).
fn is_line_start(text: &[u8], p: usize) -> bool {
    p == 0
        || (p <= text.len()
            && (text[p - 1] == b'\n' || (text[p - 1] == b'\r' && text.get(p) != Some(&b'\n'))))
}

fn reader(text: &str) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes())
}

fn csv_error(e: csv::Error, file: &str, lines: &Lines) -> InputError {
    let line = e.position().map(|p| lines.at(p.byte() as usize));
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("expected {expected_len} fields, found {len}"),
        _ => format!("malformed CSV: {e}"),
    };
    InputError::at_line(file, line, None, message)
}

fn header(
    rdr: &mut csv::Reader<&[u8]>,
    file: &str,
    lines: &Lines,
) -> Result<csv::StringRecord, InputError> {
    let header = rdr
        .headers()
        .map_err(|e| csv_error(e, file, lines))?
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
            Some(lines.header()),
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
    let text = &lone_cr_to_lf(text);
    let line_index = Lines::new(text);
    let mut rdr = reader(text);
    let header = header(&mut rdr, file, &line_index)?;
    let columns = Columns::parse(&header, (file, line_index.header()), &REQUIRED, false)?;
    let mut buffers = Vec::new();
    let mut lines = Vec::new();
    for record in rdr.records() {
        let record = record.map_err(|e| csv_error(e, file, &line_index))?;
        let line = line_index.of(&record);
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
        });
        lines.push(line);
    }
    let problem = Problem { buffers, capacity };
    check_problem(&problem, file, &BufferPlaces::Lines(&lines))?;
    Ok(problem)
}

/// Parses a solution (columns `id` and `offset`; other known columns are ignored) for `problem`.
/// Every buffer of the problem must appear exactly once.
pub fn parse_csv_solution(
    text: &str,
    file: &str,
    problem: &Problem,
) -> Result<Solution, InputError> {
    let text = &lone_cr_to_lf(text);
    let line_index = Lines::new(text);
    let mut rdr = reader(text);
    let header = header(&mut rdr, file, &line_index)?;
    let columns = Columns::parse(
        &header,
        (file, line_index.header()),
        &["id", "offset"],
        true,
    )?;
    let index = problem.index_by_id();
    let mut offsets: Vec<Option<u64>> = vec![None; problem.buffers.len()];
    for record in rdr.records() {
        let record = record.map_err(|e| csv_error(e, file, &line_index))?;
        let line = line_index.of(&record);
        check_width(&record, &header, file, line)?;
        let id = columns.get(&record, "id").unwrap_or("");
        let &i = index.get(id).ok_or_else(|| {
            InputError::at_line(
                file,
                Some(line),
                Some("id"),
                format!("id '{id}' is not a buffer of the problem"),
            )
        })?;
        let offset = parse_number(
            columns.get(&record, "offset").unwrap_or(""),
            file,
            line,
            "offset",
        )?;
        if offsets[i].replace(offset).is_some() {
            return Err(InputError::at_line(
                file,
                Some(line),
                Some("id"),
                format!("id '{id}' appears twice"),
            ));
        }
    }
    collect_offsets(offsets, problem, file)
}

/// Turns per-buffer optional offsets into a solution, naming the first buffer without one.
pub(crate) fn collect_offsets(
    offsets: Vec<Option<u64>>,
    problem: &Problem,
    file: &str,
) -> Result<Solution, InputError> {
    let mut result = Vec::with_capacity(offsets.len());
    for (i, offset) in offsets.into_iter().enumerate() {
        match offset {
            Some(o) => result.push(o),
            None => {
                return Err(InputError::at_line(
                    file,
                    None,
                    Some("offset"),
                    format!("no offset for buffer '{}'", problem.buffers[i].id),
                ))
            }
        }
    }
    Ok(Solution { offsets: result })
}

/// The optional columns a problem needs: `alignment`, `hint` and `gaps` only where some buffer
/// has one (so files without them are written as before).
struct Extra {
    alignment: bool,
    hint: bool,
    gaps: bool,
}

impl Extra {
    fn of(problem: &Problem) -> Extra {
        Extra {
            alignment: problem.buffers.iter().any(|b| b.alignment != 1),
            hint: problem.has_hints(),
            gaps: problem.has_gaps(),
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
