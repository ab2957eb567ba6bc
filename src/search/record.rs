//! Solve logs: what the search decided and what followed, as versioned JSON lines, for training
//! and evaluating policies. Recording is off unless a recorder is given; then each decision node
//! of the search becomes one [`Decision`] line.
//!
//! A log is a header line, decision lines in the order the nodes finished (children before
//! parents), and a footer line; every line is a [`LogLine`] tagged by `"kind"`.

use super::SearchStats;
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};

/// Name of the log format, in every header.
pub const LOG_SCHEMA: &str = "telamalloc-solve-log";
/// Version of the log format; bumped whenever a field changes meaning.
pub const LOG_SCHEMA_VERSION: u32 = 1;

/// One line of a solve log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LogLine {
    /// The first line: the problem and the format versions.
    Header(Header),
    /// One decision node.
    Decision(Decision),
    /// The last line: how the search ended.
    Footer(Footer),
}

/// What a log is about.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Header {
    /// Always [`LOG_SCHEMA`].
    pub schema: String,
    /// [`LOG_SCHEMA_VERSION`] of the writer.
    pub version: u32,
    /// [`super::features::FEATURE_SCHEMA_VERSION`] of the writer.
    pub feature_version: u32,
    /// The names of the candidate features, in order.
    pub candidate_features: Vec<String>,
    /// The names of the node features, in order.
    pub node_features: Vec<String>,
    /// The problem's name (its file name, or what the caller chose).
    pub problem: String,
    /// A 64-bit FNV-1a hash of the problem's buffers (lower, upper, size, alignment, offset) and
    /// capacity, in hex, to tell problems apart.
    pub problem_hash: String,
    /// Number of buffers.
    pub buffers: usize,
    /// The capacity searched.
    pub capacity: u64,
    /// LOAD of the problem.
    pub load: u64,
}

/// One candidate at a decision node.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CandidateRecord {
    /// The buffer index.
    pub buffer: u32,
    /// Its lowest feasible offset at the node.
    pub offset: u64,
    /// Its static rank under the policy.
    pub rank: u32,
    /// Its features (see the header's names).
    pub features: Vec<f32>,
}

/// How one tried candidate ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TryResult {
    /// Led to a solution: the choice is on the final solution path (of this run).
    Found,
    /// Its subtree holds no solution (refuted).
    Failed,
    /// Interrupted by a major backtrack.
    Unwound,
    /// The run stopped (budget, time or cancellation) inside it.
    Stopped,
}

/// One candidate tried at a node and what followed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TryRecord {
    /// Index into the node's `candidates`.
    pub candidate: u32,
    /// Search nodes spent below it.
    pub nodes_below: u64,
    /// Minor backtracks (failures) below it, the immediate one included.
    pub failures_below: u64,
    /// Major backtracks fired below it.
    pub majors_below: u64,
    /// How it ended.
    pub result: TryResult,
}

/// A decision node: the candidates in the order the policy tried them, and each try.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Which run of the portfolio (0-based, in order).
    pub run: u32,
    /// The policy of that run.
    pub policy: String,
    /// Node number within the run (its node counter when entered).
    pub node: u64,
    /// Decision depth.
    pub depth: u32,
    /// Unplaced buffers of the (sub)problem at the node.
    pub unplaced: u32,
    /// Node features (see the header's names).
    pub features: Vec<f32>,
    /// The candidates, in the order the policy ranked them.
    pub candidates: Vec<CandidateRecord>,
    /// The tries, in order.
    pub tries: Vec<TryRecord>,
}

/// How the search ended.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Footer {
    /// `solved`, `infeasible` or `limit`.
    pub outcome: String,
    /// The search counters.
    pub stats: SearchStats,
    /// Decision lines written.
    pub decisions: u64,
    /// Decision lines dropped once the record limit was reached.
    pub dropped: u64,
}

/// Collects the decisions of one run in memory (the portfolio writes them in run order, so a log
/// does not depend on the number of threads).
#[derive(Clone, Debug, Default)]
pub struct RunRecorder {
    /// Decisions of the run, in the order the nodes finished.
    pub decisions: Vec<Decision>,
    /// Decisions not kept because `limit` was reached.
    pub dropped: u64,
    /// The most decisions to keep.
    pub limit: u64,
}

impl RunRecorder {
    /// A recorder that keeps at most `limit` decisions.
    pub fn new(limit: u64) -> RunRecorder {
        RunRecorder {
            decisions: Vec::new(),
            dropped: 0,
            limit,
        }
    }

    /// Whether another decision would be kept.
    pub fn wants_more(&self) -> bool {
        (self.decisions.len() as u64) < self.limit
    }

    /// Keeps `decision`, or counts it as dropped.
    pub fn push(&mut self, decision: Decision) {
        if self.wants_more() {
            self.decisions.push(decision);
        } else {
            self.dropped += 1;
        }
    }
}

/// Writes one log line as JSON.
pub fn write_line(writer: &mut dyn Write, line: &LogLine) -> std::io::Result<()> {
    serde_json::to_writer(&mut *writer, line)?;
    writer.write_all(b"\n")
}

/// A solve log read back.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveLog {
    /// The header.
    pub header: Header,
    /// The decisions, in file order.
    pub decisions: Vec<Decision>,
    /// The footer, if the log is complete.
    pub footer: Option<Footer>,
}

/// Opens a log file for writing: gzip-compressed when the name ends in `.gz`.
pub fn create_log_file(path: &std::path::Path) -> std::io::Result<Box<dyn Write + Send>> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    if path.extension().is_some_and(|e| e == "gz") {
        Ok(Box::new(flate2::write::GzEncoder::new(
            file,
            flate2::Compression::default(),
        )))
    } else {
        Ok(Box::new(file))
    }
}

/// Reads a solve log file (plain or gzip, told apart by its first bytes).
pub fn read_log_file(path: &std::path::Path) -> Result<SolveLog, String> {
    let name = path.display();
    let mut file =
        std::io::BufReader::new(std::fs::File::open(path).map_err(|e| format!("{name}: {e}"))?);
    let gzip = file
        .fill_buf()
        .map(|b| b.starts_with(&[0x1f, 0x8b]))
        .unwrap_or(false);
    let log = if gzip {
        read_log(std::io::BufReader::new(flate2::bufread::GzDecoder::new(
            file,
        )))
    } else {
        read_log(file)
    };
    log.map_err(|e| format!("{name}: {e}"))
}

/// Rounds a feature to 1e-4 (shorter logs; features are normalised, so this keeps 4 digits).
pub fn round_feature(value: f32) -> f32 {
    (value * 10_000.0).round() / 10_000.0
}

/// Reads a solve log, checking its schema name and version; errors name the line.
pub fn read_log(reader: impl BufRead) -> Result<SolveLog, String> {
    let mut header = None;
    let mut decisions = Vec::new();
    let mut footer = None;
    for (i, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| format!("line {}: {e}", i + 1))?;
        if line.trim().is_empty() {
            continue;
        }
        let parsed: LogLine =
            serde_json::from_str(&line).map_err(|e| format!("line {}: {e}", i + 1))?;
        match parsed {
            LogLine::Header(h) => {
                if h.schema != LOG_SCHEMA || h.version != LOG_SCHEMA_VERSION {
                    return Err(format!(
                        "line {}: schema {} version {} is not {LOG_SCHEMA} version {LOG_SCHEMA_VERSION}",
                        i + 1,
                        h.schema,
                        h.version
                    ));
                }
                header = Some(h);
            }
            LogLine::Decision(d) => decisions.push(d),
            LogLine::Footer(f) => footer = Some(f),
        }
    }
    let header = header.ok_or("no header line")?;
    Ok(SolveLog {
        header,
        decisions,
        footer,
    })
}

/// The 64-bit FNV-1a hash of a problem's buffers and a capacity, in hex.
pub fn problem_hash(problem: &crate::Problem, capacity: u64) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |value: u64| {
        for byte in value.to_le_bytes() {
            hash ^= byte as u64;
            hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(capacity);
    for b in &problem.buffers {
        eat(b.lower);
        eat(b.upper);
        eat(b.size);
        eat(b.alignment);
        eat(b.offset.map_or(u64::MAX, |o| o));
    }
    format!("{hash:016x}")
}
