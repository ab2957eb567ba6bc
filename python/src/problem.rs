//! `Buffer` and `Problem`: the library's problem model, checked by its rules when made.

use crate::columns::{column, describe, offset_column, optional_unsigned, Integer};
use crate::error;
use pyo3::exceptions::{PyIndexError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};
use telamalloc::analysis::Timeline;

/// One buffer to place: live over the half-open time interval ``[lower, upper)``, ``size`` bytes
/// long, at an offset that is a multiple of ``alignment`` (a power of two); ``offset`` fixes its
/// address (the allocator keeps it there).
///
/// ``memories`` lists the ids of the problem's memories the buffer may go to (None: any);
/// ``benefit`` is what keeping it on chip is worth to ``solve(..., spill=True)`` (None: its
/// size).
///
/// Raises ``TelamallocError`` when it breaks a rule (``lower < upper``, ``size > 0``, the
/// alignment a power of two, a fixed offset aligned, an id without white space at either end)
/// or a number is negative or beyond 64 bits, ``TypeError`` when one is not an integer; both
/// name the field.
#[pyclass(module = "telamalloc", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct Buffer {
    pub(crate) inner: telamalloc::Buffer,
}

#[pymethods]
impl Buffer {
    #[new]
    #[pyo3(
        signature = (id, lower, upper, size, alignment=Integer::from(1), offset=None,
                     memories=None, benefit=None),
        text_signature = "(id, lower, upper, size, alignment=1, offset=None, memories=None, benefit=None)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        id: String,
        lower: Integer,
        upper: Integer,
        size: Integer,
        alignment: Integer,
        offset: Option<Integer>,
        memories: Option<Vec<String>>,
        benefit: Option<Integer>,
    ) -> PyResult<Buffer> {
        let inner = telamalloc::Buffer {
            id,
            lower: lower.unsigned("field 'lower'")?,
            upper: upper.unsigned("field 'upper'")?,
            size: size.unsigned("field 'size'")?,
            alignment: alignment.unsigned("field 'alignment'")?,
            offset: offset
                .map(|o| o.offset("field 'offset'", "None"))
                .transpose()?,
            hint: None,
            gaps: Vec::new(),
            memories: Vec::new(),
            benefit: optional_unsigned(benefit.as_ref(), "benefit")?,
        };
        let alone = telamalloc::Problem::new(vec![inner], None);
        if let Err(why) = alone.check(None) {
            return Err(error(format!("field '{}': {}", why.field, why.message)));
        }
        let mut inner = alone.buffers.into_iter().next().expect("one buffer");
        // Checked against the problem's memories when the problem is made.
        inner.memories = memories.unwrap_or_default();
        Ok(Buffer { inner })
    }

    /// The caller's name for the buffer (kept verbatim in outputs).
    #[getter]
    fn id(&self) -> &str {
        &self.inner.id
    }

    /// First time step at which the buffer is live.
    #[getter]
    fn lower(&self) -> u64 {
        self.inner.lower
    }

    /// First time step at which the buffer is no longer live.
    #[getter]
    fn upper(&self) -> u64 {
        self.inner.upper
    }

    /// Size in bytes.
    #[getter]
    fn size(&self) -> u64 {
        self.inner.size
    }

    /// The offset must be a multiple of this power of two.
    #[getter]
    fn alignment(&self) -> u64 {
        self.inner.alignment
    }

    /// The fixed offset, or None when the allocator chooses.
    #[getter]
    fn offset(&self) -> Option<u64> {
        self.inner.offset
    }

    /// The ids of the memories the buffer may go to, or None for any.
    #[getter]
    fn memories(&self) -> Option<Vec<String>> {
        (!self.inner.memories.is_empty()).then(|| self.inner.memories.clone())
    }

    /// What keeping the buffer on chip is worth to the spill goal (None: its size).
    #[getter]
    fn benefit(&self) -> Option<u64> {
        self.inner.benefit
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let b = &self.inner;
        let id = PyString::new(py, &b.id).repr()?;
        let mut text = format!("Buffer({id}, {}, {}, {}", b.lower, b.upper, b.size);
        if b.alignment != 1 {
            text += &format!(", alignment={}", b.alignment);
        }
        if let Some(offset) = b.offset {
            text += &format!(", offset={offset}");
        }
        if !b.memories.is_empty() {
            text += &format!(", memories={:?}", b.memories);
        }
        if let Some(benefit) = b.benefit {
            text += &format!(", benefit={benefit}");
        }
        Ok(text + ")")
    }
}

/// A memory-planning problem: buffers and, optionally, the capacity to fit.
///
/// ``Problem(buffers, capacity=None, memories=None)`` takes ``Buffer`` objects or tuples
/// ``(id, lower, upper, size[, alignment[, offset]])``, and optionally several memories as
/// tuples ``(id, capacity[, cost])`` (cost per byte, default 0: ``solve`` then places every
/// buffer in one its ``memories`` allow, at the least total cost); ``Problem.from_arrays`` takes numpy
/// arrays without making a Python object per buffer. Either way the problem is checked by the
/// library's rules (unique ids, fixed buffers that do not collide, nothing larger than the
/// capacity, ...) and a broken rule raises ``TelamallocError`` naming ``buffers[i]`` and the
/// field. A problem never changes; ``with_capacity`` gives a copy with another capacity.
#[pyclass(module = "telamalloc", frozen, eq)]
#[derive(Clone, PartialEq)]
pub struct Problem {
    pub(crate) inner: telamalloc::Problem,
}

impl Problem {
    /// Checks `problem` (under its own capacity) with the GIL released, and wraps it.
    pub(crate) fn checked(py: Python<'_>, problem: telamalloc::Problem) -> PyResult<Problem> {
        py.detach(|| problem.check(problem.capacity))
            .map_err(error)?;
        Ok(Problem { inner: problem })
    }
}

#[pymethods]
impl Problem {
    #[new]
    #[pyo3(signature = (buffers, capacity=None, memories=None))]
    fn new(
        py: Python<'_>,
        buffers: &Bound<'_, PyAny>,
        capacity: Option<Integer>,
        memories: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Problem> {
        let capacity = optional_unsigned(capacity.as_ref(), "capacity")?;
        let mut made = Vec::new();
        let items = buffers
            .try_iter()
            .map_err(|e| PyErr::from_type(e.get_type(py), format!("buffers: {}", e.value(py))))?;
        for (i, item) in items.enumerate() {
            made.push(buffer_of(&item?, i)?);
        }
        let memories = match memories {
            Some(memories) => memories_of(memories)?,
            None => Vec::new(),
        };
        Problem::checked(
            py,
            telamalloc::Problem::new(made, capacity).with_memories(memories),
        )
    }

    /// The memories as tuples ``(id, capacity, cost)`` (empty: the one capacity).
    #[getter]
    fn memories(&self) -> Vec<(String, u64, u64)> {
        self.inner
            .memories
            .iter()
            .map(|m| (m.id.clone(), m.capacity, m.cost))
            .collect()
    }

    /// A problem from one-dimensional integer arrays, one value per buffer: ``lower``, ``upper``,
    /// ``size``, and optionally ``alignment`` (default 1) and ``offset`` (a fixed offset; ``-1``,
    /// or ``2**64 - 1`` as in a ``uint64`` array, leaves the buffer to the allocator; any other
    /// negative offset is an error). numpy arrays of every integer dtype (signed or unsigned, 8
    /// to 64 bits, either byte order) are read without a Python object per buffer; lists and
    /// other sequences of ints work too. A value that is not an integer (floats too, even 2.0;
    /// bools), is negative or does not fit in 64 bits raises ``TelamallocError`` naming the column
    /// and index (``size[3]: -4 is negative``). Buffer ``i`` gets the id ``str(i)``.
    #[staticmethod]
    #[pyo3(signature = (lower, upper, size, alignment=None, offset=None, capacity=None))]
    fn from_arrays(
        py: Python<'_>,
        lower: &Bound<'_, PyAny>,
        upper: &Bound<'_, PyAny>,
        size: &Bound<'_, PyAny>,
        alignment: Option<&Bound<'_, PyAny>>,
        offset: Option<&Bound<'_, PyAny>>,
        capacity: Option<Integer>,
    ) -> PyResult<Problem> {
        let capacity = optional_unsigned(capacity.as_ref(), "capacity")?;
        let lower = column(lower, "lower")?;
        let n = lower.len();
        let upper = same_length(column(upper, "upper")?, n, "upper")?;
        let size = same_length(column(size, "size")?, n, "size")?;
        let alignment = match alignment {
            Some(a) => Some(same_length(column(a, "alignment")?, n, "alignment")?),
            None => None,
        };
        let offset = match offset {
            Some(o) => Some(same_length(offset_column(o, "offset")?, n, "offset")?),
            None => None,
        };
        let problem = py.detach(|| {
            let buffers = (0..n)
                .map(|i| telamalloc::Buffer {
                    id: i.to_string(),
                    lower: lower[i],
                    upper: upper[i],
                    size: size[i],
                    alignment: alignment.as_ref().map_or(1, |a| a[i]),
                    offset: offset.as_ref().and_then(|o| o[i]),
                    hint: None,
                    gaps: Vec::new(),
                    memories: Vec::new(),
                    benefit: None,
                })
                .collect();
            telamalloc::Problem::new(buffers, capacity)
        });
        Problem::checked(py, problem)
    }

    /// The same buffers with another capacity (None: none), checked again.
    #[pyo3(signature = (capacity))]
    fn with_capacity(&self, py: Python<'_>, capacity: Option<Integer>) -> PyResult<Problem> {
        let capacity = optional_unsigned(capacity.as_ref(), "capacity")?;
        Problem::checked(py, self.inner.with_capacity(capacity))
    }

    /// The buffers, in order (one new ``Buffer`` object each).
    #[getter]
    fn buffers(&self) -> Vec<Buffer> {
        self.inner
            .buffers
            .iter()
            .map(|b| Buffer { inner: b.clone() })
            .collect()
    }

    /// The capacity in bytes, or None.
    #[getter]
    fn capacity(&self) -> Option<u64> {
        self.inner.capacity
    }

    /// LOAD: the largest total size of the buffers live at one time step, a lower bound on the
    /// peak of any solution.
    #[getter]
    fn load(&self, py: Python<'_>) -> u64 {
        py.detach(|| Timeline::new(&self.inner).load())
    }

    /// The largest ``upper`` of any buffer (0 without buffers).
    #[getter]
    fn horizon(&self) -> u64 {
        self.inner.horizon()
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }

    fn __getitem__(&self, index: isize) -> PyResult<Buffer> {
        let n = self.inner.len() as isize;
        let at = if index < 0 { index + n } else { index };
        if !(0..n).contains(&at) {
            return Err(PyIndexError::new_err(format!(
                "buffer index {index} out of range for {n} buffers"
            )));
        }
        Ok(Buffer {
            inner: self.inner.buffers[at as usize].clone(),
        })
    }

    fn __repr__(&self) -> String {
        let capacity = self
            .inner
            .capacity
            .map_or("None".to_string(), |c| c.to_string());
        format!(
            "<telamalloc.Problem: {} buffers, capacity {capacity}>",
            self.inner.len()
        )
    }
}

/// The memories `items` stand for: tuples `(id, capacity[, cost])`.
fn memories_of(items: &Bound<'_, PyAny>) -> PyResult<Vec<telamalloc::Memory>> {
    let py = items.py();
    let mut memories = Vec::new();
    let items = items
        .try_iter()
        .map_err(|e| PyErr::from_type(e.get_type(py), format!("memories: {}", e.value(py))))?;
    for (k, item) in items.enumerate() {
        let item = item?;
        let expected = || {
            PyTypeError::new_err(format!(
                "memories[{k}]: expected a tuple (id, capacity[, cost])"
            ))
        };
        let tuple = item.cast::<PyTuple>().map_err(|_| expected())?;
        if !(2..=3).contains(&tuple.len()) {
            return Err(expected());
        }
        let id: String = tuple.get_item(0)?.extract().map_err(|_| {
            PyTypeError::new_err(format!("memories[{k}]: field 'id': expected a str"))
        })?;
        let number = |i: usize, name: &str| -> PyResult<u64> {
            tuple
                .get_item(i)?
                .extract::<Integer>()
                .map_err(|e| {
                    PyErr::from_type(e.get_type(py), format!("memories[{k}]: {}", e.value(py)))
                })?
                .unsigned(&format!("memories[{k}]: field '{name}'"))
        };
        let capacity = number(1, "capacity")?;
        let cost = if tuple.len() > 2 {
            number(2, "cost")?
        } else {
            0
        };
        memories.push(telamalloc::Memory::new(id, capacity, cost));
    }
    Ok(memories)
}

/// `values` if it has `n` of them, else an error naming the column.
fn same_length<T>(values: Vec<T>, n: usize, name: &str) -> PyResult<Vec<T>> {
    if values.len() != n {
        return Err(error(format!(
            "{name} has {} values, lower has {n}",
            values.len()
        )));
    }
    Ok(values)
}

/// The buffer `item` stands for: a `Buffer`, or a tuple `(id, lower, upper, size[, alignment[,
/// offset]])`.
fn buffer_of(item: &Bound<'_, PyAny>, i: usize) -> PyResult<telamalloc::Buffer> {
    if let Ok(buffer) = item.cast::<Buffer>() {
        return Ok(buffer.get().inner.clone());
    }
    let expected = || {
        PyTypeError::new_err(format!(
            "buffers[{i}]: expected a Buffer or a tuple (id, lower, upper, size[, alignment[, offset]])"
        ))
    };
    let tuple = item.cast::<PyTuple>().map_err(|_| expected())?;
    if !(4..=6).contains(&tuple.len()) {
        return Err(expected());
    }
    let field = |k: usize| tuple.get_item(k);
    let number = |k: usize, name: &str| -> PyResult<u64> {
        field(k)?
            .extract::<Integer>()?
            .unsigned(&format!("field '{name}'"))
    };
    let read = || -> PyResult<telamalloc::Buffer> {
        let id = field(0)?;
        let Ok(id) = id.extract::<String>() else {
            let what = describe(&id)?;
            return Err(PyTypeError::new_err(format!(
                "field 'id': expected a str, got {what}"
            )));
        };
        let offset = if tuple.len() > 5 {
            field(5)?.extract::<Option<Integer>>()?
        } else {
            None
        };
        Ok(telamalloc::Buffer {
            id,
            lower: number(1, "lower")?,
            upper: number(2, "upper")?,
            size: number(3, "size")?,
            alignment: if tuple.len() > 4 {
                number(4, "alignment")?
            } else {
                1
            },
            offset: offset
                .map(|o| o.offset("field 'offset'", "None"))
                .transpose()?,
            hint: None,
            gaps: Vec::new(),
            memories: Vec::new(),
            benefit: None,
        })
    };
    read().map_err(|e| {
        let py = item.py();
        PyErr::from_type(e.get_type(py), format!("buffers[{i}]: {}", e.value(py)))
    })
}
