//! The driver of a reordering: beams, the exact search, then improvement, within a time limit.

use super::exact::{search as exact_search, Result as Exact};
use super::graph::OpGraph;
use super::heuristic::{beam, improve};
use std::time::{Duration, Instant};

/// Limits of [`reorder`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReorderOptions {
    /// Wall-clock limit for the whole search (`None`: none; the state limit still applies).
    pub timeout: Option<Duration>,
    /// The most sets of operators the exact search keeps (each costs about `n / 8 + 64` bytes
    /// for `n` operators).
    pub max_states: usize,
    /// The widest beam tried (0: no beam search when the given order is valid, which leaves
    /// the exact search to improve on it alone).
    pub max_beam_width: usize,
}

impl Default for ReorderOptions {
    fn default() -> Self {
        ReorderOptions {
            timeout: Some(Duration::from_secs(10)),
            max_states: 2_000_000,
            max_beam_width: 1024,
        }
    }
}

/// What [`reorder`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reordering {
    /// The operators in the order found.
    pub order: Vec<usize>,
    /// Its LOAD.
    pub load: u64,
    /// The LOAD of the given order (`None` when it is not valid: a reader before its producer,
    /// or pinned operators out of order).
    pub original_load: Option<u64>,
    /// A lower bound on every order's LOAD (equal to `load` when proven minimal).
    pub lower_bound: u64,
    /// Whether `load` is proven minimal.
    pub optimal: bool,
    /// Sets of operators the exact search kept.
    pub states: u64,
    /// Whether the time limit cut the search short.
    pub timed_out: bool,
    /// Wall-clock time taken.
    pub elapsed: Duration,
}

/// Searches the valid orders of `graph` for one with the smallest LOAD (see the module docs).
/// Never returns an order worse than the given one when that one is valid; among orders of equal
/// LOAD, the given one is kept.
pub fn reorder(graph: &OpGraph, options: &ReorderOptions) -> Reordering {
    let started = Instant::now();
    let identity: Vec<usize> = (0..graph.n).collect();
    let original_load = graph.given_order_valid.then(|| {
        graph
            .order_load(&identity)
            .expect("the given order is valid")
    });
    let mut search = Search {
        graph,
        deadline: options.timeout.map(|t| started + t),
        best: original_load.map(|load| (identity, load)),
        states: 0,
        timed_out: false,
        proven: false,
    };
    search.narrow_beams(options);
    if search.done() {
        search.proven = true;
    } else if !search.expired() {
        search.exact(options);
    } else {
        search.timed_out = true;
    }
    search.improve(options);
    if search.expired() && !search.proven && !search.done() {
        search.timed_out = true;
    }
    if search.done() {
        search.proven = true;
    }
    let (order, load) = search.best.expect("a graph without a cycle has an order");
    Reordering {
        order,
        load,
        original_load,
        lower_bound: if search.proven {
            load
        } else {
            graph.lower_bound
        },
        optimal: search.proven,
        states: search.states,
        timed_out: search.timed_out,
        elapsed: started.elapsed(),
    }
}

/// The state of one [`reorder`]: the best order so far and what is known of it.
struct Search<'g> {
    graph: &'g OpGraph,
    deadline: Option<Instant>,
    /// The best valid order found and its LOAD.
    best: Option<(Vec<usize>, u64)>,
    /// States the exact search expanded.
    states: u64,
    timed_out: bool,
    /// Whether the best order is proven minimal.
    proven: bool,
}

impl Search<'_> {
    /// Whether the best order reaches the lower bound.
    fn done(&self) -> bool {
        self.best
            .as_ref()
            .is_some_and(|b| b.1 <= self.graph.lower_bound)
    }

    fn expired(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// Keeps `found` if it is strictly better than the best.
    fn consider(&mut self, found: Option<(Vec<usize>, u64)>) {
        if let Some((order, load)) = found {
            if self.best.as_ref().is_none_or(|b| load < b.1) {
                self.best = Some((order, load));
            }
        }
    }

    /// Beams of width 1, 4 and 16; until some order is known, with no clock, so that a graph
    /// always gets an order.
    fn narrow_beams(&mut self, options: &ReorderOptions) {
        for width in [1usize, 4, 16] {
            if self.done()
                || (self.best.is_some() && (self.expired() || width > options.max_beam_width))
            {
                break;
            }
            let limit = if self.best.is_some() {
                self.deadline
            } else {
                None
            };
            let found = beam(self.graph, width, limit);
            self.consider(found);
        }
    }

    /// The exact search, with half of the time left (so that wider beams can follow).
    fn exact(&mut self, options: &ReorderOptions) {
        let exact_deadline = self.deadline.map(|d| {
            let now = Instant::now();
            now + d.saturating_duration_since(now) / 2
        });
        let upper = self.best.as_ref().map_or(u64::MAX, |b| b.1);
        let budget = options.max_states / (1 + self.graph.words / 2);
        let outcome = exact_search(self.graph, upper, exact_deadline, budget);
        self.states = outcome.states;
        match outcome.result {
            Exact::Found(order, load) => {
                self.consider(Some((order, load)));
                self.proven = true;
            }
            Exact::NoBetter => self.proven = self.best.is_some(),
            Exact::GaveUp { timed_out } => self.timed_out |= timed_out,
        }
    }

    /// Not proven: improves the best order by windows, then wider beams, each improved in turn.
    fn improve(&mut self, options: &ReorderOptions) {
        let mut width = 64usize;
        let mut polish = !self.proven && !self.done();
        while !self.proven && !self.done() {
            if self.best.is_some() && self.expired() {
                self.timed_out = true;
                break;
            }
            if polish {
                // On a copy: a window may change the order without lowering the LOAD.
                if let Some((order, load)) = self.best.as_ref() {
                    let mut order = order.clone();
                    let load = improve(self.graph, &mut order, *load, self.deadline);
                    self.consider(Some((order, load)));
                }
                polish = false;
                continue;
            }
            if width > options.max_beam_width {
                break;
            }
            let before = self.best.as_ref().map(|b| b.1);
            let found = beam(self.graph, width, self.deadline);
            self.consider(found);
            polish = self.best.as_ref().map(|b| b.1) != before;
            width *= 2;
        }
    }
}
