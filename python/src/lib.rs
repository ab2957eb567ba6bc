//! Python bindings of telamalloc: the extension module `telamalloc._native`, re-exported by the
//! package `telamalloc` (`python/telamalloc/__init__.py`, typed by `_native.pyi`).
//!
//! A thin layer over the library's front door ([`telamalloc::Solver`]), like the C ABI in
//! `capi/`: problems from Python objects or numpy arrays ([`problem`], [`columns`]), a solve on
//! a worker thread that Ctrl-C cancels ([`solve`]), and the library's files, validator, model
//! importers and plots ([`files`]). Every error is a `TelamallocError` carrying the library's
//! own message, the one the command line prints.

mod columns;
mod files;
mod problem;
mod solve;

use pyo3::exceptions::{PyUserWarning, PyValueError};
use pyo3::prelude::*;
use std::ffi::CString;

pyo3::create_exception!(
    telamalloc,
    TelamallocError,
    PyValueError,
    "Bad input or an impossible request: the message is the one the `telamalloc` command line \
     prints (file, line and field for files; `buffers[i]` and the field for problems built in \
     Python; the column and index for arrays, `size[3]: -4 is negative`; the argument for \
     numbers, `capacity: -1 is negative`)."
);

pyo3::create_exception!(
    telamalloc,
    TelamallocWarning,
    PyUserWarning,
    "Something the caller should know that did not stop the work: a model tensor the importer \
     left out, a learned policy that fell back to the fixed one."
);

/// A [`TelamallocError`] with `message`.
pub(crate) fn error(message: impl std::fmt::Display) -> PyErr {
    TelamallocError::new_err(message.to_string())
}

/// Issues `message` as a [`TelamallocWarning`] (Python's `warnings` machinery decides whether it
/// shows, and may turn it into an exception), without the `warning: ` the library's messages may
/// start with for the command line.
pub(crate) fn warn(py: Python<'_>, message: &str) -> PyResult<()> {
    let message = message.strip_prefix("warning: ").unwrap_or(message);
    let text = CString::new(message.replace('\0', " ")).unwrap_or_default();
    PyErr::warn(py, &py.get_type::<TelamallocWarning>(), &text, 1)
}

/// Every algorithm name `solve(..., algo=NAME)` accepts: `search` (the default), `cpsat`
/// (needs OR-tools, `pip install ortools`) and the production heuristics (`tflite`, `xla`, ...).
#[pyfunction]
fn algorithms() -> Vec<&'static str> {
    telamalloc::Algorithm::names()
}

/// The extension module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("TelamallocError", py.get_type::<TelamallocError>())?;
    m.add("TelamallocWarning", py.get_type::<TelamallocWarning>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<problem::Buffer>()?;
    m.add_class::<problem::Problem>()?;
    m.add_class::<solve::Allocation>()?;
    m.add_class::<files::Report>()?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(solve::solve, m)?)?;
    m.add_function(wrap_pyfunction!(files::read_csv, m)?)?;
    m.add_function(wrap_pyfunction!(files::write_csv, m)?)?;
    m.add_function(wrap_pyfunction!(files::read_solution, m)?)?;
    m.add_function(wrap_pyfunction!(files::validate, m)?)?;
    m.add_function(wrap_pyfunction!(files::import_model, m)?)?;
    m.add_function(wrap_pyfunction!(files::plot, m)?)?;
    Ok(())
}
