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
    ///
    /// Last writer wins, per key: when the listener remembers a later change
    /// of the key (`UpdateListener::last_change`, by origin timestamp, then
    /// server id), the update is not applied and `false` is returned. CLEAR
    /// is always applied.
    pub fn apply_update(&self, u: &Update) -> Result<bool> {
        self.check_writable()?;
        with_origin(u.server_id, u.timestamp, || {
            let (key, action) = match u.op {
                UlogOp::Clear => return self.clear_unchecked().map(|()| true),
                UlogOp::Set => (&u.key[..], None),
                UlogOp::Remove => (&u.key[..], Some(Action::Remove)),
            };
            let shard = self.shard_of(key);
            let mut state = shard.write_for(key);
            // Under the shard's lock: no local write to the key can come
            // between this check and the change.
            let later = state.listener.as_ref().and_then(|l| l.last_change(key));
            if later.is_some_and(|t| t > (u.timestamp, u.server_id)) {
                return Ok(false);
            }
            shard.mark_dirty();
            match action {
                None => state.put_slice(key, &u.value, u.flags, u.expires_at)?,
                Some(a) => state.apply(key, a).map(|_| 0)?,
            };
            Ok(true)
        })
    }
}
