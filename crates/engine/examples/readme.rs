//! The README's library example: `cargo run -p memstored-engine --example readme`.
use memstored_engine::{Db, Error, StoreMode, StoreOptions};

fn main() -> Result<(), Error> {
    // A 4-shard hash store in a directory of its own; `truncate=true` starts
    // it empty, so the program runs the same every time.
    let dir = std::env::temp_dir().join("memstored-readme");
    std::fs::create_dir_all(&dir).map_err(|e| Error::System(e.to_string()))?;
    let name = format!("{}/casket.tkh#num_shards=4,truncate=true", dir.display());
    let db = Db::open(&name, true)?;
    db.set(b"key", b"value", true)?;
    // memcached's `add`: stored only if absent, with flags and a CAS back.
    let options = StoreOptions {
        flags: 7,
        expires_at: 0,
        cas: None,
    };
    let cas = db.store(b"k2", "v".into(), StoreMode::Add, options)?;
    println!("k2 added, cas {cas}");
    // Tkrzw's CompareExchangeMulti: all or nothing.
    let expected: &[(&[u8], Option<&[u8]>)] = &[(b"key", Some(b"value"))];
    let desired: &[(&[u8], Option<&[u8]>)] = &[(b"key", None), (b"k3", Some(b"x"))];
    db.compare_exchange_multi(expected, desired)?;
    let mut cursor = db.cursor();
    cursor.first()?;
    while let Some((key, value)) = cursor.step()? {
        println!(
            "{}\t{}",
            String::from_utf8_lossy(&key),
            String::from_utf8_lossy(&value)
        );
    }
    db.synchronize(true)?;
    Ok(())
}
