//! What a memcached-port connection is served over: a TCP socket, or a
//! Unix socket (`--unix-socket`, memcached's `-s`). The connection code
//! (`connection.rs`, `out.rs`) is written once against this trait; tokio's
//! two stream types make the same calls.

use std::future::Future;
use std::io::{self, IoSlice};
use std::os::fd::AsRawFd;
use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};

pub trait Socket: AsRawFd + Send + Sync + Sized + 'static {
    /// tokio's `try_io`: runs `f` (a raw syscall) and clears the readiness
    /// it reports as `WouldBlock`.
    fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R>;
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send;
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send;
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// `stats conns`' `addr` and `listen_addr` (memcached's words).
    fn addresses(&self) -> Option<(String, String)>;
    /// Replication streams run over TCP only (`replication::master`).
    fn into_tcp(self) -> Option<TcpStream>;
}

impl Socket for TcpStream {
    fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        TcpStream::try_io(self, interest, f)
    }
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
        TcpStream::readable(self)
    }
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
        TcpStream::writable(self)
    }
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        TcpStream::try_write_vectored(self, bufs)
    }
    fn addresses(&self) -> Option<(String, String)> {
        let (peer, local) = (self.peer_addr().ok()?, self.local_addr().ok()?);
        Some((
            crate::state::conns::text(peer),
            crate::state::conns::text(local),
        ))
    }
    fn into_tcp(self) -> Option<TcpStream> {
        Some(self)
    }
}

impl Socket for UnixStream {
    fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        UnixStream::try_io(self, interest, f)
    }
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
        UnixStream::readable(self)
    }
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
        UnixStream::writable(self)
    }
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        UnixStream::try_write_vectored(self, bufs)
    }
    /// memcached lists a Unix connection as `unix:PATH` for both.
    fn addresses(&self) -> Option<(String, String)> {
        let local = self.local_addr().ok()?;
        let path = local.as_pathname()?.display().to_string();
        let text = format!("unix:{path}");
        Some((text.clone(), text))
    }
    fn into_tcp(self) -> Option<TcpStream> {
        None
    }
}
