//! PopFirst and PushLast as tkrzw_server 0.9.10 answers them: a PopFirst
//! with `retry_wait` waits (a future, no worker held) for a PushLast with
//! `notify` on the same database while the database is empty.

use super::pb::*;
use super::service::{answer, Answer, Dbm};
use super::signal::{retrying, send};
use super::status::{self, code_of, of_outcome};
use crate::command::{PopFirst, PushLast};
use bytes::Bytes;
use memstored_engine::status::code;
use tonic::Status;

impl Dbm {
    /// One PopFirst: the key and value only on success.
    async fn pop_first_once(&self, r: &PopFirstRequest) -> Result<PopFirstResponse, Status> {
        let target = self.target(r.dbm_index)?;
        let mut taken = None;
        let st = self
            .written(target, || match PopFirst.apply(target) {
                Ok(kv) => {
                    taken = Some(kv);
                    status::ok()
                }
                Err(o) => of_outcome(o),
            })
            .await;
        let (key, value) = taken.unwrap_or_default();
        Ok(PopFirstResponse {
            status: st,
            key: if r.omit_key { Bytes::new() } else { key.into() },
            value: if r.omit_value { Bytes::new() } else { value },
        })
    }

    /// With `retry_wait`, tried again while it is NOT_FOUND_ERROR, each
    /// time a PushLast with `notify` stores a record (or every 5 s).
    pub(super) async fn pop_first_call(&self, r: PopFirstRequest) -> Answer<PopFirstResponse> {
        match self.signals.first(r.dbm_index) {
            Some(s) if r.retry_wait > 0.0 => {
                let again = |a: &Result<PopFirstResponse, Status>| matches!(a, Ok(a) if code_of(&a.status) == code::NOT_FOUND_ERROR);
                let stop = self.srv.shutdown.clone();
                let attempt = || self.pop_first_once(&r);
                answer(retrying(s, r.retry_wait, stop, attempt, again).await?)
            }
            _ => answer(self.pop_first_once(&r).await?),
        }
    }

    /// The value under a key of the time (`wtime`, or now when negative);
    /// with `notify`, a success wakes the PopFirst calls waiting.
    pub(super) async fn push_last_call(&self, r: PushLastRequest) -> Answer<PushLastResponse> {
        let target = self.target(r.dbm_index)?;
        let cmd = PushLast {
            value: r.value,
            wtime: r.wtime,
        };
        let st = self
            .written(target, || match cmd.apply(target) {
                Ok(_) => status::ok(),
                Err(o) => of_outcome(o),
            })
            .await;
        if r.notify && status::is_ok(&st) {
            send(self.signals.first(r.dbm_index));
        }
        answer(PushLastResponse { status: st })
    }
}
