//! Sending a batch's replies (`protocols::out::Out`) on a socket: vectored
//! writes of up to 1024 pieces, resumed after partial writes, and the rule
//! for a client that takes nothing.

use crate::net::socket::Socket;
use crate::protocols::out::Out;
use std::io::{self, IoSlice};
use std::time::Duration;

/// When a client that takes none of its replies is abandoned
/// ([`write_to`]).
pub struct Stall<'a> {
    /// How long it may take nothing.
    pub wait: Duration,
    /// Asked after each such wait: whether to abandon it now.
    pub give_up: &'a (dyn Fn() -> bool + Sync),
}

impl Stall<'_> {
    /// Waits until `stream` takes bytes again. False: it took none for
    /// `wait` while `give_up` said to abandon it.
    async fn writable<S: Socket>(&self, stream: &S) -> io::Result<bool> {
        loop {
            match tokio::time::timeout(self.wait, stream.writable()).await {
                Ok(r) => return r.map(|()| true),
                Err(_) if (self.give_up)() => return Ok(false),
                Err(_) => {}
            }
        }
    }
}

/// Writes everything and empties the batch. Each writev carries up to
/// 1024 pieces; partial writes resume where they stopped.
///
/// With a `stall` rule, a client that takes nothing for its `wait`
/// while its `give_up` says so is abandoned (`Ok(None)`, the batch
/// kept): the wait starts again with every byte it takes, so a client
/// that reads, however slowly, is never cut off.
pub async fn write_to<S: Socket>(
    out: &mut Out,
    stream: &S,
    stall: Option<Stall<'_>>,
) -> io::Result<Option<usize>> {
    let total = out.len();
    let mut sent = 0usize;
    let mut iov: Vec<IoSlice<'_>> = Vec::new();
    loop {
        let tried = if sent < total {
            iov.clear();
            out.pieces(sent, &mut iov);
            stream.try_write_vectored(&iov)
        } else {
            // What a TLS socket holds back goes out before the batch is
            // done (a no-op on plain sockets).
            match stream.try_flush() {
                Ok(()) => break,
                Err(e) => Err(e),
            }
        };
        match tried {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => sent += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => match &stall {
                None => stream.writable().await?,
                Some(stall) => {
                    if !stall.writable(stream).await? {
                        return Ok(None);
                    }
                }
            },
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    drop(iov);
    out.clear();
    Ok(Some(total))
}
