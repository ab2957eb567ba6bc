//! TVM USMP's hill climbing: random swaps of a greedy order, accepting some worse orders.

use super::place_again;
use crate::outcome::Deadline;
use crate::placement::{Fit, Placer};
use crate::problem::{Problem, Solution};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// How many swaps hill climbing tries.
pub(crate) const ATTEMPTS: usize = 500;

/// Starts from `order` and keeps the best first-fit placement found over [`ATTEMPTS`] seeded
/// random swaps; a worse order is accepted with a probability that falls as the search goes on.
/// Once `deadline` passes it returns the best so far (`None` if the first placement was not
/// finished).
pub(crate) fn improve(
    problem: &Problem,
    mut order: Vec<usize>,
    seed: u64,
    deadline: &Deadline<'_>,
) -> Option<Solution> {
    let mut placer = Placer::new(problem);
    let mut best = place_again(&mut placer, &order, Fit::First, deadline)?;
    let mut best_peak = best.peak(problem);
    if order.len() < 2 {
        return Some(best);
    }
    let mut rng = StdRng::seed_from_u64(seed);
    let mut current_peak = best_peak;
    for attempt in 0..ATTEMPTS {
        let i = rng.random_range(0..order.len());
        let j = rng.random_range(0..order.len());
        if i == j {
            continue;
        }
        order.swap(i, j);
        let Some(candidate) = place_again(&mut placer, &order, Fit::First, deadline) else {
            break;
        };
        let peak = candidate.peak(problem);
        // Temperature falls linearly; accept a worse order with probability exp(-delta / t).
        let temperature = 0.02 * (1.0 - attempt as f64 / ATTEMPTS as f64) * best_peak as f64;
        let delta = peak as f64 - current_peak as f64;
        let accept = delta <= 0.0
            || (temperature > 0.0 && rng.random::<f64>() < (-delta / temperature).exp());
        if accept {
            current_peak = peak;
            if peak < best_peak {
                best_peak = peak;
                best = candidate;
            }
        } else {
            order.swap(i, j);
        }
    }
    Some(best)
}
