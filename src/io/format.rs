//! Which format a file is in: JSON for a `.json` name, CSV for anything else.

use std::path::Path;

/// The on-disk format of a problem or solution file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header line (`id,lower,upper,size[,alignment][,offset]`).
    Csv,
    /// JSON: `{"capacity": N, "buffers": [{"id": .., "lower": .., ...}]}`.
    Json,
}

impl Format {
    /// `Json` for a `.json` file name, `Csv` for anything else.
    pub fn from_path(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("json") => Format::Json,
            _ => Format::Csv,
        }
    }
}
