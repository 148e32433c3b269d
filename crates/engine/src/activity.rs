//! When each shard was last synchronized, backed up and rebuilt, and how
//! long that took: what an operator's dashboard shows (the server's
//! `/metrics`). Kept beside the shard and recorded inside `Db`'s own
//! maintenance calls, so every path that reaches them — an RPC, SIGHUP, the
//! periodic sync, a tool — is counted in one place.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A kind of maintenance work on a shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Maintenance {
    Sync,
    Backup,
    Rebuild,
}

impl Maintenance {
    pub const ALL: [Maintenance; 3] =
        [Maintenance::Sync, Maintenance::Backup, Maintenance::Rebuild];

    pub fn label(self) -> &'static str {
        match self {
            Maintenance::Sync => "sync",
            Maintenance::Backup => "backup",
            Maintenance::Rebuild => "rebuild",
        }
    }
}

/// The last successful run of one kind of work on one shard.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LastRun {
    /// When it finished, in milliseconds since the Unix epoch.
    pub finished_unix_ms: u64,
    /// How long it took, in microseconds.
    pub took_micros: u64,
    /// How many runs have succeeded since the database was opened.
    pub count: u64,
}

#[derive(Debug, Default)]
struct Slot {
    finished_unix_ms: AtomicU64,
    took_micros: AtomicU64,
    count: AtomicU64,
}

/// One shard's record of its maintenance runs.
#[derive(Debug, Default)]
pub(crate) struct Activity {
    slots: [Slot; 3],
}

impl Activity {
    fn slot(&self, what: Maintenance) -> &Slot {
        &self.slots[what as usize]
    }

    /// Runs `work` and, if it succeeds, records when it ended and how long
    /// it took. A failed run leaves the last success standing.
    pub(crate) fn timed<T, E>(
        &self,
        what: Maintenance,
        work: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E> {
        let start = Instant::now();
        let out = work()?;
        let slot = self.slot(what);
        let took = u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        slot.took_micros.store(took, Relaxed);
        slot.finished_unix_ms.store(now, Relaxed);
        slot.count.fetch_add(1, Relaxed);
        Ok(out)
    }

    /// The last successful run, if there was one.
    pub(crate) fn last(&self, what: Maintenance) -> Option<LastRun> {
        let slot = self.slot(what);
        let count = slot.count.load(Relaxed);
        (count > 0).then(|| LastRun {
            finished_unix_ms: slot.finished_unix_ms.load(Relaxed),
            took_micros: slot.took_micros.load(Relaxed),
            count,
        })
    }
}

/// What `Db::shard_reports` gives for one shard.
#[derive(Clone, Debug, Default)]
pub struct ShardReport {
    pub records: u64,
    pub bytes: u64,
    pub file_size: u64,
    pub sync: Option<LastRun>,
    pub backup: Option<LastRun>,
    pub rebuild: Option<LastRun>,
}

impl ShardReport {
    pub fn last(&self, what: Maintenance) -> Option<LastRun> {
        match what {
            Maintenance::Sync => self.sync,
            Maintenance::Backup => self.backup,
            Maintenance::Rebuild => self.rebuild,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_successes_are_recorded() {
        let a = Activity::default();
        assert_eq!(a.last(Maintenance::Sync), None);
        let r: Result<(), &str> = a.timed(Maintenance::Sync, || Err("disk full"));
        assert!(r.is_err());
        assert_eq!(
            a.last(Maintenance::Sync),
            None,
            "a failure is not a last run"
        );
        a.timed(Maintenance::Sync, || Ok::<_, ()>(())).unwrap();
        a.timed(Maintenance::Sync, || Ok::<_, ()>(())).unwrap();
        let last = a.last(Maintenance::Sync).unwrap();
        assert_eq!(last.count, 2);
        assert!(last.finished_unix_ms > 1_700_000_000_000);
        assert_eq!(a.last(Maintenance::Rebuild), None, "kinds are kept apart");
    }
}
