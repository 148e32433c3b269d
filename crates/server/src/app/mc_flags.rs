//! memcached's `-Y` (ASCII authentication) and `-d` (run as a daemon):
//! their flags and what starting with them takes.

use std::path::PathBuf;

/// memcached flags that change how the memcached port is served or how the
/// process runs.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct McFlags {
    /// memcached's `-Y`: text connections must log in before anything else
    /// is served, with a `set` whose data block is `<user> <password>`
    /// (one `user:password` per line of FILE; read again on SIGHUP). As in
    /// memcached the memcached port then speaks the text protocol only
    /// (docs/memcached-compat.md "ASCII authentication").
    #[arg(short = 'Y', long = "auth-file", value_name = "FILE")]
    pub auth_file: Option<PathBuf>,
    /// memcached's `-d`: run in the background. The command returns once
    /// the server serves (status 0) or failed to start (1, the error
    /// printed); the working directory is kept (app::daemon).
    #[arg(short = 'd', long = "daemon")]
    pub daemon: bool,
    /// memcached's `-e`: a restartable cache. Stopped gracefully (SIGUSR1,
    /// or `shutdown graceful`), the server writes the cache to FILE (and
    /// FILE.meta); started again with the same `-e`, it reads it back
    /// before serving (docs/memcached-compat.md "-e").
    #[arg(short = 'e', long = "memory-file", value_name = "FILE")]
    pub memory_file: Option<PathBuf>,
}
