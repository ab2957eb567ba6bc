//! # telamalloc
//!
//! Assigns on-chip memory offsets to the buffers of a compiled ML model so that no two buffers
//! live at the same time overlap and nothing exceeds the capacity.
//!
//! The crate has one problem model ([`Problem`], [`Buffer`], [`Solution`]), one independent
//! validator ([`validate()`]), one placement core ([`placement`]) and several allocators built on
//! them: the production baselines ([`baselines`]) and the TelaMalloc hybrid search.

pub mod allocate;
pub mod analysis;
pub mod baselines;
pub mod bench;
pub mod error;
pub mod evaluate;
pub mod generate;
pub mod import;
pub mod io;
pub mod placement;
pub mod plot;
pub mod problem;
pub mod search;
pub mod validate;

pub use error::InputError;
pub use problem::{Buffer, Problem, Solution};
pub use validate::{validate, Report, Violation};

/// The README's code examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
