use bytes::BytesMut;

use super::opcode::Opcode;

/// Size of every binary header, request or response.
pub const HEADER_LEN: usize = 24;
/// First byte of a request.
pub const REQUEST_MAGIC: u8 = 0x80;
/// First byte of a response.
pub const RESPONSE_MAGIC: u8 = 0x81;

/// The fixed 24-byte header, decoded but not yet trusted.
///
/// Parsing the header alone lets the server look at `body_len` *before* the
/// body arrives: it can refuse an oversized value and skip it instead of
/// buffering gigabytes on a client's say-so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BinaryHeader {
    pub magic: u8,
    /// Raw opcode byte; see [`BinaryHeader::opcode`] for the typed form.
    /// Kept raw because an unknown opcode is not an error (it gets a reply).
    pub opcode: u8,
    pub key_len: u16,
    pub extras_len: u8,
    /// Always 0 (raw bytes) in practice; not interpreted.
    pub data_type: u8,
    /// vbucket id in requests (ignored), status in responses.
    pub vbucket_or_status: u16,
    /// extras + key + value. Declared by the peer: never allocate from it.
    pub body_len: u32,
    /// Opaque client token, echoed verbatim in every reply.
    pub opaque: u32,
    pub cas: u64,
}

impl BinaryHeader {
    /// Decodes 24 bytes without checking the magic.
    pub fn decode(raw: &[u8; HEADER_LEN]) -> BinaryHeader {
        let [m, op, k0, k1, ext, dt, v0, v1, b0, b1, b2, b3, o0, o1, o2, o3, c0, c1, c2, c3, c4, c5, c6, c7] =
            *raw;
        BinaryHeader {
            magic: m,
            opcode: op,
            key_len: u16::from_be_bytes([k0, k1]),
            extras_len: ext,
            data_type: dt,
            vbucket_or_status: u16::from_be_bytes([v0, v1]),
            body_len: u32::from_be_bytes([b0, b1, b2, b3]),
            opaque: u32::from_be_bytes([o0, o1, o2, o3]),
            cas: u64::from_be_bytes([c0, c1, c2, c3, c4, c5, c6, c7]),
        }
    }

    /// Appends the 24 header bytes to `out`.
    pub fn encode(&self, out: &mut BytesMut) {
        // Built in place and appended once: ten `put_*` calls, each with
        // its own capacity check, cost ~450 instructions a header (callgrind).
        let mut h = [0u8; HEADER_LEN];
        h[0] = self.magic;
        h[1] = self.opcode;
        h[2..4].copy_from_slice(&self.key_len.to_be_bytes());
        h[4] = self.extras_len;
        h[5] = self.data_type;
        h[6..8].copy_from_slice(&self.vbucket_or_status.to_be_bytes());
        h[8..12].copy_from_slice(&self.body_len.to_be_bytes());
        h[12..16].copy_from_slice(&self.opaque.to_be_bytes());
        h[16..24].copy_from_slice(&self.cas.to_be_bytes());
        out.extend_from_slice(&h);
    }

    /// The opcode, `None` if unknown to memstored.
    pub fn opcode(&self) -> Option<Opcode> {
        Opcode::from_u8(self.opcode)
    }

    /// Header plus body, in bytes. `u64` so that a 4 GiB body cannot
    /// overflow on 32-bit targets.
    pub fn frame_len(&self) -> u64 {
        HEADER_LEN as u64 + u64::from(self.body_len)
    }

    /// Length of the value part of the body (0 if extras and key already
    /// exceed the body, which [`Self::validate_request`] rejects anyway).
    pub fn value_len(&self) -> u32 {
        self.body_len
            .saturating_sub(u32::from(self.extras_len))
            .saturating_sub(u32::from(self.key_len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::binary::BinaryError;
    use crate::Parse;

    fn sample() -> BinaryHeader {
        BinaryHeader {
            magic: REQUEST_MAGIC,
            opcode: 0x01,
            key_len: 3,
            extras_len: 8,
            data_type: 0,
            vbucket_or_status: 7,
            body_len: 16,
            opaque: 0xdead_beef,
            cas: 0x0102_0304_0506_0708,
        }
    }

    #[test]
    fn encode_decode_round_trip() {
        let h = sample();
        let mut out = BytesMut::new();
        h.encode(&mut out);
        assert_eq!(out.len(), HEADER_LEN);
        assert_eq!(
            &out[..],
            &[
                0x80, 0x01, 0, 3, 8, 0, 0, 7, 0, 0, 0, 16, 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5,
                6, 7, 8
            ]
        );
        assert_eq!(
            BinaryHeader::parse(&out),
            Ok(Parse::Complete(h, HEADER_LEN))
        );
    }

    #[test]
    fn every_prefix_is_incomplete() {
        let mut out = BytesMut::new();
        sample().encode(&mut out);
        for n in 0..HEADER_LEN {
            assert_eq!(
                BinaryHeader::parse(&out[..n]),
                Ok(Parse::Incomplete),
                "prefix {n}"
            );
        }
    }

    #[test]
    fn bad_magic_detected_from_first_byte() {
        assert_eq!(BinaryHeader::parse(b"g"), Err(BinaryError::BadMagic(b'g')));
        assert_eq!(
            BinaryHeader::parse_response(&[0x80]),
            Err(BinaryError::BadMagic(0x80))
        );
    }

    #[test]
    fn frame_len_does_not_overflow() {
        let h = BinaryHeader {
            body_len: u32::MAX,
            ..sample()
        };
        assert_eq!(h.frame_len(), u64::from(u32::MAX) + 24);
        assert_eq!(h.value_len(), u32::MAX - 11);
    }
}
