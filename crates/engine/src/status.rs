//! Typed errors, modelled on Tkrzw's status codes so that callers (the server,
//! the bindings) can map each one to their own wire codes without parsing text.

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
        match self.status_name() {
            "SYSTEM_ERROR" => 2,
            "NOT_IMPLEMENTED_ERROR" => 3,
            "PRECONDITION_ERROR" => 4,
            "INVALID_ARGUMENT_ERROR" => 5,
            "NOT_FOUND_ERROR" => 7,
            "INFEASIBLE_ERROR" => 9,
            "DUPLICATION_ERROR" => 10,
            "BROKEN_DATA_ERROR" => 11,
            _ => 1,
        }
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
