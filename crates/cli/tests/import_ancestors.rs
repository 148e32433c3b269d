//! `memstore import` reads what the ancestors' own tools export, and opening
//! an ancestor's file names the commands that bring it over. Real files are
//! made with Debian's tkrzw-utils, tokyocabinet-bin and kyotocabinet-utils
//! (.ci/run installs them); a missing tool fails the test naming its package.

use memstored_engine::Db;
use std::path::Path;
use std::process::{Command, Output};

type Rec = (Vec<u8>, Vec<u8>);

/// Tab, line feed, CR, backslash, NUL, invalid UTF-8, empty key and value,
/// every byte: what each format has to carry.
fn records() -> Vec<Rec> {
    let r = |k: &[u8], v: &[u8]| (k.to_vec(), v.to_vec());
    vec![
        r(b"plain", b"value"),
        r(b"tab\tkey", b"tab\tvalue"),
        r(b"nl\nkey", b"line1\nline2\n"),
        r(b"back\\slash", b"C:\\dir\\"),
        r(b"\xff\xfebin", b"\x00\x01\x7f\x80\xff"),
        r(b"\x00nul", b""),
        r(b"empty", b""),
        r(b"", b"empty key"),
        r("日本語".as_bytes(), "値".as_bytes()),
        r(b"cr\r", b"ends\r"),
        r(b" sp ", b" lead and trail "),
        r(b"all", &(0..=255u8).collect::<Vec<u8>>()),
    ]
}

/// No control bytes: what the plain (unescaped) exports keep as they are.
fn clean(r: &&Rec) -> bool {
    let ok = |d: &[u8]| d.iter().all(|&b| b >= 0x20 && b != 0x7f);
    ok(&r.0) && ok(&r.1)
}

/// Runs an ancestor's tool in `dir` and demands success; a tool that is not
/// installed fails the test with the Debian package to install.
fn tool(dir: &Path, bin: &str, package: &str, args: &[&str]) -> Output {
    let out = match Command::new(bin).current_dir(dir).args(args).output() {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "{bin} is not installed: these tests need the Debian package {package} \
             (apt-get install -y {package}; .ci/run installs it)"
        ),
        Err(e) => panic!("running {bin}: {e}"),
    };
    assert!(
        out.status.success(),
        "{bin} {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn memstore(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_memstore"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run memstore")
}

fn import_ok(dir: &Path, args: &[&str]) {
    let out = memstore(dir, args);
    assert!(
        out.status.success(),
        "memstore {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every record of `want` is in the database at `path`, and nothing else.
fn check(path: &Path, want: &[&Rec]) {
    let db = Db::open(path.to_str().expect("utf-8 path"), false).expect("open the import");
    for (k, v) in want {
        let got = db
            .get(k)
            .unwrap_or_else(|e| panic!("{}: key {k:?}: {e}", path.display()));
        assert_eq!(&got[..], &v[..], "{}: key {k:?}", path.display());
    }
    assert_eq!(db.count(), want.len() as u64, "{}", path.display());
}

/// The records without control bytes are in the database at `path`, exactly
/// (a plain export keeps them; the others it mangled or split).
fn check_clean(path: &Path, recs: &[Rec]) -> Db {
    let db = Db::open(path.to_str().expect("utf-8 path"), false).expect("open the import");
    for (k, v) in recs.iter().filter(clean) {
        let got = db
            .get(k)
            .unwrap_or_else(|e| panic!("{}: key {k:?}: {e}", path.display()));
        assert_eq!(&got[..], &v[..], "{}: key {k:?}", path.display());
    }
    db
}

fn hex(d: &[u8]) -> String {
    d.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// A Tokyo or Kyoto Cabinet database holding `recs`, stored with `-sx`
/// (hex arguments, so NUL and any byte go in).
fn cabinet(dir: &Path, bin: &str, package: &str, put: &str, file: &str, recs: &[Rec]) {
    tool(dir, bin, package, &["create", file]);
    for (k, v) in recs {
        tool(dir, bin, package, &[put, "-sx", file, &hex(k), &hex(v)]);
    }
}

/// A Tkrzw database holding `recs`, loaded by Tkrzw's own TSV import with
/// every byte escaped `\xNN`.
fn tkrzw(dir: &Path, file: &str, recs: &[Rec]) {
    let esc = |d: &[u8]| d.iter().map(|b| format!("\\x{b:02x}")).collect::<String>();
    let tsv: String = recs
        .iter()
        .map(|(k, v)| format!("{}\t{}\n", esc(k), esc(v)))
        .collect();
    std::fs::write(dir.join("load.tsv"), tsv).unwrap();
    tool(dir, "tkrzw_dbm_util", "tkrzw-utils", &["create", file]);
    let args = ["import", "--tsv", "--escape", file, "load.tsv"];
    tool(dir, "tkrzw_dbm_util", "tkrzw-utils", &args);
}

#[test]
fn tkrzw_exports_import() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let recs = records();
    let all: Vec<&Rec> = recs.iter().collect();
    for db in ["casket.tkh", "casket.tkt"] {
        tkrzw(d, db, &recs);
        // Exports with Tkrzw's options, then imports of each into `db.FORMAT.tkh`.
        let round = |options: &[&str], format: &str| {
            let (out, into) = (format!("{db}.{format}"), format!("{db}.{format}.tkh"));
            let args: Vec<&str> = [&["export"], options, &[db, &out]].concat();
            tool(d, "tkrzw_dbm_util", "tkrzw-utils", &args);
            // The default format recognises flat records: no --format for them.
            match format {
                "tkrzw" => import_ok(d, &["import", &into, &out]),
                _ => import_ok(d, &["import", "--format", format, &into, &out]),
            }
            d.join(into)
        };
        check(&round(&[], "tkrzw"), &all);
        check(&round(&["--tsv", "--escape"], "tkrzw-tsv-escape"), &all);
        // Plain TSV: Tkrzw turned control bytes into spaces; the rest is kept.
        let db = check_clean(&round(&["--tsv"], "tkrzw-tsv"), &recs);
        assert_eq!(db.count(), recs.len() as u64, "no record was lost");
    }
}

/// Tokyo and Kyoto Cabinet: `list -pv -px` carries every record; plain
/// `list -pv` keeps the records without control bytes and reports the lines
/// a line feed split, failing the import so scripts notice.
#[test]
fn cabinet_exports_import() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let recs = records();
    let all: Vec<&Rec> = recs.iter().collect();
    let cases = [
        ("tchmgr", "tokyocabinet-bin", "put", "casket.tch", "tc"),
        ("tcbmgr", "tokyocabinet-bin", "put", "casket.tcb", "tc"),
        ("kchashmgr", "kyotocabinet-utils", "set", "casket.kch", "kc"),
        ("kctreemgr", "kyotocabinet-utils", "set", "casket.kct", "kc"),
    ];
    for (bin, package, put, file, format) in cases {
        cabinet(d, bin, package, put, file, &recs);
        let hexed = tool(d, bin, package, &["list", "-pv", "-px", file]).stdout;
        std::fs::write(d.join("hex.tsv"), hexed).unwrap();
        let into = format!("{file}-hex.tkh");
        import_ok(
            d,
            &[
                "import",
                "--format",
                &format!("{format}-hex"),
                &into,
                "hex.tsv",
            ],
        );
        check(&d.join(&into), &all);

        let raw = tool(d, bin, package, &["list", "-pv", file]).stdout;
        std::fs::write(d.join("raw.tsv"), raw).unwrap();
        let into = format!("{file}-raw.tkh");
        let out = memstore(d, &["import", "--format", format, &into, "raw.tsv"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success(),
            "{file}: split lines must fail the import: {err}"
        );
        assert!(
            err.contains("raw.tsv:") && err.contains("bad line skipped: no tab"),
            "{err}"
        );
        assert!(
            err.contains("-px"),
            "{file}: the error points at hex: {err}"
        );
        check_clean(&d.join(&into), &recs);
    }
}

/// Opening a real ancestor's file names it and the commands that bring it
/// over; running those commands as printed makes it a memstored database
/// with every record, under the same name.
#[test]
fn opening_an_ancestors_file_names_the_migration() {
    let t = tempfile::tempdir().unwrap();
    let d = t.path();
    let recs = records();
    let all: Vec<&Rec> = recs.iter().collect();
    cabinet(d, "tchmgr", "tokyocabinet-bin", "put", "casket.tch", &recs);
    cabinet(d, "tcbmgr", "tokyocabinet-bin", "put", "casket.tcb", &recs);
    cabinet(
        d,
        "kchashmgr",
        "kyotocabinet-utils",
        "set",
        "casket.kch",
        &recs,
    );
    cabinet(
        d,
        "kctreemgr",
        "kyotocabinet-utils",
        "set",
        "casket.kct",
        &recs,
    );
    tkrzw(d, "casket.tkh", &recs);
    tkrzw(d, "casket.tkt", &recs);
    tkrzw(d, "casket.tkmt", &recs);
    let cases = [
        ("casket.tch", "a Tokyo Cabinet hash database", "tchmgr list -pv -px casket.tch > casket.tch.tsv && mv casket.tch casket.tch.old && memstore import --format tc-hex casket.tch casket.tch.tsv"),
        ("casket.tcb", "a Tokyo Cabinet B+ tree database", "tcbmgr list -pv -px casket.tcb"),
        ("casket.kch", "a Kyoto Cabinet hash database", "kchashmgr list -pv -px casket.kch > casket.kch.tsv && mv casket.kch casket.kch.old && memstore import --format kc-hex casket.kch casket.kch.tsv"),
        ("casket.kct", "a Kyoto Cabinet tree database", "kctreemgr list -pv -px casket.kct"),
        ("casket.tkh", "a Tkrzw hash database", "tkrzw_dbm_util export --dbm hash casket.tkh casket.tkh.flat && mv casket.tkh casket.tkh.old && memstore import --format tkrzw casket.tkh casket.tkh.flat"),
        ("casket.tkt", "a Tkrzw tree database", "tkrzw_dbm_util export --dbm tree casket.tkt casket.tkt.flat"),
        ("casket.tkmt", "a Tkrzw on-memory database saved as flat records", "mv casket.tkmt casket.tkmt.old && memstore import --format tkrzw casket.tkmt casket.tkmt.old"),
    ];
    let exe = Path::new(env!("CARGO_BIN_EXE_memstore"));
    let path = format!(
        "{}:{}",
        exe.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (file, what, command) in cases {
        let before = std::fs::read(d.join(file)).unwrap();
        let out = memstore(d, &["get", file, "plain"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{file} opened as memstored's: {err}");
        assert!(
            err.contains(&format!("{file} is {what}, not a memstored file")),
            "{file}: {err}"
        );
        assert!(err.contains(command), "{file}: {err}\nwanted: {command}");
        assert_eq!(
            std::fs::read(d.join(file)).unwrap(),
            before,
            "{file} was changed"
        );
        let given = err
            .split("bring its records over with: ")
            .nth(1)
            .unwrap_or_else(|| panic!("{file}: no command in {err}"))
            .trim();
        let run = Command::new("sh")
            .args(["-c", given])
            .current_dir(d)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{file}: `{given}` failed: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        check(&d.join(file), &all);
        assert!(
            d.join(format!("{file}.old")).exists(),
            "{file}: the old file is kept"
        );
    }
}
