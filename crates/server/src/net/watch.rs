//! A connection that became a log watcher (`watch`, `state::watch`): its
//! pending lines are written as they come, until the client closes (or the
//! server stops). What the client sends after `watch` is read and dropped,
//! so a close is seen even while no line comes.

use crate::net::socket::{ReadResult, Socket};
use crate::protocols::out::Out;
use crate::state::conns::ConnInfo;
use crate::state::server::Server;
use crate::state::watch::{CloseReason, Watcher};
use bytes::{Bytes, BytesMut};
use std::io;
use std::sync::Arc;

/// Serves the watcher `w` on `stream` until either end closes; then it
/// watches no more. `listed`: its `stats conns` entry, shown as memcached
/// shows a watcher (`conn_watch`) meanwhile, and told how it closed.
pub(crate) async fn serve<S: Socket>(
    stream: &S,
    srv: &Server,
    w: Arc<Watcher>,
    listed: Option<&ConnInfo>,
) {
    if let Some(l) = listed {
        l.watching();
    }
    let why = match send_lines(stream, srv, &w).await {
        Ok(why) => why,
        Err(e) => {
            tracing::debug!("watcher closed: {e}");
            CloseReason::Error
        }
    };
    srv.watch.remove(&w);
    if let Some(l) = listed {
        l.closing(why);
    }
}

async fn send_lines<S: Socket>(stream: &S, srv: &Server, w: &Watcher) -> io::Result<CloseReason> {
    let mut lines = Vec::new();
    let mut dropped = BytesMut::with_capacity(1024);
    let mut shutdown = srv.shutdown.clone();
    if *shutdown.borrow_and_update() {
        return Ok(CloseReason::Shutdown);
    }
    loop {
        w.take(&mut lines);
        if !lines.is_empty() {
            let mut out = Out::new();
            out.value(Bytes::from(std::mem::take(&mut lines)));
            crate::net::send::write_to(&mut out, stream, None).await?;
            continue;
        }
        tokio::select! {
            _ = w.changed() => {}
            r = stream.readable() => {
                r?;
                dropped.clear();
                match stream.read_into(&mut dropped, usize::MAX) {
                    Ok(ReadResult::Eof) => return Ok(CloseReason::Normal),
                    Ok(_) => {}
                    Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
                    Err(e) => return Err(e),
                }
            }
            _ = shutdown.changed() => return Ok(CloseReason::Shutdown),
        }
    }
}
