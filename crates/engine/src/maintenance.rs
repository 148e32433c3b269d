//! Online maintenance: backup, rebuild, vacuum. Each works shard by shard
//! and holds a shard's write lock only briefly, so clients keep being served.

use crate::activity::Maintenance;
use crate::db::{shard_path, Db};
use crate::record::now_secs;
use crate::shard::Shard;
use crate::snapshot::SnapshotWriter;
use crate::status::{Error, Result};
use crate::store::Frozen;
use crate::Record;
use std::path::Path;

/// A rebuild copies tails outside the lock until what is left is this small,
/// or until it has tried this many rounds (writers may outpace the copy).
const LOCKED_TAIL: u64 = 1 << 20;
const MAX_TAIL_ROUNDS: usize = 8;

/// Table groups (8 slots each) a vacuum looks at per lock: ~1 ms of a
/// shard's read lock, then its write lock for what expired among them.
const VACUUM_WINDOW: usize = 1024;

/// `YYYYMMDDhhmmss` in UTC, the default backup suffix.
pub fn utc_timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}{:02}{:02}{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// What a shard contributes to a backup, captured at one instant.
enum Captured {
    Log(Frozen),
    Records(Vec<(Vec<u8>, Record)>),
}

fn copy_prefix(db: &Db, frozen: &Frozen, dest: &Path) -> Result<()> {
    let mut w = SnapshotWriter::create(&*db.fs, dest, None, 0, db.name.compression)?;
    let mut pos = 0;
    let mut chunk = Vec::new();
    while pos < frozen.end {
        let n = ((frozen.end - pos) as usize).min(1 << 20);
        chunk.resize(n, 0);
        frozen.file.read_at(&mut chunk, pos)?;
        w.add_raw(&chunk)?;
        pos += n as u64;
    }
    w.finish()
}

fn rebuild_shard(shard: &Shard) -> Result<()> {
    let Some(mut task) = shard.state.write().store.start_rebuild()? else {
        return Ok(());
    };
    task.copy_frozen(&mut |key, offset| shard.state.read().store.is_live_at(key, offset))?;
    for _ in 0..MAX_TAIL_ROUNDS {
        let end = shard.state.write().store.freeze()?.map_or(0, |f| f.end);
        if end.saturating_sub(task.copied_to()) < LOCKED_TAIL {
            break;
        }
        task.copy_tail(end)?;
    }
    shard.state.write().store.finish_rebuild(task)
}

impl Db {
    /// Writes a consistent copy of the database beside it, named
    /// `PATH.backup.SUFFIX` (shards: `PATH.backup.SUFFIX-00000-of-00010`), while
    /// writers keep writing. An empty suffix means the UTC time as
    /// `YYYYMMDDhhmmss`. Returns the backup's database name, which opens as
    /// a normal database.
    pub fn backup(&self, suffix: &str) -> Result<String> {
        if !self.name.kind.has_file() {
            return Err(Error::NotImplemented(
                "an in-memory database without a file has no backup".into(),
            ));
        }
        if suffix.contains(['/', '\0', '#', ',']) {
            return Err(Error::InvalidArgument(format!(
                "backup suffix {suffix:?} may not contain / # , or NUL"
            )));
        }
        let suffix = if suffix.is_empty() {
            utc_timestamp(now_secs())
        } else {
            suffix.to_string()
        };
        let base = format!("{}.backup.{suffix}", self.name.path);
        let _m = self.maintenance.lock();
        // Every shard is captured at the same instant (all write locks held
        // just long enough to flush buffers), so the backup is one point in time.
        let captured: Vec<Captured> = {
            let mut guards: Vec<_> = self.shards.iter().map(|s| s.state.write()).collect();
            let mut out = Vec::with_capacity(guards.len());
            for g in guards.iter_mut() {
                out.push(match g.store.freeze()? {
                    Some(f) => Captured::Log(f),
                    None => {
                        let mut recs = Vec::new();
                        g.store
                            .for_each_record(&mut |k, r| recs.push((k.to_vec(), r)))?;
                        Captured::Records(recs)
                    }
                });
            }
            out
        };
        let n = self.shards.len();
        for (i, c) in captured.into_iter().enumerate() {
            let dest = shard_path(&base, i, n);
            self.shards[i]
                .activity
                .timed(Maintenance::Backup, || match c {
                    Captured::Log(f) => copy_prefix(self, &f, &dest),
                    Captured::Records(recs) => {
                        let max_cas = recs.iter().map(|(_, r)| r.meta.cas).max().unwrap_or(0);
                        let kind = Some(crate::format::FileKind::MemSnapshot);
                        let mut w = SnapshotWriter::create(
                            &*self.fs,
                            &dest,
                            kind,
                            max_cas,
                            self.name.compression,
                        )?;
                        for (k, r) in recs {
                            w.add(&k, &r.value, r.meta)?;
                        }
                        w.finish()
                    }
                })?;
        }
        Ok(if n > 1 {
            format!("{base}#num_shards={n}")
        } else {
            base
        })
    }

    /// Compacts every shard's file into a new one while reads and writes go
    /// on; writes made meanwhile are carried over. Expired records are dropped.
    pub fn rebuild(&self) -> Result<()> {
        self.check_writable()?;
        let _m = self.maintenance.lock();
        for shard in &self.shards {
            shard
                .activity
                .timed(Maintenance::Rebuild, || rebuild_shard(shard))?;
        }
        Ok(())
    }

    /// True when dead records take more than half of some shard's file.
    pub fn should_be_rebuilt(&self) -> bool {
        self.shards
            .iter()
            .any(|s| s.state.read().store.live_ratio() < 0.5)
    }

    /// Removes expired records; returns how many. Their space is reclaimed
    /// by the next rebuild.
    pub fn vacuum(&self) -> Result<u64> {
        self.check_writable()?;
        let now = now_secs();
        let mut removed = 0;
        for shard in &self.shards {
            // A window at a time, each lock held for one window only.
            let mut from = Some(0);
            while let Some(at) = from {
                let (expired, next) = shard
                    .state
                    .read()
                    .store
                    .expired_keys(now, at, VACUUM_WINDOW);
                from = next;
                if expired.is_empty() {
                    continue;
                }
                let mut st = shard.state.write();
                shard.mark_dirty();
                for k in expired {
                    if matches!(st.store.get_meta(&k)?, Some(m) if m.is_expired(now))
                        && st.store.remove(&k)?
                    {
                        removed += 1;
                    }
                }
            }
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_timestamps() {
        assert_eq!(super::utc_timestamp(0), "19700101000000");
        assert_eq!(super::utc_timestamp(1_613_020_707), "20210211051827");
        assert_eq!(super::utc_timestamp(951_782_400), "20000229000000");
    }
}
