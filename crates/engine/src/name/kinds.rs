//! What a database name selects: the engine, the values' compression and
//! when data reaches the disk. A leaf below the name grammar (`name.rs`)
//! and its Kyoto dialect (`kc.rs`).

/// Which engine a name selects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    /// `*` / `:memory:`: in-memory hash, a cache when capped.
    MemHash,
    /// `+`: in-memory ordered.
    MemTree,
    /// `PATH.mem` / `.tkmt`: in-memory hash loaded from and saved to a file.
    MemFile,
    /// `PATH.hash` / `.tkh` / `.tch`: persistent log-structured hash.
    FileHash,
    /// `PATH.tree` / `.tkt` / `.tcb`: persistent log-structured ordered.
    FileTree,
}

impl EngineKind {
    /// True for engines whose iteration order is the key order.
    pub fn is_ordered(self) -> bool {
        matches!(self, EngineKind::MemTree | EngineKind::FileTree)
    }

    /// True for engines that keep data in files.
    pub fn has_file(self) -> bool {
        matches!(
            self,
            EngineKind::MemFile | EngineKind::FileHash | EngineKind::FileTree
        )
    }

    /// The name printed by `inspect`.
    pub fn label(self) -> &'static str {
        match self {
            EngineKind::MemHash => "mem_hash",
            EngineKind::MemTree => "mem_tree",
            EngineKind::MemFile => "mem_file",
            EngineKind::FileHash => "hash",
            EngineKind::FileTree => "tree",
        }
    }
}

/// Per-record value compression of persistent files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Lz4,
    Zstd,
}

/// When data reaches the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    /// Only on `synchronize(hard)` and close; the OS decides otherwise.
    None,
    /// The server synchronizes periodically (`--sync-interval`); the engine behaves as `None`.
    Interval,
    /// Every write is flushed and fsynced before the call returns.
    Always,
}
