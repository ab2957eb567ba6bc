//! Errors for bad input: each names the file, the line (or JSON element) and the field at fault.

use std::fmt;

/// Where in the input a fault was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file name as given by the caller (`<input>` when parsing from memory).
    pub file: String,
    /// 1-based line number, when the fault is tied to a line (CSV, JSON syntax).
    pub line: Option<usize>,
    /// 0-based index into the buffer list of the buffer at fault (JSON).
    pub element: Option<usize>,
    /// The id of that buffer, when it was read before the fault (JSON); boxed to keep errors
    /// small.
    pub id: Option<Box<str>>,
    /// The field (column or JSON key) at fault, when there is one.
    pub field: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ": line {line}")?;
        }
        if let Some(element) = self.element {
            write!(f, ": buffers[{element}]")?;
            if let Some(id) = &self.id {
                write!(f, " (id {})", quoted(id))?;
            }
        }
        if let Some(field) = &self.field {
            write!(f, ": field {}", quoted(field))?;
        }
        Ok(())
    }
}

/// A problem or solution that cannot be accepted, with the place and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// Where the fault is.
    pub location: Location,
    /// What is wrong, in words.
    pub message: String,
}

impl InputError {
    /// An error in `file`, tied to a line when one is known.
    pub fn at_line(
        file: &str,
        line: Option<usize>,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        InputError {
            location: Location {
                file: file.to_string(),
                line,
                element: None,
                id: None,
                field: field.map(str::to_string),
            },
            message: message.into(),
        }
    }

    /// An error in `file` about the buffer at `element` of the buffer list (no line known).
    pub fn at_element(
        file: &str,
        element: usize,
        field: Option<&str>,
        message: impl Into<String>,
    ) -> Self {
        InputError {
            location: Location {
                file: file.to_string(),
                line: None,
                element: Some(element),
                id: None,
                field: field.map(str::to_string),
            },
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl std::error::Error for InputError {}

/// How many characters of input text an error message quotes before cutting it.
const QUOTED_CHARS: usize = 64;

/// `text` in single quotes for an error message: past 64 characters it is cut and its length
/// given (`'123456…' (10000000 characters)`), so that a huge field gives a short message. Every
/// message that quotes input text (a field, an id, a column name) quotes it through here.
pub(crate) fn quoted(text: &str) -> String {
    between(text, '\'')
}

/// `text` between two `mark`s, cut as [`quoted`] cuts it, with its control characters (line
/// breaks, tabs, escapes) written as Rust escapes (`\n`), so a message stays one line.
fn between(text: &str, mark: char) -> String {
    match text.char_indices().nth(QUOTED_CHARS) {
        None => format!("{mark}{}{mark}", escape_controls(text)),
        Some((cut, _)) => format!(
            "{mark}{}…{mark} ({} characters)",
            escape_controls(&text[..cut]),
            text.chars().count()
        ),
    }
}

/// `text` with each control character escaped (`\n`, `\t`, `\u{1b}`), the rest as it is.
pub(crate) fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out
}

/// `message` from another crate (serde's: `invalid type: string "…"`, `` unknown field `…` ``)
/// with each `"…"` (backslash escapes inside) or `` `…` `` in it cut as [`quoted`] cuts text.
pub(crate) fn with_quotes_cut(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(1024));
    let mut rest = message;
    while let Some(open) = rest.find(['"', '`']) {
        let mark = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..open]);
        let inside = &rest[open + 1..];
        let mut escaped = false;
        let close = inside.char_indices().find_map(|(i, c)| {
            let end = c == mark && !escaped;
            escaped = mark == '"' && c == '\\' && !escaped;
            end.then_some(i)
        });
        match close {
            Some(close) => {
                out.push_str(&between(&inside[..close], mark));
                rest = &inside[close + 1..];
            }
            // Not closed: kept as it is if short.
            None if inside.chars().nth(QUOTED_CHARS).is_none() => {
                out.push(mark);
                out.push_str(inside);
                rest = "";
            }
            None => {
                out.push_str(&between(inside, mark));
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_text_is_cut_after_64_characters() {
        assert_eq!(quoted("abc"), "'abc'");
        assert_eq!(quoted(&"7".repeat(64)), format!("'{}'", "7".repeat(64)));
        assert_eq!(
            quoted(&"é".repeat(65)),
            format!("'{}…' (65 characters)", "é".repeat(64))
        );
    }

    #[test]
    fn quotes_in_other_messages_are_cut_alike() {
        let long = "x".repeat(100);
        let message = format!("invalid type: string \"{long}\\\"\", expected u64 at `{long}` end");
        let cut = format!("\"{}…\" (102 characters)", &long[..64]);
        let ticks = format!("`{}…` (100 characters)", &long[..64]);
        assert_eq!(
            with_quotes_cut(&message),
            format!("invalid type: string {cut}, expected u64 at {ticks} end")
        );
        assert_eq!(
            with_quotes_cut("unknown field `colour`"),
            "unknown field `colour`"
        );
        assert_eq!(with_quotes_cut("an \"open"), "an \"open");
    }
}
