//! The checked-in `include/memstored.h` is what cbindgen makes of the crate
//! today: a change to an exported signature without a regenerated header fails here.
//! Regenerate with `UPDATE_HEADER=1 cargo test -p memstored-c --test header`.

#[test]
fn checked_in_header_is_current() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen parses the crate")
        .write(&mut generated);
    let path = format!("{dir}/include/memstored.h");
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let checked_in = std::fs::read(&path).unwrap_or_default();
    assert!(
        checked_in == generated,
        "{path} is stale: run UPDATE_HEADER=1 cargo test -p memstored-c --test header"
    );
    let text = String::from_utf8(generated).unwrap();
    for name in ["memstored_dbm_open", "memstored_free", "MemstoredDBMIter"] {
        assert!(text.contains(name), "{name} missing from the header");
    }
    // The status constants are Tkrzw's table, the engine's, one for one.
    let names = memstored_engine::status::STATUS_NAMES;
    for (code, name) in names.iter().enumerate() {
        let line = format!("#define MEMSTORED_STATUS_{name} {code}\n");
        assert!(text.contains(&line), "{line:?} missing from the header");
    }
    assert_eq!(
        text.matches("#define MEMSTORED_STATUS_").count(),
        names.len(),
        "a MEMSTORED_STATUS_ constant that is not in the engine's table"
    );
}
