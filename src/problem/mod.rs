//! The problem model shared by every allocator: buffers, problems and solutions.

mod memories;
mod pieces;
pub mod rules;

pub use memories::Memory;
pub use pieces::{Gap, Piece, Pieces};

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
    #[serde(
        default = "default_alignment",
        deserialize_with = "alignment_or_default"
    )]
    pub alignment: u64,
    /// A fixed offset decided by the caller, if any; allocators never move it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// A preferred offset (MiniMalloc's `hint`): a warm start the search tries first. Not a
    /// constraint; a fixed `offset` wins over it. In files, `-1` means no hint, as an empty
    /// CSV field, JSON `null` or an absent field do (MiniMalloc writes `-1`).
    #[serde(
        default,
        deserialize_with = "hint_or_none",
        skip_serializing_if = "Option::is_none"
    )]
    pub hint: Option<u64>,
    /// Stretches of the lifetime during which the buffer occupies nothing, or (with a window)
    /// only part of its range (MiniMalloc's `gaps`), in increasing order, not overlapping, inside
    /// `[lower, upper)`. See [`Buffer::pieces`].
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub gaps: Vec<Gap>,
    /// The ids of the [`Problem::memories`] the buffer may go to; empty: any of them.
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub memories: Vec<String>,
    /// What keeping the buffer on chip is worth to the spill goal; `None`: its size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benefit: Option<u64>,
}

fn default_alignment() -> u64 {
    1
}

/// Reads an optional field of a file, where `null` means what no field means: its default.
/// Every optional field reads `null` so (`offset`, `hint`, `benefit` and `capacity` are
/// `Option`s and read it as `None`).
pub(crate) fn null_as_default<'de, D, T>(reader: D) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(reader)?.unwrap_or_default())
}

/// Reads an `alignment`: `null` is the default, 1, as no field.
fn alignment_or_default<'de, D: serde::Deserializer<'de>>(reader: D) -> Result<u64, D::Error> {
    Ok(Option::<u64>::deserialize(reader)?.unwrap_or_else(default_alignment))
}

/// Reads a `hint`: an offset, or `-1` or `null` for none (MiniMalloc's `-1`, as in CSV).
fn hint_or_none<'de, D: serde::Deserializer<'de>>(reader: D) -> Result<Option<u64>, D::Error> {
    struct Hint;
    impl<'de> serde::de::Visitor<'de> for Hint {
        type Value = Option<u64>;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an offset, or -1 or null for no hint")
        }

        fn visit_u64<E: serde::de::Error>(self, hint: u64) -> Result<Self::Value, E> {
            Ok(Some(hint))
        }

        fn visit_i64<E: serde::de::Error>(self, hint: i64) -> Result<Self::Value, E> {
            match hint {
                -1 => Ok(None),
                _ => u64::try_from(hint)
                    .map(Some)
                    .map_err(|_| E::invalid_value(serde::de::Unexpected::Signed(hint), &self)),
            }
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: serde::Deserializer<'de>>(
            self,
            reader: D,
        ) -> Result<Self::Value, D::Error> {
            reader.deserialize_any(self)
        }
    }
    reader.deserialize_option(Hint)
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
            hint: None,
            gaps: Vec::new(),
            memories: Vec::new(),
            benefit: None,
        }
    }

    /// What the buffer occupies over time, relative to its offset: one [`Piece`] per stretch
    /// of its lifetime with a constant address range, in time order. Without gaps, the single
    /// piece `[lower, upper) x [0, size)`; a gap without a window occupies nothing (no piece),
    /// a gap with window `(low, high)` the addresses `[offset + low, offset + high)`. Every
    /// consumer (validator, analysis, search, placement) reads a buffer's occupation from here.
    #[inline]
    pub fn pieces(&self) -> Pieces<'_> {
        Pieces::new(self.lower, self.upper, self.size, &self.gaps)
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

    /// What keeping the buffer on chip is worth: its `benefit`, else its size.
    #[inline]
    pub fn worth(&self) -> u64 {
        self.benefit.unwrap_or(self.size)
    }
}

/// A memory-planning problem: the buffers and, for the decision version, a capacity; or, for
/// several memories, the memories with their own capacities.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Problem {
    /// The buffers, in input order; solutions are indexed the same way.
    pub buffers: Vec<Buffer>,
    /// The scratchpad size in bytes, if the problem has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<u64>,
    /// Several memories, each with its capacity and cost per byte (empty: the one capacity).
    /// Solved with [`Goal::Memories`](crate::Goal::Memories).
    #[serde(
        default,
        deserialize_with = "null_as_default",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub memories: Vec<Memory>,
}

impl Problem {
    /// A problem from buffers and an optional capacity.
    pub fn new(buffers: Vec<Buffer>, capacity: Option<u64>) -> Self {
        Problem {
            buffers,
            capacity,
            memories: Vec::new(),
        }
    }

    /// The same buffers with another capacity.
    pub fn with_capacity(&self, capacity: Option<u64>) -> Problem {
        Problem {
            buffers: self.buffers.clone(),
            capacity,
            memories: self.memories.clone(),
        }
    }

    /// The same problem with these memories.
    pub fn with_memories(mut self, memories: Vec<Memory>) -> Problem {
        self.memories = memories;
        self
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

    /// Whether some buffer has gaps (then the consumers take the pieces' path).
    pub fn has_gaps(&self) -> bool {
        self.buffers.iter().any(|b| !b.gaps.is_empty())
    }

    /// Whether some buffer has a hint.
    pub fn has_hints(&self) -> bool {
        self.buffers.iter().any(|b| b.hint.is_some())
    }

    /// The indices (in [`Problem::memories`]) of the memories buffer `i` may go to: those its
    /// `memories` list names, or all when the list is empty. Unknown names are left out
    /// ([`Problem::check`] rejects them).
    pub fn allowed_memories(&self, i: usize) -> Vec<usize> {
        let names = &self.buffers[i].memories;
        (0..self.memories.len())
            .filter(|&m| names.is_empty() || names.contains(&self.memories[m].id))
            .collect()
    }

    /// The largest `upper` of any buffer (0 for an empty problem).
    pub fn horizon(&self) -> u64 {
        self.buffers.iter().map(|b| b.upper).max().unwrap_or(0)
    }
}

/// Where each buffer is: `memory[i]` is the index in [`Problem::memories`] of buffer `i`'s
/// memory (`0`, the one capacity, for the spill goal), or `None` when the spill goal moved the
/// buffer out. The solution's offsets are inside that memory (0 for a buffer moved out).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// The memory of each buffer, in the problem's buffer order.
    pub memory: Vec<Option<usize>>,
    /// Whether no assignment is better (every better one was shown not to fit).
    pub proven_best: bool,
}

impl Assignment {
    /// The total cost: size x cost per byte of each buffer's memory (0 without memories).
    pub fn cost(&self, problem: &Problem) -> u128 {
        problem
            .buffers
            .iter()
            .zip(&self.memory)
            .filter_map(|(b, m)| {
                let memory = problem.memories.get((*m)?)?;
                Some(b.size as u128 * memory.cost as u128)
            })
            .sum()
    }

    /// The total benefit ([`Buffer::worth`]) of the buffers kept in a memory.
    pub fn kept(&self, problem: &Problem) -> u128 {
        self.kept_sum(problem, Buffer::worth)
    }

    /// The total size of the buffers kept in a memory.
    pub fn kept_bytes(&self, problem: &Problem) -> u128 {
        self.kept_sum(problem, |b| b.size)
    }

    fn kept_sum(&self, problem: &Problem, measure: impl Fn(&Buffer) -> u64) -> u128 {
        problem
            .buffers
            .iter()
            .zip(&self.memory)
            .filter(|(_, m)| m.is_some())
            .map(|(b, _)| measure(b) as u128)
            .sum()
    }

    /// The indices of the buffers moved out, in order.
    pub fn moved_out(&self) -> Vec<usize> {
        (0..self.memory.len())
            .filter(|&i| self.memory[i].is_none())
            .collect()
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

/// Calls `visit(p, q)` for every piece `p` of `first` and `q` of `second` live at a common time,
/// in time order (a merge of the two piece lists).
pub fn for_each_overlap(first: &Buffer, second: &Buffer, visit: impl FnMut(Piece, Piece)) {
    if !first.overlaps_in_time(second) {
        return;
    }
    for_each_piece_overlap(first.pieces(), second.pieces(), visit);
}

/// [`for_each_overlap`] over two lists of pieces, each in time order.
pub fn for_each_piece_overlap(
    first: impl IntoIterator<Item = Piece>,
    second: impl IntoIterator<Item = Piece>,
    mut visit: impl FnMut(Piece, Piece),
) {
    let mut a = first.into_iter().peekable();
    let mut b = second.into_iter().peekable();
    while let (Some(p), Some(q)) = (a.peek().copied(), b.peek().copied()) {
        if p.overlaps_in_time(&q) {
            visit(p, q);
        }
        if p.upper <= q.upper {
            a.next();
        } else {
            b.next();
        }
    }
}

/// MiniMalloc's effective size, from the pieces of two buffers (each in time order, as
/// [`Buffer::pieces`] gives them): with `above` placed higher than `below`, the least distance
/// `above.offset - below.offset` that keeps every piece of `above` clear above the pieces of
/// `below` live at the same time: the largest `p.high - q.low` over such pairs. `None` when no
/// pieces are live at a common time (the two never compete for addresses). Can be below the
/// size of `below`, and even 0 or negative with windows. For two gap-free buffers live at a
/// common time it is `below.size`.
pub fn separation(
    below: impl IntoIterator<Item = Piece>,
    above: impl IntoIterator<Item = Piece>,
) -> Option<i128> {
    let mut largest: Option<i128> = None;
    for_each_piece_overlap(below, above, |p, q| {
        let distance = p.high as i128 - q.low as i128;
        largest = Some(largest.map_or(distance, |l| l.max(distance)));
    });
    largest
}

/// Rounds `value` up to a multiple of `alignment` (a power of two); `None` on overflow.
#[inline]
pub fn align_up(value: u64, alignment: u64) -> Option<u64> {
    debug_assert!(alignment.is_power_of_two());
    let mask = alignment - 1;
    value.checked_add(mask).map(|v| v & !mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`super::separation`] of two buffers.
    fn separation(below: &Buffer, above: &Buffer) -> Option<i128> {
        super::separation(below.pieces(), above.pieces())
    }

    fn gapped(lower: u64, upper: u64, size: u64, gaps: Vec<Gap>) -> Buffer {
        Buffer {
            gaps,
            ..Buffer::new("b", lower, upper, size)
        }
    }

    fn piece(lower: u64, upper: u64, low: u64, high: u64) -> Piece {
        Piece {
            lower,
            upper,
            low,
            high,
        }
    }

    #[test]
    fn a_buffer_without_gaps_is_one_piece() {
        let b = Buffer::new("b", 3, 9, 4);
        assert_eq!(b.pieces().collect::<Vec<_>>(), vec![piece(3, 9, 0, 4)]);
    }

    #[test]
    fn gaps_cut_pieces_and_windows_keep_a_part() {
        let b = gapped(
            0,
            10,
            8,
            vec![Gap::new(0, 2), Gap::with_window(4, 6, 2, 5), Gap::new(6, 7)],
        );
        assert_eq!(
            b.pieces().collect::<Vec<_>>(),
            vec![piece(2, 4, 0, 8), piece(4, 6, 2, 5), piece(7, 10, 0, 8)]
        );
        let whole = gapped(0, 10, 8, vec![Gap::new(0, 10)]);
        assert_eq!(whole.pieces().count(), 0);
    }

    #[test]
    fn separation_follows_minimalloc_effective_size() {
        // MiniMalloc's minimalloc_test.cc cases, in our words.
        let a = gapped(0, 10, 4, vec![Gap::new(1, 4), Gap::new(6, 9)]);
        let b = gapped(5, 15, 5, vec![Gap::new(6, 9), Gap::new(11, 14)]);
        assert_eq!(separation(&a, &b), Some(4));
        assert_eq!(separation(&b, &a), Some(5));
        let a = gapped(0, 10, 4, vec![Gap::new(1, 9)]);
        let b = gapped(5, 15, 5, vec![Gap::new(6, 14)]);
        assert_eq!(separation(&a, &b), None);
        let a = Buffer::new("a", 0, 10, 4);
        let b = gapped(5, 15, 5, vec![Gap::new(5, 10)]);
        assert_eq!(separation(&a, &b), None);
        assert_eq!(separation(&b, &a), None);
        // Tetris: the low window of one under the high window of the other.
        let a = gapped(0, 10, 2, vec![Gap::with_window(0, 5, 0, 1)]);
        let b = gapped(0, 10, 2, vec![Gap::with_window(5, 10, 1, 2)]);
        assert_eq!(separation(&a, &b), Some(1));
        // Stairs.
        let a = gapped(
            0,
            15,
            3,
            vec![Gap::with_window(0, 5, 0, 1), Gap::with_window(5, 10, 0, 2)],
        );
        let b = gapped(
            0,
            15,
            3,
            vec![
                Gap::with_window(5, 10, 1, 3),
                Gap::with_window(10, 15, 2, 3),
            ],
        );
        assert_eq!(separation(&a, &b), Some(1));
        // Gap-free: the size of the one below.
        assert_eq!(
            separation(&Buffer::new("a", 0, 2, 7), &Buffer::new("b", 1, 3, 2)),
            Some(7)
        );
        assert_eq!(
            separation(&Buffer::new("a", 0, 2, 7), &Buffer::new("b", 2, 3, 2)),
            None
        );
    }
}
