//! Around the solve: problem and solution files, the validator, the model importers and plots,
//! each one call into the library (with the GIL released while it works).

use crate::columns::{column, optional_unsigned, Integer};
use crate::problem::Problem;
use crate::solve::Allocation;
use crate::{error, warn};
use numpy::PyArray1;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use telamalloc::import::ImportOptions;
use telamalloc::io::{write_csv_problem, write_csv_solution, write_file};
use telamalloc::{Solution, Violation};

/// Reads a problem file: MiniMalloc's CSV (``id,lower,upper,size[,alignment][,offset]``), or
/// JSON when the name ends in ``.json``. The capacity is ``capacity`` if given, else the file's
/// own (JSON) or the one in its name (``NAME.CAPACITY.csv``), else None. ``memories``: a CSV
/// file ``id,capacity[,cost]`` of memories for the buffers' ``memories`` column.
///
/// Raises ``TelamallocError`` naming the file, line and field, as the command line does.
#[pyfunction]
#[pyo3(signature = (path, capacity=None, memories=None))]
pub fn read_csv(
    py: Python<'_>,
    path: PathBuf,
    capacity: Option<Integer>,
    memories: Option<PathBuf>,
) -> PyResult<Problem> {
    let capacity = optional_unsigned(capacity.as_ref(), "capacity")?;
    let problem = py
        .detach(|| {
            let memories = memories
                .map(|m| telamalloc::io::read_memories(&m))
                .transpose()?;
            telamalloc::io::read_problem_in(&path, capacity, memories)
        })
        .map_err(error)?;
    Ok(Problem { inner: problem })
}

/// Writes ``problem`` as a CSV file, or, with ``offsets`` (an ``Allocation``, or one integer
/// per buffer), its solution: the problem's columns plus ``offset``.
#[pyfunction]
#[pyo3(signature = (path, problem, offsets=None))]
pub fn write_csv(
    py: Python<'_>,
    path: PathBuf,
    problem: &Bound<'_, Problem>,
    offsets: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let problem = &problem.get().inner;
    let text = match offsets {
        None => py.detach(|| write_csv_problem(problem)),
        Some(offsets) => {
            let solution = solution_for(problem, offsets)?;
            py.detach(|| write_csv_solution(problem, &solution))
        }
    };
    py.detach(|| write_file(&path, &text))
        .map_err(|e| PyOSError::new_err(format!("cannot write {}: {e}", path.display())))
}

/// Reads a solution file for ``problem`` (CSV with ``id`` and ``offset`` columns, or JSON): the
/// offsets in the problem's buffer order, as a ``uint64`` array.
#[pyfunction]
pub fn read_solution<'py>(
    py: Python<'py>,
    path: PathBuf,
    problem: &Bound<'py, Problem>,
) -> PyResult<Bound<'py, PyArray1<u64>>> {
    let problem = &problem.get().inner;
    let solution = py
        .detach(|| telamalloc::io::read_solution(&path, problem))
        .map_err(error)?;
    Ok(PyArray1::from_vec(py, solution.offsets))
}

/// The validator's verdict: ``valid`` (also the truth value of the report) and the first
/// ``violations`` found (at most 20), in words.
#[pyclass(module = "telamalloc", frozen)]
pub struct Report {
    /// Whether the offsets are valid.
    #[pyo3(get)]
    valid: bool,
    /// What is wrong, one sentence per violation (empty when valid).
    #[pyo3(get)]
    violations: Vec<String>,
    /// The library's report: `valid`, or the violations one per line.
    text: String,
}

#[pymethods]
impl Report {
    fn __bool__(&self) -> bool {
        self.valid
    }

    fn __str__(&self) -> &str {
        &self.text
    }

    fn __repr__(&self) -> String {
        format!(
            "<telamalloc.Report: {}>",
            if self.valid {
                "valid".to_string()
            } else {
                format!("{} violations", self.violations.len())
            }
        )
    }
}

/// Checks ``offsets`` (an ``Allocation``, or one integer per buffer) against ``problem`` with the
/// library's independent validator: alignments, fixed offsets, the capacity (``capacity``, above
/// 0, else the problem's own, else none) and that no two buffers live at the same time share an
/// address. Offsets of the wrong length are a violation in the report, not an error.
#[pyfunction]
#[pyo3(signature = (problem, offsets, capacity=None))]
pub fn validate(
    py: Python<'_>,
    problem: &Bound<'_, Problem>,
    offsets: &Bound<'_, PyAny>,
    capacity: Option<Integer>,
) -> PyResult<Report> {
    let problem = &problem.get().inner;
    let capacity = positive(optional_unsigned(capacity.as_ref(), "capacity")?)?;
    let solution = Solution {
        offsets: offsets_of(offsets)?,
    };
    let report =
        py.detach(|| telamalloc::validate(problem, &solution, capacity.or(problem.capacity)));
    Ok(Report {
        valid: report.is_valid(),
        violations: report.violations.iter().map(|v| v.to_string()).collect(),
        text: report.to_string(),
    })
}

/// Imports a model (``.tflite`` or ``.onnx``; other names by their content) as a problem: one
/// buffer per activation tensor, live from the operator that makes it through its last reader,
/// sizes rounded up to ``alignment``. Dynamic dimensions take ``batch`` unless ``input_shapes``
/// (``{"input": [1, 3, 224, 224]}``) names the input. What had to be left out is issued as
/// ``TelamallocWarning``; the problem has no capacity.
#[pyfunction]
#[pyo3(
    signature = (path, alignment=Integer::from(64), batch=Integer::from(1), input_shapes=None),
    text_signature = "(path, alignment=64, batch=1, input_shapes=None)"
)]
pub fn import_model(
    py: Python<'_>,
    path: PathBuf,
    alignment: Integer,
    batch: Integer,
    input_shapes: Option<HashMap<String, Bound<'_, PyAny>>>,
) -> PyResult<Problem> {
    let mut shapes = Vec::new();
    for (name, dimensions) in input_shapes.unwrap_or_default() {
        let label = format!("input_shapes[{}]", PyString::new(py, &name).repr()?);
        shapes.push((name, column(&dimensions, &label)?));
    }
    shapes.sort();
    let options = ImportOptions {
        alignment: alignment.unsigned("alignment")?,
        batch: batch.unsigned("batch")?,
        input_shapes: shapes,
    };
    let imported = py
        .detach(|| telamalloc::import::import_model(&path, &options))
        .map_err(error)?;
    for warning in &imported.warnings {
        warn(py, &format!("{}: {warning}", path.display()))?;
    }
    Ok(Problem {
        inner: imported.problem,
    })
}

/// Draws ``offsets`` (an ``Allocation``, or one integer per buffer: as many as buffers) for
/// ``problem`` as an SVG picture (time across, address up; the capacity, LOAD and peak lines) and
/// returns it; with ``path`` (``.svg``), also writes it there. ``capacity`` is the line to draw
/// (above 0; default: the problem's own, else no line). An invalid plan is drawn too, a peak
/// above the capacity line included: ``validate`` says what is wrong.
#[pyfunction]
#[pyo3(signature = (problem, offsets, path=None, capacity=None))]
pub fn plot(
    py: Python<'_>,
    problem: &Bound<'_, Problem>,
    offsets: &Bound<'_, PyAny>,
    path: Option<PathBuf>,
    capacity: Option<Integer>,
) -> PyResult<String> {
    let problem = &problem.get().inner;
    let capacity = positive(optional_unsigned(capacity.as_ref(), "capacity")?)?;
    let solution = solution_for(problem, offsets)?;
    if let Some(path) = &path {
        if !has_extension(path, "svg") {
            return Err(error(format!(
                "{}: plots are SVG: name the file NAME.svg",
                path.display()
            )));
        }
    }
    let svg = py.detach(|| telamalloc::plot::render_svg(problem, &solution, capacity));
    if let Some(path) = &path {
        py.detach(|| write_file(path, &svg))
            .map_err(|e| PyOSError::new_err(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(svg)
}

/// `capacity`, unless it is 0 (the rule every problem's capacity keeps).
fn positive(capacity: Option<u64>) -> PyResult<Option<u64>> {
    if capacity == Some(0) {
        return Err(error("capacity must be greater than 0"));
    }
    Ok(capacity)
}

/// Whether `path` ends in `.extension` (any case).
fn has_extension(path: &Path, extension: &str) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case(extension))
}

/// The offsets `offsets` stands for: an `Allocation`'s (an error when it has none), or an
/// integer array or sequence.
fn offsets_of(offsets: &Bound<'_, PyAny>) -> PyResult<Vec<u64>> {
    if let Ok(allocation) = offsets.cast::<Allocation>() {
        let allocation = allocation.get();
        return match allocation.offsets() {
            Some(array) => column(array.bind(offsets.py()).as_any(), "offsets"),
            None => Err(error(format!(
                "the allocation has no offsets ({})",
                allocation.message()
            ))),
        };
    }
    column(offsets, "offsets")
}

/// A solution of `problem` from `offsets`, which must hold one offset per buffer.
fn solution_for(problem: &telamalloc::Problem, offsets: &Bound<'_, PyAny>) -> PyResult<Solution> {
    let offsets = offsets_of(offsets)?;
    if offsets.len() != problem.len() {
        let wrong = Violation::WrongLength {
            expected: problem.len(),
            found: offsets.len(),
        };
        return Err(error(wrong));
    }
    Ok(Solution { offsets })
}
