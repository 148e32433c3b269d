//! Replaying another server's update log into a database (issue 18): what
//! a replica does with each update its master streams.

use crate::db::Db;
use crate::shard::Action;
use crate::status::Result;
use crate::ulog::{with_origin, UlogOp, Update};
use std::sync::atomic::Ordering;

impl Db {
    /// Makes the database a replica (`true`): changes from clients are
    /// refused as on a read-only database, with a message naming the
    /// reason; only [`Db::apply_update`] changes it. `false` promotes it.
    pub fn set_replica(&self, replica: bool) {
        self.replica.store(replica, Ordering::Relaxed);
    }

    pub fn is_replica(&self) -> bool {
        self.replica.load(Ordering::Relaxed)
    }

    /// Applies one update from another server's log, as that server applied
    /// it: SET stores the value with its flags and expiry (whatever the key
    /// holds), REMOVE removes the key if present, CLEAR removes everything.
    /// Allowed on a replica. The change is logged by this database's update
    /// listener under `u.server_id` (the origin, so that a server fed back
    /// its own changes by a dual master can tell them), with this server's
    /// own timestamp (its log stays in its own time order).
    pub fn apply_update(&self, u: &Update) -> Result<()> {
        self.check_writable()?;
        with_origin(u.server_id, || match u.op {
            UlogOp::Set => {
                let shard = self.shard_of(&u.key);
                let mut state = shard.state.write();
                shard.mark_dirty();
                state
                    .put_slice(&u.key, &u.value, u.flags, u.expires_at)
                    .map(|_| ())
            }
            UlogOp::Remove => {
                let shard = self.shard_of(&u.key);
                let mut state = shard.state.write();
                shard.mark_dirty();
                state.apply(&u.key, Action::Remove).map(|_| ())
            }
            UlogOp::Clear => self.clear_unchecked(),
        })
    }
}
