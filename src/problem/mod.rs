//! The problem model shared by every allocator: buffers, problems and solutions.

pub mod rules;

use serde::{Deserialize, Serialize};

/// One buffer to place: live over the half-open time interval `[lower, upper)`, `size` bytes long.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Buffer {
    /// The caller's name for the buffer (kept verbatim in outputs).
    pub id: String,
    /// First time step at which the buffer is live.
    pub lower: u64,
    /// First time step at which the buffer is no longer live (`lower < upper`).
    pub upper: u64,
    /// Size in bytes (`> 0`).
    pub size: u64,
    /// The offset must be a multiple of this power of two (1 = no constraint).
    #[serde(default = "default_alignment")]
    pub alignment: u64,
    /// A fixed offset decided by the caller, if any; allocators never move it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
}

fn default_alignment() -> u64 {
    1
}

impl Buffer {
    /// A buffer with alignment 1 and no fixed offset.
    pub fn new(id: impl Into<String>, lower: u64, upper: u64, size: u64) -> Self {
        Buffer {
            id: id.into(),
            lower,
            upper,
            size,
            alignment: 1,
            offset: None,
        }
    }

    /// Whether the two buffers are live at a common time step.
    #[inline]
    pub fn overlaps_in_time(&self, other: &Buffer) -> bool {
        self.lower < other.upper && other.lower < self.upper
    }

    /// `upper - lower`: how many time steps the buffer is live.
    #[inline]
    pub fn lifetime(&self) -> u64 {
        self.upper - self.lower
    }

    /// `size * lifetime`, saturating (used only for ordering).
    #[inline]
    pub fn area(&self) -> u128 {
        self.size as u128 * self.lifetime() as u128
    }
}

/// A memory-planning problem: the buffers and, for the decision version, a capacity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Problem {
    /// The buffers, in input order; solutions are indexed the same way.
    pub buffers: Vec<Buffer>,
    /// The scratchpad size in bytes, if the problem has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u64>,
}

impl Problem {
    /// A problem from buffers and an optional capacity.
    pub fn new(buffers: Vec<Buffer>, capacity: Option<u64>) -> Self {
        Problem { buffers, capacity }
    }

    /// The same buffers with another capacity.
    pub fn with_capacity(&self, capacity: Option<u64>) -> Problem {
        Problem {
            buffers: self.buffers.clone(),
            capacity,
        }
    }

    /// Number of buffers.
    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    /// Whether there are no buffers.
    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }

    /// The index of each buffer by its id.
    pub fn index_by_id(&self) -> std::collections::HashMap<&str, usize> {
        self.buffers
            .iter()
            .enumerate()
            .map(|(i, b)| (b.id.as_str(), i))
            .collect()
    }

    /// The largest `upper` of any buffer (0 for an empty problem).
    pub fn horizon(&self) -> u64 {
        self.buffers.iter().map(|b| b.upper).max().unwrap_or(0)
    }
}

/// Offsets for every buffer of a problem, in the problem's buffer order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Solution {
    /// `offsets[i]` is the address of `problem.buffers[i]`.
    pub offsets: Vec<u64>,
}

impl Solution {
    /// The peak memory use: the highest `offset + size` (0 for no buffers).
    /// Saturates rather than overflowing; a validated solution never saturates.
    pub fn peak(&self, problem: &Problem) -> u64 {
        problem
            .buffers
            .iter()
            .zip(&self.offsets)
            .map(|(b, &o)| o.saturating_add(b.size))
            .max()
            .unwrap_or(0)
    }
}

/// Rounds `value` up to a multiple of `alignment` (a power of two); `None` on overflow.
#[inline]
pub fn align_up(value: u64, alignment: u64) -> Option<u64> {
    debug_assert!(alignment.is_power_of_two());
    let mask = alignment - 1;
    value.checked_add(mask).map(|v| v & !mask)
}
