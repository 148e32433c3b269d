//! The database name grammar: `PATH[#k=v[,k=v...]]`, where `#` may also
//! separate parameters (Tokyo Cabinet style, `db.tch#bnum=1000000#apow=10`).
//! Kyoto Cabinet's and Kyoto Tycoon's names are read too (`kc.rs`). What a
//! name selects (`kinds.rs`) sits below both, so `kc.rs` never imports this file.

mod build;
mod kc;
mod kinds;

pub use kinds::{Compression, EngineKind, SyncMode};

pub use build::{with_params, with_params_text, BadParam};

use crate::status::{Error, Result};

/// A parsed database name.
#[derive(Debug, Clone, PartialEq)]
pub struct DbName {
    /// The path part (empty for `*` and `+`).
    pub path: String,
    pub kind: EngineKind,
    pub num_shards: usize,
    /// Bucket hint: pre-sizes hash indexes.
    pub num_buckets: usize,
    /// Cache capacity in records (0 = unlimited).
    pub cap_rec_num: u64,
    /// Cache capacity in bytes (0 = unlimited).
    pub cap_mem_size: u64,
    pub compression: Compression,
    pub sync: SyncMode,
    /// `truncate=true`: a writable open starts from empty files (Tkrzw's
    /// open option), so a program can be run twice from the same state.
    pub truncate: bool,
    /// `ktopts=p` (Kyoto Tycoon's persistent option): records never expire;
    /// an expiry given to a write is dropped, as KT's TimedDB does.
    pub persistent: bool,
    /// A capped in-memory hash is the segment cache (`store/segcache`),
    /// unless `cache_kind=clock` asks for the CLOCK cache (`store/cache`).
    pub segment_cache: bool,
    /// False with `disable_evictions=true` (memcached's `-M`): a full
    /// segment cache refuses writes (`Error::NoMemory`) instead of evicting.
    pub evictions: bool,
    /// Parameters accepted for compatibility and ignored, kept for `inspect` and logs.
    pub ignored: Vec<String>,
    /// The engine named by `dbm=`, while parsing.
    dbm: Option<DbmWord>,
    /// Tkrzw's class when the name chose one memstored maps to another
    /// engine (`.tks` SkipDBM, `.stdhash`, `dbm=BabyDBM`...): what
    /// `tkrzw_class` reports.
    class: Option<&'static str>,
    /// The name says `num_shards` (even `num_shards=1`).
    shards_named: bool,
    /// Kyoto Cabinet's type number when the name is KC's (a symbol, a KC
    /// extension, `type=`): what `kc_type` reports.
    kc_type: Option<u8>,
}

/// Most shards a name may ask for: shard files are numbered with five
/// digits, and opening allocates every shard up front (`num_shards=1g` used
/// to abort the process on that allocation; found by the `db_name` fuzz target).
pub(crate) const MAX_SHARDS: usize = 1 << 16;

/// Parameters that tune Tkrzw or Tokyo Cabinet internals with no meaning here.
/// They are accepted so that existing names keep working, and logged as ignored.
const IGNORED_PARAMS: &[&str] = &[
    "apow",
    "fpow",
    "align_pow",
    "offset_width",
    "lmemb",
    "nmemb",
    "xmsiz",
    "dfunit",
    "rcnum",
    "lcnum",
    "ncnum",
    "max_page_size",
    "max_branches",
    "max_cached_pages",
    "page_update_mode",
    "key_comparator",
    "fbp_capacity",
    "min_read_size",
    "cache_buckets",
    "restore_mode",
    "record_crc_mode",
    "lock_mem_buckets",
    "file",
    "no_wait",
    "no_lock",
    "sync_hard",
    "cipher_key",
    "record_comp_mode_level",
    "mode",
    // Tkrzw's SkipDBM: the skip list's shape and its sorting buffer.
    "step_unit",
    "max_level",
    "sort_mem_size",
    "insert_in_order",
    "max_cached_records",
    // Tkrzw's open-time choices (merging shard files, the reducer of
    // duplicates, tolerating broken records) and PolyFile's knobs.
    "merge",
    "reducer",
    "skip_broken_records",
    "block_size",
    "access_options",
    "head_buffer_size",
    "padding",
    "pagecache",
    // Tkrzw's update log in a name (ShardDBM/PolyDBM `ulog_*`); memstored's
    // update log is the server's `--ulog-dir`.
    "ulog_prefix",
    "ulog_max_file_size",
    "ulog_server_id",
    "ulog_dbm_index",
];

/// Parameters this engine acts on (including aliases).
const KNOWN_PARAMS: &[&str] = &[
    "dbm",
    "num_shards",
    "num_buckets",
    "bnum",
    "cap_rec_num",
    "capnum",
    "cap_mem_size",
    "capsiz",
    "compression",
    "record_comp_mode",
    "opts",
    "update_mode",
    "sync",
    "truncate",
    "type",
    "buckets",
    "capcnt",
    "options",
    "zcomp",
    "ktopts",
    "ktcapcnt",
    "ktcapsiz",
    "cache_kind",
    "disable_evictions",
];

/// Where every parameter word is listed; the error points there instead of
/// reciting ~80 words, most of them ignored ones, in front of the typo.
const PARAMS_DOC: &str = "docs/names.md, \"Every word\"";

/// The word of `known` that `word` most likely misspells, if one is close:
/// for "did you mean". Jaro-Winkler similarity above 0.8 (clap's own
/// suggestions use Jaro above 0.7; Winkler's bonus for a shared prefix
/// suits option words, which are mostly mistyped at their ends). Shared by
/// the database name's words, memstored's `-o` options and config keys.
pub fn closest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    known
        .into_iter()
        .map(|w| (strsim::jaro_winkler(word, w), w))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, w)| w)
}

/// The refusal of an unknown word: the word, the accepted word it most
/// likely misspells, and where the full list is.
fn unknown_param(key: &str) -> Error {
    let known = KNOWN_PARAMS.iter().chain(IGNORED_PARAMS).chain(kc::IGNORED);
    let hint = match closest(key, known.copied()) {
        Some(word) => format!("; did you mean {word:?}?"),
        None => String::new(),
    };
    Error::InvalidArgument(format!(
        "unknown database parameter {key:?}{hint} (every word: {PARAMS_DOC})"
    ))
}

impl DbName {
    /// True when the name gives `num_shards`, even `num_shards=1`: the
    /// engine then keeps exactly that many shards, without lock stripes.
    pub fn names_shards(&self) -> bool {
        self.shards_named
    }

    /// The class Tkrzw names for this database (Inspect's `class`, as
    /// Tkrzw's PolyDBM and tkrzw_server report it): HashDBM for `.tkh`,
    /// TreeDBM for `.tkt`, TinyDBM for the in-memory hash with a file or
    /// without, CacheDBM for a capped one, BabyDBM for the in-memory tree,
    /// and the class the name chose where memstored's engine stands in for
    /// another (`.tks`: SkipDBM).
    pub fn tkrzw_class(&self) -> &'static str {
        use EngineKind as K;
        if let Some(class) = self.class {
            return class;
        }
        match self.kind {
            K::FileHash => "HashDBM",
            K::FileTree => "TreeDBM",
            K::MemTree => "BabyDBM",
            K::MemHash if self.cap_rec_num > 0 || self.cap_mem_size > 0 => "CacheDBM",
            K::MemHash | K::MemFile => "TinyDBM",
        }
    }

    /// Kyoto Cabinet's number for this database's type (`BasicDB::Type`),
    /// which Kyoto Tycoon's `status` reports: the one a KC name chose (`*`
    /// 0x20, `%` 0x21, `.kct` 0x31, `type=kch` 0x30...), else that of
    /// memstored's engine: file hash 0x30, file tree 0x31, in-memory hash
    /// 0x20 (KC's cache hash, which `*` names), in-memory tree 0x11 (KC's
    /// prototype tree, which `+` names), and the in-memory hash kept in a
    /// file 0x10 (KC's prototype hash: KC saves no in-memory database).
    pub fn kc_type(&self) -> u8 {
        use EngineKind as K;
        self.kc_type.unwrap_or(match self.kind {
            K::FileHash => 0x30,
            K::FileTree => 0x31,
            K::MemHash => 0x20,
            K::MemTree => 0x11,
            K::MemFile => 0x10,
        })
    }

    /// Parses a database name such as `casket.tkh#num_shards=100,num_buckets=1M`.
    pub fn parse(name: &str) -> Result<DbName> {
        let (path, params) = match name.find('#') {
            Some(i) => (&name[..i], &name[i + 1..]),
            None => (name, ""),
        };
        let mut out = DbName {
            path: path.to_string(),
            // Decided below: a `dbm=` parameter overrides the path's extension.
            kind: EngineKind::MemHash,
            num_shards: 1,
            num_buckets: 0,
            cap_rec_num: 0,
            cap_mem_size: 0,
            compression: Compression::None,
            sync: SyncMode::None,
            truncate: false,
            persistent: false,
            segment_cache: true,
            evictions: true,
            ignored: Vec::new(),
            dbm: None,
            class: None,
            shards_named: false,
            kc_type: None,
        };
        for item in params.split([',', '#']).filter(|s| !s.trim().is_empty()) {
            let (k, v) = item.split_once('=').ok_or_else(|| {
                Error::InvalidArgument(format!("parameter {item:?} is not of the form key=value"))
            })?;
            out.apply(k.trim(), v.trim())?;
        }
        let dbm = out.dbm.take();
        if dbm.is_none() {
            out.kc_type = kc_type_of_path(path);
        }
        (out.kind, out.class) = match dbm {
            // Tkrzw's on-memory classes load from and save to a path when
            // given one: memstored's in-memory hash with a file, or its
            // persistent ordered engine for the ordered ones.
            Some(w) if w.with_path.is_some() && !path.is_empty() => {
                (w.with_path.unwrap_or(w.kind), w.class)
            }
            Some(w) => (w.kind, w.class),
            None => kind_from_path(path)?,
        };
        if (out.cap_rec_num > 0 || out.cap_mem_size > 0) && out.kind != EngineKind::MemHash {
            tracing::info!(
                "capacity limits apply to the in-memory hash (*) only; ignored for {}",
                out.kind.label()
            );
            for (k, v) in [
                ("cap_rec_num", out.cap_rec_num),
                ("cap_mem_size", out.cap_mem_size),
            ] {
                if v > 0 {
                    out.ignored.push(format!("{k}={v}"));
                }
            }
        }
        if !out.evictions && !out.segment_cache {
            return Err(Error::InvalidArgument(
                "disable_evictions=true needs the segment cache, not cache_kind=clock".into(),
            ));
        }
        if out.num_shards == 0 && !(out.shards_named && out.kind.has_file()) {
            // Tkrzw's `num_shards=0` (or negative): as many as the files
            // have, resolved at open (`Db::open`); one without files.
            out.num_shards = 1;
        }
        if out.num_shards > MAX_SHARDS {
            return Err(Error::InvalidArgument(format!(
                "num_shards must be at most {MAX_SHARDS}"
            )));
        }
        if out.kind.has_file() && out.path.is_empty() {
            return Err(Error::InvalidArgument("a file engine needs a path".into()));
        }
        Ok(out)
    }

    fn apply(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "dbm" => {
                self.dbm = Some(kind_from_dbm(value)?);
                self.kc_type = None;
            }
            "type" => {
                self.dbm = Some(DbmWord::plain(kc::kind_from_type(value)?));
                self.kc_type = kc::type_number(value);
            }
            "num_shards" => {
                // Tkrzw reads any number below 1 as "as the files have".
                self.num_shards = if value.trim().starts_with('-') {
                    0
                } else {
                    to_usize(key, parse_number(key, value)?)?
                };
                self.shards_named = true;
            }
            "num_buckets" | "bnum" | "buckets" => {
                self.num_buckets = to_usize(key, parse_number(key, value)?)?
            }
            "cap_rec_num" | "capnum" => self.cap_rec_num = parse_number(key, value)?,
            "cap_mem_size" | "capsiz" => self.cap_mem_size = parse_number(key, value)?,
            // Not `cache`: that is Kyoto Cabinet's long name for `pccap`.
            "cache_kind" => self.segment_cache = segment_cache_from(value)?,
            _ if kc::capacity_word(key) == Some(true) => {
                self.cap_rec_num = parse_number(key, value)?
            }
            _ if kc::capacity_word(key) == Some(false) => {
                self.cap_mem_size = parse_number(key, value)?
            }
            "compression" | "record_comp_mode" => self.compression = compression_from(value)?,
            "opts" | "options" => self.apply_opts(value)?,
            "zcomp" | "compressor" => match kc::zcomp(value) {
                Some(c) => self.compression = c,
                None => self.ignore(key, value),
            },
            "ktopts" | "ktoptions" => {
                // KT defines one letter; others are ignored, as KT does.
                self.persistent = value.contains('p');
                if value.chars().any(|c| c != 'p') {
                    self.ignore(key, value);
                }
            }
            // Tkrzw's own spellings are the constants' names
            // (`UPDATE_APPENDING`); `default` is Tkrzw's in-place default.
            "update_mode" => match value.to_ascii_lowercase().as_str() {
                "appending" | "update_appending" => {}
                "in_place" | "update_in_place" | "default" | "update_default" => {
                    tracing::info!("update_mode={value}: memstored files are always appending");
                    self.ignored.push(format!("{key}={value}"));
                }
                _ => {
                    return Err(Error::InvalidArgument(format!(
                        "update_mode={value}: expected UPDATE_APPENDING, UPDATE_IN_PLACE or \
                         UPDATE_DEFAULT (or appending, in_place)"
                    )))
                }
            },
            "sync" => self.sync = sync_from(value)?,
            "truncate" => self.truncate = parse_bool(key, value)?,
            "disable_evictions" => self.evictions = !parse_bool(key, value)?,
            _ if IGNORED_PARAMS.contains(&key) || kc::IGNORED.contains(&key) => {
                self.ignore(key, value)
            }
            _ => return Err(unknown_param(key)),
        }
        Ok(())
    }

    /// Accepts a parameter that means nothing here: logged, and kept for `inspect`.
    fn ignore(&mut self, key: &str, value: &str) {
        tracing::info!("database parameter {key}={value} means nothing to memstored; ignored");
        self.ignored.push(format!("{key}={value}"));
    }

    /// `opts=`: the option letters of Tokyo Cabinet (`l` large, `d` deflate,
    /// `b` bzip2, `t` TCBS, `x` external) and Kyoto Cabinet (`s` small, `l`
    /// linear, `c` compress). The compression letters turn compression on;
    /// the addressing and collision-chain letters mean nothing here (offsets
    /// are 64-bit, the index is in memory) and are logged as ignored. A
    /// letter neither defines is refused, as a typo.
    fn apply_opts(&mut self, value: &str) -> Result<()> {
        let mut unused = String::new();
        for c in value.chars() {
            match c.to_ascii_lowercase() {
                'd' | 'b' | 't' | 'x' | 'c' => self.compression = Compression::Zstd,
                'l' | 's' => unused.push(c),
                other => {
                    return Err(Error::InvalidArgument(format!(
                        "opts={value}: unknown option letter {other:?} (known: l s c d b t x)"
                    )))
                }
            }
        }
        if !unused.is_empty() {
            self.ignore("opts", &unused);
        }
        Ok(())
    }
}

fn kind_from_path(path: &str) -> Result<(EngineKind, Option<&'static str>)> {
    if path == ":memory:" || path.is_empty() {
        return Ok((EngineKind::MemHash, None));
    }
    // `*`, `+` and Kyoto Cabinet's other symbols, as the last path component.
    let last = path.rsplit('/').next().unwrap_or(path);
    if let Some(kind) = kc::kind_from_symbol(last) {
        return Ok((kind, None));
    }
    // A backup (`casket.tkh.backup.20261121000000`) is of its original's kind.
    let base = path.split_once(".backup.").map_or(path, |(b, _)| b);
    let ext = base
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    if let Some(found) = tkrzw_extension(&ext) {
        return Ok(found);
    }
    match ext.as_str() {
        "mem" | "tkmh" => Ok((EngineKind::MemFile, None)),
        "hash" | "tch" => Ok((EngineKind::FileHash, None)),
        "tree" | "tcb" => Ok((EngineKind::FileTree, None)),
        kc_ext => kc::kind_from_extension(kc_ext)
            .unwrap_or_else(|| {
                Err(Error::InvalidArgument(format!(
                    "cannot tell the engine of {path:?}: use *, +, or a path ending in \
                     .hash/.tkh/.tch/.kch, .tree/.tkt/.tcb/.kct, .mem/.tkmt, Tkrzw's .tks, \
                     .tiny, .baby, .cache, .stdhash, .stdtree, or give dbm="
                )))
            })
            .map(|k| (k, None)),
    }
}

/// The KC type a path names by its last component (a symbol) or its KC
/// extension; `None` for memstored's and Tkrzw's names.
fn kc_type_of_path(path: &str) -> Option<u8> {
    let last = path.rsplit('/').next().unwrap_or(path);
    if kc::kind_from_symbol(last).is_some() {
        return kc::type_number(last);
    }
    let base = path.split_once(".backup.").map_or(path, |(b, _)| b);
    let ext = base.rsplit_once('.')?.1.to_ascii_lowercase();
    kc::kind_from_extension(&ext).and_then(|_| kc::type_number(&ext))
}

/// Tkrzw's extensions (PolyDBM's list) and the engine each maps to, with
/// Tkrzw's class where memstored's engine is a stand-in: SkipDBM and the
/// on-memory ordered classes saved to a file become the persistent ordered
/// engine, the on-memory hash classes the in-memory hash with a file.
fn tkrzw_extension(ext: &str) -> Option<(EngineKind, Option<&'static str>)> {
    use EngineKind::*;
    Some(match ext {
        "tkh" => (FileHash, None),
        "tkt" => (FileTree, None),
        "tks" | "skip" => (FileTree, Some("SkipDBM")),
        "tkmt" | "tiny" | "flat" => (MemFile, None),
        "tkmb" | "baby" => (FileTree, Some("BabyDBM")),
        "tkmc" | "cache" => (MemFile, Some("CacheDBM")),
        "tksh" | "stdhash" => (MemFile, Some("StdHashDBM")),
        "tkst" | "stdtree" => (FileTree, Some("StdTreeDBM")),
        _ => return None,
    })
}

/// `cache_kind=`: true for the segment cache, false for CLOCK.
fn segment_cache_from(value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "segments" | "segment" => Ok(true),
        "clock" => Ok(false),
        _ => Err(Error::InvalidArgument(format!(
            "cache_kind={value}: expected segments or clock"
        ))),
    }
}

/// `compression=` / `record_comp_mode=` (Tkrzw's words too).
fn compression_from(value: &str) -> Result<Compression> {
    match value.to_ascii_lowercase().as_str() {
        "none" | "" => Ok(Compression::None),
        "lz4" => Ok(Compression::Lz4),
        "zstd" | "zlib" | "default" | "rc4" => Ok(Compression::Zstd),
        _ => Err(Error::InvalidArgument(format!(
            "compression={value}: expected none, lz4 or zstd"
        ))),
    }
}

/// `sync=`.
fn sync_from(value: &str) -> Result<SyncMode> {
    match value {
        "none" | "" => Ok(SyncMode::None),
        "interval" => Ok(SyncMode::Interval),
        "always" => Ok(SyncMode::Always),
        _ => Err(Error::InvalidArgument(format!(
            "sync={value}: expected none, interval or always"
        ))),
    }
}

/// What `dbm=` (or Kyoto Cabinet's `type=`) names: the engine without a
/// path, the engine when the name has a path (Tkrzw's on-memory classes
/// load from and save to one), and Tkrzw's class when memstored's engine
/// stands in for another.
#[derive(Debug, Clone, Copy, PartialEq)]
struct DbmWord {
    kind: EngineKind,
    with_path: Option<EngineKind>,
    class: Option<&'static str>,
}

impl DbmWord {
    fn plain(kind: EngineKind) -> DbmWord {
        DbmWord {
            kind,
            with_path: None,
            class: None,
        }
    }
}

fn kind_from_dbm(value: &str) -> Result<DbmWord> {
    use EngineKind::*;
    let word = |kind, with_path, class| DbmWord {
        kind,
        with_path: Some(with_path),
        class,
    };
    Ok(match value.to_ascii_lowercase().as_str() {
        "hash" | "hashdbm" | "tkh" => DbmWord::plain(FileHash),
        "tree" | "treedbm" | "tkt" => DbmWord::plain(FileTree),
        "skip" | "skipdbm" | "tks" => DbmWord {
            class: Some("SkipDBM"),
            ..DbmWord::plain(FileTree)
        },
        "mem" => DbmWord::plain(MemHash),
        "memtree" => DbmWord::plain(MemTree),
        "memfile" | "tkmt" => DbmWord::plain(MemFile),
        "tiny" | "tinydbm" => word(MemHash, MemFile, None),
        "cache" | "cachedbm" => word(MemHash, MemFile, Some("CacheDBM")),
        "stdhash" | "stdhashdbm" => word(MemHash, MemFile, Some("StdHashDBM")),
        "baby" | "babydbm" => word(MemTree, FileTree, Some("BabyDBM")),
        "stdtree" | "stdtreedbm" => word(MemTree, FileTree, Some("StdTreeDBM")),
        _ => {
            return Err(Error::InvalidArgument(format!(
                "dbm={value}: expected hash, tree, mem, memtree or memfile, or Tkrzw's \
                 HashDBM, TreeDBM, SkipDBM, TinyDBM, BabyDBM, CacheDBM, StdHashDBM, StdTreeDBM"
            )))
        }
    })
}

/// Tkrzw's boolean words: true/yes/1 and false/no/0, any case.
fn parse_bool(key: &str, value: &str) -> Result<bool> {
    match value.to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" => Ok(true),
        "false" | "no" | "0" | "" => Ok(false),
        _ => Err(Error::InvalidArgument(format!(
            "{key}={value}: expected true or false"
        ))),
    }
}

fn to_usize(key: &str, n: u64) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::InvalidArgument(format!("{key}={n} is too large")))
}

/// Parses a number with an optional suffix: k/m/g/t or ki/mi/gi/ti, all binary
/// multiples (1k = 1024) as in Tokyo Cabinet, where `capsiz=64m` means 64 MiB.
pub(crate) fn parse_number(key: &str, value: &str) -> Result<u64> {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    let digits_end = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, suffix) = lower.split_at(digits_end);
    let bad = || {
        Error::InvalidArgument(format!(
            "{key}={value}: expected a number like 64, 1k, 64m, 2g"
        ))
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    let shift = match suffix.trim_end_matches('b').trim_end_matches('i') {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return Err(bad()),
    };
    n.checked_mul(1u64 << shift).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_names_users_know() {
        let n = DbName::parse("*#capsiz=1024m").unwrap();
        assert_eq!((n.kind, n.cap_mem_size), (EngineKind::MemHash, 1 << 30));
        let n = DbName::parse("db.tch#bnum=1000000#apow=10").unwrap();
        assert_eq!((n.kind, n.num_buckets), (EngineKind::FileHash, 1_000_000));
        assert_eq!(n.ignored, vec!["apow=10".to_string()]);
        let n = DbName::parse("db.tcb#opts=d").unwrap();
        assert_eq!(
            (n.kind, n.compression),
            (EngineKind::FileTree, Compression::Zstd)
        );
        let n = DbName::parse("casket.tkh#num_shards=100,num_buckets=1M,update_mode=appending")
            .unwrap();
        assert_eq!((n.num_shards, n.num_buckets), (100, 1 << 20));
        assert_eq!(
            DbName::parse("casket.tkmt#num_buckets=1M").unwrap().kind,
            EngineKind::MemFile
        );
        assert_eq!(DbName::parse("+").unwrap().kind, EngineKind::MemTree);
        assert_eq!(
            DbName::parse("x.dat#dbm=tree").unwrap().kind,
            EngineKind::FileTree
        );
    }

    #[test]
    fn unknown_parameter_names_the_closest_word_and_the_list() {
        let text = DbName::parse("*#num_shard=4").unwrap_err().to_string();
        assert!(
            text.contains("\"num_shard\"; did you mean \"num_shards\"?"),
            "{text}"
        );
        assert!(
            text.contains("docs/names.md") && !text.contains("apow"),
            "{text}"
        );
        let text = DbName::parse("x.tkh#capsize_mb=1").unwrap_err().to_string();
        assert!(text.contains("did you mean \"capsiz\"?"), "{text}");
        let text = DbName::parse("*#colour=blue").unwrap_err().to_string();
        assert!(
            text.contains("\"colour\"") && !text.contains("did you mean"),
            "{text}"
        );
        assert!(text.len() < 120, "{text}");
        assert!(matches!(
            DbName::parse("x.unknown"),
            Err(Error::InvalidArgument(_))
        ));
        assert!(DbName::parse("*#num_shards=x").is_err());
        assert!(DbName::parse("*#capsiz=12q").is_err());
        assert!(DbName::parse("*#capsiz").is_err());
    }

    /// The error points to docs/names.md for the full list: it must be full.
    #[test]
    fn every_word_is_in_the_documented_list() {
        let doc = include_str!("../../../docs/names.md");
        let list = doc.split("## Every word").nth(1).expect("the section");
        for w in KNOWN_PARAMS.iter().chain(IGNORED_PARAMS).chain(kc::IGNORED) {
            assert!(list.contains(&format!("`{w}`")), "{w} is not listed");
        }
    }

    /// Issue 44: Tkrzw's spellings of `update_mode` (its constants' names,
    /// any case) are accepted; another word is refused naming them.
    #[test]
    fn tkrzw_update_mode_spellings() {
        for v in [
            "UPDATE_APPENDING",
            "update_appending",
            "appending",
            "UPDATE_IN_PLACE",
            "in_place",
            "UPDATE_DEFAULT",
            "default",
        ] {
            DbName::parse(&format!("x.tkh#update_mode={v}")).unwrap();
        }
        let e = DbName::parse("x.tkh#update_mode=sideways").unwrap_err();
        assert!(e.to_string().contains("UPDATE_APPENDING"), "{e}");
    }

    /// Issue 44: Tkrzw's engine names (PolyDBM's extensions and `dbm=`
    /// classes) open the nearest memstored engine, and `tkrzw_class` gives
    /// Tkrzw's class back.
    #[test]
    fn tkrzw_engine_names() {
        use EngineKind::*;
        let cases = [
            ("x.tkh", FileHash, "HashDBM"),
            ("x.tkt", FileTree, "TreeDBM"),
            (
                "x.tks#step_unit=4,max_level=10,sort_mem_size=1M",
                FileTree,
                "SkipDBM",
            ),
            ("x.skip", FileTree, "SkipDBM"),
            ("x.tiny", MemFile, "TinyDBM"),
            ("x.flat", MemFile, "TinyDBM"),
            ("x.tkmt", MemFile, "TinyDBM"),
            ("x.baby", FileTree, "BabyDBM"),
            ("x.cache", MemFile, "CacheDBM"),
            ("x.stdhash", MemFile, "StdHashDBM"),
            ("x.stdtree", FileTree, "StdTreeDBM"),
            ("#dbm=TinyDBM", MemHash, "TinyDBM"),
            ("#dbm=BabyDBM", MemTree, "BabyDBM"),
            ("#dbm=CacheDBM,cap_rec_num=10", MemHash, "CacheDBM"),
            ("#dbm=StdHashDBM", MemHash, "StdHashDBM"),
            ("#dbm=StdTreeDBM", MemTree, "StdTreeDBM"),
            ("x.dat#dbm=BabyDBM", FileTree, "BabyDBM"),
            ("x.dat#dbm=TinyDBM", MemFile, "TinyDBM"),
            ("x.dat#dbm=SkipDBM", FileTree, "SkipDBM"),
            ("x.dat#dbm=HashDBM", FileHash, "HashDBM"),
            ("*", MemHash, "TinyDBM"),
            ("*#capsiz=1m", MemHash, "CacheDBM"),
            ("+", MemTree, "BabyDBM"),
        ];
        for (name, kind, class) in cases {
            let n = DbName::parse(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!((n.kind, n.tkrzw_class()), (kind, class), "{name}");
        }
    }

    /// Issue 44: `num_shards=0` is Tkrzw's "as many as the files have":
    /// kept as 0 for a file engine (resolved at open), 1 for memory.
    #[test]
    fn num_shards_zero_is_resolved_later() {
        let n = DbName::parse("x.tkh#num_shards=0").unwrap();
        assert_eq!((n.num_shards, n.names_shards()), (0, true));
        assert_eq!(DbName::parse("*#num_shards=0").unwrap().num_shards, 1);
        assert_eq!(DbName::parse("x.tkh#num_shards=-1").unwrap().num_shards, 0);
    }

    /// Regression (fuzz target `db_name`): `*#num_shards=1g` parsed, and
    /// opening it aborted on a 150 GB allocation for the shard table.
    #[test]
    fn num_shards_above_the_limit_is_refused() {
        assert_eq!(
            DbName::parse(&format!("*#num_shards={MAX_SHARDS}"))
                .unwrap()
                .num_shards,
            MAX_SHARDS
        );
        for name in [
            "*#num_shards=65537",
            "*#num_shards=1g",
            "x.tkh#num_shards=1t",
        ] {
            assert!(
                matches!(DbName::parse(name), Err(Error::InvalidArgument(_))),
                "{name}"
            );
        }
    }

    #[test]
    fn number_suffixes_are_binary() {
        assert_eq!(parse_number("k", "64").unwrap(), 64);
        assert_eq!(parse_number("k", "1k").unwrap(), 1024);
        assert_eq!(parse_number("k", "2Ki").unwrap(), 2048);
        assert_eq!(parse_number("k", "3g").unwrap(), 3 << 30);
        assert!(parse_number("k", "99999999999999999999g").is_err());
    }
}
