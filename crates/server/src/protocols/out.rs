//! The replies of one batch: small framing bytes in one `BytesMut`, values as
//! shared `Bytes` pieces spliced in between, sent with vectored writes.

use bytes::{BufMut, Bytes, BytesMut};
use std::collections::HashSet;
use std::io::IoSlice;

/// Linux refuses more than 1024 iovecs per writev.
const MAX_IOV: usize = 1024;

/// Replies waiting to be written, in request order.
#[derive(Default)]
pub struct Out {
    buf: BytesMut,
    /// `(offset in buf, value)`: the value goes out after `buf[..offset]`.
    values: Vec<(usize, Bytes)>,
    value_bytes: usize,
    /// Bytes of the values counted once each however often they are sent
    /// (`held`).
    held_value_bytes: usize,
    /// The values referenced so far, by address and length, once there
    /// are more than a few (below that, `values` is searched).
    seen: Option<HashSet<(usize, usize)>>,
}

/// Values below this size are copied into the framing buffer by
/// [`Out::value_or_copy`]: an iovec entry, and the set of referenced
/// values a batch keeps, cost more than copying a few bytes (a get_bulk of
/// 100 eight-byte values spent 600 instructions a value referencing them).
pub const SPLICE_FROM: usize = 256;

/// Values a batch references before `Out::value` keeps a set of them.
const FEW_VALUES: usize = 8;

impl Out {
    pub fn new() -> Out {
        Out {
            buf: BytesMut::with_capacity(4096),
            values: Vec::new(),
            value_bytes: 0,
            held_value_bytes: 0,
            seen: None,
        }
    }

    /// The framing buffer, to append headers and status lines to.
    #[inline]
    pub fn buf(&mut self) -> &mut BytesMut {
        &mut self.buf
    }

    /// Appends a value without copying it.
    #[inline]
    pub fn value(&mut self, v: Bytes) {
        if !v.is_empty() {
            self.value_bytes += v.len();
            if self.first_reference(&v) {
                self.held_value_bytes += v.len();
            }
            self.values.push((self.buf.len(), v));
        }
    }

    /// Appends a value: copied when short (below [`SPLICE_FROM`]), else
    /// referenced without a copy as [`Out::value`] does.
    #[inline]
    pub fn value_or_copy(&mut self, v: &Bytes) {
        if v.len() < SPLICE_FROM {
            self.buf.put_slice(v);
        } else {
            self.value(v.clone());
        }
    }

    /// Whether the batch does not reference `v`'s bytes yet.
    fn first_reference(&mut self, v: &Bytes) -> bool {
        let id = |b: &Bytes| (b.as_ptr() as usize, b.len());
        if self.seen.is_none() && self.values.len() < FEW_VALUES {
            return !self.values.iter().any(|(_, b)| id(b) == id(v));
        }
        let values = &self.values;
        self.seen
            .get_or_insert_with(|| values.iter().map(|(_, b)| id(b)).collect())
            .insert(id(v))
    }

    /// Appends raw bytes to the framing buffer.
    #[inline]
    pub fn put(&mut self, s: &[u8]) {
        self.buf.put_slice(s);
    }

    /// Bytes pending in total.
    pub fn len(&self) -> usize {
        self.buf.len() + self.value_bytes
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes the pending replies hold in memory: a value sent many times
    /// (`get k k k ...`) is one buffer referenced many times, and counts
    /// once. What the memory budget is charged; `len` is what goes out.
    pub fn held(&self) -> usize {
        let references = self.values.len() * std::mem::size_of::<(usize, Bytes)>();
        self.buf.len() + self.held_value_bytes + references
    }

    /// Fills `iov` with the pending pieces after the first `skip` bytes (up
    /// to 1024 of them), for a vectored write (`net::send`).
    pub fn pieces<'a>(&'a self, skip: usize, iov: &mut Vec<IoSlice<'a>>) {
        collect(&self.buf, &self.values, skip, iov);
    }

    /// Calls `f` with each pending piece after the first `skip` bytes (up
    /// to 1024 of them), for a vectored write the caller submits itself
    /// (io_uring).
    pub fn each_piece<'a>(&'a self, skip: usize, f: impl FnMut(&'a [u8])) {
        each_piece(&self.buf, &self.values, skip, f);
    }

    /// Drops everything pending (keeps the framing buffer's capacity).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.values.clear();
        self.value_bytes = 0;
        self.held_value_bytes = 0;
        self.seen = None;
        // A huge reply (a 4 GiB stats dump cannot happen, but many keys
        // can) should not keep its buffer forever.
        if self.buf.capacity() > 1 << 20 {
            self.buf = BytesMut::with_capacity(4096);
        }
    }

    /// Everything as one contiguous vector (tests, in-memory replay).
    pub fn to_vec(&self) -> Vec<u8> {
        let mut iov = Vec::new();
        collect(&self.buf, &self.values, 0, &mut iov);
        iov.iter().flat_map(|s| s.iter().copied()).collect()
    }
}

/// Fills `iov` with the pieces after the first `skip` bytes, up to MAX_IOV.
fn collect<'a>(
    buf: &'a [u8],
    values: &'a [(usize, Bytes)],
    skip: usize,
    iov: &mut Vec<IoSlice<'a>>,
) {
    each_piece(buf, values, skip, |p| iov.push(IoSlice::new(p)));
}

/// Calls `f` with each piece after the first `skip` bytes, in order, up
/// to MAX_IOV of them.
fn each_piece<'a>(
    buf: &'a [u8],
    values: &'a [(usize, Bytes)],
    skip: usize,
    mut f: impl FnMut(&'a [u8]),
) {
    let mut n = 0usize; // pieces given to f
    let mut pos = 0usize; // logical offset of the next piece
    let mut from = 0usize; // offset in buf of the next framing piece
    let mut push = |piece: &'a [u8], pos: &mut usize, n: &mut usize| {
        let end = *pos + piece.len();
        if end > skip && !piece.is_empty() {
            let start = skip.saturating_sub(*pos);
            if let Some(p) = piece.get(start..) {
                f(p);
                *n += 1;
            }
        }
        *pos = end;
    };
    for (off, v) in values {
        if n + 2 > MAX_IOV {
            return;
        }
        push(buf.get(from..*off).unwrap_or_default(), &mut pos, &mut n);
        push(v, &mut pos, &mut n);
        from = *off;
    }
    if n < MAX_IOV {
        push(buf.get(from..).unwrap_or_default(), &mut pos, &mut n);
    }
}

/// Appends `n` in decimal without going through `fmt`.
#[cfg(test)]
fn put_u64(buf: &mut BytesMut, mut n: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.put_slice(&tmp[i..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_in_order() {
        let mut o = Out::new();
        o.put(b"A");
        o.value(Bytes::from_static(b"vv"));
        o.put(b"B");
        put_u64(&mut o.buf, 1234567890);
        o.value(Bytes::from_static(b"ww"));
        assert_eq!(o.to_vec(), b"AvvB1234567890ww");
        assert_eq!(o.len(), 16);
        let mut iov = Vec::new();
        collect(&o.buf, &o.values, 2, &mut iov);
        let rest: Vec<u8> = iov.iter().flat_map(|s| s.iter().copied()).collect();
        assert_eq!(rest, b"vB1234567890ww");
    }

    #[test]
    fn numbers() {
        let mut b = BytesMut::new();
        put_u64(&mut b, 0);
        b.put_u8(b' ');
        put_u64(&mut b, u64::MAX);
        assert_eq!(&b[..], b"0 18446744073709551615");
    }
}
