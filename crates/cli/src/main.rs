//! `memstore`: the local database utility, the remote utility, the perf and
//! load tools of memstored, with the command lines of `tkrzw_dbm_util`,
//! `tkrzw_dbm_remote_util` and `tkrzw_dbm_perf`.

mod bench;
mod grpc_client;
mod import;
mod local;
mod maint;
mod perf;
mod progress;
mod remote;
mod remote_grpc;
mod remote_perf;
mod rpc_client;
mod store;
mod tsv;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "memstore",
    version,
    about = "memstored's database utility and perf tool",
    long_about = "memstored's database utility and perf tool.\n\n\
        NAME is a database name: `casket.tkh`, `casket.tkt#num_shards=10`, \
        `*`, `+`, `data.tkmt#num_buckets=1M`, ..."
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Prints the properties of a database.
    Inspect { name: String },
    /// Prints the value of a key.
    Get { name: String, key: String },
    /// Stores a record.
    Set {
        name: String,
        key: String,
        /// The value (with --incr: the integer to add, negative allowed;
        /// other values beginning with `-` go after `--`).
        #[arg(allow_negative_numbers = true)]
        value: String,
        #[command(flatten)]
        how: local::SetOpts,
    },
    /// Removes a record.
    Remove { name: String, key: String },
    /// Lists records as `key<TAB>value` lines (escaped as in docs/tsv.md).
    List {
        name: String,
        /// Where to start: first, jump, jumplower, jumplowerinc (then forward),
        /// jumpupper, jumpupperinc (then backward).
        #[arg(long = "move", value_enum, default_value = "first")]
        mv: local::Move,
        /// The key for the jump moves.
        #[arg(long = "jump_key", alias = "jump-key", default_value = "")]
        jump_key: String,
        /// The most records to print (default: all).
        #[arg(long)]
        items: Option<u64>,
        /// Prints keys only.
        #[arg(long)]
        keys: bool,
    },
    /// Searches keys.
    Search {
        name: String,
        pattern: String,
        /// begin, contain, containcase, end, regex, edit, editbin,
        /// upper, upperinc, lower, lowerinc.
        #[arg(long, default_value = "contain")]
        mode: String,
        /// The most keys to return (0 = all).
        #[arg(long, default_value_t = 0)]
        max: usize,
        /// Prints keys only.
        #[arg(long)]
        keys: bool,
    },
    /// Writes every record to a TSV file (format: docs/tsv.md).
    Export { name: String, file: String },
    /// Stores every record of an export: memstored's TSV, or what Tkrzw's,
    /// Tokyo Cabinet's or Kyoto Cabinet's tools write; bad lines are
    /// reported and skipped.
    #[command(long_about = IMPORT_ABOUT)]
    Import {
        name: String,
        file: String,
        /// Which tool wrote FILE.
        #[arg(long, value_enum, default_value = "auto")]
        format: import::Format,
    },
    /// Compacts a database, shard by shard.
    Rebuild { name: String },
    /// Salvages every intact record of a damaged database SRC into a new database DST.
    Restore { src: String, dst: String },
    /// Makes a consistent copy `PATH.backup.SUFFIX` (default suffix: UTC YYYYMMDDhhmmss).
    Backup {
        name: String,
        #[arg(default_value = "")]
        suffix: String,
    },
    /// Performance tests, like tkrzw_dbm_perf.
    Perf {
        #[command(subcommand)]
        cmd: PerfCmd,
    },
    /// A running server over MessagePack-RPC (or gRPC: --protocol grpc), like
    /// tkrzw_dbm_remote_util.
    Remote(remote::RemoteArgs),
    /// Network load against memstored or memcached (binary, text, RPC).
    #[command(long_about = bench::LONG_ABOUT)]
    Bench(bench::BenchArgs),
}

const IMPORT_ABOUT: &str = "Stores every record of FILE in the database NAME.\n\n\
    FILE is memstored's TSV (`memstore export`, docs/tsv.md) or an export made \
    by an ancestor's tool, chosen with --format:\n\
    \x20 tkrzw             tkrzw_dbm_util export DB FILE (or a Tkrzw .tkmt/.tkmb file)\n\
    \x20 tkrzw-tsv-escape  tkrzw_dbm_util export --tsv --escape DB FILE\n\
    \x20 tkrzw-tsv         tkrzw_dbm_util export --tsv DB FILE (lossy)\n\
    \x20 tc-hex            tchmgr list -pv -px DB > FILE, tcbmgr list -pv -px DB > FILE\n\
    \x20 tc                tchmgr list -pv DB > FILE, tcbmgr list -pv DB > FILE\n\
    \x20 kc-hex            kchashmgr list -pv -px DB > FILE, kctreemgr list -pv -px DB > FILE\n\
    \x20 kc                kchashmgr list -pv DB > FILE, kctreemgr list -pv DB > FILE\n\n\
    The hex and flat-record exports carry any bytes; the plain TSV of Tokyo and \
    Kyoto Cabinet splits a record at a line feed in it. Bad lines are reported \
    with their numbers and skipped, and the exit status is then non-zero. \
    docs/operations.md (Migrating) has the whole procedure.";

#[derive(Subcommand, Debug)]
enum PerfCmd {
    /// Sets, gets and removes `--iter` records per thread, in sequence.
    Sequence(perf::SequenceArgs),
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Inspect { name } => local::inspect(&name),
        Cmd::Get { name, key } => local::get(&name, &key),
        Cmd::Set {
            name,
            key,
            value,
            how,
        } => local::set(&name, &key, &value, &how),
        Cmd::Remove { name, key } => local::remove(&name, &key),
        Cmd::List {
            name,
            mv,
            jump_key,
            items,
            keys,
        } => local::list(&name, mv, &jump_key, items, keys),
        Cmd::Search {
            name,
            pattern,
            mode,
            max,
            keys,
        } => local::search(&name, &pattern, &mode, max, keys),
        Cmd::Export { name, file } => local::export(&name, &file),
        Cmd::Import { name, file, format } => import::run(&name, &file, format),
        Cmd::Rebuild { name } => maint::rebuild(&name),
        Cmd::Restore { src, dst } => maint::restore(&src, &dst),
        Cmd::Backup { name, suffix } => maint::backup(&name, &suffix),
        Cmd::Perf {
            cmd: PerfCmd::Sequence(a),
        } => perf::sequence(&a),
        Cmd::Remote(a) if a.protocol == remote::Protocol::Grpc => remote_grpc::run(a),
        Cmd::Remote(a) => remote::run(a),
        Cmd::Bench(a) => bench::run(&a),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        // `memstore list ... | head` closing the pipe early is not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("memstore: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
