//! Checks shared by the cargo-fuzz targets and the stable `fuzz_smoke`
//! proptests of the protocol and engine crates.

pub mod engine_checks;
pub mod kt_checks;
pub mod protocol_checks;
pub mod session_checks;
