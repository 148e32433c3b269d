//! `memstore remote --protocol grpc`: the subcommands of
//! `tkrzw_dbm_remote_util` (and `perf sequence`, as `tkrzw_dbm_remote_perf`)
//! over Tkrzw-RPC's gRPC service, calling what Tkrzw's tools call, so one
//! tool compares memstored's two wires (and memstored with tkrzw_server).
//! The output is the MessagePack-RPC path's.

use crate::grpc_client::pb::iterate_request::OpType;
use crate::grpc_client::{Answer, GrpcClient, Iter, Stream};
use crate::local::Move;
use crate::remote::{print_inspection, print_sorted, stdout, write_record, RemoteArgs, RemoteCmd};
use crate::remote_perf::{Batch, PerfConn, Phase, SequenceArgs};
use crate::rpc_client::RemoteError;
use anyhow::{anyhow, bail, Context, Result};
use std::io::Write;

/// Tkrzw's default: `localhost:1978`.
pub const DEFAULT_ADDRESS: &str = "127.0.0.1:1978";

/// `--address`, else `$MEMSTORE_GRPC_ADDRESS`, else [`DEFAULT_ADDRESS`]; a
/// bare PORT is on 127.0.0.1.
fn address(flag: Option<&str>) -> String {
    let a = match flag {
        Some(a) => a.to_string(),
        None => std::env::var("MEMSTORE_GRPC_ADDRESS").unwrap_or_else(|_| DEFAULT_ADDRESS.into()),
    };
    if a.parse::<u16>().is_ok() {
        format!("127.0.0.1:{a}")
    } else {
        a
    }
}

/// A call's Tkrzw status as the command's error, named as Tkrzw's tool
/// names the call.
fn done<T>(what: &str, r: std::result::Result<T, RemoteError>) -> Result<T> {
    r.map_err(|e| anyhow!("{what} failed: {e}"))
}

/// `KEY=VALUE` words as pairs.
fn params(words: &[String]) -> Result<Vec<(String, String)>> {
    words
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| anyhow!("parameter {p:?}: expected KEY=VALUE"))
        })
        .collect()
}

pub fn run(a: RemoteArgs) -> Result<()> {
    let timeout = crate::remote::timeout(&a);
    if a.auth.is_some() {
        bail!(
            "--auth: the gRPC port has no authentication (Tkrzw-RPC's is TLS, not supported here)"
        );
    }
    let addr = address(a.address.as_deref());
    let mut c = GrpcClient::connect(&addr, timeout, a.index)?;
    match a.cmd {
        RemoteCmd::Echo { times, words } => {
            let msg = words.join(" ");
            let mut out = stdout();
            for _ in 0..times.max(1) {
                writeln!(out, "{}", done("Echo", c.echo(&msg)?)?)?;
            }
            out.flush()?;
        }
        RemoteCmd::Inspect { attr } => print_inspection(
            done("Inspect", c.inspect()?)?,
            attr.as_deref(),
            "num_records",
        )?,
        RemoteCmd::Get { multi, keys } => get(&mut c, multi, &keys)?,
        RemoteCmd::Set { multi, how, args } => set(&mut c, multi, how, &args)?,
        RemoteCmd::Remove { multi, keys } => {
            if multi {
                match c.remove_multi(&keys)? {
                    Err(e) if e.code != Some(crate::rpc_client::NOT_FOUND) => {
                        bail!("RemoveMulti failed: {e}")
                    }
                    _ => {}
                }
            } else {
                let [key] = &keys[..] else {
                    bail!("remove takes one KEY (use --multi for several)");
                };
                done("Remove", c.remove(key.as_bytes())?)?;
            }
        }
        RemoteCmd::List {
            mv,
            jump_key,
            items,
            keys,
        } => list(&mut c, mv, &jump_key, items, keys)?,
        RemoteCmd::Search {
            mode,
            pattern,
            max,
            keys,
        } => search(&mut c, &mode, &pattern, max, keys)?,
        RemoteCmd::Clear => done("Clear", c.clear()?)?,
        RemoteCmd::Sync { hard, params: p } => {
            done("Synchronize", c.synchronize(hard, &params(&p)?)?)?
        }
        RemoteCmd::Rebuild { params: p } => done("Rebuild", c.rebuild(&params(&p)?)?)?,
        RemoteCmd::Changemaster { master, ts_skew } => done(
            "ChangeMaster",
            c.change_master(&master.unwrap_or_default(), ts_skew as i64)?,
        )?,
        RemoteCmd::Perf {
            cmd: crate::remote::PerfCmd::Sequence(p),
        } => {
            drop(c);
            let index = a.index;
            crate::remote_perf::sequence_with(&p, &|| {
                Ok(Box::new(GrpcPerf {
                    c: GrpcClient::connect(&addr, timeout, index)?,
                    iter: None,
                    stream: None,
                    ops: 0,
                }) as Box<dyn PerfConn>)
            })?;
        }
    }
    Ok(())
}

fn get(c: &mut GrpcClient, multi: bool, keys: &[String]) -> Result<()> {
    if multi {
        let (found, status) = c.get_multi(keys)?;
        match status {
            Err(e) if e.code != Some(crate::rpc_client::NOT_FOUND) => {
                bail!("GetMulti failed: {e}")
            }
            _ => {}
        }
        return print_sorted(found.iter().map(|(k, v)| (&k[..], &v[..])));
    }
    let [key] = keys else {
        bail!("get takes one KEY (use --multi for several)");
    };
    let v = done("Get", c.get(key.as_bytes())?)?;
    let mut out = stdout();
    out.write_all(&v)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}

fn set(c: &mut GrpcClient, multi: bool, how: crate::local::SetOpts, args: &[String]) -> Result<()> {
    if args.len() % 2 == 1 || (!multi && args.len() != 2) {
        bail!(if multi {
            "set --multi takes KEY VALUE pairs"
        } else {
            "set takes KEY VALUE (use --multi for several)"
        });
    }
    let pairs: Vec<(&[u8], &[u8])> = args
        .chunks(2)
        .map(|p| (p[0].as_bytes(), p[1].as_bytes()))
        .collect();
    if let Some(initial) = &how.incr {
        let initial: i64 = initial
            .trim()
            .parse()
            .with_context(|| format!("--incr {initial:?}: expected an integer"))?;
        let mut out = stdout();
        for &(k, v) in &pairs {
            let delta: i64 = String::from_utf8_lossy(v)
                .trim()
                .parse()
                .with_context(|| format!("increment {v:?}: expected an integer"))?;
            writeln!(
                out,
                "{}",
                done("Increment", c.increment(k, delta, initial)?)?
            )?;
        }
        out.flush()?;
        return Ok(());
    }
    if let Some(delim) = &how.append {
        for &(k, v) in &pairs {
            done("Append", c.append(k, v, delim.as_bytes())?)?;
        }
        return Ok(());
    }
    let overwrite = !how.no_overwrite;
    if multi {
        done("SetMulti", c.set_multi(&pairs, overwrite)?)
    } else {
        let (k, v) = pairs[0];
        done("Set", c.set(k, v, overwrite)?)
    }
}

/// Tkrzw's `list`: an `Iterate` stream, landing where `--move` says, then
/// `Get` and `Next` (`Previous` after `jumpupper[inc]`) per record.
fn list(
    c: &mut GrpcClient,
    mv: Move,
    jump_key: &str,
    items: Option<u64>,
    keys: bool,
) -> Result<()> {
    if items == Some(0) {
        return Ok(());
    }
    let mut it = c.iterator();
    let k = jump_key.as_bytes();
    let (first, what) = match mv {
        Move::First => (it.op(OpType::OpFirst, b"", false)?, "First"),
        Move::Jump => (it.op(OpType::OpJump, k, false)?, "Jump"),
        Move::Jumplower => (it.op(OpType::OpJumpLower, k, false)?, "JumpLower"),
        Move::Jumplowerinc => (it.op(OpType::OpJumpLower, k, true)?, "JumpLower"),
        Move::Jumpupper => (it.op(OpType::OpJumpUpper, k, false)?, "JumpUpper"),
        Move::Jumpupperinc => (it.op(OpType::OpJumpUpper, k, true)?, "JumpUpper"),
    };
    done(what, first)?;
    let step = if matches!(mv, Move::Jumpupper | Move::Jumpupperinc) {
        (OpType::OpPrevious, "Previous")
    } else {
        (OpType::OpNext, "Next")
    };
    let mut out = stdout();
    let mut line = Vec::new();
    let mut n = 0u64;
    while items.is_none_or(|max| n < max) {
        let (k, v) = match it.op(OpType::OpGet, b"", false)? {
            Ok(rec) => rec,
            Err(e) if e.code == Some(crate::rpc_client::NOT_FOUND) => break,
            Err(e) => bail!("Get failed: {e}"),
        };
        write_record(&mut out, &mut line, &k, &v, keys)?;
        n += 1;
        done(step.1, it.op(step.0, b"", false)?)?;
    }
    out.flush()?;
    Ok(())
}

fn search(c: &mut GrpcClient, mode: &str, pattern: &str, max: u64, keys_only: bool) -> Result<()> {
    let capacity = i32::try_from(max).unwrap_or(i32::MAX);
    let found = done("Search", c.search(mode, pattern.as_bytes(), capacity)?)?;
    let mut out = stdout();
    let mut line = Vec::new();
    if keys_only {
        for k in &found {
            write_record(&mut out, &mut line, k, b"", true)?;
        }
    } else {
        // In the order found, 100 keys per GetMulti as Tkrzw's tool; keys
        // removed since the search are skipped.
        for chunk in found.chunks(100) {
            let (recs, _) = c.get_multi(chunk)?;
            let m: std::collections::HashMap<&[u8], &[u8]> =
                recs.iter().map(|(k, v)| (&k[..], &v[..])).collect();
            for k in chunk {
                if let Some(v) = m.get(&k[..]) {
                    write_record(&mut out, &mut line, k, v, false)?;
                }
            }
        }
    }
    out.flush()?;
    Ok(())
}

/// One perf thread's gRPC connection; iterations use an `Iterate` stream,
/// made anew every 100 operations as Tkrzw's perf does.
struct GrpcPerf {
    c: GrpcClient,
    iter: Option<Iter>,
    /// `--stream`: the Stream call, also made anew every 100 operations.
    stream: Option<Stream>,
    ops: u64,
}

/// A call with no result but its status.
fn unit<T>(r: Answer<T>) -> Result<std::result::Result<(), RemoteError>> {
    Ok(r?.map(drop))
}

impl GrpcPerf {
    /// One operation on the Stream call, as Tkrzw's `--stream`: sets and
    /// removes unanswered with `--ignore_result`.
    fn streamed(
        &mut self,
        phase: Phase,
        b: &Batch,
        a: &SequenceArgs,
    ) -> Result<std::result::Result<(), RemoteError>> {
        if self.ops.is_multiple_of(100) || self.stream.is_none() {
            if let Some(old) = self.stream.take() {
                old.close()?;
            }
            self.stream = Some(self.c.stream());
        }
        self.ops += 1;
        let s = self.stream.as_mut().ok_or_else(|| anyhow!("no stream"))?;
        let (k, v) = (&b.keys[0], &b.values[0]);
        match phase {
            Phase::Echo => s.echo(k),
            Phase::Set => s.set(k, v, a.ignore_result),
            Phase::Get => s.get(k),
            Phase::Remove => s.remove(k, a.ignore_result),
            Phase::Iter => bail!("iterations do not stream"),
        }
    }
}

impl PerfConn for GrpcPerf {
    fn batch(
        &mut self,
        phase: Phase,
        b: &Batch,
        multi: bool,
        a: &SequenceArgs,
    ) -> Result<Vec<std::result::Result<(), RemoteError>>> {
        if a.stream && phase != Phase::Iter {
            return Ok(vec![self.streamed(phase, b, a)?]);
        }
        let c = &mut self.c;
        let one = match (phase, multi) {
            (Phase::Echo, true) => {
                let joined = b.keys.join(&b':');
                unit(c.echo(&String::from_utf8_lossy(&joined)))?
            }
            (Phase::Set, true) => {
                let recs: Vec<(&[u8], &[u8])> = b
                    .keys
                    .iter()
                    .zip(&b.values)
                    .map(|(k, v)| (&k[..], &v[..]))
                    .collect();
                c.set_multi(&recs, true)?
            }
            (Phase::Get, true) => c.get_multi(&b.keys)?.1,
            (Phase::Remove, true) => c.remove_multi(&b.keys)?,
            (Phase::Echo, false) => unit(c.echo(&String::from_utf8_lossy(&b.keys[0])))?,
            (Phase::Set, false) => c.set(&b.keys[0], &b.values[0], true)?,
            (Phase::Get, false) => unit(c.get(&b.keys[0]))?,
            (Phase::Remove, false) => c.remove(&b.keys[0])?,
            (Phase::Iter, _) => {
                if self.ops.is_multiple_of(100) || self.iter.is_none() {
                    self.iter = Some(c.iterator());
                }
                self.ops += 1;
                let it = self.iter.as_mut().ok_or_else(|| anyhow!("no iterator"))?;
                match it.op(OpType::OpJump, &b.keys[0], false)? {
                    Ok(_) => unit(it.op(OpType::OpGet, b"", false))?,
                    Err(e) => Err(e),
                }
            }
        };
        Ok(vec![one])
    }

    fn finish(&mut self, _: &SequenceArgs) -> Result<()> {
        self.iter = None;
        self.ops = 0;
        match self.stream.take() {
            Some(s) => s.close(),
            None => Ok(()),
        }
    }

    fn count(&mut self) -> Result<u64> {
        let n = self.c.count()?.map_err(|e| anyhow!("Count failed: {e}"))?;
        Ok(n.max(0) as u64)
    }

    fn clear(&mut self) -> Result<std::result::Result<(), RemoteError>> {
        self.c.clear()
    }
}
