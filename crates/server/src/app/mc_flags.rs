//! memcached's `-Y` (ASCII authentication) and `-d` (run as a daemon):
//! their flags and what starting with them takes.

use crate::app::cli::Args;
use crate::state::ascii_auth::AsciiAuth;
use crate::state::server::Binding;
use std::path::PathBuf;
use std::sync::Arc;

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
}

impl McFlags {
    /// `-Y`'s users, read; refused with what it cannot be combined with.
    pub fn ascii_auth(args: &Args) -> Result<Option<Arc<AsciiAuth>>, String> {
        let Some(path) = &args.mc.auth_file else {
            return Ok(None);
        };
        let clash = if args.sasl_file.is_some() {
            Some("--sasl-file")
        } else if args.kt_listen.is_some() {
            Some("--kt-listen (Kyoto Tycoon's port has no authentication)")
        } else if args.grpc_listen.is_some() {
            Some("--grpc-listen (Tkrzw-RPC has no login)")
        } else if args.initial_size.binding() == Binding::Binary {
            // memcached's own refusal.
            return Err(
                "You cannot allow the BINARY protocol while using ascii authentication tokens."
                    .into(),
            );
        } else {
            None
        };
        if let Some(other) = clash {
            return Err(format!("-Y cannot be combined with {other}"));
        }
        let auth = AsciiAuth::load(path)?;
        tracing::info!("ASCII authentication enabled (-Y {})", path.display());
        Ok(Some(Arc::new(auth)))
    }
}
