//! A part of a problem with its held buffers compressed into few fixed obstacles: time cut at
//! the freed buffers' ends only, so that the same freed buffers live all through each piece,
//! and, in each piece, the address ranges of the held buffers live in it joined. A freed
//! buffer may then go wherever it met no held buffer, as in the whole problem, however many
//! held buffers its lifetime crosses.

use crate::problem::{Buffer, Problem};
use crate::search::instance::{join_ranges, join_when_full, JOIN_AT};

/// The part of `problem` with `freed` free (first, in order, their lifetimes renumbered by
/// piece of time) and `held` at `offsets` as fixed obstacles, one per joined address range
/// and stretch of pieces over which that range stays the same. A layout of the part gives, for
/// the freed buffers, offsets that meet no held buffer in the whole problem, and the other way
/// round.
pub(crate) fn compressed(
    problem: &Problem,
    offsets: &[u64],
    (freed, held): (&[usize], &[usize]),
) -> Problem {
    let b = &problem.buffers;
    let mut cuts: Vec<u64> = freed
        .iter()
        .flat_map(|&i| [b[i].lower, b[i].upper])
        .collect();
    cuts.sort_unstable();
    cuts.dedup();
    let piece = |t: u64| cuts.partition_point(|&c| c < t) as u64;
    let mut buffers: Vec<Buffer> = freed
        .iter()
        .map(|&i| Buffer {
            id: String::new(),
            lower: piece(b[i].lower),
            upper: piece(b[i].upper),
            hint: None,
            memories: Vec::new(),
            benefit: None,
            gaps: Vec::new(),
            ..b[i].clone()
        })
        .collect();
    // The held ranges by piece: piece k is [cuts[k], cuts[k + 1]).
    let pieces = cuts.len().saturating_sub(1);
    // Each list is joined as it grows: long-lived held buffers cross many pieces, and the
    // lists of every one took 1.4 GB on 50,000 long-lived buffers.
    let mut ranges: Vec<Vec<(u64, u64)>> = vec![Vec::new(); pieces];
    let mut limits = vec![JOIN_AT; pieces];
    for &i in held {
        let first = cuts.partition_point(|&c| c <= b[i].lower).saturating_sub(1);
        let last = cuts.partition_point(|&c| c < b[i].upper).min(pieces);
        let range = (offsets[i], offsets[i].saturating_add(b[i].size));
        for (list, limit) in ranges[first..last].iter_mut().zip(&mut limits[first..last]) {
            list.push(range);
            join_when_full(list, limit);
        }
    }
    // Joined ranges, each carried on while the next piece has it too (both lists in order).
    let mut open: Vec<(u64, u64, u64)> = Vec::new(); // (from, to, first piece)
    for (k, list) in ranges.iter_mut().enumerate() {
        let mut next = Vec::new();
        let mut was = open.iter().peekable();
        join_ranges(list);
        list.retain(|&(from, to)| from < to);
        for &range in list.iter() {
            while let Some(&&(from, to, since)) = was.peek() {
                if (from, to) >= range {
                    break;
                }
                buffers.push(obstacle((from, to), (since, k as u64)));
                was.next();
            }
            match was.peek() {
                Some(&&(from, to, since)) if (from, to) == range => {
                    next.push((from, to, since));
                    was.next();
                }
                _ => next.push((range.0, range.1, k as u64)),
            }
        }
        for &(from, to, since) in was {
            buffers.push(obstacle((from, to), (since, k as u64)));
        }
        open = next;
    }
    for (from, to, since) in open {
        buffers.push(obstacle((from, to), (since, pieces as u64)));
    }
    Problem::new(buffers, None)
}

/// A fixed obstacle over addresses `[from, to)` and pieces `[first, last)`.
fn obstacle((from, to): (u64, u64), (first, last): (u64, u64)) -> Buffer {
    let mut buffer = Buffer::new(String::new(), first, last, to - from);
    buffer.offset = Some(from);
    buffer
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::Baseline;
    use crate::minimize::test_layouts::random_400;
    use crate::problem::Solution;
    use crate::search::policy::mix;
    use crate::validate::validate;

    /// The buffers of `problem` at `offsets`, those of `freed` moved to `moved` (in order).
    fn with_moved(offsets: &[u64], freed: &[usize], moved: &[u64]) -> Solution {
        let mut offsets = offsets.to_vec();
        for (k, &i) in freed.iter().enumerate() {
            offsets[i] = moved[k];
        }
        Solution { offsets }
    }

    /// The part's layout with the freed buffers at `moved` and the obstacles where they are
    /// fixed.
    fn part_layout(part: &Problem, moved: &[u64]) -> Solution {
        let fixed = part.buffers[moved.len()..]
            .iter()
            .map(|b| b.offset.unwrap());
        Solution {
            offsets: moved.iter().copied().chain(fixed).collect(),
        }
    }

    /// Over a window of a first-fit layout, with the freed buffers moved at random (often onto
    /// a held one), the part is valid exactly when the whole problem is; and the held buffers,
    /// many, come out as fewer obstacles.
    #[test]
    fn the_part_allows_exactly_the_moves_the_whole_problem_allows() {
        let problem = random_400();
        let layout = Baseline::TfliteMicro.allocate(&problem, 0);
        let peak = layout.peak(&problem);
        let (mut valid, mut invalid) = (0, 0);
        for (from, to) in [(100, 160), (0, 40), (250, 400), (180, 181)] {
            let live = |b: &Buffer| b.lower < to && from < b.upper;
            let inside = |b: &Buffer| from <= b.lower && b.upper <= to;
            let freed: Vec<usize> = (0..problem.len())
                .filter(|&i| inside(&problem.buffers[i]))
                .collect();
            let held: Vec<usize> = (0..problem.len())
                .filter(|&i| !inside(&problem.buffers[i]))
                .filter(|&i| {
                    let b = &problem.buffers[i];
                    freed.iter().any(|&j| {
                        let f = &problem.buffers[j];
                        f.lower < b.upper && b.lower < f.upper
                    }) || live(b)
                })
                .collect();
            let part = compressed(&problem, &layout.offsets, (&freed, &held));
            assert!(part.len() - freed.len() < held.len(), "{} held", held.len());
            for draw in 0..200u64 {
                let moved: Vec<u64> = (0..freed.len() as u64)
                    .map(|k| match mix(draw ^ (k << 20)) % 4 {
                        0 => mix(draw ^ k) % peak,
                        _ => layout.offsets[freed[k as usize]],
                    })
                    .collect();
                let whole = with_moved(&layout.offsets, &freed, &moved);
                let whole_ok = validate(&problem, &whole, Some(u64::MAX)).is_valid();
                let part_ok =
                    validate(&part, &part_layout(&part, &moved), Some(u64::MAX)).is_valid();
                assert_eq!(whole_ok, part_ok, "window [{from}, {to}), draw {draw}");
                match whole_ok {
                    true => valid += 1,
                    false => invalid += 1,
                }
            }
        }
        assert!(
            valid > 10 && invalid > 10,
            "{valid} valid, {invalid} invalid"
        );
    }

    /// Held buffers side by side in address over the same stretch join into one obstacle.
    #[test]
    fn held_ranges_that_touch_join() {
        let mut buffers = vec![Buffer::new("freed", 2, 6, 1)];
        for k in 0..5 {
            buffers.push(Buffer::new(format!("held{k}"), 0, 10, 2));
        }
        buffers.push(Buffer::new("apart", 0, 3, 1));
        let problem = Problem::new(buffers, None);
        let offsets = [0, 1, 3, 5, 7, 9, 20];
        let part = compressed(&problem, &offsets, (&[0], &[1, 2, 3, 4, 5, 6]));
        let obstacles: Vec<(u64, u64, u64, Option<u64>)> = part.buffers[1..]
            .iter()
            .map(|b| (b.lower, b.upper, b.size, b.offset))
            .collect();
        // One piece of time, [2, 6); the held ranges [1, 11) and [20, 21).
        assert_eq!(obstacles, [(0, 1, 10, Some(1)), (0, 1, 1, Some(20))]);
        assert_eq!((part.buffers[0].lower, part.buffers[0].upper), (0, 1));
    }
}
