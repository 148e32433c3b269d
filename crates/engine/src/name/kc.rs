//! Kyoto Cabinet's and Kyoto Tycoon's database names, mapped onto
//! memstored's engines, so that a `ktserver` command line's names open as
//! they are (`casket.kct#bnum=2000000#opts=ls#ktopts=p`).
//!
//! The grammar is `kyotocabinet::PolyDB::open`'s: the path's last component
//! is a symbol (`-` prototype hash, `+` prototype tree, `:` stash, `*` cache
//! hash, `%` cache tree) or ends in an extension (`.kch` file hash, `.kct`
//! file tree, `.kcd` directory hash, `.kcf` directory tree, `.kcx` plain
//! text), `type=` overrides it, and `#`-separated tuning words follow.
//! Kyoto Tycoon's `TimedDB::open` adds `ktopts`, `ktcapcnt` and `ktcapsiz`.
//! docs/names.md tells which words act and how.

use super::kinds::{Compression, EngineKind};
use crate::status::{Error, Result};

/// The engine named by a path's last component when it is one of KC's
/// symbols. KC's prototype, stash and cache databases all live in memory;
/// the hash ones become `MemHash`, the ordered ones `MemTree`.
pub(super) fn kind_from_symbol(base: &str) -> Option<EngineKind> {
    match base {
        "-" | ":" | "*" => Some(EngineKind::MemHash),
        "+" | "%" => Some(EngineKind::MemTree),
        _ => None,
    }
}

/// The engine of a KC extension (`kch`, `kct`, ...), lower-cased.
///
/// KC's directory databases (`.kcd`, `.kcf`: one file per record in a
/// directory) become the file engine of the same order at that path.
/// `.kcx`, KC's plain text database, is a file of lines whose keys KC
/// generates from their offsets: no memstored engine stores that, so it is
/// refused with the reason rather than opened as something it is not.
pub(super) fn kind_from_extension(ext: &str) -> Option<Result<EngineKind>> {
    Some(Ok(match ext {
        "kcph" | "phdb" | "kcs" | "sdb" | "kcc" | "cdb" => EngineKind::MemHash,
        "kcpt" | "ptdb" | "kcg" | "gdb" => EngineKind::MemTree,
        "kch" | "hdb" | "kcd" | "ddb" => EngineKind::FileHash,
        "kct" | "tdb" | "kcf" | "fdb" => EngineKind::FileTree,
        "kcx" | "xdb" => return Some(Err(text_database(ext))),
        _ => return None,
    }))
}

fn text_database(what: &str) -> Error {
    Error::InvalidArgument(format!(
        "{what}: Kyoto Cabinet's plain text database (lines keyed by their offsets) \
         has no memstored engine; use .kch/.tkh (hash) or .kct/.tkt (tree)"
    ))
}

/// KC's `type=` parameter: a symbol, an extension or a type word.
pub(super) fn kind_from_type(value: &str) -> Result<EngineKind> {
    let v = value.to_ascii_lowercase();
    if let Some(kind) = kind_from_symbol(&v) {
        return Ok(kind);
    }
    let word = match v.as_str() {
        "phash" | "stash" | "cache" => return Ok(EngineKind::MemHash),
        "ptree" | "grass" => return Ok(EngineKind::MemTree),
        "hash" | "dir" | "directory" => return Ok(EngineKind::FileHash),
        "tree" | "for" | "forest" => return Ok(EngineKind::FileTree),
        "txt" | "text" => "kcx",
        other => other,
    };
    kind_from_extension(word).unwrap_or_else(|| {
        Err(Error::InvalidArgument(format!(
            "type={value}: expected one of - + : * % kch kct kcd kcf (or hash, tree, ...)"
        )))
    })
}

/// Kyoto Cabinet's number for a database type (`BasicDB::Type`, which KT's
/// `status` prints in decimal), from a symbol, an extension or a `type=`
/// word, as `PolyDB::open` reads them. `None` for what is not KC's.
pub(super) fn type_number(word: &str) -> Option<u8> {
    Some(match word.to_ascii_lowercase().as_str() {
        "-" | "kcph" | "phdb" | "phash" => 0x10,
        "+" | "kcpt" | "ptdb" | "ptree" => 0x11,
        ":" | "kcs" | "sdb" | "stash" => 0x18,
        "*" | "kcc" | "cdb" | "cache" => 0x20,
        "%" | "kcg" | "gdb" | "grass" => 0x21,
        "kch" | "hdb" | "hash" => 0x30,
        "kct" | "tdb" | "tree" => 0x31,
        "kcd" | "ddb" | "dir" | "directory" => 0x40,
        "kcf" | "fdb" | "for" | "forest" => 0x41,
        _ => return None,
    })
}

/// KC's `zcomp=` (the compressor; it also turns compression on): LZO, the
/// fast one, becomes LZ4; ZLIB and LZMA, the compact ones, become zstd.
/// `None` for a value memstored cannot honour (the Arcfour cipher: records
/// are not encrypted here), which the caller logs as ignored.
pub(super) fn zcomp(value: &str) -> Option<Compression> {
    match value.to_ascii_lowercase().as_str() {
        "lzo" | "oz" | "lzocrc" | "ozcrc" => Some(Compression::Lz4),
        "zlib" | "raw" | "def" | "deflate" | "gz" | "gzip" | "lzma" | "xz" | "lzmacrc"
        | "xzcrc" | "lzmasha" | "xzsha" | "arcz" | "rc4z" => Some(Compression::Zstd),
        _ => None,
    }
}

/// KC's and KT's capacity words (`capcnt`/`capsiz` of the cache database,
/// `ktcapcnt`/`ktcapsiz` of KT's timed database, and their long spellings):
/// `Some(true)` for a record count, `Some(false)` for a size in bytes.
pub(super) fn capacity_word(key: &str) -> Option<bool> {
    match key {
        "capcnt" | "capcount" | "cap_count" | "ktcapcnt" | "ktcapcount" | "ktcap_count" => {
            Some(true)
        }
        "capsize" | "cap_size" | "ktcapsiz" | "ktcapsize" | "ktcap_size" => Some(false),
        _ => None,
    }
}

/// KC's tuning words that mean nothing to memstored: alignment and free
/// block pool (`apow`, `fpow`), the memory map size (`msiz`: memstored maps
/// the whole log and lets it grow), defragmentation (`dfunit`: memstored
/// compacts by `rebuild`), B+ tree pages (`psiz`, `pccap`), the comparator
/// (`rcomp`: keys are ordered bytewise), the cipher key, KC's own logging
/// and error reporting. With their long spellings.
pub(super) const IGNORED: &[&str] = &[
    "alignment",
    "fbp",
    "msiz",
    "map",
    "defrag",
    "psiz",
    "page",
    "pccap",
    "cache",
    "rcomp",
    "comparator",
    "zkey",
    "pass",
    "password",
    "log",
    "logger",
    "logkinds",
    "logkind",
    "logpx",
    "lpx",
    "mtrg",
    "metatrigger",
    "meta_trigger",
    "mtrgpx",
    "mtpx",
    "erstrm",
    "reporter",
    "ervbs",
    "erv",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kc_type_has_an_engine_or_a_reason() {
        for (v, kind) in [
            ("-", EngineKind::MemHash),
            (":", EngineKind::MemHash),
            ("*", EngineKind::MemHash),
            ("+", EngineKind::MemTree),
            ("%", EngineKind::MemTree),
            ("kch", EngineKind::FileHash),
            ("KCD", EngineKind::FileHash),
            ("kct", EngineKind::FileTree),
            ("forest", EngineKind::FileTree),
            ("grass", EngineKind::MemTree),
        ] {
            assert_eq!(kind_from_type(v).unwrap(), kind, "{v}");
        }
        for bad in ["kcx", "text", "sqlite"] {
            assert!(kind_from_type(bad).is_err(), "{bad}");
        }
        for (v, n) in [
            ("-", 0x10),
            ("%", 0x21),
            ("KCT", 0x31),
            ("forest", 0x41),
            ("cache", 0x20),
        ] {
            assert_eq!(type_number(v), Some(n), "{v}");
        }
        assert_eq!(type_number("tkh"), None);
        assert_eq!(zcomp("lzo"), Some(Compression::Lz4));
        assert_eq!(zcomp("lzma"), Some(Compression::Zstd));
        assert_eq!(zcomp("arc"), None);
    }
}
