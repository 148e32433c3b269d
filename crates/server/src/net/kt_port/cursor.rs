//! KT's cursor procedures over TSV-RPC (`cur_jump` ... `cur_delete`): each
//! connection has its own cursors, named by the `CUR` input (created on
//! first use, on the database `DB` names), as in `ktserver`. `ktremotemgr
//! list` and `ktremotetest order -etc` walk the database with them.
//!
//! The engine has no cursors, so a jump takes a snapshot of the database's
//! keys (one key search, off the worker threads within `crate::exec::slow`'s
//! bounds), sorted, and the cursor walks it; records removed since are
//! passed over, records added since are not seen. So every database,
//! hash ones included, is walked in key order. A snapshot is packed (the
//! keys in one buffer, an offset each), charged to the connection memory
//! budget while its cursor lives (else 450 "out of memory"), and the
//! snapshots of one connection hold at most `rpc::max_reply` bytes
//! together (else 450): each held 124 MB of keys as separate buffers for
//! 400,000 keys of 40 bytes, uncharged, for as long as its client stayed.

use crate::command::{Delete, Get, Outcome, Search, Store, StoreKind};
use crate::exec::slow::ConnSlots;
use crate::protocols::rpc::{code, expiry_to_xt, xt_to_expiry, RpcError, Value};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::{Record, SearchMode};
use memstored_protocol::kt::tsv::TsvMap;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The most cursors one connection may hold.
const MAX_CURSORS: usize = 64;

/// Output records of a procedure.
pub(super) type Output = Vec<(Vec<u8>, Vec<u8>)>;

/// One connection's cursors by `CUR` id.
#[derive(Default)]
pub(super) struct Cursors(Mutex<HashMap<i64, Cursor>>);

struct Cursor {
    db: Arc<Server>,
    /// The keys at the last jump, sorted.
    keys: Keys,
    /// The current key's index; `None`: not on a record.
    pos: Option<usize>,
    /// The server whose budget `keys` are charged to.
    charged_to: Arc<Server>,
}

impl Drop for Cursor {
    fn drop(&mut self) {
        self.charged_to.budget.give(self.keys.size());
    }
}

/// Sorted keys packed in one buffer.
#[derive(Default)]
struct Keys {
    bytes: Vec<u8>,
    /// Where each key ends in `bytes`.
    ends: Vec<usize>,
}

impl Keys {
    fn packed(sorted: &[Vec<u8>]) -> Keys {
        let mut k = Keys {
            bytes: Vec::with_capacity(sorted.iter().map(Vec::len).sum()),
            ends: Vec::with_capacity(sorted.len()),
        };
        for key in sorted {
            k.bytes.extend_from_slice(key);
            k.ends.push(k.bytes.len());
        }
        k
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn get(&self, i: usize) -> Option<&[u8]> {
        let end = *self.ends.get(i)?;
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p]);
        self.bytes.get(start..end)
    }

    /// The number of keys for which `below` holds (they come first).
    fn partition_point(&self, below: impl Fn(&[u8]) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.get(mid).is_some_and(&below) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// Bytes held.
    fn size(&self) -> usize {
        self.bytes.capacity() + self.ends.capacity() * std::mem::size_of::<usize>()
    }
}

fn logic(message: &str) -> RpcError {
    RpcError::new(code::NO_RECORD, message)
}

fn input<'a>(map: &'a TsvMap, name: &str) -> Option<&'a [u8]> {
    map.get(name.as_bytes()).map(Vec::as_slice)
}

/// KT reads `CUR` as the number its leading digits make.
fn cursor_id(map: &TsvMap) -> Option<i64> {
    let digits: Vec<u8> = input(map, "CUR")?
        .iter()
        .copied()
        .take_while(u8::is_ascii_digit)
        .collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

impl Cursors {
    /// Runs cursor procedure `name` on this connection's cursors.
    pub(super) async fn call(
        &self,
        srv: &Arc<Server>,
        slots: &ConnSlots,
        name: &str,
        map: &TsvMap,
    ) -> Result<Output, RpcError> {
        let no_cursor = || RpcError::invalid("no such cursor");
        let id = cursor_id(map).ok_or_else(no_cursor)?;
        if name == "cur_delete" {
            self.lock().remove(&id);
            return Ok(Vec::new());
        }
        if name == "cur_jump" || name == "cur_jump_back" {
            let db = database(srv, map).ok_or_else(no_cursor)?;
            let keys = snapshot(&db, slots).await?;
            let mut all = self.lock();
            if !all.contains_key(&id) && all.len() >= MAX_CURSORS {
                return Err(RpcError::new(code::LOGICAL, "too many cursors"));
            }
            let held: usize = all
                .iter()
                .filter(|(i, _)| **i != id)
                .map(|(_, c)| c.keys.size())
                .sum();
            let size = keys.size();
            if held.saturating_add(size) > crate::protocols::rpc::max_reply(srv) {
                return Err(RpcError::new(code::LOGICAL, "too many keys for a cursor"));
            }
            // The cursor it replaces gives its charge back first.
            all.remove(&id);
            if !srv.budget.try_take(size) {
                crate::state::counters::bump(&srv.budget.refused);
                return Err(RpcError::new(
                    code::LOGICAL,
                    "out of memory: the connection memory budget is spent",
                ));
            }
            let key = input(map, "key");
            let pos = if name == "cur_jump" {
                let at = key.map_or(0, |k| keys.partition_point(|x| x < k));
                (at < keys.len()).then_some(at)
            } else {
                let end = key.map_or(keys.len(), |k| keys.partition_point(|x| x <= k));
                end.checked_sub(1)
            };
            let charged_to = srv.clone();
            all.insert(
                id,
                Cursor {
                    db,
                    keys,
                    pos,
                    charged_to,
                },
            );
            return pos.map(|_| Vec::new()).ok_or_else(|| logic("no record"));
        }
        let mut all = self.lock();
        let cur = all
            .get_mut(&id)
            .ok_or_else(|| logic("the cursor is not on a record"))?;
        cur.serve(name, map)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Cursor>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The server of the `DB` input (the first without one).
fn database(srv: &Arc<Server>, map: &TsvMap) -> Option<Arc<Server>> {
    let params = match input(map, "DB") {
        Some(db) => vec![Value::Map(vec![(
            Value::from("DB"),
            Value::Binary(db.to_vec()),
        )])],
        None => Vec::new(),
    };
    crate::protocols::rpc::select::select(srv, &params)
        .ok()
        .cloned()
}

/// Every key of `db`, sorted and packed; a slow call.
async fn snapshot(db: &Arc<Server>, slots: &ConnSlots) -> Result<Keys, RpcError> {
    let ticket = slots.admit(db)?;
    let srv = db.clone();
    let mut keys = ticket
        .run(move || {
            let every_key = Search::Matching {
                mode: SearchMode::Begin,
                pattern: b"",
                max: 0,
            };
            crate::exec::slow::search(&srv, |limits| every_key.apply(&srv, limits))
        })
        .await?;
    keys.sort_unstable();
    Ok(Keys::packed(&keys))
}

impl Cursor {
    fn serve(&mut self, name: &str, map: &TsvMap) -> Result<Output, RpcError> {
        let step = input(map, "step").is_some();
        match name {
            "cur_step" => self.step(1),
            "cur_step_back" => self.step(-1),
            "cur_get_key" | "cur_get_value" | "cur_get" => {
                let (key, r) = self.current()?;
                let mut out = Vec::new();
                if name != "cur_get_value" {
                    out.push((b"key".to_vec(), key.to_vec()));
                }
                if name != "cur_get_key" {
                    out.push((b"value".to_vec(), r.value.to_vec()));
                }
                if name == "cur_get" {
                    out.extend(xt(&r));
                }
                if step {
                    self.step(1).ok();
                }
                Ok(out)
            }
            "cur_set_value" => {
                let value = input(map, "value").ok_or_else(|| RpcError::invalid("no value"))?;
                let (key, _) = self.current()?;
                let xt = input(map, "xt")
                    .and_then(|x| std::str::from_utf8(x).ok()?.trim().parse::<i64>().ok());
                let cmd = Store {
                    key,
                    value: Bytes::copy_from_slice(value),
                    kind: StoreKind::Replace,
                    flags: 0,
                    expires_at: xt.map_or(0, xt_to_expiry),
                    cas: None,
                };
                match cmd.apply(&self.db) {
                    Outcome::Stored { .. } => {}
                    o => return Err(RpcError::from_outcome(o)),
                }
                if step {
                    self.step(1).ok();
                }
                Ok(Vec::new())
            }
            "cur_remove" | "cur_seize" => {
                let (key, r) = self.current()?;
                match (Delete {
                    key: key.clone(),
                    cas: None,
                })
                .apply(&self.db)
                {
                    Outcome::Deleted | Outcome::NotFound => {}
                    o => return Err(RpcError::from_outcome(o)),
                }
                // As in Kyoto Cabinet, the cursor moves on to the next record.
                self.step(1).ok();
                if name == "cur_remove" {
                    return Ok(Vec::new());
                }
                let mut out = vec![
                    (b"key".to_vec(), key.to_vec()),
                    (b"value".to_vec(), r.value.to_vec()),
                ];
                out.extend(xt(&r));
                Ok(out)
            }
            _ => Err(RpcError::new(
                code::NO_METHOD,
                format!("no such procedure: {name}"),
            )),
        }
    }

    /// Moves by one record; off either end the cursor is on none (450).
    fn step(&mut self, by: isize) -> Result<Output, RpcError> {
        let pos = self
            .pos
            .ok_or_else(|| logic("the cursor is not on a record"))?;
        self.pos = pos.checked_add_signed(by).filter(|p| *p < self.keys.len());
        self.pos
            .map(|_| Vec::new())
            .ok_or_else(|| logic("no record"))
    }

    /// The record under the cursor, passing over keys removed since the
    /// jump (the cursor moves forward to the next live one).
    fn current(&mut self) -> Result<(Bytes, Record), RpcError> {
        while let Some(pos) = self.pos {
            let Some(key) = self.keys.get(pos).map(Bytes::copy_from_slice) else {
                break;
            };
            match Get::new(key.clone()).apply(&self.db) {
                Outcome::Found(r) => return Ok((key, r)),
                Outcome::NotFound => self.pos = Some(pos + 1),
                o => return Err(RpcError::from_outcome(o)),
            }
        }
        self.pos = None;
        Err(logic("the cursor is not on a record"))
    }
}

/// `xt` of a record that expires.
fn xt(r: &Record) -> Option<(Vec<u8>, Vec<u8>)> {
    expiry_to_xt(r.meta.expires_at).map(|x| (b"xt".to_vec(), x.into_bytes()))
}
