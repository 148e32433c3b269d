//! Python objects to key and value bytes, and back, as tkrzw-python converts
//! them: bytes as they are, str as UTF-8, anything else through `str()`.

use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyString};
use std::borrow::Cow;

/// The bytes of a key or value. `bytes` and `str` are borrowed, not copied:
/// both are immutable, so the borrow stays valid with the GIL released.
/// `bytearray` is copied, since another thread could resize it meanwhile.
pub fn data<'a>(obj: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(b.as_bytes()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Cow::Borrowed(s.to_str()?.as_bytes()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Cow::Owned(b.to_vec()));
    }
    if obj.is_none() {
        return Ok(Cow::Borrowed(b""));
    }
    Ok(Cow::Owned(obj.str()?.to_str()?.as_bytes().to_vec()))
}

/// Whether results should be `str` because the caller passed a `str`
/// (`db["k"]` gives a str, `db[b"k"]` bytes).
pub fn is_str(obj: &Bound<'_, PyAny>) -> bool {
    obj.is_instance_of::<PyString>()
}

pub fn to_bytes<'py>(py: Python<'py>, v: &[u8]) -> Bound<'py, PyAny> {
    PyBytes::new(py, v).into_any()
}

/// A str from stored bytes; invalid UTF-8 is replaced, never an error.
pub fn to_str<'py>(py: Python<'py>, v: &[u8]) -> Bound<'py, PyAny> {
    PyString::new(py, &String::from_utf8_lossy(v)).into_any()
}

/// `to_str` or `to_bytes`, by `as_str`.
pub fn to_py<'py>(py: Python<'py>, v: &[u8], as_str: bool) -> Bound<'py, PyAny> {
    if as_str {
        to_str(py, v)
    } else {
        to_bytes(py, v)
    }
}
