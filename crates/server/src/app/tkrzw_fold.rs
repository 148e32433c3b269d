//! Folds tkrzw_server's flags (`tkrzw_flags`) into memstored's own once the
//! command line and `--config` are parsed: the rest of the server sees one
//! setting each (`tkrzw_flags` says which twin each flag has).

use crate::app::cli::Args;
use crate::app::tkrzw_flags::{LogLevel, TKRZW_DEFAULT_GRPC};
use std::path::PathBuf;

/// The clap ids of the flags [`fold`] folds into memstored's own: the
/// printed config (`--print-config`) shows those instead.
pub const FOLDED: &[&str] = &[
    "address",
    "tk_server_id",
    "ulog_prefix",
    "ulog_max_file_size",
    "tk_pid_file",
    "tk_read_only",
];

/// Folds tkrzw_server's flags into memstored's twins, and gives the gRPC
/// port tkrzw_server's port when started the tkrzw_server way.
pub fn fold(args: &mut Args) {
    let tk = args.tkrzw.clone();
    if let Some(a) = tk.address {
        args.grpc_listen = Some(a);
    }
    if args.grpc_listen.is_none() && (args.async_api || tk.given() || args.replica.tkrzw_given()) {
        args.grpc_listen = Some(TKRZW_DEFAULT_GRPC);
    }
    if let Some(id) = tk.server_id {
        args.ulog.server_id = id;
    }
    if let Some(dir) = tk.ulog_prefix {
        args.ulog.ulog_dir = Some(dir);
    }
    if let Some(size) = tk.ulog_max_file_size {
        args.ulog.ulog_segment_size = size;
    }
    if let Some(p) = tk.pid_file {
        args.pid_file = Some(p);
    }
    args.read_only |= tk.read_only;
}

/// What `--print-config` writes for memstored's flag `id` when its
/// tkrzw_server twin set it (the printed file names memstored's flags
/// only); `None` when the twin was not given.
pub fn twin_value(args: &Args, id: &str) -> Option<toml::Value> {
    let tk = &args.tkrzw;
    let path = |p: &PathBuf| toml::Value::String(p.display().to_string());
    match id {
        "server_id" => tk.server_id.map(|n| toml::Value::Integer(n.into())),
        "ulog_dir" => tk.ulog_prefix.as_ref().map(path),
        "ulog_segment_size" => tk
            .ulog_max_file_size
            .and_then(|n| i64::try_from(n).ok())
            .map(toml::Value::Integer),
        "pid_file" => tk.pid_file.as_ref().map(path),
        "read_only" => tk.read_only.then_some(toml::Value::Boolean(true)),
        _ => None,
    }
}

/// The tracing filter `--log_level` or `-v` asks for.
pub fn log_filter(args: &Args) -> &'static str {
    match (args.tkrzw.log_level, args.verbose) {
        (Some(LogLevel::Debug), _) => "debug",
        (Some(LogLevel::Info), _) => "info",
        (Some(LogLevel::Warn), _) => "warn",
        (Some(LogLevel::Error | LogLevel::Fatal), _) => "error",
        (None, 0) => "info",
        (None, 1) => "debug",
        (None, _) => "trace",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::tkrzw_flags::{parse_auth, TlsFiles};
    use clap::Parser;

    fn folded(argv: &[&str]) -> Args {
        let mut a =
            Args::try_parse_from(std::iter::once("memstored").chain(argv.iter().copied())).unwrap();
        fold(&mut a);
        a
    }

    /// Seed 002's command line serves tkrzw_dbm_remote_util's default
    /// address, and leaves the memcached port where it was.
    #[test]
    fn cli_tkrzw_way_listens_on_1978() {
        let a = folded(&["--async", "--threads", "4", "casket.tkh#num_shards=100"]);
        assert_eq!(a.grpc_listen, Some("127.0.0.1:1978".parse().unwrap()));
        assert_eq!(a.listen_addr(), "127.0.0.1:11211".parse().unwrap());
        assert_eq!(a.worker_threads(), 4);
        assert_eq!(folded(&["--threads", "4"]).grpc_listen, None);
        assert_eq!(folded(&[]).grpc_listen, None);
        let a = folded(&["--log_level", "warn"]);
        assert_eq!(a.grpc_listen, Some(TKRZW_DEFAULT_GRPC));
        assert_eq!(log_filter(&a), "warn");
        let a = folded(&["--address", "0.0.0.0:2000"]);
        assert_eq!(a.grpc_listen, Some("0.0.0.0:2000".parse().unwrap()));
        let a = folded(&["--async", "--grpc-listen", "0"]);
        assert_eq!(a.grpc_listen, Some("127.0.0.1:0".parse().unwrap()));
    }

    #[test]
    fn cli_tkrzw_flags_fold_into_memstoreds() {
        let a = folded(&[
            "--server_id",
            "7",
            "--ulog_prefix",
            "/tmp/u",
            "--ulog_max_file_size",
            "1g",
            "--pid_file",
            "/tmp/p",
            "--read_only",
            "--log_file",
            "/tmp/l",
        ]);
        assert_eq!(a.ulog.server_id, 7);
        assert_eq!(a.ulog.ulog_dir, Some(PathBuf::from("/tmp/u")));
        assert_eq!(a.ulog.ulog_segment_size, 1 << 30);
        assert_eq!(a.pid_file, Some(PathBuf::from("/tmp/p")));
        assert!(a.read_only);
        assert_eq!(a.tkrzw.log_file, Some(PathBuf::from("/tmp/l")));
        assert_eq!(log_filter(&a), "info");
        let a = folded(&[
            "--repl_master",
            "h:1978",
            "--repl_ts_skew",
            "-5",
            "--repl_ts_from_dbm",
        ]);
        assert_eq!(a.replica.repl_master.as_deref(), Some("h:1978"));
        assert_eq!(a.replica.repl_ts_skew, Some(-5));
        assert!(a.replica.repl_ts_from_dbm);
        assert_eq!(a.grpc_listen, Some(TKRZW_DEFAULT_GRPC));
        let a = folded(&["--repl_wait", "2.5"]);
        assert_eq!(a.replica.repl_wait, Some(2.5));
        assert_eq!(a.grpc_listen, Some(TKRZW_DEFAULT_GRPC));
    }

    #[test]
    fn cli_both_spellings_of_one_setting_conflict() {
        for argv in [
            &["--server_id", "1", "--server-id", "2"][..],
            &["--pid_file", "a", "-P", "b"],
            &["--ulog_prefix", "a", "--ulog-dir", "b"],
            &["--ulog_max_file_size", "1m", "--ulog-segment-size", "2m"],
            &["--address", "1.2.3.4:5", "--grpc-listen", "6"],
            &["--log_level", "debug", "-v"],
        ] {
            let e = Args::try_parse_from(std::iter::once("memstored").chain(argv.iter().copied()));
            assert!(e.is_err(), "{argv:?}");
        }
        assert!(Args::try_parse_from(["memstored", "--server_id", "0"]).is_err());
        assert!(Args::try_parse_from(["memstored", "--address", "1978"]).is_err());
        assert!(Args::try_parse_from(["memstored", "--log_level", "loud"]).is_err());
    }

    /// `--print-config` shows the folded settings under memstored's names,
    /// and the file it prints starts the same server.
    #[test]
    fn cli_print_config_shows_the_folded_settings() {
        use crate::app::config::{load, render};
        let l = load([
            "memstored",
            "--async",
            "--server_id",
            "3",
            "--log_level",
            "warn",
        ])
        .unwrap();
        let text = render(&l);
        assert!(text.contains("grpc-listen = \"127.0.0.1:1978\""), "{text}");
        assert!(
            text.contains("\nserver-id = 3\n") && !text.contains("server_id ="),
            "{text}"
        );
        assert!(text.contains("\nlog_level = \"warn\"\n"), "{text}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.toml");
        std::fs::write(&path, &text).unwrap();
        let again = load(["memstored", "--config", path.to_str().unwrap()]).unwrap();
        assert_eq!(again.args.grpc_listen, l.args.grpc_listen);
        assert_eq!(again.args.ulog.server_id, 3);
        assert_eq!(render(&again), text);
    }

    #[test]
    fn cli_auth_syntax() {
        assert_eq!(
            parse_auth("ssl:key=k.pem,cert=c.pem,root=r.pem"),
            Ok(TlsFiles {
                key: "k.pem".into(),
                cert: "c.pem".into(),
                root: Some("r.pem".into())
            })
        );
        assert_eq!(parse_auth("ssl:cert=c,key=k").unwrap().root, None);
        for bad in [
            "key=k,cert=c",
            "ssl:key=k",
            "ssl:cert=c",
            "ssl:key=k,cert=c,x=y",
            "ssl:key=,cert=c",
        ] {
            assert!(parse_auth(bad).is_err(), "{bad}");
        }
    }
}
