//! Typed errors, modelled on Tkrzw's status codes so that callers (the server,
//! the bindings) can map each one to their own wire codes without parsing text.
//! Tkrzw's status table itself (codes and names, [`code`], [`STATUS_NAMES`])
//! is here too, written once for every binding.

use std::ffi::CStr;

/// The error of every fallible engine call.
///
/// Each variant names what happened, so callers branch on the variant and never
/// on the message. Several variants share one Tkrzw status ([`Error::status_name`]):
/// the five ways an operation is infeasible are told apart here because the
/// memcached protocols answer each differently (EXISTS, CLIENT_ERROR, SERVER_ERROR).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The record (or the next record of an iterator) does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// An `add`-style call met an existing record.
    #[error("duplication: {0}")]
    Duplication(String),
    /// A compare-and-swap whose CAS did not match the record's.
    #[error("infeasible: the CAS does not match")]
    CasMismatch,
    /// A compare-exchange whose record did not hold the expected value.
    #[error("infeasible: {0}")]
    ValueMismatch(String),
    /// An increment of a value that is not a number.
    #[error("infeasible: the value is not a decimal number")]
    NotNumeric,
    /// An increment whose result does not fit the number type.
    #[error("infeasible: the increment overflows")]
    Overflow,
    /// A record larger than the store (or the caller's limit) can hold.
    #[error("infeasible: a record of {size} bytes exceeds the limit of {cap} bytes")]
    TooLarge { size: u64, cap: u64 },
    /// A capped cache opened with `disable_evictions=true` (memcached's
    /// `-M`) is full of live records: the write is refused instead of
    /// evicting one.
    #[error("infeasible: no room for a record of {size} bytes: the cache is full and evictions are disabled")]
    NoMemory { size: u64 },
    /// Any other operation that cannot be done in the current state.
    #[error("infeasible: {0}")]
    Infeasible(String),
    /// The caller passed something malformed: a bad name string, an unknown parameter.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// Data on disk failed its checks (bad magic, bad CRC in the middle of a file).
    #[error("broken data: {0}")]
    BrokenData(String),
    /// The operating system refused an I/O call.
    #[error("system error: {0}")]
    System(String),
    /// The disk (or the quota) has no room for a write. The write was
    /// refused before it changed anything: it is neither stored nor
    /// readable, and the same write succeeds once space returns.
    #[error("out of space: {0}")]
    NoSpace(String),
    /// The engine does not support this call (e.g. `last()` on a hash iterator).
    #[error("not implemented: {0}")]
    NotImplemented(String),
    /// Writing to a database opened read-only, or a closed database.
    #[error("precondition error: {0}")]
    Precondition(String),
}

impl Error {
    /// A short lower-case name of the status, as Tkrzw prints it.
    pub fn status_name(&self) -> &'static str {
        match self {
            Error::NotFound(_) => "NOT_FOUND_ERROR",
            Error::Duplication(_) => "DUPLICATION_ERROR",
            Error::CasMismatch
            | Error::ValueMismatch(_)
            | Error::NotNumeric
            | Error::Overflow
            | Error::TooLarge { .. }
            | Error::NoMemory { .. }
            | Error::Infeasible(_) => "INFEASIBLE_ERROR",
            Error::InvalidArgument(_) => "INVALID_ARGUMENT_ERROR",
            Error::BrokenData(_) => "BROKEN_DATA_ERROR",
            Error::System(_) | Error::NoSpace(_) => "SYSTEM_ERROR",
            Error::NotImplemented(_) => "NOT_IMPLEMENTED_ERROR",
            Error::Precondition(_) => "PRECONDITION_ERROR",
        }
    }

    /// Tkrzw's numeric status code (`tkrzw::Status::Code`) for bindings.
    pub fn status_code(&self) -> i32 {
        code_of_name(self.status_name())
    }

    /// True for every variant Tkrzw reports as `INFEASIBLE_ERROR`.
    pub fn is_infeasible(&self) -> bool {
        self.status_name() == "INFEASIBLE_ERROR"
    }

    /// True for `NotFound`, the one error callers routinely branch on.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound(_))
    }
}

impl Error {
    /// An OS error, `context` saying what was being done: a full disk or
    /// quota is `NoSpace` (callers tell it from a failing disk), anything
    /// else `System`. Every I/O error of the engine is made here.
    pub(crate) fn from_io(context: std::fmt::Arguments<'_>, e: &std::io::Error) -> Error {
        let text = format!("{context}{e}");
        match e.raw_os_error() {
            Some(libc::ENOSPC | libc::EDQUOT) => Error::NoSpace(text),
            _ => Error::System(text),
        }
    }
}

/// An OS error on `path` while doing `what` (`Error::from_io`): what the
/// file layer (`io.rs`) and the store lock (`lock.rs`) both report.
pub(crate) fn io_err(what: &str, path: &std::path::Path, e: std::io::Error) -> Error {
    Error::from_io(format_args!("{what} {}: ", path.display()), &e)
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::from_io(format_args!(""), &e)
    }
}

/// Shorthand used across the crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Writes Tkrzw's status table once: the constants of [`code`], and the
/// names by code, as Rust and as C strings.
macro_rules! tkrzw_statuses {
    ($($(#[doc = $doc:literal])* $name:ident = $code:literal,)*) => {
        /// Tkrzw's status codes (`tkrzw::Status::Code`), in its numbering: what
        /// the bindings (C, Python, Ruby, and Go and Java through C) return.
        pub mod code {
            $($(#[doc = $doc])* pub const $name: i32 = $code;)*
        }

        /// The codes' names as Tkrzw spells them, indexed by code
        /// (`STATUS_NAMES[7]` is `NOT_FOUND_ERROR`).
        pub const STATUS_NAMES: &[&str] = &[$(stringify!($name)),*];

        /// [`STATUS_NAMES`] as C strings, for the C library's static answers.
        const STATUS_C_NAMES: &[&CStr] = &[$(c_str(concat!(stringify!($name), "\0"))),*];

        // The index of every name is its code.
        const _: () = {
            let mut i = 0;
            $(assert!(code::$name == i, "Tkrzw's codes are 0, 1, 2, ... in order"); i += 1;)*
            let _ = i;
        };
    };
}

tkrzw_statuses! {
    /// Success.
    SUCCESS = 0,
    /// Generic error whose cause is unknown (also: a panic caught at a binding's boundary).
    UNKNOWN_ERROR = 1,
    /// Generic error from the operating system.
    SYSTEM_ERROR = 2,
    /// The feature is not implemented (e.g. `last` on a hash database).
    NOT_IMPLEMENTED_ERROR = 3,
    /// A precondition is not met (e.g. writing to a read-only database).
    PRECONDITION_ERROR = 4,
    /// A given argument is invalid.
    INVALID_ARGUMENT_ERROR = 5,
    /// The operation was canceled.
    CANCELED_ERROR = 6,
    /// The record does not exist.
    NOT_FOUND_ERROR = 7,
    /// The operation is not permitted.
    PERMISSION_ERROR = 8,
    /// The operation is infeasible (e.g. a compare-exchange whose expectation failed).
    INFEASIBLE_ERROR = 9,
    /// The record exists already (a set without overwrite).
    DUPLICATION_ERROR = 10,
    /// Data on disk failed its checks.
    BROKEN_DATA_ERROR = 11,
    /// Error caused by networking failure.
    NETWORK_ERROR = 12,
    /// Generic error caused by the application logic.
    APPLICATION_ERROR = 13,
}

const fn c_str(with_nul: &str) -> &CStr {
    match CStr::from_bytes_with_nul(with_nul.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("a status name holds no NUL"),
    }
}

/// The code of a status name; a name not in Tkrzw's table (one the engine
/// may add later) is `UNKNOWN_ERROR`, never a failure.
pub fn code_of_name(name: &str) -> i32 {
    STATUS_NAMES
        .iter()
        .position(|n| *n == name)
        .map_or(code::UNKNOWN_ERROR, |i| i as i32)
}

/// The name of a status code, `None` for a number outside the table.
pub fn code_name(code: i32) -> Option<&'static str> {
    usize::try_from(code)
        .ok()
        .and_then(|i| STATUS_NAMES.get(i))
        .copied()
}

/// [`code_name`] as a static C string.
pub fn code_name_c(code: i32) -> Option<&'static CStr> {
    usize::try_from(code)
        .ok()
        .and_then(|i| STATUS_C_NAMES.get(i))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_tkrzws() {
        assert_eq!(STATUS_NAMES.len(), 14);
        assert_eq!(STATUS_C_NAMES.len(), STATUS_NAMES.len());
        assert_eq!(code::NOT_FOUND_ERROR, 7);
        assert_eq!(code::APPLICATION_ERROR, 13);
        assert_eq!(code_name(9), Some("INFEASIBLE_ERROR"));
        assert_eq!(code_name(14), None);
        assert_eq!(code_name(-1), None);
        assert_eq!(code_name_c(7), Some(c"NOT_FOUND_ERROR"));
        assert_eq!(code_name_c(-1), None);
        assert_eq!(code_of_name("DUPLICATION_ERROR"), code::DUPLICATION_ERROR);
        assert_eq!(code_of_name("SOMETHING_NEW"), code::UNKNOWN_ERROR);
        for (i, name) in STATUS_NAMES.iter().enumerate() {
            assert_eq!(code_of_name(name), i as i32);
            assert_eq!(code_name_c(i as i32).unwrap().to_str(), Ok(*name));
        }
    }

    #[test]
    fn every_error_has_a_code_of_the_table() {
        let cases = [
            (Error::NotFound("x".into()), code::NOT_FOUND_ERROR),
            (Error::Duplication("x".into()), code::DUPLICATION_ERROR),
            (Error::CasMismatch, code::INFEASIBLE_ERROR),
            (Error::NoMemory { size: 1 }, code::INFEASIBLE_ERROR),
            (
                Error::InvalidArgument("x".into()),
                code::INVALID_ARGUMENT_ERROR,
            ),
            (Error::BrokenData("x".into()), code::BROKEN_DATA_ERROR),
            (Error::NoSpace("x".into()), code::SYSTEM_ERROR),
            (Error::System("x".into()), code::SYSTEM_ERROR),
            (
                Error::NotImplemented("x".into()),
                code::NOT_IMPLEMENTED_ERROR,
            ),
            (Error::Precondition("x".into()), code::PRECONDITION_ERROR),
        ];
        for (e, want) in cases {
            assert_eq!(e.status_code(), want, "{e:?}");
        }
    }
}
