//! memcached binary protocol: framing checks and dispatch to the engine.

mod quiet;

use crate::command::store::refuse_oversized;
use crate::command::{
    Absence, Arith, Delete, Detailed, Flush, Get, Number, Outcome, Store, StoreKind, Touch,
};
use crate::protocols::out::Out;
use crate::protocols::session::{Cx, Flow, Session};
use crate::protocols::stats;
use crate::state::sasl;
use crate::state::server::{expires_at_binary, Server};
use bytes::Bytes;
use memstored_protocol::binary::{
    encode_error, encode_response, encode_response_head, ArithMode, BinaryFramer, Command,
    ConcatMode, Opcode, Refusal, Request, ResponseHead, Status, StoreMode,
};
use memstored_protocol::expiry::NO_AUTO_CREATE;
use std::sync::Arc;

/// Binary-protocol state of one connection.
pub struct BinarySession {
    framer: BinaryFramer,
    auth: crate::command::AuthState,
    /// Quiet gets or sets read and not yet run.
    quiet: quiet::QuietRun,
    /// What came after a run that could not finish before the output was
    /// written: served once the run is done (`resume`).
    held: Option<Held>,
    /// QUIT was served: the connection closes normally (`watch connevents`).
    quit: bool,
}

/// A request or refusal waiting for the quiet run before it.
enum Held {
    Request(ResponseHead, Command),
    Refusal(Refusal),
}

impl BinarySession {
    pub fn new(srv: &Server) -> BinarySession {
        BinarySession {
            framer: BinaryFramer {
                max_value: srv.cfg.max_item_size,
            },
            auth: crate::command::AuthState::default(),
            quiet: quiet::QuietRun::default(),
            held: None,
            quit: false,
        }
    }

    /// False when the server wants SASL and this connection has not passed
    /// it: then only the SASL opcodes and VERSION are served.
    fn may_run(&self, srv: &Server, op: Option<Opcode>) -> bool {
        self.auth.authenticated
            || srv.credentials.is_none()
            || matches!(
                op,
                Some(Opcode::SaslListMechs | Opcode::SaslAuth | Opcode::SaslStep | Opcode::Version)
            )
    }
}

/// memcached answers an unauthenticated command with AUTH_ERROR and hangs up.
fn refuse_unauthenticated(head: Option<ResponseHead>, out: &mut Out) -> Flow {
    if let Some(head) = head {
        encode_error(&head.with_status(Status::AuthError), out.buf());
    }
    Flow::Close
}

impl Session for BinarySession {
    type Framer = BinaryFramer;

    fn framer(&mut self) -> &mut BinaryFramer {
        &mut self.framer
    }

    fn out_of_memory(&mut self, rbuf: &mut bytes::BytesMut, out: &mut Out) -> bool {
        out_of_memory(rbuf, out);
        true
    }

    fn serve(&mut self, cx: &mut Cx<'_>, req: Request) -> Flow {
        let head = ResponseHead::reply_to(&req.header);
        if !self.may_run(cx.srv, req.header.opcode()) {
            // Nothing is gathered before authentication.
            return refuse_unauthenticated(Some(head), cx.out);
        }
        let cmd = match self.quiet.gather(cx.srv, head, req.command, cx.out) {
            Ok(()) if self.quiet.is_full() => return self.run_or_flush(cx),
            Ok(()) => return Flow::Continue,
            Err(cmd) => cmd,
        };
        // Any other request waits for the run before it.
        if self.quiet.run(cx.srv, cx.out) {
            self.execute(cx.srv, cmd, head, cx.out)
        } else {
            self.held = Some(Held::Request(head, cmd));
            Flow::Flush
        }
    }

    fn settle(&mut self, cx: &mut Cx<'_>) -> bool {
        self.quiet.run(cx.srv, cx.out)
    }

    fn resume(&mut self, cx: &mut Cx<'_>) -> Option<Flow> {
        if !self.quiet.is_stalled() && self.held.is_none() {
            return None;
        }
        if !self.quiet.run(cx.srv, cx.out) {
            return Some(Flow::Flush);
        }
        Some(match self.held.take() {
            None => Flow::Continue,
            Some(Held::Request(head, cmd)) => self.execute(cx.srv, cmd, head, cx.out),
            Some(Held::Refusal(answer)) => self.refuse_now(cx, answer, false),
        })
    }

    fn refuse(&mut self, cx: &mut Cx<'_>, answer: Refusal, closing: bool) -> Flow {
        // The run before it is answered first. A connection closing for a
        // bad frame gets what fits under the output limit; the rest of its
        // run is dropped with it.
        if !self.quiet.run(cx.srv, cx.out) && !closing {
            self.held = Some(Held::Refusal(answer));
            return Flow::Flush;
        }
        self.refuse_now(cx, answer, closing)
    }
}

impl BinarySession {
    /// Runs the gathered requests; `Flush` when the output limit stopped it.
    fn run_or_flush(&mut self, cx: &mut Cx<'_>) -> Flow {
        if self.quiet.run(cx.srv, cx.out) {
            Flow::Continue
        } else {
            Flow::Flush
        }
    }

    /// Answers a refusal (`Session::refuse`) once nothing is gathered before it.
    fn refuse_now(&mut self, cx: &mut Cx<'_>, answer: Refusal, closing: bool) -> Flow {
        // Authentication first: an unauthenticated client learns nothing
        // and changes nothing, not even by a size refusal.
        if !self.auth.authenticated && cx.srv.credentials.is_some() {
            return refuse_unauthenticated(answer.head(), cx.out);
        }
        match answer {
            Refusal::UnknownCommand(head) => {
                encode_error(&head.with_status(Status::UnknownCommand), cx.out.buf())
            }
            Refusal::TooLarge {
                head,
                opcode,
                key,
                size,
            } => {
                let kind = match opcode {
                    Opcode::Set | Opcode::SetQ => StoreKind::Set,
                    _ => StoreKind::Add,
                };
                let o = refuse_oversized(cx.srv, &key, kind, size);
                reply(head, o, Reply::Status, cx.out);
            }
            Refusal::Invalid(e) => {
                tracing::debug!("bad binary request: {e}");
                if let Some(head) = e.reply_head() {
                    encode_error(&head, cx.out.buf());
                }
                return Flow::Close;
            }
        }
        if closing {
            Flow::Close
        } else {
            Flow::Continue
        }
    }
}

/// A request a verb family served (`Ok`, with what comes next), or the
/// command handed back for another family.
type Served = Result<Flow, Command>;

impl BinarySession {
    /// Runs one request: each verb family serves its own opcodes and hands
    /// any other command on, most frequent first.
    fn execute(
        &mut self,
        srv: &Arc<Server>,
        command: Command,
        head: ResponseHead,
        out: &mut Out,
    ) -> Flow {
        // One match picks the family (a chain of families, each handing the
        // command on, cost a GET about 20 instructions more); a family that
        // does not serve what it is given hands it to `control`, which
        // answers anything.
        let served = match command {
            cmd @ (Command::Get { .. } | Command::GetAndTouch { .. } | Command::Touch { .. }) => {
                read(srv, head, cmd, out)
            }
            cmd @ (Command::Store { .. } | Command::Concat { .. }) => store(srv, head, cmd, out),
            cmd @ (Command::Delete { .. } | Command::Arith { .. }) => change(srv, head, cmd, out),
            cmd
            @ (Command::SaslListMechs | Command::SaslAuth { .. } | Command::SaslStep { .. }) => {
                self.sasl(srv, head, cmd, out)
            }
            cmd => Err(cmd),
        };
        match served {
            Ok(flow) => flow,
            Err(cmd) => {
                // `control` closes for QUIT only.
                let flow = control(srv, head, cmd, out);
                self.quit |= flow == Flow::Close;
                flow
            }
        }
    }

    /// How the connection closed, as far as the session knows.
    pub fn close_reason(&self) -> crate::state::watch::CloseReason {
        if self.quit {
            crate::state::watch::CloseReason::Normal
        } else {
            crate::state::watch::CloseReason::Error
        }
    }

    /// SASL_LIST_MECHS, SASL_AUTH, SASL_STEP.
    fn sasl(&mut self, srv: &Server, head: ResponseHead, cmd: Command, out: &mut Out) -> Served {
        let go_on = match cmd {
            Command::SaslListMechs => {
                match &srv.credentials {
                    Some(_) => {
                        let _ = encode_response(&head, &[], &[], sasl::MECHANISMS, out.buf());
                    }
                    None => encode_error(&head.with_status(Status::UnknownCommand), out.buf()),
                }
                true
            }
            Command::SaslAuth { mechanism, data } => {
                let go_on = self.auth.attempt(srv, &mechanism, &data);
                if self.auth.authenticated {
                    let _ = encode_response(&head, &[], &[], b"Authenticated", out.buf());
                } else {
                    encode_error(&head.with_status(Status::AuthError), out.buf());
                }
                go_on
            }
            Command::SaslStep { .. } => {
                // PLAIN has no second step: a failed attempt.
                let go_on = self.auth.attempt(srv, b"", b"");
                encode_error(&head.with_status(Status::AuthError), out.buf());
                go_on
            }
            cmd => return Err(cmd),
        };
        Ok(if go_on { Flow::Continue } else { Flow::Close })
    }
}

/// GET/GETQ/GETK/GETKQ, the GAT family, TOUCH.
fn read(srv: &Server, head: ResponseHead, cmd: Command, out: &mut Out) -> Served {
    match cmd {
        Command::Get {
            key,
            quiet,
            return_key,
        } => get(srv, head, key, None, quiet, return_key, out),
        Command::GetAndTouch {
            key,
            exptime,
            quiet,
            return_key,
        } => {
            let touch = Some(expires_at_binary(exptime));
            get(srv, head, key, touch, quiet, return_key, out)
        }
        Command::Touch { key, exptime } => {
            let o = Touch {
                key,
                expires_at: expires_at_binary(exptime),
            }
            .apply(srv);
            reply(head, o, Reply::Flags, out);
        }
        cmd => return Err(cmd),
    }
    Ok(Flow::Continue)
}

/// SET/ADD/REPLACE and APPEND/PREPEND, quiet or not.
fn store(srv: &Server, head: ResponseHead, cmd: Command, out: &mut Out) -> Served {
    let (cmd, absent, quiet) = match cmd {
        Command::Store {
            mode,
            key,
            value,
            flags,
            exptime,
            cas,
            quiet,
        } => {
            let kind = match mode {
                StoreMode::Set => StoreKind::Set,
                StoreMode::Add => StoreKind::Add,
                StoreMode::Replace => StoreKind::Replace,
            };
            let absent = if kind == StoreKind::Replace {
                Status::KeyNotFound
            } else {
                Status::NotStored
            };
            let cmd = Store {
                key,
                // Own copy, unless large: a slice would pin the whole read buffer.
                value: memstored_protocol::owned_value(value),
                kind,
                flags,
                expires_at: expires_at_binary(exptime),
                cas: (cas != 0 && mode != StoreMode::Add).then_some(cas),
            };
            (cmd, absent, quiet)
        }
        Command::Concat {
            mode,
            key,
            value,
            cas,
            quiet,
        } => {
            let cmd = Store {
                key,
                value: Bytes::copy_from_slice(&value),
                kind: match mode {
                    ConcatMode::Append => StoreKind::Append,
                    ConcatMode::Prepend => StoreKind::Prepend,
                },
                flags: 0,
                expires_at: 0,
                cas: (cas != 0).then_some(cas),
            };
            (cmd, Status::NotStored, quiet)
        }
        cmd => return Err(cmd),
    };
    let o = Detailed(cmd).apply(srv);
    reply(head, o, Reply::Stored { quiet, absent }, out);
    Ok(Flow::Continue)
}

/// DELETE, INCREMENT/DECREMENT, quiet or not.
fn change(srv: &Server, head: ResponseHead, cmd: Command, out: &mut Out) -> Served {
    match cmd {
        Command::Delete { key, cas, quiet } => {
            let cmd = Delete {
                key,
                cas: (cas != 0).then_some(cas),
            };
            reply(head, Detailed(cmd).apply(srv), Reply::Done { quiet }, out);
        }
        Command::Arith {
            mode,
            key,
            delta,
            initial,
            exptime,
            cas,
            quiet,
        } => {
            let cmd = Arith {
                create: (exptime != NO_AUTO_CREATE)
                    .then(|| (initial, 0u32, expires_at_binary(exptime))),
                cas: (cas != 0).then_some(cas),
                ..Arith::new(key, delta, mode == ArithMode::Decrement)
            };
            reply(head, cmd.apply(srv), Reply::Counter { quiet }, out);
        }
        cmd => return Err(cmd),
    }
    Ok(Flow::Continue)
}

/// QUIT, FLUSH, NOOP, VERSION, STAT and unknown opcodes: the commands no
/// other family took.
fn control(srv: &Arc<Server>, head: ResponseHead, cmd: Command, out: &mut Out) -> Flow {
    match cmd {
        Command::Quit { quiet } => {
            if !quiet {
                let _ = encode_response(&head, &[], &[], &[], out.buf());
            }
            return Flow::Close;
        }
        Command::Flush { delay, quiet } => {
            let cmd = Flush {
                delay: u64::from(delay.unwrap_or(0)),
                count_refused: false,
            };
            reply(head, cmd.apply(srv), Reply::Done { quiet }, out);
        }
        Command::Noop => {
            let _ = encode_response(&head, &[], &[], &[], out.buf());
        }
        Command::Version => {
            let _ = encode_response(&head, &[], &[], crate::VERSION.as_bytes(), out.buf());
        }
        Command::Stat { group } => stat_reply(srv, head, group.as_deref(), out),
        // `Unknown`: every other command was served by a family above.
        _ => encode_error(&head.with_status(Status::UnknownCommand), out.buf()),
    }
    Flow::Continue
}

/// GET/GETQ/GETK/GETKQ and the GAT family.
fn get(
    srv: &Server,
    head: ResponseHead,
    key: Bytes,
    touch: Option<u64>,
    quiet: bool,
    return_key: bool,
    out: &mut Out,
) {
    let cmd = Detailed(Get { key, touch });
    let o = cmd.apply(srv);
    let how = Reply::Value {
        key: &cmd.0.key,
        quiet,
        return_key,
    };
    reply(head, o, how, out);
}

/// What a request's success looks like on the wire; failures share one table.
enum Reply<'a> {
    /// GET/GETK/GAT: flags extras, the key if asked, the value; a quiet miss is silent.
    Value {
        key: &'a [u8],
        quiet: bool,
        return_key: bool,
    },
    /// TOUCH: flags extras.
    Flags,
    /// SET/ADD/REPLACE/APPEND/PREPEND: empty with the new CAS; `absent` is the
    /// status for a record that had to exist and did not.
    Stored { quiet: bool, absent: Status },
    /// INCREMENT/DECREMENT: the 8-byte value.
    Counter { quiet: bool },
    /// DELETE, FLUSH: empty.
    Done { quiet: bool },
    /// An answer decided before the command ran (a size refusal).
    Status,
}

/// The binary protocol's one table from outcomes to responses.
fn reply(head: ResponseHead, o: Outcome, how: Reply<'_>, out: &mut Out) {
    let quiet = match how {
        Reply::Value { quiet, .. }
        | Reply::Stored { quiet, .. }
        | Reply::Counter { quiet }
        | Reply::Done { quiet } => quiet,
        Reply::Flags | Reply::Status => false,
    };
    let status = match (&o, &how) {
        (
            Outcome::Found(r),
            Reply::Value {
                key, return_key, ..
            },
        ) => {
            let key = if *return_key { key } else { &[][..] };
            let head = head.with_cas(r.meta.cas);
            let extras = r.meta.flags.to_be_bytes();
            match encode_response_head(&head, &extras, key, r.value.len(), out.buf()) {
                Ok(()) => out.value_or_copy(&r.value),
                Err(_) => encode_error(&head.with_status(Status::TooLarge), out.buf()),
            }
            return;
        }
        (Outcome::Found(r), _) => {
            let extras = r.meta.flags.to_be_bytes();
            let _ = encode_response(&head.with_cas(r.meta.cas), &extras, &[], &[], out.buf());
            return;
        }
        (
            Outcome::NotFound,
            Reply::Value {
                key,
                quiet,
                return_key,
            },
        ) => {
            if *quiet {
                return;
            }
            if *return_key {
                let head = head.with_status(Status::KeyNotFound);
                let _ = encode_response(&head, &[], key, &[], out.buf());
                return;
            }
            Status::KeyNotFound
        }
        (Outcome::Stored { cas }, _) => {
            if !quiet {
                let _ = encode_response(&head.with_cas(*cas), &[], &[], &[], out.buf());
            }
            return;
        }
        (Outcome::Counted { value, meta }, _) => {
            if !quiet {
                let n = match value {
                    Number::Unsigned(n) => *n,
                    Number::Signed(n) => *n as u64,
                    Number::Float(f) => *f as u64,
                };
                let head = head.with_cas(meta.cas);
                let _ = encode_response(&head, &[], &[], &n.to_be_bytes(), out.buf());
            }
            return;
        }
        (Outcome::Deleted | Outcome::Done, _) => {
            if !quiet {
                let _ = encode_response(&head, &[], &[], &[], out.buf());
            }
            return;
        }
        (Outcome::NotFound, _) => Status::KeyNotFound,
        (Outcome::NotStored(Absence::Present) | Outcome::Exists, _) => Status::KeyExists,
        (Outcome::NotStored(Absence::Absent), Reply::Stored { absent, .. }) => *absent,
        (Outcome::NotStored(Absence::Absent), _) => Status::NotStored,
        (Outcome::NonNumeric, _) => Status::NonNumeric,
        (Outcome::TooLarge { .. }, _) => Status::TooLarge,
        // memcached -M's PROTOCOL_BINARY_RESPONSE_ENOMEM.
        (Outcome::NoMemory, _) => Status::OutOfMemory,
        // memcached's process_bin_flush with -F.
        (Outcome::FlushDisabled, _) => Status::AuthError,
        (Outcome::ReadOnly, _) => {
            // The body says why, like memcached's error texts do.
            let head = head.with_status(Status::NotStored);
            let msg = b"Not stored: the server is read-only";
            let _ = encode_response(&head, &[], &[], msg, out.buf());
            return;
        }
        (Outcome::Overflow | Outcome::Failed(_), _) => {
            tracing::debug!("binary opcode {:#04x}: {o:?}", head.opcode);
            let head = head.with_status(Status::OutOfMemory);
            // The body says why (a full disk: "out of space: ..."), as
            // memcached's error bodies do.
            let msg = match o {
                Outcome::Failed(e) => e.to_string(),
                _ => "Out of memory or storage failure".to_string(),
            };
            let _ = encode_response(&head, &[], &[], msg.as_bytes(), out.buf());
            return;
        }
    };
    encode_error(&head.with_status(status), out.buf());
}

/// STAT: one packet per stat, then an empty terminator.
fn stat_reply(srv: &Server, head: ResponseHead, group: Option<&[u8]>, out: &mut Out) {
    if group == Some(b"reset") {
        stats::reset(srv);
        let _ = encode_response(&head, &[], &[], &[], out.buf());
        return;
    }
    // memcached's process_bin_stat: the key is "detail on|off|dump".
    if let Some(sub) = group.and_then(|g| g.strip_prefix(b"detail")) {
        match sub {
            b" on" | b" off" => srv.detail.set_enabled(sub == b" on"),
            b" dump" => {
                let dump = srv.detail.dump();
                let _ = encode_response(&head, &[], b"detailed", &dump, out.buf());
            }
            _ => return encode_error(&head.with_status(Status::KeyNotFound), out.buf()),
        }
        let _ = encode_response(&head, &[], &[], &[], out.buf());
        return;
    }
    // memcached 1.6's binary STAT answers "conns" with "Not found": its
    // process_bin_stat does not know the group (only the text `stats` does).
    let listing = match group {
        Some(b"conns") => None,
        _ => stats::listing(srv, group),
    };
    match listing {
        Some(list) => {
            for (k, v) in list {
                let _ = encode_response(&head, &[], k.as_bytes(), v.as_bytes(), out.buf());
            }
            let _ = encode_response(&head, &[], &[], &[], out.buf());
        }
        None => encode_error(&head.with_status(Status::KeyNotFound), out.buf()),
    }
}

/// "Out of memory" to the request whose header starts `rbuf` (the memory
/// budget cannot hold its body; its body is skipped as it arrives).
fn out_of_memory(rbuf: &[u8], out: &mut Out) {
    if let Some(raw) = rbuf.first_chunk::<{ memstored_protocol::binary::HEADER_LEN }>() {
        let h = memstored_protocol::binary::BinaryHeader::decode(raw);
        encode_error(
            &ResponseHead::reply_to(&h).with_status(Status::OutOfMemory),
            out.buf(),
        );
    }
}
