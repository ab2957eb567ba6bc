//! Gaps in a buffer's lifetime (MiniMalloc's `gaps`) and the pieces they cut the buffer into:
//! the one definition of what a buffer occupies, when, that every consumer reads.

use serde::{Deserialize, Serialize};

/// A stretch `[lower, upper)` of a buffer's lifetime during which it occupies nothing, or, with
/// a `window` `(low, high)`, only the addresses `[offset + low, offset + high)` of its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    /// First time step of the gap.
    pub lower: u64,
    /// First time step after the gap.
    pub upper: u64,
    /// The part of the buffer's range still occupied during the gap (`low < high <= size`),
    /// relative to its offset; `None`: nothing is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<(u64, u64)>,
}

impl Gap {
    /// A gap during which the buffer occupies nothing.
    pub fn new(lower: u64, upper: u64) -> Gap {
        Gap {
            lower,
            upper,
            window: None,
        }
    }

    /// A gap during which the buffer occupies only `[offset + low, offset + high)`.
    pub fn with_window(lower: u64, upper: u64, low: u64, high: u64) -> Gap {
        Gap {
            lower,
            upper,
            window: Some((low, high)),
        }
    }
}

/// A stretch `[lower, upper)` of time during which a buffer occupies the addresses
/// `[offset + low, offset + high)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    /// First time step.
    pub lower: u64,
    /// First time step after it.
    pub upper: u64,
    /// Lowest occupied address, relative to the buffer's offset.
    pub low: u64,
    /// One past the highest occupied address, relative to the buffer's offset.
    pub high: u64,
}

impl Piece {
    /// Whether the two pieces share a time step.
    #[inline]
    pub fn overlaps_in_time(&self, other: &Piece) -> bool {
        self.lower < other.upper && other.lower < self.upper
    }

    /// The bytes occupied.
    #[inline]
    pub fn width(&self) -> u64 {
        self.high - self.low
    }

    /// For a piece `own` of a buffer of `size` bytes and this piece of a buffer placed at
    /// `offset` (live at a common time): the address range the whole `size`-byte range must
    /// avoid for `own` to miss this piece. The buffer at `x` collides iff
    /// `x + size > range.0 && x < range.1`. For two gap-free buffers it is the placed buffer's
    /// own range `(offset, offset + its size)`. Saturates at `u64::MAX`.
    #[inline]
    pub fn shadow(&self, offset: u64, own: &Piece, size: u64) -> (u64, u64) {
        let low = offset
            .saturating_add(self.low)
            .saturating_add(size - own.high);
        let high = offset.saturating_add(self.high).saturating_sub(own.low);
        (low, high)
    }
}

/// The pieces of a buffer, in time order (see [`crate::Buffer::pieces`]).
pub struct Pieces<'a> {
    upper: u64,
    size: u64,
    gaps: &'a [Gap],
    next_gap: usize,
    cursor: u64,
}

impl<'a> Pieces<'a> {
    /// The pieces of a buffer live over `[lower, upper)`, `size` bytes long, with `gaps`.
    pub(super) fn new(lower: u64, upper: u64, size: u64, gaps: &'a [Gap]) -> Pieces<'a> {
        Pieces {
            upper,
            size,
            gaps,
            next_gap: 0,
            cursor: lower,
        }
    }

    fn full(&self, lower: u64, upper: u64) -> Piece {
        Piece {
            lower,
            upper,
            low: 0,
            high: self.size,
        }
    }
}

impl Iterator for Pieces<'_> {
    type Item = Piece;

    fn next(&mut self) -> Option<Piece> {
        let upper = self.upper;
        loop {
            if self.cursor >= upper {
                return None;
            }
            let Some(gap) = self.gaps.get(self.next_gap) else {
                let piece = self.full(self.cursor, upper);
                self.cursor = upper;
                return Some(piece);
            };
            // Clamped, so that a buffer built in code with bad gaps cannot make this loop.
            let gap_lower = gap.lower.clamp(self.cursor, upper);
            let gap_upper = gap.upper.clamp(gap_lower, upper);
            if self.cursor < gap_lower {
                let piece = self.full(self.cursor, gap_lower);
                self.cursor = gap_lower;
                return Some(piece);
            }
            self.next_gap += 1;
            let start = self.cursor;
            self.cursor = gap_upper;
            if let Some((low, high)) = gap.window {
                if start < gap_upper && low < high {
                    return Some(Piece {
                        lower: start,
                        upper: gap_upper,
                        low,
                        high,
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piece(lower: u64, upper: u64, low: u64, high: u64) -> Piece {
        Piece {
            lower,
            upper,
            low,
            high,
        }
    }

    #[test]
    fn shadow_of_gap_free_pieces_is_the_placed_range() {
        let placed = piece(0, 5, 0, 6);
        let own = piece(0, 5, 0, 3);
        assert_eq!(placed.shadow(10, &own, 3), (10, 16));
        // A window: own occupies [x + 1, x + 2) of its 3 bytes; placed occupies [12, 14).
        let placed = piece(0, 5, 2, 4);
        let own = piece(0, 5, 1, 2);
        let (low, high) = placed.shadow(10, &own, 3);
        for x in 0..30u64 {
            let collides = x + 1 < 14 && 12 < x + 2;
            assert_eq!(x + 3 > low && x < high, collides, "x = {x}");
        }
    }
}
