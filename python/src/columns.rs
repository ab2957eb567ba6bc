//! Integers from Python: columns (one-dimensional numpy arrays of any integer dtype, either byte
//! order, 8 to 64 bits, read in place when native; lists and other sequences, read through
//! `numpy.asarray` or value by value) and single arguments ([`Integer`]). A value that is not an
//! integer, is negative or does not fit in 64 bits is refused with its field, and its index in a
//! column, in the message: never read as something else.

use crate::error;
use numpy::{Element, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyInt};

/// The longest text of a refused value a message quotes (a long list is cut there).
const QUOTE_LIMIT: usize = 60;

/// A Python value read as an integer: what a column's element or an argument holds.
#[derive(Clone, Debug)]
pub(crate) enum Integer {
    /// An integer between `i64::MIN` and `u64::MAX`.
    Fits(i128),
    /// An integer outside that range: its sign and its decimal digits.
    Huge {
        /// Whether it is below zero.
        negative: bool,
        /// Its value in decimal.
        digits: String,
    },
    /// Not an integer (a float, a string, a bool, None, ...): its text and type, for messages.
    Other(String),
}

/// Why a value was refused, in words that follow its label (`lower[3]: `).
enum Refusal {
    /// The value is not an integer (a TypeError for an argument).
    NotInteger(String),
    /// The value is an integer out of range (negative, or beyond 64 bits).
    OutOfRange(String),
}

impl Refusal {
    /// The refusal as the error of a column's element: a `TypeError` for a non-integer (as
    /// an array of floats always was), a `TelamallocError` for an integer out of range.
    fn in_column(self, name: &str, i: usize) -> PyErr {
        self.in_argument(&format!("{name}[{i}]"))
    }

    /// The refusal as the error of an argument or a field: a `TypeError` for a non-integer, a
    /// `TelamallocError` for an integer out of range.
    fn in_argument(self, label: &str) -> PyErr {
        match self {
            Refusal::NotInteger(why) => PyTypeError::new_err(format!("{label}: {why}")),
            Refusal::OutOfRange(why) => error(format!("{label}: {why}")),
        }
    }
}

impl Integer {
    /// Reads `value`: a Python int, a numpy integer scalar, or anything else with `__index__`,
    /// except bools (a bool is refused, not read as 0 or 1).
    pub(crate) fn of(value: &Bound<'_, PyAny>) -> PyResult<Integer> {
        if value.is_instance_of::<PyBool>() {
            return Ok(Integer::Other(describe(value)?));
        }
        let index = match value.cast::<PyInt>() {
            Ok(int) => int.clone().into_any(),
            Err(_) => match value
                .py()
                .import("operator")?
                .call_method1("index", (value,))
            {
                Ok(index) => index,
                Err(e) if e.is_instance_of::<PyTypeError>(value.py()) => {
                    return Ok(Integer::Other(describe(value)?));
                }
                Err(e) => return Err(e),
            },
        };
        if let Ok(v) = index.extract::<i64>() {
            return Ok(Integer::Fits(v.into()));
        }
        if let Ok(v) = index.extract::<u64>() {
            return Ok(Integer::Fits(v.into()));
        }
        Ok(Integer::Huge {
            negative: index.lt(0)?,
            digits: index.str()?.to_string(),
        })
    }

    /// The value as a `u64`; `negative_hint` follows the message of a negative one.
    fn to_u64(&self, negative_hint: &str) -> Result<u64, Refusal> {
        match self {
            Integer::Fits(v) => {
                u64::try_from(*v).map_err(|_| out_of_range(*v < 0, &v.to_string(), negative_hint))
            }
            Integer::Huge { negative, digits } => {
                Err(out_of_range(*negative, digits, negative_hint))
            }
            Integer::Other(what) => Err(Refusal::NotInteger(format!(
                "expected an integer, got {what}"
            ))),
        }
    }

    /// The value of the argument or field `label` as a `u64`: a `TypeError` when it is not an
    /// integer, a `TelamallocError` when negative or beyond 64 bits (both naming `label`).
    pub(crate) fn unsigned(&self, label: &str) -> PyResult<u64> {
        self.to_u64("").map_err(|why| why.in_argument(label))
    }

    /// A fixed offset: [`Integer::unsigned`], where a negative value's message says what leaves
    /// the buffer to the allocator (`free`, e.g. `None`).
    pub(crate) fn offset(&self, label: &str, free: &str) -> PyResult<u64> {
        self.to_u64(&format!(" ({free} leaves the buffer to the allocator)"))
            .map_err(|why| why.in_argument(label))
    }
}

impl From<u64> for Integer {
    fn from(value: u64) -> Integer {
        Integer::Fits(value.into())
    }
}

impl<'a, 'py> FromPyObject<'a, 'py> for Integer {
    type Error = PyErr;

    /// Never fails on a value that is not an integer: the function taking the argument refuses
    /// it, with the argument's name ([`Integer::unsigned`]).
    fn extract(value: Borrowed<'a, 'py, PyAny>) -> PyResult<Integer> {
        Integer::of(&value.to_owned())
    }
}

/// The argument `label` (None: none) as a `u64`; see [`Integer::unsigned`].
pub(crate) fn optional_unsigned(value: Option<&Integer>, label: &str) -> PyResult<Option<u64>> {
    value.map(|v| v.unsigned(label)).transpose()
}

/// The refusal of an integer out of the range of `u64`, negative or not, in decimal `digits`.
fn out_of_range(negative: bool, digits: &str, negative_hint: &str) -> Refusal {
    Refusal::OutOfRange(if negative {
        format!("{digits} is negative{negative_hint}")
    } else {
        format!("{digits} does not fit in 64 bits")
    })
}

/// `value` (a refused one), for messages: its text (a numpy scalar's as the Python value it
/// holds, cut at [`QUOTE_LIMIT`] characters) and its type, `1.5 (float)`.
pub(crate) fn describe(value: &Bound<'_, PyAny>) -> PyResult<String> {
    let numpy_scalar = value
        .py()
        .import("numpy")
        .and_then(|numpy| value.is_instance(&numpy.getattr("generic")?))
        .unwrap_or(false);
    let plain = if numpy_scalar {
        value.call_method0("item").unwrap_or_else(|_| value.clone())
    } else {
        value.clone()
    };
    let mut text = plain.repr()?.to_string();
    if text.chars().count() > QUOTE_LIMIT {
        text = text.chars().take(QUOTE_LIMIT).collect::<String>() + "...";
    }
    let kind = value.get_type().name()?.to_string();
    Ok(format!("{text} ({kind})"))
}

/// A column's values, in order; each must be an integer that fits in 64 bits unsigned.
pub(crate) fn column(column: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<u64>> {
    read(column, name, "", |value| u64::try_from(value).ok())
}

/// A column of fixed offsets, in order, where `-1`, or `2**64 - 1` (a `uint64` array's `-1`),
/// means "none" (the allocator places the buffer); any other negative value is refused.
pub(crate) fn offset_column(column: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<Option<u64>>> {
    let hint = " (-1 leaves the buffer to the allocator)";
    read(column, name, hint, |value| match value {
        -1 => Some(None),
        v if v == i128::from(u64::MAX) => Some(None),
        v => u64::try_from(v).ok().map(Some),
    })
}

/// Reads `column`, each value through `each` (`None`: refused, with `negative_hint` after the
/// message of a negative value; a non-integer or one beyond 64 bits is refused before `each`):
/// an integer numpy array in place
/// (a copy first when its byte order is not the machine's), other sequences through
/// `numpy.asarray` when that makes an integer array, else value by value as given (numpy would
/// turn a list of ints and strings into strings, a list too large for `int64` into floats).
fn read<O>(
    column: &Bound<'_, PyAny>,
    name: &str,
    negative_hint: &str,
    each: impl Fn(i128) -> Option<O>,
) -> PyResult<Vec<O>> {
    let numpy = column.py().import("numpy")?;
    let is_array = column.is_instance(&numpy.getattr("ndarray")?)?;
    let array = if is_array {
        column.clone()
    } else {
        match numpy.call_method1("asarray", (column,)) {
            Ok(array) => array,
            // Ragged nesting, say: the element that is not an integer says so.
            Err(_) => return read_each(column, name, negative_hint, each),
        }
    };
    let ndim: usize = array.getattr("ndim")?.extract()?;
    if ndim != 1 {
        return Err(PyTypeError::new_err(format!(
            "{name}: expected a one-dimensional array of integers, got a {ndim}-dimensional array"
        )));
    }
    let dtype = array.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    if kind == "i" || kind == "u" {
        let native = if dtype.getattr("isnative")?.extract()? {
            array.clone()
        } else {
            let native_order = dtype.call_method1("newbyteorder", ("=",))?;
            array.call_method1("astype", (native_order,))?
        };
        if let Some(values) = read_array(&native, name, negative_hint, &each)? {
            return Ok(values);
        }
    }
    read_each(
        if is_array { &array } else { column },
        name,
        negative_hint,
        each,
    )
}

/// Reads `sequence` one Python value at a time, each through `each`.
fn read_each<O>(
    sequence: &Bound<'_, PyAny>,
    name: &str,
    negative_hint: &str,
    each: impl Fn(i128) -> Option<O>,
) -> PyResult<Vec<O>> {
    let items = sequence.try_iter().map_err(|e| {
        let py = sequence.py();
        PyErr::from_type(e.get_type(py), format!("{name}: {}", e.value(py)))
    })?;
    let mut values = Vec::new();
    for (i, item) in items.enumerate() {
        let integer = Integer::of(&item?)?;
        let value = match integer {
            Integer::Fits(v) => each(v),
            _ => None,
        };
        match value {
            Some(value) => values.push(value),
            None => return Err(refused(&integer, name, i, negative_hint)),
        }
    }
    Ok(values)
}

/// The error for `integer`, refused at `name[i]`.
fn refused(integer: &Integer, name: &str, i: usize, negative_hint: &str) -> PyErr {
    match integer.to_u64(negative_hint) {
        Err(why) => why.in_column(name, i),
        // In range, yet refused by the column (none is, today): say what was read.
        Ok(v) => error(format!("{name}[{i}]: {v} is not accepted here")),
    }
}

/// The values of a one-dimensional native-endian integer numpy array through `each`; `None`
/// when `column` is not one.
fn read_array<O>(
    column: &Bound<'_, PyAny>,
    name: &str,
    negative_hint: &str,
    each: &impl Fn(i128) -> Option<O>,
) -> PyResult<Option<Vec<O>>> {
    macro_rules! try_types {
        ($($t:ty),*) => {
            $(
                if let Ok(array) = column.extract::<PyReadonlyArray1<'_, $t>>() {
                    return convert(&array, name, negative_hint, each).map(Some);
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
    name: &str,
    negative_hint: &str,
    each: &impl Fn(i128) -> Option<O>,
) -> PyResult<Vec<O>>
where
    T: Element + Copy + Into<i128>,
{
    let mut values = Vec::with_capacity(array.len());
    for (i, &value) in array.as_array().iter().enumerate() {
        match each(value.into()) {
            Some(value) => values.push(value),
            None => {
                return Err(refused(
                    &Integer::Fits(value.into()),
                    name,
                    i,
                    negative_hint,
                ))
            }
        }
    }
    Ok(values)
}
