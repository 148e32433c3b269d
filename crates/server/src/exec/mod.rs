//! Where slow work runs.

pub mod slow;
