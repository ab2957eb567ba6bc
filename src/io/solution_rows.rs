//! A solution file's rows, whichever format they come in: each buffer's offset and, in the
//! solution of `solve --spill` or `solve --memories`, its memory. The rules both formats share
//! live here: every buffer once, a buffer kept in a memory has an offset, a buffer moved out
//! (empty memory) has none.

use crate::error::{escape_controls, quoted, InputError};
use crate::problem::{Assignment, Problem, Solution};
use std::collections::HashMap;

/// The memory a row gives its buffer.
pub(crate) enum RowMemory<'a> {
    /// The file gives no memories: a plain solution.
    Absent,
    /// Moved out (an empty `memory` field, or JSON `null`).
    MovedOut,
    /// The id of one of the problem's memories (`chip` for the spill goal's one capacity).
    Named(&'a str),
}

/// The rows read so far, by buffer.
pub(crate) struct SolutionRows<'p> {
    problem: &'p Problem,
    index: HashMap<&'p str, usize>,
    offsets: Vec<Option<u64>>,
    memory: Vec<Option<usize>>,
    seen: Vec<bool>,
    /// Whether the rows give memories (known from the first row).
    assigned: Option<bool>,
}

/// What the spill goal's one capacity is called in a solution's `memory` column.
pub(crate) const CHIP: &str = "chip";

impl<'p> SolutionRows<'p> {
    /// No rows yet, for `problem`.
    pub(crate) fn new(problem: &'p Problem) -> Self {
        let n = problem.buffers.len();
        SolutionRows {
            problem,
            index: problem.index_by_id(),
            offsets: vec![None; n],
            memory: vec![None; n],
            seen: vec![false; n],
            assigned: None,
        }
    }

    /// Records the row of buffer `id`; `error(field, message)` places a fault in the file.
    pub(crate) fn add(
        &mut self,
        id: &str,
        offset: Option<u64>,
        memory: RowMemory<'_>,
        error: &dyn Fn(&str, String) -> InputError,
    ) -> Result<(), InputError> {
        let &i = self.index.get(id).ok_or_else(|| {
            error(
                "id",
                format!("id {} is not a buffer of the problem", quoted(id)),
            )
        })?;
        if std::mem::replace(&mut self.seen[i], true) {
            return Err(error("id", format!("id {} appears twice", quoted(id))));
        }
        let assigned = !matches!(memory, RowMemory::Absent);
        if *self.assigned.get_or_insert(assigned) != assigned {
            return Err(error(
                "memory",
                "some rows give a memory and others none: a solution gives every buffer's memory \
                 (solve --spill, --memories) or none"
                    .into(),
            ));
        }
        self.memory[i] = match memory {
            RowMemory::Absent | RowMemory::MovedOut => None,
            RowMemory::Named(name) => Some(self.memory_index(name).ok_or_else(|| {
                let known = if self.problem.memories.is_empty() {
                    format!("without memories, a buffer kept is in '{CHIP}'")
                } else {
                    let ids: Vec<&str> = self
                        .problem
                        .memories
                        .iter()
                        .map(|m| m.id.as_str())
                        .collect();
                    format!("the memories are {}", escape_controls(&ids.join(", ")))
                };
                error(
                    "memory",
                    format!("{} is not a memory of the problem ({known})", quoted(name)),
                )
            })?),
        };
        self.offsets[i] = match (&memory, offset) {
            (RowMemory::MovedOut, Some(offset)) => {
                return Err(error(
                    "offset",
                    format!(
                        "buffer {} is moved out (no memory) but has offset {offset}: a buffer \
                         moved out has an empty offset",
                        quoted(id)
                    ),
                ))
            }
            (RowMemory::MovedOut, None) => Some(0),
            (_, None) => return Err(error("offset", "missing offset".into())),
            (_, offset) => offset,
        };
        Ok(())
    }

    /// The index of the memory named `name`: one of the problem's, or `chip` without memories.
    fn memory_index(&self, name: &str) -> Option<usize> {
        if self.problem.memories.is_empty() {
            return (name == CHIP).then_some(0);
        }
        self.problem.memories.iter().position(|m| m.id == name)
    }

    /// The solution, and the assignment when the rows gave memories; a buffer without a row is
    /// an error naming it.
    pub(crate) fn finish(self, file: &str) -> Result<(Solution, Option<Assignment>), InputError> {
        if let Some(i) = self.seen.iter().position(|&seen| !seen) {
            return Err(InputError::at_line(
                file,
                None,
                Some("offset"),
                format!(
                    "no offset for buffer {}",
                    quoted(&self.problem.buffers[i].id)
                ),
            ));
        }
        let offsets = self.offsets.into_iter().map(Option::unwrap_or_default);
        let solution = Solution {
            offsets: offsets.collect(),
        };
        let assignment = self.assigned.unwrap_or(false).then_some(Assignment {
            memory: self.memory,
            proven_best: false,
        });
        Ok((solution, assignment))
    }
}
