//! One item in a segment, byte by byte: a lead byte (bit 7: flags follow,
//! bit 6: an expiry follows, bits 0-5: the key's length, or 63 and the
//! length's excess over 63 as a varint after it), the key, then LEB128
//! varints of the value's length, the flags and the expiry (each only if
//! its bit says so) and the CAS less the segment's CAS base (signed,
//! zigzag-encoded), then the value, or, for a value of `EXTERNAL_MIN` bytes or more, a
//! varint index into the cache's table of large values (`Value::External`).
//!
//! Why the CAS is stored against a base: the shard's counter grows with
//! every write, so an absolute CAS takes 3 bytes after 16,384 writes and 5
//! after 2^28 — bytes every item pays in a long-running cache. Items
//! written together share a segment, and a segment's base is the counter
//! when it was opened empty plus half the items it will hold (`rebase`), so
//! the difference stays within half the segment's item count either way: 2
//! bytes (-8,192 to 8,191) for a 1 MiB segment's ~8,700 items of 120 bytes.
//! Signed, because an item may carry a CAS older than its segment: a touch
//! or GAT rewrites an item with the CAS it had, and a replica's writes
//! carry the master's; an unsigned difference wrapped to 10 bytes there.
//! What it does not cover: a segment the hand compacts keeps its base (its
//! survivors are stored against it), so the items appended after it grow
//! toward absolute sizes until the hand empties it. (The in-memory tree
//! passes 0: its records move between leaves.)
//!
//! Why flags and expiry are optional: most items have neither (no flags,
//! never expire), and two bytes are 1.6% of a small item. A 16-byte key with
//! a 100-byte value, no flags, no expiry and a CAS within 2^13 of its segment's base takes 4 + 116
//! bytes (docs/design.md, "Cache"). Why the key comes first: lookups
//! compare keys far more often than they read the rest (a tree's binary
//! search decodes one key per step), and a key right after the lead byte
//! is found without decoding a varint.

use crate::format::{put_varint, varint_len};
use crate::record::Meta;

/// Values this long or longer are kept aside (`Value::External`): whether a
/// value is aside follows from its length, so the item needs no bit for it.
pub(crate) const EXTERNAL_MIN: usize = 1024;

/// Lead byte: flags follow.
const HAS_FLAGS: u8 = 0x80;
/// Lead byte: an expiry follows.
const HAS_EXPIRY: u8 = 0x40;
/// Lead byte: the key's length, if below this; else this, and a varint of
/// the rest follows.
const KEY_LEN_ESCAPE: u8 = 0x3f;

/// The longest a varint of a u64 can be.
const MAX_VARINT: usize = 10;

/// The varint at `buf[*at..]`, advancing `at`; `None` past the end. (The
/// file format's decoder in `format.rs` also refuses longer encodings than
/// needed; segments are memory only and hold just what `encode` wrote, so
/// this one need not.)
#[inline]
fn get_varint(buf: &[u8], at: &mut usize) -> Option<u64> {
    // One byte for most: a short value's length, a CAS near its base.
    let b = *buf.get(*at)?;
    if b < 0x80 {
        *at += 1;
        return Some(u64::from(b));
    }
    get_long_varint(buf, at)
}

/// `get_varint` past its one-byte case.
fn get_long_varint(buf: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for i in 0..MAX_VARINT {
        let b = *buf.get(*at)?;
        *at += 1;
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some(v);
        }
    }
    None
}

/// An item's value: in the segment, or kept aside (large values, shared
/// with the replies that send them instead of copied for each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Value<'a> {
    Inline(&'a [u8]),
    /// Index in the cache's large-value table, and the value's length.
    External(u32, usize),
}

impl Value<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Value::Inline(v) => v.len(),
            Value::External(_, n) => *n,
        }
    }
}

/// The lead byte, and the key length's excess over the escape if any.
fn lead(key: &[u8], meta: &Meta) -> (u8, Option<u64>) {
    let mut b = 0;
    if meta.flags != 0 {
        b |= HAS_FLAGS;
    }
    if meta.expires_at != 0 {
        b |= HAS_EXPIRY;
    }
    match u8::try_from(key.len()) {
        Ok(n) if n < KEY_LEN_ESCAPE => (b | n, None),
        _ => (
            b | KEY_LEN_ESCAPE,
            Some(key.len() as u64 - u64::from(KEY_LEN_ESCAPE)),
        ),
    }
}

/// Bytes a varint takes if present.
fn opt_varint_len(v: u64) -> usize {
    if v == 0 {
        0
    } else {
        varint_len(v)
    }
}

/// Bytes `encode` appends for this item against CAS base `cas_base`.
pub(crate) fn encoded_len(key: &[u8], value: &Value<'_>, meta: &Meta, cas_base: u64) -> usize {
    encoded_len_cas(key, value, meta, varint_len(cas_delta(meta.cas, cas_base)))
}

/// The CAS as stored: its signed difference from the base, zigzag-encoded
/// (0, -1, 1, -2, ... as 0, 1, 2, 3, ...) so that small differences either
/// way take few bytes.
fn cas_delta(cas: u64, base: u64) -> u64 {
    let d = cas.wrapping_sub(base) as i64;
    ((d << 1) ^ (d >> 63)) as u64
}

/// `cas_delta` undone.
fn cas_from_delta(z: u64, base: u64) -> u64 {
    let d = ((z >> 1) as i64) ^ -((z & 1) as i64);
    base.wrapping_add(d as u64)
}

/// The most bytes `encode` can append for this item, whatever the base:
/// room made for this fits it in any segment.
pub(crate) fn max_encoded_len(key: &[u8], value: &Value<'_>, meta: &Meta) -> usize {
    encoded_len_cas(key, value, meta, MAX_VARINT)
}

fn encoded_len_cas(key: &[u8], value: &Value<'_>, meta: &Meta, cas_len: usize) -> usize {
    let body = match value {
        Value::Inline(v) => v.len(),
        Value::External(i, _) => varint_len(u64::from(*i)),
    };
    1 + lead(key, meta).1.map_or(0, varint_len)
        + varint_len(value.len() as u64)
        + opt_varint_len(u64::from(meta.flags))
        + opt_varint_len(meta.expires_at)
        + cas_len
        + key.len()
        + body
}

/// Appends the item, its CAS stored against `cas_base` (which `decode`
/// must be given back). `value` must be `External` exactly when its length
/// is at least `EXTERNAL_MIN` (the cache's rule; decoding relies on it).
pub(crate) fn encode(out: &mut Vec<u8>, key: &[u8], value: &Value<'_>, meta: &Meta, cas_base: u64) {
    debug_assert_eq!(
        matches!(value, Value::External(..)),
        value.len() >= EXTERNAL_MIN
    );
    let (b, excess) = lead(key, meta);
    out.push(b);
    if let Some(x) = excess {
        put_varint(out, x);
    }
    out.extend_from_slice(key);
    put_varint(out, value.len() as u64);
    if meta.flags != 0 {
        put_varint(out, u64::from(meta.flags));
    }
    if meta.expires_at != 0 {
        put_varint(out, meta.expires_at);
    }
    put_varint(out, cas_delta(meta.cas, cas_base));
    match value {
        Value::Inline(v) => out.extend_from_slice(v),
        Value::External(i, _) => put_varint(out, u64::from(*i)),
    }
}

/// An item read in place.
pub(crate) struct ItemRef<'a> {
    pub key: &'a [u8],
    pub value: Value<'a>,
    pub meta: Meta,
    /// Bytes the whole item takes in its segment.
    pub len: usize,
}

/// The item starting at `buf[0]`, encoded against `cas_base`; `None` if
/// the bytes are not one (never for what `encode` wrote: segments are
/// memory only).
pub(crate) fn decode(buf: &[u8], cas_base: u64) -> Option<ItemRef<'_>> {
    let mut at = 0;
    let (b, klen) = key_len(buf, &mut at)?;
    let key = buf.get(at..at.checked_add(klen)?)?;
    at += klen;
    let vlen = usize::try_from(get_varint(buf, &mut at)?).ok()?;
    let flags = if b & HAS_FLAGS != 0 {
        u32::try_from(get_varint(buf, &mut at)?).ok()?
    } else {
        0
    };
    let expires_at = if b & HAS_EXPIRY != 0 {
        get_varint(buf, &mut at)?
    } else {
        0
    };
    let cas = cas_from_delta(get_varint(buf, &mut at)?, cas_base);
    let mut end = at;
    let value = if vlen >= EXTERNAL_MIN {
        let i = u32::try_from(get_varint(buf, &mut end)?).ok()?;
        Value::External(i, vlen)
    } else {
        let v = buf.get(end..end.checked_add(vlen)?)?;
        end += vlen;
        Value::Inline(v)
    };
    Some(ItemRef {
        key,
        value,
        meta: Meta {
            flags,
            expires_at,
            cas,
        },
        len: end,
    })
}

/// The lead byte and the key's length, advancing `at` past them.
#[inline]
fn key_len(buf: &[u8], at: &mut usize) -> Option<(u8, usize)> {
    let b = *buf.get(*at)?;
    *at += 1;
    let short = b & KEY_LEN_ESCAPE;
    let klen = if short == KEY_LEN_ESCAPE {
        usize::try_from(get_varint(buf, at)?)
            .ok()?
            .checked_add(usize::from(KEY_LEN_ESCAPE))?
    } else {
        usize::from(short)
    };
    Some((b, klen))
}

/// Just the key of the item at `buf[0]` (a lookup's comparison).
#[inline]
pub(crate) fn key_of(buf: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    let (_, klen) = key_len(buf, &mut at)?;
    buf.get(at..at.checked_add(klen)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_sizes() {
        let meta = Meta {
            flags: 7,
            expires_at: 1_800_000_000,
            cas: 1 << 40,
        };
        for value in [Value::Inline(b"value"), Value::External(300, 1 << 20)] {
            // Bases below the CAS, equal to it, and above it (an item that
            // kept an older CAS: the difference wraps).
            for base in [0, (1 << 40) - 5, 1 << 40, (1 << 40) + 1, u64::MAX] {
                let mut out = vec![];
                encode(&mut out, b"key", &value, &meta, base);
                assert_eq!(out.len(), encoded_len(b"key", &value, &meta, base));
                assert!(out.len() <= max_encoded_len(b"key", &value, &meta));
                let n = out.len();
                out.extend_from_slice(b"trailing");
                let it = decode(&out, base).unwrap();
                assert_eq!(
                    (it.key, it.value, it.meta, it.len),
                    (&b"key"[..], value, meta, n)
                );
                assert_eq!(key_of(&out), Some(&b"key"[..]));
                assert!(decode(&out[..5], base).is_none());
            }
        }
        // The item: 16-byte key, 100-byte value, written when the
        // shard's counter is past a million, into a segment opened a few
        // thousand writes before.
        let small = Meta {
            cas: 1_000_000,
            ..Meta::default()
        };
        let v = [0; 100];
        let item = |base| encoded_len(&[0; 16], &Value::Inline(&v), &small, base);
        assert_eq!(item(1_000_000 - 8_000), 4 + 116);
        assert_eq!(item(0), 5 + 116, "an absolute CAS takes a byte more");
        // A touched item keeps its older CAS in a newer segment.
        assert_eq!(item(1_000_000 + 60), 3 + 116);
        for (cas, base) in [(0, u64::MAX), (u64::MAX, 0), (5, 7), (1 << 63, 0)] {
            assert_eq!(cas_from_delta(cas_delta(cas, base), base), cas);
        }
        assert_eq!(
            max_encoded_len(&[0; 16], &Value::Inline(&v), &small),
            2 + MAX_VARINT + 116
        );
    }

    #[test]
    fn every_key_length_and_optional_field_round_trips() {
        let metas = [
            Meta::default(),
            Meta {
                flags: 1,
                ..Meta::default()
            },
            Meta {
                expires_at: 1_800_000_000,
                ..Meta::default()
            },
            Meta {
                flags: u32::MAX,
                expires_at: u64::MAX,
                cas: u64::MAX,
            },
        ];
        let big = vec![9u8; EXTERNAL_MIN];
        for klen in [0usize, 1, 62, 63, 64, 127, 250, 4096] {
            let key = vec![b'k'; klen];
            for meta in &metas {
                for value in [
                    Value::Inline(b""),
                    Value::Inline(&big[1..]),
                    Value::External(u32::MAX, EXTERNAL_MIN),
                ] {
                    let mut out = vec![];
                    encode(&mut out, &key, &value, meta, 1 << 20);
                    assert_eq!(out.len(), encoded_len(&key, &value, meta, 1 << 20));
                    assert!(out.len() <= max_encoded_len(&key, &value, meta));
                    let it = decode(&out, 1 << 20).unwrap();
                    assert_eq!(
                        (it.key, it.value, it.meta, it.len),
                        (&key[..], value, *meta, out.len())
                    );
                    assert_eq!(key_of(&out), Some(&key[..]));
                    assert!(
                        decode(&out[..out.len() - 1], 1 << 20).is_none(),
                        "{klen} {meta:?}"
                    );
                }
            }
        }
        // The escape costs one byte from 63 on, as a varint did from 64.
        let m = Meta::default();
        let v = Value::Inline(b"");
        assert_eq!(encoded_len(&[0; 62], &v, &m, 0), 1 + 1 + 1 + 62);
        assert_eq!(encoded_len(&[0; 63], &v, &m, 0), 2 + 1 + 1 + 63);
    }
}
