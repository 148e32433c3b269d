//! memcached's `-o idle_timeout=N`: a task that closes the memcached port's
//! TCP connections idle longer than N seconds, as memcached's
//! `conn_timeout_thread` does (the pass itself: `Conns::kick_idle`).

use crate::state::server::Server;
use std::sync::Arc;
use std::time::Duration;

/// How often the connections are looked at. memcached sleeps until the
/// soonest connection could time out; a second is the clock's resolution.
const PASS_EVERY: Duration = Duration::from_secs(1);

/// Turns the timeout on and runs its passes until the server stops.
pub fn spawn(srv: Arc<Server>, secs: u32) {
    srv.conns.set_idle_timeout(secs);
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(PASS_EVERY);
        let mut shutdown = srv.shutdown.clone();
        loop {
            tokio::select! {
                _ = tick.tick() => {
                    let n = srv.conns.kick_idle();
                    if n > 0 {
                        tracing::debug!("closed {n} connections idle more than {secs} s (-o idle_timeout)");
                    }
                }
                _ = shutdown.changed() => return,
            }
        }
    });
}
