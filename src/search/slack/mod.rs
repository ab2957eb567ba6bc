//! Slack filling: a restriction of a nearly full problem that the search decides much faster.
//!
//! In a section whose buffers fill the capacity exactly, zero-slack reasoning forces its floor
//! to be covered at every step, and the search barely branches. A few bytes of slack switch that
//! off: the search must also choose where the holes go, and a perfect packing with one piece
//! removed can take far more nodes than the full one. Slack filling gives the holes a
//! shape: the slack of each section (capacity minus the sizes live in it) is cut into phantom
//! buffers and added to the problem, which then has no slack anywhere. The cut is a guess at
//! the holes' shapes ([`Shape`]): nested bands, level by level, as holes nested in time would
//! give; pieces matched by amount, as rectangular holes give (each closes the slack it opened);
//! first-in-first-out pieces, as holes that overlap in time would; and random cuts, a new one
//! for each run of a lottery member ([`Drawer`]), since a cut that matches the holes is decided
//! in about one node per buffer. The lottery draws each cut move by move with the learned
//! hole-shape model ([`walk`], switch `learned-holes`) or, without it, by hand-made
//! rules: some draws matched by amount where they can be, some letting a hole end where another
//! starts (which the profile shows only as their difference).
//!
//! It is a restriction, not a reformulation: a layout of the filled problem, phantoms dropped,
//! is a layout of the problem, but the holes of every layout need not take the phantoms'
//! shapes, so a filled problem without a layout proves nothing. The portfolio therefore runs
//! each as one more member of its rounds (first in each, at one policy's share), whose
//! exhausted run only retires it (or, for the lottery, ends that draw).
//!
//! Laid out as: [`profile`] (the slack of each section and its rises and falls), [`cuts`] (the
//! fixed cuts), [`walk`] (the learned hole-shape model's moves; [`truth`] replays known holes
//! as its moves for training), [`filled`] (a cut made into a filled problem), [`members`] (which
//! fixed members a problem gets, and [`SlackFill`], the one set of switches) and [`lottery`]
//! (the drawer of new cuts, and the lottery member's draws).

pub(crate) mod cuts;
pub(crate) mod filled;
pub(crate) mod lottery;
pub(crate) mod members;
pub(crate) mod profile;
pub(crate) mod truth;
pub(crate) mod walk;

pub(crate) use filled::{Filled, Shape};
pub(crate) use lottery::{Drawer, Lottery};
pub(crate) use members::{members, Members, SlackFill};
