//! Solve logs: what the search decided and what followed, as versioned JSON lines, for training
//! and evaluating policies. [`LogRecorder`] is a [`SearchObserver`] that writes one; each decision
//! node of the search becomes one [`Decision`] line. [`read_log`] reads one back.
//!
//! A log is a header line, then per run its decision lines in the order the nodes finished
//! (children before parents) and one run line (how it ended, its checkpoints), and a footer
//! line; every line is a [`LogLine`] tagged by `"kind"`. Runs are written
//! in run order, so a log does not depend on the thread count.

use crate::outcome::Status;
use crate::search::features::{
    candidate_features, node_features, CANDIDATE_FEATURES, FEATURE_SCHEMA_VERSION, NODE_FEATURES,
};
use crate::search::{
    Candidate, NodeView, RunEnded, RunObserver, RunSummary, SearchObserver, SearchStart,
    SearchStats, TryCounts, TryEnd,
};
use serde::{Deserialize, Serialize};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Name of the log format, in every header.
pub const LOG_SCHEMA: &str = "telamalloc-solve-log";
/// Version of the log format; bumped whenever a field changes meaning.
pub const LOG_SCHEMA_VERSION: u32 = 2;

/// The oldest log version [`read_log`] reads (version 1 has no run lines).
pub const OLDEST_LOG_SCHEMA_VERSION: u32 = 1;

/// One line of a solve log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LogLine {
    /// The first line: the problem and the format versions.
    Header(Header),
    /// One decision node.
    Decision(Decision),
    /// One run: how it ended and its checkpoints.
    Run(RunRecord),
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
    /// [`FEATURE_SCHEMA_VERSION`] of the writer.
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

/// How a run ended, in a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunResult {
    /// It found a layout.
    Found,
    /// It searched its whole tree and found nothing.
    Exhausted,
    /// Its node budget was spent without deciding.
    Budget,
    /// The deadline, the node limit or cancellation stopped it.
    Stopped,
}

/// One run of the portfolio: how it ended, and its progress at each checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Which run of the portfolio (0-based, in order).
    pub run: u32,
    /// Its policy (or slack-filling member).
    pub policy: String,
    /// How it ended.
    pub result: RunResult,
    /// Search nodes it spent.
    pub nodes: u64,
    /// Its run features at each checkpoint, in order (see [`crate::search::RUN_FEATURES`]).
    pub checkpoints: Vec<Vec<f32>>,
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

/// Writes one log line as JSON.
pub(crate) fn write_line(writer: &mut dyn Write, line: &LogLine) -> std::io::Result<()> {
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
    /// The runs, in run order (none in version 1 logs).
    pub runs: Vec<RunRecord>,
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
    let mut runs = Vec::new();
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
                let versions = OLDEST_LOG_SCHEMA_VERSION..=LOG_SCHEMA_VERSION;
                if h.schema != LOG_SCHEMA || !versions.contains(&h.version) {
                    return Err(format!(
                        "line {}: schema {} version {} is not {LOG_SCHEMA} version {OLDEST_LOG_SCHEMA_VERSION} to {LOG_SCHEMA_VERSION}",
                        i + 1,
                        h.schema,
                        h.version
                    ));
                }
                header = Some(h);
            }
            LogLine::Decision(d) => decisions.push(d),
            LogLine::Run(r) => runs.push(r),
            LogLine::Footer(f) => footer = Some(f),
        }
    }
    let header = header.ok_or("no header line")?;
    Ok(SolveLog {
        header,
        decisions,
        runs,
        footer,
    })
}

/// The 64-bit FNV-1a hash of a problem's buffers and a capacity, in hex.
pub(crate) fn problem_hash(problem: &crate::Problem, capacity: u64) -> String {
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

impl From<TryEnd> for TryResult {
    fn from(end: TryEnd) -> TryResult {
        match end {
            TryEnd::Found => TryResult::Found,
            TryEnd::Failed => TryResult::Failed,
            TryEnd::Unwound => TryResult::Unwound,
            TryEnd::Stopped => TryResult::Stopped,
        }
    }
}

/// The decisions one run kept, how many it dropped at its record limit, and its checkpoints.
#[derive(Default)]
struct RunLog {
    decisions: Vec<Decision>,
    dropped: u64,
    checkpoints: Vec<Vec<f32>>,
}

/// Records the decisions of one run (at most `limit`) into its slot of the log.
struct RunRecorder {
    run: u32,
    policy: String,
    limit: u64,
    /// The open decisions, innermost last.
    open: Vec<Decision>,
    slot: Arc<Mutex<RunLog>>,
    kept: u64,
}

impl RunObserver for RunRecorder {
    fn on_decision(&mut self, node: &NodeView<'_>, candidates: &[Candidate]) -> bool {
        if self.kept >= self.limit {
            return false;
        }
        self.open.push(Decision {
            run: self.run,
            policy: self.policy.clone(),
            node: node.nodes(),
            depth: node.depth(),
            unplaced: node.unplaced() as u32,
            features: node_features(node, candidates.len())
                .map(round_feature)
                .to_vec(),
            candidates: candidates
                .iter()
                .map(|c| CandidateRecord {
                    buffer: c.buffer,
                    offset: c.offset,
                    rank: c.rank,
                    features: candidate_features(node, c).map(round_feature).to_vec(),
                })
                .collect(),
            tries: Vec::new(),
        });
        true
    }

    fn on_try(&mut self, candidate: &Candidate, counts: TryCounts, end: TryEnd) {
        let Some(decision) = self.open.last_mut() else {
            return;
        };
        let index = decision
            .candidates
            .iter()
            .position(|r| r.buffer == candidate.buffer)
            .unwrap_or(0);
        decision.tries.push(TryRecord {
            candidate: index as u32,
            nodes_below: counts.nodes,
            failures_below: counts.failures,
            majors_below: counts.majors,
            result: end.into(),
        });
    }

    fn on_checkpoint(&mut self, features: &[f32]) {
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        slot.checkpoints
            .push(features.iter().copied().map(round_feature).collect());
    }

    fn on_decision_end(&mut self) {
        let Some(decision) = self.open.pop() else {
            return;
        };
        let mut slot = self.slot.lock().unwrap_or_else(|e| e.into_inner());
        if self.kept < self.limit {
            self.kept += 1;
            slot.decisions.push(decision);
        } else {
            slot.dropped += 1;
        }
    }
}

/// A [`SearchObserver`] that writes a solve log: the header when the search starts, each run's
/// decisions (at most `limit_per_run`) when the run ends, in run order, and the footer. A write
/// error stops the writing; [`LogRecorder::finish`] returns it.
pub struct LogRecorder<W: Write + Send> {
    writer: W,
    problem: String,
    limit_per_run: u64,
    runs: Vec<(u32, Arc<Mutex<RunLog>>)>,
    recorded: u64,
    dropped: u64,
    error: Option<std::io::Error>,
}

impl<W: Write + Send> LogRecorder<W> {
    /// A recorder writing to `writer`, naming the problem `problem` in the header.
    pub fn new(writer: W, problem: &str, limit_per_run: u64) -> LogRecorder<W> {
        LogRecorder {
            writer,
            problem: problem.to_string(),
            limit_per_run,
            runs: Vec::new(),
            recorded: 0,
            dropped: 0,
            error: None,
        }
    }

    /// Decision lines written so far, and dropped at the record limit.
    pub fn counts(&self) -> (u64, u64) {
        (self.recorded, self.dropped)
    }

    /// The writer back, or the first write error.
    pub fn finish(self) -> std::io::Result<W> {
        match self.error {
            Some(e) => Err(e),
            None => Ok(self.writer),
        }
    }

    fn write(&mut self, line: &LogLine) {
        if self.error.is_none() {
            if let Err(e) = write_line(&mut self.writer, line) {
                self.error = Some(e);
            }
        }
    }
}

impl<W: Write + Send> SearchObserver for LogRecorder<W> {
    fn on_start(&mut self, start: &SearchStart<'_>) {
        let header = LogLine::Header(Header {
            schema: LOG_SCHEMA.to_string(),
            version: LOG_SCHEMA_VERSION,
            feature_version: FEATURE_SCHEMA_VERSION,
            candidate_features: CANDIDATE_FEATURES.iter().map(|s| s.to_string()).collect(),
            node_features: NODE_FEATURES.iter().map(|s| s.to_string()).collect(),
            problem: self.problem.clone(),
            problem_hash: problem_hash(start.problem, start.capacity),
            buffers: start.problem.len(),
            capacity: start.capacity,
            load: start.load,
        });
        self.write(&header);
    }

    fn run_observer(&mut self, run: u32, policy: &str) -> Option<Box<dyn RunObserver>> {
        let slot = Arc::new(Mutex::new(RunLog::default()));
        self.runs.push((run, Arc::clone(&slot)));
        Some(Box::new(RunRecorder {
            run,
            policy: policy.to_string(),
            limit: self.limit_per_run,
            open: Vec::new(),
            slot,
            kept: 0,
        }))
    }

    fn on_run_end(&mut self, summary: &RunSummary, observer: Option<Box<dyn RunObserver>>) {
        drop(observer);
        let Some(at) = self.runs.iter().position(|(run, _)| *run == summary.run) else {
            return;
        };
        let (_, slot) = self.runs.remove(at);
        let log = std::mem::take(&mut *slot.lock().unwrap_or_else(|e| e.into_inner()));
        self.recorded += log.decisions.len() as u64;
        self.dropped += log.dropped;
        for decision in log.decisions {
            self.write(&LogLine::Decision(decision));
        }
        let run = RunRecord {
            run: summary.run,
            policy: summary.policy.clone(),
            result: match summary.ended {
                RunEnded::Found => RunResult::Found,
                RunEnded::Exhausted => RunResult::Exhausted,
                RunEnded::Budget => RunResult::Budget,
                RunEnded::Stopped => RunResult::Stopped,
            },
            nodes: summary.stats.nodes,
            checkpoints: log.checkpoints,
        };
        self.write(&LogLine::Run(run));
    }

    fn on_finish(&mut self, status: &Status, stats: &SearchStats) {
        // Runs that never ended (their round was cut short) wrote nothing.
        self.runs.clear();
        let stats = SearchStats {
            recorded_decisions: self.recorded,
            dropped_decisions: self.dropped,
            ..stats.clone()
        };
        let footer = LogLine::Footer(Footer {
            outcome: status.label().to_string(),
            decisions: self.recorded,
            dropped: self.dropped,
            stats,
        });
        self.write(&footer);
        if self.error.is_none() {
            if let Err(e) = self.writer.flush() {
                self.error = Some(e);
            }
        }
    }
}

/// The log files named by `paths`: files as given, folders searched (not recursively) for
/// `.jsonl` and `.jsonl.gz` files, sorted by name.
pub fn log_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for path in paths {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let mut found: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let name = p.to_string_lossy();
                name.ends_with(".jsonl") || name.ends_with(".jsonl.gz")
            })
            .collect();
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// Totals over a set of solve logs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogSummary {
    /// Logs read.
    pub logs: usize,
    /// The schema and feature versions of the first log.
    pub versions: (u32, u32),
    /// Decision lines.
    pub decisions: u64,
    /// Candidates over all decisions.
    pub candidates: u64,
    /// Tries over all decisions.
    pub tries: u64,
    /// Tries on a solution path.
    pub on_path: u64,
    /// Logs per footer outcome (`incomplete` for a log without a footer).
    pub outcomes: std::collections::BTreeMap<String, u64>,
}

/// Reads every log of `files` and adds them up; the first unreadable one is the error.
pub fn summarise_logs(files: &[PathBuf]) -> Result<LogSummary, String> {
    let mut summary = LogSummary {
        logs: files.len(),
        ..LogSummary::default()
    };
    for (i, file) in files.iter().enumerate() {
        let log = read_log_file(file)?;
        if i == 0 {
            summary.versions = (log.header.version, log.header.feature_version);
        }
        summary.decisions += log.decisions.len() as u64;
        for d in &log.decisions {
            summary.candidates += d.candidates.len() as u64;
            summary.tries += d.tries.len() as u64;
            summary.on_path += d
                .tries
                .iter()
                .filter(|t| t.result == TryResult::Found)
                .count() as u64;
        }
        let outcome = log.footer.map_or("incomplete".to_string(), |f| f.outcome);
        *summary.outcomes.entry(outcome).or_default() += 1;
    }
    Ok(summary)
}
