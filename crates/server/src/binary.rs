//! memcached binary protocol: framing checks and dispatch to the engine.

use crate::connection::{ConnState, Step};
use crate::out::Out;
use crate::sasl;
use crate::server::{expires_at_binary, Server};
use crate::stats::{self, bump};
use bytes::{Bytes, BytesMut};
use memstored_engine::{Error, StoreMode as EngineMode, StoreOptions};
use memstored_protocol::binary::{
    encode_error, encode_response, encode_response_head, ArithMode, BinaryHeader, Command,
    ConcatMode, Opcode, Request, ResponseHead, Status, StoreMode, HEADER_LEN, REQUEST_MAGIC,
};
use memstored_protocol::expiry::NO_AUTO_CREATE;
use std::sync::Arc;

/// Binary-protocol state of one connection.
pub struct BinaryConn {
    authenticated: bool,
}

enum Flow {
    Continue,
    Close,
}

impl BinaryConn {
    pub fn new() -> BinaryConn {
        BinaryConn {
            authenticated: false,
        }
    }

    /// Handles every complete request in `rbuf`.
    pub fn process(
        &mut self,
        srv: &Arc<Server>,
        cs: &mut ConnState,
        rbuf: &mut BytesMut,
        out: &mut Out,
    ) -> Step {
        loop {
            if let Some(step) = cs.before_next(rbuf, out) {
                return step;
            }
            let Some(raw) = rbuf.first_chunk::<HEADER_LEN>() else {
                return Step::NeedInput(HEADER_LEN);
            };
            let h = BinaryHeader::decode(raw);
            if h.magic != REQUEST_MAGIC {
                tracing::debug!("bad binary magic {:#04x}; closing", h.magic);
                return Step::Close;
            }
            if let Err(e) = h.validate_request() {
                if let Some(head) = e.reply_head() {
                    encode_error(&head, out.buf());
                }
                return Step::Close;
            }
            let head = ResponseHead::reply_to(&h);
            let Some(op) = h.opcode() else {
                // Unknown opcode: answer and skip its body as it arrives.
                encode_error(&head.with_status(Status::UnknownCommand), out.buf());
                cs.skip = h.frame_len();
                continue;
            };
            if u64::from(h.value_len()) > srv.cfg.max_item_size {
                self.too_large(srv, &h, op, rbuf, out);
                cs.skip = h.frame_len();
                continue;
            }
            let frame_len = usize::try_from(h.frame_len()).unwrap_or(usize::MAX);
            if rbuf.len() < frame_len {
                return Step::NeedInput(frame_len);
            }
            let req = match Request::parse_buf(rbuf) {
                Ok(Some(r)) => r,
                Ok(None) => return Step::NeedInput(frame_len),
                Err(e) => {
                    if let Some(head) = e.reply_head() {
                        encode_error(&head, out.buf());
                    }
                    return Step::Close;
                }
            };
            if srv.credentials.is_some()
                && !self.authenticated
                && !matches!(
                    op,
                    Opcode::SaslListMechs | Opcode::SaslAuth | Opcode::SaslStep | Opcode::Version
                )
            {
                // memcached answers an unauthenticated command and hangs up.
                encode_error(&head.with_status(Status::AuthError), out.buf());
                return Step::Close;
            }
            if let Flow::Close = self.execute(srv, req, head, out) {
                return Step::Close;
            }
        }
    }

    /// 0x03 for a value over `-I`. Like memcached, a failed SET also
    /// drops the old value so no stale data stays visible.
    fn too_large(
        &self,
        srv: &Server,
        h: &BinaryHeader,
        op: Opcode,
        rbuf: &BytesMut,
        out: &mut Out,
    ) {
        encode_error(
            &ResponseHead::reply_to(h).with_status(Status::TooLarge),
            out.buf(),
        );
        if matches!(op, Opcode::Set | Opcode::SetQ) {
            let start = HEADER_LEN + usize::from(h.extras_len);
            if let Some(key) = rbuf.get(start..start + usize::from(h.key_len)) {
                let _ = srv.db.remove(key);
            }
        }
    }

    fn execute(
        &mut self,
        srv: &Arc<Server>,
        req: Request,
        head: ResponseHead,
        out: &mut Out,
    ) -> Flow {
        let c = &srv.counters;
        match req.command {
            Command::Get {
                key,
                quiet,
                return_key,
            } => {
                bump(&c.cmd_get);
                match srv.get_counted(&key) {
                    Ok(Some(r)) => {
                        value_reply(
                            head.with_cas(r.meta.cas),
                            r.meta.flags,
                            &key,
                            return_key,
                            r.value,
                            out,
                        );
                    }
                    Ok(None) => {
                        if !quiet {
                            miss_reply(head, &key, return_key, out);
                        }
                    }
                    Err(e) => engine_error(head, &e, out),
                }
            }
            Command::GetAndTouch {
                key,
                exptime,
                quiet,
                return_key,
            } => {
                bump(&c.cmd_touch);
                match srv.db.touch(&key, expires_at_binary(exptime)) {
                    Ok(r) => {
                        bump(&c.touch_hits);
                        value_reply(
                            head.with_cas(r.meta.cas),
                            r.meta.flags,
                            &key,
                            return_key,
                            r.value,
                            out,
                        );
                    }
                    Err(Error::NotFound(_)) => {
                        bump(&c.touch_misses);
                        if !quiet {
                            miss_reply(head, &key, return_key, out);
                        }
                    }
                    Err(e) => engine_error(head, &e, out),
                }
            }
            Command::Touch { key, exptime } => {
                bump(&c.cmd_touch);
                match srv.db.touch(&key, expires_at_binary(exptime)) {
                    Ok(r) => {
                        bump(&c.touch_hits);
                        let extras = r.meta.flags.to_be_bytes();
                        let _ = encode_response(
                            &head.with_cas(r.meta.cas),
                            &extras,
                            &[],
                            &[],
                            out.buf(),
                        );
                    }
                    Err(Error::NotFound(_)) => {
                        bump(&c.touch_misses);
                        encode_error(&head.with_status(Status::KeyNotFound), out.buf());
                    }
                    Err(e) => engine_error(head, &e, out),
                }
            }
            Command::Store {
                mode,
                key,
                value,
                flags,
                exptime,
                cas,
                quiet,
            } => {
                bump(&c.cmd_set);
                let engine_mode = match mode {
                    StoreMode::Set => EngineMode::Set,
                    StoreMode::Add => EngineMode::Add,
                    StoreMode::Replace => EngineMode::Replace,
                };
                let with_cas = cas != 0 && mode != StoreMode::Add;
                let opts = StoreOptions {
                    flags,
                    expires_at: expires_at_binary(exptime),
                    cas: with_cas.then_some(cas),
                };
                // Own copy: a slice would pin the whole read buffer.
                let value = Bytes::copy_from_slice(&value);
                match srv.db.store(&key, value, engine_mode, opts) {
                    Ok(new_cas) => {
                        bump(&c.total_items);
                        if with_cas {
                            bump(&c.cas_hits);
                        }
                        if !quiet {
                            let _ =
                                encode_response(&head.with_cas(new_cas), &[], &[], &[], out.buf());
                        }
                    }
                    Err(e) => {
                        let status = match (&e, mode) {
                            (Error::NotFound(_), _) => {
                                if with_cas {
                                    bump(&c.cas_misses);
                                }
                                Status::KeyNotFound
                            }
                            (Error::Duplication(_), _) => Status::KeyExists,
                            (Error::Infeasible(_), _) => {
                                bump(&c.cas_badval);
                                Status::KeyExists
                            }
                            _ => {
                                engine_error(head, &e, out);
                                return Flow::Continue;
                            }
                        };
                        encode_error(&head.with_status(status), out.buf());
                    }
                }
            }
            Command::Concat {
                mode,
                key,
                value,
                cas,
                quiet,
            } => {
                bump(&c.cmd_set);
                let engine_mode = match mode {
                    ConcatMode::Append => EngineMode::Append,
                    ConcatMode::Prepend => EngineMode::Prepend,
                };
                let opts = StoreOptions {
                    cas: (cas != 0).then_some(cas),
                    ..StoreOptions::default()
                };
                let value = Bytes::copy_from_slice(&value);
                match srv.db.store(&key, value, engine_mode, opts) {
                    Ok(new_cas) => {
                        bump(&c.total_items);
                        if !quiet {
                            let _ =
                                encode_response(&head.with_cas(new_cas), &[], &[], &[], out.buf());
                        }
                    }
                    Err(Error::NotFound(_)) => {
                        encode_error(&head.with_status(Status::NotStored), out.buf())
                    }
                    Err(Error::Infeasible(_)) => {
                        encode_error(&head.with_status(Status::KeyExists), out.buf())
                    }
                    Err(e) => engine_error(head, &e, out),
                }
            }
            Command::Delete { key, cas, quiet } => {
                match srv.db.remove_with_cas(&key, (cas != 0).then_some(cas)) {
                    Ok(()) => {
                        bump(&c.delete_hits);
                        if !quiet {
                            let _ = encode_response(&head, &[], &[], &[], out.buf());
                        }
                    }
                    Err(Error::NotFound(_)) => {
                        bump(&c.delete_misses);
                        encode_error(&head.with_status(Status::KeyNotFound), out.buf());
                    }
                    Err(Error::Infeasible(_)) => {
                        encode_error(&head.with_status(Status::KeyExists), out.buf())
                    }
                    Err(e) => engine_error(head, &e, out),
                }
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
                let decr = mode == ArithMode::Decrement;
                let (hits, misses) = if decr {
                    (&c.decr_hits, &c.decr_misses)
                } else {
                    (&c.incr_hits, &c.incr_misses)
                };
                let create = (exptime != NO_AUTO_CREATE)
                    .then(|| (initial, 0u32, expires_at_binary(exptime)));
                let want_cas = (cas != 0).then_some(cas);
                match srv.db.incr_decr_cas(&key, delta, decr, create, want_cas) {
                    Ok((n, new_cas)) => {
                        bump(hits);
                        if !quiet {
                            let _ = encode_response(
                                &head.with_cas(new_cas),
                                &[],
                                &[],
                                &n.to_be_bytes(),
                                out.buf(),
                            );
                        }
                    }
                    Err(Error::NotFound(_)) => {
                        bump(misses);
                        encode_error(&head.with_status(Status::KeyNotFound), out.buf());
                    }
                    Err(e) if e.is_cas_mismatch() => {
                        encode_error(&head.with_status(Status::KeyExists), out.buf())
                    }
                    Err(Error::Infeasible(_)) => {
                        encode_error(&head.with_status(Status::NonNumeric), out.buf())
                    }
                    Err(e) => engine_error(head, &e, out),
                }
            }
            Command::Quit { quiet } => {
                if !quiet {
                    let _ = encode_response(&head, &[], &[], &[], out.buf());
                }
                return Flow::Close;
            }
            Command::Flush { delay, quiet } => {
                bump(&c.cmd_flush);
                match srv.flush(u64::from(delay.unwrap_or(0))) {
                    Ok(()) => {
                        if !quiet {
                            let _ = encode_response(&head, &[], &[], &[], out.buf());
                        }
                    }
                    Err(e) => engine_error(head, &e, out),
                }
            }
            Command::Noop => {
                let _ = encode_response(&head, &[], &[], &[], out.buf());
            }
            Command::Version => {
                let _ = encode_response(&head, &[], &[], crate::VERSION.as_bytes(), out.buf());
            }
            Command::Stat { group } => stat_reply(srv, head, group.as_deref(), out),
            Command::SaslListMechs => match &srv.credentials {
                Some(_) => {
                    let _ = encode_response(&head, &[], &[], sasl::MECHANISMS, out.buf());
                }
                None => encode_error(&head.with_status(Status::UnknownCommand), out.buf()),
            },
            Command::SaslAuth { mechanism, data } => {
                bump(&c.auth_cmds);
                let ok = &mechanism[..] == sasl::MECHANISMS
                    && srv
                        .credentials
                        .as_ref()
                        .is_some_and(|cr| cr.check_plain(&data));
                if ok {
                    self.authenticated = true;
                    let _ = encode_response(&head, &[], &[], b"Authenticated", out.buf());
                } else {
                    bump(&c.auth_errors);
                    encode_error(&head.with_status(Status::AuthError), out.buf());
                }
            }
            Command::SaslStep { .. } => {
                bump(&c.auth_cmds);
                bump(&c.auth_errors);
                encode_error(&head.with_status(Status::AuthError), out.buf());
            }
            Command::Unknown { .. } => {
                encode_error(&head.with_status(Status::UnknownCommand), out.buf());
            }
        }
        Flow::Continue
    }
}

impl Default for BinaryConn {
    fn default() -> Self {
        BinaryConn::new()
    }
}

/// A GET/GAT hit: flags extras, optional key, the value as its own piece.
fn value_reply(
    head: ResponseHead,
    flags: u32,
    key: &[u8],
    return_key: bool,
    value: Bytes,
    out: &mut Out,
) {
    let key = if return_key { key } else { &[] };
    match encode_response_head(&head, &flags.to_be_bytes(), key, value.len(), out.buf()) {
        Ok(()) => out.value(value),
        Err(_) => encode_error(&head.with_status(Status::TooLarge), out.buf()),
    }
}

/// A GET/GAT miss: GETK-style misses carry the key instead of a message.
fn miss_reply(head: ResponseHead, key: &[u8], return_key: bool, out: &mut Out) {
    let head = head.with_status(Status::KeyNotFound);
    if return_key {
        let _ = encode_response(&head, &[], key, &[], out.buf());
    } else {
        encode_error(&head, out.buf());
    }
}

/// Engine failures that are not a protocol outcome (read-only store,
/// disk errors): logged and answered as "not stored".
fn engine_error(head: ResponseHead, e: &Error, out: &mut Out) {
    tracing::debug!("binary opcode {:#04x}: {e}", head.opcode);
    let (status, msg) = match e {
        // The body says why, like memcached's error texts do.
        Error::Precondition(_) => (Status::NotStored, "Not stored: the server is read-only"),
        _ => (Status::OutOfMemory, "Out of memory or storage failure"),
    };
    let _ = encode_response(
        &head.with_status(status),
        &[],
        &[],
        msg.as_bytes(),
        out.buf(),
    );
}

/// STAT: one packet per stat, then an empty terminator.
fn stat_reply(srv: &Server, head: ResponseHead, group: Option<&[u8]>, out: &mut Out) {
    if group == Some(b"reset") {
        stats::reset(srv);
        let _ = encode_response(&head, &[], &[], &[], out.buf());
        return;
    }
    match stats::listing(srv, group) {
        Some(list) => {
            for (k, v) in list {
                let _ = encode_response(&head, &[], k.as_bytes(), v.as_bytes(), out.buf());
            }
            let _ = encode_response(&head, &[], &[], &[], out.buf());
        }
        None => encode_error(&head.with_status(Status::KeyNotFound), out.buf()),
    }
}
