//! SIGINT/SIGTERM: graceful stop. SIGHUP: synchronize. Periodic sync.

use crate::server::Server;
use memstored_engine::Db;
use std::sync::Arc;
use std::time::Duration;
use tokio::signal::unix::{signal, SignalKind};

/// Waits for SIGINT or SIGTERM, synchronizing the store on every SIGHUP.
pub async fn wait_for_stop(db: Arc<Db>) -> std::io::Result<&'static str> {
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    let mut hup = signal(SignalKind::hangup())?;
    loop {
        tokio::select! {
            _ = term.recv() => return Ok("SIGTERM"),
            _ = int.recv() => return Ok("SIGINT"),
            _ = hup.recv() => {
                tracing::info!("SIGHUP: synchronizing the store");
                sync(&db, false).await;
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
                _ = tick.tick() => sync(&srv.db, true).await,
                _ = shutdown.changed() => return,
            }
        }
    });
}
