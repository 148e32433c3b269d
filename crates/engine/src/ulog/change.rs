//! What the update log is told of: a `Change`, the `UpdateListener` that
//! hears it, and the thread's origin (`with_origin`) and last append. The
//! log's leaf: every other file of `ulog` may import it.

use crate::status::Result;
use std::cell::Cell;

thread_local! {
    /// The server id and timestamp of the change this thread is making,
    /// when it is another server's, replayed (`with_origin`).
    static ORIGIN: Cell<Option<(u16, u64)>> = const { Cell::new(None) };
    /// The timestamp of the last record this thread appended (0 = none
    /// since `take_last_appended`).
    static LAST_APPENDED: Cell<u64> = const { Cell::new(0) };
}

/// The timestamp of the last record appended by this thread since the
/// previous call (0 = none), and forgets it: a server's connection learns
/// which of its own writes a reply must wait for (`--sync-replicas`).
pub fn take_last_appended() -> u64 {
    LAST_APPENDED.with(|c| c.replace(0))
}

pub(crate) fn appended(ts: u64) {
    LAST_APPENDED.with(|c| c.set(ts));
}

/// Runs `f` with every change it makes logged under `server_id` instead of
/// the log's own, and remembered as made at the origin's `timestamp` (for
/// last-writer-wins): a replica replaying its master's updates (Tkrzw-RPC's
/// thread-local server id override). Carried by the thread rather than by
/// each `Change`, so that no write path between the replica and the shard
/// has to pass it along.
pub(crate) fn with_origin<R>(server_id: u16, timestamp: u64, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<(u16, u64)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            ORIGIN.with(|o| o.set(self.0));
        }
    }
    let _restore = Restore(ORIGIN.with(|o| o.replace(Some((server_id, timestamp)))));
    f()
}

/// The origin `with_origin` set on this thread, if any.
pub(crate) fn origin() -> Option<(u16, u64)> {
    ORIGIN.with(Cell::get)
}

/// What a record does (Tkrzw-RPC's SET/REMOVE/CLEAR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UlogOp {
    Set = 1,
    Remove = 2,
    Clear = 3,
}

impl UlogOp {
    pub(super) fn from_byte(b: u8) -> Option<UlogOp> {
        match b {
            1 => Some(UlogOp::Set),
            2 => Some(UlogOp::Remove),
            3 => Some(UlogOp::Clear),
            _ => None,
        }
    }
}

/// A change about to be logged, borrowed from the shard that applies it.
#[derive(Debug, Clone, Copy)]
pub struct Change<'a> {
    pub op: UlogOp,
    pub key: &'a [u8],
    pub value: &'a [u8],
    pub flags: u32,
    pub expires_at: u64,
}

/// Told of every change a database applies. Called with the shard's write
/// lock held: implementations must not call back into the database.
pub trait UpdateListener: Send + Sync {
    /// One change, already applied to the store. An error is returned to the
    /// caller of the write (the store keeps the change).
    fn on_change(&self, change: &Change<'_>) -> Result<()>;
    /// Hands buffered entries to the OS (the server calls it after each
    /// batch of replies, as it flushes the store's buffers).
    fn flush(&self) -> Result<()> {
        Ok(())
    }
    /// Flushes and, with `hard`, fsyncs.
    fn synchronize(&self, _hard: bool) -> Result<()> {
        Ok(())
    }
    /// When and where `key` last changed, as (origin timestamp, origin
    /// server id), if the listener remembers (`UpdateLog::track_recent`):
    /// what a dual master compares a replayed update with.
    fn last_change(&self, _key: &[u8]) -> Option<(u64, u16)> {
        None
    }
    /// Counters for `stats` (`ulog_bytes`, ...).
    fn stats(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}
