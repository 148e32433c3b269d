//! One blocking connection with its buffers, what a batch's reply adds up
//! to, and the values a set sends: what every protocol's load generator
//! works on.

use super::options::Protocol;
use crate::rpc_client;
use anyhow::{bail, Context, Result};
use bytes::BytesMut;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One connection with its buffers.
pub(super) struct Conn {
    stream: TcpStream,
    pub(super) proto: Protocol,
    pub(super) rbuf: BytesMut,
    pub(super) wbuf: BytesMut,
    chunk: Box<[u8]>,
    /// The last MessagePack-RPC request's id.
    pub(super) msgid: u32,
}

/// Outcome of reading one batch's reply.
#[derive(Default)]
pub(super) struct Reply {
    pub(super) hits: u64,
    pub(super) errors: u64,
    pub(super) first_error: Option<String>,
}

impl Reply {
    pub(super) fn error(&mut self, what: String) {
        self.errors += 1;
        if self.first_error.is_none() {
            self.first_error = Some(what);
        }
    }
}

impl Conn {
    pub(super) fn open(addr: &str, proto: Protocol, timeout: Duration) -> Result<Conn> {
        let stream = rpc_client::connect(addr, Some(timeout))?;
        Ok(Conn {
            stream,
            proto,
            rbuf: BytesMut::with_capacity(64 * 1024),
            wbuf: BytesMut::with_capacity(64 * 1024),
            chunk: vec![0u8; 64 * 1024].into_boxed_slice(),
            msgid: 0,
        })
    }

    /// Reads more bytes into `rbuf` (through a fixed chunk: no zeroing of
    /// spare capacity per read).
    pub(super) fn fill(&mut self) -> Result<()> {
        let n = self
            .stream
            .read(&mut self.chunk[..])
            .context("reading a reply")?;
        if n == 0 {
            bail!("the server closed the connection");
        }
        self.rbuf.extend_from_slice(&self.chunk[..n]);
        Ok(())
    }

    pub(super) fn flush(&mut self) -> Result<()> {
        self.stream
            .write_all(&self.wbuf)
            .context("sending a request")?;
        self.wbuf.clear();
        Ok(())
    }
}

/// Values: `size` bytes cut from a letter pattern at an offset per key.
pub(super) struct Values {
    pattern: Vec<u8>,
    size: usize,
}

impl Values {
    pub(super) fn new(size: usize) -> Self {
        let pattern = (0..size + 26).map(|i| b'a' + (i % 26) as u8).collect();
        Values { pattern, size }
    }

    pub(super) fn of(&self, key: u64) -> &[u8] {
        let off = (key % 26) as usize;
        &self.pattern[off..off + self.size]
    }
}
