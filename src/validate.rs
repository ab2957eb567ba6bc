//! The independent validator: checks any solution against the problem, sharing nothing with the
//! allocators but the problem model, so that an allocator bug cannot hide in it.

use crate::problem::{Assignment, Problem, Solution};
use std::collections::BTreeMap;
use std::fmt;

/// One way in which a solution breaks the problem's rules.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// The solution has `found` offsets for `expected` buffers.
    WrongLength {
        /// Buffers in the problem.
        expected: usize,
        /// Offsets in the solution.
        found: usize,
    },
    /// The buffer's offset is not a multiple of its alignment.
    Misaligned {
        /// Buffer id.
        id: String,
        /// Its offset.
        offset: u64,
        /// Its alignment.
        alignment: u64,
    },
    /// The buffer has a fixed offset and the solution moved it.
    MovedFixed {
        /// Buffer id.
        id: String,
        /// The fixed offset.
        fixed: u64,
        /// The offset in the solution.
        offset: u64,
    },
    /// `offset + size` exceeds the capacity (or 64 bits).
    OverCapacity {
        /// Buffer id.
        id: String,
        /// Its offset.
        offset: u64,
        /// Its size.
        size: u64,
        /// The capacity.
        capacity: u64,
    },
    /// The buffer is in a memory its `memories` list does not name, or in none that exists.
    WrongMemory {
        /// Buffer id.
        id: String,
        /// The memory it was put in (its index when no such memory exists).
        memory: String,
    },
    /// The buffer was moved out where nothing may be: a problem with memories, or a fixed buffer.
    MovedOut {
        /// Buffer id.
        id: String,
    },
    /// Two buffers live at the same time share addresses (with gaps: pieces of them).
    Overlap {
        /// First buffer id.
        first: String,
        /// Second buffer id.
        second: String,
        /// A time step at which both are live.
        time: u64,
    },
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::WrongLength { expected, found } => {
                write!(f, "the solution has {found} offsets for {expected} buffers")
            }
            Violation::Misaligned {
                id,
                offset,
                alignment,
            } => write!(
                f,
                "buffer '{id}' at offset {offset} breaks its alignment {alignment}"
            ),
            Violation::MovedFixed { id, fixed, offset } => write!(
                f,
                "buffer '{id}' has fixed offset {fixed} but was placed at {offset}"
            ),
            Violation::OverCapacity {
                id,
                offset,
                size,
                capacity,
            } => write!(
                f,
                "buffer '{id}' at offset {offset} with size {size} ends above the capacity {capacity}"
            ),
            Violation::WrongMemory { id, memory } => {
                write!(f, "buffer '{id}' is in memory '{memory}', which it may not use")
            }
            Violation::MovedOut { id } => write!(f, "buffer '{id}' was moved out but may not be"),
            Violation::Overlap {
                first,
                second,
                time,
            } => write!(
                f,
                "buffers '{first}' and '{second}' are both live at time {time} and share addresses"
            ),
        }
    }
}

/// The result of validating a solution: empty when valid.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// The first violations found (at most [`MAX_VIOLATIONS`]).
    pub violations: Vec<Violation>,
}

/// How many violations a report keeps.
pub const MAX_VIOLATIONS: usize = 20;

impl Report {
    /// Whether the solution is valid.
    pub fn is_valid(&self) -> bool {
        self.violations.is_empty()
    }

    fn push(&mut self, v: Violation) -> bool {
        self.violations.push(v);
        self.violations.len() < MAX_VIOLATIONS
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_valid() {
            return write!(f, "valid");
        }
        for (i, v) in self.violations.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{v}")?;
        }
        Ok(())
    }
}

/// Checks `solution` against `problem` (with `capacity` overriding the problem's, if given):
/// every buffer has an offset, alignments, fixed offsets, the capacity, and that no two buffers
/// live at the same time share an address. Runs in `O(n log n)`.
pub fn validate(problem: &Problem, solution: &Solution, capacity: Option<u64>) -> Report {
    let mut report = Report::default();
    let n = problem.buffers.len();
    if solution.offsets.len() != n {
        report.push(Violation::WrongLength {
            expected: n,
            found: solution.offsets.len(),
        });
        return report;
    }
    let capacity = capacity.or(problem.capacity).unwrap_or(u64::MAX);
    for (b, &offset) in problem.buffers.iter().zip(&solution.offsets) {
        let alignment = b.alignment.max(1);
        if offset % alignment != 0
            && !report.push(Violation::Misaligned {
                id: b.id.clone(),
                offset,
                alignment,
            })
        {
            return report;
        }
        if let Some(fixed) = b.offset {
            if fixed != offset
                && !report.push(Violation::MovedFixed {
                    id: b.id.clone(),
                    fixed,
                    offset,
                })
            {
                return report;
            }
        }
        let fits = offset
            .checked_add(b.size)
            .is_some_and(|top| top <= capacity);
        if !fits
            && !report.push(Violation::OverCapacity {
                id: b.id.clone(),
                offset,
                size: b.size,
                capacity,
            })
        {
            return report;
        }
    }
    check_overlaps(problem, solution, &mut report);
    report
}

/// Checks a solution that puts each buffer in a memory (or, for the spill goal, keeps it in
/// `capacity` or moves it out): every buffer is in a memory its `memories` list allows (with
/// memories) or kept or moved out (without; fixed buffers are kept unless their fixed place
/// lies beyond the capacity), and the buffers of each
/// memory pass [`validate`] under its capacity (with gaps, of pieces) at their offsets.
pub fn validate_assignment(
    problem: &Problem,
    solution: &Solution,
    assignment: &Assignment,
    capacity: Option<u64>,
) -> Report {
    let mut report = Report::default();
    let n = problem.buffers.len();
    for found in [solution.offsets.len(), assignment.memory.len()] {
        if found != n {
            report.push(Violation::WrongLength { expected: n, found });
            return report;
        }
    }
    let count = problem.memories.len().max(1);
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); count];
    let single = capacity.or(problem.capacity).unwrap_or(u64::MAX);
    for (i, b) in problem.buffers.iter().enumerate() {
        // A fixed buffer stays, unless its fixed place lies beyond the capacity.
        let may_leave = b
            .offset
            .is_none_or(|o| o.checked_add(b.size).is_none_or(|end| end > single));
        match assignment.memory[i] {
            None if problem.memories.is_empty() && may_leave => {}
            None => {
                if !report.push(Violation::MovedOut { id: b.id.clone() }) {
                    return report;
                }
            }
            Some(m) => {
                let allowed = match problem.memories.get(m) {
                    Some(memory) => b.memories.is_empty() || b.memories.contains(&memory.id),
                    None => problem.memories.is_empty() && m == 0,
                };
                if !allowed {
                    let memory = problem
                        .memories
                        .get(m)
                        .map_or(m.to_string(), |x| x.id.clone());
                    if !report.push(Violation::WrongMemory {
                        id: b.id.clone(),
                        memory,
                    }) {
                        return report;
                    }
                    continue;
                }
                members[m].push(i);
            }
        }
    }
    for (m, members) in members.iter().enumerate() {
        let capacity = match problem.memories.get(m) {
            Some(memory) => memory.capacity,
            None => capacity.or(problem.capacity).unwrap_or(u64::MAX),
        };
        let part = Problem::new(
            members
                .iter()
                .map(|&i| problem.buffers[i].clone())
                .collect(),
            Some(capacity),
        );
        let offsets = Solution {
            offsets: members.iter().map(|&i| solution.offsets[i]).collect(),
        };
        for v in validate(&part, &offsets, Some(capacity)).violations {
            if !report.push(v) {
                return report;
            }
        }
    }
    report
}

/// Sweeps time; the pieces live at the current step (a buffer without gaps is one piece, see
/// [`crate::Buffer::pieces`]) are kept ordered by address, so a new piece can only collide with
/// its neighbours in that order while the live set is disjoint.
fn check_overlaps(problem: &Problem, solution: &Solution, report: &mut Report) {
    // Events: (time, kind, index, start, end) with kind 0 = end, 1 = start, so ends come first
    // at a tie; `[start, end)` are the piece's addresses. A buffer's pieces do not overlap in
    // time, so (time, kind, index) is unique.
    let mut events: Vec<(u64, u8, usize, u64, u64)> = Vec::with_capacity(2 * problem.buffers.len());
    for (i, b) in problem.buffers.iter().enumerate() {
        if b.size == 0 {
            continue; // Occupies no address (only problems built in code can have one).
        }
        let offset = solution.offsets[i];
        for piece in b.pieces() {
            let start = offset.saturating_add(piece.low);
            let end = offset.saturating_add(piece.high);
            events.push((piece.lower, 1, i, start, end));
            events.push((piece.upper, 0, i, start, end));
        }
    }
    events.sort_unstable();
    let mut live: BTreeMap<(u64, usize), u64> = BTreeMap::new(); // (start, index) -> end
    for (time, kind, i, start, end) in events {
        if kind == 0 {
            live.remove(&(start, i));
            continue;
        }
        let below = live.range(..(start, i)).next_back();
        let above = live.range((start, i)..).next();
        for (&(other_start, j), &other_end) in below.into_iter().chain(above) {
            if other_start < end && start < other_end {
                let ok = report.push(Violation::Overlap {
                    first: problem.buffers[j].id.clone(),
                    second: problem.buffers[i].id.clone(),
                    time,
                });
                if !ok {
                    return;
                }
            }
        }
        live.insert((start, i), end);
    }
}
