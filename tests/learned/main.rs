//! The learned components: the node policy, the portfolio head and the strategy seam.

#[path = "../search_support/mod.rs"]
mod support;

mod policy;
mod portfolio_model;
