//! One version everywhere a user reads one: the crates, the Python package, the C header's
//! macros and `tm_version()`, the CMake example's request, and the CHANGELOG's newest entry.

use std::ffi::CStr;
use std::path::Path;

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn read(relative: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first `version = "..."` line of a manifest (the package's own version).
fn manifest_version(text: &str) -> &str {
    text.lines()
        .find_map(|line| line.strip_prefix("version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .expect("a version line")
}

/// The value of `#define NAME VALUE` in the header.
fn define<'a>(header: &'a str, name: &str) -> &'a str {
    header
        .lines()
        .find_map(|line| line.strip_prefix(&format!("#define {name} ")))
        .unwrap_or_else(|| panic!("#define {name}"))
        .trim()
}

#[test]
fn every_package_has_the_same_version() {
    for manifest in [
        "../Cargo.toml",
        "../python/Cargo.toml",
        "../python/pyproject.toml",
    ] {
        assert_eq!(manifest_version(&read(manifest)), VERSION, "{manifest}");
    }
}

#[test]
fn the_header_and_the_library_name_the_version() {
    let header = read("include/telamalloc.h");
    let parts: Vec<&str> = VERSION.split('.').collect();
    assert_eq!(define(&header, "TELAMALLOC_VERSION_MAJOR"), parts[0]);
    assert_eq!(define(&header, "TELAMALLOC_VERSION_MINOR"), parts[1]);
    assert_eq!(define(&header, "TELAMALLOC_VERSION_PATCH"), parts[2]);
    assert_eq!(
        define(&header, "TELAMALLOC_VERSION_STRING"),
        format!("\"{VERSION}\"")
    );
    // SAFETY: tm_version returns a static NUL-terminated string.
    let library = unsafe { CStr::from_ptr(telamalloc_c::tm_version()) };
    assert_eq!(library.to_str(), Ok(VERSION));
}

#[test]
fn the_cmake_example_asks_for_this_release_line() {
    let (major, minor) = VERSION.split_once('.').expect("MAJOR.MINOR.PATCH");
    let minor = minor.split('.').next().expect("MINOR");
    let request = format!("find_package(telamalloc {major}.{minor} REQUIRED)");
    assert!(
        read("examples/CMakeLists.txt").contains(&request),
        "{request}"
    );
}

#[test]
fn the_changelog_describes_this_version() {
    let changelog = read("../CHANGELOG.md");
    let newest = changelog
        .lines()
        .find(|line| line.starts_with("## ") && line[3..].starts_with(|c: char| c.is_ascii_digit()))
        .expect("a version heading, `## MAJOR.MINOR.PATCH`");
    assert!(newest.starts_with(&format!("## {VERSION}")), "{newest}");
}
