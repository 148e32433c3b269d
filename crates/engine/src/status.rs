//! Typed errors, modelled on Tkrzw's status codes so that callers (the server,
//! the bindings) can map each one to their own wire codes without parsing text.

/// The error of every fallible engine call.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// The record (or the next record of an iterator) does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// An `add`-style call met an existing record.
    #[error("duplication: {0}")]
    Duplication(String),
    /// The operation cannot be done in the current state: a compare-and-swap
    /// mismatch, a non-numeric value given to increment, a record too large for a cache.
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
            Error::Infeasible(_) => "INFEASIBLE_ERROR",
            Error::InvalidArgument(_) => "INVALID_ARGUMENT_ERROR",
            Error::BrokenData(_) => "BROKEN_DATA_ERROR",
            Error::System(_) => "SYSTEM_ERROR",
            Error::NotImplemented(_) => "NOT_IMPLEMENTED_ERROR",
            Error::Precondition(_) => "PRECONDITION_ERROR",
        }
    }

    /// True for the `Infeasible` of a compare-and-swap whose CAS did not match
    /// (as opposed to, say, a non-numeric value given to increment).
    pub fn is_cas_mismatch(&self) -> bool {
        matches!(self, Error::Infeasible(m) if m == CAS_MISMATCH)
    }

    /// True for `NotFound`, the one error callers routinely branch on.
    pub fn is_not_found(&self) -> bool {
        matches!(self, Error::NotFound(_))
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::System(e.to_string())
    }
}

/// The message of the `Infeasible` returned when a CAS does not match.
pub const CAS_MISMATCH: &str = "CAS mismatch";

/// Shorthand used across the crate.
pub type Result<T> = std::result::Result<T, Error>;
