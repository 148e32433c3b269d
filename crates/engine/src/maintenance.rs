//! Online maintenance: rebuild, vacuum (backup: `backup.rs`). Each works
//! shard by shard and holds a shard's write lock only briefly, so clients
//! keep being served.

use crate::activity::Maintenance;
use crate::db::Db;
use crate::record::now_secs;
use crate::shard::Shard;
use crate::status::Result;

/// A rebuild copies tails outside the lock until what is left is this small,
/// or until it has tried this many rounds (writers may outpace the copy).
const LOCKED_TAIL: u64 = 1 << 20;
const MAX_TAIL_ROUNDS: usize = 8;

/// Table groups (8 slots each) a vacuum looks at per lock: ~1 ms of a
/// shard's read lock, then its write lock for what expired among them.
const VACUUM_WINDOW: usize = 1024;

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
    // The fsync of the whole new file, outside the lock (the one under it
    // then finds only the last tail unsynced: issue 40 saw stalls over
    // 100 ms while a 100-shard store was rebuilt).
    task.sync_copied()?;
    shard.state.write().store.finish_rebuild(task)
}

impl Db {
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
                st.before_change();
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
