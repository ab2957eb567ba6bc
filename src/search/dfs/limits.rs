//! The limits of a run (node budget, deadline, cancellation, an earlier run deciding), checked
//! at every node with the clock read at an adaptive stride.

use crate::outcome::Deadline;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Why a run stopped before finishing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The run's node budget is spent (a restart may follow).
    Budget,
    /// The deadline passed or someone cancelled the search.
    Deadline,
    /// A run before this one in the same portfolio round has decided, so this one's answer
    /// cannot be used.
    Outranked,
}

/// The limits of one run: its node budget and what else may stop it.
pub struct RunLimits<'a> {
    /// Nodes this run may expand.
    pub nodes: u64,
    /// The deadline and the cancellation flag.
    pub stop: Deadline<'a>,
    /// The lowest index of a run that decided in this round, and this run's index: the run
    /// stops once a run before it has decided.
    pub outranked: Option<(&'a AtomicUsize, usize)>,
}

/// How often a run reads the clock (for the deadline, and whether an earlier run of its round
/// has decided): every `mask + 1` nodes, a power of two that adapts to how long nodes take.
/// A node's time varies by orders of magnitude with the problem's size, so no fixed stride
/// suits all: the stride halves while reads are more than [`CLOCK_GAP`] apart and doubles, up
/// to 256 nodes, while they are less than a quarter of it. A deadline is then overshot by
/// about `CLOCK_GAP` plus one node. Only when the run stops depends on it, never what the run
/// does.
struct ClockStride {
    mask: u64,
    last: Option<Instant>,
}

/// The longest a run should go between two reads of the clock.
const CLOCK_GAP: Duration = Duration::from_millis(2);

/// The longest stride: 256 nodes.
const CLOCK_MASK_MAX: u64 = 255;

impl ClockStride {
    /// Reads at every node at first; the stride grows from there.
    fn new() -> ClockStride {
        ClockStride {
            mask: 0,
            last: None,
        }
    }

    /// Whether the run reads the clock at its node number `nodes`.
    fn due(&self, nodes: u64) -> bool {
        nodes & self.mask == 0
    }

    /// Reads the clock and adapts the stride to the time since the last read (out of line: it
    /// runs once a stride, and stays out of the node loop's code).
    #[inline(never)]
    fn read(&mut self) -> Instant {
        let now = Instant::now();
        if let Some(gap) = self.last.map(|last| now.saturating_duration_since(last)) {
            if gap > CLOCK_GAP {
                self.mask >>= 1;
            } else if gap < CLOCK_GAP / 4 && self.mask < CLOCK_MASK_MAX {
                self.mask = self.mask * 2 + 1;
            }
        }
        self.last = Some(now);
        now
    }
}

/// A run's limits with the clock stride that checks them.
pub(super) struct Limiter<'a> {
    limits: RunLimits<'a>,
    clock: ClockStride,
}

impl<'a> Limiter<'a> {
    /// Checks `limits`, reading the clock at every node at first.
    pub fn new(limits: RunLimits<'a>) -> Limiter<'a> {
        Limiter {
            limits,
            clock: ClockStride::new(),
        }
    }

    /// The deadline and the cancellation flag.
    pub fn deadline(&self) -> Deadline<'a> {
        self.limits.stop
    }

    /// Spends one node of the budget on the run's node number `nodes` (counted from 1): why the
    /// run must stop, if it must.
    #[inline]
    pub fn spend_node(&mut self, nodes: u64) -> Option<Stop> {
        let limits = &mut self.limits;
        if limits.nodes == 0 {
            return Some(Stop::Budget);
        }
        limits.nodes -= 1;
        // The flag at every node (one load): a stride of nodes can take long, and Ctrl-C should
        // not wait for the clock.
        if limits.stop.cancelled() {
            return Some(Stop::Deadline);
        }
        if self.clock.due(nodes) {
            if limits
                .outranked
                .is_some_and(|(decided, me)| decided.load(Ordering::Relaxed) < me)
            {
                return Some(Stop::Outranked);
            }
            if let Some(at) = limits.stop.at {
                if self.clock.read() >= at {
                    return Some(Stop::Deadline);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    fn limits(nodes: u64, stop: Deadline<'_>) -> RunLimits<'_> {
        RunLimits {
            nodes,
            stop,
            outranked: None,
        }
    }

    /// Spends nodes 1, 2, ... until the limiter stops the run: the node it stopped at and why.
    fn stop_of(limiter: &mut Limiter<'_>, most: u64) -> Option<(u64, Stop)> {
        (1..=most).find_map(|node| limiter.spend_node(node).map(|stop| (node, stop)))
    }

    #[test]
    fn the_budget_stops_the_run_at_the_node_after_its_last() {
        let mut limiter = Limiter::new(limits(3, Deadline::none()));
        assert_eq!(stop_of(&mut limiter, 10), Some((4, Stop::Budget)));
        let mut none_left = Limiter::new(limits(0, Deadline::none()));
        assert_eq!(none_left.spend_node(1), Some(Stop::Budget));
    }

    #[test]
    fn a_passed_deadline_stops_the_run_at_its_first_node() {
        let at = Instant::now();
        let stop = Deadline {
            at: Some(at),
            cancel: None,
        };
        let mut limiter = Limiter::new(limits(1_000, stop));
        assert_eq!(limiter.spend_node(1), Some(Stop::Deadline));
    }

    #[test]
    fn a_distant_deadline_lets_the_budget_stop_the_run() {
        let stop = Deadline::after(Instant::now(), Some(Duration::from_secs(3600)), None);
        let mut limiter = Limiter::new(limits(5_000, stop));
        assert_eq!(stop_of(&mut limiter, 10_000), Some((5_001, Stop::Budget)));
    }

    #[test]
    fn cancelling_stops_the_run_at_the_next_node_whatever_the_stride() {
        let cancel = AtomicBool::new(false);
        let stop = Deadline::after(
            Instant::now(),
            Some(Duration::from_secs(3600)),
            Some(&cancel),
        );
        let mut limiter = Limiter::new(limits(u64::MAX, stop));
        assert_eq!(stop_of(&mut limiter, 1_000), None);
        cancel.store(true, Ordering::Relaxed);
        assert_eq!(limiter.spend_node(1_001), Some(Stop::Deadline));
    }

    #[test]
    fn a_run_stops_once_an_earlier_run_of_its_round_decided() {
        let decided = AtomicUsize::new(usize::MAX);
        let mut limiter = Limiter::new(RunLimits {
            outranked: Some((&decided, 2)),
            ..limits(u64::MAX, Deadline::none())
        });
        assert_eq!(limiter.spend_node(1), None);
        decided.store(3, Ordering::Relaxed); // A later run decided: no matter.
        assert_eq!(limiter.spend_node(2), None);
        decided.store(1, Ordering::Relaxed);
        // Found at the next node that reads the clock (every node without a deadline's reads).
        assert_eq!(limiter.spend_node(3), Some(Stop::Outranked));
    }

    #[test]
    fn the_stride_grows_while_reads_come_quickly_and_shrinks_when_they_do_not() {
        let mut clock = ClockStride::new();
        assert!(clock.due(1) && clock.due(7));
        // Reads a few microseconds apart (a slow one, on a busy machine, only delays this).
        for _ in 0..10_000 {
            if clock.mask == CLOCK_MASK_MAX {
                break;
            }
            clock.read();
        }
        assert_eq!(clock.mask, CLOCK_MASK_MAX);
        assert!(clock.due(256) && !clock.due(255));
        clock.last = Some(Instant::now() - 2 * CLOCK_GAP);
        clock.read();
        assert_eq!(clock.mask, CLOCK_MASK_MAX >> 1);
    }
}
