//! Files around problems: listing the problems of folders and splits, and writing an output so
//! that a reader never sees half of it.

use crate::error::InputError;
use std::path::{Path, PathBuf};

/// The problem files named by `paths`: files as given, folders searched (not recursively) for
/// `.csv` and `.json` files, sorted by name (a folder's `manifest.csv` is not a problem and is
/// skipped).
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
            })
            .collect();
        found.sort();
        files.extend(found);
    }
    Ok(files)
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
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(PathBuf::from)
        .collect())
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
