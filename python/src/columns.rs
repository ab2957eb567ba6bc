//! Integer columns from Python: one-dimensional numpy arrays of any integer type (read in place,
//! no per-element Python object), or anything `numpy.asarray` turns into one (lists, tuples).

use crate::error;
use numpy::{Element, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// A column's values, in order; each must fit in 64 bits unsigned.
pub(crate) fn column(column: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<u64>> {
    read(column, name, |value, i| {
        u64::try_from(value).map_err(|_| error(format!("{name}[{i}]: {value} is negative")))
    })
}

/// A column's values, in order, where a negative value (`-1`), or `2**64 - 1` in a `uint64`
/// array, means "none" (e.g. a buffer without a fixed offset).
pub(crate) fn optional_column(column: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<Option<u64>>> {
    read(column, name, |value, _| {
        Ok(u64::try_from(value).ok().filter(|&v| v != u64::MAX))
    })
}

/// Reads `column` as an integer array (converting other sequences with `numpy.asarray`), each
/// value (widened, with its index) through `each`.
fn read<O>(
    column: &Bound<'_, PyAny>,
    name: &str,
    each: impl Fn(i128, usize) -> PyResult<O>,
) -> PyResult<Vec<O>> {
    if let Some(values) = read_array(column, &each)? {
        return Ok(values);
    }
    let numpy = column.py().import("numpy")?;
    let array = numpy.call_method1("asarray", (column,))?;
    if let Some(values) = read_array(&array, &each)? {
        return Ok(values);
    }
    let dtype = array.getattr("dtype")?.str()?;
    let ndim: usize = array.getattr("ndim")?.extract()?;
    let what = if ndim == 1 {
        format!("an array of {dtype}")
    } else {
        format!("a {ndim}-dimensional array")
    };
    Err(PyTypeError::new_err(format!(
        "{name}: expected a one-dimensional array of integers, got {what}"
    )))
}

/// The values of a one-dimensional integer numpy array through `each`; `None` when `column` is
/// not one.
fn read_array<O>(
    column: &Bound<'_, PyAny>,
    each: &impl Fn(i128, usize) -> PyResult<O>,
) -> PyResult<Option<Vec<O>>> {
    macro_rules! try_types {
        ($($t:ty),*) => {
            $(
                if let Ok(array) = column.extract::<PyReadonlyArray1<'_, $t>>() {
                    return convert(&array, each).map(Some);
                }
            )*
        };
    }
    try_types!(u64, i64, u32, i32, u16, i16, u8, i8);
    Ok(None)
}

/// Each value of `array`, widened to `i128`, through `each`.
fn convert<T, O>(
    array: &PyReadonlyArray1<'_, T>,
    each: &impl Fn(i128, usize) -> PyResult<O>,
) -> PyResult<Vec<O>>
where
    T: Element + Copy + Into<i128>,
{
    let mut values = Vec::with_capacity(array.len());
    for (i, &value) in array.as_array().iter().enumerate() {
        values.push(each(value.into(), i)?);
    }
    Ok(values)
}
