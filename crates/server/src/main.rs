//! memstored: a memcached-protocol (binary, text, meta) server over a
//! pluggable memstored store.

use clap::Parser;
use memstored_server::{cli, startup};
use std::io::IsTerminal;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    init_logging(args.verbose);
    match startup::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
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
