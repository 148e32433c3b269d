//! memcached meta commands: mg ms md ma me (mn is answered in `text.rs`).

use crate::marks::Mark;
use crate::out::Out;
use crate::server::{expires_at_text, ttl_remaining, Server};
use crate::stats::bump;
use bytes::Bytes;
use memstored_engine::{Error, Meta, Record, StoreMode as EngineMode, StoreOptions};
use memstored_protocol::text::response::{
    encode_meta, encode_meta_debug, encode_meta_value_head, encode_server_error, MetaReturn,
    MetaStatus, CLIENT_ERROR_NON_NUMERIC, CRLF,
};
use memstored_protocol::text::{
    MetaArith, MetaArithMode, MetaDelete, MetaFlags, MetaGet, MetaSet, MetaSetMode,
};

/// The return flags a request asked for, in its order. `rec` is the item
/// (absent on a miss: then only `k` and `O` are echoed).
fn returns<'a>(f: &'a MetaFlags, key: &'a [u8], rec: Option<&Record>) -> Vec<MetaReturn<'a>> {
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
            (b'h', Some(_)) => MetaReturn::Hit(false),
            (b'l', Some(_)) => MetaReturn::LastAccess(0),
            _ => continue,
        };
        v.push(r);
    }
    v
}

fn server_error(e: &Error, out: &mut Out) {
    tracing::debug!("meta command failed: {e}");
    match e {
        Error::Precondition(_) => encode_server_error("read only", out.buf()),
        _ => encode_server_error(&e.to_string(), out.buf()),
    }
}

/// `mg <key> <flags>*`.
pub fn get(srv: &Server, m: MetaGet, out: &mut Out) {
    let c = &srv.counters;
    let f = &m.flags;
    let mut vivified = false;
    let found = match f.ttl {
        Some(t) => {
            bump(&c.cmd_touch);
            match srv.db.touch(&m.key, expires_at_text(t)) {
                Ok(r) => {
                    bump(&c.touch_hits);
                    Ok(Some(r))
                }
                Err(Error::NotFound(_)) => {
                    bump(&c.touch_misses);
                    Ok(None)
                }
                Err(e) => Err(e),
            }
        }
        None => {
            bump(&c.cmd_get);
            let r = srv.db.get_record(&m.key);
            match &r {
                Ok(Some(_)) => bump(&c.get_hits),
                Ok(None) => bump(&c.get_misses),
                Err(_) => {}
            }
            r
        }
    };
    let mut rec = match found {
        Ok(r) => r,
        Err(e) => return server_error(&e, out),
    };
    if rec.is_none() {
        if let Some(n) = f.vivify_ttl {
            // Autovivify: create an empty item; this client wins the recache.
            let expires_at = expires_at_text(n);
            let opts = StoreOptions {
                flags: 0,
                expires_at,
                cas: None,
            };
            let created = srv.marks.vivify(&m.key, || {
                srv.db.store(&m.key, Bytes::new(), EngineMode::Add, opts)
            });
            match created {
                Ok(cas) => {
                    vivified = true;
                    rec = Some(Record {
                        value: Bytes::new(),
                        meta: Meta {
                            flags: 0,
                            expires_at,
                            cas,
                        },
                    });
                }
                Err(_) => rec = srv.db.get_record(&m.key).ok().flatten(),
            }
        }
    }
    match rec {
        Some(r) => {
            let recache_due = f.recache_ttl.is_some_and(|below| {
                r.meta.expires_at != 0 && ttl_remaining(r.meta.expires_at) < below
            });
            let tokens = if vivified {
                // The mark was made with the add; this client holds the token.
                crate::marks::Tokens {
                    won: true,
                    ..Default::default()
                }
            } else {
                srv.marks.fetch(&m.key, r.meta.cas, recache_due)
            };
            let mut rets = returns(f, &m.key, Some(&r));
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
            if f.return_value {
                encode_meta_value_head(r.value.len(), &rets, out.buf());
                out.value(r.value);
                out.put(CRLF);
            } else {
                encode_meta(MetaStatus::Hd, &rets, out.buf());
            }
        }
        None => {
            if !f.quiet {
                encode_meta(MetaStatus::En, &returns(f, &m.key, None), out.buf());
            }
        }
    }
}

/// `ms <key> <datalen> <flags>*` with its data block.
pub fn set(srv: &Server, m: MetaSet, value: Bytes, out: &mut Out) {
    let c = &srv.counters;
    bump(&c.cmd_set);
    let f = &m.flags;
    let mode = match m.mode {
        MetaSetMode::Set => EngineMode::Set,
        MetaSetMode::Add => EngineMode::Add,
        MetaSetMode::Append => EngineMode::Append,
        MetaSetMode::Prepend => EngineMode::Prepend,
        MetaSetMode::Replace => EngineMode::Replace,
    };
    let cas = if m.mode == MetaSetMode::Add {
        None
    } else {
        f.compare_cas
    };
    let opts = StoreOptions {
        flags: f.client_flags.unwrap_or(0),
        expires_at: f.ttl.map_or(0, expires_at_text),
        cas,
    };
    let stored = match srv.db.store(&m.key, value.clone(), mode, opts) {
        Err(Error::Infeasible(_))
            if f.invalidate
                && cas.is_some()
                && mode != EngineMode::Append
                && mode != EngineMode::Prepend =>
        {
            store_stale(srv, &m.key, value, mode, opts)
        }
        r => r,
    };
    let status = match stored {
        Ok(new_cas) => {
            bump(&c.total_items);
            if cas.is_some() {
                bump(&c.cas_hits);
            }
            if f.quiet {
                return;
            }
            let rec = Record {
                value: Bytes::new(),
                meta: Meta {
                    flags: opts.flags,
                    expires_at: opts.expires_at,
                    cas: new_cas,
                },
            };
            // ms echoes k, O and c (the new CAS) only.
            let rets: Vec<MetaReturn<'_>> = returns(f, &m.key, Some(&rec))
                .into_iter()
                .filter(|r| {
                    matches!(
                        r,
                        MetaReturn::Key { .. } | MetaReturn::Opaque(_) | MetaReturn::Cas(_)
                    )
                })
                .collect();
            return encode_meta(MetaStatus::Hd, &rets, out.buf());
        }
        Err(Error::NotFound(_)) if cas.is_some() => {
            bump(&c.cas_misses);
            MetaStatus::Nf
        }
        Err(Error::Infeasible(_)) => {
            bump(&c.cas_badval);
            MetaStatus::Ex
        }
        Err(Error::NotFound(_)) | Err(Error::Duplication(_)) => MetaStatus::Ns,
        Err(e) => return server_error(&e, out),
    };
    encode_meta(status, &returns(f, &m.key, None), out.buf());
}

/// `ms <key> .. C<cas> I` whose CAS is older than the item's: memcached's
/// `CAS_ALLOW_STALE`. The value is stored anyway, keeping the item's TTL, and
/// the new version is stale (and keeps a token already sent), so readers
/// still see `X` until a write with the current CAS lands. A CAS that is not
/// older is a plain mismatch (`EX`).
fn store_stale(
    srv: &Server,
    key: &[u8],
    value: Bytes,
    mode: EngineMode,
    opts: StoreOptions,
) -> memstored_engine::Result<u64> {
    let mismatch = || Error::Infeasible("the CAS does not match".into());
    let supplied = opts.cas.ok_or_else(mismatch)?;
    let Some(cur) = srv.db.get_record(key)? else {
        return Err(Error::NotFound("no record".into()));
    };
    if supplied >= cur.meta.cas {
        return Err(mismatch());
    }
    let token_sent = srv.marks.get(key, cur.meta.cas).token_sent;
    let stale_opts = StoreOptions {
        expires_at: cur.meta.expires_at,
        cas: Some(cur.meta.cas),
        ..opts
    };
    let new_cas = srv.db.store(key, value, mode, stale_opts)?;
    srv.marks.set(
        key,
        Mark {
            cas: new_cas,
            stale: true,
            token_sent,
        },
    );
    Ok(new_cas)
}

/// `md <key> I [T<ttl>]`: mark stale instead of removing. The item keeps its
/// value and flags and gets a new CAS (and TTL, if given); the next `mg` wins
/// the recache token. Retries a few times if a concurrent write moves the
/// CAS under it, unless the client asked for a specific CAS.
fn invalidate(srv: &Server, key: &[u8], f: &MetaFlags) -> memstored_engine::Result<()> {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let Some(cur) = srv.db.get_record(key)? else {
            return Err(Error::NotFound("no record".into()));
        };
        if f.compare_cas.is_some_and(|c| c != cur.meta.cas) {
            return Err(Error::Infeasible("the CAS does not match".into()));
        }
        let opts = StoreOptions {
            flags: cur.meta.flags,
            expires_at: f.ttl.map_or(cur.meta.expires_at, expires_at_text),
            cas: Some(cur.meta.cas),
        };
        match srv.db.store(key, cur.value, EngineMode::Replace, opts) {
            Ok(cas) => {
                srv.marks.set(
                    key,
                    Mark {
                        cas,
                        stale: true,
                        token_sent: false,
                    },
                );
                return Ok(());
            }
            Err(Error::Infeasible(_)) if f.compare_cas.is_none() && attempts < 4 => continue,
            Err(e) => return Err(e),
        }
    }
}

/// `md <key> <flags>*`.
pub fn delete(srv: &Server, m: MetaDelete, out: &mut Out) {
    let c = &srv.counters;
    let f = &m.flags;
    let done = if f.invalidate {
        invalidate(srv, &m.key, f)
    } else {
        srv.db.remove_with_cas(&m.key, f.compare_cas)
    };
    let status = match done {
        Ok(()) => {
            if !f.invalidate {
                bump(&c.delete_hits);
            }
            MetaStatus::Hd
        }
        Err(Error::NotFound(_)) => {
            bump(&c.delete_misses);
            MetaStatus::Nf
        }
        Err(Error::Infeasible(_)) => {
            bump(&c.delete_misses);
            MetaStatus::Ex
        }
        Err(e) => return server_error(&e, out),
    };
    // Quiet mode hides only success: memcached still reports NF and EX.
    if f.quiet && status == MetaStatus::Hd {
        return;
    }
    encode_meta(status, &returns(f, &m.key, None), out.buf());
}

/// `ma <key> <flags>*`.
pub fn arith(srv: &Server, m: MetaArith, out: &mut Out) {
    let c = &srv.counters;
    let f = &m.flags;
    let decr = m.mode == MetaArithMode::Decrement;
    let (hits, misses) = if decr {
        (&c.decr_hits, &c.decr_misses)
    } else {
        (&c.incr_hits, &c.incr_misses)
    };
    let create = f.vivify_ttl.map(|n| (m.initial, 0u32, expires_at_text(n)));
    match srv
        .db
        .incr_decr_cas(&m.key, m.delta, decr, create, f.compare_cas)
    {
        Ok((n, cas)) => {
            bump(hits);
            let mut rec = match srv.db.get_record(&m.key) {
                Ok(Some(r)) => r,
                _ => Record {
                    value: Bytes::new(),
                    meta: Meta::default(),
                },
            };
            if let Some(t) = f.ttl {
                if let Ok(r) = srv.db.touch(&m.key, expires_at_text(t)) {
                    rec = r;
                }
            } else {
                rec.meta.cas = cas;
            }
            // Quiet mode hides success, with or without a value (memcached).
            if f.quiet {
                return;
            }
            let text = n.to_string();
            let rets = returns(f, &m.key, Some(&rec));
            if f.return_value {
                encode_meta_value_head(text.len(), &rets, out.buf());
                out.put(text.as_bytes());
                out.put(CRLF);
            } else {
                encode_meta(MetaStatus::Hd, &rets, out.buf());
            }
        }
        Err(Error::NotFound(_)) => {
            bump(misses);
            encode_meta(MetaStatus::Nf, &returns(f, &m.key, None), out.buf());
        }
        Err(e) if e.is_cas_mismatch() => {
            encode_meta(MetaStatus::Ex, &returns(f, &m.key, None), out.buf())
        }
        Err(Error::Infeasible(_)) => out.put(CLIENT_ERROR_NON_NUMERIC),
        Err(e) => server_error(&e, out),
    }
}

/// `me <key>`: memcached's debug line, or EN.
pub fn debug(srv: &Server, key: &[u8], base64: bool, out: &mut Out) {
    match srv.db.get_record(key) {
        Ok(Some(r)) => {
            let info = format!(
                "exp={} la=0 cas={} fetch=no cls=1 size={}",
                ttl_remaining(r.meta.expires_at),
                r.meta.cas,
                r.value.len()
            );
            encode_meta_debug(key, base64, &info, out.buf());
        }
        Ok(None) => encode_meta(MetaStatus::En, &[], out.buf()),
        Err(e) => server_error(&e, out),
    }
}
