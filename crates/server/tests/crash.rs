//! Crash harness: memstored on a persistent sharded store with a sync on
//! every write; writers over binary, text and MessagePack-RPC log every
//! acknowledged write; the server is killed with SIGKILL at random moments
//! (some during a rebuild or a backup), restarted and verified, many times.
//! Pass = the store opens every time, no acknowledged write is missing, no
//! value is corrupted. `CRASH_CYCLES` sets the number of cycles (default 20;
//! `scripts/crash-test.sh` runs 200).

mod common;
use bytes::BytesMut;
use common::Server;
use memstored_protocol::rpc::{self, Decoder, Limits, Message, Value};
use memstored_protocol::Parse;
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

type Io<T> = std::io::Result<T>;

fn connect(port: u16) -> Io<TcpStream> {
    let s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    s.set_nodelay(true)?;
    Ok(s)
}

fn value_of(proto: &str, n: u64) -> String {
    format!("{proto}-value-{n}-").repeat(1 + (n % 5) as usize)
}

/// One binary SET; Ok(true) when acknowledged with status 0.
fn binary_set(s: &mut TcpStream, key: &str, value: &str) -> Io<bool> {
    let (k, v) = (key.as_bytes(), value.as_bytes());
    let mut req = vec![0x80, 0x01];
    req.extend_from_slice(&(k.len() as u16).to_be_bytes());
    req.extend_from_slice(&[8, 0, 0, 0]);
    req.extend_from_slice(&((8 + k.len() + v.len()) as u32).to_be_bytes());
    req.extend_from_slice(&[0; 12]);
    req.extend_from_slice(&[0; 8]);
    req.extend_from_slice(k);
    req.extend_from_slice(v);
    s.write_all(&req)?;
    let mut head = [0u8; 24];
    s.read_exact(&mut head)?;
    let body = u32::from_be_bytes([head[8], head[9], head[10], head[11]]) as usize;
    let mut rest = vec![0u8; body];
    s.read_exact(&mut rest)?;
    Ok(head[6] == 0 && head[7] == 0)
}

fn text_set(r: &mut BufReader<TcpStream>, key: &str, value: &str) -> Io<bool> {
    r.get_mut()
        .write_all(format!("set {key} 0 0 {}\r\n{value}\r\n", value.len()).as_bytes())?;
    let mut line = String::new();
    r.read_line(&mut line)?;
    if !line.ends_with("\r\n") {
        return Err(std::io::ErrorKind::UnexpectedEof.into()); // killed mid-reply
    }
    assert_eq!(line, "STORED\r\n", "text set {key}");
    Ok(true)
}

/// A minimal blocking MessagePack-RPC client.
struct Rpc {
    s: TcpStream,
    buf: BytesMut,
    dec: Decoder,
    next: u32,
}

impl Rpc {
    fn new(s: TcpStream) -> Rpc {
        Rpc {
            s,
            buf: BytesMut::new(),
            dec: Decoder::new(Limits::default()),
            next: 1,
        }
    }

    fn call(&mut self, method: &str, params: Vec<Value>) -> Io<Result<Value, Value>> {
        let id = self.next;
        self.next += 1;
        let mut out = BytesMut::new();
        rpc::encode_request(id, method, &params, &mut out);
        self.s.write_all(&out)?;
        loop {
            if let Ok(Parse::Complete(msg, used)) = self.dec.decode(&self.buf) {
                let _ = self.buf.split_to(used);
                if let Message::Response(r) = msg {
                    if r.msgid == id {
                        return Ok(r.into_result());
                    }
                }
                continue;
            }
            let mut chunk = [0u8; 4096];
            let n = self.s.read(&mut chunk)?;
            if n == 0 {
                return Err(std::io::ErrorKind::UnexpectedEof.into());
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }
}

fn bin(s: &str) -> Value {
    Value::Binary(s.as_bytes().to_vec())
}

/// Highest acknowledged sequence number per protocol, kept by the test
/// process (which is never killed).
type Acked = Arc<Mutex<HashMap<&'static str, u64>>>;

/// Writes `proto-N` keys from `start` until the connection breaks or `stop`.
fn writer(proto: &'static str, port: u16, start: u64, acked: Acked, stop: Arc<AtomicBool>) {
    let run = || -> Io<()> {
        let s = connect(port)?;
        let mut text = BufReader::new(s.try_clone()?);
        let mut binary = s.try_clone()?;
        let mut rpc = Rpc::new(s);
        let mut n = start;
        while !stop.load(Ordering::Relaxed) {
            let (key, value) = (format!("{proto}-{n}"), value_of(proto, n));
            let ok = match proto {
                "binary" => binary_set(&mut binary, &key, &value)?,
                "text" => text_set(&mut text, &key, &value)?,
                _ => rpc.call("set", vec![bin(&key), bin(&value)])?.is_ok(),
            };
            assert!(ok, "{proto}: write {n} refused");
            acked.lock().unwrap().insert(proto, n);
            n += 1;
        }
        Ok(())
    };
    let _ = run(); // A broken connection is the kill; what was acked is logged.
}

/// Keeps asking for rebuilds and backups so some kills land during them.
fn maintainer(port: u16, stop: Arc<AtomicBool>) {
    let run = || -> Io<()> {
        let mut rpc = Rpc::new(connect(port)?);
        let mut i = 0u32;
        while !stop.load(Ordering::Relaxed) {
            let _ = if i.is_multiple_of(2) {
                rpc.call("rebuild", vec![])?
            } else {
                let opts = vec![(Value::from("make_backup"), Value::from(format!("c{i}")))];
                rpc.call("synchronize", vec![Value::Map(opts)])?
            };
            i += 1;
        }
        Ok(())
    };
    let _ = run();
}

fn verify(port: u16, acked: &HashMap<&'static str, u64>) {
    let mut rpc = Rpc::new(connect(port).expect("the restarted server accepts"));
    for (&proto, &last) in acked {
        for n in 0..=last {
            let key = format!("{proto}-{n}");
            let got = rpc.call("get", vec![bin(&key)]).expect("get");
            let Ok(Value::Map(m)) = got else {
                panic!("acknowledged {key} is missing: {got:?}")
            };
            let v = m
                .iter()
                .find(|(k, _)| k.as_str() == Some("value"))
                .map(|(_, v)| v.clone());
            let bytes = v
                .as_ref()
                .and_then(rpc::value_bytes)
                .map(<[u8]>::to_vec)
                .unwrap_or_default();
            assert_eq!(bytes, value_of(proto, n).into_bytes(), "{key} corrupted");
        }
    }
}

/// A tiny xorshift, so kill moments differ without a rand dependency.
fn next_rand(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn kill_9_never_loses_an_acknowledged_write() {
    let cycles: usize = std::env::var("CRASH_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let store = format!(
        "{}/crash.tkh#num_shards=4,sync=always",
        dir.path().display()
    );
    let acked: Acked = Arc::new(Mutex::new(HashMap::new()));
    let mut rng = Instant::now().elapsed().as_nanos() as u64 | 1;
    rng ^= u64::from(std::process::id()) << 16;
    let started = Instant::now();
    for cycle in 0..cycles {
        let server = Server::start(&["-s", &store]);
        let port = server.port;
        verify(port, &acked.lock().unwrap().clone());
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for proto in ["binary", "text", "rpc"] {
            let start = acked.lock().unwrap().get(proto).map_or(0, |n| n + 1);
            let (a, s) = (acked.clone(), stop.clone());
            threads.push(thread::spawn(move || writer(proto, port, start, a, s)));
        }
        let s = stop.clone();
        threads.push(thread::spawn(move || maintainer(port, s)));
        thread::sleep(Duration::from_millis(50 + next_rand(&mut rng) % 400));
        server.kill9();
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        eprintln!(
            "cycle {cycle}: acknowledged so far {:?}",
            acked.lock().unwrap()
        );
    }
    let server = Server::start(&["-s", &store]);
    let port = server.port;
    let acked = acked.lock().unwrap().clone();
    verify(port, &acked);
    assert!(
        acked.values().all(|&n| n > 0),
        "every protocol wrote something: {acked:?}"
    );
    eprintln!("{cycles} cycles in {:?}", started.elapsed());
}
