//! What hostile-client tests observe: the server's `stats`, its peak
//! memory, and MessagePack-RPC requests and responses.

use super::{Server, Text};
use memstored_protocol::rpc::{self, rmpv, Value};
use std::net::TcpStream;
use std::time::{Duration, Instant};

pub fn stats(server: &Server) -> Vec<(String, String)> {
    stats_of(server, "")
}

/// `stats GROUP` (`settings`, `slabs`, ...); `""` is plain `stats`.
pub fn stats_of(server: &Server, group: &str) -> Vec<(String, String)> {
    let mut t = Text::new(server.connect());
    let line = match group {
        "" => "stats\r\n".to_string(),
        g => format!("stats {g}\r\n"),
    };
    t.send(line.as_bytes());
    let mut v = Vec::new();
    loop {
        let l = t.line();
        if l == "END" {
            return v;
        }
        let mut f = l.splitn(3, ' ');
        if let (Some("STAT"), Some(k), Some(val)) = (f.next(), f.next(), f.next()) {
            v.push((k.to_string(), val.to_string()));
        }
    }
}

pub fn stat(server: &Server, name: &str) -> u64 {
    stats(server)
        .into_iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or_else(|| panic!("no numeric stat {name}"))
}

/// Waits (polling the server's own counters) until `cond` holds.
pub fn wait_until(server: &Server, what: &str, cond: impl Fn(&Server) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond(server) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A MessagePack-RPC request frame.
pub fn rpc_request(msgid: u32, method: &str, params: &[Value]) -> Vec<u8> {
    let mut b = bytes::BytesMut::new();
    rpc::encode_request(msgid, method, params, &mut b);
    b.to_vec()
}

/// Reads one response: `Ok(result)` or `Err(error)`.
pub fn rpc_response(s: &mut TcpStream) -> Result<Value, Value> {
    let v = rmpv::decode::read_value(s).expect("a response");
    let Value::Array(mut a) = v else {
        panic!("not a response: {v:?}")
    };
    assert_eq!(a.len(), 4, "{a:?}");
    let result = a.pop().unwrap_or(Value::Nil);
    let error = a.pop().unwrap_or(Value::Nil);
    if error.is_nil() {
        Ok(result)
    } else {
        Err(error)
    }
}
