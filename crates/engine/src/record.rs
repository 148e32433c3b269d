//! The record model: a value plus the metadata memcached needs natively.

use bytes::Bytes;
use std::time::{SystemTime, UNIX_EPOCH};

/// Metadata stored with every record. TTL, flags and CAS live in the engine,
/// not encoded into values, so every protocol sees the same record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Meta {
    /// Opaque client flags (memcached's `flags`).
    pub flags: u32,
    /// Absolute expiry in Unix seconds; 0 means never.
    pub expires_at: u64,
    /// Unique per shard and increasing on every change of any record.
    pub cas: u64,
}

impl Meta {
    /// True when the record has expired at `now` (Unix seconds).
    pub fn is_expired(&self, now: u64) -> bool {
        self.expires_at != 0 && self.expires_at <= now
    }

    /// True when the record has expired now. Reads the clock only for
    /// records that have an expiry, so the common case costs one compare.
    #[inline]
    pub fn is_expired_now(&self) -> bool {
        self.expires_at != 0 && self.expires_at <= now_secs()
    }
}

/// A value with its metadata, as returned by lookups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// The value; for in-memory engines this shares the stored buffer (no copy).
    pub value: Bytes,
    pub meta: Meta,
}

/// The current Unix time in seconds.
pub fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
