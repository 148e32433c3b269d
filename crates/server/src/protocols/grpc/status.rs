//! Outcomes and failures as Tkrzw statuses (`StatusProto`: a
//! `tkrzw::Status::Code` and a message). Where Tkrzw's own status carries no
//! message (a missing record, a duplicate, a failed compare-exchange), none
//! is sent, so Tkrzw's tools print what they print against tkrzw_server.

use super::pb::StatusProto;
use crate::command::{Absence, Outcome};
use crate::exec::slow::SlowError;
use memstored_engine::status::code;

/// A status with a code and a message.
pub fn of(code: i32, message: impl Into<String>) -> Option<StatusProto> {
    Some(StatusProto {
        code,
        message: message.into(),
    })
}

/// SUCCESS.
pub fn ok() -> Option<StatusProto> {
    of(code::SUCCESS, "")
}

/// True for a status that is SUCCESS (or absent, which reads as SUCCESS).
pub fn is_ok(s: &Option<StatusProto>) -> bool {
    s.as_ref().is_none_or(|s| s.code == code::SUCCESS)
}

/// The code of a status (SUCCESS when absent).
pub fn code_of(s: &Option<StatusProto>) -> i32 {
    s.as_ref().map_or(code::SUCCESS, |s| s.code)
}

/// An engine failure: its own Tkrzw status.
pub fn of_error(e: memstored_engine::Error) -> Option<StatusProto> {
    of(e.status_code(), e.to_string())
}

/// The one table from command outcomes to Tkrzw statuses.
pub fn of_outcome(o: Outcome) -> Option<StatusProto> {
    match o {
        Outcome::Found(_)
        | Outcome::Stored { .. }
        | Outcome::Deleted
        | Outcome::Counted { .. }
        | Outcome::Done => ok(),
        Outcome::NotFound | Outcome::NotStored(Absence::Absent) => of(code::NOT_FOUND_ERROR, ""),
        Outcome::NotStored(Absence::Present) => of(code::DUPLICATION_ERROR, ""),
        Outcome::Exists => of(code::INFEASIBLE_ERROR, ""),
        Outcome::NonNumeric => of(code::INFEASIBLE_ERROR, "the value is not a number"),
        Outcome::Overflow => of(code::INFEASIBLE_ERROR, "the increment overflows"),
        Outcome::TooLarge { size, cap } => of(
            code::INFEASIBLE_ERROR,
            format!("a value of {size} bytes exceeds the limit of {cap} bytes (-I)"),
        ),
        Outcome::NoMemory => of(
            code::INFEASIBLE_ERROR,
            "out of memory: the cache is full and evictions are disabled",
        ),
        Outcome::ReadOnly => of(code::PRECONDITION_ERROR, "the database is read-only"),
        Outcome::FlushDisabled => of(
            code::PERMISSION_ERROR,
            "clearing is disabled (-F, --disable-flush-all)",
        ),
        Outcome::Failed(e) => of_error(e),
    }
}

/// A slow call's refusal or failure.
pub fn of_slow(e: SlowError) -> Option<StatusProto> {
    match e {
        SlowError::Busy(why) | SlowError::TimedOut(why) => of(code::INFEASIBLE_ERROR, why),
        SlowError::Invalid(why) => of(code::INVALID_ARGUMENT_ERROR, why),
        SlowError::Engine(e) => of_error(e),
        e @ SlowError::ShuttingDown => of(code::CANCELED_ERROR, e.to_string()),
        SlowError::Failed(why) => of(code::UNKNOWN_ERROR, why),
    }
}
