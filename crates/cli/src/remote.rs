//! `memstore remote`: the subcommands of `tkrzw_dbm_remote_util`, over
//! memstored's MessagePack-RPC (procedures: crates/server/src/protocols/rpc/mod.rs),
//! or with `--protocol grpc` over Tkrzw-RPC's gRPC service (remote_grpc.rs,
//! which uses this file's subcommands and printing, so both wires print the
//! same and one tool compares them).
//!
//! Flags go anywhere, before or after the subcommand and its arguments, as
//! Tkrzw's do; a list of arguments never takes a flag as one of its items
//! (a value beginning with `-`, other than a number, goes after `--`).
//! The common flags:
//! `--address HOST:PORT` (default `$MEMSTORE_ADDRESS`, else 127.0.0.1:11211,
//! memstored's own default; for gRPC `$MEMSTORE_GRPC_ADDRESS`, else
//! 127.0.0.1:1978, Tkrzw's), `--auth USER:PASSWORD`, `--timeout SECS`,
//! `--index N`, `--protocol msgpack-rpc|grpc`.

use crate::local::Move;
use crate::rpc_client::{self, RemoteError, RpcClient};
use crate::tsv;
use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand};
use memstored_protocol::rpc::{value_bytes, value_str, Value};
use std::io::{BufWriter, Write};
use std::time::Duration;

#[derive(Args, Debug)]
pub struct RemoteArgs {
    /// The server: HOST:PORT (default: $MEMSTORE_ADDRESS, else 127.0.0.1:11211).
    #[arg(long, global = true)]
    pub address: Option<String>,
    /// Credentials USER:PASSWORD, for a server started with --sasl-file.
    #[arg(long, global = true)]
    pub auth: Option<String>,
    /// Seconds to wait for connecting and for each reply (default: no limit).
    #[arg(long, global = true)]
    pub timeout: Option<f64>,
    /// The database to use, by its place on the server's command line (0 =
    /// the first; sent as each call's `DB` option).
    #[arg(long, global = true, default_value_t = 0)]
    pub index: u32,
    /// The wire: memstored's MessagePack-RPC, or Tkrzw-RPC's gRPC (the port
    /// of `memstored --grpc-listen`; default address then
    /// $MEMSTORE_GRPC_ADDRESS, else 127.0.0.1:1978).
    #[arg(long, global = true, value_enum, default_value = "msgpack-rpc")]
    pub protocol: Protocol,
    #[command(subcommand)]
    pub cmd: RemoteCmd,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// memstored's MessagePack-RPC (its main port).
    #[value(name = "msgpack-rpc", alias = "rpc", alias = "msgpack")]
    MsgpackRpc,
    /// Tkrzw-RPC's gRPC service, as tkrzw_dbm_remote_util speaks it.
    Grpc,
}

#[derive(Subcommand, Debug)]
pub enum RemoteCmd {
    /// Sends the words to the server and prints what comes back.
    Echo {
        /// How many times to send them.
        #[arg(long, default_value_t = 1)]
        times: u32,
        words: Vec<String>,
    },
    /// Prints the properties of the database (or the one named ATTR).
    Inspect { attr: Option<String> },
    /// Prints the value of KEY; with --multi, `key<TAB>value` for every KEY
    /// found, sorted by key (as Tkrzw's tool).
    Get {
        #[arg(long)]
        multi: bool,
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Stores KEY VALUE (with --multi: KEY VALUE KEY VALUE ...). Negative
    /// numbers are values; other values beginning with `-` go after `--`.
    Set {
        #[arg(long)]
        multi: bool,
        #[command(flatten)]
        how: crate::local::SetOpts,
        #[arg(
            required = true,
            allow_negative_numbers = true,
            value_name = "KEY VALUE"
        )]
        args: Vec<String>,
    },
    /// Removes KEY (with --multi, every KEY; absent ones are skipped).
    Remove {
        #[arg(long)]
        multi: bool,
        #[arg(required = true)]
        keys: Vec<String>,
    },
    /// Lists records as `key<TAB>value` lines, forward from where --move lands.
    List {
        /// first, jump, jumplower, jumplowerinc, jumpupper, jumpupperinc.
        #[arg(long = "move", value_enum, default_value = "first")]
        mv: Move,
        #[arg(long = "jump_key", alias = "jump-key", default_value = "")]
        jump_key: String,
        /// The most records to print (default: all).
        #[arg(long)]
        items: Option<u64>,
        /// Prints keys only.
        #[arg(long)]
        keys: bool,
    },
    /// Searches keys: begin, contain, containcase, end, regex, edit, editbin,
    /// upper, upperinc, lower, lowerinc.
    Search {
        #[arg(long, default_value = "contain")]
        mode: String,
        pattern: String,
        /// The most keys (0 = all).
        #[arg(long, alias = "items", default_value_t = 0)]
        max: u64,
        /// Prints keys only.
        #[arg(long)]
        keys: bool,
    },
    /// Removes every record.
    Clear,
    /// Synchronizes the database; `make_backup=SUFFIX` also writes a backup
    /// (empty suffix: the UTC time YYYYMMDDhhmmss).
    Sync {
        /// Also fsyncs the files.
        #[arg(long)]
        hard: bool,
        /// Parameters as KEY=VALUE.
        params: Vec<String>,
    },
    /// Compacts the database online, shard by shard.
    Rebuild {
        /// Parameters as KEY=VALUE (accepted; memstored needs none).
        params: Vec<String>,
    },
    /// Makes a replica follow MASTER (HOST:PORT) from now on; without
    /// MASTER it is promoted: it follows nobody and accepts writes.
    Changemaster {
        master: Option<String>,
        /// Steps the replica's position back this many milliseconds first,
        /// for a new master whose clock is behind the old one's.
        #[arg(long = "ts_skew", alias = "ts-skew", default_value_t = 0)]
        ts_skew: u64,
    },
    /// Performance tests, like tkrzw_dbm_remote_perf.
    Perf {
        #[command(subcommand)]
        cmd: PerfCmd,
    },
}

#[derive(Subcommand, Debug)]
pub enum PerfCmd {
    /// Echoes, sets, gets, iterates and removes `--iter` records per thread,
    /// in sequence, as `tkrzw_dbm_remote_perf sequence` does.
    Sequence(crate::remote_perf::SequenceArgs),
}

pub(crate) fn stdout() -> BufWriter<std::io::StdoutLock<'static>> {
    BufWriter::with_capacity(64 * 1024, std::io::stdout().lock())
}

fn bin(s: &str) -> Value {
    Value::Binary(s.as_bytes().to_vec())
}

/// `_KEY`: a record key in a kt-msgpack bulk map (the other keys are options).
fn underscored(k: &[u8]) -> Value {
    let mut u = Vec::with_capacity(k.len() + 1);
    u.push(b'_');
    u.extend_from_slice(k);
    Value::Binary(u)
}

/// A kt-msgpack bulk map naming `keys` (values empty).
fn bulk_keys<K: AsRef<[u8]>>(keys: &[K]) -> Value {
    Value::Map(
        keys.iter()
            .map(|k| (underscored(k.as_ref()), Value::Binary(Vec::new())))
            .collect(),
    )
}

/// The records of a kt-msgpack `{num, _key: value}` result, prefix removed.
fn bulk_records(v: &Value) -> std::collections::HashMap<&[u8], &Value> {
    let Value::Map(m) = v else {
        return Default::default();
    };
    m.iter()
        .filter_map(|(k, v)| Some((value_bytes(k)?.strip_prefix(b"_")?, v)))
        .collect()
}

/// Field `name` of a map reply.
fn bulk_field<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    match v {
        Value::Map(m) => m
            .iter()
            .find(|(k, _)| value_str(k) == Some(name))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn opts(entries: Vec<(&str, Value)>) -> Value {
    Value::Map(
        entries
            .into_iter()
            .map(|(k, v)| (Value::from(k), v))
            .collect(),
    )
}

/// `KEY=VALUE` words as option-map entries.
pub(crate) fn param_entries(params: &[String]) -> Result<Vec<(Value, Value)>> {
    params
        .iter()
        .map(|p| {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| anyhow!("parameter {p:?}: expected KEY=VALUE"))?;
            Ok((Value::from(k), Value::from(v)))
        })
        .collect()
}

/// A procedure's error with what was being done.
fn failed(what: String) -> impl FnOnce(RemoteError) -> anyhow::Error {
    move |e| anyhow!("{what}: {e}")
}

struct Remote {
    c: RpcClient,
}

impl Remote {
    fn call(&mut self, method: &str, params: &[Value]) -> Result<Value> {
        self.c
            .call(method, params)?
            .map_err(failed(method.to_string()))
    }
}

/// `--timeout`: none when absent or not positive.
pub(crate) fn timeout(a: &RemoteArgs) -> Option<Duration> {
    a.timeout.filter(|t| *t > 0.0).map(Duration::from_secs_f64)
}

/// Runs a subcommand over MessagePack-RPC (main.rs sends `--protocol grpc`
/// to remote_grpc.rs).
pub fn run(a: RemoteArgs) -> Result<()> {
    let timeout = timeout(&a);
    let addr = rpc_client::address(a.address.as_deref());
    let mut c = RpcClient::connect(&addr, timeout)?;
    c.set_db(a.index);
    if let Some(auth) = &a.auth {
        c.auth(auth)?;
    }
    let mut r = Remote { c };
    match a.cmd {
        RemoteCmd::Echo { times, words } => echo(&mut r, times, &words)?,
        RemoteCmd::Inspect { attr } => inspect(&mut r, attr.as_deref())?,
        RemoteCmd::Get { multi, keys } => get(&mut r, multi, &keys)?,
        RemoteCmd::Set { multi, how, args } => set(&mut r, multi, how, &args)?,
        RemoteCmd::Remove { multi, keys } => remove(&mut r, multi, &keys)?,
        RemoteCmd::List {
            mv,
            jump_key,
            items,
            keys,
        } => list(&mut r, mv, &jump_key, items, keys)?,
        RemoteCmd::Search {
            mode,
            pattern,
            max,
            keys,
        } => search(&mut r, &mode, &pattern, max, keys)?,
        RemoteCmd::Clear => {
            r.call("clear", &[])?;
        }
        RemoteCmd::Sync { hard, params } => sync(&mut r, hard, &params)?,
        RemoteCmd::Rebuild { params } => {
            r.call("rebuild", &[Value::Map(param_entries(&params)?)])?;
        }
        RemoteCmd::Changemaster { master, ts_skew } => changemaster(&mut r, master, ts_skew)?,
        RemoteCmd::Perf {
            cmd: PerfCmd::Sequence(p),
        } => {
            // Checked reachable (and the credentials) above; the threads
            // open their own connections.
            drop(r);
            let target = crate::remote_perf::Target {
                address: addr,
                timeout,
                auth: a.auth,
                index: a.index,
            };
            crate::remote_perf::sequence(&p, &target)?;
        }
    }
    Ok(())
}

fn echo(r: &mut Remote, times: u32, words: &[String]) -> Result<()> {
    let msg = words.join(" ");
    let mut out = stdout();
    for _ in 0..times.max(1) {
        // kt-msgpack's echo takes and returns a map of strings.
        let v = r.call("echo", &[opts(vec![("message", bin(&msg))])])?;
        let echoed = bulk_field(&v, "message");
        match echoed.and_then(value_bytes) {
            Some(b) => out.write_all(b)?,
            None => write!(out, "{v}")?,
        }
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

fn sync(r: &mut Remote, hard: bool, params: &[String]) -> Result<()> {
    let mut m = param_entries(params)?;
    if hard {
        m.push((Value::from("hard"), Value::Boolean(true)));
    }
    r.call("synchronize", &[Value::Map(m)])?;
    Ok(())
}

fn changemaster(r: &mut Remote, master: Option<String>, ts_skew: u64) -> Result<()> {
    // As bin: an error then comes back with its message (bare code otherwise).
    let m = bin(&master.unwrap_or_default());
    r.call(
        "changemaster",
        &[m, opts(vec![("ts_skew", ts_skew.into())])],
    )?;
    Ok(())
}

fn text(v: &Value) -> String {
    match v {
        Value::String(_) | Value::Binary(_) => value_str(v)
            .map(String::from)
            .unwrap_or_else(|| String::from_utf8_lossy(value_bytes(v).unwrap_or(b"")).into()),
        v => v.to_string(),
    }
}

fn inspect(r: &mut Remote, attr: Option<&str>) -> Result<()> {
    let v = r.call("status", &[])?;
    let Value::Map(m) = v else {
        bail!("status: expected a map, got {v}");
    };
    let pairs = m.iter().map(|(k, v)| (text(k), text(v))).collect();
    print_inspection(pairs, attr, "count")
}

/// The properties `inspect` prints (all, or the one named `attr`);
/// `count_key` names the number of records.
pub(crate) fn print_inspection(
    pairs: Vec<(String, String)>,
    attr: Option<&str>,
    count_key: &str,
) -> Result<()> {
    let mut out = stdout();
    if let Some(attr) = attr {
        let v = pairs
            .iter()
            .find(|(k, _)| k == attr)
            .ok_or_else(|| anyhow!("no attribute {attr:?}"))?;
        writeln!(out, "{}", v.1)?;
    } else {
        writeln!(out, "Inspection:")?;
        for (k, v) in &pairs {
            writeln!(out, "  {k}={v}")?;
        }
        if let Some((_, n)) = pairs.iter().find(|(k, _)| k == count_key) {
            writeln!(out, "Number of Records: {n}")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Writes a record as `key<TAB>value` (escaped as in docs/tsv.md), or its
/// key alone.
pub(crate) fn write_record(
    out: &mut impl Write,
    line: &mut Vec<u8>,
    k: &[u8],
    v: &[u8],
    keys_only: bool,
) -> Result<()> {
    line.clear();
    if keys_only {
        tsv::escape_into(k, line);
        line.push(b'\n');
    } else {
        tsv::format_line(k, v, line);
    }
    out.write_all(line)?;
    Ok(())
}

/// `get --multi`'s output: the records found sorted by key, each once, as
/// Tkrzw's tool prints its std::map.
pub(crate) fn print_sorted<'a>(
    found: impl IntoIterator<Item = (&'a [u8], &'a [u8])>,
) -> Result<()> {
    let sorted: std::collections::BTreeMap<&[u8], &[u8]> = found.into_iter().collect();
    let mut out = stdout();
    let mut line = Vec::new();
    for (k, v) in sorted {
        write_record(&mut out, &mut line, k, v, false)?;
    }
    out.flush()?;
    Ok(())
}

fn get(r: &mut Remote, multi: bool, keys: &[String]) -> Result<()> {
    let mut out = stdout();
    if !multi {
        let [key] = keys else {
            bail!("get takes one KEY (use --multi for several)");
        };
        let v =
            r.c.call("get", &[bin(key)])?
                .map_err(failed(format!("get {key:?}")))?;
        let value = match &v {
            Value::Map(m) => m
                .iter()
                .find(|(k, _)| value_str(k) == Some("value"))
                .and_then(|(_, v)| value_bytes(v)),
            v => value_bytes(v),
        }
        .ok_or_else(|| anyhow!("get {key:?}: unexpected reply {v}"))?;
        out.write_all(value)?;
        out.write_all(b"\n")?;
        out.flush()?;
        return Ok(());
    }
    let v = r.call("get_bulk", &[bulk_keys(keys)])?;
    if !matches!(v, Value::Map(_)) {
        bail!("get_bulk: expected a map, got {v}");
    }
    // Absent keys print nothing.
    print_sorted(
        bulk_records(&v)
            .into_iter()
            .map(|(k, v)| (k, value_bytes(v).unwrap_or(b""))),
    )
}

fn set(r: &mut Remote, multi: bool, how: crate::local::SetOpts, args: &[String]) -> Result<()> {
    let crate::local::SetOpts {
        no_overwrite,
        append,
        incr,
    } = how;
    if args.len() % 2 == 1 || (!multi && args.len() != 2) {
        bail!(if multi {
            "set --multi takes KEY VALUE pairs"
        } else {
            "set takes KEY VALUE (use --multi for several)"
        });
    }
    let pairs: Vec<(&str, &str)> = args
        .chunks(2)
        .map(|p| (p[0].as_str(), p[1].as_str()))
        .collect();
    if let Some(initial) = &incr {
        return increment(r, initial, &pairs);
    }
    if let Some(delim) = &append {
        for (k, v) in pairs {
            append_with(r, k, v, delim)?;
        }
        return Ok(());
    }
    if no_overwrite {
        for (k, v) in pairs {
            r.c.call("add", &[bin(k), bin(v)])?
                .map_err(failed(format!("set {k:?}")))?;
        }
        return Ok(());
    }
    if !multi {
        let (k, v) = pairs[0];
        r.c.call("set", &[bin(k), bin(v)])?
            .map_err(failed(format!("set {k:?}")))?;
        return Ok(());
    }
    let map = pairs
        .iter()
        .map(|(k, v)| (underscored(k.as_bytes()), bin(v)))
        .collect();
    r.call("set_bulk", &[Value::Map(map)])?;
    Ok(())
}

/// `set --incr INITIAL`: adds each VALUE to its KEY and prints the results.
fn increment(r: &mut Remote, initial: &str, pairs: &[(&str, &str)]) -> Result<()> {
    let initial: i64 = initial
        .trim()
        .parse()
        .with_context(|| format!("--incr {initial:?}: expected an integer"))?;
    let mut out = stdout();
    for &(k, v) in pairs {
        let delta: i64 = v
            .trim()
            .parse()
            .with_context(|| format!("increment {v:?}: expected an integer"))?;
        let res = r.c.call(
            "increment",
            &[
                bin(k),
                Value::from(delta),
                opts(vec![("orig", Value::from(initial))]),
            ],
        )?;
        let res = res.map_err(failed(format!("increment {k:?}")))?;
        let n = match &res {
            Value::Map(m) => m
                .iter()
                .find(|(k, _)| value_str(k) == Some("num"))
                .map(|(_, v)| text(v)),
            _ => None,
        }
        .unwrap_or_else(|| res.to_string());
        writeln!(out, "{n}")?;
    }
    out.flush()?;
    Ok(())
}

/// Appends `value` after `delim` (just `value` when the record is absent):
/// `append` when there is no delimiter, else a compare-and-swap loop, so a
/// concurrent writer is never overwritten.
fn append_with(r: &mut Remote, key: &str, value: &str, delim: &str) -> Result<()> {
    if delim.is_empty() {
        r.c.call("append", &[bin(key), bin(value)])?
            .map_err(failed(format!("append to {key:?}")))?;
        return Ok(());
    }
    for _ in 0..1000 {
        let cur = match r.c.call("get", &[bin(key)])? {
            Ok(Value::Map(m)) => m
                .iter()
                .find(|(k, _)| value_str(k) == Some("value"))
                .and_then(|(_, v)| value_bytes(v))
                .map(<[u8]>::to_vec),
            Ok(v) => bail!("get {key:?}: unexpected reply {v}"),
            Err(e) if e.code == Some(rpc_client::NOT_FOUND) => None,
            Err(e) => bail!("get {key:?}: {e}"),
        };
        let (oval, nval) = match cur {
            Some(old) => {
                let mut n = old.clone();
                n.extend_from_slice(delim.as_bytes());
                n.extend_from_slice(value.as_bytes());
                (Value::Binary(old), Value::Binary(n))
            }
            None => (Value::Nil, bin(value)),
        };
        let mut o = vec![("nval", nval)];
        if !oval.is_nil() {
            o.push(("oval", oval));
        }
        match r.c.call("cas", &[bin(key), opts(o)])? {
            Ok(_) => return Ok(()),
            Err(e) if e.code == Some(37) => continue, // changed under us: retry
            Err(e) => bail!("append to {key:?}: {e}"),
        }
    }
    bail!("append to {key:?}: the record kept changing")
}

fn remove(r: &mut Remote, multi: bool, keys: &[String]) -> Result<()> {
    if !multi {
        let [key] = keys else {
            bail!("remove takes one KEY (use --multi for several)");
        };
        r.c.call("remove", &[bin(key)])?
            .map_err(failed(format!("remove {key:?}")))?;
        return Ok(());
    }
    r.call("remove_bulk", &[bulk_keys(keys)])?;
    Ok(())
}

fn move_name(mv: Move) -> &'static str {
    match mv {
        Move::First => "first",
        Move::Jump => "jump",
        Move::Jumplower => "jumplower",
        Move::Jumplowerinc => "jumplowerinc",
        Move::Jumpupper => "jumpupper",
        Move::Jumpupperinc => "jumpupperinc",
    }
}

fn list(r: &mut Remote, mv: Move, jump_key: &str, items: Option<u64>, keys: bool) -> Result<()> {
    let mut o = vec![("move", Value::from(move_name(mv)))];
    if mv != Move::First {
        o.push(("jump_key", bin(jump_key)));
    }
    if let Some(n) = items {
        if n == 0 {
            return Ok(());
        }
        o.push(("items", Value::from(n)));
    }
    let v = r.call("list", &[opts(o)])?;
    let Value::Array(recs) = v else {
        bail!("list: expected an array, got {v}");
    };
    let mut out = stdout();
    let mut line = Vec::new();
    for rec in &recs {
        let Value::Array(kv) = rec else { continue };
        let k = kv.first().and_then(value_bytes).unwrap_or(b"");
        let v = kv.get(1).and_then(value_bytes).unwrap_or(b"");
        write_record(&mut out, &mut line, k, v, keys)?;
    }
    out.flush()?;
    Ok(())
}

fn search(r: &mut Remote, mode: &str, pattern: &str, max: u64, keys_only: bool) -> Result<()> {
    let v = r.call(
        "search",
        &[Value::from(mode), bin(pattern), Value::from(max)],
    )?;
    let Value::Array(found) = v else {
        bail!("search: expected an array, got {v}");
    };
    let keys: Vec<&[u8]> = found.iter().filter_map(value_bytes).collect();
    let mut out = stdout();
    let mut line = Vec::new();
    if keys_only {
        for k in keys {
            write_record(&mut out, &mut line, k, b"", true)?;
        }
    } else {
        for chunk in keys.chunks(1000) {
            let v = r.call("get_bulk", &[bulk_keys(chunk)])?;
            if !matches!(v, Value::Map(_)) {
                bail!("get_bulk: expected a map, got {v}");
            }
            let m = bulk_records(&v);
            for k in chunk {
                // Removed since the search: skip it.
                if let Some(v) = m.get(k) {
                    write_record(&mut out, &mut line, k, value_bytes(v).unwrap_or(b""), false)?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}
