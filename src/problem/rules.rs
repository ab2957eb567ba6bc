//! The rules every problem must satisfy, whatever it was read from: the readers report a broken
//! rule with the file, line and field; the front door refuses a problem built in code that
//! breaks one.

use super::{Buffer, Gap, Problem, Solution};
use crate::error::{escape_controls, quoted};
use crate::validate::{validate, Violation};
use std::collections::HashMap;

/// A broken rule: which buffer (its index), which field, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleBreak {
    /// The index of the offending buffer, when the rule is about one.
    pub buffer: Option<usize>,
    /// The field at fault (`id`, `upper`, `size`, `alignment`, `offset`, `capacity`).
    pub field: &'static str,
    /// What is wrong, in words.
    pub message: String,
    /// For a duplicate id: the index of the buffer that used it first.
    pub first_use: Option<usize>,
}

impl RuleBreak {
    fn at(buffer: usize, field: &'static str, message: String) -> RuleBreak {
        RuleBreak {
            buffer: Some(buffer),
            field,
            message,
            first_use: None,
        }
    }
}

impl std::fmt::Display for RuleBreak {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.buffer {
            Some(i) => write!(f, "buffers[{i}]: field '{}': {}", self.field, self.message),
            None => write!(f, "field '{}': {}", self.field, self.message),
        }
    }
}

impl std::error::Error for RuleBreak {}

/// How a file writes the time columns, so that a broken rule is worded as the file has it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeColumns {
    /// The name of the first live step's column (`lower`, or MiniMalloc's `start` or `begin`).
    pub lower: &'static str,
    /// The name of the end's column (`upper`, or MiniMalloc's `end`).
    pub upper: &'static str,
    /// Whether the end is the last live step (MiniMalloc's `end`, `upper = end + 1`); a gap's
    /// end then is too.
    pub inclusive_end: bool,
}

impl TimeColumns {
    /// `lower` and a half-open `upper`, as problems hold them.
    pub const HALF_OPEN: TimeColumns = TimeColumns {
        lower: "lower",
        upper: "upper",
        inclusive_end: false,
    };

    /// An end (a buffer's or a gap's `upper`) as the file writes it.
    fn end(&self, upper: u64) -> i128 {
        i128::from(upper) - i128::from(self.inclusive_end)
    }
}

impl Problem {
    /// Checks the rules every problem must satisfy under `capacity` (`None`: the rules that do
    /// not depend on one) and returns the first one broken: `lower < upper`, `size > 0`,
    /// alignment a power of two, unique non-empty ids without white space at either end (CSV
    /// readers trim fields, so such an id would not read back), a fixed offset aligned and inside the
    /// capacity, gaps inside the lifetime in increasing order without overlaps (windows a
    /// non-empty part of the range), a hint aligned and inside the capacity, no buffer larger than the capacity, a capacity above 0, a total size that fits
    /// in 64 bits, memories with unique ids and capacities above 0 that every buffer's
    /// `memories` list names (and one of them large enough for the buffer), fixed buffers
    /// that do not collide with each other (without memories; with memories `capacity` is not
    /// used, each memory having its own), and an address span (the
    /// highest fixed end plus every free buffer's size and alignment slack) that fits in 64
    /// bits, so that no allocator's `offset + size` can overflow.
    pub fn check(&self, capacity: Option<u64>) -> Result<(), RuleBreak> {
        self.check_as_written(capacity, &TimeColumns::HALF_OPEN)
    }

    /// The one rule of [`Problem::check`] a part cut from a checked problem with memories can
    /// break: fixed buffers live at the same time must not share addresses.
    pub(crate) fn check_fixed_buffers(&self) -> Result<(), RuleBreak> {
        check_fixed_buffers(self)
    }

    /// [`Problem::check`], wording a broken rule about times in the terms of a file that writes
    /// them as `columns` say (`end (3) must not be before start (5)`).
    pub fn check_as_written(
        &self,
        capacity: Option<u64>,
        columns: &TimeColumns,
    ) -> Result<(), RuleBreak> {
        // With several memories each has its own capacity, checked with them: a single one
        // (a file name's, a JSON `capacity`) plays no part.
        let capacity = capacity.filter(|_| self.memories.is_empty());
        if capacity == Some(0) {
            return Err(RuleBreak {
                buffer: None,
                field: "capacity",
                message: "capacity must be greater than 0".into(),
                first_use: None,
            });
        }
        let mut seen: HashMap<&str, usize> = HashMap::with_capacity(self.buffers.len());
        let mut total: u64 = 0;
        for (i, b) in self.buffers.iter().enumerate() {
            if b.id.is_empty() {
                return Err(RuleBreak::at(i, "id", "id is empty".into()));
            }
            if b.id.trim() != b.id {
                // CSV readers (ours, MiniMalloc's) trim fields: such an id would not read back.
                return Err(RuleBreak::at(
                    i,
                    "id",
                    format!("id {} starts or ends with white space", quoted(&b.id)),
                ));
            }
            if let Some(&first) = seen.get(b.id.as_str()) {
                return Err(RuleBreak {
                    first_use: Some(first),
                    ..RuleBreak::at(i, "id", format!("duplicate id {}", quoted(&b.id)))
                });
            }
            seen.insert(&b.id, i);
            check_buffer(self, i, capacity, columns)?;
            total = total.checked_add(b.size).ok_or_else(|| {
                RuleBreak::at(
                    i,
                    "size",
                    "the total size of all buffers overflows 64 bits".into(),
                )
            })?;
        }
        check_memories(self)?;
        if self.memories.is_empty() {
            // With several memories, fixed buffers in different memories may share addresses.
            check_fixed_buffers(self)?;
        }
        check_address_span(self)
    }
}

/// Memories have unique non-empty ids and capacities above 0; every memory a buffer names
/// exists; a fixed offset fits some memory the buffer may go to.
fn check_memories(problem: &Problem) -> Result<(), RuleBreak> {
    let memory_error = |message: String| RuleBreak {
        buffer: None,
        field: "memories",
        message,
        first_use: None,
    };
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for (m, memory) in problem.memories.iter().enumerate() {
        if memory.id.is_empty() || memory.id.trim() != memory.id {
            return Err(memory_error(format!(
                "memory {m} has id {}: ids must be non-empty, without white space at either end",
                quoted(&memory.id)
            )));
        }
        if memory.id.contains(char::is_whitespace) {
            return Err(memory_error(format!(
                "memory id {} contains white space (a buffer's memories are a space-separated list)",
                quoted(&memory.id)
            )));
        }
        if seen.insert(&memory.id, m).is_some() {
            return Err(memory_error(format!(
                "duplicate memory id {}",
                quoted(&memory.id)
            )));
        }
        if memory.capacity == 0 {
            return Err(memory_error(format!(
                "memory {} has capacity 0 (it must be greater than 0)",
                quoted(&memory.id)
            )));
        }
    }
    for (i, b) in problem.buffers.iter().enumerate() {
        if let Some(name) = b.memories.iter().find(|n| !seen.contains_key(n.as_str())) {
            let known = if problem.memories.is_empty() {
                "the problem has no memories".to_string()
            } else {
                let ids: Vec<&str> = problem.memories.iter().map(|m| m.id.as_str()).collect();
                format!("the memories are {}", escape_controls(&ids.join(", ")))
            };
            return Err(RuleBreak::at(
                i,
                "memories",
                format!("unknown memory {} ({known})", quoted(name)),
            ));
        }
        if problem.memories.is_empty() {
            continue;
        }
        // By name through `seen`: a buffer lists a few of possibly thousands of memories.
        let largest = if b.memories.is_empty() {
            problem.memories.iter().map(|m| m.capacity).max()
        } else {
            b.memories
                .iter()
                .filter_map(|n| seen.get(n.as_str()))
                .map(|&m| problem.memories[m].capacity)
                .max()
        }
        .unwrap_or(0);
        let top = b.offset.unwrap_or(0).saturating_add(b.size);
        if top > largest {
            let field = if b.offset.is_some() { "offset" } else { "size" };
            return Err(RuleBreak::at(
                i,
                field,
                format!(
                    "buffer {} (offset {} + size {}) fits none of its memories (the largest holds {largest})",
                    quoted(&b.id),
                    b.offset.unwrap_or(0),
                    b.size
                ),
            ));
        }
    }
    Ok(())
}

/// The rules about one buffer on its own.
fn check_buffer(
    problem: &Problem,
    i: usize,
    capacity: Option<u64>,
    columns: &TimeColumns,
) -> Result<(), RuleBreak> {
    let b = &problem.buffers[i];
    if b.lower >= b.upper {
        let (lower, upper) = (columns.lower, columns.upper);
        let end = columns.end(b.upper);
        return Err(RuleBreak::at(
            i,
            upper,
            if columns.inclusive_end {
                format!("{upper} ({end}) must not be before {lower} ({})", b.lower)
            } else {
                format!("{lower} ({}) must be less than {upper} ({end})", b.lower)
            },
        ));
    }
    if b.size == 0 {
        return Err(RuleBreak::at(
            i,
            "size",
            "size must be greater than 0".into(),
        ));
    }
    if b.alignment == 0 || !b.alignment.is_power_of_two() {
        return Err(RuleBreak::at(
            i,
            "alignment",
            format!("alignment {} is not a power of two", b.alignment),
        ));
    }
    if let Some(capacity) = capacity {
        if b.size > capacity {
            return Err(RuleBreak::at(
                i,
                "size",
                format!(
                    "buffer {} of size {} is larger than the capacity {capacity}",
                    quoted(&b.id),
                    b.size
                ),
            ));
        }
    }
    check_gaps(b, i, columns)?;
    check_hint(b, i, capacity)?;
    let Some(offset) = b.offset else {
        return Ok(());
    };
    if offset % b.alignment != 0 {
        return Err(RuleBreak::at(
            i,
            "offset",
            format!(
                "fixed offset {offset} is not a multiple of the alignment {}",
                b.alignment
            ),
        ));
    }
    let top = offset.checked_add(b.size).ok_or_else(|| {
        RuleBreak::at(
            i,
            "offset",
            format!("fixed offset {offset} + size {} overflows 64 bits", b.size),
        )
    })?;
    match capacity {
        Some(capacity) if top > capacity => Err(RuleBreak::at(
            i,
            "offset",
            format!(
                "fixed offset {offset} + size {} exceeds the capacity {capacity}",
                b.size
            ),
        )),
        _ => Ok(()),
    }
}

/// Gaps lie inside the lifetime, are not empty, come in increasing order without overlapping
/// (they may touch), and a window is a non-empty part of the buffer's range.
fn check_gaps(b: &Buffer, i: usize, columns: &TimeColumns) -> Result<(), RuleBreak> {
    let mut previous: Option<&Gap> = None;
    for gap in &b.gaps {
        let shown = show_gap(gap, columns);
        let err = |message: String| Err(RuleBreak::at(i, "gaps", message));
        if gap.lower >= gap.upper {
            return err(if columns.inclusive_end {
                format!("gap {shown} is empty (its last step must not be before its first)")
            } else {
                format!("gap {shown} is empty (its lower end must be less than its upper end)")
            });
        }
        if gap.lower < b.lower || gap.upper > b.upper {
            let end = columns.end(b.upper);
            return err(if columns.inclusive_end {
                format!(
                    "gap {shown} lies outside the buffer's lifetime [{}, {end}]",
                    b.lower
                )
            } else {
                format!(
                    "gap {shown} lies outside the buffer's lifetime [{}, {end})",
                    b.lower
                )
            });
        }
        if let Some(before) = previous.filter(|p| gap.lower < p.upper) {
            return err(format!(
                "gap {shown} starts before the gap {} before it ends (gaps must be in increasing order and must not overlap)",
                show_gap(before, columns)
            ));
        }
        if let Some((low, high)) = gap.window {
            if low >= high || high > b.size {
                return err(format!(
                    "gap {shown}: the window {low}:{high} must be a non-empty part of the buffer's {} bytes (low < high <= size)",
                    b.size
                ));
            }
        }
        previous = Some(gap);
    }
    Ok(())
}

/// A gap as the file writes it: `lower-upper[@low:high]`, its end inclusive with `columns`'.
fn show_gap(gap: &Gap, columns: &TimeColumns) -> String {
    let end = columns.end(gap.upper);
    match gap.window {
        Some((low, high)) => format!("{}-{end}@{low}:{high}", gap.lower),
        None => format!("{}-{end}", gap.lower),
    }
}

/// A hint is an offset the buffer could take: aligned, and inside the capacity.
fn check_hint(b: &Buffer, i: usize, capacity: Option<u64>) -> Result<(), RuleBreak> {
    let Some(hint) = b.hint else {
        return Ok(());
    };
    if hint % b.alignment != 0 {
        return Err(RuleBreak::at(
            i,
            "hint",
            format!(
                "hint {hint} is not a multiple of the alignment {}",
                b.alignment
            ),
        ));
    }
    let fits = hint
        .checked_add(b.size)
        .is_some_and(|top| capacity.is_none_or(|c| top <= c));
    if !fits {
        return Err(RuleBreak::at(
            i,
            "hint",
            format!(
                "hint {hint} + size {} exceeds the capacity {}",
                b.size,
                capacity.map_or("of 64 bits".to_string(), |c| c.to_string())
            ),
        ));
    }
    Ok(())
}

/// Fixed buffers live at the same time must not share addresses.
fn check_fixed_buffers(problem: &Problem) -> Result<(), RuleBreak> {
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
            return Err(RuleBreak::at(
                index,
                "offset",
                format!(
                    "fixed buffer {} shares addresses with fixed buffer {} at time {time}",
                    quoted(&second),
                    quoted(&first)
                ),
            ));
        }
    }
    Ok(())
}

/// The highest fixed end plus every free buffer's size and alignment slack must fit 64 bits.
fn check_address_span(problem: &Problem) -> Result<(), RuleBreak> {
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
            .ok_or_else(|| RuleBreak {
                buffer: None,
                field: "offset",
                message: "the fixed offsets plus the sizes of all other buffers overflow 64 bits"
                    .into(),
                first_use: None,
            })?;
    }
    Ok(())
}
