//! Sockets and IO drivers.

pub mod connection;
pub mod core;
pub mod grpc_port;
pub mod idle;
pub mod kt_port;
pub mod listener;
pub mod placement;
pub mod replay;
pub mod send;
pub mod socket;
pub mod tls;
pub mod uring;
pub mod watch;
pub mod workers;
