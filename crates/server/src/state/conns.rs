//! The table behind `stats conns`: every listening socket of the memcached
//! port and every connection it accepted, with memcached's per-connection
//! fields (`process_stats_conns`): `addr`, `listen_addr`, `state` and
//! `secs_since_last_cmd`, numbered by file descriptor as memcached numbers
//! them.
//!
//! Why a table: memcached walks its `conns` array; tokio tasks have no
//! such list. Registering costs a mutex on accept and close only; a request
//! batch costs two relaxed stores on its own connection's entry.

use memstored_engine::access::clock;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;
use std::sync::Mutex;

use crate::state::watch::{CloseReason, Watchers};

const NEW: u8 = 0;
const BUSY: u8 = 1;
const IDLE: u8 = 2;
/// Waiting for the rest of a request whose length is known (a storage
/// command's data block, a binary request's body): memcached's `conn_nread`.
const NREAD: u8 = 3;
/// Shut down for idling (`-o idle_timeout`), not yet gone: `conn_closing`.
const CLOSING: u8 = 4;
/// A log watcher (`watch`): memcached's `conn_watch`, never idle-kicked.
const WATCH: u8 = 5;

/// One listening socket or connection.
#[derive(Debug)]
pub struct ConnInfo {
    /// memcached's `addr`: the peer, or the listening address.
    addr: String,
    /// memcached's `listen_addr`: the local end (connections only).
    listen_addr: Option<String>,
    /// `NEW`, `BUSY`, `IDLE` or `NREAD`: memcached's `conn_new_cmd`
    /// (nothing read yet), `conn_parse_cmd` (answering), `conn_read`
    /// (waiting for a request), `conn_nread` (waiting for the rest of one).
    state: AtomicU8,
    /// When the last request batch began, in the access clock's seconds.
    last_cmd: AtomicU32,
    /// How it closes, for `watch connevents` (`CloseReason` as a byte;
    /// memcached's default, `error`, unless a clean end was seen).
    close_reason: AtomicU8,
}

impl ConnInfo {
    /// A request batch begins: memcached sets `last_cmd_time` per command.
    #[inline]
    pub fn begin(&self) {
        self.state.store(BUSY, Relaxed);
        let now = clock();
        if self.last_cmd.load(Relaxed) != now {
            self.last_cmd.store(now, Relaxed);
        }
    }

    /// The batch is answered; the connection waits for input again:
    /// `need` is the session's `Step::NeedInput`, the bytes the next
    /// request takes when its length is known (0: a new request).
    #[inline]
    pub fn end(&self, need: usize) {
        self.state
            .store(if need > 0 { NREAD } else { IDLE }, Relaxed);
    }

    /// The connection became a log watcher (`watch`).
    pub fn watching(&self) {
        self.state.store(WATCH, Relaxed);
    }

    /// How the connection is closing (the last word counts).
    pub fn closing(&self, why: CloseReason) {
        self.close_reason.store(why as u8, Relaxed);
    }

    fn close_reason(&self) -> CloseReason {
        if self.state.load(Relaxed) == CLOSING {
            return CloseReason::IdleTimeout;
        }
        match self.close_reason.load(Relaxed) {
            r if r == CloseReason::Normal as u8 => CloseReason::Normal,
            r if r == CloseReason::Shutdown as u8 => CloseReason::Shutdown,
            _ => CloseReason::Error,
        }
    }

    fn state(&self) -> &'static str {
        match (&self.listen_addr, self.state.load(Relaxed)) {
            (None, _) => "conn_listening",
            (Some(_), NEW) => "conn_new_cmd",
            (Some(_), BUSY) => "conn_parse_cmd",
            (Some(_), NREAD) => "conn_nread",
            (Some(_), CLOSING) => "conn_closing",
            (Some(_), WATCH) => "conn_watch",
            (Some(_), _) => "conn_read",
        }
    }
}

/// memcached's `get_conn_text` for TCP: `tcp:1.2.3.4:port`, `tcp6:[::1]:port`.
pub(crate) fn text(a: SocketAddr) -> String {
    match a {
        SocketAddr::V4(v4) => format!("tcp:{}:{}", v4.ip(), v4.port()),
        SocketAddr::V6(v6) => format!("tcp6:[{}]:{}", v6.ip(), v6.port()),
    }
}

#[derive(Debug, Default)]
pub struct Conns {
    by_fd: Mutex<BTreeMap<i32, Arc<ConnInfo>>>,
    /// Told of connections opened and closed (`watch connevents`).
    watch: Arc<Watchers>,
    /// memcached's `-o idle_timeout=N` in seconds; 0: connections may idle
    /// for ever (memcached's default). Set once at start.
    idle_timeout: AtomicU32,
    /// Connections closed for idling (memcached's `idle_kicks`).
    idle_kicks: AtomicU64,
}

/// Removes its entry when the connection (or listener) goes away; drop it
/// before the socket, so its descriptor is not reused while listed.
pub struct Registered<'a> {
    conns: &'a Conns,
    fd: i32,
    pub info: Arc<ConnInfo>,
    /// Its close is logged to watchers (not when handed to another driver).
    announce: bool,
}

impl Registered<'_> {
    /// Unlists it without telling watchers: the connection goes on,
    /// listed again by the driver it is handed to.
    pub fn hand_over(mut self) {
        self.announce = false;
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        {
            let mut t = self.conns.by_fd.lock().unwrap_or_else(|e| e.into_inner());
            if t.get(&self.fd).is_some_and(|i| Arc::ptr_eq(i, &self.info)) {
                t.remove(&self.fd);
            }
        }
        if self.announce && self.info.listen_addr.is_some() {
            let why = self.info.close_reason();
            self.conns.watch.conn_close(&self.info.addr, why, self.fd);
        }
    }
}

impl Conns {
    /// A table whose connections are told to `watch`.
    pub fn watched_by(watch: Arc<Watchers>) -> Conns {
        Conns {
            watch,
            ..Conns::default()
        }
    }

    /// Lists `sock`, a listener when `peer` is `None`; `None` when its
    /// local address cannot be read (it is then left out of the table).
    pub fn register<S: AsRawFd>(
        &self,
        sock: &S,
        local: std::io::Result<SocketAddr>,
        peer: Option<SocketAddr>,
    ) -> Option<Registered<'_>> {
        let local = local.ok()?;
        let (addr, listen_addr) = match peer {
            Some(p) => (text(p), Some(text(local))),
            None => (text(local), None),
        };
        Some(self.register_as(sock, addr, listen_addr))
    }

    /// `register` with the addresses as `stats conns` prints them
    /// (`unix:PATH` for a Unix socket's connections and listener).
    pub fn register_as<S: AsRawFd>(
        &self,
        sock: &S,
        addr: String,
        listen_addr: Option<String>,
    ) -> Registered<'_> {
        let fd = sock.as_raw_fd();
        if listen_addr.is_some() {
            self.watch.conn_new(&addr, fd);
        }
        self.listed(fd, addr, listen_addr)
    }

    /// `register_as` for a connection handed over from another driver:
    /// watchers heard of it when it was accepted.
    pub fn register_handed<S: AsRawFd>(
        &self,
        sock: &S,
        addr: String,
        listen_addr: Option<String>,
    ) -> Registered<'_> {
        self.listed(sock.as_raw_fd(), addr, listen_addr)
    }

    fn listed(&self, fd: i32, addr: String, listen_addr: Option<String>) -> Registered<'_> {
        let info = Arc::new(ConnInfo {
            addr,
            listen_addr,
            state: AtomicU8::new(NEW),
            last_cmd: AtomicU32::new(clock()),
            close_reason: AtomicU8::new(CloseReason::Error as u8),
        });
        self.by_fd
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(fd, info.clone());
        Registered {
            conns: self,
            fd,
            info,
            announce: true,
        }
    }

    /// Turns on memcached's idle timeout: `kick_idle` closes TCP
    /// connections that waited for a request more than `secs` seconds.
    pub fn set_idle_timeout(&self, secs: u32) {
        self.idle_timeout.store(secs, Relaxed);
    }

    /// `-o idle_timeout`'s seconds, 0 when off.
    pub fn idle_timeout(&self) -> u32 {
        self.idle_timeout.load(Relaxed)
    }

    /// `stats`' `idle_kicks`.
    pub fn idle_kicks(&self) -> u64 {
        self.idle_kicks.load(Relaxed)
    }

    /// memcached's `conn_timeout_thread` pass: every TCP connection waiting
    /// for a request (`conn_new_cmd`, `conn_read`; not one inside a request
    /// or being answered) whose last request began more than the timeout
    /// ago is shut down, so that its own task sees the end of input and
    /// closes it, and counted in `idle_kicks`. Returns how many.
    pub fn kick_idle(&self) -> usize {
        let timeout = self.idle_timeout();
        if timeout == 0 {
            return 0;
        }
        let now = clock();
        let t = self.by_fd.lock().unwrap_or_else(|e| e.into_inner());
        let mut kicked = 0;
        for (fd, c) in t.iter() {
            let waiting = matches!(c.state.load(Relaxed), NEW | IDLE);
            let idle = now.saturating_sub(c.last_cmd.load(Relaxed));
            // memcached's IS_TCP: Unix socket clients are left alone.
            let tcp = c.listen_addr.is_some() && c.addr.starts_with("tcp");
            if !(tcp && waiting && idle > timeout) {
                continue;
            }
            c.state.store(CLOSING, Relaxed);
            // SAFETY: `fd` is the connection's open socket: its entry is
            // removed (under this lock) before the socket is closed
            // (`Registered`), so the descriptor cannot have been reused.
            unsafe { libc::shutdown(*fd, libc::SHUT_RDWR) };
            kicked += 1;
        }
        self.idle_kicks.fetch_add(kicked as u64, Relaxed);
        kicked
    }

    /// `stats conns`' lines, in descriptor order as memcached prints them.
    pub fn listing(&self) -> Vec<(String, String)> {
        let now = clock();
        let t = self.by_fd.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::with_capacity(t.len() * 4);
        for (fd, c) in t.iter() {
            out.push((format!("{fd}:addr"), c.addr.clone()));
            if let Some(l) = &c.listen_addr {
                out.push((format!("{fd}:listen_addr"), l.clone()));
            }
            out.push((format!("{fd}:state"), c.state().to_string()));
            let idle = now.saturating_sub(c.last_cmd.load(Relaxed));
            out.push((format!("{fd}:secs_since_last_cmd"), idle.to_string()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_listeners_and_connections_like_memcached() {
        let conns = Conns::default();
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = l.local_addr().unwrap();
        let reg_l = conns.register(&l, l.local_addr(), None).unwrap();
        let c = std::net::TcpStream::connect(at).unwrap();
        let peer = c.local_addr().unwrap();
        let (s, _) = l.accept().unwrap();
        let reg_c = conns.register(&s, s.local_addr(), Some(peer)).unwrap();
        let state = (format!("{}:state", reg_c.fd), "conn_new_cmd".to_string());
        assert!(conns.listing().contains(&state));
        reg_c.info.begin();
        let list = conns.listing();
        let (lf, cf) = (reg_l.fd, reg_c.fd);
        let want_l = [
            (format!("{lf}:addr"), format!("tcp:127.0.0.1:{}", at.port())),
            (format!("{lf}:state"), "conn_listening".to_string()),
        ];
        let want_c = [
            (
                format!("{cf}:addr"),
                format!("tcp:127.0.0.1:{}", peer.port()),
            ),
            (
                format!("{cf}:listen_addr"),
                format!("tcp:127.0.0.1:{}", at.port()),
            ),
            (format!("{cf}:state"), "conn_parse_cmd".to_string()),
        ];
        for w in want_l.iter().chain(&want_c) {
            assert!(list.contains(w), "{w:?} in {list:?}");
        }
        assert_eq!(list.len(), 7);
        reg_c.info.end(0);
        assert!(conns
            .listing()
            .contains(&(format!("{cf}:state"), "conn_read".into())));
        // A data block still to come (memcached's stats-conns.t).
        reg_c.info.end(8);
        assert!(conns
            .listing()
            .contains(&(format!("{cf}:state"), "conn_nread".into())));
        drop(reg_c);
        assert_eq!(conns.listing().len(), 3);
    }

    #[test]
    fn formats_ipv6_as_memcached() {
        let a: SocketAddr = "[::1]:11211".parse().unwrap();
        assert_eq!(text(a), "tcp6:[::1]:11211");
    }
}
