//! memcached's ASCII authentication (`-Y authfile`), as memcached 1.6.45's
//! t/ascii-auth.t and t/ascii-auth2.t check it.

mod common;
use common::*;

fn authfile(dir: &std::path::Path, text: &str) -> String {
    let file = dir.join("authfile");
    std::fs::write(&file, text).unwrap();
    file.to_str().unwrap().to_string()
}

#[test]
fn a_set_logs_in_and_nothing_is_served_before() {
    let dir = tempfile::tempdir().unwrap();
    let file = authfile(dir.path(), "foo:bar\nbaaaz:quux\n");
    let srv = Server::start(&["-Y", &file]);
    let mut t = Text::new(srv.connect());
    assert_eq!(
        t.cmd("set foo 0 0 2\r\nhi\r\n"),
        "CLIENT_ERROR bad authentication token format"
    );
    assert_eq!(t.cmd("get foo\r\n"), "CLIENT_ERROR unauthenticated");
    assert_eq!(
        t.cmd("set foo 0 0 7\r\nfoo bab\r\n"),
        "CLIENT_ERROR authentication failure"
    );
    // Refused before its block: nothing is swallowed after it.
    assert_eq!(
        t.cmd("set foo 0 0 2147483646\r\n"),
        "CLIENT_ERROR auth token too long"
    );
    // Logging in and a command in the same packet: the command is served.
    t.send(b"set foo 0 0 7\r\nfoo bar\r\nset toast 0 0 2\r\nhi\r\n");
    assert_eq!(t.line(), "STORED");
    assert_eq!(t.line(), "STORED");
    assert_eq!(t.cmd("get toast\r\n"), "VALUE toast 0 2");
    assert_eq!((t.line(), t.line()), ("hi".into(), "END".into()));
    assert_eq!(t.stat("auth_cmds"), 2);
    assert_eq!(t.stat("auth_errors"), 1);
    let settings = t.listing("stats settings\r\n");
    assert!(settings.contains(&format!("STAT auth_enabled_ascii {file}")));
    assert!(settings.contains(&"STAT binding_protocol ascii".to_string()));

    // The second user, on a connection of its own.
    let mut t2 = Text::new(srv.connect());
    assert_eq!(t2.cmd("set foo 0 0 10\r\nbaaaz quux\r\n"), "STORED");
    assert_eq!(t2.cmd("get toast\r\n"), "VALUE toast 0 2");
}

#[test]
fn an_authfile_without_a_last_newline_is_whole() {
    let dir = tempfile::tempdir().unwrap();
    let file = authfile(dir.path(), "foo:bar");
    let srv = Server::start(&["-Y", &file]);
    let mut t = Text::new(srv.connect());
    assert_eq!(
        t.cmd("set foo 0 0 7\r\nfoo bab\r\n"),
        "CLIENT_ERROR authentication failure"
    );
    assert_eq!(t.cmd("set foo 0 0 7\r\nfoo bar\r\n"), "STORED");
}

#[test]
fn a_malformed_authfile_or_a_clash_refuses_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let file = authfile(dir.path(), "foo:bar\n\n");
    let out = memstored()
        .args(["-Y", &file, "-l", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("has a malformed entry"), "{err}");

    let file = authfile(dir.path(), "foo:bar\n");
    let out = memstored()
        .args(["-Y", &file, "-B", "binary", "-l", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("BINARY protocol"), "{err}");
}
