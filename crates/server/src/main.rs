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
    if let Err(e) = init_logging(&args) {
        eprintln!("memstored: {e}");
        return ExitCode::FAILURE;
    }
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

/// The level from `-v` or `--log_level` (RUST_LOG wins over both), to
/// stderr or `--log_file` (appended to, as tkrzw_server does). Colour codes
/// only for a terminal: logs sent to a file or a pipe stay plain text.
fn init_logging(args: &memstored_server::app::cli::Args) -> Result<(), String> {
    use memstored_server::app::tkrzw_fold::log_filter;
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(log_filter(args)));
    let logger = tracing_subscriber::fmt().with_env_filter(filter);
    let _ = match &args.tkrzw.log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(|e| format!("--log_file {}: {e}", path.display()))?;
            logger
                .with_writer(std::sync::Mutex::new(file))
                .with_ansi(false)
                .try_init()
        }
        None => logger
            .with_writer(std::io::stderr)
            .with_ansi(std::io::stderr().is_terminal())
            .try_init(),
    };
    Ok(())
}
