//! Tkrzw-RPC's gRPC service, `tkrzw_rpc.DBMService` (`proto/tkrzw_rpc.proto`,
//! the project's own description of tkrzw-rpc 0.9.10's interface), over the
//! command layer: each call decodes into a `crate::command` and its `Outcome`
//! becomes a Tkrzw status (`status.rs`, codes and names as
//! `memstored_engine::status` has them). No sockets here: `net::grpc_port`
//! serves [`service::Dbm`] on `--grpc-listen`.
//!
//! | call | how |
//! |---|---|
//! | Echo Inspect Count GetFileSize ShouldBeRebuilt | `service.rs`, from the database |
//! | Get GetMulti Set SetMulti Remove RemoveMulti Append AppendMulti | `service.rs`, through the commands |
//! | CompareExchange Increment CompareExchangeMulti Rekey | `records.rs`, through the commands' Tkrzw forms (`command::tkrzw`) |
//! | PopFirst PushLast | `queue.rs` (`command::queue`) |
//! | waits (`retry_wait`) and `notify` | `signal.rs`: tokio futures, no worker held |
//! | Clear Synchronize (hard or with a backup) Rebuild Search | `service.rs`, off the workers through `crate::exec::slow` |
//! | ChangeMaster | `service.rs`: `command::ChangeMaster` (the replica is `crate::replication::grpc_follow`) |
//! | Stream | `service.rs`: each call as its unary method answers it, in order |
//! | Iterate | `iterate.rs`: one cursor per stream (`command::Iterate`) |
//! | Replicate | `replicate.rs`: the update log on a thread of its own |
//!
//! A `dbm_index` outside the served databases is gRPC's INVALID_ARGUMENT
//! ("dbm_index is out of range"), as tkrzw_server answers it.

mod iterate;
mod queue;
mod records;
mod replicate;
pub mod service;
mod signal;
mod status;
mod streams;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tkrzw_tests;

/// The messages and the server trait generated from `proto/tkrzw_rpc.proto`.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod pb {
    tonic::include_proto!("tkrzw_rpc");
}

pub use service::Dbm;
