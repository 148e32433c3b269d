//! Calls over several keys. `compare_exchange_multi` is atomic across shards:
//! it holds every involved shard's write lock while it checks and writes.

use crate::db::Db;
use crate::record::now_secs;
use crate::shard::Action;
use crate::status::{Error, Result};
use bytes::Bytes;

impl Db {
    /// Checks every `(key, expected)` (`None` = must be absent) and, only if all
    /// hold, applies every `(key, desired)` (`None` = remove). `ValueMismatch` when
    /// any expectation fails; then nothing is changed.
    pub fn compare_exchange_multi(
        &self,
        expected: &[(&[u8], Option<&[u8]>)],
        desired: &[(&[u8], Option<&[u8]>)],
    ) -> Result<()> {
        self.compare_exchange_multi_expiring(expected, desired, 0)
    }

    /// [`Db::compare_exchange_multi`], the desired values stored with the
    /// absolute expiry `expires_at` (0 = never) in the same locked step:
    /// no reader, and no log replayed after a crash, sees one of them
    /// without it (Kyoto Tycoon's atomic `set_bulk` with `xt`).
    pub fn compare_exchange_multi_expiring(
        &self,
        expected: &[(&[u8], Option<&[u8]>)],
        desired: &[(&[u8], Option<&[u8]>)],
        expires_at: u64,
    ) -> Result<()> {
        self.check_client_write()?;
        let keys: Vec<&[u8]> = expected.iter().chain(desired).map(|(k, _)| *k).collect();
        let mut locked = self.lock_shards(&keys);
        let now = now_secs();
        for (key, want) in expected {
            let cur = locked.state(key)?.live(key, now)?;
            if cur.as_ref().map(|r| &r.value[..]) != *want {
                return Err(Error::ValueMismatch(
                    "a record does not hold the expected value".into(),
                ));
            }
        }
        for (key, value) in desired {
            let state = locked.state(key)?;
            let action = match value {
                Some(v) => Action::Put {
                    value: Bytes::copy_from_slice(v),
                    flags: 0,
                    expires_at,
                },
                None => Action::Remove,
            };
            state.apply(key, action)?;
            self.shards[self.shard_index(key)].mark_dirty();
        }
        Ok(())
    }

    /// The values of the keys that exist, in the order asked.
    pub fn get_multi(&self, keys: &[&[u8]]) -> Result<Vec<(Vec<u8>, Bytes)>> {
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            if let Some(r) = self.get_record(key)? {
                out.push((key.to_vec(), r.value));
            }
        }
        Ok(out)
    }

    /// Stores every pair; with `overwrite` false, existing records are kept
    /// and `Duplication` is returned after the others are stored.
    pub fn set_multi(&self, records: &[(&[u8], &[u8])], overwrite: bool) -> Result<()> {
        let mut first_err = None;
        for (k, v) in records {
            if let Err(e) = self.set(k, v, overwrite) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// Removes every key; `NotFound` when any was absent (the others are removed).
    pub fn remove_multi(&self, keys: &[&[u8]]) -> Result<()> {
        let mut first_err = None;
        for k in keys {
            if let Err(e) = self.remove(k) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}
