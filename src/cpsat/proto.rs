//! Just enough protocol buffers for CP-SAT: a writer for the messages sent (`CpModelProto`,
//! `SatParameters`) and a reader for the one received (`CpSolverResponse`). Written from the
//! wire format and the field numbers of OR-tools' `cp_model.proto` and `sat_parameters.proto`;
//! no generated code, no build step.
//!
//! Wire format in brief: a message is a sequence of fields, each a key `(number << 3) | wire
//! type` as a varint, then the value: a varint (type 0), 8 little-endian bytes (type 1), a
//! varint length and that many bytes (type 2: strings, sub-messages, packed repeated scalars)
//! or 4 bytes (type 5). `int64` and `int32` values are varints of their two's complement (a
//! negative number takes 10 bytes).

use std::fmt;

/// Wire type of varints.
pub(crate) const VARINT: u8 = 0;
/// Wire type of 8-byte values (`double`, `fixed64`).
pub(crate) const FIXED64: u8 = 1;
/// Wire type of length-delimited values.
pub(crate) const LEN: u8 = 2;
/// Wire type of 4-byte values (`float`, `fixed32`).
pub(crate) const FIXED32: u8 = 5;

/// Appends `value` as a varint: 7 bits a byte, least significant first, the high bit set on all
/// but the last byte.
pub fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8 & 0x7f) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Reads a varint at `*pos` and moves past it; `None` when the bytes end first or it is longer
/// than 10 bytes.
pub fn get_varint(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let byte = *bytes.get(*pos)?;
        *pos += 1;
        value |= u64::from(byte & 0x7f).checked_shl(shift).unwrap_or(0);
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// A message being written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Writer {
    bytes: Vec<u8>,
}

impl Writer {
    /// An empty message.
    pub fn new() -> Writer {
        Writer::default()
    }

    fn key(&mut self, field: u32, wire: u8) {
        put_varint(&mut self.bytes, (u64::from(field) << 3) | u64::from(wire));
    }

    /// An `int32`, `int64`, `bool` or enum field (negative numbers as 10-byte varints).
    pub fn int(&mut self, field: u32, value: i64) -> &mut Writer {
        self.key(field, VARINT);
        put_varint(&mut self.bytes, value as u64);
        self
    }

    /// A `double` field.
    pub fn double(&mut self, field: u32, value: f64) -> &mut Writer {
        self.key(field, FIXED64);
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// A length-delimited field: a string, bytes or an encoded sub-message.
    pub fn bytes(&mut self, field: u32, value: &[u8]) -> &mut Writer {
        self.key(field, LEN);
        put_varint(&mut self.bytes, value.len() as u64);
        self.bytes.extend_from_slice(value);
        self
    }

    /// A sub-message.
    pub fn message(&mut self, field: u32, value: &Writer) -> &mut Writer {
        self.bytes(field, &value.bytes)
    }

    /// A packed repeated `int32` / `int64` field (nothing when `values` is empty).
    pub fn packed(&mut self, field: u32, values: &[i64]) -> &mut Writer {
        if values.is_empty() {
            return self;
        }
        let mut body = Vec::with_capacity(values.len() * 3);
        for &v in values {
            put_varint(&mut body, v as u64);
        }
        self.bytes(field, &body)
    }

    /// The encoded message.
    pub fn finish(self) -> Vec<u8> {
        self.bytes
    }

    /// The bytes written so far.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }
}

/// One field as read from the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    /// Wire type 0.
    Varint(u64),
    /// Wire type 1 (decode a `double` with [`f64::from_bits`]).
    Fixed64(u64),
    /// Wire type 2: a string, a sub-message or packed scalars.
    Len(&'a [u8]),
    /// Wire type 5.
    Fixed32(u32),
}

/// Bytes that are not a well-formed message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Where the reader stopped.
    pub at: usize,
    /// What was wrong.
    pub what: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed protobuf at byte {}: {}", self.at, self.what)
    }
}

impl std::error::Error for DecodeError {}

/// The fields of a message, in order: `(field number, value)`.
pub fn fields(bytes: &[u8]) -> Result<Vec<(u32, Value<'_>)>, DecodeError> {
    let mut out = Vec::new();
    let mut pos = 0;
    let fail = |at, what| DecodeError { at, what };
    while pos < bytes.len() {
        let key = get_varint(bytes, &mut pos).ok_or(fail(pos, "truncated key"))?;
        let field = u32::try_from(key >> 3).map_err(|_| fail(pos, "field number too large"))?;
        let value = match (key & 7) as u8 {
            VARINT => Value::Varint(get_varint(bytes, &mut pos).ok_or(fail(pos, "bad varint"))?),
            FIXED64 => Value::Fixed64(u64::from_le_bytes(take(bytes, &mut pos)?)),
            FIXED32 => Value::Fixed32(u32::from_le_bytes(take(bytes, &mut pos)?)),
            LEN => {
                let len = get_varint(bytes, &mut pos).ok_or(fail(pos, "bad length"))?;
                let end = usize::try_from(len)
                    .ok()
                    .and_then(|l| pos.checked_add(l))
                    .filter(|&e| e <= bytes.len())
                    .ok_or(fail(pos, "length past the end"))?;
                let body = &bytes[pos..end];
                pos = end;
                Value::Len(body)
            }
            _ => {
                return Err(fail(
                    pos,
                    "unsupported wire type (groups are not used here)",
                ))
            }
        };
        out.push((field, value));
    }
    Ok(out)
}

fn take<const N: usize>(bytes: &[u8], pos: &mut usize) -> Result<[u8; N], DecodeError> {
    let end = pos.checked_add(N).filter(|&e| e <= bytes.len());
    let end = end.ok_or(DecodeError {
        at: *pos,
        what: "fixed-width value past the end",
    })?;
    let mut out = [0u8; N];
    out.copy_from_slice(&bytes[*pos..end]);
    *pos = end;
    Ok(out)
}

/// The varints of a packed repeated field's body.
pub fn packed_varints(body: &[u8]) -> Result<Vec<u64>, DecodeError> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < body.len() {
        out.push(get_varint(body, &mut pos).ok_or(DecodeError {
            at: pos,
            what: "bad packed varint",
        })?);
    }
    Ok(out)
}

/// Field numbers of the messages used, from OR-tools' `cp_model.proto` and
/// `sat_parameters.proto` (checked against the descriptors shipped in the 9.15 wheel).
pub mod field {
    /// `CpModelProto.variables` (IntegerVariableProto).
    pub(crate) const MODEL_VARIABLES: u32 = 2;
    /// `CpModelProto.constraints` (ConstraintProto).
    pub(crate) const MODEL_CONSTRAINTS: u32 = 3;
    /// `CpModelProto.objective` (CpObjectiveProto).
    pub(crate) const MODEL_OBJECTIVE: u32 = 4;
    /// `CpModelProto.solution_hint` (PartialVariableAssignment).
    pub(crate) const MODEL_SOLUTION_HINT: u32 = 6;
    /// `PartialVariableAssignment.vars` (packed int32) and `values` (packed int64).
    pub(crate) const HINT_VARS: u32 = 1;
    /// See [`HINT_VARS`].
    pub(crate) const HINT_VALUES: u32 = 2;
    /// `IntegerVariableProto.domain`: sorted disjoint `[min, max]` pairs, packed int64.
    pub(crate) const VARIABLE_DOMAIN: u32 = 2;
    /// `ConstraintProto.linear` (LinearConstraintProto).
    pub(crate) const CONSTRAINT_LINEAR: u32 = 12;
    /// `ConstraintProto.interval` (IntervalConstraintProto).
    pub(crate) const CONSTRAINT_INTERVAL: u32 = 19;
    /// `ConstraintProto.no_overlap_2d` (NoOverlap2DConstraintProto).
    pub(crate) const CONSTRAINT_NO_OVERLAP_2D: u32 = 21;
    /// `IntervalConstraintProto.start` / `end` / `size` (LinearExpressionProto).
    pub(crate) const INTERVAL_START: u32 = 4;
    /// See [`INTERVAL_START`].
    pub(crate) const INTERVAL_END: u32 = 5;
    /// See [`INTERVAL_START`].
    pub(crate) const INTERVAL_SIZE: u32 = 6;
    /// `LinearExpressionProto.vars` (packed int32), `coeffs` (packed int64), `offset` (int64);
    /// `LinearConstraintProto` and `CpObjectiveProto` use 1 and 2/4 for vars and coeffs too.
    pub(crate) const EXPR_VARS: u32 = 1;
    /// See [`EXPR_VARS`].
    pub(crate) const EXPR_COEFFS: u32 = 2;
    /// See [`EXPR_VARS`].
    pub(crate) const EXPR_OFFSET: u32 = 3;
    /// `LinearConstraintProto.domain` (packed int64 pairs).
    pub(crate) const LINEAR_DOMAIN: u32 = 3;
    /// `CpObjectiveProto.vars` (packed int32).
    pub(crate) const OBJECTIVE_VARS: u32 = 1;
    /// `CpObjectiveProto.coeffs` (packed int64).
    pub(crate) const OBJECTIVE_COEFFS: u32 = 4;
    /// `NoOverlap2DConstraintProto.x_intervals` / `y_intervals` (constraint indices).
    pub(crate) const NO_OVERLAP_2D_X: u32 = 1;
    /// See [`NO_OVERLAP_2D_X`].
    pub(crate) const NO_OVERLAP_2D_Y: u32 = 2;

    /// `SatParameters.max_time_in_seconds` (double).
    pub(crate) const PARAM_MAX_TIME: u32 = 36;
    /// `SatParameters.max_deterministic_time` (double).
    pub(crate) const PARAM_MAX_DETERMINISTIC_TIME: u32 = 67;
    /// `SatParameters.random_seed` (int32).
    pub(crate) const PARAM_RANDOM_SEED: u32 = 31;
    /// `SatParameters.log_search_progress` (bool).
    pub(crate) const PARAM_LOG_SEARCH_PROGRESS: u32 = 41;
    /// `SatParameters.num_workers` (int32).
    pub(crate) const PARAM_NUM_WORKERS: u32 = 206;

    /// `CpSolverResponse.status` (CpSolverStatus).
    pub(crate) const RESPONSE_STATUS: u32 = 1;
    /// `CpSolverResponse.solution` (packed int64, one per variable).
    pub(crate) const RESPONSE_SOLUTION: u32 = 2;
    /// `CpSolverResponse.objective_value` (double).
    pub(crate) const RESPONSE_OBJECTIVE: u32 = 3;
    /// `CpSolverResponse.best_objective_bound` (double).
    pub(crate) const RESPONSE_BOUND: u32 = 4;
    /// `CpSolverResponse.num_conflicts` (int64).
    pub(crate) const RESPONSE_CONFLICTS: u32 = 11;
    /// `CpSolverResponse.num_branches` (int64).
    pub(crate) const RESPONSE_BRANCHES: u32 = 12;
    /// `CpSolverResponse.wall_time` (double).
    pub(crate) const RESPONSE_WALL_TIME: u32 = 15;
    /// `CpSolverResponse.deterministic_time` (double).
    pub(crate) const RESPONSE_DETERMINISTIC_TIME: u32 = 17;
    /// `CpSolverResponse.solution_info` (string).
    pub(crate) const RESPONSE_SOLUTION_INFO: u32 = 20;
}

/// `CpSolverStatus`: how a solve ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpStatus {
    /// 0: no answer within the limits.
    Unknown,
    /// 1: the model was rejected (a bug in the encoder).
    ModelInvalid,
    /// 2: a solution, optimality not proven.
    Feasible,
    /// 3: proven: no solution.
    Infeasible,
    /// 4: a solution, proven optimal (for a model without objective: any solution).
    Optimal,
}

impl CpStatus {
    /// The status with this enum number (unknown numbers read as `Unknown`).
    pub fn from_number(n: u64) -> CpStatus {
        match n {
            1 => CpStatus::ModelInvalid,
            2 => CpStatus::Feasible,
            3 => CpStatus::Infeasible,
            4 => CpStatus::Optimal,
            _ => CpStatus::Unknown,
        }
    }
}

/// The fields of a `CpSolverResponse` telamalloc reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// How the solve ended (`Unknown` when absent, as proto3 leaves out zero).
    pub status: CpStatus,
    /// One value per model variable, when a solution was found.
    pub solution: Vec<i64>,
    /// The objective of the solution (minimisation).
    pub objective: f64,
    /// The proven bound on the objective (minimisation).
    pub bound: f64,
    /// Conflicts.
    pub conflicts: i64,
    /// Branches.
    pub branches: i64,
    /// Wall-clock seconds inside CP-SAT.
    pub wall_time: f64,
    /// Deterministic seconds spent.
    pub deterministic_time: f64,
    /// CP-SAT's note on the result (e.g. why a model is invalid).
    pub info: String,
}

/// Reads a `CpSolverResponse`, skipping the fields it does not need.
pub fn decode_response(bytes: &[u8]) -> Result<Response, DecodeError> {
    let mut r = Response {
        status: CpStatus::Unknown,
        solution: Vec::new(),
        objective: 0.0,
        bound: 0.0,
        conflicts: 0,
        branches: 0,
        wall_time: 0.0,
        deterministic_time: 0.0,
        info: String::new(),
    };
    for (number, value) in fields(bytes)? {
        match (number, value) {
            (field::RESPONSE_STATUS, Value::Varint(v)) => r.status = CpStatus::from_number(v),
            (field::RESPONSE_SOLUTION, Value::Len(body)) => r
                .solution
                .extend(packed_varints(body)?.into_iter().map(|v| v as i64)),
            (field::RESPONSE_SOLUTION, Value::Varint(v)) => r.solution.push(v as i64),
            (field::RESPONSE_OBJECTIVE, Value::Fixed64(v)) => r.objective = f64::from_bits(v),
            (field::RESPONSE_BOUND, Value::Fixed64(v)) => r.bound = f64::from_bits(v),
            (field::RESPONSE_CONFLICTS, Value::Varint(v)) => r.conflicts = v as i64,
            (field::RESPONSE_BRANCHES, Value::Varint(v)) => r.branches = v as i64,
            (field::RESPONSE_WALL_TIME, Value::Fixed64(v)) => r.wall_time = f64::from_bits(v),
            (field::RESPONSE_DETERMINISTIC_TIME, Value::Fixed64(v)) => {
                r.deterministic_time = f64::from_bits(v)
            }
            (field::RESPONSE_SOLUTION_INFO, Value::Len(text)) => {
                r.info = String::from_utf8_lossy(text).into_owned()
            }
            _ => {}
        }
    }
    Ok(r)
}

/// The solver settings sent as `SatParameters`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Parameters {
    /// `num_workers` (1: single-threaded and deterministic).
    pub workers: u32,
    /// `random_seed`.
    pub seed: i32,
    /// `max_time_in_seconds`, if limited.
    pub max_time: Option<f64>,
    /// `max_deterministic_time`, if limited.
    pub max_deterministic_time: Option<f64>,
}

/// Encodes the parameters (`log_search_progress` always false).
pub fn encode_parameters(p: &Parameters) -> Vec<u8> {
    let mut w = Writer::new();
    w.int(field::PARAM_NUM_WORKERS, i64::from(p.workers.max(1)));
    w.int(field::PARAM_RANDOM_SEED, i64::from(p.seed));
    w.int(field::PARAM_LOG_SEARCH_PROGRESS, 0);
    if let Some(t) = p.max_time {
        w.double(field::PARAM_MAX_TIME, t);
    }
    if let Some(t) = p.max_deterministic_time {
        w.double(field::PARAM_MAX_DETERMINISTIC_TIME, t);
    }
    w.finish()
}

/// A linear expression `sum(coeff * var) + offset` (`LinearExpressionProto`).
pub fn expression(terms: &[(i32, i64)], offset: i64) -> Writer {
    let mut w = Writer::new();
    let vars: Vec<i64> = terms.iter().map(|&(v, _)| i64::from(v)).collect();
    let coeffs: Vec<i64> = terms.iter().map(|&(_, c)| c).collect();
    w.packed(field::EXPR_VARS, &vars);
    w.packed(field::EXPR_COEFFS, &coeffs);
    if offset != 0 {
        w.int(field::EXPR_OFFSET, offset);
    }
    w
}
