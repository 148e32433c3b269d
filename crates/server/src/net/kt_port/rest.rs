//! KT's RESTful interface (spex.html, "RESTful interface", and
//! `ktserver`'s `do_rest_*`): GET, HEAD, PUT, DELETE on `/KEY` or
//! `/DB/KEY` (URL-encoded; `DB` an index or a name as the RPC `DB`
//! option), `X-Kt-Xt` an absolute date, `X-Kt-Mode` set/add/replace,
//! through `crate::command` so counters, `-I` and `--read-only` hold.

use super::http::{reply, Reply};
use crate::command::{Delete, Get, Outcome, Store, StoreKind};
use crate::protocols::rpc::Value;
use crate::state::server::Server;
use bytes::Bytes;
use hyper::http::request::Parts;
use hyper::Method;
use memstored_protocol::kt::tsv::url_decode;
use memstored_protocol::kt::XT_MAX;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

pub(super) fn handle(srv: &Arc<Server>, req: &Parts, body: Bytes) -> Reply {
    let (db, key) = split_path(req.uri.path());
    let Some(target) = database(srv, db) else {
        return reply(400, &[], Bytes::from_static(b"no such database\n"));
    };
    let key = Bytes::from(url_decode(key.as_bytes()));
    match req.method {
        Method::GET => get(target, key, true),
        Method::HEAD => get(target, key, false),
        Method::PUT => put(target, req, key, body),
        Method::DELETE => delete(target, key),
        _ => reply(501, &[], Bytes::new()),
    }
}

/// KT's reading of a path: a leading `/` dropped; text before a further
/// `/` names the database (one more `/` after it is dropped too).
fn split_path(path: &str) -> (Option<&str>, &str) {
    let p = path.strip_prefix('/').unwrap_or(path);
    match p.split_once('/') {
        Some((db, key)) => (Some(db), key.strip_prefix('/').unwrap_or(key)),
        None => (None, p),
    }
}

/// The database a path names (the first when none or empty).
fn database<'a>(srv: &'a Arc<Server>, db: Option<&str>) -> Option<&'a Arc<Server>> {
    let name = url_decode(db.unwrap_or("").as_bytes());
    if name.is_empty() {
        return Some(srv);
    }
    let option = Value::Map(vec![(Value::from("DB"), Value::Binary(name))]);
    crate::protocols::rpc::select::select(srv, std::slice::from_ref(&option)).ok()
}

/// `X-Kt-Error`, as KT words a missing record.
fn no_record() -> [(&'static str, String); 1] {
    [("x-kt-error", "DB: 7: no record: no record".to_string())]
}

fn failed(o: &Outcome) -> Reply {
    let e = crate::protocols::rpc::RpcError::from_outcome(o.clone());
    let code = match o {
        Outcome::TooLarge { .. } => 413,
        Outcome::NotStored(_) | Outcome::ReadOnly => 450,
        _ => 500,
    };
    reply(code, &[("x-kt-error", e.message)], Bytes::new())
}

fn get(srv: &Server, key: Bytes, with_body: bool) -> Reply {
    match Get::new(key).apply(srv) {
        Outcome::Found(r) => {
            let mut headers = Vec::new();
            if let Some(xt) = crate::protocols::rpc::expiry_to_xt(r.meta.expires_at) {
                headers.push(("x-kt-xt", http_date(xt)));
            }
            if with_body {
                reply(200, &headers, r.value)
            } else {
                headers.push(("content-length", r.value.len().to_string()));
                reply(200, &headers, Bytes::new())
            }
        }
        Outcome::NotFound => reply(404, &no_record(), Bytes::new()),
        o => failed(&o),
    }
}

fn put(srv: &Server, req: &Parts, key: Bytes, value: Bytes) -> Reply {
    let header = |name: &str| req.headers.get(name).and_then(|v| v.to_str().ok());
    let kind = match header("x-kt-mode") {
        Some(m) if m.eq_ignore_ascii_case("add") => StoreKind::Add,
        Some(m) if m.eq_ignore_ascii_case("replace") => StoreKind::Replace,
        _ => StoreKind::Set,
    };
    // KT: a date from 1 to XT_MAX is the absolute expiry; anything else
    // (absent, unreadable, out of range) means none.
    let expires_at = match header("x-kt-xt").and_then(parse_date) {
        Some(t) if t > 0 && t < XT_MAX => crate::protocols::rpc::xt_to_expiry(-t),
        _ => 0,
    };
    let cmd = Store {
        key,
        value,
        kind,
        flags: 0,
        expires_at,
        cas: None,
    };
    match cmd.apply(srv) {
        Outcome::Stored { .. } => {
            let location = header("host").map(|h| format!("http://{h}{}", req.uri.path()));
            let headers: Vec<_> = location.map(|l| ("location", l)).into_iter().collect();
            reply(201, &headers, Bytes::new())
        }
        o => failed(&o),
    }
}

fn delete(srv: &Server, key: Bytes) -> Reply {
    match (Delete { key, cas: None }).apply(srv) {
        Outcome::Deleted => reply(204, &[], Bytes::new()),
        Outcome::NotFound => reply(404, &no_record(), Bytes::new()),
        o => failed(&o),
    }
}

/// The last second an RFC 1123 date can name (9999-12-31 23:59:59 GMT):
/// `httpdate` panics past it, and an expiry may be set to year 36812.
const LAST_HTTP_DATE: u64 = 253_402_300_799;

/// An epoch time (decimal text, as `expiry_to_xt` gives it) as an RFC 1123
/// date; an expiry past year 9999 as the last second of it.
fn http_date(xt: String) -> String {
    let secs = xt.parse::<u64>().unwrap_or(0).min(LAST_HTTP_DATE);
    httpdate::fmt_http_date(UNIX_EPOCH + Duration::from_secs(secs))
}

/// A date as KT's `strmktime` reads one: decimal epoch seconds, `0x` hex,
/// RFC 1123 (`Sun, 06 Nov 1994 08:49:37 GMT`) or W3CDTF
/// (`1994-11-06T08:49:37+09:00`).
pub(super) fn parse_date(s: &str) -> Option<i64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return i64::from_str_radix(hex, 16).ok();
    }
    if let Ok(n) = s.parse::<i64>() {
        return Some(n);
    }
    if let Ok(t) = httpdate::parse_http_date(s) {
        let secs = t.duration_since(UNIX_EPOCH).ok()?.as_secs();
        return i64::try_from(secs).ok();
    }
    w3cdtf(s)
}

/// `YYYY-MM-DD[Thh:mm[:ss[.fraction]]][Z|±hh:mm]`.
fn w3cdtf(s: &str) -> Option<i64> {
    let num = |from: usize, to: usize| s.get(from..to)?.parse::<i64>().ok();
    let sep = |at: usize, c: u8| s.as_bytes().get(at) == Some(&c);
    if !(sep(4, b'-') && sep(7, b'-')) {
        return None;
    }
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (mut secs, mut rest) = (0, s.get(10..)?);
    if sep(10, b'T') {
        secs = num(11, 13)? * 3600 + num(14, 16)? * 60;
        rest = s.get(16..)?;
        if sep(16, b':') {
            secs += num(17, 19)?;
            rest = s.get(19..)?;
        }
    }
    let rest = rest.trim_start_matches(|c: char| c == '.' || c.is_ascii_digit());
    let offset = match rest.as_bytes().first() {
        Some(&sign @ (b'+' | b'-')) if rest.len() >= 6 && sep(s.len() - rest.len() + 3, b':') => {
            let hm = rest.get(1..3)?.parse::<i64>().ok()? * 3600
                + rest.get(4..6)?.parse::<i64>().ok()? * 60;
            if sign == b'+' {
                hm
            } else {
                -hm
            }
        }
        _ => 0,
    };
    Some(days_from_civil(y, mo, d) * 86400 + secs - offset)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_as_kt_reads_them() {
        let t = 784_111_777; // 1994-11-06T08:49:37Z
        assert_eq!(parse_date("784111777"), Some(t));
        assert_eq!(parse_date("0x2ebc9c21"), Some(0x2ebc_9c21));
        assert_eq!(parse_date("Sun, 06 Nov 1994 08:49:37 GMT"), Some(t));
        assert_eq!(parse_date("1994-11-06T08:49:37Z"), Some(t));
        assert_eq!(parse_date("1994-11-06T17:49:37+09:00"), Some(t));
        assert_eq!(parse_date("1994-11-06T08:49:37.25-00:00"), Some(t));
        assert_eq!(parse_date("1994-11-06"), Some(t - 8 * 3600 - 49 * 60 - 37));
        for bad in ["", "tomorrow", "1994-1x-06", "Sun, 99"] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
        assert_eq!(http_date(t.to_string()), "Sun, 06 Nov 1994 08:49:37 GMT");
    }

    proptest::proptest! {
        /// An `X-Kt-Xt` header is network input: any text is read or refused.
        #[test]
        fn any_date_text_is_read_without_panic(s in ".{0,40}", n in proptest::num::i64::ANY) {
            let _ = parse_date(&s);
            let _ = parse_date(&format!("{n}-01-01T00:00:00+09:00"));
            let _ = split_path(&s);
        }
    }

    #[test]
    fn paths_as_kt_reads_them() {
        assert_eq!(split_path("/a%20b"), (None, "a%20b"));
        assert_eq!(
            split_path("/words.kch/I%20love"),
            (Some("words.kch"), "I%20love")
        );
        assert_eq!(split_path("/1//k/x"), (Some("1"), "k/x"));
        assert_eq!(split_path("//k"), (Some(""), "k"));
    }
}
