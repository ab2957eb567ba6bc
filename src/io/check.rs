//! The semantic checks every reader applies to a parsed problem.

use crate::error::InputError;
use crate::problem::{Problem, Solution};
use crate::validate::{validate, Violation};
use std::collections::HashMap;

/// Where each buffer came from, so that errors can name it.
pub enum BufferPlaces<'a> {
    /// `lines[i]` is the 1-based line of buffer `i` (CSV).
    Lines(&'a [usize]),
    /// Buffers are named by their index in the list (JSON).
    Elements,
    /// No per-buffer place is known (e.g. a problem built in code).
    None,
}

impl BufferPlaces<'_> {
    fn error(&self, file: &str, index: usize, field: &str, message: String) -> InputError {
        match self {
            BufferPlaces::Lines(lines) => {
                InputError::at_line(file, lines.get(index).copied(), Some(field), message)
            }
            BufferPlaces::Elements | BufferPlaces::None => {
                InputError::at_element(file, index, Some(field), message)
            }
        }
    }
}

/// Checks the rules every problem must satisfy, naming the first offending buffer and field:
/// `lower < upper`, `size > 0`, alignment a power of two, unique ids, a fixed offset aligned and
/// inside the capacity, no buffer larger than the capacity, a capacity above 0, and a total size
/// that fits in 64 bits, fixed buffers that do not collide with each other, and an address span
/// (the highest fixed end plus every free buffer's size and alignment slack) that fits in 64 bits,
/// so that no allocator's `offset + size` can overflow.
pub fn check_problem(
    problem: &Problem,
    file: &str,
    places: &BufferPlaces<'_>,
) -> Result<(), InputError> {
    check_problem_for(problem, problem.capacity, file, places)
}

/// [`check_problem`] with `capacity` in place of the problem's own (`None`: the rules that do not
/// depend on a capacity).
pub fn check_problem_for(
    problem: &Problem,
    capacity: Option<u64>,
    file: &str,
    places: &BufferPlaces<'_>,
) -> Result<(), InputError> {
    if capacity == Some(0) {
        return Err(InputError::at_line(
            file,
            None,
            Some("capacity"),
            "capacity must be greater than 0",
        ));
    }
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(problem.buffers.len());
    let mut total: u64 = 0;
    for (i, b) in problem.buffers.iter().enumerate() {
        let err = |field: &str, message: String| places.error(file, i, field, message);
        if b.id.is_empty() {
            return Err(err("id", "id is empty".into()));
        }
        if let Some(&first) = seen.get(b.id.as_str()) {
            let first_place = match places {
                BufferPlaces::Lines(lines) => format!("line {}", lines[first]),
                _ => format!("buffers[{first}]"),
            };
            return Err(err(
                "id",
                format!("duplicate id '{}' (first used at {first_place})", b.id),
            ));
        }
        seen.insert(&b.id, i);
        if b.lower >= b.upper {
            return Err(err(
                "upper",
                format!("lower ({}) must be less than upper ({})", b.lower, b.upper),
            ));
        }
        if b.size == 0 {
            return Err(err("size", "size must be greater than 0".into()));
        }
        if b.alignment == 0 || !b.alignment.is_power_of_two() {
            return Err(err(
                "alignment",
                format!("alignment {} is not a power of two", b.alignment),
            ));
        }
        total = total.checked_add(b.size).ok_or_else(|| {
            err(
                "size",
                "the total size of all buffers overflows 64 bits".into(),
            )
        })?;
        if let Some(capacity) = capacity {
            if b.size > capacity {
                return Err(err(
                    "size",
                    format!(
                        "buffer '{}' of size {} is larger than the capacity {capacity}",
                        b.id, b.size
                    ),
                ));
            }
        }
        if let Some(offset) = b.offset {
            if offset % b.alignment != 0 {
                return Err(err(
                    "offset",
                    format!(
                        "fixed offset {offset} is not a multiple of the alignment {}",
                        b.alignment
                    ),
                ));
            }
            let top = offset.checked_add(b.size).ok_or_else(|| {
                err(
                    "offset",
                    format!("fixed offset {offset} + size {} overflows 64 bits", b.size),
                )
            })?;
            if let Some(capacity) = capacity {
                if top > capacity {
                    return Err(err(
                        "offset",
                        format!(
                            "fixed offset {offset} + size {} exceeds the capacity {capacity}",
                            b.size
                        ),
                    ));
                }
            }
        }
    }
    check_fixed_buffers(problem, file, places)?;
    check_address_span(problem, file)?;
    Ok(())
}

/// Fixed buffers live at the same time must not share addresses.
fn check_fixed_buffers(
    problem: &Problem,
    file: &str,
    places: &BufferPlaces<'_>,
) -> Result<(), InputError> {
    let fixed: Vec<usize> = (0..problem.buffers.len())
        .filter(|&i| problem.buffers[i].offset.is_some())
        .collect();
    if fixed.len() < 2 {
        return Ok(());
    }
    let subset = Problem::new(
        fixed.iter().map(|&i| problem.buffers[i].clone()).collect(),
        None,
    );
    let offsets = Solution {
        offsets: fixed
            .iter()
            .map(|&i| problem.buffers[i].offset.unwrap_or(0))
            .collect(),
    };
    let report = validate(&subset, &offsets, Some(u64::MAX));
    for violation in report.violations {
        if let Violation::Overlap {
            first,
            second,
            time,
        } = violation
        {
            let index = problem
                .buffers
                .iter()
                .position(|b| b.id == second)
                .unwrap_or(0);
            return Err(places.error(
                file,
                index,
                "offset",
                format!(
                    "fixed buffer '{second}' shares addresses with fixed buffer '{first}' at time {time}"
                ),
            ));
        }
    }
    Ok(())
}

/// The highest fixed end plus every free buffer's size and alignment slack must fit 64 bits.
fn check_address_span(problem: &Problem, file: &str) -> Result<(), InputError> {
    let mut span: u64 = problem
        .buffers
        .iter()
        .filter_map(|b| b.offset.map(|o| o.saturating_add(b.size)))
        .max()
        .unwrap_or(0);
    for b in problem.buffers.iter().filter(|b| b.offset.is_none()) {
        span = span
            .checked_add(b.size)
            .and_then(|s| s.checked_add(b.alignment - 1))
            .ok_or_else(|| {
                InputError::at_line(
                    file,
                    None,
                    Some("offset"),
                    "the fixed offsets plus the sizes of all other buffers overflow 64 bits",
                )
            })?;
    }
    Ok(())
}
