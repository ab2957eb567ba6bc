//! The documents a reader meets, checked on every test run: they say what the software does
//! today, not when or in which order work was done, and the results stay short enough to read.
//!
//! The reader's path is `README.md`, `docs/*.md` and the model and data cards
//! (`models/README.md`, `datasets/README.md`). None of them may hold:
//! - a **date as narrative**: a calendar date (`2026-11-24`, `24 November`, `November 24`) or a
//!   clock time (`08:45`). Dates that are data have a narrow way in: a table row that also holds
//!   a content hash (40 or 64 hexadecimal digits, a commit or a sha256) may carry an ISO date, the
//!   day that hash was recorded. A bare year (a citation, a copyright) is no date here;
//! - an **ordinal of past work**: `the seventh session`, `since the third ...`, or any mention of
//!   a work session;
//! - an **issue number**: `issue 33`, `issues 10 and 13`, `#33`.
//!
//! History belongs in git and in `benches/ARCHIVE.md`, the one index of what was tried. The
//! measured results, `benches/RESULTS.md`, stay at most [`MAX_RESULTS_LINES`] lines and the
//! archive at most [`MAX_ARCHIVE_LINES`]: what no longer holds leaves the results, and the
//! archive keeps a line per experiment with its commit, the text left to git.

use std::path::{Path, PathBuf};

/// The longest `benches/RESULTS.md` may be, in lines.
const MAX_RESULTS_LINES: usize = 500;

/// The longest `benches/ARCHIVE.md` may be, in lines.
const MAX_ARCHIVE_LINES: usize = 600;

/// Month names as a date spells them (capitalised: `may` is a verb).
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// Ordinals that number past work (`since the third ...`).
const ORDINALS: [&str; 20] = [
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
    "eleventh", "twelfth", "1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The documents on the reader's path, relative to the repository root.
fn reader_documents() -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = ["README.md", "models/README.md", "datasets/README.md"]
        .iter()
        .map(PathBuf::from)
        .collect();
    let docs = root().join("docs");
    let mut guides: Vec<PathBuf> = std::fs::read_dir(&docs)
        .expect("docs/ is readable")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| Path::new("docs").join(path.file_name().expect("a file name")))
        .collect();
    guides.sort();
    paths.extend(guides);
    paths
}

/// The line's words: runs of letters and digits, with their byte offsets.
fn words(line: &str) -> Vec<(usize, &str)> {
    let mut found = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices().chain([(line.len(), ' ')]) {
        match (start, c.is_alphanumeric()) {
            (None, true) => start = Some(i),
            (Some(s), false) => {
                found.push((s, &line[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    found
}

fn is_day(word: &str) -> bool {
    word.parse::<u32>().is_ok_and(|d| (1..=31).contains(&d)) && word.len() <= 2
}

/// Whether `text[at..]` starts with `count` ASCII digits.
fn digits_at(text: &[u8], at: usize, count: usize) -> bool {
    text.len() >= at + count && text[at..at + count].iter().all(u8::is_ascii_digit)
}

/// `YYYY-MM-DD` dates in the line.
fn iso_dates(line: &str) -> Vec<String> {
    let bytes = line.as_bytes();
    (0..bytes.len())
        .filter(|&i| i == 0 || !bytes[i - 1].is_ascii_alphanumeric())
        .filter(|&i| {
            digits_at(bytes, i, 4)
                && bytes.get(i + 4) == Some(&b'-')
                && digits_at(bytes, i + 5, 2)
                && bytes.get(i + 7) == Some(&b'-')
                && digits_at(bytes, i + 8, 2)
                && !bytes.get(i + 10).is_some_and(u8::is_ascii_alphanumeric)
        })
        .map(|i| line[i..i + 10].to_string())
        .collect()
}

/// `24 November` and `November 24`.
fn day_and_month(line: &str) -> Vec<String> {
    let words = words(line);
    let mut found = Vec::new();
    for pair in words.windows(2) {
        let ((_, a), (_, b)) = (pair[0], pair[1]);
        if (is_day(a) && MONTHS.contains(&b)) || (MONTHS.contains(&a) && is_day(b)) {
            found.push(format!("{a} {b}"));
        }
    }
    found
}

/// Clock times, `08:45` or `8:45`: an hour below 24, a colon and two digits of minutes below 60,
/// with neither side running on into more digits or colons.
fn clock_times(line: &str) -> Vec<String> {
    let bytes = line.as_bytes();
    let mut found = Vec::new();
    for (colon, _) in line.match_indices(':') {
        let mut start = colon;
        while start > 0 && bytes[start - 1].is_ascii_digit() {
            start -= 1;
        }
        let hours = &line[start..colon];
        let boundary = |b: Option<&u8>| !b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b':');
        let before_ok = start == 0 || boundary(bytes.get(start - 1));
        if !(1..=2).contains(&hours.len()) || !before_ok || !digits_at(bytes, colon + 1, 2) {
            continue;
        }
        if !boundary(bytes.get(colon + 3)) {
            continue;
        }
        let minutes: u32 = line[colon + 1..colon + 3].parse().expect("two digits");
        if hours.parse::<u32>().is_ok_and(|h| h < 24) && minutes < 60 {
            found.push(line[start..colon + 3].to_string());
        }
    }
    found
}

/// Work sessions, and ordinals of past work: `the seventh session`, `since the third ...`.
fn past_work(line: &str) -> Vec<String> {
    let words: Vec<String> = words(line)
        .into_iter()
        .map(|(_, w)| w.to_lowercase())
        .collect();
    let mut found = Vec::new();
    for (i, word) in words.iter().enumerate() {
        if word == "session" || word == "sessions" {
            found.push(format!("'{word}'"));
        }
        let since_the = i >= 2 && words[i - 2] == "since" && words[i - 1] == "the";
        if since_the && ORDINALS.contains(&word.as_str()) {
            found.push(format!("'since the {word}'"));
        }
    }
    found
}

/// Issue numbers: `issue 33`, `issues 10 and 13`, `#33`.
fn issue_numbers(line: &str) -> Vec<String> {
    let words = words(line);
    let mut found = Vec::new();
    for pair in words.windows(2) {
        let ((_, a), (_, b)) = (pair[0], pair[1]);
        let issue = a.eq_ignore_ascii_case("issue") || a.eq_ignore_ascii_case("issues");
        if issue && b.chars().all(|c| c.is_ascii_digit()) {
            found.push(format!("{a} {b}"));
        }
    }
    let bytes = line.as_bytes();
    for (hash, _) in line.match_indices('#') {
        let before = hash.checked_sub(1).map(|i| bytes[i]);
        let number = bytes[hash + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let after = bytes.get(hash + 1 + number);
        if number > 0
            && !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'&')
            && !after.is_some_and(u8::is_ascii_alphanumeric)
        {
            found.push(line[hash..hash + 1 + number].to_string());
        }
    }
    found
}

/// Whether the line is a table row holding a commit or sha256 hash.
fn is_hash_row(line: &str) -> bool {
    line.trim_start().starts_with('|')
        && words(line).iter().any(|(_, w)| {
            (w.len() == 40 || w.len() == 64) && w.chars().all(|c| c.is_ascii_hexdigit())
        })
}

/// What the line says that a reader's document must not, each with its rule.
fn narrative(line: &str) -> Vec<String> {
    let mut found = Vec::new();
    if !is_hash_row(line) {
        found.extend(iso_dates(line).into_iter().map(|d| format!("date {d}")));
    }
    found.extend(day_and_month(line).into_iter().map(|d| format!("date {d}")));
    found.extend(
        clock_times(line)
            .into_iter()
            .map(|t| format!("clock time {t}")),
    );
    found.extend(
        past_work(line)
            .into_iter()
            .map(|w| format!("past work {w}")),
    );
    found.extend(
        issue_numbers(line)
            .into_iter()
            .map(|n| format!("issue number {n}")),
    );
    found
}

#[test]
fn the_readers_documents_narrate_no_past_work() {
    let documents = reader_documents();
    assert!(documents.len() >= 8, "read README, docs/ and the cards");
    let mut found = Vec::new();
    for path in &documents {
        let text = std::fs::read_to_string(root().join(path))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for (n, line) in text.lines().enumerate() {
            for what in narrative(line) {
                found.push(format!("{}:{}: {what}", path.display(), n + 1));
            }
        }
    }
    assert!(
        found.is_empty(),
        "history in a reader's document (it belongs in git and benches/ARCHIVE.md):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_results_and_the_archive_stay_short() {
    for (path, most) in [
        ("benches/RESULTS.md", MAX_RESULTS_LINES),
        ("benches/ARCHIVE.md", MAX_ARCHIVE_LINES),
    ] {
        let text = std::fs::read_to_string(root().join(path)).expect("readable");
        let lines = text.lines().count();
        assert!(lines <= most, "{path} has {lines} lines, at most {most}");
    }
}

#[test]
fn the_rules_catch_what_they_name() {
    let caught = |line: &str| !narrative(line).is_empty();
    assert!(caught("frozen on 2026-11-24, before the change"));
    assert!(caught("measured on 24 November"));
    assert!(caught("since November 24 the default"));
    assert!(caught("the runs took from 08:33 to 08:53"));
    assert!(caught("on by default since the seventh session"));
    assert!(caught("since the third split was used"));
    assert!(caught("Issue 10 asks for every family"));
    assert!(caught("as #33 asked"));
    // Data, citations and anchors pass.
    let hash = "82eccbfe6f96b3f2f6b715b532b999413c039bec27aaa2066ff45021e7fbabd4";
    assert!(!caught(&format!(
        "| effort-test | 549 | 2026-11-22 | `{hash}` |"
    )));
    assert!(!caught(
        "TelaMalloc (Maas et al., ASPLOS 2023), Copyright 2023 Google LLC"
    ));
    assert!(!caught("see [Terms](#terms) and `--seed 20002`"));
    assert!(!caught("a ratio of 1:100000, peak 1,048,576"));
    assert!(!caught("the first strategy may 12 times restart"));
}
