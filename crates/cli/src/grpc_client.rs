//! A blocking client of Tkrzw-RPC's gRPC service (`tkrzw_rpc.DBMService`,
//! crates/server/proto/tkrzw_rpc.proto) for `memstore remote --protocol
//! grpc`: tonic's generated client on a small current-thread tokio runtime
//! of its own, so the tool's code stays the blocking code it is for
//! MessagePack-RPC. A call's `StatusProto` other than SUCCESS is the inner
//! error ([`RemoteError`], Tkrzw's code and message); a gRPC error (no
//! connection, UNIMPLEMENTED, a bad `dbm_index`) is the outer one.

use crate::rpc_client::RemoteError;
use anyhow::{anyhow, Context, Result};
use std::sync::Arc;
use std::time::Duration;

#[allow(clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("tkrzw_rpc");
}

use pb::dbm_service_client::DbmServiceClient;
use pb::iterate_request::OpType;
use pb::{BytesPair, IterateRequest, IterateResponse, StatusProto, StringPair};
use tonic::codegen::tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint};

/// A call's result: the outer error is the transport's (or gRPC's), the
/// inner Tkrzw's status.
pub type Answer<T> = Result<std::result::Result<T, RemoteError>>;

/// The inner result of a Tkrzw status (absent: SUCCESS).
fn checked<T>(status: Option<StatusProto>, ok: T) -> std::result::Result<T, RemoteError> {
    match status {
        Some(s) if s.code != 0 => Err(RemoteError::tkrzw(s.code, s.message)),
        _ => Ok(ok),
    }
}

/// `KEY=VALUE` parameters as the service's string pairs.
pub fn string_pairs(params: &[(String, String)]) -> Vec<StringPair> {
    params
        .iter()
        .map(|(k, v)| StringPair {
            first: k.clone(),
            second: v.clone(),
        })
        .collect()
}

/// One channel (one HTTP/2 connection) to the server.
pub struct GrpcClient {
    rt: Arc<tokio::runtime::Runtime>,
    c: DbmServiceClient<Channel>,
    /// `--index`: every call's `dbm_index`.
    index: i32,
}

/// Runs one unary call on the client's runtime, with the gRPC error as the
/// outer one.
macro_rules! unary {
    ($self:ident, $method:ident, $req:expr) => {{
        let fut = $self.c.$method($req);
        $self
            .rt
            .block_on(fut)
            .map(tonic::Response::into_inner)
            .map_err(|s| anyhow!("{}: {}", stringify!($method), grpc_error(&s)))?
    }};
}

/// A gRPC error as words: its code and message.
fn grpc_error(s: &tonic::Status) -> String {
    format!("gRPC {:?}: {}", s.code(), s.message())
}

impl GrpcClient {
    /// Connects to `addr` (HOST:PORT, or an `http://` URL).
    pub fn connect(addr: &str, timeout: Option<Duration>, index: u32) -> Result<Self> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .context("starting the gRPC client's runtime")?;
        let url = if addr.contains("://") {
            addr.to_string()
        } else {
            format!("http://{addr}")
        };
        let mut ep = Endpoint::from_shared(url.clone())
            .with_context(|| format!("address {addr:?}"))?
            .tcp_nodelay(true);
        if let Some(t) = timeout {
            ep = ep.connect_timeout(t).timeout(t);
        }
        let ch = rt
            .block_on(ep.connect())
            .with_context(|| format!("connecting to {url} (gRPC)"))?;
        Ok(GrpcClient {
            rt: Arc::new(rt),
            c: DbmServiceClient::new(ch)
                .max_decoding_message_size(usize::MAX)
                .max_encoding_message_size(usize::MAX),
            index: index as i32,
        })
    }

    pub fn echo(&mut self, message: &str) -> Answer<String> {
        let r = unary!(
            self,
            echo,
            pb::EchoRequest {
                message: message.to_string()
            }
        );
        Ok(checked(r.status, r.echo))
    }

    pub fn inspect(&mut self) -> Answer<Vec<(String, String)>> {
        let r = unary!(
            self,
            inspect,
            pb::InspectRequest {
                dbm_index: self.index
            }
        );
        let recs = r.records.into_iter().map(|p| (p.first, p.second)).collect();
        Ok(checked(r.status, recs))
    }

    pub fn get(&mut self, key: &[u8]) -> Answer<Vec<u8>> {
        let r = unary!(
            self,
            get,
            pb::GetRequest {
                dbm_index: self.index,
                key: key.to_vec(),
                omit_value: false,
            }
        );
        Ok(checked(r.status, r.value))
    }

    /// The records found, and the status: NOT_FOUND_ERROR when some are
    /// missing (Tkrzw's tool prints what was found then; its perf fails).
    #[allow(clippy::type_complexity)]
    pub fn get_multi<K: AsRef<[u8]>>(
        &mut self,
        keys: &[K],
    ) -> Result<(
        Vec<(Vec<u8>, Vec<u8>)>,
        std::result::Result<(), RemoteError>,
    )> {
        let r = unary!(
            self,
            get_multi,
            pb::GetMultiRequest {
                dbm_index: self.index,
                keys: keys.iter().map(|k| k.as_ref().to_vec()).collect(),
            }
        );
        let recs = r.records.into_iter().map(|p| (p.first, p.second)).collect();
        Ok((recs, checked(r.status, ())))
    }

    pub fn set(&mut self, key: &[u8], value: &[u8], overwrite: bool) -> Answer<()> {
        let r = unary!(
            self,
            set,
            pb::SetRequest {
                dbm_index: self.index,
                key: key.to_vec(),
                value: value.to_vec(),
                overwrite,
            }
        );
        Ok(checked(r.status, ()))
    }

    pub fn set_multi<K: AsRef<[u8]>, V: AsRef<[u8]>>(
        &mut self,
        recs: &[(K, V)],
        overwrite: bool,
    ) -> Answer<()> {
        let r = unary!(
            self,
            set_multi,
            pb::SetMultiRequest {
                dbm_index: self.index,
                records: pairs(recs),
                overwrite,
            }
        );
        Ok(checked(r.status, ()))
    }

    pub fn append(&mut self, key: &[u8], value: &[u8], delim: &[u8]) -> Answer<()> {
        let r = unary!(
            self,
            append,
            pb::AppendRequest {
                dbm_index: self.index,
                key: key.to_vec(),
                value: value.to_vec(),
                delim: delim.to_vec(),
            }
        );
        Ok(checked(r.status, ()))
    }

    pub fn increment(&mut self, key: &[u8], increment: i64, initial: i64) -> Answer<i64> {
        let r = unary!(
            self,
            increment,
            pb::IncrementRequest {
                dbm_index: self.index,
                key: key.to_vec(),
                increment,
                initial,
            }
        );
        Ok(checked(r.status, r.current))
    }

    pub fn remove(&mut self, key: &[u8]) -> Answer<()> {
        let r = unary!(
            self,
            remove,
            pb::RemoveRequest {
                dbm_index: self.index,
                key: key.to_vec(),
            }
        );
        Ok(checked(r.status, ()))
    }

    pub fn remove_multi<K: AsRef<[u8]>>(&mut self, keys: &[K]) -> Answer<()> {
        let r = unary!(
            self,
            remove_multi,
            pb::RemoveMultiRequest {
                dbm_index: self.index,
                keys: keys.iter().map(|k| k.as_ref().to_vec()).collect(),
            }
        );
        Ok(checked(r.status, ()))
    }

    pub fn count(&mut self) -> Answer<i64> {
        let r = unary!(
            self,
            count,
            pb::CountRequest {
                dbm_index: self.index
            }
        );
        Ok(checked(r.status, r.count))
    }

    pub fn clear(&mut self) -> Answer<()> {
        let r = unary!(
            self,
            clear,
            pb::ClearRequest {
                dbm_index: self.index
            }
        );
        Ok(checked(r.status, ()))
    }

    pub fn rebuild(&mut self, params: &[(String, String)]) -> Answer<()> {
        let r = unary!(
            self,
            rebuild,
            pb::RebuildRequest {
                dbm_index: self.index,
                params: string_pairs(params),
            }
        );
        Ok(checked(r.status, ()))
    }

    pub fn synchronize(&mut self, hard: bool, params: &[(String, String)]) -> Answer<()> {
        let r = unary!(
            self,
            synchronize,
            pb::SynchronizeRequest {
                dbm_index: self.index,
                hard,
                params: string_pairs(params),
            }
        );
        Ok(checked(r.status, ()))
    }

    pub fn search(&mut self, mode: &str, pattern: &[u8], capacity: i32) -> Answer<Vec<Vec<u8>>> {
        let r = unary!(
            self,
            search,
            pb::SearchRequest {
                dbm_index: self.index,
                mode: mode.to_string(),
                pattern: pattern.to_vec(),
                capacity,
            }
        );
        Ok(checked(r.status, r.matched))
    }

    pub fn change_master(&mut self, master: &str, timestamp_skew: i64) -> Answer<()> {
        let r = unary!(
            self,
            change_master,
            pb::ChangeMasterRequest {
                master: master.to_string(),
                timestamp_skew,
            }
        );
        Ok(checked(r.status, ()))
    }

    /// Opens an `Iterate` stream: Tkrzw's remote iterator.
    pub fn iterator(&mut self) -> Iter {
        let mut c = self.c.clone();
        Iter {
            d: Duplex::open(&self.rt, "Iterate", move |rx| async move {
                c.iterate(ReceiverStream::new(rx)).await
            }),
            index: self.index,
        }
    }

    /// Opens a `Stream` call: single-record calls one after another.
    pub fn stream(&mut self) -> Stream {
        let mut c = self.c.clone();
        Stream {
            d: Duplex::open(&self.rt, "Stream", move |rx| async move {
                c.stream(ReceiverStream::new(rx)).await
            }),
            index: self.index,
        }
    }
}

/// Records as the service's byte pairs.
fn pairs<K: AsRef<[u8]>, V: AsRef<[u8]>>(recs: &[(K, V)]) -> Vec<BytesPair> {
    recs.iter()
        .map(|(k, v)| BytesPair {
            first: k.as_ref().to_vec(),
            second: v.as_ref().to_vec(),
        })
        .collect()
}

type Opened<A> = std::result::Result<tonic::Response<tonic::Streaming<A>>, tonic::Status>;

/// A bidirectional call driven from blocking code: requests go into a
/// channel the call reads; the call itself runs as a task on the client's
/// runtime, which every blocking wait drives.
struct Duplex<Q, A> {
    rt: Arc<tokio::runtime::Runtime>,
    name: &'static str,
    tx: tokio::sync::mpsc::Sender<Q>,
    call: Option<tokio::task::JoinHandle<Opened<A>>>,
    rx: Option<tonic::Streaming<A>>,
}

impl<Q: Send + 'static, A: Send + 'static> Duplex<Q, A> {
    fn open<F, Fut>(rt: &Arc<tokio::runtime::Runtime>, name: &'static str, start: F) -> Self
    where
        F: FnOnce(tokio::sync::mpsc::Receiver<Q>) -> Fut,
        Fut: std::future::Future<Output = Opened<A>> + Send + 'static,
    {
        let (tx, rx) = tokio::sync::mpsc::channel(64);
        Duplex {
            rt: rt.clone(),
            name,
            tx,
            call: Some(rt.spawn(start(rx))),
            rx: None,
        }
    }

    /// Sends a request (and, the first time, waits for the call's answer
    /// to begin: a refused call, UNIMPLEMENTED, is the error then).
    fn send(&mut self, q: Q) -> Result<()> {
        let (rt, name) = (self.rt.clone(), self.name);
        rt.block_on(self.tx.send(q))
            .map_err(|_| anyhow!("{name}: the stream ended"))?;
        if let Some(call) = self.call.take() {
            let resp = rt
                .block_on(call)
                .context(name)?
                .map_err(|s| anyhow!("{name}: {}", grpc_error(&s)))?;
            self.rx = Some(resp.into_inner());
        }
        Ok(())
    }

    /// Ends the requests and waits for the server to end its answers (so
    /// calls sent without an answer have been done).
    fn close(mut self) -> Result<()> {
        let (rt, name) = (self.rt.clone(), self.name);
        drop(self.tx);
        if let Some(rx) = self.rx.as_mut() {
            while rt
                .block_on(rx.message())
                .map_err(|s| anyhow!("{name}: {}", grpc_error(&s)))?
                .is_some()
            {}
        }
        Ok(())
    }

    /// The next answer.
    fn recv(&mut self) -> Result<A> {
        let (rt, name) = (self.rt.clone(), self.name);
        let rx = self
            .rx
            .as_mut()
            .ok_or_else(|| anyhow!("{name}: nothing sent"))?;
        rt.block_on(rx.message())
            .map_err(|s| anyhow!("{name}: {}", grpc_error(&s)))?
            .ok_or_else(|| anyhow!("{name}: the server ended the stream"))
    }
}

/// An `Iterate` stream: each operation sent is answered by one response.
pub struct Iter {
    d: Duplex<IterateRequest, IterateResponse>,
    index: i32,
}

impl Iter {
    /// Sends operation `op` and returns its answer: the record's key and
    /// value where it gives them.
    pub fn op(&mut self, op: OpType, key: &[u8], inclusive: bool) -> Answer<(Vec<u8>, Vec<u8>)> {
        self.d.send(IterateRequest {
            dbm_index: self.index,
            operation: op as i32,
            key: key.to_vec(),
            value: Vec::new(),
            jump_inclusive: inclusive,
            omit_key: false,
            omit_value: false,
        })?;
        let r = self.d.recv()?;
        Ok(checked(r.status, (r.key, r.value)))
    }
}

/// A `Stream` call: Echo, Get, Set, Remove, ... one after another.
pub struct Stream {
    d: Duplex<pb::StreamRequest, pb::StreamResponse>,
    index: i32,
}

/// The status of a Stream call's answer.
fn stream_status(r: pb::StreamResponse) -> std::result::Result<(), RemoteError> {
    use pb::stream_response::ResponseOneof as A;
    let status = match r.response_oneof {
        Some(A::EchoResponse(a)) => a.status,
        Some(A::GetResponse(a)) => a.status,
        Some(A::SetResponse(a)) => a.status,
        Some(A::RemoveResponse(a)) => a.status,
        Some(A::AppendResponse(a)) => a.status,
        Some(A::CompareExchangeResponse(a)) => a.status,
        Some(A::IncrementResponse(a)) => a.status,
        None => None,
    };
    checked(status, ())
}

impl Stream {
    /// Ends the stream once the server has done every call sent.
    pub fn close(self) -> Result<()> {
        self.d.close()
    }

    /// Sends one call; with `omit_response` nothing comes back (Ok).
    fn call(&mut self, q: pb::stream_request::RequestOneof, omit_response: bool) -> Answer<()> {
        self.d.send(pb::StreamRequest {
            request_oneof: Some(q),
            omit_response,
        })?;
        if omit_response {
            return Ok(Ok(()));
        }
        Ok(stream_status(self.d.recv()?))
    }

    pub fn echo(&mut self, message: &[u8]) -> Answer<()> {
        let message = String::from_utf8_lossy(message).into_owned();
        self.call(
            pb::stream_request::RequestOneof::EchoRequest(pb::EchoRequest { message }),
            false,
        )
    }

    pub fn get(&mut self, key: &[u8]) -> Answer<()> {
        let q = pb::GetRequest {
            dbm_index: self.index,
            key: key.to_vec(),
            omit_value: false,
        };
        self.call(pb::stream_request::RequestOneof::GetRequest(q), false)
    }

    pub fn set(&mut self, key: &[u8], value: &[u8], omit_response: bool) -> Answer<()> {
        let q = pb::SetRequest {
            dbm_index: self.index,
            key: key.to_vec(),
            value: value.to_vec(),
            overwrite: true,
        };
        self.call(
            pb::stream_request::RequestOneof::SetRequest(q),
            omit_response,
        )
    }

    pub fn remove(&mut self, key: &[u8], omit_response: bool) -> Answer<()> {
        let q = pb::RemoveRequest {
            dbm_index: self.index,
            key: key.to_vec(),
        };
        self.call(
            pb::stream_request::RequestOneof::RemoveRequest(q),
            omit_response,
        )
    }
}
