//! Whole sessions over an in-memory store, driven by `memstored_server::
//! replay` as a connection would drive them: arbitrary bytes never panic the
//! server and its buffers stay bounded; pipelined requests are answered once
//! each, in request order.

use memstored_engine::Db;
use memstored_server::net::replay::{output_bound, replay, Replay};
use memstored_server::state::server::{Config, Server};
use std::sync::{Arc, OnceLock};

/// The item limit of the fuzzed server: small, so that the output bound
/// below is tight enough to mean something.
pub const MAX_ITEM: u64 = 1024;

/// The longest text command line (memcached's 2048 + slack) or binary key:
/// the most keys one request can name.
const MOST_KEYS_PER_REQUEST: usize = 2048;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a tokio runtime")
    })
}

/// A fresh server over a small in-memory cache.
pub fn server() -> Arc<Server> {
    let db = Db::open("*#capsiz=1m", true).expect("an in-memory cache opens");
    let mut cfg = Config::defaults("*#capsiz=1m");
    cfg.max_item_size = MAX_ITEM;
    Server::standalone_with(Arc::new(db), cfg)
}

/// Replays `chunks` on `srv` inside the runtime.
pub fn run(srv: &Arc<Server>, chunks: &[&[u8]]) -> Replay {
    runtime().block_on(async { replay(srv, chunks) })
}

/// Arbitrary bytes, cut into reads of the size the first byte picks.
pub fn session_bytes(data: &[u8]) {
    let Some((&cut, rest)) = data.split_first() else {
        return;
    };
    let chunks: Vec<&[u8]> = rest.chunks(usize::from(cut).max(1)).collect();
    let srv = server();
    let r = run(&srv, &chunks);
    let largest_reply = MOST_KEYS_PER_REQUEST * (MAX_ITEM as usize + 320);
    assert!(
        r.peak_output <= output_bound(largest_reply),
        "output grew to {} bytes",
        r.peak_output
    );
    assert!(r.peak_input <= rest.len(), "input is never duplicated");
}

/// One pipelined binary request: `op` 0 = GETK, 1 = SET, 2 = DELETE, 3 = NOOP.
pub type BinaryOp = (u8, u8, u16);

/// Binary requests with opaque = their index: every response's opaque is
/// the index of the next unanswered request (in order, none lost, none twice).
pub fn binary_in_order(ops: &[BinaryOp], cut: usize) {
    let mut wire = Vec::new();
    for (i, &(op, key, vlen)) in ops.iter().enumerate() {
        let key = [b'k', key % 8];
        let (opcode, extras, value): (u8, &[u8], Vec<u8>) = match op % 4 {
            0 => (0x0c, &[], Vec::new()),
            1 => (0x01, &[0; 8], vec![b'v'; usize::from(vlen % 2048)]),
            2 => (0x04, &[], Vec::new()),
            _ => (0x0a, &[], Vec::new()),
        };
        let key: &[u8] = if opcode == 0x0a { &[] } else { &key };
        wire.extend_from_slice(&[0x80, opcode]);
        wire.extend_from_slice(&(key.len() as u16).to_be_bytes());
        wire.extend_from_slice(&[extras.len() as u8, 0, 0, 0]);
        let body = (extras.len() + key.len() + value.len()) as u32;
        wire.extend_from_slice(&body.to_be_bytes());
        wire.extend_from_slice(&(i as u32).to_be_bytes());
        wire.extend_from_slice(&[0; 8]);
        wire.extend_from_slice(extras);
        wire.extend_from_slice(key);
        wire.extend_from_slice(&value);
    }
    let chunks: Vec<&[u8]> = wire.chunks(cut.max(1)).collect();
    let r = run(&server(), &chunks);
    assert!(!r.closed, "a valid pipeline is not closed");
    let mut at = 0;
    let mut next = 0u32;
    while at < r.output.len() {
        let h = &r.output[at..at + 24];
        assert_eq!(h[0], 0x81, "response magic at {at}");
        let body = u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as usize;
        let opaque = u32::from_be_bytes([h[12], h[13], h[14], h[15]]);
        assert_eq!(opaque, next, "responses in request order");
        next += 1;
        at += 24 + body;
    }
    assert_eq!(next as usize, ops.len(), "every request answered once");
}

/// One pipelined meta request: `op` 0 = mg, 1 = ms, 2 = md, 3 = ma, 4 = mn.
pub type MetaOp = (u8, u8, u16);

/// Meta requests carrying `O<index>`: the opaques come back in order, one
/// reply each (`mn` answers `MN` and carries no opaque).
pub fn meta_in_order(ops: &[MetaOp], cut: usize) {
    let mut wire = Vec::new();
    let mut expected = Vec::new();
    for (i, &(op, key, vlen)) in ops.iter().enumerate() {
        let key = format!("k{}", key % 8);
        let line = match op % 5 {
            0 => format!("mg {key} v O{i}\r\n"),
            1 => {
                // Within the item limit: a refusal is a SERVER_ERROR line,
                // which carries no opaque (as in memcached).
                let n = usize::from(vlen) % (MAX_ITEM as usize + 1);
                format!("ms {key} {n} O{i}\r\n{}\r\n", "v".repeat(n))
            }
            2 => format!("md {key} O{i}\r\n"),
            3 => format!("ma {key} N0 O{i}\r\n"),
            _ => "mn\r\n".to_string(),
        };
        expected.push(if op % 5 == 4 { None } else { Some(i) });
        wire.extend_from_slice(line.as_bytes());
    }
    let chunks: Vec<&[u8]> = wire.chunks(cut.max(1)).collect();
    let r = run(&server(), &chunks);
    assert!(!r.closed, "a valid pipeline is not closed");
    let text = String::from_utf8_lossy(&r.output);
    let mut lines = text.split("\r\n");
    for want in expected {
        let line = lines.next().expect("a reply per request");
        match want {
            None => assert_eq!(line, "MN"),
            // An error line takes the request's place but echoes nothing (memcached).
            Some(_) if line.starts_with("CLIENT_ERROR ") || line.starts_with("SERVER_ERROR ") => {}
            Some(i) => {
                assert!(
                    line.ends_with(&format!(" O{i}")),
                    "{line:?} answers request {i}"
                );
                if line.starts_with("VA ") {
                    lines.next(); // the value
                }
            }
        }
    }
}
