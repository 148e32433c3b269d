//! One client connection: read, parse every complete request, answer the
//! batch with one vectored write, repeat.

use crate::binary::BinaryConn;
use crate::out::Out;
use crate::server::Server;
use crate::stats;
use crate::text::TextConn;
use bytes::{Buf, BytesMut};
use std::io;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use tokio::io::Interest;
use tokio::net::TcpStream;

/// Replies pending above this size are written before parsing goes on, so
/// one pipelined batch cannot build unbounded output.
pub const FLUSH_AT: usize = 4 << 20;

/// What a protocol handler wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Everything complete was handled; read more. The number is how many
    /// bytes the buffer must hold for the next request (0 = unknown).
    NeedInput(usize),
    /// Too much output pending: write it, then call again without reading.
    Flush,
    /// Write what is pending, then close.
    Close,
}

/// Per-connection state every protocol shares.
#[derive(Debug, Default)]
pub struct ConnState {
    /// Bytes still to discard as they arrive (a refused body).
    pub skip: u64,
}

impl ConnState {
    /// What every protocol checks before parsing its next request: bytes of
    /// a refused body still to skip, or too much output waiting to be written.
    pub fn before_next(&mut self, rbuf: &mut BytesMut, out: &Out) -> Option<Step> {
        if self.discard(rbuf) {
            return Some(Step::NeedInput(0));
        }
        if out.len() >= FLUSH_AT {
            return Some(Step::Flush);
        }
        None
    }

    /// Drops skipped bytes from the front of `rbuf`; true if more are due.
    pub fn discard(&mut self, rbuf: &mut BytesMut) -> bool {
        if self.skip == 0 {
            return false;
        }
        let n = usize::try_from(self.skip)
            .unwrap_or(usize::MAX)
            .min(rbuf.len());
        rbuf.advance(n);
        self.skip -= n as u64;
        self.skip > 0
    }
}

enum Proto {
    Binary(BinaryConn),
    Text(Box<TextConn>),
}

enum ReadResult {
    /// Filled the whole free space: more may be waiting, read again at once.
    Full,
    /// Read less than asked: the socket is drained; wait for readiness next time.
    Partial,
    Eof,
}

/// Reads once into the free space of `rbuf`. A short read is reported to
/// tokio as WouldBlock so it clears the readiness without a second,
/// empty read() syscall.
fn read_some(stream: &TcpStream, rbuf: &mut BytesMut) -> io::Result<ReadResult> {
    let fd = stream.as_raw_fd();
    let mut got: Option<usize> = None;
    let res = stream.try_io(Interest::READABLE, || {
        let spare = rbuf.spare_capacity_mut();
        let want = spare.len();
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

/// Serves one connection until it closes.
pub async fn serve(stream: TcpStream, peer: SocketAddr, srv: Arc<Server>) {
    let _ = stream.set_nodelay(true);
    match run(&stream, &srv).await {
        Ok(()) => tracing::debug!("{peer}: closed"),
        Err(e) => tracing::debug!("{peer}: {e}"),
    }
}

async fn run(stream: &TcpStream, srv: &Arc<Server>) -> io::Result<()> {
    let initial = srv.cfg.initial_size.max(64);
    let reserve = srv.cfg.reserve_size.max(64);
    let mut rbuf = BytesMut::with_capacity(initial);
    let mut out = Out::new();
    let mut cs = ConnState::default();
    let mut proto: Option<Proto> = None;
    let mut shutdown = srv.shutdown.clone();
    let mut wait = true;
    let mut need = 0usize;
    loop {
        if wait {
            if *shutdown.borrow() {
                return Ok(());
            }
            tokio::select! {
                r = stream.readable() => r?,
                _ = shutdown.changed() => return Ok(()),
            }
        }
        // Keep free space for the read; room for the rest of the frame when
        // the handler said how big it is, but a declared length only buys
        // 1 MiB at once: beyond that the buffer doubles as bytes arrive.
        let want = need
            .saturating_sub(rbuf.len())
            .min(rbuf.capacity().max(1 << 20))
            .max(reserve);
        if rbuf.capacity() - rbuf.len() < want {
            if rbuf.is_empty() && rbuf.capacity() > initial.max(want) * 4 {
                // Give back the memory of a big value once it is done.
                rbuf = BytesMut::with_capacity(initial.max(want));
            } else {
                rbuf.reserve(want);
            }
        }
        let before = rbuf.len();
        match read_some(stream, &mut rbuf) {
            Ok(ReadResult::Eof) => return Ok(()),
            Ok(ReadResult::Full) => wait = false,
            Ok(ReadResult::Partial) => wait = true,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                wait = true;
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        stats::add(&srv.counters.bytes_read, (rbuf.len() - before) as u64);
        if cs.discard(&mut rbuf) {
            continue;
        }
        if rbuf.is_empty() {
            continue;
        }
        if proto.is_none() && matches!(rbuf.first(), Some(0x90..=0x9f)) {
            // A msgpack fixarray: MessagePack-RPC, served by its own loop.
            let rbuf = std::mem::take(&mut rbuf);
            return crate::rpc_conn::serve(stream, srv, rbuf).await;
        }
        let p = match proto.as_mut() {
            Some(p) => p,
            None => proto.insert(match sniff(srv, &rbuf) {
                Some(p) => p,
                None => return Ok(()),
            }),
        };
        loop {
            let step = match p {
                Proto::Binary(b) => b.process(srv, &mut cs, &mut rbuf, &mut out),
                Proto::Text(t) => t.process(srv, &mut cs, &mut rbuf, &mut out),
            };
            if !out.is_empty() {
                // Writes acknowledged in this batch reach the OS before the
                // acknowledgement does, so they survive the server being killed.
                if let Err(e) = srv.db.flush_dirty() {
                    tracing::error!("handing writes to the OS failed: {e}");
                }
                let n = out.write_to(stream).await?;
                stats::add(&srv.counters.bytes_written, n as u64);
            }
            match step {
                Step::NeedInput(n) => {
                    need = n;
                    break;
                }
                Step::Flush => continue,
                Step::Close => return Ok(()),
            }
        }
    }
}

/// Picks the protocol from the first byte.
fn sniff(srv: &Server, rbuf: &[u8]) -> Option<Proto> {
    match rbuf.first().copied() {
        Some(0x80) => Some(Proto::Binary(BinaryConn::new())),
        Some(_) if srv.credentials.is_some() => {
            tracing::info!("text protocol connection refused: SASL is required");
            None
        }
        Some(_) => Some(Proto::Text(Box::default())),
        None => None,
    }
}
