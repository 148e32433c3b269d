//! memstored: a memcached-protocol (binary, text, meta) server over a
//! pluggable memstored store.

use memstored_server::app::config::{self, ConfigError};
use memstored_server::app::startup;
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let loaded = match config::load(std::env::args_os()) {
        Ok(loaded) => loaded,
        Err(ConfigError::CommandLine(e)) => e.exit(),
        Err(e) => {
            eprintln!("memstored: {e}");
            return ExitCode::FAILURE;
        }
    };
    if loaded.args.print_config {
        print!("{}", config::render(&loaded));
        return ExitCode::SUCCESS;
    }
    let args = loaded.args;
    init_logging(args.verbose);
    match startup::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        // Printed once, as the config errors above are: not also as a log
        // line, which showed every fatal error twice on the same stderr.
        Err(e) => {
            eprintln!("memstored: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Colour codes only for a terminal: logs sent to a file or a pipe stay plain text.
fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "info",
        1 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
