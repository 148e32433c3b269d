//! Files of memstored's ancestors (Tkrzw, Tokyo Cabinet, Kyoto Cabinet),
//! recognised by their magic so that opening one says what it is and the
//! exact commands that bring its records over (`memstore import --format`).
//! memstored accepts the ancestors' names (`casket.tch`, `casket.kch`, ...)
//! but not their bytes; a user pointing it at old data needs a way in.
//!
//! The magic was checked against files made by Debian's tkrzw-utils 1.0.25,
//! tokyocabinet-bin 1.4.48 and kyotocabinet-utils 1.2.79:
//!
//! | file | bytes |
//! |---|---|
//! | Tkrzw HashDBM | `TkrzwHDB` at 0 |
//! | Tkrzw TreeDBM (kept in a HashDBM file) | `TkrzwHDB` at 0, `TDB` at 62 |
//! | Tkrzw SkipDBM | `TkrzwSDB` at 0 |
//! | Tkrzw on-memory DBM saved to a file (`.tkmt`, `.tkmb`) | flat records: 0xFE, a size, then `class` |
//! | Tokyo Cabinet | `ToKyO CaBiNeT\n` at 0; type at 32: 0 hash, 1 B+ tree, 2 fixed, 3 table |
//! | Kyoto Cabinet | `KC\n\0` at 0; type at 8: 0x30 hash, 0x31 tree |

/// What an ancestor's file holds, as far as migrating it matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ancestor {
    TkrzwHash,
    TkrzwTree,
    TkrzwSkip,
    /// A Tkrzw magic of no kind above: exported by `--dbm` auto-detection.
    TkrzwOther,
    /// TinyDBM/BabyDBM/CacheDBM saved as a flat-record file: importable as is.
    TkrzwFlat,
    TcHash,
    TcTree,
    /// Fixed-length and table databases: no key/value export to import.
    TcOther(&'static str),
    KcHash,
    KcTree,
    KcOther,
}

fn recognise(b: &[u8]) -> Option<Ancestor> {
    if b.starts_with(b"TkrzwHDB") {
        return Some(if b.get(62..65) == Some(b"TDB") {
            Ancestor::TkrzwTree
        } else {
            Ancestor::TkrzwHash
        });
    }
    if b.starts_with(b"TkrzwSDB") {
        return Some(Ancestor::TkrzwSkip);
    }
    if b.starts_with(b"Tkrzw") {
        return Some(Ancestor::TkrzwOther);
    }
    // A metadata record: 0xFE, a varint size of one or two bytes, then the
    // first key, `class`, with its one-byte size 5.
    if b.first() == Some(&0xfe)
        && b.get(1..10)
            .is_some_and(|h| h.windows(6).any(|w| w == b"\x05class"))
    {
        return Some(Ancestor::TkrzwFlat);
    }
    if b.starts_with(b"ToKyO CaBiNeT") {
        return Some(match b.get(32) {
            Some(0) => Ancestor::TcHash,
            Some(1) => Ancestor::TcTree,
            Some(2) => Ancestor::TcOther("fixed-length"),
            Some(3) => Ancestor::TcOther("table"),
            _ => Ancestor::TcOther("unknown-type"),
        });
    }
    if b.starts_with(b"KC\n\0") {
        return Some(match b.get(8) {
            Some(0x30) => Ancestor::KcHash,
            Some(0x31) => Ancestor::KcTree,
            _ => Ancestor::KcOther,
        });
    }
    None
}

/// Quotes `s` for a POSIX shell when it holds anything but plain path bytes.
fn sh(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+,:@%=".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `casket.tkh-00003-of-00016` → (`casket.tkh`, 16): Tkrzw's ShardDBM names
/// its shards as memstored does.
fn shard_base(path: &str) -> Option<(&str, usize)> {
    let (rest, of) = path.rsplit_once("-of-")?;
    let (base, index) = rest.rsplit_once('-')?;
    let digits = |s: &str| s.len() == 5 && s.bytes().all(|c| c.is_ascii_digit());
    if !digits(index) || !digits(of) {
        return None;
    }
    Some((base, of.parse().ok()?))
}

/// The full refusal for an ancestor's file at `path` whose first bytes are
/// `b`, or `None` when `b` is no ancestor's.
pub(crate) fn explain(b: &[u8], path: &str) -> Option<String> {
    let what = recognise(b)?;
    let p = sh(path);
    // Export, move the old file aside, import under the same name: the
    // configuration naming `path` keeps working, and the old file is kept.
    let swap = |export: String, out: &str, format: &str| {
        let out = sh(out);
        format!(
            "bring its records over with: {export} && mv {p} {old} && \
             memstore import --format {format} {p} {out}",
            old = sh(&format!("{path}.old")),
        )
    };
    let (name, how) = match what {
        Ancestor::TkrzwHash | Ancestor::TkrzwTree | Ancestor::TkrzwSkip | Ancestor::TkrzwOther => {
            let (kind, dbm) = match what {
                Ancestor::TkrzwHash => ("a Tkrzw hash database", "--dbm hash "),
                Ancestor::TkrzwTree => ("a Tkrzw tree database", "--dbm tree "),
                Ancestor::TkrzwSkip => ("a Tkrzw skip database", "--dbm skip "),
                _ => ("a Tkrzw database", ""),
            };
            if let Some((base, n)) = shard_base(path) {
                let flat = format!("{base}.flat");
                let how = format!(
                    "bring its records over with: tkrzw_dbm_util export --dbm shard {b} {f} && \
                     mkdir {old} && mv {b}-*-of-* {old}/ && \
                     memstore import --format tkrzw {named} {f}",
                    b = sh(base),
                    f = sh(&flat),
                    old = sh(&format!("{base}.old")),
                    named = sh(&format!("{base}#num_shards={n}")),
                );
                (format!("a shard of {kind} {base} (Tkrzw's ShardDBM)"), how)
            } else {
                let flat = format!("{path}.flat");
                let export = format!("tkrzw_dbm_util export {dbm}{p} {}", sh(&flat));
                (kind.to_string(), swap(export, &flat, "tkrzw"))
            }
        }
        Ancestor::TkrzwFlat => (
            "a Tkrzw on-memory database saved as flat records".to_string(),
            format!(
                "bring its records over with: mv {p} {old} && memstore import --format tkrzw {p} {old}",
                old = sh(&format!("{path}.old")),
            ),
        ),
        Ancestor::TcHash
        | Ancestor::TcTree
        | Ancestor::KcHash
        | Ancestor::KcTree
        | Ancestor::KcOther => {
            let (kind, tool, format) = match what {
                Ancestor::TcHash => ("a Tokyo Cabinet hash database", "tchmgr", "tc-hex"),
                Ancestor::TcTree => ("a Tokyo Cabinet B+ tree database", "tcbmgr", "tc-hex"),
                Ancestor::KcHash => ("a Kyoto Cabinet hash database", "kchashmgr", "kc-hex"),
                Ancestor::KcTree => ("a Kyoto Cabinet tree database", "kctreemgr", "kc-hex"),
                _ => ("a Kyoto Cabinet database", "kcpolymgr", "kc-hex"),
            };
            let tsv = format!("{path}.tsv");
            let export = format!("{tool} list -pv -px {p} > {}", sh(&tsv));
            (kind.to_string(), swap(export, &tsv, format))
        }
        Ancestor::TcOther(kind) => (
            format!("a Tokyo Cabinet {kind} database"),
            "memstore import reads the exports of Tokyo Cabinet's hash and B+ tree \
             databases only (tchmgr/tcbmgr list -pv -px)"
                .to_string(),
        ),
    };
    Some(format!("{path} is {name}, not a memstored file; {how}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tc(kind: u8) -> Vec<u8> {
        let mut b = b"ToKyO CaBiNeT\n1.0:911\n".to_vec();
        b.resize(64, 0);
        b[32] = kind;
        b
    }

    #[test]
    fn each_ancestor_gets_its_commands() {
        let mut tree = b"TkrzwHDB\n".to_vec();
        tree.resize(128, 0);
        tree[62..65].copy_from_slice(b"TDB");
        let mut kct = b"KC\n\0\x10\x0e\x06\xbc1".to_vec();
        kct.resize(64, 0);
        let cases: Vec<(Vec<u8>, &str, &str)> = vec![
            (tc(0), "casket.tch", "tchmgr list -pv -px casket.tch > casket.tch.tsv && mv casket.tch casket.tch.old && memstore import --format tc-hex casket.tch casket.tch.tsv"),
            (tc(1), "d/c.tcb", "tcbmgr list -pv -px d/c.tcb > d/c.tcb.tsv"),
            (b"TkrzwHDB\n\x0b".to_vec(), "c.tkh", "tkrzw_dbm_util export --dbm hash c.tkh c.tkh.flat && mv c.tkh c.tkh.old && memstore import --format tkrzw c.tkh c.tkh.flat"),
            (tree, "c.tkt", "tkrzw_dbm_util export --dbm tree c.tkt c.tkt.flat"),
            (b"TkrzwSDB\n".to_vec(), "c.tks", "--dbm skip c.tks"),
            (kct, "my db.kct", "kctreemgr list -pv -px 'my db.kct' > 'my db.kct.tsv'"),
            (b"\xfeL\x05classTinyDBM".to_vec(), "t.tkmt", "mv t.tkmt t.tkmt.old && memstore import --format tkrzw t.tkmt t.tkmt.old"),
            (b"TkrzwHDB\n".to_vec(), "s.tkh-00001-of-00002", "tkrzw_dbm_util export --dbm shard s.tkh s.tkh.flat && mkdir s.tkh.old && mv s.tkh-*-of-* s.tkh.old/ && memstore import --format tkrzw 's.tkh#num_shards=2' s.tkh.flat"),
            (tc(3), "c.tct", "table database"),
        ];
        for (head, path, wanted) in cases {
            let msg = explain(&head, path).unwrap_or_else(|| panic!("{path} not recognised"));
            assert!(msg.starts_with(&format!("{path} is ")), "{msg}");
            assert!(msg.contains("not a memstored file"), "{msg}");
            assert!(msg.contains(wanted), "{path}: {msg}\nwanted: {wanted}");
        }
    }

    #[test]
    fn other_files_are_not_ancestors() {
        for b in [
            &b""[..],
            b"MEMSTOR\x1a",
            b"Dear diary",
            b"\xfe\x01\x02",
            b"KC",
        ] {
            assert_eq!(recognise(b), None, "{b:?}");
        }
        assert_eq!(shard_base("a.tkh-1-of-2"), None);
        assert_eq!(shard_base("a.tkh-00001-of-00002"), Some(("a.tkh", 2)));
    }
}
