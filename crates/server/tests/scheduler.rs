//! `--scheduler`: per-core (the default) runs one event loop per worker
//! thread and keeps each connection on one of them; `shared` is tokio's
//! work-stealing runtime. Both serve many connections at once, and the
//! choice is what `stats settings` reports.

mod common;
use common::{stats_of, Server, Text};

/// The names of the server's threads (`/proc/PID/task/*/comm`, which the
/// kernel cuts to 15 bytes).
fn thread_names(server: &Server) -> Vec<String> {
    let pid = server.child().as_ref().expect("running").id();
    let mut names: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .expect("task dir")
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|n| n.trim_end().to_string())
        .collect();
    names.sort();
    names
}

fn setting(server: &Server, name: &str) -> String {
    stats_of(server, "settings")
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("no setting {name}"))
}

/// Sixteen connections at once, each setting and reading back its own keys.
fn serve_many(server: &Server) {
    let threads: Vec<_> = (0..16)
        .map(|c| {
            let mut t = Text::new(server.connect());
            std::thread::spawn(move || {
                for i in 0..50 {
                    let v = format!("{c}-{i}");
                    let set = format!("set k{c}-{i} 0 0 {}\r\n{v}\r\n", v.len());
                    assert_eq!(t.cmd(&set), "STORED");
                    t.send(format!("get k{c}-{i}\r\n").as_bytes());
                    assert_eq!(t.line(), format!("VALUE k{c}-{i} 0 {}", v.len()));
                    assert_eq!(t.line(), v);
                    assert_eq!(t.line(), "END");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("client thread");
    }
    let mut t = Text::new(server.connect());
    assert_eq!(t.stat("curr_items"), 16 * 50);
}

fn start(args: &[&str]) -> Server {
    let mut cmd = common::memstored();
    cmd.env_remove("MEMSTORED_SCHEDULER")
        .args(args)
        .args(["-l", "127.0.0.1:0", "-R", "2"]);
    Server::launch(&mut cmd, "memstored", common::Announce::Stdout)
}

#[test]
fn per_core_is_the_default_with_one_loop_per_worker() {
    let server = start(&[]);
    assert_eq!(setting(&server, "scheduler"), "per-core");
    // The workers name themselves once running, which may be a moment
    // after the server says it listens (CI run 17 saw one of two).
    let workers = |s: &Server| {
        thread_names(s)
            .into_iter()
            .filter(|n| n.starts_with("memstored-worke"))
            .count()
    };
    common::wait_until(&server, "both workers named", |s| workers(s) >= 2);
    assert_eq!(
        workers(&server),
        2,
        "one thread per -R: {:?}",
        thread_names(&server)
    );
    serve_many(&server);
}

#[test]
fn shared_runs_tokio_work_stealing_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("memstored.toml");
    std::fs::write(&config, "scheduler = \"shared\"\n").unwrap();
    let config = config.to_str().unwrap();
    for server in [
        start(&["--scheduler", "shared"]),
        start(&["--config", config]),
    ] {
        assert_eq!(setting(&server, "scheduler"), "shared");
        let names = thread_names(&server);
        assert!(
            !names.iter().any(|n| n.starts_with("memstored-worke")),
            "{names:?}"
        );
        serve_many(&server);
    }
}

#[test]
fn the_environment_picks_the_scheduler_and_a_flag_overrides_it() {
    let with_env = |value: &str, args: &[&str]| {
        let mut cmd = common::memstored();
        cmd.env("MEMSTORED_SCHEDULER", value)
            .args(args)
            .args(["-l", "127.0.0.1:0", "-R", "2"]);
        Server::launch(&mut cmd, "memstored", common::Announce::Stdout)
    };
    assert_eq!(setting(&with_env("shared", &[]), "scheduler"), "shared");
    let flag = with_env("shared", &["--scheduler", "per-core"]);
    assert_eq!(setting(&flag, "scheduler"), "per-core");
}

#[test]
fn an_unknown_scheduler_is_refused_with_the_choices() {
    let out = common::memstored()
        .args(["--scheduler", "fast", "-l", "127.0.0.1:0"])
        .output()
        .expect("run memstored");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("per-core") && err.contains("shared"), "{err}");
}
