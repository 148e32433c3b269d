//! One item in a segment, byte by byte: five LEB128 varints (key length ×
//! 2 + external bit, value length, flags, expiry, CAS), then the key and
//! the value, or, for an external value, a varint index into the cache's
//! table of large values (`Value::External`). A 16-byte key with a 100-byte
//! value, no flags, no expiry and a CAS below 2^21 takes 7 + 116 bytes
//! (docs/design.md, "Segment cache").

use crate::record::Meta;

/// The longest a varint of a u64 can be.
const MAX_VARINT: usize = 10;

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint at `buf[*at..]`, advancing `at`; `None` past the end.
fn get_varint(buf: &[u8], at: &mut usize) -> Option<u64> {
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
pub enum Value<'a> {
    Inline(&'a [u8]),
    /// Index in the cache's large-value table, and the value's length.
    External(u32, usize),
}

impl Value<'_> {
    fn len(&self) -> usize {
        match self {
            Value::Inline(v) => v.len(),
            Value::External(_, n) => *n,
        }
    }
    fn external_bit(&self) -> u64 {
        matches!(self, Value::External(..)).into()
    }
}

/// The first varint: the key's length and whether the value is aside
/// (keys under 64 bytes keep it to one byte).
fn tagged_key_len(key: &[u8], value: &Value<'_>) -> u64 {
    ((key.len() as u64) << 1) | value.external_bit()
}

/// Bytes `encode` appends for this item.
pub fn encoded_len(key: &[u8], value: &Value<'_>, meta: &Meta) -> usize {
    let body = match value {
        Value::Inline(v) => v.len(),
        Value::External(i, _) => varint_len(u64::from(*i)),
    };
    varint_len(tagged_key_len(key, value))
        + varint_len(value.len() as u64)
        + varint_len(u64::from(meta.flags))
        + varint_len(meta.expires_at)
        + varint_len(meta.cas)
        + key.len()
        + body
}

pub fn encode(out: &mut Vec<u8>, key: &[u8], value: &Value<'_>, meta: &Meta) {
    put_varint(out, tagged_key_len(key, value));
    put_varint(out, value.len() as u64);
    put_varint(out, u64::from(meta.flags));
    put_varint(out, meta.expires_at);
    put_varint(out, meta.cas);
    out.extend_from_slice(key);
    match value {
        Value::Inline(v) => out.extend_from_slice(v),
        Value::External(i, _) => put_varint(out, u64::from(*i)),
    }
}

/// An item read in place.
pub struct ItemRef<'a> {
    pub key: &'a [u8],
    pub value: Value<'a>,
    pub meta: Meta,
    /// Bytes the whole item takes in its segment.
    pub len: usize,
}

/// The item starting at `buf[0]`; `None` if the bytes are not one (never
/// for what `encode` wrote: segments are memory only).
pub fn decode(buf: &[u8]) -> Option<ItemRef<'_>> {
    let mut at = 0;
    let tagged = get_varint(buf, &mut at)?;
    let klen = usize::try_from(tagged >> 1).ok()?;
    let vlen = usize::try_from(get_varint(buf, &mut at)?).ok()?;
    let flags = u32::try_from(get_varint(buf, &mut at)?).ok()?;
    let expires_at = get_varint(buf, &mut at)?;
    let cas = get_varint(buf, &mut at)?;
    let key = buf.get(at..at.checked_add(klen)?)?;
    let mut end = at + klen;
    let value = if tagged & 1 == 1 {
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

/// Just the key of the item at `buf[0]` (a lookup's comparison).
#[inline]
pub fn key_of(buf: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    let klen = usize::try_from(get_varint(buf, &mut at)? >> 1).ok()?;
    for _ in 0..4 {
        get_varint(buf, &mut at)?;
    }
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
            let mut out = vec![];
            encode(&mut out, b"key", &value, &meta);
            assert_eq!(out.len(), encoded_len(b"key", &value, &meta));
            let n = out.len();
            out.extend_from_slice(b"trailing");
            let it = decode(&out).unwrap();
            assert_eq!(
                (it.key, it.value, it.meta, it.len),
                (&b"key"[..], value, meta, n)
            );
            assert_eq!(key_of(&out), Some(&b"key"[..]));
            assert!(decode(&out[..5]).is_none());
        }
        // The item: 16-byte key, 100-byte value, small CAS.
        let small = Meta {
            cas: 1_000_000,
            ..Meta::default()
        };
        let v = [0; 100];
        assert_eq!(encoded_len(&[0; 16], &Value::Inline(&v), &small), 7 + 116);
    }
}
