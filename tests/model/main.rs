//! The problem model's measures, the baselines and the independent validator.

#[path = "../common/mod.rs"]
mod common;

mod analysis;
mod assignment_check;
mod baselines;
mod memories;
mod validator;
