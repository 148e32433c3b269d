//! MessagePack-RPC framing must not allocate on the strength of a declared
//! length: a request claiming a 4 GiB bin (or a 4G-element array) with
//! nothing behind it is `Incomplete`, and nothing large is reserved.
//! (One test function only: the global counter is shared by all threads.)

use std::sync::atomic::Ordering;

use memstored_protocol::rpc::{decode, Decoder, Limits};
use memstored_protocol::Parse;

#[path = "support/tracking_alloc.rs"]
mod tracking_alloc;
use tracking_alloc::LARGEST;

const LIMIT: usize = 64 * 1024;

#[test]
fn huge_declared_lengths_do_not_allocate() {
    // No limits to speak of: only the scanner stands between the peer's
    // declarations and the allocator.
    let open = Limits {
        max_frame: usize::MAX,
        max_depth: 64,
        max_objects: u64::MAX,
    };
    let frames: Vec<Vec<u8>> = vec![
        // [0, 1, "set", [bin32 4GiB-1, ...
        vec![
            0x94, 0x00, 0x01, 0xa3, b's', b'e', b't', 0x92, 0xc6, 0xff, 0xff, 0xff, 0xff, b'x',
        ],
        // [0, 1, "set", [str32 4GiB-1, ...
        vec![
            0x94, 0x00, 0x01, 0xa3, b's', b'e', b't', 0x92, 0xdb, 0xff, 0xff, 0xff, 0xff, b'x',
        ],
        // [0, 1, "set", [array32 of 4G nils, a few present
        vec![
            0x94, 0x00, 0x01, 0xa3, b's', b'e', b't', 0x91, 0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0,
            0xc0,
        ],
        // map32 of 4G pairs
        vec![0xdf, 0xff, 0xff, 0xff, 0xff, 0x01, 0x02],
        // ext32 of 4 GiB
        vec![0xc9, 0xff, 0xff, 0xff, 0xff, 0x05, 0x00],
    ];
    for f in &frames {
        LARGEST.store(0, Ordering::Relaxed);
        assert_eq!(decode(f, &open), Ok(Parse::Incomplete));
        assert_eq!(decode(f, &Limits::default()).ok(), None);
        let mut d = Decoder::new(open);
        for cut in 0..=f.len() {
            assert_eq!(d.decode(&f[..cut]), Ok(Parse::Incomplete));
        }
        let largest = LARGEST.load(Ordering::Relaxed);
        assert!(largest < LIMIT, "allocated {largest} bytes for {f:02x?}");
    }
}
