//! Decomposition: a node's independent parts (no unplaced buffer crosses the time boundaries
//! between them), solved one after the other.

use super::node::Node;
use super::{Flow, Searcher};
use crate::analysis::{cut_sections, group_by_part};
use crate::search::instance::Instance;
use crate::search::state::State;
use std::ops::Range;

/// Splits `sections` at the boundaries no unplaced buffer crosses; returns the unplaced
/// `buffers` and the section range of each part (parts without unplaced buffers omitted).
pub(super) fn independent_parts(
    instance: &Instance,
    state: &State,
    buffers: &[u32],
    sections: Range<usize>,
) -> Vec<(Vec<u32>, Range<usize>)> {
    let parts = cut_sections(sections, &state.spanning);
    let unplaced = buffers
        .iter()
        .filter(|&&b| !state.is_placed(b as usize))
        .map(|&b| (b, instance.sections[b as usize].start));
    let groups = group_by_part(&parts, unplaced);
    parts
        .into_iter()
        .zip(groups)
        .filter(|(_, g)| !g.is_empty())
        .map(|(p, g)| (g, p))
        .collect()
}

impl Searcher<'_> {
    /// The independent parts of `buffers` over `sections` in the run's state.
    pub(super) fn partitions(
        &self,
        buffers: &[u32],
        sections: Range<usize>,
    ) -> Vec<(Vec<u32>, Range<usize>)> {
        independent_parts(self.instance, self.state, buffers, sections)
    }

    /// The search below `child`, the node after placing `b`: if the placement cut the timeline,
    /// its parts are solved apart, each as a (sub)problem of its own.
    pub(super) fn decompose(&mut self, child: &Node, b: usize) -> Flow {
        let span = self.instance.sections[b].clone();
        let cut = (span.start..span.end - 1).any(|k| self.state.spanning[k] == 0);
        if !cut {
            return self.search(child);
        }
        self.stats.decompositions += 1;
        for (part, range) in self.partitions(child.buffers, child.sections.clone()) {
            match self.sub_solve(part, range, child.depth) {
                Flow::Found => {}
                other => return other,
            }
        }
        Flow::Found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::{Buffer, Problem};

    /// The buffers of each part, by name, sorted.
    fn named(parts: &[(Vec<u32>, Range<usize>)], names: &[&str]) -> Vec<Vec<String>> {
        parts
            .iter()
            .map(|(buffers, _)| {
                let mut part: Vec<String> = buffers
                    .iter()
                    .map(|&b| names[b as usize].to_string())
                    .collect();
                part.sort();
                part
            })
            .collect()
    }

    #[test]
    fn buffers_apart_in_time_make_parts_of_their_own() {
        // a and b overlap, c and d overlap, nothing crosses from the first pair to the second.
        let names = ["a", "b", "c", "d"];
        let buffers = vec![
            Buffer::new("a", 0, 3, 2),
            Buffer::new("b", 2, 5, 2),
            Buffer::new("c", 5, 8, 2),
            Buffer::new("d", 6, 9, 2),
        ];
        let instance = Instance::new(&Problem::new(buffers, None), 10);
        let state = State::new(&instance);
        let all = 0..state.floors.len();
        let parts = independent_parts(&instance, &state, &instance.free_u32(), all.clone());
        assert_eq!(named(&parts, &names), [vec!["a", "b"], vec!["c", "d"]]);
        // The two parts split the sections between them, in time order.
        assert_eq!(parts[0].1.start, all.start);
        assert_eq!(parts[0].1.end, parts[1].1.start);
        assert_eq!(parts[1].1.end, all.end);
    }

    #[test]
    fn placing_the_buffer_that_joins_two_parts_separates_them() {
        // a is live throughout; b before the middle, c after it.
        let names = ["a", "b", "c"];
        let buffers = vec![
            Buffer::new("a", 0, 10, 4),
            Buffer::new("b", 0, 5, 2),
            Buffer::new("c", 5, 10, 3),
        ];
        let instance = Instance::new(&Problem::new(buffers, None), 10);
        let mut state = State::new(&instance);
        let all = 0..state.floors.len();
        let free = instance.free_u32();
        let whole = independent_parts(&instance, &state, &free, all.clone());
        assert_eq!(named(&whole, &names), [vec!["a", "b", "c"]]);
        state.place(&instance, 0, 0, 1, true);
        let apart = independent_parts(&instance, &state, &free, all);
        assert_eq!(named(&apart, &names), [vec!["b"], vec!["c"]]);
    }
}
