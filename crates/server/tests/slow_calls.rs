//! Issue 12 item 10: CPU-heavy RPC procedures run off the worker threads
//! within a size and time budget, slow calls queue within bounds, and SIGTERM
//! ends the server in a bounded time however many calls are queued. Each
//! test drives the real server process (`common::spawn`).

mod common;
use common::*;
use rmpv::Value;
use std::io::{BufReader, BufWriter, Read, Write};
use std::net::TcpStream;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What other clients may wait for a `get` while heavy calls run.
const PROBE_BOUND: Duration = Duration::from_millis(100);
/// docs/reliability.md: SIGTERM exits within 2 s of grace for connections
/// plus the final synchronize; with no maintenance call running, 5 s is ample.
const SIGTERM_BOUND: Duration = Duration::from_secs(5);
/// The largest search pattern the server accepts (docs/reliability.md).
const MAX_PATTERN: usize = 4096;
/// Keys of 16 KiB stored for the heavy searches: an edit-distance search with
/// a 4 KiB origin over them is 13 G cells, longer than any time budget here.
const SEED_KEYS: usize = 200;

/// Every test here keeps the CPU busy with heavy searches: run one at a
/// time, so that the latency one measures is the server's, not its siblings'.
fn one_at_a_time() -> MutexGuard<'static, ()> {
    static CPU: Mutex<()> = Mutex::new(());
    CPU.lock().unwrap_or_else(|e| e.into_inner())
}

fn frame(msgid: u32, method: &str, params: Vec<Value>) -> Vec<u8> {
    let req = Value::Array(vec![
        Value::from(0),
        Value::from(msgid),
        Value::from(method),
        Value::Array(params),
    ]);
    let mut buf = Vec::new();
    rmpv::encode::write_value(&mut buf, &req).expect("encode");
    buf
}

/// One response: its msgid and `Ok(result)` or `Err((code, message))`.
type Answer = (u32, Result<Value, (i64, String)>);

fn read_answer(r: &mut impl Read) -> Answer {
    let v = rmpv::decode::read_value(r).expect("a response");
    let Value::Array(parts) = v else {
        panic!("not a response: {v:?}")
    };
    let id = parts.get(1).and_then(Value::as_u64).expect("msgid") as u32;
    match (&parts[2], &parts[3]) {
        (Value::Nil, result) => (id, Ok(result.clone())),
        (Value::Array(e), _) => {
            let code = e.first().and_then(Value::as_i64).expect("error code");
            let msg = e.get(1).and_then(Value::as_str).unwrap_or("").to_string();
            (id, Err((code, msg)))
        }
        // kt-msgpack's clients get the bare code when they sent only str.
        (Value::Integer(c), _) => (id, Err((c.as_i64().unwrap_or(0), String::new()))),
        (e, _) => panic!("bad error {e:?}"),
    }
}

fn rpc(s: &mut TcpStream, method: &str, params: Vec<Value>) -> Result<Value, (i64, String)> {
    s.write_all(&frame(1, method, params)).expect("send");
    read_answer(s).1
}

fn opts(entries: &[(&str, Value)]) -> Value {
    Value::Map(
        entries
            .iter()
            .map(|(k, v)| (Value::from(*k), v.clone()))
            .collect(),
    )
}

/// A key of `len` bytes, distinct per `i`: edit distances between them are long to compute.
fn long_key(i: usize, len: usize) -> Vec<u8> {
    let mut k = format!("{i:04}").into_bytes();
    k.extend((0..len - 4).map(|j| b'a' + ((j * 7 + i) % 26) as u8));
    k
}

/// Stores the sentinel and `n` keys of 16 KiB, the material of heavy searches.
fn seed(server: &Server, n: usize) {
    let mut c = server.connect();
    rpc(&mut c, "set", vec!["sentinel".into(), "kept".into()]).expect("set sentinel");
    for i in 0..n {
        let k = Value::Binary(long_key(i, 16 << 10));
        rpc(&mut c, "set", vec![k, "v".into()]).expect("set a long key");
    }
}

fn sentinel_reads_back(server: &Server) {
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("get sentinel\r\n"), "VALUE sentinel 0 4");
    assert_eq!(t.line(), "kept");
    assert_eq!(t.line(), "END");
}

/// `stats` over the text protocol, as name → value.
fn stats(server: &Server) -> Vec<(String, String)> {
    let mut t = Text::new(server.connect());
    t.send(b"stats\r\n");
    let mut out = Vec::new();
    loop {
        let l = t.line();
        if l == "END" {
            return out;
        }
        let mut w = l.splitn(3, ' ').skip(1);
        if let (Some(k), Some(v)) = (w.next(), w.next()) {
            out.push((k.to_string(), v.to_string()));
        }
    }
}

fn stat(server: &Server, name: &str) -> Option<u64> {
    stats(server)
        .into_iter()
        .find(|(k, _)| k == name)
        .and_then(|(_, v)| v.parse().ok())
}

/// `stat`, or `None` if the server does not answer within `wait`.
fn stat_within(server: &Server, name: &str, wait: Duration) -> Option<u64> {
    let mut s = server.connect();
    s.set_read_timeout(Some(wait)).ok();
    s.write_all(b"stats\r\n").ok()?;
    let mut text = String::new();
    let mut r = BufReader::new(s);
    while !text.ends_with("END\r\n") {
        if std::io::BufRead::read_line(&mut r, &mut text).ok()? == 0 {
            return None;
        }
    }
    let prefix = format!("STAT {name} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|v| v.parse().ok())
}

/// The heavy calls of item 10: 16 KiB origins and patterns (over the size
/// budget), and 4 KiB ones (within it) that cost 64 M edit-distance cells per key.
fn heavy_calls() -> Vec<(&'static str, Vec<Value>)> {
    let origin16 = Value::Binary(long_key(9999, 16 << 10));
    let origin4 = Value::Binary(long_key(9998, MAX_PATTERN));
    let all = opts(&[("range", Value::from(1 << 20))]);
    // As bin, so that the error carries its message (a str-only request
    // gets kt-msgpack's bare code).
    let regex16 = Value::Binary("(?:k|j)".repeat((16 << 10) / 7).into_bytes());
    vec![
        ("match_similar", vec![origin16.clone(), all.clone()]),
        ("match_regex", vec![regex16]),
        ("search", vec!["edit".into(), origin16]),
        ("match_similar", vec![origin4.clone(), all]),
        ("search", vec!["editbin".into(), origin4]),
    ]
}

#[test]
fn heavy_searches_do_not_stall_other_clients_and_answer_within_their_budget() {
    let _cpu = one_at_a_time();
    let server = Server::start(&[]);
    seed(&server, SEED_KEYS);
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let prober = {
        let mut t = Text::new(server.connect());
        let done = done.clone();
        std::thread::spawn(move || {
            let (mut worst, mut probes) = (Duration::ZERO, 0);
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                let start = Instant::now();
                assert_eq!(t.cmd("get sentinel\r\n"), "VALUE sentinel 0 4");
                assert_eq!(t.line(), "kept");
                assert_eq!(t.line(), "END");
                worst = worst.max(start.elapsed());
                probes += 1;
                std::thread::sleep(Duration::from_millis(2));
            }
            (worst, probes)
        })
    };
    let heavy: Vec<_> = heavy_calls()
        .into_iter()
        .map(|(method, params)| {
            let mut c = server.connect();
            c.set_read_timeout(Some(Duration::from_secs(60))).ok();
            std::thread::spawn(move || {
                let start = Instant::now();
                let r = rpc(&mut c, method, params);
                (method, r.map(|_| ()), start.elapsed())
            })
        })
        .collect();
    let mut answers = Vec::new();
    for h in heavy {
        answers.push(h.join().expect("a heavy call thread"));
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let (worst, probes) = prober.join().expect("the prober");
    for (method, r, took) in &answers {
        eprintln!("{method}: {r:?} after {took:?}");
        if let Err((code, msg)) = r {
            // A budget error says which budget; nothing else may fail.
            assert!(
                (*code == 36 && msg.contains("limit"))
                    || (*code == 41 && msg.contains("time budget")),
                "{method}: {code} {msg}"
            );
        }
    }
    // The 16 KiB origins and pattern are over the size budget.
    for (method, r, _) in &answers[..3] {
        assert!(matches!(r, Err((36, _))), "{method} with 16 KiB: {r:?}");
    }
    eprintln!("prober: worst {worst:?} over {probes} gets");
    assert!(
        worst < PROBE_BOUND,
        "a get waited {worst:?} while heavy searches ran"
    );
    assert!(probes > 10, "the prober ran {probes} gets");
    sentinel_reads_back(&server);
}

#[test]
fn a_search_over_its_time_budget_is_answered_with_an_error_saying_so() {
    let _cpu = one_at_a_time();
    let server = Server::start(&["--search-timeout", "1"]);
    seed(&server, SEED_KEYS);
    let mut c = server.connect();
    let origin = Value::Binary(long_key(9998, MAX_PATTERN));
    let start = Instant::now();
    let r = rpc(&mut c, "search", vec!["editbin".into(), origin]);
    let took = start.elapsed();
    match r {
        Err((41, msg)) => assert!(msg.contains("time budget"), "{msg}"),
        other => panic!("expected a time-budget error after 1 s, got {other:?} after {took:?}"),
    }
    assert!(took < Duration::from_secs(3), "answered after {took:?}");
    assert_eq!(stat(&server, "slow_calls_timed_out"), Some(1));
    // A cheap search on the same store still works.
    let r = rpc(&mut c, "match_prefix", vec!["sent".into()]);
    let Ok(Value::Map(m)) = r else {
        panic!("match_prefix failed: {r:?}")
    };
    let num = m.iter().find(|(k, _)| k.as_str() == Some("num"));
    assert_eq!(num.and_then(|(_, v)| v.as_str()), Some("1"), "{m:?}");
}

/// Sends `calls` pipelined requests on one connection from a thread while
/// another reads the answers; returns the reader's (ok, busy) counts.
fn pipeline(
    s: TcpStream,
    calls: usize,
    req: impl Fn(u32) -> Vec<u8> + Send + 'static,
) -> std::thread::JoinHandle<(usize, usize)> {
    let mut w = BufWriter::with_capacity(1 << 16, s.try_clone().expect("clone"));
    let writer = std::thread::spawn(move || {
        for id in 0..calls as u32 {
            if w.write_all(&req(id)).is_err() {
                return;
            }
        }
        let _ = w.flush();
    });
    let mut r = BufReader::with_capacity(1 << 16, s);
    std::thread::spawn(move || {
        let (mut ok, mut busy) = (0, 0);
        for _ in 0..calls {
            match read_answer(&mut r).1 {
                Ok(_) => ok += 1,
                Err((41, m)) if m.contains("busy") => busy += 1,
                Err(e) => panic!("unexpected answer {e:?}"),
            }
        }
        writer.join().expect("writer");
        (ok, busy)
    })
}

fn hard_sync(id: u32) -> Vec<u8> {
    frame(
        id,
        "synchronize",
        vec![opts(&[("hard", Value::Boolean(true))])],
    )
}

#[test]
fn three_hundred_thousand_pipelined_hard_synchronizes_keep_memory_bounded() {
    let _cpu = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let store = format!("{}/sync.tkh", dir.path().display());
    let server = Server::start(&["-s", &store]);
    seed(&server, 0);
    let before = server.rss_kib();
    // Without a bound, each queued call held a task (399 MiB for 300k).
    let bound_kib = before + 64 * 1024;
    const CALLS: usize = 300_000;
    let reader = pipeline(server.connect(), CALLS, hard_sync);
    let mut peak = before;
    while !reader.is_finished() {
        peak = peak.max(server.rss_kib());
        assert!(
            peak < bound_kib,
            "RSS reached {peak} KiB (started at {before} KiB) with hard synchronizes queued"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let (ok, busy) = reader.join().expect("reader");
    eprintln!("{ok} synchronized, {busy} refused as busy; RSS {before} → peak {peak} KiB");
    assert_eq!(ok + busy, CALLS);
    assert!(ok > 0 && busy > 0, "{ok} ok, {busy} busy");
    assert_eq!(stat(&server, "slow_calls_rejected"), Some(busy as u64));
    assert_eq!(stat(&server, "slow_calls_queued"), Some(0));
    assert_eq!(stat(&server, "slow_calls_running"), Some(0));
    sentinel_reads_back(&server);
}

/// Polls `stats` until `name` reads `want` (or 10 s pass); returns the last reading.
fn await_stat(server: &Server, name: &str, want: u64) -> Option<u64> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let v = stat(server, name);
        if v == Some(want) || Instant::now() > deadline {
            return v;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn slow_calls_are_bounded_per_connection_and_server_wide() {
    let _cpu = one_at_a_time();
    // Searches that run to their 5 s deadline hold both blocking threads, so
    // every call sent meanwhile is queued or refused, whatever the machine's speed.
    let server = Server::start(&["--search-timeout", "5"]);
    seed(&server, SEED_KEYS);
    let origin = Value::Binary(long_key(9998, MAX_PATTERN));
    let heavy = move |id| frame(id, "search", vec!["editbin".into(), origin.clone()]);
    // One connection: 16 admitted (docs/reliability.md), the 4 beyond refused
    // at once, before any admitted call finishes.
    let mut one = server.connect();
    let burst: Vec<u8> = (0..20).flat_map(&heavy).collect();
    one.write_all(&burst).unwrap();
    for _ in 0..4 {
        match read_answer(&mut one).1 {
            Err((41, m)) => assert!(m.contains("busy") && m.contains("connection"), "{m}"),
            other => panic!("expected busy, got {other:?}"),
        }
    }
    assert_eq!(stat(&server, "slow_calls_rejected"), Some(4));
    // Server-wide: 256 in all. 16 more connections of 16 calls: 240 fit.
    let mut conns: Vec<TcpStream> = (0..16).map(|_| server.connect()).collect();
    let burst: Vec<u8> = (0..16).flat_map(&heavy).collect();
    for c in conns.iter_mut() {
        c.write_all(&burst).unwrap();
    }
    assert_eq!(
        await_stat(&server, "slow_calls_rejected", 4 + 16),
        Some(4 + 16)
    );
    let queued = stat(&server, "slow_calls_queued").unwrap();
    let running = stat(&server, "slow_calls_running").unwrap();
    assert_eq!(queued + running, 256, "{queued} queued, {running} running");
    assert_eq!(running, 2, "-W 2 blocking threads");
    let mut last = server.connect();
    match rpc(&mut last, "match_regex", vec!["x".into()]) {
        Err((41, m)) => assert!(m.contains("busy") && m.contains("server"), "{m}"),
        other => panic!("expected server busy, got {other:?}"),
    }
    // A quick call is still answered at once.
    assert_eq!(rpc(&mut last, "ping", vec![]), Ok(Value::Nil));
    let started = Instant::now();
    assert_eq!(server.terminate().code(), Some(0));
    assert!(started.elapsed() < SIGTERM_BOUND, "{:?}", started.elapsed());
}

#[test]
fn sigterm_with_slow_calls_queued_exits_within_the_bound() {
    let _cpu = one_at_a_time();
    let dir = tempfile::tempdir().unwrap();
    let store = format!("{}/term.tkh", dir.path().display());
    let server = Server::start(&["-s", &store]);
    seed(&server, SEED_KEYS);
    // On four connections: heavy searches first (they hold the blocking
    // threads), then 20,000 hard synchronizes, all pipelined.
    let origin = Value::Binary(long_key(9998, MAX_PATTERN));
    let (first_tx, first_rx) = std::sync::mpsc::channel();
    for _ in 0..4 {
        let mut c = server.connect();
        let mut r = BufReader::new(c.try_clone().unwrap());
        let first = first_tx.clone();
        // Drains the answers, so the server is never held up writing them.
        std::thread::spawn(move || {
            if rmpv::decode::read_value(&mut r).is_ok() {
                let _ = first.send(());
            }
            while rmpv::decode::read_value(&mut r).is_ok() {}
        });
        let mut burst = Vec::new();
        for id in 0..3 {
            let all = opts(&[("range", Value::from(1 << 20))]);
            burst.extend(frame(id, "match_similar", vec![origin.clone(), all]));
        }
        for id in 3..20_000 {
            burst.extend(hard_sync(id));
        }
        std::thread::spawn(move || c.write_all(&burst));
    }
    // Every connection has had an answer: the server is working on its calls
    // (a server that runs them on its workers answers none for long: on
    // with the SIGTERM after 10 s then).
    let deadline = Instant::now() + Duration::from_secs(10);
    for _ in 0..4 {
        let left = deadline.saturating_duration_since(Instant::now());
        let _ = first_rx.recv_timeout(left);
    }
    let queued = stat_within(&server, "slow_calls_queued", Duration::from_secs(2));
    let mut child = server.child().take().expect("running");
    let start = Instant::now();
    // SAFETY: kill(2) on our own child's pid has no memory effects.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = loop {
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if start.elapsed() > SIGTERM_BOUND {
            let _ = child.kill();
            panic!(
                "memstored still ran {SIGTERM_BOUND:?} after SIGTERM; {}",
                server.diagnose()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    eprintln!("exited ({status}) {:?} after SIGTERM", start.elapsed());
    assert_eq!(status.code(), Some(0), "{}", server.diagnose());
    assert!(queued > Some(0), "calls were queued at SIGTERM: {queued:?}");
    // The store was closed cleanly: it reopens with the sentinel.
    let server = Server::start(&["-s", &store]);
    sentinel_reads_back(&server);
}
