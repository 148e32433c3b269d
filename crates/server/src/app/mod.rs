//! Composition: the command line, config file, startup.

pub mod cli;
pub mod config;
pub mod daemon;
pub mod extended;
pub mod listen;
pub mod mc_flags;
pub mod privileges;
pub mod runfiles;
pub mod signals;
pub mod startup;
pub mod tkrzw_flags;
pub mod tkrzw_fold;
