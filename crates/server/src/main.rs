//! memstored: a memcached-protocol (binary, text, meta) server over a
//! pluggable memstored store.

use clap::Parser;
use memstored_engine::Db;
use memstored_server::server::{Config, Server};
use memstored_server::{cli, listener, sasl, signals, VERSION};
use std::process::ExitCode;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::sync::watch;

/// How long in-flight batches get to finish after SIGTERM.
const GRACE: Duration = Duration::from_secs(2);

fn main() -> ExitCode {
    let args = cli::Args::parse();
    init_logging(args.verbose);
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("memstored: {e:#}");
            ExitCode::FAILURE
        }
    }
}

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
        .try_init();
}

fn run(args: cli::Args) -> anyhow::Result<()> {
    let credentials = match &args.sasl_file {
        Some(p) => {
            let c = sasl::Credentials::load(p)?;
            tracing::info!("SASL PLAIN enabled: {} users", c.len());
            Some(c)
        }
        None => None,
    };
    let db = Db::open(&args.store, !args.read_only)
        .map_err(|e| anyhow::anyhow!("opening store {:?}: {e}", args.store))?;
    let db = Arc::new(db);
    if let Some(p) = &args.pid_file {
        std::fs::write(p, format!("{}\n", std::process::id()))
            .map_err(|e| anyhow::anyhow!("writing pid file {}: {e}", p.display()))?;
    }
    let threads = args.worker_threads();
    let cfg = Config {
        store: args.store.clone(),
        listen: args.listen,
        initial_size: args.initial_size,
        reserve_size: args.reserve_size,
        max_connections: args.max_connections,
        max_item_size: args.max_item_size,
        threads,
        verbose: args.verbose,
        sasl: credentials.is_some(),
        read_only: args.read_only,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .max_blocking_threads(args.write_threads.max(1))
        .thread_name("memstored-worker")
        .enable_all()
        .build()?;
    let result = runtime.block_on(serve(db.clone(), cfg, credentials, args.sync_interval));
    runtime.shutdown_timeout(Duration::from_millis(500));
    if let Some(p) = &args.pid_file {
        let _ = std::fs::remove_file(p);
    }
    result
}

async fn serve(
    db: Arc<Db>,
    cfg: Config,
    credentials: Option<sasl::Credentials>,
    sync_interval: Option<u64>,
) -> anyhow::Result<()> {
    let listener = TcpListener::bind(cfg.listen)
        .await
        .map_err(|e| anyhow::anyhow!("listening on {}: {e}", cfg.listen))?;
    let addr = listener.local_addr()?;
    tracing::info!(
        "memstored {VERSION} listening on {addr}, store {:?} ({} engine, {} shards), {} worker threads",
        cfg.store,
        db.name().kind.label(),
        db.name().num_shards,
        cfg.threads
    );
    let (stop_tx, stop_rx) = watch::channel(false);
    let srv = Arc::new(Server::new(db.clone(), cfg, credentials, stop_rx));
    let accept = tokio::spawn(listener::run(listener, srv.clone()));
    if let Some(secs) = sync_interval {
        signals::spawn_periodic_sync(srv.clone(), secs);
    }
    let why = signals::wait_for_stop(db.clone()).await?;
    tracing::info!("{why}: stopping");
    let _ = stop_tx.send(true);
    let _ = accept.await;
    // Let connections finish the batch they are working on.
    let deadline = Instant::now() + GRACE;
    while srv.counters.curr_connections.load(Relaxed) > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let closing = db.clone();
    tokio::task::spawn_blocking(move || {
        closing.synchronize(true)?;
        closing.close()
    })
    .await
    .map_err(|e| anyhow::anyhow!("closing the store: {e}"))?
    .map_err(|e| anyhow::anyhow!("closing the store: {e}"))?;
    tracing::info!("store synchronized and closed; bye");
    Ok(())
}
