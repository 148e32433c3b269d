use super::*;
use std::io::Write as _;

fn file(text: &str) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new().unwrap();
    f.write_all(text.as_bytes()).unwrap();
    f
}

fn load_with(text: &str, extra: &[&str]) -> Result<Loaded, ConfigError> {
    let f = file(text);
    let path = f.path().to_str().unwrap().to_string();
    let mut argv = vec!["memstored", "--config", &path];
    argv.extend_from_slice(extra);
    load(argv)
}

#[test]
fn every_kind_of_key() {
    let l = load_with(
        r#"
store = ["a.tkh", "b.kct#bnum=100"]
listen = "0.0.0.0:11311"
max-connections = 77
max-item-size = "2m"
read-only = true
verbose = 2
search-timeout = 1.5
"#,
        &[],
    )
    .unwrap();
    assert_eq!(l.args.stores(), ["a.tkh", "b.kct#bnum=100"]);
    assert_eq!(l.args.listen_addr(), "0.0.0.0:11311".parse().unwrap());
    assert_eq!(l.args.max_connections, 77);
    assert_eq!(l.args.max_item_size, 2 << 20);
    assert!(l.args.read_only);
    assert_eq!(l.args.verbose, 2);
    assert_eq!(
        l.args.search_timeout,
        std::time::Duration::from_millis(1500)
    );
}

#[test]
fn the_command_line_wins() {
    let text = "store = [\"a.tkh\"]\nmax-connections = 77\nread-threads = 3\n";
    let l = load_with(text, &["-c", "5", "b.tkh"]).unwrap();
    assert_eq!(l.args.max_connections, 5);
    assert_eq!(
        l.args.stores(),
        ["b.tkh"],
        "positional names replace the file's"
    );
    assert_eq!(l.args.workers, Some(3), "keys not on the command line stay");
    let l = load_with(text, &["-s", "c.tkh"]).unwrap();
    assert_eq!(l.args.stores(), ["c.tkh"]);
}

#[test]
fn a_single_store_may_be_a_string() {
    let l = load_with("store = \"*#capsiz=1m\"\nread-only = false\n", &[]).unwrap();
    assert_eq!(l.args.stores(), ["*#capsiz=1m"]);
    assert!(!l.args.read_only);
}

#[test]
fn mistakes_are_named() {
    let msg = |text: &str| {
        load_with(text, &[])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let m = msg("max-conections = 5\n");
    assert!(
        m.contains("unknown key \"max-conections\"; did you mean \"max-connections\"?"),
        "{m}"
    );
    assert!(msg("config = \"x\"\n").contains("unknown key \"config\""));
    assert!(msg("read-only = \"yes\"\n").contains("expected true or false"));
    assert!(msg("listen = [1, 2]\n").contains("expected a single string or number"));
    assert!(msg("listen = \n").contains("config file"));
    let m = msg("max-connections = \"many\"\n");
    assert!(
        m.contains("config file") && m.contains("invalid value"),
        "{m}"
    );
    let m = load(["memstored", "--config", "/nonexistent/m.toml"])
        .err()
        .unwrap()
        .to_string();
    assert!(
        m.contains("cannot read config file /nonexistent/m.toml"),
        "{m}"
    );
}

/// What --print-config writes loads back to the same settings.
#[test]
fn printed_config_round_trips() {
    let l = load([
        "memstored",
        "-s",
        "a.tkh",
        "-s",
        "b.kct",
        "-c",
        "9",
        "-vv",
        "--read-only",
        "-l",
        "7",
    ])
    .unwrap();
    let printed = render(&l);
    assert!(printed.contains("max-connections = 9\n"), "{printed}");
    assert!(printed.contains("# sasl-file = (not set)\n"), "{printed}");
    let again = load_with(&printed, &[]).unwrap();
    assert_eq!(render(&again), printed);
    assert_eq!(again.args.stores(), ["a.tkh", "b.kct"]);
    assert_eq!(again.args.verbose, 2);
    assert_eq!(again.args.listen_addr(), "127.0.0.1:7".parse().unwrap());
}

/// memcached's `-m` and `-p` print as the store and the address they
/// make, so the printed file loads back without contradicting itself.
#[test]
fn printed_config_folds_memcached_flags() {
    let l = load(["memstored", "-m", "2", "-p", "0", "-U", "0"]).unwrap();
    let printed = render(&l);
    let keys: Vec<&str> = printed
        .lines()
        .filter_map(|l| l.split(" = ").next())
        .collect();
    assert!(
        !keys.contains(&"memory-limit") && !keys.contains(&"port"),
        "{printed}"
    );
    let again = load_with(&printed, &[]).unwrap();
    assert_eq!(again.args.stores(), ["*#capsiz=2m"]);
    assert_eq!(again.args.listen_addr(), "127.0.0.1:0".parse().unwrap());
    assert!(again.args.conflicts().is_none());
}

#[test]
fn without_a_file_nothing_changes() {
    let l = load(["memstored", "-c", "3"]).unwrap();
    assert_eq!(l.args.max_connections, 3);
    assert_eq!(l.args.stores(), [crate::app::cli::DEFAULT_STORE]);
}

/// The message a flag on the command line gets, or `None` if accepted.
fn flag_verdict(flag: &str, value: &str) -> Result<String, String> {
    match load(["memstored".to_string(), format!("--{flag}={value}")]) {
        Ok(l) => Ok(render(&l)),
        Err(ConfigError::CommandLine(e)) => Err(flag_message(&e)),
        Err(e) => Err(e.to_string()),
    }
}

/// The same value as a config key, typed as TOML would type it: the
/// message shown, less its `config file PATH: ` prefix.
fn file_verdict(key: &str, value: &str) -> Result<String, String> {
    let typed = match (value.parse::<i64>(), value.parse::<f64>()) {
        (Ok(n), _) => n.to_string(),
        (_, Ok(f)) if value.contains('.') => format!("{f:?}"),
        _ => format!("{value:?}"),
    };
    match load_with(&format!("{key} = {typed}\n"), &[]) {
        Ok(l) => Ok(render(&l)),
        Err(e @ ConfigError::Flags { .. }) => {
            let shown = e.to_string();
            let (_, message) = shown.split_once(": ").unwrap_or_default();
            Err(message.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// A value a flag refuses is refused in a config file with the same words,
/// and one it accepts means the same there (issue 40, finding 6), for every
/// option that takes a value.
#[test]
fn every_option_takes_the_same_values_from_a_file_as_from_its_flag() {
    let probes = [
        "0",
        "-1",
        "1",
        "64",
        "1.5",
        "3g",
        "99999999999999999999",
        "abc",
    ];
    let command = Args::command();
    let mut checked = 0;
    for arg in file_args(&command) {
        if !matches!(arg.get_action(), ArgAction::Set | ArgAction::Append) {
            continue;
        }
        let long = arg.get_long().unwrap();
        for v in probes {
            let (flag, file) = (flag_verdict(long, v), file_verdict(long, v));
            match (&flag, &file) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{long} = {v}"),
                (Err(a), Err(b)) => assert_eq!(a, b, "{long} = {v}"),
                _ => panic!("--{long}={v}: flag {flag:?}, config file {file:?}"),
            }
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked}");
}

/// `initial-size = "3g"` started a server whose every connection was then
/// reset: the buffer sizes have a bound, named in the refusal.
#[test]
fn buffer_sizes_are_bounded() {
    for key in ["initial-size", "reserve-size"] {
        let e = file_verdict(key, "3g").unwrap_err();
        assert!(e.contains("at most 1m"), "{e}");
        assert_eq!(flag_verdict(key, "3g").unwrap_err(), e);
        assert!(file_verdict(key, "1m").is_ok());
        assert!(file_verdict(key, "1025k").is_err());
    }
    let e = file_verdict("max-connections", "0").unwrap_err();
    assert!(e.contains("greater than 0"), "{e}");
    let m = load_with("initial-size = \"3g\"\n", &[])
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        m.starts_with("config file ") && m.contains("--initial-size"),
        "{m}"
    );
}
