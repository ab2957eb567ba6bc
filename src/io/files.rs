//! Files around problems: listing the problems of folders and splits, and writing an output so
//! that a reader never sees half of it.

use super::csv_scan::reader;
use super::format::Format;
use crate::error::InputError;
use std::path::{Path, PathBuf};

/// The problem files named by `paths`: files as given, folders searched (not recursively) for
/// `.csv` and `.json` files, sorted by name. A folder's `manifest.csv` is not a problem and is
/// skipped, nor are the solutions beside the problems (see [`is_solution_file`]).
pub fn problem_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let entries = std::fs::read_dir(path).map_err(|e| {
            InputError::at_line(
                &path.display().to_string(),
                None,
                None,
                format!("cannot read folder: {e}"),
            )
        })?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.is_file()
                    && p.file_name().is_some_and(|n| n != "manifest.csv")
                    && matches!(
                        p.extension().and_then(|e| e.to_str()),
                        Some("csv") | Some("json")
                    )
                    && !is_solution_file(p)
            })
            .collect();
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// Whether a file is a solution rather than a problem: a dot-separated part of its name is
/// `solution` (`tiny.12.solution.csv`, `solution.12.csv`), or it reads as a solution telamalloc
/// writes: a JSON file with a `peak` field, or a CSV file whose header has a `memory` column
/// or an `offset` column that every row fills (a problem whose every buffer is fixed leaves
/// nothing to allocate). A file that cannot be read is left for the reader to report.
pub fn is_solution_file(path: &Path) -> bool {
    let name = file_name(path);
    if name
        .split('.')
        .any(|part| part.eq_ignore_ascii_case("solution"))
    {
        return true;
    }
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    match Format::from_path(path) {
        Format::Json => {
            #[derive(serde::Deserialize)]
            struct Peak {
                peak: Option<serde::de::IgnoredAny>,
            }
            let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
            serde_json::from_str::<Peak>(text).is_ok_and(|file| file.peak.is_some())
        }
        Format::Csv => csv_is_solution(&text),
    }
}

/// Whether CSV text has a `memory` column, or an `offset` column filled on every row (and at
/// least one row).
fn csv_is_solution(text: &str) -> bool {
    let mut reader = reader(text);
    let Ok(header) = reader.headers().cloned() else {
        return false;
    };
    let column = |name: &str| header.iter().position(|c| c.trim() == name);
    if column("memory").is_some() {
        return true;
    }
    let Some(offset) = column("offset") else {
        return false;
    };
    let mut rows = 0usize;
    for record in reader.records() {
        match record {
            Ok(record) if record.get(offset).is_some_and(|o| !o.trim().is_empty()) => rows += 1,
            _ => return false,
        }
    }
    rows > 0
}

/// The folder of the split lists, relative to the repository root.
pub(crate) const SPLITS_DIR: &str = "datasets/splits";

/// The problem paths a split lists in `datasets/splits/NAME.txt` (one per line, relative to the
/// repository root; blank lines and `#` comments skipped). Splits belong to the repository, not
/// the installed tool: both the list and its paths are read relative to the working directory,
/// and from anywhere but the repository root the error says so.
pub fn split_files(name: &str) -> Result<Vec<PathBuf>, InputError> {
    let list = Path::new(SPLITS_DIR).join(format!("{name}.txt"));
    let text = std::fs::read_to_string(&list).map_err(|e| {
        let why = match e.kind() {
            std::io::ErrorKind::NotFound if !Path::new(SPLITS_DIR).is_dir() => format!(
                "cannot read split list: no {SPLITS_DIR} folder in the working directory (splits \
                 are read relative to the root of the telamalloc repository: run from there, or \
                 pass the problem files instead)"
            ),
            std::io::ErrorKind::NotFound => format!(
                "cannot read split list: no split '{name}' (the splits are the .txt files in \
                 {SPLITS_DIR})"
            ),
            _ => format!("cannot read split list: {e}"),
        };
        InputError::at_line(&list.display().to_string(), None, None, why)
    })?;
    let files: Vec<PathBuf> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(PathBuf::from)
        .collect();
    if let Some(missing) = files.iter().find(|file| !file.exists()) {
        return Err(InputError::at_line(
            &missing.display().to_string(),
            None,
            None,
            format!(
                "cannot read file: split '{name}' lists it but its problem files are not built \
                 (they are not committed): build them with {} from the repository root \
                 (datasets/README.md says more)",
                split_builder(name)
            ),
        ));
    }
    Ok(files)
}

/// The script that builds a split's problem files, by the split's family of names.
fn split_builder(name: &str) -> &'static str {
    const BUILDERS: [(&str, &str); 6] = [
        ("effort-", "datasets/tools/build_effort.py"),
        ("family-", "datasets/tools/build_families.py"),
        ("loop-", "datasets/tools/build_loop.py"),
        ("unseen-", "datasets/tools/build_unseen.py"),
        ("synthetic-", "datasets/tools/build_synthetic.sh"),
        ("tight-", "datasets/tools/build_tight.sh"),
    ];
    BUILDERS
        .iter()
        .find(|(prefix, _)| name.starts_with(prefix))
        .map_or("datasets/tools/build_splits.sh", |&(_, script)| script)
}

/// A file's name for tables and logs (the whole path when it has none).
pub fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| path.display().to_string())
}

/// Writes `text` to `path`. A regular file (or a new one) is written to a temporary file beside
/// it and renamed, so a reader never sees half an output; anything else (`/dev/null`, a pipe,
/// `/dev/stdout`) is written in place, never replaced.
pub fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    if special {
        return std::fs::write(path, text);
    }
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp-telamalloc");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text)
        .and_then(|_| std::fs::rename(&tmp, path))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}
