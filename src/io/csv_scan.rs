//! Where each line and record of a CSV text starts, by the csv reader's own rules, so that
//! errors name the physical line whatever the line endings, comments and quoted line breaks.

use crate::error::InputError;

/// The text as the CSV reader reads it, and where its lines and records start (exact with LF,
/// CRLF and CR-only line endings, blank lines, comments and quoted line breaks, unlike the
/// reader's own record count).
pub(super) struct Scanned<'t> {
    /// The text with every lone `\r` outside quoted fields turned into `\n`, byte for byte.
    pub(super) text: std::borrow::Cow<'t, str>,
    /// The byte where each physical line starts (after `\n`, or after a `\r` no `\n` follows).
    pub(super) line_starts: Vec<usize>,
    /// The byte of each record's first character (after blank lines and comments).
    pub(super) record_starts: Vec<usize>,
}

/// Where the CSV reader is in the text, by its own rules (the csv crate's states, less the
/// ones it passes through without reading a byte).
#[derive(Clone, Copy, PartialEq, Eq)]
enum ScanState {
    /// Before a record: line ends are skipped, `#` starts a comment.
    StartRecord,
    /// Before a field: a quote here, and only here, opens a quoted field.
    StartField,
    /// Inside an unquoted field: quotes are plain characters.
    InField,
    /// Inside a quoted field: line ends and commas are part of it.
    InQuotedField,
    /// Just after a quote inside a quoted field: a second quote is an escaped quote.
    QuoteInQuotedField,
    /// Inside a comment, to the end of its line.
    InComment,
}

/// One pass over `text` by the CSV reader's rules (see [`reader`]: comma, double quote, `#`
/// comments, `\r`, `\n` or `\r\n` line ends, a leading UTF-8 byte-order mark skipped): a
/// quote opens a quoted field only as a field's first byte, `""` inside one is a quote, and a
/// record whose first byte is `#` is a comment to the end of its line. The reader ends a comment
/// only at `\n`, so every lone `\r` outside quoted fields (old Mac line endings) becomes `\n`
/// in the text it is given; positions stay the same.
pub(super) fn scan(text: &str) -> Scanned<'_> {
    use ScanState::*;
    let bytes = text.as_bytes();
    let first = if bytes.starts_with(b"\xef\xbb\xbf") {
        3
    } else {
        0
    };
    let mut state = StartRecord;
    let mut lone_cr = Vec::new();
    let mut line_starts = vec![0];
    let mut record_starts = Vec::new();
    for (i, &byte) in bytes.iter().enumerate().skip(first) {
        let lone = byte == b'\r' && bytes.get(i + 1) != Some(&b'\n');
        if byte == b'\n' || lone {
            line_starts.push(i + 1);
        }
        if lone && state != InQuotedField {
            lone_cr.push(i);
        }
        let line_end = byte == b'\n' || byte == b'\r';
        let field_start = |byte: u8| match byte {
            b'"' => InQuotedField,
            b',' => StartField,
            _ if line_end => StartRecord,
            _ => InField,
        };
        state = match state {
            StartRecord if line_end => StartRecord,
            StartRecord if byte == b'#' => InComment,
            StartRecord => {
                record_starts.push(i);
                field_start(byte)
            }
            StartField => field_start(byte),
            InField | QuoteInQuotedField if byte == b',' => StartField,
            InField | QuoteInQuotedField if line_end => StartRecord,
            InField => InField,
            InQuotedField if byte == b'"' => QuoteInQuotedField,
            InQuotedField => InQuotedField,
            QuoteInQuotedField if byte == b'"' => InQuotedField,
            QuoteInQuotedField => InField,
            InComment if byte == b'\n' || lone => StartRecord,
            InComment => InComment,
        };
    }
    let text = if lone_cr.is_empty() {
        std::borrow::Cow::Borrowed(text)
    } else {
        let mut fixed = bytes.to_vec();
        for i in lone_cr {
            fixed[i] = b'\n';
        }
        std::borrow::Cow::Owned(String::from_utf8(fixed).expect("one ASCII byte for another"))
    };
    Scanned {
        text,
        line_starts,
        record_starts,
    }
}

impl Scanned<'_> {
    /// The line of the header: the first record's.
    pub(super) fn header(&self) -> usize {
        self.at(0)
    }

    /// The line of the first record starting at or after `byte`: the reader's positions point
    /// before a record, at the previous line's terminator or at blank and comment lines.
    pub(super) fn at(&self, byte: usize) -> usize {
        let next = self.record_starts.partition_point(|&start| start < byte);
        let byte = self.record_starts.get(next).copied().unwrap_or(byte);
        self.line_starts.partition_point(|&start| start <= byte)
    }

    /// The line where `record` starts.
    pub(super) fn of(&self, record: &csv::StringRecord) -> usize {
        self.at(record.position().map(|p| p.byte() as usize).unwrap_or(0))
    }
}

/// The CSV reader every file of this crate is read with: a header, trimmed fields, rows of any
/// width (checked by the caller, to name the line), `#` comments.
pub(crate) fn reader(text: &str) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .trim(csv::Trim::All)
        .comment(Some(b'#'))
        .from_reader(text.as_bytes())
}

/// A reader's error as an input error at the line the scan puts it on.
pub(super) fn csv_error(e: csv::Error, file: &str, scanned: &Scanned) -> InputError {
    let line = e.position().map(|p| scanned.at(p.byte() as usize));
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("expected {expected_len} fields, found {len}"),
        _ => format!("malformed CSV: {e}"),
    };
    InputError::at_line(file, line, None, message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Each record the reader reads from the scanned text: its line and its fields, line breaks
    /// inside quoted fields written `\n` whatever they were.
    fn records(text: &str) -> Vec<(usize, Vec<String>)> {
        let scanned = scan(text);
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .comment(Some(b'#'))
            .from_reader(scanned.text.as_bytes());
        let read: Vec<_> = rdr.records().map(|r| r.expect("a str reads")).collect();
        assert_eq!(read.len(), scanned.record_starts.len(), "{text:?}");
        read.iter()
            .map(|r| {
                let fields = r
                    .iter()
                    .map(|f| f.replace("\r\n", "\n").replace('\r', "\n"));
                (scanned.of(r), fields.collect())
            })
            .collect()
    }

    proptest! {
        /// Lines of commas, quotes, `#` and spaces read the same, on the same lines, whether
        /// they end in LF, CRLF or CR alone: the scan follows the reader's own rules.
        #[test]
        fn every_line_ending_reads_alike(lines in prop::collection::vec("[a,\"# ]{0,6}", 0..8)) {
            let with = |ending: &str| lines.iter().map(|l| format!("{l}{ending}")).collect::<String>();
            let lf = records(&with("\n"));
            prop_assert_eq!(&records(&with("\r\n")), &lf);
            prop_assert_eq!(&records(&with("\r")), &lf);
        }
    }
}
