//! Errors for bad input: each names the file, the line (or JSON element) and the field at fault.

use std::fmt;

/// Where in the input a fault was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file name as given by the caller (`<input>` when parsing from memory).
    pub file: String,
    /// 1-based line number, when the fault is tied to a line (CSV, JSON syntax).
    pub line: Option<usize>,
    /// 0-based index into the buffer list, when there is no line (JSON semantics).
    pub element: Option<usize>,
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
        }
        if let Some(field) = &self.field {
            write!(f, ": field '{field}'")?;
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
