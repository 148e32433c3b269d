//! `--config FILE` (dist/memstored.toml) starts the same server as the
//! equivalent flags, and dist/memstored.service runs a command line memstored
//! accepts.

mod common;
use common::{stats, stats_of, Server, Text};
use std::path::PathBuf;

/// The flags dist/memstored.toml stands for (docs/operations.md lists them).
const EQUIVALENT_FLAGS: &[&str] = &[
    "-s",
    "/var/lib/memstored/casket.tkh#num_shards=8,update_mode=appending",
    "-l",
    "127.0.0.1:11211",
    "-c",
    "4096",
    "-I",
    "1m",
    "--conn-memory",
    "512m",
    "--sync-interval",
    "1",
];

fn dist(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../dist")
        .join(name)
}

fn print_config(args: &[&str]) -> String {
    let out = common::memstored()
        .args(args)
        .arg("--print-config")
        .output()
        .expect("run memstored");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn dist_config_means_the_equivalent_flags() {
    let config = dist("memstored.toml");
    let from_file = print_config(&["--config", config.to_str().unwrap()]);
    assert_eq!(from_file, print_config(EQUIVALENT_FLAGS));
    assert!(
        from_file.contains("max-connections = 4096\n"),
        "{from_file}"
    );
    assert_ne!(from_file, print_config(&[]), "the file changes something");
}

/// A server started from the file (store and port overridden on the
/// command line, as a test must) has the file's settings.
#[test]
fn a_server_started_from_the_file_has_its_settings() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!(
        "{}/casket.tkh#num_shards=8,update_mode=appending",
        dir.path().display()
    );
    let config = dist("memstored.toml");
    let server = Server::start(&["--config", config.to_str().unwrap(), "-s", &store]);
    let settings = stats_of(&server, "settings");
    for (name, want) in [
        ("maxconns", "4096"),
        ("item_size_max", "1048576"),
        ("conn_memory", "536870912"),
    ] {
        let got = settings
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str());
        assert_eq!(got, Some(want), "stats settings {name}");
    }
    let mut t = Text::new(server.connect());
    assert_eq!(t.cmd("set k 0 0 2\r\nhi\r\n"), "STORED");
    let big = vec![b'x'; (1 << 20) + 1];
    t.send(format!("set big 0 0 {}\r\n", big.len()).as_bytes());
    t.send(&big);
    assert_eq!(t.cmd("\r\n"), "SERVER_ERROR object too large for cache");
    assert!(stats(&server)
        .iter()
        .any(|(k, v)| k == "curr_items" && v == "1"));
}

/// The unit's ExecStart, pointed at the repository's config, is a command
/// line memstored accepts and means the same settings.
#[test]
fn the_systemd_unit_runs_the_config() {
    let unit = std::fs::read_to_string(dist("memstored.service")).unwrap();
    let exec = unit
        .lines()
        .find_map(|l| l.strip_prefix("ExecStart="))
        .expect("ExecStart line");
    let mut words = exec.split_whitespace();
    assert_eq!(words.next(), Some("/usr/bin/memstored"));
    let config = dist("memstored.toml");
    let args: Vec<String> = words
        .map(|w| match w {
            "/etc/memstored/memstored.toml" => config.to_str().unwrap().to_string(),
            w => w.to_string(),
        })
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(print_config(&args), print_config(EQUIVALENT_FLAGS));
}
