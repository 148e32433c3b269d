//! The floor: a server that answers memcached's binary protocol with canned
//! replies and does nothing else (no store, no stats, no limits), on epoll or
//! on io_uring. What it costs per request is what the kernel and the event
//! loop cost; no real server can go below it on the same machine and client.
//! `scripts/bench-floor.sh` runs it beside memcached and memstored.
//!
//!   cargo run --release --example floor -- epoll|uring THREADS PORT_FILE
//!
//! GET, GETQ, GETK and GETKQ get a hit with a 100-byte value; everything
//! else an empty success. Benchmark use only: it trusts its input.

use std::io;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};

fn main() -> io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = || io::Error::other("usage: floor epoll|uring THREADS PORT_FILE");
    let (mode, threads, port_file) = match args.as_slice() {
        [_, m, t, p] => (
            m.clone(),
            t.parse::<usize>().map_err(|_| usage())?,
            p.clone(),
        ),
        _ => return Err(usage()),
    };
    let first = listener(0)?;
    let port = first.local_addr()?.port();
    let mut listeners = vec![first];
    for _ in 1..threads.max(1) {
        listeners.push(listener(port)?);
    }
    let tmp = format!("{port_file}.tmp");
    std::fs::write(&tmp, format!("{port}\n"))?;
    std::fs::rename(&tmp, &port_file)?;
    let handles: Vec<_> = listeners
        .into_iter()
        .map(|l| {
            let uring = mode == "uring";
            std::thread::spawn(move || if uring { uring_loop(l) } else { epoll_loop(l) })
        })
        .collect();
    for h in handles {
        h.join()
            .map_err(|_| io::Error::other("a thread panicked"))??;
    }
    Ok(())
}

/// A listener on 127.0.0.1:`port` that other threads may share (SO_REUSEPORT).
fn listener(port: u16) -> io::Result<TcpListener> {
    // SAFETY: plain socket calls on a descriptor we own; results checked.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let l = TcpListener::from_raw_fd(fd);
        let one: libc::c_int = 1;
        let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        libc::setsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_REUSEPORT,
            (&one as *const libc::c_int).cast(),
            len,
        );
        let mut a: libc::sockaddr_in = std::mem::zeroed();
        a.sin_family = libc::AF_INET as libc::sa_family_t;
        a.sin_port = port.to_be();
        a.sin_addr.s_addr = u32::from_be_bytes([127, 0, 0, 1]).to_be();
        let alen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        if libc::bind(fd, (&a as *const libc::sockaddr_in).cast(), alen) != 0
            || libc::listen(fd, 1024) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok(l)
    }
}

/// Answers every complete request at the front of `input`; returns the bytes used.
fn answer(input: &[u8], out: &mut Vec<u8>) -> usize {
    let mut at = 0;
    while let Some(h) = input.get(at..at + 24) {
        let body = u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as usize;
        if input.len() - at < 24 + body {
            break;
        }
        let mut r = [0u8; 24];
        r[0] = 0x81;
        r[1] = h[1];
        r[12..16].copy_from_slice(&h[12..16]);
        r[23] = 1;
        if matches!(h[1], 0x00 | 0x09 | 0x0c | 0x0d) {
            r[4] = 4;
            r[8..12].copy_from_slice(&104u32.to_be_bytes());
            out.extend_from_slice(&r);
            out.extend_from_slice(&[0u8; 4]);
            out.extend_from_slice(&[b'x'; 100]);
        } else {
            out.extend_from_slice(&r);
        }
        at += 24 + body;
    }
    at
}

struct Conn {
    fd: RawFd,
    input: Vec<u8>,
    len: usize,
    out: Vec<u8>,
}

impl Conn {
    fn new(fd: RawFd) -> Conn {
        let one: libc::c_int = 1;
        // SAFETY: setsockopt on a descriptor we own.
        unsafe {
            libc::setsockopt(
                fd,
                libc::IPPROTO_TCP,
                libc::TCP_NODELAY,
                (&one as *const libc::c_int).cast(),
                4,
            );
        }
        Conn {
            fd,
            input: vec![0; 16384],
            len: 0,
            out: Vec::with_capacity(16384),
        }
    }

    /// `n` bytes arrived: answers what is complete into `out`.
    fn arrived(&mut self, n: usize) {
        self.len += n;
        let used = answer(&self.input[..self.len], &mut self.out);
        self.input.copy_within(used..self.len, 0);
        self.len -= used;
    }
}

fn slot(conns: &mut Vec<Option<Conn>>, c: Conn) -> usize {
    let i = conns.iter().position(Option::is_none).unwrap_or_else(|| {
        conns.push(None);
        conns.len() - 1
    });
    conns[i] = Some(c);
    i
}

/// memcached's shape: level-triggered epoll, one read and one send per wakeup.
fn epoll_loop(l: TcpListener) -> io::Result<()> {
    const LISTENER: u64 = u64::MAX;
    // SAFETY: epoll and socket calls on descriptors we own; buffers live
    // across each call.
    unsafe {
        let lfd = l.as_raw_fd();
        libc::fcntl(lfd, libc::F_SETFL, libc::O_NONBLOCK);
        let ep = libc::epoll_create1(libc::EPOLL_CLOEXEC);
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: LISTENER,
        };
        libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, lfd, &mut ev);
        let mut conns: Vec<Option<Conn>> = Vec::new();
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
        loop {
            let n = libc::epoll_wait(ep, events.as_mut_ptr(), 64, -1);
            for e in events.iter().take(n.max(0) as usize) {
                if e.u64 == LISTENER {
                    loop {
                        let fd = libc::accept4(
                            lfd,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            libc::SOCK_NONBLOCK,
                        );
                        if fd < 0 {
                            break;
                        }
                        let i = slot(&mut conns, Conn::new(fd));
                        let mut ev = libc::epoll_event {
                            events: libc::EPOLLIN as u32,
                            u64: i as u64,
                        };
                        libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev);
                    }
                    continue;
                }
                let i = e.u64 as usize;
                let Some(c) = conns.get_mut(i).and_then(Option::as_mut) else {
                    continue;
                };
                let r = libc::read(
                    c.fd,
                    c.input.as_mut_ptr().add(c.len).cast(),
                    c.input.len() - c.len,
                );
                if r <= 0 {
                    if r == 0 || io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock {
                        libc::close(c.fd);
                        conns[i] = None;
                    }
                    continue;
                }
                c.arrived(r as usize);
                if !c.out.is_empty() {
                    libc::send(c.fd, c.out.as_ptr().cast(), c.out.len(), libc::MSG_NOSIGNAL);
                    c.out.clear();
                }
            }
        }
    }
}

/// A ring: multishot accept, one receive or one send in flight per
/// connection, everything of a pass submitted by one io_uring_enter.
fn uring_loop(l: TcpListener) -> io::Result<()> {
    use io_uring::{opcode, squeue, types, IoUring};
    const ACCEPT: u64 = u64::MAX;
    fn push(ring: &mut IoUring, e: squeue::Entry) -> io::Result<()> {
        // SAFETY: entries point into connection buffers that stay put
        // until their completion.
        while unsafe { ring.submission().push(&e) }.is_err() {
            ring.submit()?;
        }
        Ok(())
    }
    fn recv(c: &mut Conn, i: usize) -> squeue::Entry {
        // SAFETY: within the buffer: len < input.len().
        let at = unsafe { c.input.as_mut_ptr().add(c.len) };
        opcode::Recv::new(types::Fd(c.fd), at, (c.input.len() - c.len) as u32)
            .build()
            .user_data((i as u64) << 1)
    }
    // Deferred task work, one issuer: completions are run when the loop
    // asks for them (`FLOOR_RING=plain`: the kernel's default instead).
    let mut ring = if std::env::var("FLOOR_RING").as_deref() == Ok("plain") {
        IoUring::new(1024)?
    } else {
        IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(1024)?
    };
    push(
        &mut ring,
        opcode::AcceptMulti::new(types::Fd(l.as_raw_fd()))
            .build()
            .user_data(ACCEPT),
    )?;
    let mut conns: Vec<Option<Conn>> = Vec::new();
    let mut done = Vec::new();
    loop {
        ring.submit_and_wait(1)?;
        done.clear();
        done.extend(ring.completion().map(|c| (c.user_data(), c.result())));
        for &(tag, res) in &done {
            if tag == ACCEPT {
                if res >= 0 {
                    let i = slot(&mut conns, Conn::new(res));
                    if let Some(c) = conns[i].as_mut() {
                        let e = recv(c, i);
                        push(&mut ring, e)?;
                    }
                }
                continue;
            }
            let i = (tag >> 1) as usize;
            let Some(c) = conns.get_mut(i).and_then(Option::as_mut) else {
                continue;
            };
            let e = if tag & 1 == 1 {
                c.out.clear();
                recv(c, i)
            } else if res <= 0 {
                // SAFETY: closing a descriptor we own, nothing in flight.
                unsafe { libc::close(c.fd) };
                conns[i] = None;
                continue;
            } else {
                c.arrived(res as usize);
                if c.out.is_empty() {
                    recv(c, i)
                } else {
                    opcode::Send::new(types::Fd(c.fd), c.out.as_ptr(), c.out.len() as u32)
                        .build()
                        .user_data(((i as u64) << 1) | 1)
                }
            };
            push(&mut ring, e)?;
        }
    }
}
