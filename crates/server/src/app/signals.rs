//! SIGINT/SIGTERM: graceful stop. SIGUSR1: memcached's graceful stop (with
//! `-e`, the cache is written to its memory file). SIGHUP: synchronize.
//! Periodic sync.

use crate::state::server::Server;
use memstored_engine::Db;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};

/// SIGINT, SIGTERM and SIGHUP, caught from `install` on. Installed before
/// the server says it listens: a SIGTERM sent as soon as it is up must stop
/// it gracefully, not kill it by the default action.
pub struct StopSignals {
    term: Signal,
    int: Signal,
    hup: Signal,
    usr1: Signal,
}

/// What `StopSignals::wait` returns for memcached's graceful stop (SIGUSR1).
pub const GRACEFUL: &str = "SIGUSR1 (graceful stop)";

impl StopSignals {
    pub fn install() -> std::io::Result<StopSignals> {
        Ok(StopSignals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
            hup: signal(SignalKind::hangup())?,
            usr1: signal(SignalKind::user_defined1())?,
        })
    }

    /// Waits for SIGINT or SIGTERM, synchronizing the stores on every SIGHUP
    /// (and reading `-Y`'s authfile again, as memcached does on SIGHUP).
    pub async fn wait(
        mut self,
        dbs: Vec<Arc<Db>>,
        auth: Option<Arc<crate::state::ascii_auth::AsciiAuth>>,
    ) -> &'static str {
        loop {
            tokio::select! {
                _ = self.term.recv() => return "SIGTERM",
                _ = self.int.recv() => return "SIGINT",
                _ = self.usr1.recv() => return GRACEFUL,
                _ = self.hup.recv() => {
                    tracing::info!("SIGHUP: synchronizing the store");
                    if let Some(Err(why)) = auth.as_ref().map(|a| a.reload()) {
                        tracing::error!("SIGHUP: {why}; the users read before stay");
                    }
                    for db in &dbs {
                        sync(db, false).await;
                    }
                }
            }
        }
    }
}

/// Runs `synchronize(hard)` on a blocking thread and logs failures.
pub async fn sync(db: &Arc<Db>, hard: bool) {
    let db = db.clone();
    match tokio::task::spawn_blocking(move || db.synchronize(hard)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::error!("synchronize: {e}"),
        Err(e) => tracing::error!("synchronize task: {e}"),
    }
}

/// `--sync-interval`: synchronize (hard) every `secs` seconds.
pub fn spawn_periodic_sync(srv: Arc<Server>, secs: u64) {
    if secs == 0 {
        return;
    }
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(Duration::from_secs(secs));
        tick.tick().await;
        let mut shutdown = srv.shutdown.clone();
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    for db in crate::state::databases::all(&srv) {
                        sync(&db, true).await;
                    }
                }
                _ = shutdown.changed() => return,
            }
        }
    });
}
