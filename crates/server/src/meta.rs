//! memcached meta commands: mg ms md ma me (mn is answered in `text.rs`).

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
    let mut won = false;
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
            match srv.db.store(&m.key, Bytes::new(), EngineMode::Add, opts) {
                Ok(cas) => {
                    won = true;
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
            let mut rets = returns(f, &m.key, Some(&r));
            if won {
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
    let status = match srv.db.store(&m.key, value, mode, opts) {
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

/// `md <key> <flags>*`.
pub fn delete(srv: &Server, m: MetaDelete, out: &mut Out) {
    let c = &srv.counters;
    let f = &m.flags;
    let status = match srv.db.remove_with_cas(&m.key, f.compare_cas) {
        Ok(()) => {
            bump(&c.delete_hits);
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
    if f.quiet && matches!(status, MetaStatus::Hd | MetaStatus::Nf) {
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
            let text = n.to_string();
            let rets = returns(f, &m.key, Some(&rec));
            if f.return_value {
                encode_meta_value_head(text.len(), &rets, out.buf());
                out.put(text.as_bytes());
                out.put(CRLF);
            } else if !f.quiet {
                encode_meta(MetaStatus::Hd, &rets, out.buf());
            }
        }
        Err(Error::NotFound(_)) => {
            bump(misses);
            if !f.quiet {
                encode_meta(MetaStatus::Nf, &returns(f, &m.key, None), out.buf());
            }
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
