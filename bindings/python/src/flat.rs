//! Tkrzw's flat-record files, byte for byte: each record is a magic byte
//! (0xFF data, 0xFE metadata), its length as Tkrzw's variable-length number
//! (7 bits a byte, most significant first, the high bit set on all but the
//! last byte) and the bytes. A database is exported as key, value, key,
//! value...; metadata records are skipped on import, as Tkrzw does.

use crate::file::SharedFile;
use crate::status::Status;
use memstored_engine::status::code::BROKEN_DATA_ERROR;
use memstored_engine::Db;

type Res<T> = Result<T, Status>;

const MAGIC_DATA: u8 = 0xFF;
const MAGIC_META: u8 = 0xFE;

fn put_varnum(out: &mut Vec<u8>, n: u64) {
    let groups = (64 - n.leading_zeros()).div_ceil(7).max(1);
    for i in (0..groups).rev() {
        let b = ((n >> (7 * i)) & 0x7f) as u8;
        out.push(if i > 0 { b | 0x80 } else { b });
    }
}

/// A number and the bytes it took, or None when `b` ends inside it.
fn get_varnum(b: &[u8]) -> Option<(u64, usize)> {
    let mut n = 0u64;
    for (i, x) in b.iter().enumerate().take(10) {
        n = n << 7 | u64::from(x & 0x7f);
        if x & 0x80 == 0 {
            return Some((n, i + 1));
        }
    }
    None
}

fn record(out: &mut Vec<u8>, data: &[u8]) {
    out.push(MAGIC_DATA);
    put_varnum(out, data.len() as u64);
    out.extend_from_slice(data);
}

fn broken(what: &str) -> Status {
    Status::new(BROKEN_DATA_ERROR, what)
}

/// Writes the records of `db` as flat records, `keys_only` or key and
/// value each, replacing what `file` held. Buffered: one append per MiB.
fn export(db: &Db, file: &SharedFile, keys_only: bool) -> Res<()> {
    file.truncate(0)?;
    let mut buf = Vec::new();
    let mut c = db.cursor();
    c.first()?;
    while let Some((k, v)) = c.step()? {
        record(&mut buf, &k);
        if !keys_only {
            record(&mut buf, &v);
        }
        if buf.len() >= 1 << 20 {
            file.append(&buf)?;
            buf.clear();
        }
    }
    file.append(&buf)?;
    Ok(())
}

/// DBM.ExportToFlatRecords.
pub fn export_records(db: &Db, file: &SharedFile) -> Res<()> {
    export(db, file, false)
}

/// DBM.ImportFromFlatRecords: every key/value pair of `file` stored into `db`.
pub fn import_records(db: &Db, file: &SharedFile) -> Res<()> {
    let all = file.read(0, file.size()? as usize)?;
    let mut rest = &all[..];
    let mut key: Option<&[u8]> = None;
    while let Some((&magic, tail)) = rest.split_first() {
        let (len, used) = get_varnum(tail).ok_or_else(|| broken("invalid record size"))?;
        let body = tail
            .get(used..)
            .and_then(|t| t.get(..usize::try_from(len).ok()?))
            .ok_or_else(|| broken("too large record size"))?;
        rest = &tail[used + body.len()..];
        match (magic, key.take()) {
            (MAGIC_META, None) => {}
            (MAGIC_META, Some(_)) => return Err(broken("invalid metadata position")),
            (MAGIC_DATA, None) => key = Some(body),
            (MAGIC_DATA, Some(k)) => db.set(k, body, true)?,
            _ => return Err(broken("invalid record magic number")),
        }
    }
    match key {
        Some(_) => Err(broken("odd number of records")),
        None => Ok(()),
    }
}

/// DBM.ExportKeysAsLines: each key and a line feed.
pub fn export_keys_as_lines(db: &Db, file: &SharedFile) -> Res<()> {
    file.truncate(0)?;
    let mut c = db.cursor();
    c.first()?;
    let mut buf = Vec::new();
    while let Some((k, _)) = c.step()? {
        buf.extend_from_slice(&k);
        buf.push(b'\n');
    }
    file.append(&buf)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varnums_are_tkrzws() {
        for (n, bytes) in [
            (0u64, &[0u8][..]),
            (127, &[0x7f]),
            (128, &[0x81, 0x00]),
            (300, &[0x82, 0x2c]),
            (1 << 21, &[0x81, 0x80, 0x80, 0x00]),
        ] {
            let mut out = Vec::new();
            put_varnum(&mut out, n);
            assert_eq!(out, bytes, "{n}");
            assert_eq!(get_varnum(bytes), Some((n, bytes.len())));
        }
        let mut out = Vec::new();
        put_varnum(&mut out, u64::MAX);
        assert_eq!(get_varnum(&out), Some((u64::MAX, 10)));
        assert_eq!(get_varnum(&[0x81]), None);
    }
}
