//! The Iterate stream as tkrzw_server 0.9.10 serves it: one iterator per
//! stream, made anew when a request names another `dbm_index`; each request
//! one move or record call (`crate::command::Iterate`), each answered with
//! its status, in order. An out-of-range `dbm_index` or an unknown
//! operation ends the stream with gRPC's INVALID_ARGUMENT, as there.

use super::pb::iterate_request::OpType;
use super::pb::*;
use super::service::{Dbm, Streamed};
use super::status::{of, of_outcome};
use super::streams::{serve, Answering};
use crate::command::{IterOp, Iterate, Outcome};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::status::code;
use memstored_engine::{CursorPlace, Error};
use std::sync::Arc;
use tonic::{Status, Streaming};

/// The iterator of one stream: its database and its place there.
#[derive(Default)]
pub(super) struct Iterator {
    at: Option<(i32, Arc<Server>)>,
    place: Option<CursorPlace>,
}

/// The command of a request; `Ok(None)`: OP_NONE.
fn op_of(r: &IterateRequest) -> Result<Option<IterOp<'_>>, Status> {
    let op =
        OpType::try_from(r.operation).map_err(|_| Status::invalid_argument("unknown operation"))?;
    let (key, inclusive) = (&r.key[..], r.jump_inclusive);
    Ok(Some(match op {
        OpType::OpNone => return Ok(None),
        OpType::OpFirst => IterOp::First,
        OpType::OpLast => IterOp::Last,
        OpType::OpJump => IterOp::Jump(key),
        OpType::OpJumpLower => IterOp::JumpLower(key, inclusive),
        OpType::OpJumpUpper => IterOp::JumpUpper(key, inclusive),
        OpType::OpNext => IterOp::Next,
        OpType::OpPrevious => IterOp::Previous,
        OpType::OpGet => IterOp::Get,
        OpType::OpSet => IterOp::Set(&r.value),
        OpType::OpRemove => IterOp::Remove,
        OpType::OpStep => IterOp::Step,
    }))
}

/// A failed call's status; Tkrzw's iterators give NOT_IMPLEMENTED_ERROR
/// and NOT_FOUND_ERROR without a message.
fn failed(o: Outcome) -> Option<StatusProto> {
    match o {
        Outcome::Failed(Error::NotImplemented(_)) => of(code::NOT_IMPLEMENTED_ERROR, ""),
        o => of_outcome(o),
    }
}

/// The iterator of one Iterate stream and the service it calls.
struct IterateCalls {
    dbm: Dbm,
    iter: Iterator,
}

impl Answering for IterateCalls {
    type Req = IterateRequest;
    type Resp = IterateResponse;

    async fn answer(&mut self, req: IterateRequest) -> Result<Option<IterateResponse>, Status> {
        self.dbm.iterate_one(&mut self.iter, &req).await.map(Some)
    }
}

impl Dbm {
    /// The Iterate stream, served by a task of its own until the client
    /// ends it or the server stops.
    pub(super) fn iterate_stream(
        &self,
        incoming: Streaming<IterateRequest>,
    ) -> Streamed<IterateResponse> {
        let calls = IterateCalls {
            dbm: self.sibling(),
            iter: Iterator::default(),
        };
        serve(calls, incoming, self.srv.shutdown.clone())
    }

    /// One request of an Iterate stream.
    pub(super) async fn iterate_one(
        &self,
        iter: &mut Iterator,
        r: &IterateRequest,
    ) -> Result<IterateResponse, Status> {
        let target = match &iter.at {
            Some((i, t)) if *i == r.dbm_index => t.clone(),
            _ => {
                let t = self.target(r.dbm_index)?.clone();
                *iter = Iterator {
                    at: Some((r.dbm_index, t.clone())),
                    place: None,
                };
                t
            }
        };
        let mut reply = IterateResponse {
            status: None,
            key: Bytes::new(),
            value: Bytes::new(),
        };
        let Some(op) = op_of(r)? else {
            return Ok(reply);
        };
        let cmd = Iterate { op };
        let mut run = || {
            let (done, place) = cmd.apply(&target, iter.place.take());
            iter.place = Some(place);
            done
        };
        let done = if matches!(op, IterOp::Set(_) | IterOp::Remove) {
            let mut done = Ok(None);
            let st = self
                .written(&target, || {
                    done = run();
                    None
                })
                .await;
            if st.is_some() {
                reply.status = st;
                return Ok(reply);
            }
            done
        } else {
            run()
        };
        match done {
            Ok(record) => {
                reply.status = super::status::ok();
                if let Some((key, value)) = record {
                    if !r.omit_key {
                        reply.key = key.into();
                    }
                    if !r.omit_value {
                        reply.value = value;
                    }
                }
            }
            Err(o) => reply.status = failed(o),
        }
        Ok(reply)
    }
}
