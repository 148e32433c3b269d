//! Where slow work runs.

pub mod block;
pub mod slow;
