//! Bytes <-> commands, no sockets.

pub mod any;
pub mod binary;
pub mod grpc;
pub mod kt;
pub mod out;
pub mod rpc;
pub mod session;
pub mod stats;
pub mod text;
