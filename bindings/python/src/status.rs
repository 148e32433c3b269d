//! `Status` and `StatusException`, with Tkrzw's status codes, so code written
//! for tkrzw-python compares results the same way (`status == Status.SUCCESS`).

use pyo3::basic::CompareOp;
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

pub use memstored_engine::status::code::{
    DUPLICATION_ERROR, INFEASIBLE_ERROR, INVALID_ARGUMENT_ERROR, NOT_FOUND_ERROR,
    NOT_IMPLEMENTED_ERROR, PRECONDITION_ERROR, SUCCESS,
};
use memstored_engine::status::{code_name, code_of_name, STATUS_NAMES};

/// The name of a code, as `Status.CodeName` prints it.
fn name_of(code: i32) -> &'static str {
    code_name(code).unwrap_or("unknown")
}

/// Gives the `Status` class its constants (`Status.NOT_FOUND_ERROR`, ...)
/// from the engine's table of Tkrzw's codes.
pub fn add_codes(status: &Bound<'_, PyAny>) -> PyResult<()> {
    for (code, name) in STATUS_NAMES.iter().enumerate() {
        status.setattr(*name, code as i32)?;
    }
    Ok(())
}

/// The result of an operation: a code and a message.
#[pyclass(module = "memstored")]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    code: i32,
    message: String,
}

impl Status {
    pub fn new(code: i32, message: impl Into<String>) -> Status {
        Status {
            code,
            message: message.into(),
        }
    }

    pub fn ok() -> Status {
        Status::new(SUCCESS, "")
    }

    pub fn code(&self) -> i32 {
        self.code
    }

    /// The status of an engine error. Only `status_name` is consulted, so new
    /// engine error variants need no change here.
    pub fn from_engine(e: &memstored_engine::Error) -> Status {
        Status::new(code_of_name(e.status_name()), e.to_string())
    }

    /// The status of an engine result that carries nothing on success.
    pub fn of<T>(r: Result<T, Status>) -> Status {
        r.err().unwrap_or_else(Status::ok)
    }

    /// `Ok` for a success, else the status as a `StatusException`.
    pub fn check(self) -> PyResult<()> {
        if self.code == SUCCESS {
            Ok(())
        } else {
            Err(self.into_err())
        }
    }

    /// A `StatusException` carrying this status, built lazily so that it can
    /// be made without the GIL.
    pub fn into_err(self) -> PyErr {
        PyErr::new::<StatusException, _>((self,))
    }
}

/// tkrzw-python's optional `status` argument: the outcome's status is
/// written into it, and the value is returned, or None on failure.
pub fn settle<T>(status: Option<&Bound<'_, Status>>, r: Result<T, Status>) -> PyResult<Option<T>> {
    let (value, st) = match r {
        Ok(v) => (Some(v), Status::ok()),
        Err(st) => (None, st),
    };
    if let Some(s) = status {
        *s.try_borrow_mut()? = st;
    }
    Ok(value)
}

impl From<memstored_engine::Error> for Status {
    fn from(e: memstored_engine::Error) -> Status {
        Status::from_engine(&e)
    }
}

#[pymethods]
impl Status {
    #[new]
    #[pyo3(signature = (code = SUCCESS, message = String::new()))]
    fn py_new(code: i32, message: String) -> Status {
        Status::new(code, message)
    }

    fn __repr__(&self) -> String {
        format!("<memstored.Status: {}>", self.__str__())
    }

    fn __str__(&self) -> String {
        if self.message.is_empty() {
            name_of(self.code).to_string()
        } else {
            format!("{}: {}", name_of(self.code), self.message)
        }
    }

    /// Compares codes with another Status or an int; anything else compares
    /// as a code above every real one, as tkrzw-python does.
    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> bool {
        let rhs = if let Ok(s) = other.cast::<Status>() {
            s.borrow().code
        } else {
            other.extract::<i32>().unwrap_or(i32::MAX)
        };
        op.matches(self.code.cmp(&rhs))
    }

    fn __hash__(&self) -> u64 {
        self.code as u64
    }

    /// Sets the code and the message.
    #[pyo3(name = "Set", signature = (code = SUCCESS, message = String::new()))]
    fn set(&mut self, code: i32, message: String) {
        self.code = code;
        self.message = message;
    }

    /// Takes `other`'s code and message only if this status is a success.
    #[pyo3(name = "Join")]
    fn join(&mut self, other: &Bound<'_, Status>) {
        if self.code == SUCCESS {
            *self = other.borrow().clone();
        }
    }

    #[pyo3(name = "GetCode")]
    fn get_code(&self) -> i32 {
        self.code
    }

    #[pyo3(name = "GetMessage")]
    fn get_message(&self) -> String {
        self.message.clone()
    }

    #[pyo3(name = "IsOK")]
    fn is_ok(&self) -> bool {
        self.code == SUCCESS
    }

    /// Raises `StatusException` unless this is a success.
    #[pyo3(name = "OrDie")]
    fn or_die(&self) -> PyResult<()> {
        self.clone().check()
    }

    #[staticmethod]
    #[pyo3(name = "CodeName")]
    fn code_name(code: i32) -> &'static str {
        name_of(code)
    }
}

/// The exception raised by `Status.OrDie` and by calls that return a value
/// rather than a status (`db[key]`, `Search`, calls on a closed database).
#[pyclass(extends = PyRuntimeError, module = "memstored")]
pub struct StatusException {
    status: Py<Status>,
}

#[pymethods]
impl StatusException {
    #[new]
    fn py_new(status: Py<Status>) -> StatusException {
        StatusException { status }
    }

    #[pyo3(name = "GetStatus")]
    fn get_status(&self, py: Python<'_>) -> Py<Status> {
        self.status.clone_ref(py)
    }

    fn __str__(&self, py: Python<'_>) -> String {
        self.status.borrow(py).__str__()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        format!("<memstored.StatusException: {}>", self.__str__(py))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_keep_their_tkrzw_codes() {
        let e = memstored_engine::Error::NotFound("x".into());
        assert_eq!(Status::from_engine(&e).code, NOT_FOUND_ERROR);
        let e = memstored_engine::Error::InvalidArgument("x".into());
        assert_eq!(Status::from_engine(&e).code, INVALID_ARGUMENT_ERROR);
        assert_eq!(name_of(9), "INFEASIBLE_ERROR");
        assert_eq!(name_of(-1), "unknown");
    }
}
