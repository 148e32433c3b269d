//! A server started inside the test process on a listener bound to port 0:
//! no child process, no guessed port, and the `Server` (counters included)
//! is at hand. Plus a small MessagePack-RPC client.
#![allow(dead_code)]

use memstored_engine::Db;
use memstored_server::state::server::{Config, Server};
use rmpv::Value;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// A running in-process server; its runtime stops on drop.
pub struct InProc {
    pub addr: SocketAddr,
    pub srv: Arc<Server>,
    _rt: tokio::runtime::Runtime,
}

impl InProc {
    /// Serves `db` with `Config::defaults` changed by `tweak`.
    pub fn start(db: Db, tweak: impl FnOnce(&mut Config)) -> InProc {
        let db = Arc::new(db);
        let mut cfg = Config::defaults(&db.name().path);
        cfg.read_only = !db.is_writable();
        tweak(&mut cfg);
        let srv = Server::standalone_with(db, cfg);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = rt
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let addr = listener.local_addr().expect("local addr");
        rt.spawn(memstored_server::net::listener::run(
            listener,
            srv.clone(),
            Default::default(),
            None,
        ));
        InProc { addr, srv, _rt: rt }
    }

    pub fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(self.addr).expect("connect");
        s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .ok();
        s
    }

    /// A counter of `stats` by its memcached name.
    pub fn stat(&self, name: &str) -> u64 {
        let list = memstored_server::protocols::stats::listing(&self.srv, None).expect("stats");
        list.iter()
            .find(|(k, _)| k == name)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or_else(|| panic!("no counter {name}"))
    }

    pub fn counter(
        &self,
        c: impl Fn(&memstored_server::state::counters::Counters) -> &std::sync::atomic::AtomicU64,
    ) -> u64 {
        c(&self.srv.counters).load(Relaxed)
    }
}

/// Sends `[0, msgid, method, params]` and reads the response: `Ok(result)`
/// or `Err(error code)`.
pub fn rpc(s: &mut TcpStream, method: &str, params: Vec<Value>) -> Result<Value, i64> {
    let req = Value::Array(vec![
        Value::from(0),
        Value::from(7),
        Value::from(method),
        Value::Array(params),
    ]);
    let mut buf = Vec::new();
    rmpv::encode::write_value(&mut buf, &req).expect("encode");
    s.write_all(&buf).expect("send");
    let v = rmpv::decode::read_value(&mut ReadAll(s)).expect("decode");
    let Value::Array(parts) = v else {
        panic!("not a response: {v:?}")
    };
    assert_eq!(
        parts.first().and_then(Value::as_u64),
        Some(1),
        "response type"
    );
    match (&parts[2], &parts[3]) {
        (Value::Nil, result) => Ok(result.clone()),
        // `[code, message]`, or kt-msgpack's bare code (str-only requests).
        (Value::Array(e), _) => Err(e.first().and_then(Value::as_i64).expect("error code")),
        (Value::Integer(e), _) => Err(e.as_i64().expect("error code")),
        (e, _) => panic!("bad error {e:?}"),
    }
}

/// `Read` over a `&mut TcpStream` for rmpv's decoder.
struct ReadAll<'a>(&'a mut TcpStream);

impl Read for ReadAll<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf)
    }
}

pub fn bin(b: &[u8]) -> Value {
    Value::Binary(b.to_vec())
}
