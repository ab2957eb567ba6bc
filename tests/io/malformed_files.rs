//! One table of malformed (and tricky but valid) problem and memories files, each run through
//! the real `telamalloc solve`: bad input exits 2 with a short message naming the file, line or
//! buffer, and field; good input exits 0 with every buffer in the answer.

use crate::common;

use common::{telamalloc, Scratch};

/// Ten million digits, put in place of `{HUGE}` in a row's file.
const HUGE: &str = "{HUGE}";

/// One row: the format (the file's extension, or `memories` for a memories file), the file's
/// bytes, extra arguments after the file, the exit code, and fragments that standard error
/// (exit 2) or output (exit 0) must hold.
type Case = (
    &'static str,
    &'static [u8],
    &'static [&'static str],
    i32,
    &'static [&'static str],
);

const CAP: &[&str] = &["--capacity", "64"];

/// `--memories` with a good memories file: `sram` of 8 bytes at cost 1, `dram` of 64 at 20.
const WITH_MEMORIES: &[&str] = &["--memories", MEMORIES];

/// Put in place of the path of a good memories file in a row's arguments.
const MEMORIES: &str = "{MEMORIES}";

#[rustfmt::skip]
const CASES: &[Case] = &[
    // CR-only endings: quotes in comments hide no rows and move no lines.
    ("csv", b"id,lower,upper,size\rb1,0,3,4\r# \"q\rb2,3,9,4\r# q\"\rb3,0,9,4\r", &["--capacity", "12"], 0, &["b1,0,3,4,", "b2,3,9,4,", "b3,0,9,4,"]),
    ("csv", b"id,lower,upper,size\r# it\"s\rb1,0,3,4\rb2,3,9,4\r", &["--capacity", "12"], 0, &["b1,0,3,4,", "b2,3,9,4,"]),
    ("csv", b"id,lower,upper,size\r# it\"s\rb1,0,3,4\rb2,3,x,4\r", CAP, 2, &["in.csv: line 4: field 'upper': 'x' is not an integer"]),
    // A CR-only file whose quoted id holds a line break: the lines after it still count right.
    ("csv", b"id,lower,upper,size\r\"a\rb\",0,1,4\r# \"\rc,0,1,4\r", CAP, 0, &["\"a\rb\",0,1,4,", "c,0,1,4,"]),
    ("csv", b"id,lower,upper,size\r\"a\rb\",0,1,4\rc,0,1,x\r", CAP, 2, &["in.csv: line 4: field 'size'"]),
    // Empty, header only, header faults.
    ("csv", b"", CAP, 2, &["in.csv: the file is empty"]),
    ("csv", b"id,lower,upper,size\n", CAP, 0, &["id,lower,upper,size,offset"]),
    ("csv", b"id,lower,size\na,0,4\n", CAP, 2, &["in.csv: line 1: field 'upper': missing column 'upper'"]),
    ("csv", b"id,lower,upper,size,colour\na,0,1,4,red\n", CAP, 2, &["in.csv: line 1: field 'colour': unknown column 'colour'"]),
    ("csv", b"id,lower,upper,size,size\na,0,1,4,4\n", CAP, 2, &["in.csv: line 1: field 'size': column 'size' appears twice"]),
    // Rows: width, numbers.
    ("csv", b"id,lower,upper,size\na,0,1\n", CAP, 2, &["in.csv: line 2: field 'size': missing field (expected 4 fields, found 3)"]),
    ("csv", b"id,lower,upper,size\na,0,1,4,5\n", CAP, 2, &["in.csv: line 2: too many fields (expected 4, found 5)"]),
    ("csv", b"id,lower,upper,size\na,-1,1,4\n", CAP, 2, &["in.csv: line 2: field 'lower': '-1' is negative"]),
    ("csv", b"id,lower,upper,size\na,0,1,4.5\n", CAP, 2, &["in.csv: line 2: field 'size': '4.5' is not an integer"]),
    ("csv", b"id,lower,upper,size\na,0,1,18446744073709551616\n", CAP, 2, &["in.csv: line 2: field 'size': '18446744073709551616' is too large"]),
    ("csv", b"id,lower,upper,size\na,0,1,{HUGE}\n", CAP, 2, &["in.csv: line 2: field 'size': '99999", "…' (10000000 characters) is too large"]),
    // The problem's rules.
    ("csv", b"id,lower,upper,size\na,3,3,4\n", CAP, 2, &["in.csv: line 2: field 'upper': lower (3) must be less than upper (3)"]),
    ("csv", b"id,lower,upper,size\na,0,1,0\n", CAP, 2, &["in.csv: line 2: field 'size': size must be greater than 0"]),
    ("csv", b"id,lower,upper,size,alignment\na,0,1,4,3\n", CAP, 2, &["in.csv: line 2: field 'alignment': alignment 3 is not a power of two"]),
    ("csv", b"id,lower,upper,size,alignment,offset\na,0,1,4,4,2\n", CAP, 2, &["in.csv: line 2: field 'offset': fixed offset 2 is not a multiple of the alignment 4"]),
    ("csv", b"id,lower,upper,size\na,0,1,4\na,1,2,4\n", CAP, 2, &["in.csv: line 3: field 'id': duplicate id 'a' (first used at line 2)"]),
    ("csv", b"id,lower,upper,size,gaps\na,0,9,4,2:5\n", CAP, 2, &["in.csv: line 2: field 'gaps': malformed gap '2:5'"]),
    // CSV fields are trimmed, so an id with white space around it reads as the bare id.
    ("csv", b"id,lower,upper,size\n\" a \",0,1,4\n", CAP, 0, &["\na,0,1,4,0"]),
    // Encoding: invalid UTF-8 names its line; a byte-order mark is read past.
    ("csv", b"id,lower,upper,size\na\xff,0,1,4\n", CAP, 2, &["in.csv: line 2: file is not valid UTF-8"]),
    ("csv", b"id,lower,upper,size\ra,0,1,4\rb\xe9,0,1,4\r", CAP, 2, &["in.csv: line 3: file is not valid UTF-8 text (byte 0xe9 at column 2)"]),
    ("csv", b"\xef\xbb\xbfid,lower,upper,size\na,0,1,4\n", CAP, 0, &["\na,0,1,4,0"]),
    ("csv", b"\xef\xbb\xbf# it\"s\rid,lower,upper,size\ra,0,1,4\r", CAP, 0, &["\na,0,1,4,0"]),
    // MiniMalloc's inclusive `end`: errors name it and its value as written.
    ("csv", b"id,lower,end,size\na,5,3,4\n", CAP, 2, &["in.csv: line 2: field 'end': end (3) must not be before lower (5)"]),
    ("csv", b"buffer,start,end,size,gaps\na,0,3,4,2-5\n", CAP, 2, &["in.csv: line 2: field 'gaps': gap 2-5 lies outside the buffer's lifetime [0, 3]"]),
    ("csv", b"id,lower,end,size\na,0,3,4\n", CAP, 0, &["\na,0,4,4,0"]),
    // Hints: -1 is none; other negatives are errors.
    ("csv", b"id,lower,upper,size,hint\na,0,1,4,-1\n", CAP, 0, &["\na,0,1,4,0"]),
    ("csv", b"id,lower,upper,size,hint\na,0,1,4,-2\n", CAP, 2, &["in.csv: line 2: field 'hint': '-2' is negative"]),

    // JSON.
    ("json", b"", CAP, 2, &["in.json: the file is empty"]),
    ("json", b"{\"buffers\": []}", CAP, 0, &["id,lower,upper,size,offset"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\",, }]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): malformed JSON"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 1e400}]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'size': malformed JSON: number out of range"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": NaN}]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'size': malformed JSON: expected value"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": +1, \"upper\": 1, \"size\": 4}]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'lower': malformed JSON: expected value"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 01, \"size\": 4}]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'upper': malformed JSON: invalid number"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": {HUGE}}]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'size': malformed JSON: number out of range"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": \"{HUGE}\"}]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'size'", "(10000000 characters)"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\\uZZ12\", \"lower\": 0, \"upper\": 1, \"size\": 4}]}", CAP, 2, &["in.json: line 2: buffers[0]: field 'id': malformed JSON: invalid escape"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": -4}]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'size': malformed JSON: invalid value: integer `-4`"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"colour\": 1}]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'colour': malformed JSON: unknown field `colour`"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1}]}", CAP, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'size': malformed JSON: missing field `size`"]),
    // Rules broken by a buffer read whole: its line and id too.
    ("json", b"{\"buffers\": [{\"id\": \"a\", \"lower\": 3, \"upper\": 3, \"size\": 4}]}", CAP, 2, &["in.json: line 1: buffers[0] (id 'a'): field 'upper': lower (3) must be less than upper (3)"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4},\n\n {\"id\": \"b\", \"lower\": 5, \"upper\": 3, \"size\": 4}]}", CAP, 2, &["in.json: line 4: buffers[1] (id 'b'): field 'upper': lower (5) must be less than upper (3)"]),
    ("json", b"{\"buffers\": [{\"id\": \" a\", \"lower\": 0, \"upper\": 1, \"size\": 4}]}", CAP, 2, &["in.json: line 1: buffers[0] (id ' a'): field 'id': id ' a' starts or ends with white space"]),
    ("json", b"{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4},\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4}]}", CAP, 2, &["in.json: line 2: buffers[1] (id 'a'): field 'id': duplicate id 'a' (first used at buffers[0])"]),
    // `null` is no field, for every optional field; `+8` is no number in any format.
    ("json", b"{\"capacity\": null, \"memories\": null, \"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"alignment\": null, \"offset\": null, \"hint\": null, \"gaps\": null, \"memories\": null, \"benefit\": null}]}", CAP, 0, &["\na,0,1,4,0"]),
    ("csv", b"id,lower,upper,size\na,0,1,+8\n", CAP, 2, &["in.csv: line 2: field 'size': '+8' is not an integer: write the digits alone, without a sign"]),
    ("csv", b"id,lower,upper,size,offset\na,0,1,8,+0\n", CAP, 2, &["in.csv: line 2: field 'offset': '+0' is not an integer"]),
    ("csv", b"id,lower,upper,size,benefit\na,0,1,8,+3\n", &["--spill", "--capacity", "4"], 2, &["in.csv: line 2: field 'benefit': '+3' is not an integer"]),

    // Memories in a problem (`{MEMORIES}`: a good memories file, sram 8 bytes at cost 1, dram
    // 64 at cost 20).
    ("csv", b"id,lower,upper,size,memories\na,0,2,4,\nb,0,2,4,tcm\n", WITH_MEMORIES, 2, &["in.csv: line 3: field 'memories': unknown memory 'tcm' (the memories are sram, dram)"]),
    ("csv", b"id,lower,upper,size,memories\na,0,2,10,sram\n", WITH_MEMORIES, 2, &["in.csv: line 2: field 'size': buffer 'a' (offset 0 + size 10) fits none of its memories (the largest holds 8)"]),
    ("csv", b"id,lower,upper,size,memories\na,0,2,100,\n", WITH_MEMORIES, 2, &["in.csv: line 2: field 'size'", "fits none of its memories (the largest holds 64)"]),
    ("json", b"{\"buffers\": [\n{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"memories\": [\"tcm\"]}]}", WITH_MEMORIES, 2, &["in.json: line 2: buffers[0] (id 'a'): field 'memories': unknown memory 'tcm' (the memories are sram, dram)"]),
    ("json", b"{\"memories\": [{\"id\": \"sram\", \"capacity\": 8, \"cost\": null}], \"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"memories\": null}]}", &[], 0, &["\na,0,1,4,0,sram"]),
    ("json", b"{\"memories\": [{\"id\": \"s\\u001bram\", \"capacity\": 8}], \"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"memories\": [\"x\"]}]}", &[], 2, &["field 'memories': unknown memory 'x' (the memories are s\\u{1b}ram)"]),

    // Memories files (`memories`: the file is given as `--memories` to a good problem).
    ("memories", b"", &[], 2, &["in.csv: the file is empty"]),
    ("memories", b"id,capacity\n", &[], 2, &["in.csv: no memories: the file has a header and no rows"]),
    ("memories", b"id\nsram\n", &[], 2, &["in.csv: line 1: field 'capacity': missing column 'capacity'"]),
    ("memories", b"capacity\n8\n", &[], 2, &["in.csv: line 1: field 'id': missing column 'id'"]),
    ("memories", b"id,size\nsram,8\n", &[], 2, &["in.csv: line 1: field 'size': unknown column 'size'"]),
    ("memories", b"id,capacity,capacity\nsram,8,8\n", &[], 2, &["in.csv: line 1: field 'capacity': column 'capacity' appears twice"]),
    ("memories", b"id,capacity\nsram,8,1\n", &[], 2, &["in.csv: line 2: too many fields"]),
    ("memories", b"id,capacity\n,8\n", &[], 2, &["in.csv: line 2: field 'id': missing value"]),
    ("memories", b"id,capacity\nsram,0\n", &[], 2, &["in.csv: line 2: field 'capacity': capacity must be greater than 0"]),
    ("memories", b"id,capacity\nsram,-8\n", &[], 2, &["in.csv: line 2: field 'capacity': '-8' is negative"]),
    ("memories", b"id,capacity\nsram,+8\n", &[], 2, &["in.csv: line 2: field 'capacity': '+8' is not an integer"]),
    ("memories", b"id,capacity\nsram,18446744073709551616\n", &[], 2, &["in.csv: line 2: field 'capacity': '18446744073709551616' is too large"]),
    ("memories", b"id,capacity,cost\nsram,8,x\n", &[], 2, &["in.csv: line 2: field 'cost': 'x' is not an integer"]),
    ("memories", b"id,capacity\nsram,8\nsram,9\n", &[], 2, &["in.csv: line 3: field 'id': duplicate memory id 'sram' (first used at line 2)"]),
    ("memories", b"id,capacity\n\"s ram\",8\n", &[], 2, &["in.csv: line 2: field 'id': 's ram' contains white space"]),
    ("memories", b"id,capacity\n\"s\nram\",8\n", &[], 2, &["in.csv: line 2: field 'id': 's\\nram' contains white space"]),
    ("memories", b"id,capacity\nsram\xff,8\n", &[], 2, &["in.csv: line 2: file is not valid UTF-8"]),
    ("memories", b"# SRAM first\r\nid,capacity,cost\r\nsram,8,1\r\n", &[], 0, &["\na,0,2,4,0,sram"]),
    ("json", b"{\"buffers\": [{\"id\": \"a\xff\", \"lower\": 0, \"upper\": 1, \"size\": 4}]}", CAP, 2, &["in.json: line 1: file is not valid UTF-8"]),
    ("json", b"\xef\xbb\xbf{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4}]}", CAP, 0, &["\na,0,1,4,0"]),
    ("json", b"{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"hint\": -1}]}", CAP, 0, &["\na,0,1,4,0"]),
    ("json", b"{\"buffers\": [{\"id\": \"a\", \"lower\": 0, \"upper\": 1, \"size\": 4, \"hint\": -2}]}", CAP, 2, &["in.json: line 1: buffers[0] (id 'a'): field 'hint': malformed JSON: invalid value: integer `-2`"]),
];

/// What is wrong with the answer to `case`, if anything.
fn check(case: &Case) -> Option<String> {
    let &(format, content, extra, code, fragments) = case;
    let scratch = Scratch::new();
    let extension = if format == "memories" { "csv" } else { format };
    let path = scratch.path(&format!("in.{extension}"));
    let content = String::from_utf8_lossy(content).contains(HUGE).then(|| {
        let text = String::from_utf8(content.to_vec()).expect("the rows with {HUGE} are text");
        text.replace(HUGE, &"9".repeat(10_000_000)).into_bytes()
    });
    std::fs::write(&path, content.as_deref().unwrap_or(case.1)).expect("write the file");
    let memories = scratch.file("sram-dram.csv", "id,capacity,cost\nsram,8,1\ndram,64,20\n");
    let mut args = vec![std::ffi::OsString::from("solve")];
    if format == "memories" {
        // The row's file is the memories file of a good problem.
        let problem = scratch.file("p.csv", "id,lower,upper,size,memories\na,0,2,4,\n");
        args.extend([problem.into(), "--memories".into(), path.clone().into()]);
    } else {
        args.push(path.clone().into());
    }
    args.extend(extra.iter().map(|&arg| match arg {
        MEMORIES => memories.clone().into_os_string(),
        arg => arg.into(),
    }));
    let run = telamalloc(&args);
    let shown = if code == 2 { &run.stderr } else { &run.stdout };
    let mut wrong = Vec::new();
    if run.code != code {
        wrong.push(format!("exit {} instead of {code}", run.code));
    }
    if code == 2 && !run.stdout.is_empty() {
        wrong.push("output on bad input".to_string());
    }
    if run.stderr.len() > 400 || run.stderr.contains("panicked") {
        wrong.push("a long or panicking error".to_string());
    }
    for fragment in fragments {
        if !shown.contains(fragment) {
            wrong.push(format!("no {fragment:?}"));
        }
    }
    let cut = |text: &str| text.chars().take(300).collect::<String>();
    (!wrong.is_empty()).then(|| {
        format!(
            "{format} {:?}: {}\n  stdout: {:?}\n  stderr: {:?}",
            cut(&String::from_utf8_lossy(case.1)),
            wrong.join("; "),
            cut(&run.stdout),
            cut(&run.stderr)
        )
    })
}

#[test]
fn every_malformed_file_is_answered_as_the_table_says() {
    let wrong: Vec<String> = CASES.iter().filter_map(check).collect();
    assert!(
        wrong.is_empty(),
        "{} of {} rows:\n{}",
        wrong.len(),
        CASES.len(),
        wrong.join("\n")
    );
}
