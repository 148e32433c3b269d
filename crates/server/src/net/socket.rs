//! What a memcached-port connection is served over: a TCP socket, or a
//! Unix socket (`--unix-socket`, memcached's `-s`). The connection code
//! (`connection.rs`, `out.rs`) is written once against this trait; tokio's
//! two stream types make the same calls, and a TLS connection
//! (`net::tls::TlsSocket`) makes them over rustls. The plain sockets use
//! the provided `read_into` and `try_flush`, which compile to what the loop
//! did before TLS existed: a TLS connection costs the others nothing.

use bytes::BytesMut;
use std::future::Future;
use std::io::{self, IoSlice};
use std::os::fd::AsRawFd;
use tokio::io::Interest;
use tokio::net::{TcpStream, UnixStream};

/// What one `read_into` gave.
pub enum ReadResult {
    /// Filled the whole free space: more may be waiting, read again at once.
    Full,
    /// Read less than asked: the socket is drained; wait for readiness next time.
    Partial,
    Eof,
}

pub trait Socket: AsRawFd + Send + Sync + Sized + 'static {
    /// tokio's `try_io`: runs `f` (a raw syscall) and clears the readiness
    /// it reports as `WouldBlock`.
    fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R>;
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send;
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send;
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize>;
    /// Reads once into the free space of `rbuf`, at most `max` bytes
    /// (`ReadLimits::read_max`). A short read is reported to tokio as
    /// WouldBlock so it clears the readiness without a second, empty
    /// read() syscall.
    fn read_into(&self, rbuf: &mut BytesMut, max: usize) -> io::Result<ReadResult> {
        let fd = self.as_raw_fd();
        let mut got: Option<usize> = None;
        let res = self.try_io(Interest::READABLE, || {
            let spare = rbuf.spare_capacity_mut();
            let want = spare.len().min(max);
            // SAFETY: reading into the uninitialised spare capacity of rbuf;
            // only the `n` bytes the kernel wrote are marked initialised below.
            let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), want) };
            if n < 0 {
                return Err(io::Error::last_os_error());
            }
            let n = n as usize;
            // SAFETY: the kernel initialised n <= want bytes.
            unsafe { rbuf.set_len(rbuf.len() + n) };
            if n > 0 && n < want {
                got = Some(n);
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(n)
        });
        match (res, got) {
            (_, Some(_)) => Ok(ReadResult::Partial),
            (Ok(0), None) => Ok(ReadResult::Eof),
            (Ok(_), None) => Ok(ReadResult::Full),
            (Err(e), None) => Err(e),
        }
    }
    /// Sends what `try_write_vectored` accepted but kept (TLS records);
    /// WouldBlock: wait until writable and call again. Plain sockets keep
    /// nothing.
    #[inline(always)]
    fn try_flush(&self) -> io::Result<()> {
        Ok(())
    }
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
