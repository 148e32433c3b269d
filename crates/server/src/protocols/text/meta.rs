//! memcached meta commands: mg ms md ma me (mn is answered in `text.rs`).

use crate::command::{
    Absence, Arith, Delete, Get, Inspect, Invalidate, Number, Outcome, Peek, RemoveValue, Store,
    StoreKind,
};
use crate::protocols::out::Out;
use crate::state::server::{expires_at_text, ttl_remaining, Server};
use bytes::Bytes;
use memstored_engine::{Access, Meta, Record};
use memstored_protocol::text::response::{
    encode_meta, encode_meta_debug, encode_meta_value_head, encode_server_error, MetaReturn,
    MetaStatus, CLIENT_ERROR_FLUSH_DISABLED, CLIENT_ERROR_NON_NUMERIC, CRLF,
    SERVER_ERROR_OUT_OF_MEMORY, SERVER_ERROR_TOO_LARGE,
};
use memstored_protocol::text::{
    MetaArith, MetaArithMode, MetaDelete, MetaFlags, MetaGet, MetaSet, MetaSetMode,
};

/// The return flags a request asked for, in its order. `rec` is the item
/// (absent on a miss: then only `k` and `O` are echoed), `access` its access
/// state before this request (`h0`/`l0` without one).
fn returns<'a>(
    f: &'a MetaFlags,
    key: &'a [u8],
    rec: Option<&Record>,
    access: Option<Access>,
) -> Vec<MetaReturn<'a>> {
    let mut v = Vec::with_capacity(f.requested().len());
    for &letter in f.requested() {
        let r = match (letter, rec) {
            (b'k', _) => MetaReturn::Key {
                key,
                binary: f.base64_key,
            },
            (b'O', _) => match &f.opaque {
                Some(o) => MetaReturn::Opaque(o),
                None => continue,
            },
            (b'f', Some(r)) => MetaReturn::ClientFlags(r.meta.flags),
            (b'c', Some(r)) => MetaReturn::Cas(r.meta.cas),
            (b't', Some(r)) => {
                MetaReturn::Ttl(u64::try_from(ttl_remaining(r.meta.expires_at)).ok())
            }
            (b's', Some(r)) => MetaReturn::Size(r.value.len()),
            (b'h', Some(_)) => MetaReturn::Hit(access.is_some_and(|a| a.fetched)),
            (b'l', Some(_)) => MetaReturn::LastAccess(access.map_or(0, |a| a.idle_secs().into())),
            _ => continue,
        };
        v.push(r);
    }
    v
}

/// The meta protocol's one table for outcomes that are not a nominal
/// reply: the status line (with `k`/`O` echoed) or the error line.
fn status_reply(f: &MetaFlags, key: &[u8], o: &Outcome, out: &mut Out) {
    let status = match o {
        Outcome::NotFound => MetaStatus::Nf,
        Outcome::NotStored(_) => MetaStatus::Ns,
        Outcome::Exists => MetaStatus::Ex,
        Outcome::Stored { .. } | Outcome::Deleted | Outcome::Done => MetaStatus::Hd,
        Outcome::Found(_) | Outcome::Counted { .. } => MetaStatus::Hd,
        Outcome::NonNumeric => return out.put(CLIENT_ERROR_NON_NUMERIC),
        Outcome::TooLarge { .. } => return out.put(SERVER_ERROR_TOO_LARGE),
        Outcome::NoMemory => return out.put(SERVER_ERROR_OUT_OF_MEMORY),
        Outcome::ReadOnly => return encode_server_error("read only", out.buf()),
        // No meta command flushes; kept in the one table all the same.
        Outcome::FlushDisabled => return out.put(CLIENT_ERROR_FLUSH_DISABLED),
        Outcome::Overflow => return encode_server_error("the increment overflows", out.buf()),
        Outcome::Failed(e) => {
            tracing::debug!("meta command failed: {e}");
            return encode_server_error(&e.to_string(), out.buf());
        }
    };
    // Quiet mode hides only success: memcached still reports NF, NS and EX.
    if f.quiet && status == MetaStatus::Hd {
        return;
    }
    encode_meta(status, &returns(f, key, None, None), out.buf());
}

/// `mg <key> <flags>*`.
pub fn get(srv: &Server, m: MetaGet, out: &mut Out) {
    let f = &m.flags;
    let cmd = Get {
        key: m.key.clone(),
        touch: f.ttl.map(expires_at_text),
    };
    let mut vivified = false;
    // The access state is read only when asked for: a plain fetch stays
    // one lookup.
    let (mut found, mut access) = if f.return_hit || f.return_last_access || f.no_lru_bump {
        cmd.apply_access(srv, !f.no_lru_bump)
    } else {
        (cmd.apply(srv), None)
    };
    if let (Outcome::NotFound, Some(n)) = (&found, f.vivify_ttl) {
        // Autovivify: create an empty item; this client wins the recache.
        let add = Store {
            key: m.key.clone(),
            value: Bytes::new(),
            kind: StoreKind::Add,
            flags: 0,
            expires_at: expires_at_text(n),
            cas: None,
        };
        let created = srv
            .marks
            .vivify(&m.key, || match add.apply_with_cas(srv, f.new_cas) {
                Outcome::Stored { cas } => Ok(cas),
                o => Err(o),
            });
        found = match created {
            Ok(cas) => {
                vivified = true;
                // memcached bumps the new item after answering: its next
                // fetch sees it fetched. This one sees it new.
                access = cmd.fetch_access(srv, !f.no_lru_bump);
                let meta = Meta {
                    flags: 0,
                    expires_at: add.expires_at,
                    cas,
                };
                Outcome::Found(Record {
                    value: Bytes::new(),
                    meta,
                })
            }
            // Somebody else's add won the race: serve their item.
            Err(_) => Get::new(m.key.clone()).apply(srv),
        };
    }
    let r = match found {
        Outcome::Found(r) => r,
        Outcome::NotFound => {
            if !f.quiet {
                encode_meta(MetaStatus::En, &returns(f, &m.key, None, None), out.buf());
            }
            return;
        }
        o => return status_reply(f, &m.key, &o, out),
    };
    let recache_due = f
        .recache_ttl
        .is_some_and(|below| r.meta.expires_at != 0 && ttl_remaining(r.meta.expires_at) < below);
    let tokens = if vivified {
        // The mark was made with the add; this client holds the token.
        crate::state::marks::Tokens {
            won: true,
            ..Default::default()
        }
    } else {
        srv.marks.fetch(&m.key, r.meta.cas, recache_due)
    };
    let mut rets = returns(f, &m.key, Some(&r), access);
    // After the requested flags, in memcached's order.
    if tokens.already_sent {
        rets.push(MetaReturn::AlreadyWon);
    }
    if tokens.stale {
        rets.push(MetaReturn::Stale);
    }
    if tokens.won {
        rets.push(MetaReturn::Won);
    }
    // `C` with `v` (memcached 1.6.21+): the value only if the CAS differs,
    // so a client holding the current version gets `HD` and no bytes.
    if f.return_value && f.compare_cas != Some(r.meta.cas) {
        encode_meta_value_head(r.value.len(), &rets, out.buf());
        out.value_or_copy(&r.value);
        out.put(CRLF);
    } else {
        encode_meta(MetaStatus::Hd, &rets, out.buf());
    }
}

/// The engine's store kind for an `ms` mode.
pub fn store_kind(mode: MetaSetMode) -> StoreKind {
    match mode {
        MetaSetMode::Set => StoreKind::Set,
        MetaSetMode::Add => StoreKind::Add,
        MetaSetMode::Append => StoreKind::Append,
        MetaSetMode::Prepend => StoreKind::Prepend,
        MetaSetMode::Replace => StoreKind::Replace,
    }
}

/// `ms <key> <datalen> <flags>*` with its data block.
pub fn set(srv: &Server, m: MetaSet, value: Bytes, out: &mut Out) {
    let f = &m.flags;
    let cmd = Store {
        key: m.key.clone(),
        value,
        kind: store_kind(m.mode),
        flags: f.client_flags.unwrap_or(0),
        expires_at: f.ttl.map_or(0, expires_at_text),
        cas: if m.mode == MetaSetMode::Add {
            None
        } else {
            f.compare_cas
        },
    };
    let mut o = if f.invalidate {
        cmd.apply_allowing_stale(srv)
    } else {
        cmd.apply_with_cas(srv, f.new_cas)
    };
    let appending = matches!(m.mode, MetaSetMode::Append | MetaSetMode::Prepend);
    if let (true, Some(n), Outcome::NotStored(Absence::Absent)) = (appending, f.vivify_ttl, &o) {
        // `N` (memcached 1.6.21+): an append that misses creates the item
        // from its data, with N's TTL.
        let add = Store {
            kind: StoreKind::Add,
            expires_at: expires_at_text(n),
            ..cmd.clone()
        };
        o = add.apply_with_cas(srv, f.new_cas);
    }
    // `s`: the stored item's size, which an append makes the new total.
    let size = match (&o, appending) {
        (Outcome::Stored { .. }, true) => match (Peek { key: m.key.clone() }).apply(srv) {
            Outcome::Found(r) => r.value.len(),
            _ => cmd.value.len(),
        },
        _ => cmd.value.len(),
    };
    set_reply(f, &m.key, &o, size, out);
}

/// The reply to `ms`: `HD` echoing `k`, `O`, `c` (the new CAS) and `s`
/// (`size`, memcached 1.6.21+) only.
pub fn set_reply(f: &MetaFlags, key: &[u8], o: &Outcome, size: usize, out: &mut Out) {
    // memcached's _finalize_mset echoes `k`, `O` and `c` whatever the
    // status, `c` as `c0` when nothing was stored.
    let (status, cas) = match o {
        Outcome::Stored { cas } => (MetaStatus::Hd, *cas),
        Outcome::Exists => (MetaStatus::Ex, 0),
        Outcome::NotFound => (MetaStatus::Nf, 0),
        Outcome::NotStored(_) => (MetaStatus::Ns, 0),
        _ => return status_reply(f, key, o, out),
    };
    // Quiet mode hides only success.
    if f.quiet && status == MetaStatus::Hd {
        return;
    }
    let rec = Record {
        value: Bytes::new(),
        meta: Meta {
            flags: f.client_flags.unwrap_or(0),
            expires_at: 0,
            cas,
        },
    };
    let rets: Vec<MetaReturn<'_>> = returns(f, key, Some(&rec), None)
        .into_iter()
        .filter_map(|r| match r {
            MetaReturn::Key { .. } | MetaReturn::Opaque(_) | MetaReturn::Cas(_) => Some(r),
            MetaReturn::Size(_) => Some(MetaReturn::Size(size)),
            _ => None,
        })
        .collect();
    encode_meta(status, &rets, out.buf());
}

/// `md <key> <flags>*`; with `I`, marks the item stale instead of removing it.
pub fn delete(srv: &Server, m: MetaDelete, out: &mut Out) {
    let f = &m.flags;
    let o = if f.remove_value {
        RemoveValue {
            key: m.key.clone(),
            cas: f.compare_cas,
            flags: f.client_flags.unwrap_or(0),
            expires_at: f.ttl.map_or(0, expires_at_text),
            new_cas: f.new_cas,
        }
        .apply(srv)
    } else if f.invalidate {
        Invalidate {
            key: m.key.clone(),
            cas: f.compare_cas,
            expires_at: f.ttl.map(expires_at_text),
            new_cas: f.new_cas,
        }
        .apply(srv)
    } else {
        Delete {
            key: m.key.clone(),
            cas: f.compare_cas,
        }
        .apply_as(srv, "md")
    };
    status_reply(f, &m.key, &o, out);
}

/// `ma <key> <flags>*`: one atomic engine call, TTL update included.
pub fn arith(srv: &Server, m: MetaArith, out: &mut Out) {
    let f = &m.flags;
    let cmd = Arith {
        key: m.key.clone(),
        delta: m.delta,
        decrement: m.mode == MetaArithMode::Decrement,
        create: f.vivify_ttl.map(|n| (m.initial, 0u32, expires_at_text(n))),
        cas: f.compare_cas,
        touch: f.ttl.map(expires_at_text),
        new_cas: f.new_cas,
    };
    let o = cmd.apply(srv);
    let Outcome::Counted { value, meta } = o else {
        return status_reply(f, &m.key, &o, out);
    };
    // Quiet mode hides success, with or without a value (memcached).
    if f.quiet {
        return;
    }
    let text = match value {
        Number::Unsigned(n) => n.to_string(),
        Number::Signed(n) => n.to_string(),
        Number::Float(n) => n.to_string(),
    };
    let rec = Record {
        value: Bytes::from(text),
        meta,
    };
    let rets = returns(f, &m.key, Some(&rec), None);
    if f.return_value {
        encode_meta_value_head(rec.value.len(), &rets, out.buf());
        out.put(&rec.value);
        out.put(CRLF);
    } else {
        encode_meta(MetaStatus::Hd, &rets, out.buf());
    }
}

/// `me <key> [b]`: memcached's debug line, or EN. Like memcached, the key is
/// echoed as stored: as text, or base64 if it was stored as a binary key.
/// memstored does not remember how a key was stored, so a key that could
/// not be sent on a text line (space, CR, LF or NUL in it) counts as binary.
pub fn debug(srv: &Server, key: Bytes, _asked_base64: bool, out: &mut Out) {
    let base64 = key.iter().any(|&b| matches!(b, b' ' | b'\r' | b'\n' | 0));
    let (o, access) = Inspect { key: key.clone() }.apply(srv);
    match o {
        Outcome::Found(r) => {
            // Without access state (stores other than the cache): la=0, fetch=no.
            let info = format!(
                "exp={} la={} cas={} fetch={} cls=1 size={}",
                ttl_remaining(r.meta.expires_at),
                access.map_or(0, |a| a.idle_secs()),
                r.meta.cas,
                if access.is_some_and(|a| a.fetched) {
                    "yes"
                } else {
                    "no"
                },
                r.value.len()
            );
            encode_meta_debug(&key, base64, &info, out.buf());
        }
        Outcome::NotFound => encode_meta(MetaStatus::En, &[], out.buf()),
        o => status_reply(&MetaFlags::default(), &key, &o, out),
    }
}
