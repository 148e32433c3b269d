//! One connection on an io_uring worker: the same steps as the epoll path's
//! loop (`connection::run`), as a state machine the worker drives with the
//! completions of one receive or one send at a time.

use crate::net::core::{ConnCore, SendPlan, Sending};
use crate::net::placement::Live;
use crate::protocols::session::{LateTx, Step};
use crate::state::conns::Registered;
use crate::state::server::Server;
use crate::state::watch::CloseReason;
use bytes::BytesMut;
use io_uring::{opcode, squeue, types};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Instant;

/// What the worker does for a connection next.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Next {
    Recv,
    Send,
    /// Retry `read_next` on the next tick: the memory budget is spent.
    WaitMemory,
    Close,
    /// Another protocol: serve it on a tokio worker.
    Handover,
}

/// A connection and its buffers; the kernel owns the buffer of the
/// operation in flight (`busy`) until its completion arrives.
pub(super) struct Conn<'s> {
    /// Unlisted before `stream` closes its descriptor (fields drop in order).
    listed: Option<Registered<'s>>,
    pub stream: std::net::TcpStream,
    pub peer: SocketAddr,
    pub live: Live,
    /// Buffers, session and charge, and the rules shared with the epoll path.
    pub core: ConnCore<'s>,
    /// How the replies being sent were charged.
    plan: Option<SendPlan>,
    /// What the batch said to do once its replies are written.
    after: Step,
    sent: usize,
    iov: Vec<libc::iovec>,
    msg: Box<libc::msghdr>,
    /// Since when a watched reply (charged, or started with the budget
    /// spent) has had no byte taken by its client.
    pub send_since: Option<Instant>,
    /// When a read buffer started to wait for the memory budget.
    pub memory_since: Option<Instant>,
    /// An operation is in flight.
    pub busy: bool,
    /// The operation in flight is a send.
    pub sending: bool,
    /// Close when the operation in flight completes.
    pub closing: bool,
    /// Stopping: write what is pending, then close.
    pub draining: bool,
    /// The watcher the connection became (`watch`): handed over with it.
    pub watcher: Option<Arc<crate::state::watch::Watcher>>,
}

impl<'s> Conn<'s> {
    pub fn new(
        srv: &'s Server,
        stream: std::net::TcpStream,
        peer: SocketAddr,
        live: Live,
    ) -> Conn<'s> {
        let _ = stream.set_nodelay(true);
        let listed = srv.conns.register(&stream, stream.local_addr(), Some(peer));
        let fd = stream.as_raw_fd();
        Conn {
            listed,
            stream,
            peer,
            live,
            core: ConnCore::new(srv, BytesMut::new(), fd),
            plan: None,
            after: Step::NeedInput(0),
            sent: 0,
            iov: Vec::new(),
            // SAFETY: an all-zero msghdr is a valid empty one.
            msg: Box::new(unsafe { std::mem::zeroed() }),
            send_since: None,
            memory_since: None,
            busy: false,
            sending: false,
            closing: false,
            draining: false,
            watcher: None,
        }
    }

    /// Unlists the connection (before it is handed over: the new owner
    /// lists it again, and watchers hear nothing).
    pub fn unlist(&mut self) {
        if let Some(l) = self.listed.take() {
            l.hand_over();
        }
    }

    /// How the connection is closing (`watch connevents`).
    pub fn close_as(&self, why: CloseReason) {
        if let Some(l) = &self.listed {
            l.info.closing(why);
        }
    }

    /// The session closed the connection: it ends, or goes on as the
    /// watcher it became (`watch`), served by a tokio worker.
    fn session_closed(&mut self) -> Next {
        self.close_as(self.core.close_reason());
        self.watcher = self.core.watcher();
        if self.watcher.is_some() {
            Next::Handover
        } else {
            Next::Close
        }
    }

    /// The receive into the buffer's free space.
    pub fn recv_entry(&mut self, user_data: u64) -> squeue::Entry {
        let max = self.core.read_max();
        let spare = self.core.rbuf.spare_capacity_mut();
        let len = u32::try_from(spare.len().min(max)).unwrap_or(u32::MAX);
        opcode::Recv::new(
            types::Fd(self.stream.as_raw_fd()),
            spare.as_mut_ptr().cast(),
            len,
        )
        .build()
        .user_data(user_data)
    }

    /// The send of what is pending after the `sent` bytes already written.
    pub fn send_entry(&mut self, user_data: u64) -> squeue::Entry {
        let fd = types::Fd(self.stream.as_raw_fd());
        self.iov.clear();
        let iov = &mut self.iov;
        self.core.out.each_piece(self.sent, |p| {
            iov.push(libc::iovec {
                iov_base: p.as_ptr() as *mut libc::c_void,
                iov_len: p.len(),
            })
        });
        let entry = match self.iov.as_slice() {
            [one] => opcode::Send::new(fd, one.iov_base.cast(), one.iov_len.min(1 << 30) as u32)
                .flags(libc::MSG_NOSIGNAL)
                .build(),
            _ => {
                self.msg.msg_iov = self.iov.as_mut_ptr();
                self.msg.msg_iovlen = self.iov.len();
                opcode::SendMsg::new(fd, &*self.msg)
                    .flags(libc::MSG_NOSIGNAL as u32)
                    .build()
            }
        };
        entry.user_data(user_data)
    }

    /// `n` bytes arrived in the buffer's free space.
    pub fn received(&mut self, srv: &Arc<Server>, late: &LateTx, n: usize) -> Next {
        let rbuf = &mut self.core.rbuf;
        let n = n.min(rbuf.capacity() - rbuf.len());
        // SAFETY: the kernel wrote n bytes into the spare capacity the
        // receive was given, which nobody touched while it was in flight.
        unsafe { rbuf.set_len(rbuf.len() + n) };
        if !self.core.arrived(srv, n) {
            return self.read_next(srv);
        }
        if self.core.session.is_none() {
            if !self.core.pick_session(srv) {
                return Next::Close;
            }
            if self.core.session.as_ref().is_some_and(|s| s.needs_tasks()) {
                return Next::Handover;
            }
        }
        if let Some(l) = &self.listed {
            l.info.begin();
        }
        self.batch(srv, late)
    }

    /// Serves every complete request in the buffer, until a reply must go out.
    fn batch(&mut self, srv: &Arc<Server>, late: &LateTx) -> Next {
        loop {
            let step = self.core.serve(srv, late);
            if !self.core.out.is_empty() {
                self.after = step;
                return self.start_send(srv);
            }
            match step {
                Step::NeedInput(n) => return self.await_input(srv, n),
                Step::Flush => continue,
                Step::Close => return self.session_closed(),
            }
        }
    }

    fn await_input(&mut self, srv: &Server, need: usize) -> Next {
        // Before the next read, as on the epoll path.
        let served = self.core.need;
        self.core.batch_done(served, need);
        if let Some(l) = &self.listed {
            l.info.end(need);
        }
        self.read_next(srv)
    }

    /// Writes acknowledged in the batch reach the OS before the reply does.
    fn start_send(&mut self, srv: &Server) -> Next {
        let plan = match self.core.before_send(srv) {
            Sending::Go(plan) => plan,
            Sending::Abort | Sending::Nothing => return Next::Close,
        };
        self.plan = Some(plan);
        self.sent = 0;
        // Watched as on the epoll path (`connection::write_out`).
        self.send_since = plan.watched.then(Instant::now);
        Next::Send
    }

    /// Whether a client that takes none of its replies for the budget's
    /// wait is dropped now (`Charge::must_progress`).
    pub fn must_progress(&self) -> bool {
        self.core.charge.must_progress()
    }

    /// `n` bytes of the pending replies were written.
    pub fn sent(&mut self, srv: &Arc<Server>, late: &LateTx, n: usize) -> Next {
        self.sent += n;
        let total = self.core.out.len();
        if self.sent < total {
            // Progress: the client's wait starts again.
            if self.send_since.is_some() {
                self.send_since = Some(Instant::now());
            }
            return Next::Send;
        }
        self.core.out.clear();
        self.send_since = None;
        if let Some(plan) = self.plan.take() {
            self.core.sent(srv, plan, total);
        }
        match self.after {
            Step::NeedInput(n) => self.await_input(srv, n),
            Step::Flush => self.batch(srv, late),
            Step::Close => self.session_closed(),
        }
    }

    /// Makes room for the next receive, as the epoll path does; when the
    /// budget has no room, waits for it (ticks) up to the budget's wait,
    /// then refuses the request as memcached does.
    pub fn read_next(&mut self, srv: &Server) -> Next {
        let Some(g) = self.core.make_room() else {
            self.memory_since = None;
            return Next::Recv;
        };
        if self.core.charge.try_grow(g.grow) {
            self.memory_since = None;
            self.core.grown(g.want);
            return Next::Recv;
        }
        let since = *self.memory_since.get_or_insert_with(Instant::now);
        if since.elapsed() < srv.budget.wait() {
            return Next::WaitMemory;
        }
        self.memory_since = None;
        let go_on = self.core.refuse_for_memory(srv);
        self.after = if go_on {
            Step::NeedInput(0)
        } else {
            Step::Close
        };
        match (self.core.out.is_empty(), go_on) {
            (false, _) => self.start_send(srv),
            (true, true) => {
                self.core.need = 0;
                self.read_next(srv)
            }
            (true, false) => Next::Close,
        }
    }

    /// Stops the connection's operation in flight (it completes with an
    /// error or end of file); the worker drops it then.
    pub fn cut(&mut self) {
        self.closing = true;
        // SAFETY: shutdown on a descriptor we own.
        unsafe { libc::shutdown(self.stream.as_raw_fd(), libc::SHUT_RDWR) };
    }
}
