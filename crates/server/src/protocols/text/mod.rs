//! memcached text protocol: line parsing, data blocks, classic commands.
//! Meta commands share the connection and live in `meta.rs`.

pub mod admin;
pub mod ascii_auth;
pub mod cachedump;
pub mod meta;

use crate::command::store::refuse_oversized;
use crate::command::{
    self, Arith, Delete, Detailed, Flush, Get, GetMany, Number, Outcome, Store, Touch,
};
use crate::protocols::out::Out;
use crate::protocols::session::{Cx, Flow, Session};
use crate::protocols::stats;
use crate::state::server::{expires_at_text, Server};
use bytes::Bytes;
use memstored_engine::Record;
use memstored_protocol::text::response::{
    encode_number, encode_server_error, encode_stat, encode_value_head, encode_version,
    CLIENT_ERROR_FLUSH_DISABLED, CLIENT_ERROR_NON_NUMERIC, CRLF, DELETED, END, ERROR, EXISTS,
    NOT_FOUND, NOT_STORED, OK, RESET, SERVER_ERROR_OUT_OF_MEMORY, SERVER_ERROR_TOO_LARGE, STORED,
    TOUCHED,
};
use memstored_protocol::text::{Command, IncrDecr, Refusal, StoreCommand, StoreKind, TextFramer};
use memstored_protocol::Expiry;
use std::collections::HashMap;
use std::sync::Arc;

/// Text-protocol state of one connection.
pub struct TextSession {
    framer: TextFramer,
    /// Where an `lru_crawler metadump` goes on (`Session::resume`).
    dump: Option<crate::protocols::text::admin::Dump>,
    /// The watcher `watch` made: the connection closes to commands and
    /// is handed to it (`take_watcher`).
    watcher: Option<Arc<crate::state::watch::Watcher>>,
    /// How the connection closes (`quit`: normally), for `watch connevents`.
    close_reason: crate::state::watch::CloseReason,
}

impl TextSession {
    pub fn new(srv: &Server) -> TextSession {
        TextSession {
            framer: TextFramer::new(srv.cfg.max_item_size),
            dump: None,
            watcher: None,
            close_reason: crate::state::watch::CloseReason::Error,
        }
    }

    /// The watcher this connection became (`watch`), once.
    pub fn take_watcher(&mut self) -> Option<Arc<crate::state::watch::Watcher>> {
        self.watcher.take()
    }

    /// How the connection closed, as far as the session knows.
    pub fn close_reason(&self) -> crate::state::watch::CloseReason {
        self.close_reason
    }

    /// `watch [kinds...]`: memcached's answers, or the connection becomes a
    /// watcher (its `OK` is the watcher's first line).
    fn watch(&mut self, srv: &Server, args: &[Bytes], out: &mut Out) -> Flow {
        use crate::state::watch::{kinds_of, Refused};
        if !out.is_empty() {
            out.put(b"ERROR cannot pipeline other commands before watch\r\n");
            return Flow::Continue;
        }
        let words: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        let Some(kinds) = kinds_of(&words) else {
            out.put(ERROR);
            return Flow::Continue;
        };
        match srv.watch.add(kinds) {
            Ok(w) => {
                self.watcher = Some(w);
                Flow::Close
            }
            Err(Refused::Disabled) => {
                out.put(b"CLIENT_ERROR watch commands not allowed\r\n");
                Flow::Continue
            }
            Err(Refused::TooMany) => {
                out.put(b"WATCHER_TOO_MANY log watcher limit reached\r\n");
                Flow::Continue
            }
        }
    }
}

impl Session for TextSession {
    type Framer = TextFramer;

    fn framer(&mut self) -> &mut TextFramer {
        &mut self.framer
    }

    fn out_of_memory(&mut self, _rbuf: &mut bytes::BytesMut, out: &mut Out) -> bool {
        self.framer.forget_pending();
        out.put(memstored_protocol::text::response::SERVER_ERROR_OUT_OF_MEMORY);
        true
    }

    fn serve(&mut self, cx: &mut Cx<'_>, (cmd, value): (Command, Option<Bytes>)) -> Flow {
        let (srv, out) = (cx.srv, &mut *cx.out);
        match (cmd, value) {
            (Command::Store(s), Some(value)) => store(srv, s, value, out),
            (Command::MetaSet(m), Some(value)) => meta::set(srv, *m, value, out),
            (Command::LruCrawler { args }, _) => {
                self.dump = crate::protocols::text::admin::lru_crawler(srv, &args, out);
            }
            (Command::Watch { args }, _) => return self.watch(srv, &args, out),
            (cmd, _) => {
                use crate::state::watch::CloseReason;
                let quit = matches!(cmd, Command::Quit);
                if !execute(srv, cmd, out) {
                    self.close_reason = if quit {
                        CloseReason::Normal
                    } else {
                        CloseReason::Shutdown
                    };
                    return Flow::Close;
                }
            }
        }
        Flow::Continue
    }

    fn resume(&mut self, cx: &mut Cx<'_>) -> Option<Flow> {
        let place = self.dump.take()?;
        self.dump = crate::protocols::text::admin::dump_more(cx.srv, place, cx.out);
        Some(Flow::Continue)
    }

    fn refuse(&mut self, cx: &mut Cx<'_>, answer: Refusal, closing: bool) -> Flow {
        match answer {
            Refusal::TooLarge(cmd) => too_large(cx.srv, &cmd, cx.out),
            Refusal::Invalid { error, reply } => {
                if reply {
                    cx.out.put(error.reply());
                }
            }
        }
        if closing {
            Flow::Close
        } else {
            Flow::Continue
        }
    }
}

/// A storage command whose declared length is over `-I`: refused before its
/// data block is read (the block is skipped).
fn too_large(srv: &Server, cmd: &Command, out: &mut Out) {
    let (key, kind) = match cmd {
        Command::Store(s) => (&s.key, store_kind(s.kind)),
        Command::MetaSet(m) => (&m.key, meta::store_kind(m.mode)),
        _ => return,
    };
    let size = cmd.data_len().unwrap_or(0) as u64;
    let o = refuse_oversized(srv, key, kind, size);
    match cmd {
        Command::MetaSet(m) => meta::set_reply(&m.flags, &m.key, &o, m.data_len, out),
        _ => reply(&o, cmd.noreply(), out),
    }
}

fn store_kind(k: StoreKind) -> command::StoreKind {
    match k {
        StoreKind::Set | StoreKind::Cas => command::StoreKind::Set,
        StoreKind::Add => command::StoreKind::Add,
        StoreKind::Replace => command::StoreKind::Replace,
        StoreKind::Append => command::StoreKind::Append,
        StoreKind::Prepend => command::StoreKind::Prepend,
    }
}

/// Runs one command without a data block. False = close the connection.
fn execute(srv: &Arc<Server>, cmd: Command, out: &mut Out) -> bool {
    match cmd {
        Command::Get { keys, return_cas } => get(srv, keys, None, return_cas, out),
        Command::GetPart { keys, return_cas } => {
            values(srv, keys, None, return_cas, out);
        }
        Command::GetAndTouch {
            exptime,
            keys,
            return_cas,
        } => get(srv, keys, Some(expires_at_text(exptime)), return_cas, out),
        Command::Delete { key, noreply } => {
            let o = Detailed(Delete { key, cas: None }).apply(srv);
            reply(&o, noreply, out);
        }
        Command::IncrDecr {
            op,
            key,
            delta,
            noreply,
        } => {
            let cmd = Arith::new(key, delta, op == IncrDecr::Decr);
            reply(&cmd.apply(srv), noreply, out);
        }
        Command::Touch {
            key,
            exptime,
            noreply,
        } => {
            let cmd = Touch {
                key,
                expires_at: expires_at_text(exptime),
            };
            reply(&cmd.apply(srv), noreply, out);
        }
        Command::FlushAll { delay, noreply } => {
            let now = memstored_engine::now_secs();
            let delay = match Expiry::from_exptime(delay.unwrap_or(0), now) {
                Expiry::At(t) => t.saturating_sub(now),
                Expiry::Never | Expiry::Expired => 0,
            };
            let cmd = Flush {
                delay,
                count_refused: true,
            };
            reply(&cmd.apply(srv), noreply, out);
        }
        Command::Version => encode_version(crate::VERSION, out.buf()),
        Command::Verbosity { level, noreply } => {
            // memcached caps the level at its MAX_VERBOSITY_LEVEL (2).
            srv.verbosity
                .store(level.min(2), std::sync::atomic::Ordering::Relaxed);
            if !noreply {
                out.put(OK);
            }
        }
        Command::Shutdown { args } => {
            return crate::protocols::text::admin::shutdown(srv, &args, out)
        }
        Command::CacheMemlimit { megabytes, noreply } => {
            crate::protocols::text::admin::cache_memlimit(srv, megabytes, noreply, out)
        }
        // `TextSession::serve` runs it, a window per turn; here (no session
        // to go on in) the dump is written whole.
        Command::LruCrawler { args } => {
            let mut place = crate::protocols::text::admin::lru_crawler(srv, &args, out);
            while let Some(p) = place {
                place = crate::protocols::text::admin::dump_more(srv, p, out);
            }
        }
        Command::Slabs { args } => crate::protocols::text::admin::slabs_command(srv, &args, out),
        // memcached's words: `OK`, or why the files did not load.
        Command::RefreshCerts => match srv.tls.refresh() {
            Ok(()) => out.put(OK),
            Err(why) => {
                out.put(why.as_bytes());
                out.put(b"\r\n");
            }
        },
        Command::Quit => return false,
        Command::Stats { args } => stats_reply(srv, &args, out),
        Command::MetaGet(m) => meta::get(srv, *m, out),
        Command::MetaDelete(m) => meta::delete(srv, *m, out),
        Command::MetaArith(m) => meta::arith(srv, *m, out),
        Command::MetaNoop => out.put(b"MN\r\n"),
        Command::MetaDebug { key, base64 } => meta::debug(srv, key, base64, out),
        // Storage commands come through `store` with their data block,
        // `watch` through `TextSession::watch` (it hands the connection over).
        Command::Store(_) | Command::MetaSet(_) | Command::Watch { .. } => out.put(ERROR),
    }
    true
}

/// `get`/`gets`/`gat`/`gats`: a `VALUE` block per hit, then `END`. An error
/// (a touch on a read-only server, a failing disk) ends the reply with its
/// `SERVER_ERROR` line instead, as memcached ends a get it cannot finish.
///
/// A key named more than once is looked up once (`Get::repeat`).
fn get(srv: &Server, keys: Vec<Bytes>, touch: Option<u64>, return_cas: bool, out: &mut Out) {
    if values(srv, keys, touch, return_cas, out) {
        out.put(END);
    }
}

/// The `VALUE` blocks of a get's hits; false if an error reply was written
/// instead of the rest (the error line then ends the reply: no `END`).
fn values(
    srv: &Server,
    keys: Vec<Bytes>,
    touch: Option<u64>,
    return_cas: bool,
    out: &mut Out,
) -> bool {
    if touch.is_none() && keys.len() > 1 {
        return batched_values(srv, &keys, return_cas, out);
    }
    // Only multi-key gets pay for remembering what was found.
    let mut seen: Option<HashMap<Bytes, Option<Record>>> = (keys.len() > 1).then(HashMap::new);
    for key in keys {
        let cmd = Detailed(Get { key, touch });
        let key = &cmd.0.key;
        let o = match seen.as_mut() {
            None => cmd.apply(srv),
            Some(s) => match s.get(key) {
                Some(earlier) => cmd.repeat(srv, earlier.as_ref()),
                None => {
                    let o = cmd.apply(srv);
                    match &o {
                        Outcome::Found(r) => s.insert(key.clone(), Some(r.clone())),
                        Outcome::NotFound => s.insert(key.clone(), None),
                        _ => None,
                    };
                    o
                }
            },
        };
        match o {
            Outcome::Found(r) => value_block(key, &r, return_cas, out),
            Outcome::NotFound => {}
            o => {
                reply(&o, false, out);
                return false;
            }
        }
    }
    true
}

/// A multi-key `get`/`gets`: the distinct keys read in one batch
/// (`GetMany`: each shard's lock taken once for all of its keys), then the
/// `VALUE` blocks written in the order asked. A key named again is counted
/// as another get of what its first naming found (`Get::repeat`) and
/// answered with the same bytes, so a line naming one large compressed
/// value many times holds one decompressed copy, not one per naming.
fn batched_values(srv: &Server, keys: &[Bytes], return_cas: bool, out: &mut Out) -> bool {
    let first = first_namings(keys);
    let mut distinct: Vec<&[u8]> = Vec::with_capacity(keys.len());
    // For each position, its key's place in `distinct`.
    let mut slots: Vec<u32> = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let f = first[i] as usize;
        if f == i {
            slots.push(distinct.len() as u32);
            distinct.push(key);
        } else {
            slots.push(slots[f]);
        }
    }
    let found = match Detailed(GetMany { keys: &distinct }).apply(srv) {
        Ok(found) => found,
        Err(o) => {
            reply(&o, false, out);
            return false;
        }
    };
    for (i, key) in keys.iter().enumerate() {
        let Some(r) = found.get(slots[i] as usize) else {
            continue;
        };
        if first[i] as usize != i {
            let again = Detailed(Get::new(key.clone()));
            if let Outcome::Found(r) = again.repeat(srv, r.as_ref()) {
                value_block(key, &r, return_cas, out);
            }
        } else if let Some(r) = r {
            value_block(key, r, return_cas, out);
        }
    }
    true
}

/// For each position, the first position naming the same key. By sorting
/// positions by key: no hashing of client-chosen keys, so no input makes
/// it slower than `n log n` comparisons.
fn first_namings(keys: &[Bytes]) -> Vec<u32> {
    // A request's keys fit in u32 positions (a line part holds far fewer).
    let mut order: Vec<u32> = (0..keys.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| keys[a as usize].cmp(&keys[b as usize]).then(a.cmp(&b)));
    let mut first: Vec<u32> = (0..keys.len() as u32).collect();
    let mut run_start = None::<u32>;
    for &p in &order {
        match run_start {
            Some(s) if keys[s as usize] == keys[p as usize] => first[p as usize] = s,
            _ => run_start = Some(p),
        }
    }
    first
}

/// `VALUE <key> <flags> <len> [<cas>]`, the value as its own piece, `\r\n`.
fn value_block(key: &[u8], r: &memstored_engine::Record, return_cas: bool, out: &mut Out) {
    let cas = return_cas.then_some(r.meta.cas);
    encode_value_head(key, r.meta.flags, r.value.len(), cas, out.buf());
    out.value_or_copy(&r.value);
    out.put(CRLF);
}

/// set/add/replace/append/prepend/cas with its data block.
fn store(srv: &Server, s: StoreCommand, value: Bytes, out: &mut Out) {
    let cmd = Detailed(Store {
        key: s.key,
        value,
        kind: store_kind(s.kind),
        flags: s.flags,
        expires_at: expires_at_text(s.exptime),
        cas: s.cas,
    });
    reply(&cmd.apply(srv), s.noreply, out);
}

/// The text protocol's one table from outcomes to reply lines (`noreply`
/// silences all of them, errors included, as in memcached).
fn reply(o: &Outcome, noreply: bool, out: &mut Out) {
    if noreply {
        return;
    }
    match o {
        Outcome::Stored { .. } => out.put(STORED),
        Outcome::NotStored(_) => out.put(NOT_STORED),
        Outcome::Exists => out.put(EXISTS),
        Outcome::NotFound => out.put(NOT_FOUND),
        Outcome::Deleted => out.put(DELETED),
        Outcome::Found(_) => out.put(TOUCHED),
        Outcome::Counted { value, .. } => match value {
            Number::Unsigned(n) => encode_number(*n, out.buf()),
            Number::Signed(n) => out.put(format!("{n}\r\n").as_bytes()),
            Number::Float(n) => out.put(format!("{n}\r\n").as_bytes()),
        },
        Outcome::Done => out.put(OK),
        Outcome::NonNumeric => out.put(CLIENT_ERROR_NON_NUMERIC),
        Outcome::TooLarge { .. } => out.put(SERVER_ERROR_TOO_LARGE),
        Outcome::NoMemory => out.put(SERVER_ERROR_OUT_OF_MEMORY),
        Outcome::ReadOnly => encode_server_error("read only", out.buf()),
        Outcome::FlushDisabled => out.put(CLIENT_ERROR_FLUSH_DISABLED),
        Outcome::Overflow => encode_server_error("the increment overflows", out.buf()),
        Outcome::Failed(e) => {
            tracing::debug!("text command failed: {e}");
            encode_server_error(&e.to_string(), out.buf())
        }
    }
}

/// `stats [group]`: STAT lines then END; `stats reset` = RESET.
fn stats_reply(srv: &Server, args: &[Bytes], out: &mut Out) {
    let group = args.first().map(|g| &g[..]);
    if group == Some(b"cachedump") {
        return crate::protocols::text::cachedump::reply(
            srv,
            args.get(1..).unwrap_or_default(),
            out,
        );
    }
    if group == Some(b"detail") {
        return crate::protocols::text::admin::stats_detail(
            srv,
            args.get(1..).unwrap_or_default(),
            out,
        );
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
