//! Bad input is rejected with an error that names the line (or JSON element), the field and
//! what is wrong; good input in every accepted form parses; solutions survive a write and read.

use crate::common;

use common::{problems, Scratch, Shape};
use proptest::prelude::*;
use std::path::Path;
use telamalloc::io::{
    capacity_from_file_name, parse_csv_problem, parse_csv_solution, parse_json_problem,
    parse_json_solution, read_problem, read_solution, write_csv_problem, write_csv_solution,
    write_json_solution,
};
use telamalloc::{Buffer, InputError, Problem, Solution};

const HEADER: &str = "id,lower,upper,size";

/// A CSV file whose lines 2 and 3 are good and whose line 4 is `row`.
fn with_bad_row(header: &str, row: &str) -> String {
    let good = if header.contains("alignment") {
        "a,0,2,4,1,\nb,1,3,4,1,\n"
    } else {
        "a,0,2,4\nb,1,3,4\n"
    };
    format!("{header}\n{good}{row}\n")
}

fn csv_error(text: &str, capacity: Option<u64>) -> InputError {
    match parse_csv_problem(text, "in.csv", capacity) {
        Ok(problem) => panic!("accepted bad input {text:?} as {problem:?}"),
        Err(e) => e,
    }
}

fn json_error(text: &str, capacity: Option<u64>) -> InputError {
    match parse_json_problem(text, "in.json", capacity) {
        Ok(problem) => panic!("accepted bad input {text:?} as {problem:?}"),
        Err(e) => e,
    }
}

/// The error is at `line` and `field` of `in.csv`, and its message contains every word.
fn assert_at_line(err: &InputError, line: usize, field: &str, words: &[&str]) {
    assert_eq!(err.location.file, "in.csv", "{err}");
    assert_eq!(err.location.line, Some(line), "wrong line in: {err}");
    assert_eq!(
        err.location.field.as_deref(),
        Some(field),
        "wrong field in: {err}"
    );
    assert_eq!(err.location.element, None, "{err}");
    for word in words {
        assert!(
            err.message.contains(word),
            "the message {:?} should say {word:?}",
            err.message
        );
    }
    let shown = err.to_string();
    assert!(
        shown.contains(&format!("line {line}")) && shown.contains(&format!("field '{field}'")),
        "the displayed error should name the line and field: {shown}"
    );
}

/// The error is about `buffers[element]` and `field` of `in.json`, with every word.
fn assert_at_element(err: &InputError, element: usize, field: &str, words: &[&str]) {
    assert_eq!(err.location.file, "in.json", "{err}");
    assert_eq!(
        err.location.element,
        Some(element),
        "wrong element in: {err}"
    );
    assert_eq!(
        err.location.field.as_deref(),
        Some(field),
        "wrong field in: {err}"
    );
    for word in words {
        assert!(
            err.message.contains(word),
            "the message {:?} should say {word:?}",
            err.message
        );
    }
    let shown = err.to_string();
    assert!(
        shown.contains(&format!("buffers[{element}]"))
            && shown.contains(&format!("field '{field}'")),
        "the displayed error should name the element and field: {shown}"
    );
}

// ---------------------------------------------------------------------------------------------
// CSV header

#[test]
fn csv_missing_header_column() {
    for missing in ["id", "lower", "upper", "size"] {
        let header: Vec<&str> = ["id", "lower", "upper", "size"]
            .into_iter()
            .filter(|c| *c != missing)
            .collect();
        let text = format!("{}\nx,0,1\n", header.join(","));
        let err = csv_error(&text, None);
        assert_at_line(&err, 1, missing, &["missing column", missing]);
    }
}

#[test]
fn csv_unknown_header_column() {
    let err = csv_error("id,lower,upper,size,colour\na,0,1,4,red\n", None);
    assert_at_line(&err, 1, "colour", &["unknown column 'colour'"]);
}

#[test]
fn csv_repeated_header_column() {
    let err = csv_error("id,lower,upper,size,lower\na,0,1,4,0\n", None);
    assert_at_line(&err, 1, "lower", &["twice"]);
}

/// No header at all (nothing, or only comments and blank lines) names no line; a header line
/// of white space names its line, after any comments.
#[test]
fn csv_empty_file() {
    for (text, line) in [
        ("", None),
        ("\n", None),
        ("# only a comment\r\n\r\n", None),
        ("# c\r\r", None),
        ("   \n", Some(1)),
        ("# c\n\n  \t \na,0,1,4\n", Some(3)),
    ] {
        let err = csv_error(text, None);
        assert_eq!(err.location.line, line, "{text:?}: {err}");
        assert!(err.message.contains("empty"), "{text:?}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------
// CSV rows: syntax

#[test]
fn csv_short_row_names_the_line() {
    let err = csv_error(&with_bad_row(HEADER, "c,0,3"), None);
    assert_eq!(err.location.line, Some(4), "{err}");
    assert!(
        err.message.contains("expected 4 fields, found 3"),
        "{}",
        err.message
    );
}

#[test]
fn csv_short_row_names_the_missing_field() {
    let err = csv_error(&with_bad_row(HEADER, "c,0,3"), None);
    assert_at_line(&err, 4, "size", &[]);
}

#[test]
fn csv_empty_value() {
    let err = csv_error(&with_bad_row(HEADER, "c,0,,4"), None);
    assert_at_line(&err, 4, "upper", &["missing value"]);
    let err = csv_error(&with_bad_row(HEADER, ",0,3,4"), None);
    assert_at_line(&err, 4, "id", &["missing value"]);
}

#[test]
fn csv_non_integer() {
    for (row, field, shown) in [
        ("c,zero,3,4", "lower", "'zero'"),
        ("c,0,3.5,4", "upper", "'3.5'"),
        ("c,0,3,4k", "size", "'4k'"),
        ("c,0,3,0x10", "size", "'0x10'"),
        ("c,0,3,1e3", "size", "'1e3'"),
        ("c,0,3,+", "size", "'+'"),
    ] {
        let err = csv_error(&with_bad_row(HEADER, row), None);
        assert_at_line(&err, 4, field, &["is not an integer", shown]);
    }
    let header = "id,lower,upper,size,alignment,offset";
    let err = csv_error(&with_bad_row(header, "c,0,3,4,8,high"), None);
    assert_at_line(&err, 4, "offset", &["is not an integer"]);
    let err = csv_error(&with_bad_row(header, "c,0,3,4,two,"), None);
    assert_at_line(&err, 4, "alignment", &["is not an integer"]);
}

#[test]
fn csv_negative_number() {
    let err = csv_error(&with_bad_row(HEADER, "c,-1,3,4"), None);
    assert_at_line(&err, 4, "lower", &["'-1' is negative"]);
    let err = csv_error(&with_bad_row(HEADER, "c,0,3,-4"), None);
    assert_at_line(&err, 4, "size", &["negative"]);
    let header = "id,lower,upper,size,alignment,offset";
    let err = csv_error(&with_bad_row(header, "c,0,3,4,1,-8"), None);
    assert_at_line(&err, 4, "offset", &["negative"]);
}

#[test]
fn csv_number_overflowing_u64() {
    let err = csv_error(&with_bad_row(HEADER, "c,0,18446744073709551616,4"), None);
    assert_at_line(&err, 4, "upper", &["too large", "64 bits"]);
    let err = csv_error(
        &with_bad_row(HEADER, "c,0,3,99999999999999999999999999"),
        None,
    );
    assert_at_line(&err, 4, "size", &["too large"]);
    // The largest u64 itself is a number.
    let problem = parse_csv_problem(
        &with_bad_row(HEADER, "c,0,18446744073709551615,4"),
        "in.csv",
        None,
    )
    .expect("u64::MAX is accepted");
    assert_eq!(problem.buffers[2].upper, u64::MAX);
}

// ---------------------------------------------------------------------------------------------
// CSV rows: meaning

#[test]
fn csv_lower_not_below_upper() {
    let err = csv_error(&with_bad_row(HEADER, "c,3,3,4"), None);
    assert_at_line(&err, 4, "upper", &["lower (3) must be less than upper (3)"]);
    let err = csv_error(&with_bad_row(HEADER, "c,7,2,4"), None);
    assert_at_line(&err, 4, "upper", &["lower (7) must be less than upper (2)"]);
}

#[test]
fn csv_size_zero() {
    let err = csv_error(&with_bad_row(HEADER, "c,0,3,0"), None);
    assert_at_line(&err, 4, "size", &["size must be greater than 0"]);
}

#[test]
fn csv_alignment_zero_or_not_a_power_of_two() {
    let header = "id,lower,upper,size,alignment,offset";
    for alignment in [0u64, 3, 6, 12, 100] {
        let err = csv_error(
            &with_bad_row(header, &format!("c,0,3,4,{alignment},")),
            None,
        );
        assert_at_line(
            &err,
            4,
            "alignment",
            &[&format!("alignment {alignment} is not a power of two")],
        );
    }
}

#[test]
fn csv_duplicate_id() {
    let err = csv_error(&with_bad_row(HEADER, "a,5,6,4"), None);
    assert_at_line(&err, 4, "id", &["duplicate id 'a'", "line 2"]);
}

#[test]
fn csv_fixed_offset_breaking_alignment() {
    let header = "id,lower,upper,size,alignment,offset";
    let err = csv_error(&with_bad_row(header, "c,0,3,4,8,12"), None);
    assert_at_line(
        &err,
        4,
        "offset",
        &["fixed offset 12 is not a multiple of the alignment 8"],
    );
}

#[test]
fn csv_fixed_offset_over_capacity() {
    let header = "id,lower,upper,size,alignment,offset";
    let err = csv_error(&with_bad_row(header, "c,0,3,16,1,40"), Some(48));
    assert_at_line(
        &err,
        4,
        "offset",
        &["fixed offset 40 + size 16 exceeds the capacity 48"],
    );
    // Exactly at the capacity is fine.
    parse_csv_problem(&with_bad_row(header, "c,0,3,16,1,32"), "in.csv", Some(48))
        .expect("offset + size == capacity is accepted");
}

#[test]
fn csv_fixed_offset_overflowing_u64() {
    let header = "id,lower,upper,size,alignment,offset";
    let err = csv_error(
        &with_bad_row(header, "c,0,3,16,1,18446744073709551610"),
        None,
    );
    assert_at_line(&err, 4, "offset", &["overflows"]);
}

#[test]
fn csv_buffer_larger_than_capacity() {
    let err = csv_error(&with_bad_row(HEADER, "c,0,3,33"), Some(32));
    assert_at_line(
        &err,
        4,
        "size",
        &["buffer 'c' of size 33 is larger than the capacity 32"],
    );
    parse_csv_problem(&with_bad_row(HEADER, "c,0,3,32"), "in.csv", Some(32))
        .expect("a buffer as large as the capacity is accepted");
}

#[test]
fn csv_capacity_zero() {
    let err = csv_error(&with_bad_row(HEADER, "c,0,3,4"), Some(0));
    assert_eq!(err.location.field.as_deref(), Some("capacity"), "{err}");
    assert!(err.message.contains("greater than 0"), "{err}");
}

#[test]
fn csv_total_size_overflowing_u64() {
    let half = 1u64 << 63;
    let text = format!("{HEADER}\na,0,2,{half}\nb,5,6,4\nc,7,8,{half}\n");
    let err = csv_error(&text, None);
    assert_at_line(&err, 4, "size", &["total size", "overflows 64 bits"]);
    // One less fits.
    let text = format!("{HEADER}\na,0,2,{}\nb,5,6,{half}\n", half - 1);
    parse_csv_problem(&text, "in.csv", None).expect("a total of u64::MAX is accepted");
}

#[test]
fn csv_lines_count_leading_comments() {
    let text = "id,lower,upper,size\n# a comment\n# another\na,0,2,4\nb,4,1,4\n";
    let err = csv_error(text, None);
    assert_at_line(&err, 5, "upper", &["must be less than"]);
}

#[test]
fn csv_lines_count_crlf_blank_and_comment_lines() {
    let cases = [
        ("id,lower,upper,size\r\na,0,2,4\r\nb,4,1,4\r\n", 3),
        ("id,lower,upper,size\na,0,2,4\n\n\nb,4,1,4\n", 5),
        ("id,lower,upper,size\na,0,2,4\n# a comment\nb,4,1,4\n", 4),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|&(text, line)| {
            let err = csv_error(text, None);
            (err.location.line != Some(line))
                .then(|| format!("{text:?}: expected line {line}: {err}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn csv_first_bad_row_is_reported() {
    let text = format!("{HEADER}\na,0,2,4\nb,0,2,0\nc,5,1,4\n");
    let err = csv_error(&text, None);
    assert_at_line(&err, 3, "size", &[]);
}

// ---------------------------------------------------------------------------------------------
// CSV: good input

#[test]
fn csv_columns_in_any_order() {
    let text = "size,upper,id,lower\n4,3,a,0\n8,9,b,2\n";
    let problem = parse_csv_problem(text, "in.csv", Some(64)).expect("valid");
    assert_eq!(
        problem,
        Problem::new(
            vec![Buffer::new("a", 0, 3, 4), Buffer::new("b", 2, 9, 8)],
            Some(64)
        )
    );
    let text = "offset , alignment, lower ,upper,size,id\n16,8,0,3,4,a\n,4,2,9,8,b\n";
    let problem = parse_csv_problem(text, "in.csv", None).expect("valid");
    assert_eq!(problem.buffers[0].offset, Some(16));
    assert_eq!(problem.buffers[0].alignment, 8);
    assert_eq!(problem.buffers[1].offset, None);
    assert_eq!(problem.buffers[1].alignment, 4);
    assert_eq!((problem.buffers[1].lower, problem.buffers[1].upper), (2, 9));
}

#[test]
fn csv_optional_columns() {
    let text = "id,lower,upper,size,alignment,offset\n\
                a,0,3,4,1,\n\
                b,1,4,8,16,32\n\
                c,2,5,4,,\n";
    let problem = parse_csv_problem(text, "in.csv", Some(64)).expect("valid");
    let got: Vec<(u64, Option<u64>)> = problem
        .buffers
        .iter()
        .map(|b| (b.alignment, b.offset))
        .collect();
    assert_eq!(got, vec![(1, None), (16, Some(32)), (1, None)]);
    let text = "id,lower,upper,size,offset\na,0,3,4,\nb,1,4,8,7\n";
    let problem = parse_csv_problem(text, "in.csv", None).expect("valid");
    assert_eq!(problem.buffers[1].offset, Some(7));
    assert_eq!(problem.buffers[1].alignment, 1);
}

#[test]
fn csv_quoted_ids_and_a_header_only_file() {
    let text = "id,lower,upper,size\n\"conv,1\",0,3,4\n\"say \"\"hi\"\"\",1,2,4\n";
    let problem = parse_csv_problem(text, "in.csv", None).expect("valid");
    assert_eq!(problem.buffers[0].id, "conv,1");
    assert_eq!(problem.buffers[1].id, "say \"hi\"");
    let problem = parse_csv_problem("id,lower,upper,size\n", "in.csv", None).expect("valid");
    assert!(problem.is_empty());
}

#[test]
fn capacity_from_file_names() {
    assert_eq!(
        capacity_from_file_name(Path::new("A.1048576.csv")),
        Some(1048576)
    );
    assert_eq!(
        capacity_from_file_name(Path::new("some/dir/input.12.csv")),
        Some(12)
    );
    assert_eq!(capacity_from_file_name(Path::new("B.64.json")), Some(64));
    assert_eq!(capacity_from_file_name(Path::new("A.csv")), None);
    assert_eq!(capacity_from_file_name(Path::new("A.0.csv")), None);
    assert_eq!(capacity_from_file_name(Path::new("A.12k.csv")), None);
    assert_eq!(capacity_from_file_name(Path::new("A..csv")), None);
    assert_eq!(
        capacity_from_file_name(Path::new("A.99999999999999999999.csv")),
        None
    );
}

// ---------------------------------------------------------------------------------------------
// JSON

const JSON_GOOD: &str = r#"{
  "capacity": 64,
  "buffers": [
    {"id": "a", "lower": 0, "upper": 2, "size": 4},
    {"id": "b", "lower": 1, "upper": 3, "size": 8, "alignment": 8, "offset": 16}
  ]
}
"#;

#[test]
fn json_good_problem() {
    let problem = parse_json_problem(JSON_GOOD, "in.json", None).expect("valid");
    assert_eq!(problem.capacity, Some(64));
    assert_eq!(problem.buffers[0], Buffer::new("a", 0, 2, 4));
    assert_eq!(problem.buffers[1].alignment, 8);
    assert_eq!(problem.buffers[1].offset, Some(16));
    // A capacity given by the caller overrides the file's.
    let problem = parse_json_problem(JSON_GOOD, "in.json", Some(100)).expect("valid");
    assert_eq!(problem.capacity, Some(100));
}

/// JSON_GOOD with the second buffer replaced by `buffer` (on line 5).
fn json_with_second(buffer: &str) -> String {
    JSON_GOOD.replace(
        r#"{"id": "b", "lower": 1, "upper": 3, "size": 8, "alignment": 8, "offset": 16}"#,
        buffer,
    )
}

#[test]
fn json_malformed_names_the_line() {
    // A missing comma between the two buffers: the second one, on line 5, is unexpected.
    let text = JSON_GOOD.replace("\"size\": 4},", "\"size\": 4}");
    let err = json_error(&text, None);
    assert_eq!(err.location.line, Some(5), "{err}");
    assert!(err.message.contains("malformed JSON"), "{err}");
    // Cut short.
    let err = json_error(&JSON_GOOD[..JSON_GOOD.len() - 6], None);
    assert!(err.location.line.is_some(), "{err}");
    assert!(err.message.contains("malformed JSON"), "{err}");
    // Not JSON at all.
    let err = json_error("id,lower,upper,size\n", None);
    assert_eq!(err.location.line, Some(1), "{err}");
}

#[test]
fn json_empty_file() {
    for text in ["", "  \n\n"] {
        let err = json_error(text, None);
        assert!(err.message.contains("empty"), "{err}");
    }
}

#[test]
fn json_unknown_field_rejected() {
    let err = json_error(
        &json_with_second(r#"{"id": "b", "lower": 1, "upper": 3, "size": 8, "colour": 1}"#),
        None,
    );
    assert_eq!(err.location.line, Some(5), "{err}");
    assert!(
        err.message.contains("unknown field") && err.message.contains("colour"),
        "{err}"
    );
    let err = json_error(&JSON_GOOD.replace("\"capacity\"", "\"capacty\""), None);
    assert_eq!(err.location.line, Some(2), "{err}");
    assert!(err.message.contains("capacty"), "{err}");
}

#[test]
fn json_bad_numbers_name_the_line_and_value() {
    for (buffer, shown) in [
        (r#"{"id": "b", "lower": 1, "upper": 3, "size": -8}"#, "-8"),
        (r#"{"id": "b", "lower": 1, "upper": 3.5, "size": 8}"#, "3.5"),
        (
            r#"{"id": "b", "lower": 1, "upper": "3", "size": 8}"#,
            "string",
        ),
        (
            r#"{"id": "b", "lower": 1, "upper": 3, "size": 18446744073709551616}"#,
            "floating point",
        ),
    ] {
        let err = json_error(&json_with_second(buffer), None);
        assert_eq!(err.location.line, Some(5), "{buffer}: {err}");
        assert!(err.message.contains(shown), "{buffer}: {err}");
        assert!(err.message.contains("u64"), "{buffer}: {err}");
    }
}

#[test]
fn json_missing_field() {
    let err = json_error(
        &json_with_second(r#"{"id": "b", "lower": 1, "upper": 3}"#),
        None,
    );
    assert_eq!(err.location.line, Some(5), "{err}");
    assert!(err.message.contains("missing field `size`"), "{err}");
}

#[test]
fn json_semantic_errors_name_the_element_and_field() {
    let cases: [(&str, &str, &[&str]); 7] = [
        (
            r#"{"id": "b", "lower": 3, "upper": 3, "size": 8}"#,
            "upper",
            &["lower (3) must be less than upper (3)"],
        ),
        (
            r#"{"id": "b", "lower": 1, "upper": 3, "size": 0}"#,
            "size",
            &["greater than 0"],
        ),
        (
            r#"{"id": "b", "lower": 1, "upper": 3, "size": 8, "alignment": 0}"#,
            "alignment",
            &["alignment 0 is not a power of two"],
        ),
        (
            r#"{"id": "b", "lower": 1, "upper": 3, "size": 8, "alignment": 24}"#,
            "alignment",
            &["alignment 24 is not a power of two"],
        ),
        (
            r#"{"id": "a", "lower": 1, "upper": 3, "size": 8}"#,
            "id",
            &["duplicate id 'a'", "buffers[0]"],
        ),
        (
            r#"{"id": "b", "lower": 1, "upper": 3, "size": 8, "alignment": 16, "offset": 8}"#,
            "offset",
            &["not a multiple of the alignment 16"],
        ),
        (
            r#"{"id": "b", "lower": 1, "upper": 3, "size": 8, "offset": 60}"#,
            "offset",
            &["exceeds the capacity 64"],
        ),
    ];
    for (buffer, field, words) in cases {
        let err = json_error(&json_with_second(buffer), None);
        assert_at_element(&err, 1, field, words);
    }
    let err = json_error(
        &json_with_second(r#"{"id": "b", "lower": 1, "upper": 3, "size": 65}"#),
        None,
    );
    assert_at_element(&err, 1, "size", &["larger than the capacity 64"]);
    let err = json_error(
        &json_with_second(r#"{"id": "", "lower": 1, "upper": 3, "size": 8}"#),
        None,
    );
    assert_at_element(&err, 1, "id", &["empty"]);
}

#[test]
fn json_capacity_zero() {
    let err = json_error(
        &JSON_GOOD.replace("\"capacity\": 64", "\"capacity\": 0"),
        None,
    );
    assert_eq!(err.location.field.as_deref(), Some("capacity"), "{err}");
    assert!(
        err.message.contains("capacity must be greater than 0"),
        "{err}"
    );
    assert!(err.to_string().contains("field 'capacity'"), "{err}");
}

#[test]
fn json_total_size_overflowing_u64() {
    let half = 1u64 << 63;
    let text = format!(
        r#"{{"buffers": [
            {{"id": "a", "lower": 0, "upper": 2, "size": {half}}},
            {{"id": "b", "lower": 5, "upper": 6, "size": {half}}}
        ]}}"#
    );
    let err = json_error(&text, None);
    assert_at_element(&err, 1, "size", &["overflows 64 bits"]);
}

// ---------------------------------------------------------------------------------------------
// Files

#[test]
fn read_problem_takes_the_capacity_from_the_file_name_unless_given() {
    let scratch = Scratch::new();
    let path = scratch.file("net.48.csv", "id,lower,upper,size\na,0,2,4\n");
    assert_eq!(read_problem(&path, None).unwrap().capacity, Some(48));
    assert_eq!(read_problem(&path, Some(8)).unwrap().capacity, Some(8));
    let path = scratch.file("net.csv", "id,lower,upper,size\na,0,2,4\n");
    assert_eq!(read_problem(&path, None).unwrap().capacity, None);
    let path = scratch.file("net.json", JSON_GOOD);
    assert_eq!(read_problem(&path, None).unwrap().capacity, Some(64));
}

#[test]
fn read_problem_errors_name_the_file() {
    let scratch = Scratch::new();
    let path = scratch.file("bad.csv", "id,lower,upper,size\na,0,2,-4\n");
    let err = read_problem(&path, None).unwrap_err();
    assert_eq!(err.location.file, path.display().to_string());
    assert_eq!(err.location.line, Some(2));
    assert!(err.to_string().starts_with(&path.display().to_string()));
    let err = read_problem(&scratch.path("absent.csv"), None).unwrap_err();
    assert!(err.message.contains("cannot read file"), "{err}");
    let path = scratch.path("latin1.csv");
    std::fs::write(&path, b"id,lower,upper,size\n\xe9,0,2,4\n").unwrap();
    let err = read_problem(&path, None).unwrap_err();
    assert!(err.message.contains("UTF-8"), "{err}");
    assert_eq!(err.location.line, Some(2), "{err}");
    // The line and column of the first bad byte, whatever the line endings.
    for (text, line) in [
        (&b"id,lower,upper,size\r\na,0,2,4\r\nb\xff,0,2,4\r\n"[..], 3),
        (b"id,lower,upper,size\ra,0,2,4\rb\xff,0,2,4\r", 3),
        (b"\xfe\xffid", 1),
    ] {
        std::fs::write(&path, text).unwrap();
        let err = read_problem(&path, None).unwrap_err();
        assert_eq!(err.location.line, Some(line), "{err}");
        assert!(
            err.message
                .contains(if line == 3 { "column 2" } else { "column 1" }),
            "{err}"
        );
    }
}

#[test]
fn read_problem_capacity_from_file_name_error_names_the_line() {
    let scratch = Scratch::new();
    let path = scratch.file("net.8.csv", "id,lower,upper,size\na,0,2,4\nb,0,2,16\n");
    let err = read_problem(&path, None).unwrap_err();
    assert_eq!(err.location.line, Some(3), "{err}");
    assert_eq!(err.location.field.as_deref(), Some("size"), "{err}");
}

/// A name of the form `NAME.DIGITS.csv` whose digits give no capacity (0, or more than 64 bits)
/// is an error naming the file and the capacity, unless a capacity is given; it used to read as
/// "no capacity" and then be reported as missing.
#[test]
fn read_problem_rejects_a_file_name_capacity_that_does_not_fit() {
    let scratch = Scratch::new();
    for (name, why) in [
        ("net.99999999999999999999.csv", "overflows 64 bits"),
        ("net.18446744073709551616.json", "overflows 64 bits"),
        ("net.0.csv", "must be greater than 0"),
        ("net.000.csv", "must be greater than 0"),
    ] {
        let text = if name.ends_with(".json") {
            JSON_GOOD.replace("\"capacity\": 64,", "")
        } else {
            "id,lower,upper,size\na,0,2,4\n".to_string()
        };
        let path = scratch.file(name, &text);
        let err = read_problem(&path, None).unwrap_err();
        assert_eq!(err.location.file, path.display().to_string(), "{err}");
        assert_eq!(err.location.field.as_deref(), Some("capacity"), "{err}");
        assert!(err.message.contains(why), "{name}: {err}");
        assert_eq!(read_problem(&path, Some(64)).unwrap().capacity, Some(64));
    }
    // A JSON file's own capacity comes first: the name is not read.
    let path = scratch.file("net.0.json", JSON_GOOD);
    assert_eq!(read_problem(&path, None).unwrap().capacity, Some(64));
    let path = scratch.file(
        "net.18446744073709551615.csv",
        "id,lower,upper,size\na,0,2,4\n",
    );
    assert_eq!(read_problem(&path, None).unwrap().capacity, Some(u64::MAX));
}

#[test]
fn read_problem_capacity_from_file_name_is_checked() {
    let scratch = Scratch::new();
    let path = scratch.file("net.8.csv", "id,lower,upper,size\na,0,2,4\nb,0,2,16\n");
    let err = read_problem(&path, None).unwrap_err();
    assert_eq!(err.location.field.as_deref(), Some("size"), "{err}");
    assert!(err.message.contains("larger than the capacity 8"), "{err}");
}

// ---------------------------------------------------------------------------------------------
// Solutions

fn two_buffers() -> Problem {
    Problem::new(
        vec![Buffer::new("a", 0, 2, 4), Buffer::new("b", 1, 3, 4)],
        Some(16),
    )
}

#[test]
fn csv_solution_errors() {
    let problem = two_buffers();
    let parse = |text: &str| parse_csv_solution(text, "in.csv", &problem).unwrap_err();
    let err = parse("id,offset\na,0\nz,4\n");
    assert_at_line(&err, 3, "id", &["id 'z' is not a buffer of the problem"]);
    let err = parse("id,offset\na,0\nb,4\na,8\n");
    assert_at_line(&err, 4, "id", &["id 'a' appears twice"]);
    let err = parse("id,offset\na,0\nb,-4\n");
    assert_at_line(&err, 3, "offset", &["negative"]);
    let err = parse("id,offset\na,0\n");
    assert_eq!(err.location.field.as_deref(), Some("offset"), "{err}");
    assert!(err.message.contains("no offset for buffer 'b'"), "{err}");
    let err = parse("id,size\na,0\n");
    assert_at_line(&err, 1, "offset", &["missing column"]);
    let err = parse("");
    assert!(err.message.contains("empty"), "{err}");
    // Extra known and unknown columns are ignored.
    let solution = parse_csv_solution(
        "peak,id,lower,offset\n9,b,1,4\n9,a,0,0\n",
        "in.csv",
        &problem,
    )
    .expect("valid");
    assert_eq!(solution.offsets, vec![0, 4]);
}

#[test]
fn json_solution_errors() {
    let problem = two_buffers();
    let parse = |text: &str| parse_json_solution(text, "in.json", &problem);
    let err =
        parse(r#"{"buffers": [{"id": "a", "offset": 0}, {"id": "z", "offset": 4}]}"#).unwrap_err();
    assert_at_element(&err, 1, "id", &["'z' is not a buffer"]);
    let err = parse(r#"{"buffers": [{"id": "a", "offset": 0}, {"id": "b"}]}"#).unwrap_err();
    assert_at_element(&err, 1, "offset", &["missing offset"]);
    let err =
        parse(r#"{"buffers": [{"id": "a", "offset": 0}, {"id": "a", "offset": 4}]}"#).unwrap_err();
    assert_at_element(&err, 1, "id", &["appears twice"]);
    let err = parse(r#"{"buffers": [{"id": "a", "offset": 0}]}"#).unwrap_err();
    assert!(err.message.contains("no offset for buffer 'b'"), "{err}");
    let err = parse("{\"buffers\": [\n{\"id\": \"a\", \"offset\": -1}]}").unwrap_err();
    assert_eq!(err.location.line, Some(2), "{err}");
}

#[test]
fn solution_files_round_trip() {
    let scratch = Scratch::new();
    let mut problem = two_buffers();
    problem.buffers[1].alignment = 4;
    let solution = Solution {
        offsets: vec![0, 4],
    };
    for (name, text) in [
        ("s.csv", write_csv_solution(&problem, &solution)),
        ("s.json", write_json_solution(&problem, &solution)),
    ] {
        let path = scratch.file(name, &text);
        assert_eq!(read_solution(&path, &problem).unwrap(), solution, "{name}");
    }
    let csv = write_csv_solution(&problem, &solution);
    assert_eq!(
        csv,
        "id,lower,upper,size,alignment,offset\na,0,2,4,1,0\nb,1,3,4,4,4\n"
    );
    let json: serde_json::Value =
        serde_json::from_str(&write_json_solution(&problem, &solution)).unwrap();
    assert_eq!(json["peak"], 8);
    assert_eq!(json["capacity"], 16);
    assert_eq!(json["buffers"][1]["offset"], 4);
}

/// Ids with the characters CSV must quote (but none the reader trims or treats as a comment).
fn awkward_ids() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec("[a-z0-9][a-z0-9,\" _.-]{0,6}[a-z0-9\"]", 1..12)
}

/// The problem with ids drawn from `ids`, made unique by a numbered suffix.
fn with_ids(mut problem: Problem, ids: &[String]) -> Problem {
    for (i, (b, id)) in problem
        .buffers
        .iter_mut()
        .zip(ids.iter().cycle())
        .enumerate()
    {
        b.id = format!("{id}#{i}");
    }
    problem
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn csv_solution_round_trip(
        problem in problems(Shape::CONSTRAINED),
        ids in awkward_ids(),
        offsets in prop::collection::vec(0..1u64 << 40, 14),
    ) {
        let problem = with_ids(problem, &ids);
        let solution = Solution { offsets: offsets[..problem.len()].to_vec() };
        let text = write_csv_solution(&problem, &solution);
        let back = parse_csv_solution(&text, "s.csv", &problem);
        prop_assert_eq!(back, Ok(solution.clone()));
        let text = write_json_solution(&problem, &solution);
        let back = parse_json_solution(&text, "s.json", &problem);
        prop_assert_eq!(back, Ok(solution));
    }

    #[test]
    fn csv_problem_round_trip(problem in problems(Shape::CONSTRAINED), ids in awkward_ids()) {
        let problem = with_ids(problem, &ids);
        let text = write_csv_problem(&problem);
        prop_assert_eq!(parse_csv_problem(&text, "p.csv", None), Ok(problem));
    }
}

#[test]
fn csv_solution_round_trip_of_an_id_starting_with_hash() {
    // A CSV problem can hold such an id when it is quoted.
    let problem = parse_csv_problem(
        "id,lower,upper,size\n\"#1\",0,2,4\nb,1,3,4\n",
        "p.csv",
        None,
    )
    .expect("valid");
    assert_eq!(problem.buffers[0].id, "#1");
    let solution = Solution {
        offsets: vec![0, 4],
    };
    let text = write_csv_solution(&problem, &solution);
    assert_eq!(parse_csv_solution(&text, "s.csv", &problem), Ok(solution));
}

/// Ids a CSV writer must take care over: commas, quotes (double and single), spaces inside, a
/// leading `#` (a comment mark at the start of a line), semicolons, tabs, line breaks, unicode
/// (accents, CJK, an emoji), and ids that look like numbers or like the header. No space or tab
/// at either end: those are [`ids_with_edge_whitespace`].
fn hard_id() -> impl Strategy<Value = String> {
    let inner = "[a-z0-9 ,\"'#;\t\n\r\u{e9}\u{65e5}\u{1f600}]{0,6}";
    let edge = "[a-z0-9,\"'#;\u{e9}\u{65e5}\u{1f600}]";
    prop_oneof![
        (edge, inner, edge).prop_map(|(a, b, c)| format!("{a}{b}{c}")),
        edge.prop_map(|s| s.to_string()),
        Just("#".to_string()),
        Just("#1".to_string()),
        Just("\"".to_string()),
        Just("\"\"".to_string()),
        Just("a,b".to_string()),
        Just("a \"quoted\" id".to_string()),
        Just("id".to_string()),
        Just("id,lower,upper,size".to_string()),
        Just("12".to_string()),
        Just("-0".to_string()),
        Just("line\nbreak".to_string()),
        Just("crlf\r\nid".to_string()),
        Just("caf\u{e9} \u{65e5}\u{672c} \u{1f600}".to_string()),
    ]
}

/// Distinct ids, one per buffer of `problem` (extra buffers are dropped: the fixed offsets of
/// [`problems`] stay consistent when buffers go).
fn with_distinct_ids(mut problem: Problem, ids: std::collections::BTreeSet<String>) -> Problem {
    problem.buffers.truncate(ids.len());
    for (b, id) in problem.buffers.iter_mut().zip(ids) {
        b.id = id;
    }
    problem
}

/// Checks that `problem` survives every write and read: problem CSV, solution CSV and JSON.
fn round_trips(problem: &Problem, offsets: &[u64]) -> Result<(), TestCaseError> {
    let text = write_csv_problem(problem);
    prop_assert_eq!(
        parse_csv_problem(&text, "p.csv", None),
        Ok(problem.clone()),
        "problem CSV:\n{}",
        text
    );
    let solution = Solution {
        offsets: offsets[..problem.len()].to_vec(),
    };
    let text = write_csv_solution(problem, &solution);
    prop_assert_eq!(
        parse_csv_solution(&text, "s.csv", problem),
        Ok(solution.clone()),
        "solution CSV:\n{}",
        text
    );
    let text = write_json_solution(problem, &solution);
    prop_assert_eq!(
        parse_json_solution(&text, "s.json", problem),
        Ok(solution),
        "solution JSON:\n{}",
        text
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn round_trip_with_hard_ids(
        problem in problems(Shape::CONSTRAINED),
        ids in prop::collection::btree_set(hard_id(), 1..14),
        offsets in prop::collection::vec(0..1u64 << 40, 14),
    ) {
        round_trips(&with_distinct_ids(problem, ids), &offsets)?;
    }

    /// CSV readers trim every field, so an id with white space at either end could not read
    /// back: the problem rules reject it, from JSON as from code, naming the buffer and field.
    #[test]
    fn ids_with_edge_whitespace_are_rejected(
        problem in problems(Shape::CONSTRAINED),
        ids in prop::collection::btree_set(ids_with_edge_whitespace(), 1..14),
    ) {
        let problem = with_distinct_ids(problem, ids);
        let first = problem
            .buffers
            .iter()
            .position(|b| b.id.trim() != b.id)
            .expect("some id has white space at an end");
        let broken = problem.check(None).expect_err("rejected");
        prop_assert_eq!(broken.field, "id");
        prop_assert!(broken.buffer.is_some_and(|b| b <= first), "{:?}", broken);
        let json = serde_json::to_string(&problem).expect("serialises");
        let err = parse_json_problem(&json, "in.json", None).expect_err("rejected");
        prop_assert_eq!(err.location.field.as_deref(), Some("id"));
    }
}

/// Ids with a space or tab at one end or both (spaces only are among them).
fn ids_with_edge_whitespace() -> impl Strategy<Value = String> {
    ("[ \t]{0,2}", "[a-z#,\" ]{0,4}", "[ \t]{0,2}")
        .prop_filter("whitespace at an end", |(a, _, c)| {
            !a.is_empty() || !c.is_empty()
        })
        .prop_map(|(a, b, c)| format!("{a}{b}{c}"))
}

#[test]
fn header_errors_name_the_header_line_after_comments_and_blank_lines() {
    let err = csv_error(
        "# made by hand\n\n# columns:\nid,lower,upper,colour\na,0,1,4\n",
        None,
    );
    assert_at_line(&err, 4, "colour", &["unknown column 'colour'"]);
    let err = csv_error("# one comment\r\nid,lower,upper,lower\r\na,0,1,4\r\n", None);
    assert_at_line(&err, 2, "lower", &["twice"]);
    let err = csv_error("\n\nid,lower,upper\na,0,1\n", None);
    assert_at_line(&err, 3, "size", &["missing column 'size'"]);
}

#[test]
fn cr_only_line_endings_name_the_real_line() {
    let err = csv_error("id,lower,upper,size\ra,0,1,4\rb,0,1,x\r", None);
    assert_at_line(&err, 3, "size", &["'x' is not an integer"]);
    let err = csv_error("# c\rid,lower,upper,size\r\ra,0,1,4\rb,2,1,4\r", None);
    assert_at_line(&err, 5, "upper", &["must be less than upper"]);
    let problem = parse_csv_problem("id,lower,upper,size\ra,0,1,4\rb,0,1,4\r", "in.csv", None)
        .expect("CR-only endings read");
    assert_eq!(problem.len(), 2);
}

#[test]
fn json_type_errors_name_the_field() {
    let text = "{\"capacity\": 8,\n \"buffers\": [\n  {\"id\": \"a\", \"lower\": 0, \"upper\": \"x\", \"size\": 4}\n ]}\n";
    let err = json_error(text, None);
    assert_eq!(err.location.line, Some(3), "{err}");
    assert_eq!(err.location.field.as_deref(), Some("upper"), "{err}");
    let err = json_error(
        "{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 2, \"size\": -4}]}",
        None,
    );
    assert_eq!(err.location.field.as_deref(), Some("size"), "{err}");
    let err = json_error("{\"capacity\": \"big\", \"buffers\": []}", None);
    assert_eq!(err.location.field.as_deref(), Some("capacity"), "{err}");
    // A syntax error names no field.
    let err = json_error("{\"buffers\": [", None);
    assert_eq!(err.location.field, None, "{err}");
}

/// A line of a generated CSV file, before the line endings are chosen.
#[derive(Clone, Debug)]
enum CsvLine {
    /// A comment; with `true` it holds a quote (a comment is read to its end, quotes and all).
    Comment(bool),
    Blank,
    /// A good row; with `true` its id holds a line break (quoted), so it spans two lines.
    Row(bool),
}

fn csv_lines() -> impl Strategy<Value = Vec<CsvLine>> {
    prop::collection::vec(
        prop_oneof![
            any::<bool>().prop_map(CsvLine::Comment),
            Just(CsvLine::Blank),
            any::<bool>().prop_map(CsvLine::Row),
        ],
        0..8,
    )
}

/// The fault put into a generated file, the field its error names and words of its message.
fn csv_faults() -> impl Strategy<Value = (&'static str, &'static str, &'static str)> {
    prop::sample::select(vec![
        ("bad,0,x,4", "upper", "not an integer"),
        ("bad,5,2,4", "upper", "must be less than upper"),
        ("bad,0,2", "size", "missing field"),
        ("bad,0,2,0", "size", "size"),
        ("r0,0,2,4", "id", "duplicate id"),
        ("HEADER", "colour", "unknown column"),
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Whatever comes before it (comments, blank lines, rows whose quoted id holds a line break)
    /// and whatever the line endings (LF, CRLF or CR only), an error names the real line of the
    /// faulty row, or of the header when the header is at fault.
    #[test]
    fn csv_errors_name_the_real_line(
        before_header in csv_lines(),
        before_fault in csv_lines(),
        after_fault in csv_lines(),
        fault in csv_faults(),
        ending in prop::sample::select(vec!["\n", "\r\n", "\r"]),
    ) {
        let (fault_row, field, words) = fault;
        let header_fault = fault_row == "HEADER";
        let mut file = CsvFile { text: String::new(), line: 1, rows: 0, ending };
        file.lines(&before_header, false);
        let header_line = file.line;
        file.push(if header_fault { "id,lower,upper,size,colour" } else { "id,lower,upper,size" });
        if !header_fault {
            // The duplicate-id fault needs a first r0.
            file.push("r0,0,2,4");
            file.rows = 1;
        }
        file.lines(&before_fault, true);
        let fault_line = file.line;
        if !header_fault {
            file.push(fault_row);
        }
        file.lines(&after_fault, !header_fault);
        let expected = if header_fault { header_line } else { fault_line };
        let text = file.text;
        let err = match parse_csv_problem(&text, "in.csv", Some(1 << 20)) {
            Ok(_) => return Err(TestCaseError::fail(format!("accepted {text:?}"))),
            Err(e) => e,
        };
        prop_assert_eq!(err.location.line, Some(expected), "{:?}: {}", text, err);
        prop_assert_eq!(err.location.field.as_deref(), Some(field), "{:?}: {}", text, err);
        prop_assert!(err.message.contains(words), "{:?}: {}", text, err);
    }
}

/// A CSV file being written line by line, counting its lines.
struct CsvFile {
    text: String,
    /// The line the next content goes on.
    line: usize,
    /// Good rows written (their ids are `r0`, `r1`, ...).
    rows: usize,
    /// The line ending.
    ending: &'static str,
}

impl CsvFile {
    /// Appends `content` and a line ending; a line break inside a quoted id counts too.
    fn push(&mut self, content: &str) {
        self.text.push_str(content);
        self.text.push_str(self.ending);
        self.line += 1 + content.matches('\n').count();
    }

    /// Appends `lines`; rows only if `rows_allowed` (before the header they become comments).
    fn lines(&mut self, lines: &[CsvLine], rows_allowed: bool) {
        for l in lines {
            match l {
                CsvLine::Comment(false) => self.push("# a comment, with commas"),
                CsvLine::Comment(true) => self.push("# a comment's \"quote, with commas"),
                CsvLine::Blank => self.push(""),
                CsvLine::Row(_) if !rows_allowed => self.push("# not a row before the header"),
                CsvLine::Row(broken) => {
                    let r = self.rows;
                    let id = if *broken {
                        format!("\"r{r}\nx\"")
                    } else {
                        format!("r{r}")
                    };
                    self.push(&format!("{id},0,2,4"));
                    self.rows += 1;
                }
            }
        }
    }
}

/// A JSON text and the line, element and field its error must name.
type Placed<'a> = (&'a str, Option<usize>, Option<usize>, Option<&'a str>);

/// A value of the wrong type or range, a missing, unknown or repeated field: the error names the
/// line, the buffer (`buffers[i]`) and the field, as the problem rules' errors do; a value
/// outside the buffer list names its key. Syntax errors too, as far as the text before them goes.
#[test]
fn json_data_errors_name_the_line_the_buffer_and_the_field() {
    let cases: [Placed; 14] = [
        (
            "{\"capacity\": 8,\n \"buffers\": [\n  {\"id\": \"a\", \"lower\": 0, \"upper\": 2, \"size\": 4},\n  {\"id\": \"b\", \"lower\": 0, \"upper\": 2, \"size\": \"x\"}\n]}",
            Some(4),
            Some(1),
            Some("size"),
        ),
        (
            "{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 2, \"size\": 4}, {\"id\": \"b\", \"lower\": -1, \"upper\": 2, \"size\": 4}]}",
            Some(1),
            Some(1),
            Some("lower"),
        ),
        // Missing: the element that lacks it.
        (
            "{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 2, \"size\": 4},\n{\"id\": \"b\", \"lower\": 0, \"upper\": 2}\n]}",
            Some(3),
            Some(1),
            Some("size"),
        ),
        // Unknown and repeated fields.
        (
            "{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 2, \"size\": 4, \"colour\": 1}]}",
            Some(1),
            Some(0),
            Some("colour"),
        ),
        (
            "{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"lower\": 1, \"upper\": 2, \"size\": 4}]}",
            Some(1),
            Some(0),
            Some("lower"),
        ),
        // Ids with quotes, commas and brackets do not confuse the place.
        (
            "{\"buffers\": [{\"id\": \"[a\\\",{b:\", \"lower\": 0, \"upper\": 2, \"size\": 4}, {\"id\": \"}]\", \"lower\": 0, \"upper\": 2, \"size\": 4, \"offset\": 1.5}]}",
            Some(1),
            Some(1),
            Some("offset"),
        ),
        (
            "{\"buffers\": [{\"id\": 7, \"lower\": 0, \"upper\": 2, \"size\": 4}]}",
            Some(1),
            Some(0),
            Some("id"),
        ),
        // Outside the buffer list: the key.
        (
            "{\"capacity\": \"big\", \"buffers\": []}",
            Some(1),
            None,
            Some("capacity"),
        ),
        ("{\"buffers\": 5}", Some(1), None, Some("buffers")),
        ("{\"buffers\": [], \"colour\": 1}", Some(1), None, Some("colour")),
        // A buffer that is not an object: the element, no field.
        ("{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 2, \"size\": 4}, 3]}", Some(1), Some(1), None),
        // Syntax: the line and the buffer it is in.
        ("{\"buffers\": [\n{\"id\": \"a\",, }]}", Some(2), Some(0), None),
        ("{\"buffers\": [\n{\"id\": \"a\", \"size\": 1e400}]}", Some(2), Some(0), Some("size")),
        ("{\"capacity\": 01, \"buffers\": []}", Some(1), None, Some("capacity")),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|&(text, line, element, field)| {
            let err = json_error(text, None);
            let found = (
                err.location.line,
                err.location.element,
                err.location.field.as_deref(),
            );
            (found != (line, element, field)).then(|| {
                format!(
                    "{text}\n  expected {:?}\n  found {found:?}: {err}",
                    (line, element, field)
                )
            })
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let err = json_error(cases[0].0, None);
    assert!(
        err.to_string().starts_with(
            "in.json: line 4: buffers[1] (id 'b'): field 'size': malformed JSON: invalid type"
        ),
        "{err}"
    );
}

/// Solutions too: a bad offset names its buffer.
#[test]
fn json_solution_data_errors_name_the_buffer_and_field() {
    let problem = two_buffers();
    let err = parse_json_solution(
        "{\"buffers\": [\n{\"id\": \"a\", \"offset\": 0},\n{\"id\": \"b\", \"offset\": \"4\"}]}",
        "in.json",
        &problem,
    )
    .unwrap_err();
    assert_eq!(err.location.line, Some(3), "{err}");
    assert_eq!(err.location.element, Some(1), "{err}");
    assert_eq!(err.location.field.as_deref(), Some("offset"), "{err}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any field of any buffer given a value of the wrong type, in a file laid out on many
    /// lines or on one: the error names that buffer and field, and the line the value is on.
    #[test]
    fn json_type_errors_name_the_buffer_and_field_wherever_they_are(
        problem in problems(Shape::CONSTRAINED),
        pick in any::<prop::sample::Index>(),
        field in prop::sample::select(vec!["lower", "upper", "size", "alignment", "offset", "id"]),
        pretty in any::<bool>(),
    ) {
        let mut value = serde_json::to_value(&problem).expect("serialises");
        let buffers = value["buffers"].as_array_mut().expect("a list");
        prop_assume!(!buffers.is_empty());
        let i = pick.index(buffers.len());
        let bad = if field == "id" { serde_json::json!(false) } else { serde_json::json!("x") };
        buffers[i][field] = bad;
        let text = if pretty {
            serde_json::to_string_pretty(&value).expect("serialises")
        } else {
            serde_json::to_string(&value).expect("serialises")
        };
        let err = json_error(&text, None);
        prop_assert_eq!(err.location.element, Some(i), "{}", err);
        prop_assert_eq!(err.location.field.as_deref(), Some(field), "{}", err);
        let needle = if field == "id" { "false" } else { "\"x\"" };
        let at = text.find(&format!("\"{field}\": {needle}")).or_else(|| text.find(&format!("\"{field}\":{needle}")));
        // The value's line: count the lines before the (only) bad value.
        let at = at.expect("the bad value is in the text");
        let line = text[..at].matches('\n').count() + 1;
        prop_assert_eq!(err.location.line, Some(line), "{}", err);
    }
}

// ---------------------------------------------------------------------------------------------
// MiniMalloc's header names

fn csv_ok(text: &str) -> Problem {
    parse_csv_problem(text, "in.csv", None).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

#[test]
fn minimalloc_header_aliases_read_as_the_same_columns() {
    // `begin`/`start` for lower, `buffer`/`buffer_id` for id, any column order.
    let a = csv_ok("begin,size,buffer,upper,alignment\n6,18,x,12,2\n5,15,y,10,1\n");
    let b = csv_ok("buffer_id,start,upper,size,alignment\nx,6,12,18,2\ny,5,10,15,1\n");
    let plain = csv_ok("id,lower,upper,size,alignment\nx,6,12,18,2\ny,5,10,15,1\n");
    assert_eq!(a, plain);
    assert_eq!(b, plain);
    assert_eq!(plain.buffers[0].alignment, 2);
}

#[test]
fn an_end_column_is_an_inclusive_last_step() {
    // MiniMalloc's older files give `end` = the last step the buffer is live: upper = end + 1.
    let p = csv_ok("buffer,start,end,size\nx,0,2,4\ny,3,3,8\n");
    assert_eq!((p.buffers[0].lower, p.buffers[0].upper), (0, 3));
    assert_eq!((p.buffers[1].lower, p.buffers[1].upper), (3, 4));
    let err = csv_error(&format!("id,lower,end,size\nx,0,{},4\n", u64::MAX), None);
    assert_at_line(&err, 2, "end", &["overflows"]);
}

#[test]
fn a_column_named_twice_through_an_alias_is_rejected() {
    let err = csv_error("id,buffer,lower,upper,size\na,a,0,1,4\n", None);
    assert_at_line(&err, 1, "buffer", &["'buffer'", "'id'"]);
    let err = csv_error("id,lower,upper,end,size\na,0,1,0,4\n", None);
    assert_at_line(&err, 1, "end", &["'end'", "'upper'"]);
}

#[test]
fn errors_name_the_files_own_column() {
    let err = csv_error("buffer,start,end,size\nx,0,two,4\n", None);
    assert_at_line(&err, 2, "end", &["'two' is not an integer"]);
    let err = csv_error("buffer,begin,upper,size\nx,-1,2,4\n", None);
    assert_at_line(&err, 2, "begin", &["negative"]);
}

// ---------------------------------------------------------------------------------------------
// Line endings: CR only, LF and CRLF read alike, whatever quotes the comments and fields hold

/// `lines` joined with each line ending (after the last one too).
fn with_endings(lines: &[&str]) -> [(&'static str, String); 3] {
    ["\n", "\r\n", "\r"].map(|ending| {
        let mut text = lines.join(ending);
        text.push_str(ending);
        (ending, text)
    })
}

/// Quotes in comments, a quote inside an unquoted field, `""` in a quoted field, text after a
/// closing quote and a quoted line break: the csv reader's rules, the same with every ending.
#[test]
fn quotes_in_comments_and_fields_read_alike_with_every_line_ending() {
    let files: [(&[&str], &[&str]); 7] = [
        // Two quoted comments that would pair up across the row between them.
        (
            &[
                "id,lower,upper,size",
                "b1,0,3,4",
                "# \"q",
                "b2,3,9,4",
                "# q\"",
                "b3,0,9,4",
            ],
            &["b1", "b2", "b3"],
        ),
        // One quote alone in a comment.
        (
            &["id,lower,upper,size", "# it\"s", "b1,0,3,4", "b2,3,9,4"],
            &["b1", "b2"],
        ),
        // A comment before the header, and one with an escaped quote pair.
        (
            &[
                "# \"made by hand",
                "id,lower,upper,size",
                "# \"\"",
                "b1,0,3,4",
            ],
            &["b1"],
        ),
        // A quote inside an unquoted field is a plain character; `""` inside a quoted one is a quote.
        (
            &[
                "id,lower,upper,size",
                "b\"1,0,3,4",
                "\"b\"\"2\",3,9,4",
                "b3,0,9,4",
            ],
            &["b\"1", "b\"2", "b3"],
        ),
        // Text after a closing quote goes on unquoted: its quote is a plain character too.
        (
            &["id,lower,upper,size", "\"b\"1\",0,3,4", "b2,3,9,4"],
            &["b1\"", "b2"],
        ),
        // A quote after a leading space does not open a quoted field (the field is trimmed after).
        (
            &["id,lower,upper,size", " \"b1,0,3,4", "b2,3,9,4"],
            &["\"b1", "b2"],
        ),
        // A quoted line break, then a comment with a quote.
        (
            &[
                "id,lower,upper,size",
                "\"b\n1\",0,3,4",
                "# it\"s",
                "b2,3,9,4",
            ],
            &["b\n1", "b2"],
        ),
    ];
    for (lines, ids) in files {
        for (ending, text) in with_endings(lines) {
            let problem = parse_csv_problem(&text, "in.csv", None)
                .unwrap_or_else(|e| panic!("{ending:?} {text:?}: {e}"));
            let got: Vec<&str> = problem.buffers.iter().map(|b| b.id.as_str()).collect();
            assert_eq!(got, ids, "{ending:?} {text:?}");
        }
    }
}

/// The same faulty files with each line ending: the error names the same line and field.
#[test]
fn quotes_in_comments_do_not_move_error_lines_with_any_line_ending() {
    let files: [(&[&str], usize, &str); 4] = [
        (
            &["id,lower,upper,size", "# it\"s", "b1,0,3,4", "b2,3,x,4"],
            4,
            "upper",
        ),
        (
            &[
                "id,lower,upper,size",
                "# \"q",
                "b1,0,3,4",
                "# q\"",
                "b2,5,3,4",
            ],
            5,
            "upper",
        ),
        (
            &["id,lower,upper,size", "\"b\n1\",0,3,4", "# it\"s", "b2,0,2"],
            5,
            "size",
        ),
        (&["# \"", "id,lower,upper,colour", "b1,0,3,4"], 2, "colour"),
    ];
    for (lines, line, field) in files {
        for (ending, text) in with_endings(lines) {
            let err = csv_error(&text, None);
            assert_eq!(err.location.line, Some(line), "{ending:?} {text:?}: {err}");
            assert_eq!(
                err.location.field.as_deref(),
                Some(field),
                "{ending:?}: {err}"
            );
        }
    }
}

/// A solution shares the reader: quoted comments hide no row of it either.
#[test]
fn solution_rows_between_quoted_comments_are_read_with_every_line_ending() {
    let problem = two_buffers();
    for (ending, text) in with_endings(&["id,offset", "# \"q", "a,0", "# q\"", "b,4"]) {
        let solution = parse_csv_solution(&text, "in.csv", &problem)
            .unwrap_or_else(|e| panic!("{ending:?} {text:?}: {e}"));
        assert_eq!(solution.offsets, vec![0, 4], "{ending:?}");
    }
    for (ending, text) in with_endings(&["id,offset", "# it\"s", "a,0", "b,x"]) {
        let err = parse_csv_solution(&text, "in.csv", &problem).unwrap_err();
        assert_at_line(&err, 4, "offset", &["'x' is not an integer"]);
        assert!(err.to_string().contains("line 4"), "{ending:?}: {err}");
    }
}

// ---------------------------------------------------------------------------------------------
// Long fields are cut in messages

/// Ten million digits: the message quotes the first 64 characters and says how long it was.
#[test]
fn a_huge_field_gives_a_short_message() {
    let huge = "9".repeat(10_000_000);
    let cut = format!("'{}…' (10000000 characters)", &huge[..64]);
    let err = csv_error(&format!("{HEADER}\na,0,1,{huge}\n"), None);
    assert_at_line(&err, 2, "size", &[&cut, "too large"]);
    assert!(
        err.to_string().len() < 300,
        "{} bytes",
        err.to_string().len()
    );
    let err = csv_error(&format!("{HEADER},{huge}\na,0,1,4,5\n"), None);
    assert!(
        err.to_string().contains(&cut),
        "{}",
        &err.to_string()[..200.min(err.to_string().len())]
    );
    assert!(
        err.to_string().len() < 600,
        "{} bytes",
        err.to_string().len()
    );
    // Ids too, in the rules' messages and in a solution's.
    let id = "x".repeat(100);
    let err = csv_error(&format!("{HEADER}\n{id},0,1,4\n{id},0,1,4\n"), None);
    assert!(
        err.message
            .contains(&format!("'{}…' (100 characters)", &id[..64])),
        "{err}"
    );
    let err =
        parse_csv_solution(&format!("id,offset\n{id},0\n"), "in.csv", &two_buffers()).unwrap_err();
    assert!(
        err.message.contains("(100 characters)") && err.message.len() < 200,
        "{err}"
    );
    // Exactly 64 characters are quoted whole; multi-byte characters are cut whole.
    let err = csv_error(&format!("{HEADER}\na,0,1,{}\n", "7".repeat(64)), None);
    assert!(
        err.message.contains(&format!("'{}'", "7".repeat(64))),
        "{err}"
    );
    let err = csv_error(&format!("{HEADER}\na,0,1,{}\n", "é".repeat(65)), None);
    assert!(
        err.message
            .contains(&format!("'{}…' (65 characters)", "é".repeat(64))),
        "{err}"
    );
}

/// JSON: a huge string, key or number is cut the same way.
#[test]
fn a_huge_json_value_gives_a_short_message() {
    let huge = "9".repeat(10_000_000);
    for text in [
        format!("{{\"buffers\": [{{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": \"{huge}\"}}]}}"),
        format!("{{\"buffers\": [{{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": {huge}}}]}}"),
        format!("{{\"buffers\": [{{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 1, \"{huge}\": 1}}]}}"),
        format!("{{\"buffers\": [{{\"id\": \"{huge}\", \"lower\": 0, \"upper\": 0, \"size\": 1}}]}}"),
    ] {
        let shown = json_error(&text, None).to_string();
        assert!(shown.len() < 600, "{} bytes: {}", shown.len(), &shown[..300]);
        assert!(shown.contains("buffers[0]"), "{shown}");
    }
}

// ---------------------------------------------------------------------------------------------
// JSON: number syntax, byte-order mark, hint -1

/// Number syntax errors name the line, the buffer (index and id) and the field.
#[test]
fn json_number_syntax_errors_name_the_buffer_and_field() {
    let huge = "9".repeat(10_000_000);
    for value in ["1e400", "NaN", "+1", "01", "-", "1.", &huge] {
        let text = format!(
            "{{\"buffers\": [\n{{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4}},\n{{\"id\": \"b\", \"lower\": 0, \"upper\": 1, \"size\": {value}}}]}}"
        );
        let err = json_error(&text, None);
        let shown = err.to_string();
        assert!(
            shown.starts_with("in.json: line 3: buffers[1] (id 'b'): field 'size': malformed JSON"),
            "{}: {}",
            &value[..value.len().min(10)],
            &shown[..shown.len().min(300)]
        );
        assert_eq!(err.location.element, Some(1), "{shown}");
    }
    // A bad escape in the id: the buffer and field, no id yet.
    let err = json_error(
        "{\"buffers\": [\n{\"id\": \"a\\uZZ12\", \"lower\": 0, \"upper\": 1, \"size\": 4}]}",
        None,
    );
    assert!(
        err.to_string()
            .starts_with("in.json: line 2: buffers[0]: field 'id': malformed JSON"),
        "{err}"
    );
    // An id with escapes is shown decoded.
    let err = json_error(
        "{\"buffers\": [{\"id\": \"\\u00e9\\\"\", \"lower\": 0, \"upper\": 1, \"size\": 01}]}",
        None,
    );
    assert!(
        err.to_string()
            .contains("buffers[0] (id 'é\"'): field 'size'"),
        "{err}"
    );
    // Data errors name the id too.
    let err = json_error(
        "{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": -4}]}",
        None,
    );
    assert!(
        err.to_string()
            .contains("buffers[0] (id 'a'): field 'size'"),
        "{err}"
    );
}

/// A UTF-8 byte-order mark is read past, in JSON as in CSV.
#[test]
fn a_byte_order_mark_is_accepted_in_both_formats() {
    let json = "\u{feff}{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4}]}";
    let from_json = parse_json_problem(json, "in.json", None).expect("a BOM is accepted");
    let from_csv = parse_csv_problem("\u{feff}id,lower,upper,size\na,0,1,4\n", "in.csv", None)
        .expect("a BOM is accepted");
    assert_eq!(from_json, from_csv);
    let solution = parse_json_solution(
        "\u{feff}{\"buffers\": [{\"id\": \"a\", \"offset\": 0}, {\"id\": \"b\", \"offset\": 4}]}",
        "in.json",
        &two_buffers(),
    )
    .expect("a BOM is accepted");
    assert_eq!(solution.offsets, vec![0, 4]);
    // A CR-only file with a BOM and a quoted comment first.
    let p = parse_csv_problem(
        "\u{feff}# \"\rid,lower,upper,size\ra,0,1,4\r",
        "in.csv",
        None,
    )
    .expect("a BOM is accepted");
    assert_eq!(p, from_csv);
}

/// A hint of -1 means no hint in both formats, as null or an absent field do in JSON; other
/// negative hints are rejected naming the field.
#[test]
fn hint_minus_one_means_none_in_both_formats() {
    let csv = parse_csv_problem(
        "id,lower,upper,size,hint\na,0,1,4,-1\nb,0,1,4,8\n",
        "in.csv",
        None,
    )
    .expect("valid");
    for hint in ["-1", "null"] {
        let json = format!("{{\"buffers\": [{{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"hint\": {hint}}}, {{\"id\": \"b\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"hint\": 8}}]}}");
        let from_json =
            parse_json_problem(&json, "in.json", None).unwrap_or_else(|e| panic!("{hint}: {e}"));
        assert_eq!(from_json, csv, "{hint}");
    }
    assert_eq!(csv.buffers[0].hint, None);
    let err = json_error(
        "{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"hint\": -2}]}",
        None,
    );
    assert!(
        err.to_string()
            .contains("buffers[0] (id 'a'): field 'hint'")
            && err.message.contains("-1"),
        "{err}"
    );
    let err = json_error("{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"hint\": \"x\"}]}", None);
    assert_eq!(err.location.field.as_deref(), Some("hint"), "{err}");
    let err = csv_error("id,lower,upper,size,hint\na,0,1,4,-2\n", None);
    assert_at_line(&err, 2, "hint", &["'-2' is negative", "-1"]);
}

// ---------------------------------------------------------------------------------------------
// MiniMalloc's inclusive `end`: errors speak of the columns and values as written

#[test]
fn end_column_errors_name_the_column_and_value_as_written() {
    let err = csv_error("buffer,start,end,size\nx,5,3,4\n", None);
    assert_at_line(&err, 2, "end", &["end (3)", "start (5)"]);
    assert!(
        !err.message.contains("upper") && !err.message.contains('4'),
        "{err}"
    );
    let err = csv_error("id,lower,end,size\nx,5,4,4\n", None);
    assert_at_line(&err, 2, "end", &["end (4)", "lower (5)"]);
    csv_ok("id,lower,end,size\nx,5,5,4\n");
    // Gaps in a file with `end` are inclusive too, and shown as written.
    let err = csv_error("id,lower,end,size,gaps\nx,0,3,4,2-5\n", None);
    assert_at_line(&err, 2, "gaps", &["gap 2-5", "[0, 3]"]);
    assert!(
        !err.message.contains("2-6") && !err.message.contains("4)"),
        "{err}"
    );
    let err = csv_error("id,lower,end,size,gaps\nx,0,9,4,5-3\n", None);
    assert_at_line(&err, 2, "gaps", &["gap 5-3"]);
    let err = csv_error("id,lower,end,size,gaps\nx,0,9,4,2-4 3-5\n", None);
    assert_at_line(&err, 2, "gaps", &["gap 3-5", "gap 2-4"]);
    let err = csv_error("id,lower,end,size,gaps\nx,0,9,4,2-4@0:5\n", None);
    assert_at_line(&err, 2, "gaps", &["gap 2-4@0:5"]);
    // The half-open columns, and an alias for lower, keep their own words.
    let err = csv_error("buffer,start,upper,size\nx,5,3,4\n", None);
    assert_at_line(&err, 2, "upper", &["start (5) must be less than upper (3)"]);
    let err = csv_error("id,lower,upper,size,gaps\nx,0,3,4,2-5\n", None);
    assert_at_line(&err, 2, "gaps", &["gap 2-5", "[0, 3)"]);
}
