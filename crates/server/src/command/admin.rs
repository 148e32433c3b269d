//! Admin state changes that are not record operations but change what the
//! records' servers do: a replica's master (`changemaster`).

use crate::state::server::Server;
use std::sync::atomic::Ordering::Relaxed;

/// Tkrzw-RPC's ChangeMaster: follow `master` (HOST:PORT) from now on, the
/// position stepped back by `skew_us`; an empty `master` promotes the
/// replica: it follows nobody and accepts client writes.
#[derive(Debug, Clone)]
pub struct ChangeMaster {
    pub master: String,
    pub skew_us: u64,
}

impl ChangeMaster {
    /// `Err`: this server is not a replica (started without `--replicate-from`).
    pub fn apply(&self, srv: &Server) -> Result<(), &'static str> {
        let Some(status) = srv.replication.replica.get() else {
            return Err("not a replica: start the server with --replicate-from (and --ulog-dir)");
        };
        let writable = self.master.is_empty() || srv.replication.replica_writable.load(Relaxed);
        for db in crate::state::databases::all(srv) {
            db.set_replica(!writable);
        }
        tracing::info!(
            "changemaster: {} (position stepped back {} ms)",
            if self.master.is_empty() {
                "promoted, following nobody"
            } else {
                self.master.as_str()
            },
            self.skew_us / 1000
        );
        status.change_master(&self.master, self.skew_us);
        Ok(())
    }
}
