//! The importers' work budget: a counter of work units that may not pass a limit proportional
//! to the model file's size, so that no file, however built, makes an import take time or
//! memory out of proportion to its size.
//!
//! A **work unit** is one element the importer reads, copies or computes: a tensor index, a
//! dimension, a table or message visited, a known value of a small tensor, eight bytes of a
//! name. Every loop whose length a file controls is paid for before it runs, and every
//! allocation holds at most a few words per unit paid, so time and memory are both bounded by
//! the units. The limit is [`work_limit`]: [`WORK_PER_BYTE`] units per byte of the file plus
//! [`WORK_BASE`]. The 26 real models of `datasets/models` spend at most 0.24 units per byte (light_squeezenet;
//! the TFLite ones 0.02), a margin of 33 below the limit.

use crate::error::InputError;

/// Work units an import may spend per byte of the model file.
pub const WORK_PER_BYTE: u64 = 8;

/// Work units an import may spend whatever the file's size (so tiny files are never refused).
pub const WORK_BASE: u64 = 1 << 20;

/// The most work units an import of a `file_bytes`-byte model may spend.
pub fn work_limit(file_bytes: usize) -> u64 {
    WORK_BASE.saturating_add(WORK_PER_BYTE.saturating_mul(file_bytes as u64))
}

/// Work spent so far and the limit, for one import.
#[derive(Clone, Debug)]
pub(crate) struct Budget<'a> {
    file: &'a str,
    used: u64,
    limit: u64,
}

impl<'a> Budget<'a> {
    /// The budget of an import of `file`, `file_bytes` long.
    pub(crate) fn new(file: &'a str, file_bytes: usize) -> Budget<'a> {
        Budget {
            file,
            used: 0,
            limit: work_limit(file_bytes),
        }
    }

    /// Spends `units` on `what`; an error naming the file once the limit is passed.
    pub(crate) fn charge(&mut self, units: u64, what: &str) -> Result<(), InputError> {
        self.used = self.used.saturating_add(units);
        if self.used <= self.limit {
            return Ok(());
        }
        Err(InputError::at_line(
            self.file,
            None,
            None,
            format!(
                "the model needs more work than its size allows: {what} takes the import past \
                 {} work units ({WORK_PER_BYTE} per byte of the file plus {WORK_BASE}); real \
                 models need well under one per byte, so the file repeats references to the \
                 same data over and over (corrupt, or built to exhaust the importer)",
                self.limit
            ),
        ))
    }

    /// [`Budget::charge`] for readers whose errors are plain text.
    pub(crate) fn charge_text(&mut self, units: u64, what: &str) -> Result<(), String> {
        self.charge(units, what).map_err(|e| e.message)
    }

    /// Whether the limit was passed (the reader's error then comes from the budget).
    pub(crate) fn exhausted(&self) -> bool {
        self.used > self.limit
    }

    /// The work units spent so far.
    pub(crate) fn used(&self) -> u64 {
        self.used
    }
}

/// Units for copying a name of `len` bytes: one per eight bytes, and one for the name itself.
pub(crate) fn text_units(len: usize) -> u64 {
    1 + len as u64 / 8
}
