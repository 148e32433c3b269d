//! A MessagePack-RPC session. Requests are answered in the order they
//! complete: quick procedures inline, in the batch being read; slow ones
//! (hard synchronize, backup, rebuild, vacuum, key searches) on threads of
//! their own within `crate::exec::slow`'s bounds, their
//! responses sent by msgid when done (through the connection's late-answer
//! channel) while later quick calls on the same connection keep being answered.

use crate::protocols::out::Out;
use crate::protocols::rpc::{call_reply, code, is_slow, Reply, RpcError};
use crate::protocols::session::{Cx, Flow, LateAnswer, LateTx, Session};
use crate::state::server::Server;
use bytes::BytesMut;
use memstored_protocol::rpc::{self, FrameError, Limits, Message, RpcFramer, Value};
use std::sync::Arc;

/// Per-connection state.
pub struct RpcSession {
    framer: RpcFramer,
    /// Until `auth` succeeds nothing is served, when the server requires credentials.
    auth: crate::command::AuthState,
    /// Slow procedures started and not yet answered.
    in_flight: usize,
    /// Slow procedures queued or running, notifications included (bounded).
    slow: crate::exec::slow::ConnSlots,
    /// A `replicate` call accepted: the connection becomes its stream.
    stream: Option<crate::state::replication::StreamRequest>,
}

impl RpcSession {
    pub fn new(srv: &Server) -> RpcSession {
        let max_frame = crate::protocols::rpc::max_reply(srv);
        RpcSession {
            framer: RpcFramer::new(Limits::with_max_frame(max_frame)),
            auth: crate::command::AuthState::new(srv),
            in_flight: 0,
            slow: crate::exec::slow::ConnSlots::default(),
            stream: None,
        }
    }

    /// `auth [user, password]`; the flow is `Close` after too many failures.
    fn auth(&mut self, srv: &Server, params: &[Value]) -> (Result<Value, RpcError>, Flow) {
        if srv.credentials.is_none() {
            return (Ok(Value::Nil), Flow::Continue);
        }
        let user = params.first().and_then(rpc::value_bytes);
        let password = params.get(1).and_then(rpc::value_bytes);
        let (Some(user), Some(password)) = (user, password) else {
            let e = RpcError::new(code::INVALID_PARAMETERS, "auth takes [user, password]");
            return (Err(e), Flow::Continue);
        };
        let plain = [&b"\0"[..], user, b"\0", password].concat();
        let go_on = self
            .auth
            .attempt(srv, crate::state::sasl::MECHANISMS, &plain);
        let flow = if go_on { Flow::Continue } else { Flow::Close };
        if self.auth.authenticated {
            (Ok(Value::Nil), flow)
        } else {
            (
                Err(RpcError::new(code::LOGICAL, "authentication failed")),
                flow,
            )
        }
    }

    /// The accepted `replicate` call, once the session has closed for it.
    pub fn take_stream(&mut self) -> Option<crate::state::replication::StreamRequest> {
        self.stream.take()
    }

    /// `replicate [min_timestamp, server_id]`: accepted, the session ends
    /// and the connection hands its socket to `replication::master`.
    fn replicate(
        &mut self,
        srv: &Arc<Server>,
        msgid: Option<u32>,
        params: &[Value],
        out: &mut Out,
    ) -> Flow {
        use crate::state::replication::{StreamSlot, MAX_STREAMS};
        let Some(msgid) = msgid else {
            return Flow::Continue;
        };
        let refused = if srv.replication.ulog.get().is_none() {
            RpcError::new(
                code::LOGICAL,
                "this server keeps no update log (--ulog-dir)",
            )
        } else if let Some((min_ts, replica_id)) =
            crate::protocols::rpc::replication::decode_request(params)
        {
            if let Some(gap) = srv.replication.gap(min_ts) {
                encode(msgid, Err(RpcError::new(code::LOGICAL, gap)), out);
                return Flow::Continue;
            }
            let Some(slot) = StreamSlot::take(&srv.replication) else {
                let busy = format!("{MAX_STREAMS} replication streams already run");
                encode(msgid, Err(RpcError::new(code::LOGICAL, busy)), out);
                return Flow::Continue;
            };
            self.stream = Some(crate::state::replication::StreamRequest {
                wire: crate::state::replication::Wire::Rpc { msgid },
                min_ts,
                replica_id,
                slot,
            });
            return Flow::Close;
        } else {
            RpcError::argument("replicate takes [min_timestamp, server_id]")
        };
        encode(msgid, Err(refused), out);
        Flow::Continue
    }

    fn spawn_slow(
        &mut self,
        srv: &Arc<Server>,
        late: &LateTx,
        msgid: Option<u32>,
        method: String,
        params: Vec<Value>,
        ticket: crate::exec::slow::Ticket,
    ) {
        self.in_flight += usize::from(msgid.is_some());
        let srv = srv.clone();
        let srv_for_charge = srv.clone();
        let tx = late.clone();
        // `-W` of them run at once, each on a thread of its own; the rest wait in
        // `Ticket::run`, at most `slow::SERVER_WIDE` in all.
        tokio::spawn(async move {
            let result = ticket.run(move || call_reply(&srv, &method, &params)).await;
            if let Some(id) = msgid {
                let mut buf = BytesMut::new();
                match result {
                    Ok(r) => {
                        rpc::encode_response_head(id, &mut buf);
                        r.encode_copied(&mut buf);
                    }
                    Err(e) => e.encode(id, &mut buf),
                }
                let answer = match LateAnswer::charged(srv_for_charge.clone(), buf) {
                    Some(answer) => answer,
                    None => {
                        let mut buf = BytesMut::new();
                        let e = RpcError::new(
                            code::LOGICAL,
                            "out of memory: the connection memory budget is spent",
                        );
                        e.encode(id, &mut buf);
                        LateAnswer::forced(srv_for_charge, buf)
                    }
                };
                let _ = tx.send(answer);
            }
        });
    }
}

impl Session for RpcSession {
    type Framer = RpcFramer;

    fn framer(&mut self) -> &mut RpcFramer {
        &mut self.framer
    }

    fn serve(&mut self, cx: &mut Cx<'_>, msg: Message) -> Flow {
        let (msgid, method, params) = match msg {
            Message::Request(r) => (Some(r.msgid), r.method, r.params),
            Message::Notification(n) => (None, n.method, n.params),
            Message::Response(_) => return Flow::Continue, // we never send requests
        };
        if method == "auth" {
            let (result, flow) = self.auth(cx.srv, &params);
            if let Some(id) = msgid {
                let result = result
                    .map(Reply::Value)
                    .map_err(|e| e.in_dialect_of(&params));
                encode(id, result, cx.out);
            }
            return flow;
        }
        if !self.auth.authenticated {
            if let Some(id) = msgid {
                let e = RpcError::new(
                    code::LOGICAL,
                    "authentication required: call auth [user, password]",
                )
                .in_dialect_of(&params);
                encode(id, Err(e), cx.out);
            }
            return Flow::Continue;
        }
        if method == crate::protocols::rpc::replication::METHOD {
            return self.replicate(cx.srv, msgid, &params, cx.out);
        }
        if is_slow(&method, &params) {
            match self.slow.admit(cx.srv) {
                Ok(ticket) => self.spawn_slow(cx.srv, cx.late, msgid, method, params, ticket),
                Err(busy) => {
                    if let Some(id) = msgid {
                        encode(id, Err(busy.into()), cx.out);
                    }
                }
            }
            return Flow::Continue;
        }
        let result = call_reply(cx.srv, &method, &params);
        if let Some(id) = msgid {
            encode(id, result, cx.out);
        }
        Flow::Continue
    }

    fn refuse(&mut self, cx: &mut Cx<'_>, e: FrameError, closing: bool) -> Flow {
        match (closing, e.msgid()) {
            (false, Some(id)) => {
                RpcError::argument(e.to_string()).encode(id, cx.out.buf());
                Flow::Continue
            }
            _ => {
                tracing::debug!("closing RPC connection: {e}");
                Flow::Close
            }
        }
    }

    fn in_flight(&self) -> usize {
        self.in_flight
    }

    fn answered_late(&mut self) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }
}

/// The response to `msgid`, values spliced in uncopied.
fn encode(msgid: u32, result: Result<Reply, RpcError>, out: &mut Out) {
    match result {
        Ok(r) => {
            rpc::encode_response_head(msgid, out.buf());
            r.encode(out);
        }
        Err(e) => e.encode(msgid, out.buf()),
    }
}
