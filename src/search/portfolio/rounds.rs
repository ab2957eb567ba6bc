//! The budgets of the portfolio's rounds: each run's node budget under a node limit, each
//! member's runs per round, and when the external member runs (its own doubling schedule
//! within its share).

use crate::search::external::ExternalMember;
use crate::search::options::Schedule;
use crate::search::schedule::budget;

/// The runs of a round in order: the policies', with the external member's before them when it
/// [runs first](ExternalMember::runs_first), else after them.
pub(super) fn in_run_order<T>(mut policies: Vec<T>, external: Option<(T, bool)>) -> Vec<T> {
    match external {
        Some((member, true)) => policies.insert(0, member),
        Some((member, false)) => policies.push(member),
        None => {}
    }
    policies
}

/// Each policy's weight, from the settings' (missing entries and zeros count as 1).
pub(super) fn run_weights(weights: &[u64], policies: usize) -> Vec<u64> {
    (0..policies)
        .map(|i| weights.get(i).copied().unwrap_or(1).max(1))
        .collect()
}

/// Each run's node budget in a round, fixed before the round starts so that threads and
/// sequential runs agree. A run stopped by its budget also counts the node it refused, so under
/// a node limit each run is granted its budget only while that node fits too; the first run
/// whose budget does not fit gets all that is left (its refused node is not counted, see
/// [`count_within`]) and the runs after it nothing: the runs never count more than the limit,
/// and a round the limit does not reach is granted exactly what it asks. `None` when the limit
/// is spent.
pub(super) fn round_budgets(
    wanted: &[u64],
    node_limit: Option<u64>,
    spent: u64,
) -> Option<Vec<u64>> {
    let Some(limit) = node_limit else {
        return Some(wanted.to_vec());
    };
    let mut left = limit.checked_sub(spent).filter(|&left| left > 0)?;
    let budgets = wanted
        .iter()
        .map(|&wanted| {
            if wanted < left {
                left -= wanted + 1; // Its nodes and the one it refuses at its budget.
                wanted
            } else {
                std::mem::take(&mut left)
            }
        })
        .collect();
    Some(budgets)
}

/// The nodes a run that counted `nodes` adds under a node limit, `spent` nodes spent before it:
/// at most what is left. Only the run granted the rest of the limit (see [`round_budgets`]) can
/// count one more, the node it refused when its budget ran out, which is no work.
pub(super) fn count_within(nodes: u64, node_limit: Option<u64>, spent: u64) -> u64 {
    match node_limit {
        Some(limit) => {
            let room = limit.saturating_sub(spent);
            debug_assert!(nodes <= room + 1, "{nodes} nodes with {room} left");
            nodes.min(room)
        }
        None => nodes,
    }
}

/// When the external member runs, and with what budget. It cannot be paused, so its runs start
/// from scratch on the geometric schedule (doubling budgets: its repeated work is at most as
/// much again); each runs in the first pass where the member's runs so far, with it, stay within
/// its share of the node budgets the policies have been given.
pub(super) struct MemberSchedule {
    /// The policies' total weight (runs per round).
    pub(super) weight: u64,
    /// Free buffers: the budget unit.
    pub(super) buffers: usize,
    /// The member's runs so far.
    pub(super) runs: u32,
    /// The budgets of the member's runs so far, with their overheads.
    pub(super) member_total: u64,
    /// The budgets given to the policies' runs so far.
    pub(super) policy_total: u64,
}

impl MemberSchedule {
    pub(super) fn new(weight: u64, buffers: usize) -> MemberSchedule {
        MemberSchedule {
            weight: weight.max(1),
            buffers,
            runs: 0,
            member_total: 0,
            policy_total: 0,
        }
    }

    /// The member's budget in a pass whose policies get `policy_budgets`, if it runs in it.
    pub(super) fn next(
        &mut self,
        member: &dyn ExternalMember,
        policy_budgets: &[u64],
    ) -> Option<u64> {
        self.next_with(member.share(), member.overhead(), policy_budgets)
    }

    /// [`MemberSchedule::next`] for a member of `share` (in policies) whose runs cost
    /// `overhead` node equivalents each beyond their budgets.
    pub(super) fn next_with(
        &mut self,
        share: f64,
        overhead: u64,
        policy_budgets: &[u64],
    ) -> Option<u64> {
        self.policy_total = policy_budgets
            .iter()
            .fold(self.policy_total, |total, &b| total.saturating_add(b));
        let next = budget(Schedule::Geometric, self.runs, self.buffers);
        let after = self
            .member_total
            .saturating_add(next)
            .saturating_add(overhead);
        // In floating point (exact enough, and the same on every machine): share may be a
        // fraction of a policy.
        let allowed = after as f64 * self.weight as f64 <= share * self.policy_total as f64;
        if share.is_nan() || share <= 0.0 || !allowed {
            return None;
        }
        self.runs += 1;
        self.member_total = after;
        Some(next)
    }
}
