//! A memcached-port connection over TLS, after its handshake: rustls's
//! `ServerConnection` driven by the same calls as a plain socket
//! (`net::socket::Socket`), so the connection loop (`connection.rs`) serves
//! it unchanged. Records are read and written with plain system calls on
//! the socket's descriptor inside tokio's `try_io`, as the plain path does,
//! so readiness is cleared exactly when the kernel says so.
//!
//! The one rule the loop relies on: when `read_into` returns `Partial` or
//! WouldBlock, rustls holds no plaintext the loop has not been given, so
//! waiting for the socket to be readable is right. It reads plaintext out
//! before it reads the socket again, and stops reading the socket only
//! when a read came back short (drained) or the buffer is full (`Full`:
//! the loop reads again without waiting).

use crate::net::socket::{ReadResult, Socket};
use crate::state::server::Server;
use bytes::BytesMut;
use rustls::ServerConnection;
use std::future::Future;
use std::io::{self, BufRead, IoSlice, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::io::Interest;
use tokio::net::TcpStream;

/// The socket's descriptor as rustls's reader and writer, noting whether
/// the last read came back short (the socket is drained).
struct Fd {
    fd: RawFd,
    short: bool,
}

impl io::Read for Fd {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: `buf` is valid for `buf.len()` bytes of writes.
        let n = unsafe { libc::read(self.fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        self.short = (n as usize) < buf.len();
        Ok(n as usize)
    }
}

impl io::Write for Fd {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }
    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let count = bufs.len().min(1024) as libc::c_int;
        // SAFETY: IoSlice is ABI-compatible with iovec on Unix, and the
        // slices are valid for reads for the duration of the call.
        let n = unsafe { libc::writev(self.fd, bufs.as_ptr().cast(), count) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(n as usize)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A TLS connection of the memcached port.
pub struct TlsSocket {
    io: TcpStream,
    tls: Mutex<ServerConnection>,
    srv: Arc<Server>,
}

fn broken() -> io::Error {
    io::Error::other("TLS state poisoned")
}

impl TlsSocket {
    /// `tls` has finished its handshake on `io`; `wbuf` bounds the reply
    /// bytes encrypted ahead of the socket (`-o ssl_wbuf_size`).
    pub fn new(io: TcpStream, mut tls: ServerConnection, wbuf: usize, srv: Arc<Server>) -> Self {
        tls.set_buffer_limit(Some(wbuf.max(4096)));
        TlsSocket {
            io,
            tls: Mutex::new(tls),
            srv,
        }
    }

    fn lock(&self) -> io::Result<MutexGuard<'_, ServerConnection>> {
        self.tls.lock().map_err(|_| broken())
    }

    fn fd(&self) -> Fd {
        Fd {
            fd: self.io.as_raw_fd(),
            short: false,
        }
    }

    /// Plaintext the handshake already decrypted (a client that sent its
    /// first request with its Finished message): the loop's first bytes.
    pub fn early_plaintext(&self) -> io::Result<BytesMut> {
        let mut tls = self.lock()?;
        let state = tls.process_new_packets().map_err(io::Error::other)?;
        let mut out = BytesMut::with_capacity(state.plaintext_bytes_to_read());
        while let Ok(chunk) = tls.reader().into_first_chunk() {
            if chunk.is_empty() {
                break;
            }
            let n = chunk.len();
            out.extend_from_slice(chunk);
            tls.reader().consume(n);
        }
        Ok(out)
    }

    /// Writes the records rustls holds; WouldBlock when the socket is full.
    fn push(&self, tls: &mut ServerConnection) -> io::Result<()> {
        while tls.wants_write() {
            let mut fd = self.fd();
            let n = self
                .io
                .try_io(Interest::WRITABLE, || tls.write_tls(&mut fd))?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
        }
        Ok(())
    }

    /// Reads records from the socket into rustls and decrypts them. Ok(true):
    /// the socket is drained (short read or EOF). A record that does not
    /// decrypt is counted in `ssl_proto_errors`; the alert rustls makes for
    /// it is sent if the socket takes it.
    fn pull(&self, tls: &mut ServerConnection) -> io::Result<bool> {
        let mut fd = self.fd();
        let mut drained = false;
        let res = self.io.try_io(Interest::READABLE, || {
            let n = tls.read_tls(&mut fd)?;
            drained = n == 0 || fd.short;
            if fd.short {
                // Clears tokio's readiness without a second, empty read.
                return Err(io::ErrorKind::WouldBlock.into());
            }
            Ok(())
        });
        match res {
            Ok(()) => {}
            Err(_) if drained => {}
            Err(e) => return Err(e),
        }
        if let Err(e) = tls.process_new_packets() {
            self.srv.tls.proto_errors.fetch_add(1, Relaxed);
            let _ = self.push(tls);
            return Err(io::Error::new(io::ErrorKind::InvalidData, e));
        }
        Ok(drained)
    }
}

impl AsRawFd for TlsSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.io.as_raw_fd()
    }
}

impl Socket for TlsSocket {
    fn try_io<R>(&self, interest: Interest, f: impl FnOnce() -> io::Result<R>) -> io::Result<R> {
        self.io.try_io(interest, f)
    }
    fn readable(&self) -> impl Future<Output = io::Result<()>> + Send {
        self.io.readable()
    }
    fn writable(&self) -> impl Future<Output = io::Result<()>> + Send {
        self.io.writable()
    }

    /// Encrypts as much of `bufs` as rustls's buffer takes (up to `wbuf`
    /// bytes ahead of the socket; rustls fills whole records across the
    /// pieces, so a batch of small replies is one record, not one per
    /// piece) and writes the records out. The plaintext taken is reported
    /// written even if some records wait for the socket: `try_flush` sends
    /// them before the batch counts as sent.
    fn try_write_vectored(&self, bufs: &[IoSlice<'_>]) -> io::Result<usize> {
        let mut tls = self.lock()?;
        for _ in 0..2 {
            let n = tls.writer().write_vectored(bufs)?;
            let pushed = self.push(&mut tls);
            if n > 0 {
                return match pushed {
                    Err(e) if e.kind() != io::ErrorKind::WouldBlock => Err(e),
                    _ => Ok(n),
                };
            }
            // rustls's buffer was full: retry once the socket took it all.
            pushed?;
        }
        Ok(0)
    }

    fn read_into(&self, rbuf: &mut BytesMut, max: usize) -> io::Result<ReadResult> {
        let mut tls = self.lock()?;
        let want = (rbuf.capacity() - rbuf.len()).min(max);
        let mut got = 0;
        let mut drained = false;
        loop {
            match tls.reader().into_first_chunk() {
                Ok([]) => {
                    return Ok(if got > 0 {
                        ReadResult::Partial
                    } else {
                        ReadResult::Eof
                    })
                }
                Ok(chunk) => {
                    let n = chunk.len().min(want - got);
                    rbuf.extend_from_slice(&chunk[..n]);
                    tls.reader().consume(n);
                    got += n;
                    if got == want {
                        return Ok(ReadResult::Full);
                    }
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // The client closed without close_notify: an EOF to the loop.
                Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                    return Ok(if got > 0 {
                        ReadResult::Partial
                    } else {
                        ReadResult::Eof
                    })
                }
                Err(e) => return Err(e),
            }
            if drained {
                return match got {
                    0 => Err(io::ErrorKind::WouldBlock.into()),
                    _ => Ok(ReadResult::Partial),
                };
            }
            drained = match self.pull(&mut tls) {
                Ok(d) => d,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock && got > 0 => {
                    return Ok(ReadResult::Partial)
                }
                Err(e) => return Err(e),
            };
            // Alerts or key updates the records asked for go out now.
            if tls.wants_write() {
                let _ = self.push(&mut tls);
            }
        }
    }

    fn try_flush(&self) -> io::Result<()> {
        let mut tls = self.lock()?;
        self.push(&mut tls)
    }

    fn addresses(&self) -> Option<(String, String)> {
        Socket::addresses(&self.io)
    }

    /// Replication streams are not served over TLS.
    fn into_tcp(self) -> Option<TcpStream> {
        None
    }
}

impl Drop for TlsSocket {
    /// memcached's `SSL_shutdown`: a close_notify, if the socket takes it.
    fn drop(&mut self) {
        if let Ok(tls) = self.tls.get_mut() {
            tls.send_close_notify();
            let mut fd = Fd {
                fd: self.io.as_raw_fd(),
                short: false,
            };
            let _ = tls.write_tls(&mut fd);
        }
    }
}
