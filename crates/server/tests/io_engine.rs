//! `--io`: the memcached port's connections run on io_uring workers where the
//! kernel allows it (`auto`, the default), on epoll otherwise or when asked.
//! The whole suite runs on both (test.sh: once as is, once with
//! MEMSTORED_IO=epoll); these tests pin what is particular to the choice:
//! what `stats` reports, when io_uring is refused, replies larger than a
//! socket buffer (partial sends), and protocols handed over to tokio.

mod common;
use common::{stats_of, Server, Text};
use std::io::{Read, Write};

fn start(args: &[&str]) -> Server {
    let mut cmd = common::memstored();
    cmd.env_remove("MEMSTORED_SCHEDULER")
        .env_remove("MEMSTORED_IO")
        .args(args)
        .args(["-l", "127.0.0.1:0", "-R", "2"]);
    Server::launch(&mut cmd, "memstored", common::Announce::Stdout)
}

fn stat(server: &Server, group: &str, name: &str) -> String {
    stats_of(server, group)
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no {name} in stats {group}"))
}

/// Whether this kernel lets processes set up rings (0: everyone may).
fn kernel_allows_io_uring() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .map(|s| s.trim() == "0")
        .unwrap_or(true)
}

/// The names of the server's threads that start with `prefix` (cut to 15 bytes by the kernel).
fn threads_named(server: &Server, prefix: &str) -> usize {
    let pid = server.child().as_ref().expect("running").id();
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("task dir")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .filter(|n| n.starts_with(prefix))
        .count()
}

#[test]
fn auto_takes_io_uring_where_the_kernel_allows_it() {
    let server = start(&[]);
    let want = if kernel_allows_io_uring() {
        "io_uring"
    } else {
        "epoll"
    };
    assert_eq!(stat(&server, "", "io_engine"), want);
    assert_eq!(stat(&server, "settings", "io_engine"), want);
    if want == "io_uring" {
        common::wait_until(&server, "both io_uring workers named", |s| {
            threads_named(s, "memstored-uring") >= 2
        });
        assert_eq!(threads_named(&server, "memstored-uring"), 2, "one per -R");
    }
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("set k 0 0 1\r\nv\r\n"), "STORED");
    assert_eq!(t.listing("get k\r\n"), ["VALUE k 0 1", "v"]);
}

#[test]
fn epoll_when_asked_and_where_io_uring_cannot_serve() {
    for args in [
        &["--io", "epoll"][..],
        &["--scheduler", "shared"][..],
        &["--io", "auto", "--scheduler", "shared"][..],
    ] {
        let server = start(args);
        assert_eq!(stat(&server, "", "io_engine"), "epoll", "{args:?}");
        assert_eq!(threads_named(&server, "memstored-uring"), 0, "{args:?}");
        let mut t = Text::new(server.connect());
        assert_eq!(t.cmd("set k 0 0 1\r\nv\r\n"), "STORED", "{args:?}");
    }
}

#[test]
fn io_uring_asked_for_where_it_cannot_serve_is_refused_at_start() {
    let out = common::memstored()
        .env_remove("MEMSTORED_IO")
        .args([
            "--io",
            "io-uring",
            "--scheduler",
            "shared",
            "-l",
            "127.0.0.1:0",
        ])
        .output()
        .expect("run memstored");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--io io-uring: it needs --scheduler per-core"),
        "{err}"
    );
}

/// Both I/O paths, or only epoll where the kernel refuses io_uring.
fn engines() -> Vec<&'static str> {
    let all = ["io-uring", "epoll"];
    all.into_iter()
        .filter(|io| *io != "io-uring" || kernel_allows_io_uring())
        .collect()
}

/// Stores a 256 KiB value and asks for it 40 times in one pipelined write
/// (10 MiB of replies: more than one batch of 4 MiB and far more than a
/// socket buffer). Returns the connection and what one reply must be.
fn ask_for_ten_mib(server: &Server, io: &str) -> (std::net::TcpStream, Vec<u8>) {
    let mut t = Text::new(server.connect());
    let value: Vec<u8> = (0..256 * 1024).map(|i| (i % 251) as u8).collect();
    let mut set = format!("set big 7 0 {}\r\n", value.len()).into_bytes();
    set.extend_from_slice(&value);
    set.extend_from_slice(b"\r\n");
    t.send(&set);
    assert_eq!(t.line(), "STORED", "{io}");
    let mut s = server.connect();
    let gets: Vec<u8> = (0..40).flat_map(|_| b"get big\r\n".to_vec()).collect();
    s.write_all(&gets).expect("send gets");
    let header = format!("VALUE big 7 {}\r\n", value.len()).into_bytes();
    (s, [&header[..], &value[..], b"\r\nEND\r\n"].concat())
}

/// 40 gets of a 256 KiB value in one pipelined write: 10 MiB of replies,
/// more than one batch (4 MiB) and far more than a socket buffer, so the
/// sends are partial and resumed, and the batch is served in parts.
#[test]
fn replies_larger_than_a_socket_buffer_arrive_whole_and_in_order() {
    for io in engines() {
        let server = start(&["--io", io]);
        let (mut s, one) = ask_for_ten_mib(&server, io);
        let mut got = vec![0u8; one.len() * 40];
        s.read_exact(&mut got).expect("all replies");
        for (i, reply) in got.chunks(one.len()).enumerate() {
            assert!(reply == &one[..], "{io}: reply {i} differs");
        }
    }
}

/// On the io_uring path the first read decides the protocol; MessagePack-RPC
/// and Kyoto Tycoon's binary protocol go to a tokio worker with the bytes
/// already read, and are answered there, in the same connection.
#[test]
fn other_protocols_on_the_memcached_port_are_handed_over_with_their_first_bytes() {
    for io in engines() {
        let server = start(&["--io", io]);
        let mut s = server.connect();
        // [0, msgid, "ping", []], twice: the first arrives with the first
        // read (and goes over with the socket), the second after.
        for msgid in [1u8, 2] {
            s.write_all(&[0x94, 0x00, msgid, 0xa4, b'p', b'i', b'n', b'g', 0x90])
                .expect("send rpc");
            let mut reply = [0u8; 5];
            s.read_exact(&mut reply).expect("rpc reply");
            assert_eq!(
                reply,
                [0x94, 0x01, msgid, 0xc0, 0xc0],
                "{io}: [1, {msgid}, nil, nil]"
            );
        }
    }
}

/// A stop (SIGTERM) while a batch's replies are going out: they all arrive
/// before the connection closes, as on the epoll path, which finishes the
/// batch it is in. 10 MiB of replies is more than a socket buffer and more
/// than one batch, so the stop finds a send in flight and requests unserved.
#[test]
fn a_stop_lets_the_replies_of_the_batch_in_progress_out_first() {
    for io in engines() {
        let server = start(&["--io", io]);
        let (mut s, one) = ask_for_ten_mib(&server, io);
        // The first byte: the server is serving the batch.
        let mut first = [0u8; 1];
        s.read_exact(&mut first).expect("first byte");
        let reader = std::thread::spawn(move || {
            let mut rest = Vec::new();
            s.read_to_end(&mut rest).map(|_| rest)
        });
        assert!(server.terminate().success(), "{io}");
        let rest = reader.join().expect("reader").expect("read to the close");
        assert_eq!(
            1 + rest.len(),
            one.len() * 40,
            "{io}: every reply, then the close"
        );
    }
}
