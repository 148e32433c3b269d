//! memcached text protocol: line parsing, data blocks, classic commands.
//! Meta commands share the connection and live in `meta.rs`.

use crate::connection::{ConnState, Step};
use crate::meta;
use crate::out::Out;
use crate::server::{expires_at_text, Server};
use crate::stats::{self, bump};
use bytes::{Bytes, BytesMut};
use memstored_engine::{Error, StoreMode as EngineMode, StoreOptions};
use memstored_protocol::text::response::{
    encode_number, encode_server_error, encode_stat, encode_value_head, encode_version,
    CLIENT_ERROR_NON_NUMERIC, CRLF, DELETED, END, ERROR, EXISTS, NOT_FOUND, NOT_STORED, OK, RESET,
    SERVER_ERROR_TOO_LARGE, STORED, TOUCHED,
};
use memstored_protocol::text::{
    data_block_len, take_data_block, Command, IncrDecr, StoreCommand, StoreKind, TextParser,
};
use memstored_protocol::Expiry;
use std::sync::Arc;

/// Text-protocol state of one connection.
pub struct TextConn {
    parser: TextParser,
    /// A storage command whose data block has not fully arrived.
    pending: Option<Command>,
}

impl Default for TextConn {
    fn default() -> Self {
        TextConn::new()
    }
}

impl TextConn {
    pub fn new() -> TextConn {
        TextConn {
            parser: TextParser::default(),
            pending: None,
        }
    }

    /// Handles every complete command in `rbuf`.
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
            if let Some(cmd) = self.pending.take() {
                let len = cmd.data_len().unwrap_or(0);
                match take_data_block(rbuf, len) {
                    Ok(None) => {
                        self.pending = Some(cmd);
                        return Step::NeedInput(len.saturating_add(2));
                    }
                    Ok(Some(value)) => {
                        // Own copy: a slice would pin the whole read buffer.
                        let value = Bytes::copy_from_slice(&value);
                        match cmd {
                            Command::Store(s) => store(srv, s, value, out),
                            Command::MetaSet(m) => meta::set(srv, m, value, out),
                            _ => {}
                        }
                    }
                    Err(e) => {
                        if !cmd.noreply() {
                            out.put(e.reply());
                        }
                    }
                }
                continue;
            }
            let cmd = match self.parser.parse_buf(rbuf) {
                Ok(None) => return Step::NeedInput(0),
                Ok(Some(cmd)) => cmd,
                Err(e) => {
                    if e.should_reply() {
                        out.put(e.reply());
                    }
                    if e.must_close() {
                        return Step::Close;
                    }
                    cs.skip = e.swallow;
                    continue;
                }
            };
            if let Some(len) = cmd.data_len() {
                if len as u64 > srv.cfg.max_item_size {
                    too_large(srv, &cmd, out);
                    cs.skip = data_block_len(len);
                } else {
                    self.pending = Some(cmd);
                }
                continue;
            }
            if !execute(srv, cmd, out) {
                return Step::Close;
            }
        }
    }
}

/// `SERVER_ERROR object too large for cache`; a failed `set` also drops the
/// old value, as memcached does.
fn too_large(srv: &Server, cmd: &Command, out: &mut Out) {
    let key = match cmd {
        Command::Store(s) if s.kind == StoreKind::Set => Some(&s.key),
        Command::MetaSet(m) => Some(&m.key),
        _ => None,
    };
    if let Some(key) = key {
        let _ = srv.db.remove(key);
    }
    if !cmd.noreply() {
        out.put(SERVER_ERROR_TOO_LARGE);
    }
}

/// Runs one command without a data block. False = close the connection.
fn execute(srv: &Arc<Server>, cmd: Command, out: &mut Out) -> bool {
    let c = &srv.counters;
    match cmd {
        Command::Get { keys, return_cas } => {
            for key in keys {
                bump(&c.cmd_get);
                match srv.get_counted(&key) {
                    Ok(Some(r)) => value_block(&key, r, return_cas, out),
                    Ok(None) => {}
                    Err(e) => tracing::debug!("get: {e}"),
                }
            }
            out.put(END);
        }
        Command::GetAndTouch {
            exptime,
            keys,
            return_cas,
        } => {
            let at = expires_at_text(exptime);
            for key in keys {
                bump(&c.cmd_touch);
                match srv.db.touch(&key, at) {
                    Ok(r) => {
                        bump(&c.touch_hits);
                        value_block(&key, r, return_cas, out);
                    }
                    Err(_) => bump(&c.touch_misses),
                }
            }
            out.put(END);
        }
        Command::Delete { key, noreply } => {
            let reply: &[u8] = match srv.db.remove(&key) {
                Ok(()) => {
                    bump(&c.delete_hits);
                    DELETED
                }
                Err(Error::NotFound(_)) => {
                    bump(&c.delete_misses);
                    NOT_FOUND
                }
                Err(e) => return server_error(&e, noreply, out),
            };
            if !noreply {
                out.put(reply);
            }
        }
        Command::IncrDecr {
            op,
            key,
            delta,
            noreply,
        } => {
            let decr = op == IncrDecr::Decr;
            let (hits, misses) = if decr {
                (&c.decr_hits, &c.decr_misses)
            } else {
                (&c.incr_hits, &c.incr_misses)
            };
            match srv.db.incr_decr(&key, delta, decr, None) {
                Ok((n, _)) => {
                    bump(hits);
                    if !noreply {
                        encode_number(n, out.buf());
                    }
                }
                Err(Error::NotFound(_)) => {
                    bump(misses);
                    if !noreply {
                        out.put(NOT_FOUND);
                    }
                }
                Err(Error::Infeasible(_)) => {
                    if !noreply {
                        out.put(CLIENT_ERROR_NON_NUMERIC);
                    }
                }
                Err(e) => return server_error(&e, noreply, out),
            }
        }
        Command::Touch {
            key,
            exptime,
            noreply,
        } => {
            bump(&c.cmd_touch);
            let reply: &[u8] = match srv.db.touch(&key, expires_at_text(exptime)) {
                Ok(_) => {
                    bump(&c.touch_hits);
                    TOUCHED
                }
                Err(Error::NotFound(_)) => {
                    bump(&c.touch_misses);
                    NOT_FOUND
                }
                Err(e) => return server_error(&e, noreply, out),
            };
            if !noreply {
                out.put(reply);
            }
        }
        Command::FlushAll { delay, noreply } => {
            bump(&c.cmd_flush);
            let now = memstored_engine::now_secs();
            let delay = match Expiry::from_exptime(delay.unwrap_or(0), now) {
                Expiry::At(t) => t.saturating_sub(now),
                Expiry::Never | Expiry::Expired => 0,
            };
            if let Err(e) = srv.flush(delay) {
                return server_error(&e, noreply, out);
            }
            if !noreply {
                out.put(OK);
            }
        }
        Command::Version => encode_version(crate::VERSION, out.buf()),
        Command::Verbosity { noreply, .. } => {
            if !noreply {
                out.put(OK);
            }
        }
        Command::Quit => return false,
        Command::Stats { args } => stats_reply(srv, &args, out),
        Command::MetaGet(m) => meta::get(srv, m, out),
        Command::MetaDelete(m) => meta::delete(srv, m, out),
        Command::MetaArith(m) => meta::arith(srv, m, out),
        Command::MetaNoop => out.put(b"MN\r\n"),
        Command::MetaDebug { key, base64 } => meta::debug(srv, &key, base64, out),
        // Storage commands come through `store` with their data block.
        Command::Store(_) | Command::MetaSet(_) => out.put(ERROR),
    }
    true
}

/// `VALUE <key> <flags> <len> [<cas>]`, the value as its own piece, `\r\n`.
fn value_block(key: &[u8], r: memstored_engine::Record, return_cas: bool, out: &mut Out) {
    let cas = return_cas.then_some(r.meta.cas);
    encode_value_head(key, r.meta.flags, r.value.len(), cas, out.buf());
    out.value(r.value);
    out.put(CRLF);
}

/// set/add/replace/append/prepend/cas with its data block.
fn store(srv: &Server, s: StoreCommand, value: Bytes, out: &mut Out) {
    let c = &srv.counters;
    bump(&c.cmd_set);
    let mode = match s.kind {
        StoreKind::Set | StoreKind::Cas => EngineMode::Set,
        StoreKind::Add => EngineMode::Add,
        StoreKind::Replace => EngineMode::Replace,
        StoreKind::Append => EngineMode::Append,
        StoreKind::Prepend => EngineMode::Prepend,
    };
    let opts = StoreOptions {
        flags: s.flags,
        expires_at: expires_at_text(s.exptime),
        cas: s.cas,
    };
    let is_cas = s.kind == StoreKind::Cas;
    let reply: &[u8] = match srv.db.store(&s.key, value, mode, opts) {
        Ok(_) => {
            bump(&c.total_items);
            if is_cas {
                bump(&c.cas_hits);
            }
            STORED
        }
        Err(Error::NotFound(_)) if is_cas => {
            bump(&c.cas_misses);
            NOT_FOUND
        }
        Err(Error::Infeasible(_)) if is_cas => {
            bump(&c.cas_badval);
            EXISTS
        }
        Err(Error::NotFound(_)) | Err(Error::Duplication(_)) => NOT_STORED,
        Err(e) => {
            server_error(&e, s.noreply, out);
            return;
        }
    };
    if !s.noreply {
        out.put(reply);
    }
}

/// An engine failure that is not a protocol outcome.
fn server_error(e: &Error, noreply: bool, out: &mut Out) -> bool {
    tracing::debug!("text command failed: {e}");
    if !noreply {
        match e {
            Error::Precondition(_) => encode_server_error("read only", out.buf()),
            _ => encode_server_error(&e.to_string(), out.buf()),
        }
    }
    true
}

/// `stats [group]`: STAT lines then END; `stats reset` = RESET.
fn stats_reply(srv: &Server, args: &[Bytes], out: &mut Out) {
    let group = args.first().map(|g| &g[..]);
    if group == Some(b"cachedump") {
        return crate::cachedump::reply(srv, args.get(1..).unwrap_or_default(), out);
    }
    if group == Some(b"reset") {
        stats::reset(srv);
        out.put(RESET);
        return;
    }
    match stats::listing(srv, group) {
        Some(list) => {
            for (k, v) in list {
                encode_stat(&k, v, out.buf());
            }
            out.put(END);
        }
        None => out.put(ERROR),
    }
}
