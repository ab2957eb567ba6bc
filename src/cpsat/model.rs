//! The allocation problem as a CP-SAT model (`CpModelProto`).
//!
//! Each buffer is a rectangle: a time interval `[lower, upper)` (constant) by an address
//! interval `[offset, offset + size)`, and one `NoOverlap2D` keeps rectangles apart (CP-SAT's
//! intervals are half-open, like lifetimes, so buffers that only touch in time may share
//! addresses). A free buffer of alignment `a` gets one integer variable `k` in
//! `[0, (top - size) / a]` and its offset is `a * k`, so alignment costs no extra constraint; a
//! fixed buffer's address interval is a constant. `top` is the capacity (fit) or an upper bound
//! on the peak (minimise, which adds a peak variable `P`, `a * k + size <= P` per free buffer,
//! and the objective "minimise `P`").
//!
//! Constraint `2 i` is buffer `i`'s time interval, `2 i + 1` its address interval, `2 n` the
//! `NoOverlap2D`, and the linear constraints of minimise follow.

use super::proto::{expression, field, Writer};
use crate::problem::{Problem, Solution};

/// The largest value the model may hold. CP-SAT keeps its integers within about ±2⁶²; this
/// leaves room for its sums.
pub const MAX_VALUE: u64 = 1 << 60;

/// How a buffer's offset is read from a CP-SAT solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetOf {
    /// A fixed offset (no variable).
    Fixed(u64),
    /// `alignment * solution[var]`.
    Scaled {
        /// The variable's index.
        var: usize,
        /// The buffer's alignment.
        alignment: u64,
    },
}

/// An encoded model and how to read its solutions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    /// The serialised `CpModelProto`.
    pub bytes: Vec<u8>,
    /// Per buffer, in problem order.
    pub offsets: Vec<OffsetOf>,
    /// The index of the peak variable (minimise only).
    pub peak_var: Option<usize>,
    /// How many variables the model has.
    pub variables: usize,
}

impl Model {
    /// The layout a CP-SAT solution describes; `None` if the solution is too short or a value
    /// is negative.
    pub fn solution(&self, values: &[i64]) -> Option<Solution> {
        let offsets = self
            .offsets
            .iter()
            .map(|o| match *o {
                OffsetOf::Fixed(offset) => Some(offset),
                OffsetOf::Scaled { var, alignment } => {
                    let k = u64::try_from(*values.get(var)?).ok()?;
                    k.checked_mul(alignment)
                }
            })
            .collect::<Option<Vec<u64>>>()?;
        Some(Solution { offsets })
    }
}

/// Why a problem cannot be put to CP-SAT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TooLarge {
    /// The buffer (or `capacity`) with a value above [`MAX_VALUE`].
    pub what: String,
}

/// The model of fitting `problem` under `capacity`. Every buffer must fit under the capacity
/// (the caller checks [`crate::trivially_infeasible`] first). `hint`, a layout under the
/// capacity, is given to CP-SAT as a starting point.
pub fn fit_model(
    problem: &Problem,
    capacity: u64,
    hint: Option<&Solution>,
) -> Result<Model, TooLarge> {
    build(problem, capacity, None, hint)
}

/// The model of minimising the peak of `problem`, known to lie in `[lower, upper]`;
/// `hint`, a layout with peak at most `upper`, is given to CP-SAT as a starting point.
pub fn minimize_model(
    problem: &Problem,
    lower: u64,
    upper: u64,
    hint: Option<&Solution>,
) -> Result<Model, TooLarge> {
    build(problem, upper, Some(lower), hint)
}

fn check(value: u64, what: impl FnOnce() -> String) -> Result<i64, TooLarge> {
    if value > MAX_VALUE {
        return Err(TooLarge { what: what() });
    }
    Ok(value as i64)
}

/// `[min, max]` as a domain.
fn domain(min: i64, max: i64) -> Writer {
    let mut w = Writer::new();
    w.packed(field::VARIABLE_DOMAIN, &[min, max]);
    w
}

/// An interval constraint from three expressions.
fn interval(start: Writer, end: Writer, size: Writer) -> Writer {
    let mut interval = Writer::new();
    interval
        .message(field::INTERVAL_START, &start)
        .message(field::INTERVAL_END, &end)
        .message(field::INTERVAL_SIZE, &size);
    let mut constraint = Writer::new();
    constraint.message(field::CONSTRAINT_INTERVAL, &interval);
    constraint
}

/// The variables and constraints of a model as they are written: `model` holds the variables
/// (and later the objective), `constraints` the constraints, `variables` counts the variables.
struct Parts {
    model: Writer,
    constraints: Writer,
    variables: usize,
}

fn build(
    problem: &Problem,
    top: u64,
    peak_lower: Option<u64>,
    hint: Option<&Solution>,
) -> Result<Model, TooLarge> {
    let top_value = check(top, || "capacity".into())?;
    let mut parts = Parts {
        model: Writer::new(),
        constraints: Writer::new(),
        variables: 0,
    };
    let offsets = buffer_intervals(problem, top, &mut parts)?;
    parts
        .constraints
        .message(field::MODEL_CONSTRAINTS, &no_overlap_2d(problem.len()));
    let peak_var = peak_lower
        .map(|lower| peak_variable(problem, &offsets, (lower, top, top_value), &mut parts));
    let mut bytes = parts.model.finish();
    bytes.extend_from_slice(parts.constraints.as_bytes());
    if let Some(p) = peak_var {
        let mut objective = Writer::new();
        objective
            .packed(field::OBJECTIVE_VARS, &[p as i64])
            .packed(field::OBJECTIVE_COEFFS, &[1]);
        let mut tail = Writer::new();
        tail.message(field::MODEL_OBJECTIVE, &objective);
        bytes.extend_from_slice(tail.as_bytes());
    }
    if let Some(hint) = hint {
        let mut tail = Writer::new();
        tail.message(
            field::MODEL_SOLUTION_HINT,
            &solution_hint(problem, &offsets, hint, peak_var),
        );
        bytes.extend_from_slice(tail.as_bytes());
    }
    Ok(Model {
        bytes,
        offsets,
        peak_var,
        variables: parts.variables,
    })
}

/// Each buffer's two intervals, time and address (a variable per free buffer, its offset in
/// units of its alignment), in problem order: how each offset is read back.
fn buffer_intervals(
    problem: &Problem,
    top: u64,
    parts: &mut Parts,
) -> Result<Vec<OffsetOf>, TooLarge> {
    let mut offsets = Vec::with_capacity(problem.len());
    for b in &problem.buffers {
        let name = || format!("buffer '{}'", b.id);
        let (lower, upper, size) = (
            check(b.lower, name)?,
            check(b.upper, name)?,
            check(b.size, name)?,
        );
        parts.constraints.message(
            field::MODEL_CONSTRAINTS,
            &interval(
                expression(&[], lower),
                expression(&[], upper),
                expression(&[], upper - lower),
            ),
        );
        let address = match b.offset {
            Some(offset) => {
                let start = check(offset, name)?;
                check(offset + b.size, name)?;
                offsets.push(OffsetOf::Fixed(offset));
                interval(
                    expression(&[], start),
                    expression(&[], start + size),
                    expression(&[], size),
                )
            }
            None => {
                let alignment = b.alignment.max(1);
                let steps = top.saturating_sub(b.size) / alignment;
                parts
                    .model
                    .message(field::MODEL_VARIABLES, &domain(0, steps as i64));
                let var = parts.variables;
                parts.variables += 1;
                offsets.push(OffsetOf::Scaled { var, alignment });
                let a = check(alignment, name)?;
                interval(
                    expression(&[(var as i32, a)], 0),
                    expression(&[(var as i32, a)], size),
                    expression(&[], size),
                )
            }
        };
        parts
            .constraints
            .message(field::MODEL_CONSTRAINTS, &address);
    }
    Ok(offsets)
}

/// The constraint that no two buffers' (time, address) rectangles overlap: buffer `i`'s
/// intervals are constraints `2i` (time) and `2i + 1` (address).
fn no_overlap_2d(buffers: usize) -> Writer {
    let n = buffers as i64;
    let mut no_overlap = Writer::new();
    no_overlap
        .packed(
            field::NO_OVERLAP_2D_X,
            &(0..n).map(|i| 2 * i).collect::<Vec<_>>(),
        )
        .packed(
            field::NO_OVERLAP_2D_Y,
            &(0..n).map(|i| 2 * i + 1).collect::<Vec<_>>(),
        );
    let mut constraint = Writer::new();
    constraint.message(field::CONSTRAINT_NO_OVERLAP_2D, &no_overlap);
    constraint
}

/// The peak variable of a minimise model, in `[lower, top]`, with every free buffer's end at
/// most it; its index.
fn peak_variable(
    problem: &Problem,
    offsets: &[OffsetOf],
    (lower, top, top_value): (u64, u64, i64),
    parts: &mut Parts,
) -> usize {
    let p = parts.variables;
    parts.variables += 1;
    parts.model.message(
        field::MODEL_VARIABLES,
        &domain(lower.min(top) as i64, top_value),
    );
    for (b, o) in problem.buffers.iter().zip(offsets) {
        if let OffsetOf::Scaled { var, alignment } = *o {
            // alignment * k - P in [-top, -size], i.e. offset + size <= P.
            let mut linear = Writer::new();
            linear
                .packed(field::EXPR_VARS, &[var as i64, p as i64])
                .packed(field::EXPR_COEFFS, &[alignment as i64, -1])
                .packed(field::LINEAR_DOMAIN, &[-top_value, -(b.size as i64)]);
            let mut c = Writer::new();
            c.message(field::CONSTRAINT_LINEAR, &linear);
            parts.constraints.message(field::MODEL_CONSTRAINTS, &c);
        }
    }
    p
}

/// A `PartialVariableAssignment` giving every variable its value in `hint`.
fn solution_hint(
    problem: &Problem,
    offsets: &[OffsetOf],
    hint: &Solution,
    peak_var: Option<usize>,
) -> Writer {
    let mut vars = Vec::new();
    let mut values = Vec::new();
    for (o, &offset) in offsets.iter().zip(&hint.offsets) {
        if let OffsetOf::Scaled { var, alignment } = *o {
            vars.push(var as i64);
            values.push((offset / alignment) as i64);
        }
    }
    if let Some(p) = peak_var {
        vars.push(p as i64);
        values.push(hint.peak(problem) as i64);
    }
    let mut w = Writer::new();
    w.packed(field::HINT_VARS, &vars)
        .packed(field::HINT_VALUES, &values);
    w
}
