//! One item in a segment, byte by byte: five LEB128 varints (key length,
//! value length, flags, expiry, CAS), then the key and the value. A 16-byte
//! key with a 100-byte value, no flags, no expiry and a CAS below 2^21
//! takes 7 + 116 bytes (docs/design.md, "Segment cache").

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

/// Bytes `encode` appends for this item.
pub fn encoded_len(key: &[u8], value: &[u8], meta: &Meta) -> usize {
    varint_len(key.len() as u64)
        + varint_len(value.len() as u64)
        + varint_len(u64::from(meta.flags))
        + varint_len(meta.expires_at)
        + varint_len(meta.cas)
        + key.len()
        + value.len()
}

pub fn encode(out: &mut Vec<u8>, key: &[u8], value: &[u8], meta: &Meta) {
    put_varint(out, key.len() as u64);
    put_varint(out, value.len() as u64);
    put_varint(out, u64::from(meta.flags));
    put_varint(out, meta.expires_at);
    put_varint(out, meta.cas);
    out.extend_from_slice(key);
    out.extend_from_slice(value);
}

/// An item read in place.
pub struct ItemRef<'a> {
    pub key: &'a [u8],
    pub value: &'a [u8],
    pub meta: Meta,
    /// Bytes the whole item takes.
    pub len: usize,
}

/// The item starting at `buf[0]`; `None` if the bytes are not one (never
/// for what `encode` wrote: segments are memory only).
pub fn decode(buf: &[u8]) -> Option<ItemRef<'_>> {
    let mut at = 0;
    let klen = usize::try_from(get_varint(buf, &mut at)?).ok()?;
    let vlen = usize::try_from(get_varint(buf, &mut at)?).ok()?;
    let flags = u32::try_from(get_varint(buf, &mut at)?).ok()?;
    let expires_at = get_varint(buf, &mut at)?;
    let cas = get_varint(buf, &mut at)?;
    let key = buf.get(at..at.checked_add(klen)?)?;
    let vstart = at + klen;
    let value = buf.get(vstart..vstart.checked_add(vlen)?)?;
    Some(ItemRef {
        key,
        value,
        meta: Meta {
            flags,
            expires_at,
            cas,
        },
        len: vstart + vlen,
    })
}

/// Just the key of the item at `buf[0]` (a lookup's comparison).
#[inline]
pub fn key_of(buf: &[u8]) -> Option<&[u8]> {
    let mut at = 0;
    let klen = usize::try_from(get_varint(buf, &mut at)?).ok()?;
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
        let mut out = vec![];
        encode(&mut out, b"key", b"value", &meta);
        assert_eq!(out.len(), encoded_len(b"key", b"value", &meta));
        out.extend_from_slice(b"trailing");
        let it = decode(&out).unwrap();
        assert_eq!(
            (it.key, it.value, it.meta),
            (&b"key"[..], &b"value"[..], meta)
        );
        assert_eq!(key_of(&out), Some(&b"key"[..]));
        // The item: 16-byte key, 100-byte value, small CAS.
        let small = Meta {
            cas: 1_000_000,
            ..Meta::default()
        };
        assert_eq!(encoded_len(&[0; 16], &[0; 100], &small), 7 + 116);
        assert!(decode(&out[..5]).is_none());
    }
}
