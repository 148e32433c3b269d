//! `tkrzw_rpc.DBMService` over the command layer. Each record call is one
//! command on the database `dbm_index` names; after a call that writes, that
//! database's writes are handed to the OS (no connection batch does it on
//! this port) and, with `--sync-replicas`, the answer waits for the replicas
//! as the other ports' do. Clear, a hard Synchronize (or one making a backup),
//! Rebuild and Search run off the workers within `crate::exec::slow`'s bounds.

use super::pb::dbm_service_server::DbmService;
use super::pb::stream_request::RequestOneof;
use super::pb::stream_response::ResponseOneof;
use super::pb::*;
use super::signal::Signals;
use super::status::{self, code_of, is_ok, of, of_error, of_outcome, of_slow};
use super::streams::{serve, Answering};
use crate::command::{Delete, Flush, Get, GetMany, Outcome, Search};
use crate::command::{Store, StoreKind, StoreMany};
use crate::exec::{self, slow::check_pattern, slow::ConnSlots, slow::SlowError};
use crate::state::server::Server;
use bytes::Bytes;
use memstored_engine::status::code;
use memstored_engine::{BatchPut, SearchMode};
use std::pin::Pin;
use std::sync::Arc;
use tonic::codegen::tokio_stream::Stream;
use tonic::{Request, Response, Status};

/// The service: the server (its first database; `others` are the rest) and
/// the port's slow calls.
pub struct Dbm {
    pub(super) srv: Arc<Server>,
    /// Slow calls of the whole port, at most `exec::slow::PER_CONNECTION`
    /// queued or running at once (and `SERVER_WIDE` with every port's).
    slow: ConnSlots,
    /// Wake-ups of the calls that wait (`retry_wait`), shared by the
    /// port's streams.
    pub(super) signals: Arc<Signals>,
}

pub(super) type Answer<T> = Result<Response<T>, Status>;
pub(super) type Streamed<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

pub(super) fn answer<T>(t: T) -> Answer<T> {
    Ok(Response::new(t))
}

/// Tkrzw's status of a store: DUPLICATION_ERROR for an existing record
/// without `overwrite`, NOT_FOUND_ERROR never.
fn store(srv: &Server, key: Bytes, value: Bytes, overwrite: bool) -> Option<StatusProto> {
    let cmd = Store {
        key,
        value,
        kind: if overwrite {
            StoreKind::Set
        } else {
            StoreKind::Add
        },
        flags: 0,
        expires_at: 0,
        cas: None,
    };
    of_outcome(cmd.apply(srv))
}

/// SetMulti with `overwrite`: the records as one batch (`StoreMany`: each
/// shard's lock taken once), stopping at a refused record as the loop of
/// sets before it did (the records before it stored).
fn set_many(srv: &Server, records: &[BytesPair]) -> Option<StatusProto> {
    let puts: Vec<BatchPut<'_>> = records
        .iter()
        .map(|p| BatchPut {
            key: &p.first,
            value: &p.second,
            flags: 0,
            expires_at: 0,
        })
        .collect();
    match (StoreMany { records: &puts }).apply(srv) {
        Ok(_) => status::ok(),
        Err((_, o)) => of_outcome(o),
    }
}

/// Tkrzw's Append: `value` after `delim` onto the present value, or `value`
/// as a new record.
fn append(srv: &Server, key: Bytes, value: Bytes, delim: &[u8]) -> Option<StatusProto> {
    let cmd = Store {
        key,
        value,
        kind: StoreKind::AppendOrSet { expires_at: None },
        flags: 0,
        expires_at: 0,
        cas: None,
    };
    of_outcome(cmd.apply_delimited(srv, delim))
}

/// Runs `each` over `items` as Tkrzw's `*Multi` calls do: on past a status
/// in `tolerated` (kept, if it is the first failure), stopping at any other.
fn multi<I>(
    items: impl IntoIterator<Item = I>,
    tolerated: i32,
    mut each: impl FnMut(I) -> Option<StatusProto>,
) -> Option<StatusProto> {
    let mut first = status::ok();
    for item in items {
        let st = each(item);
        if is_ok(&st) {
            continue;
        }
        let stop = code_of(&st) != tolerated;
        if is_ok(&first) {
            first = st;
        }
        if stop {
            break;
        }
    }
    first
}

/// The size GetFileSize gives: the files' size, or the bytes held in memory
/// for an in-memory database.
fn file_size(db: &memstored_engine::Db) -> u64 {
    if db.name().kind.has_file() {
        db.stats().file_size
    } else {
        db.stats().bytes
    }
}

/// `make_backup` among Synchronize's parameters: the backup's suffix
/// (empty: the UTC time, `YYYYMMDDhhmmss`).
fn backup_suffix(params: &[StringPair]) -> Option<String> {
    // tkrzw_server keeps only `[-_.0-9a-zA-Z]` of the suffix it is given.
    let clean = |s: &str| {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            .collect()
    };
    params
        .iter()
        .find(|p| p.first == "make_backup")
        .map(|p| clean(&p.second))
}

/// Tkrzw's file databases take no `reducer` (its on-memory ones sort and
/// reduce their records with one when they write their file): the
/// INVALID_ARGUMENT_ERROR tkrzw_server answers for one.
fn refused_param(db: &memstored_engine::Db, params: &[StringPair]) -> Option<StatusProto> {
    let file = matches!(
        db.name().kind,
        memstored_engine::EngineKind::FileHash | memstored_engine::EngineKind::FileTree
    );
    (file && params.iter().any(|p| p.first == "reducer"))
        .then(|| {
            of(
                code::INVALID_ARGUMENT_ERROR,
                "unsupported parameter: reducer",
            )
        })
        .flatten()
}

impl Dbm {
    pub fn new(srv: Arc<Server>) -> Dbm {
        let databases = crate::state::databases::all(&srv).len();
        Dbm {
            srv,
            slow: ConnSlots::default(),
            signals: Arc::new(Signals::new(databases)),
        }
    }

    /// A service for one stream's calls: the same server and signals (the
    /// stream's calls are all quick ones: no slow-call places needed).
    pub(super) fn sibling(&self) -> Dbm {
        Dbm {
            srv: self.srv.clone(),
            slow: ConnSlots::default(),
            signals: self.signals.clone(),
        }
    }

    /// The server of database `dbm_index`, or tkrzw_server's refusal.
    pub(super) fn target(&self, dbm_index: i32) -> Result<&Arc<Server>, Status> {
        usize::try_from(dbm_index)
            .ok()
            .and_then(|i| crate::state::databases::nth(&self.srv, i))
            .ok_or_else(|| Status::invalid_argument("dbm_index is out of range"))
    }

    /// Runs `apply`, a call that may write on `target`, then hands its writes
    /// to the OS and waits for the replicas where `--sync-replicas` says so.
    pub(super) async fn written(
        &self,
        target: &Server,
        apply: impl FnOnce() -> Option<StatusProto>,
    ) -> Option<StatusProto> {
        memstored_engine::ulog::take_last_appended();
        let st = apply();
        let wrote = memstored_engine::ulog::take_last_appended();
        if let Err(e) = target.db.flush_dirty() {
            tracing::error!("flushing {:?}: {e}", target.cfg.store);
            return of_error(e);
        }
        self.srv.replication.before_replies(wrote).await;
        st
    }

    /// Runs `work` off the workers (`crate::exec::slow`), then hands its
    /// writes to the OS; `Err`: the call was refused or failed as a slow call.
    async fn slow<T: Send + 'static>(
        &self,
        target: &Arc<Server>,
        work: impl FnOnce(&Arc<Server>) -> T + Send + 'static,
    ) -> Result<T, Option<StatusProto>> {
        let ticket = self.slow.admit(&self.srv).map_err(of_slow)?;
        let t = target.clone();
        let done = ticket
            .run(move || Ok::<_, SlowError>(work(&t)))
            .await
            .map_err(of_slow)?;
        target.db.flush_dirty().map_err(of_error)?;
        Ok(done)
    }

    /// [`Dbm::slow`] of a call whose answer is its status alone.
    async fn slow_status(
        &self,
        target: &Arc<Server>,
        work: impl FnOnce(&Arc<Server>) -> Option<StatusProto> + Send + 'static,
    ) -> Option<StatusProto> {
        self.slow(target, work).await.unwrap_or_else(|st| st)
    }
}

#[tonic::async_trait]
impl DbmService for Dbm {
    async fn echo(&self, request: Request<EchoRequest>) -> Answer<EchoResponse> {
        answer(EchoResponse {
            status: status::ok(),
            echo: request.into_inner().message,
        })
    }

    async fn inspect(&self, request: Request<InspectRequest>) -> Answer<InspectResponse> {
        let index = request.into_inner().dbm_index;
        let pair = |first: String, second: String| StringPair { first, second };
        let records = if index >= 0 {
            let db = &self.target(index)?.db;
            db.inspect()
                .into_iter()
                .map(|(k, v)| match k.as_str() {
                    "class" => pair(k, db.name().tkrzw_class().to_string()),
                    _ => pair(k, v),
                })
                .collect()
        } else {
            let dbs = crate::state::databases::all(&self.srv);
            let mut out = vec![
                pair(
                    "version".into(),
                    format!("memstored {}", crate::MEMSTORED_VERSION),
                ),
                pair("num_dbms".into(), dbs.len().to_string()),
            ];
            for (i, db) in dbs.iter().enumerate() {
                out.push(pair(format!("dbm_{i}_path"), db.name().path.clone()));
                out.push(pair(format!("dbm_{i}_count"), db.count().to_string()));
                out.push(pair(
                    format!("dbm_{i}_class"),
                    db.name().tkrzw_class().to_string(),
                ));
            }
            out
        };
        answer(InspectResponse {
            status: status::ok(),
            records,
        })
    }

    async fn get(&self, request: Request<GetRequest>) -> Answer<GetResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        answer(match Get::new(r.key).apply(target) {
            Outcome::Found(rec) => GetResponse {
                status: status::ok(),
                value: if r.omit_value {
                    Bytes::new()
                } else {
                    rec.value
                },
            },
            o => GetResponse {
                status: of_outcome(o),
                value: Bytes::new(),
            },
        })
    }

    /// The records found, sorted by key and each once (tkrzw_server answers
    /// from a `std::map`); NOT_FOUND_ERROR when any key is absent. A reply
    /// over the port's message limit is refused (INFEASIBLE_ERROR).
    async fn get_multi(&self, request: Request<GetMultiRequest>) -> Answer<GetMultiResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        let mut keys = r.keys;
        keys.sort();
        keys.dedup();
        let mut records = Vec::with_capacity(keys.len());
        let mut st = status::ok();
        let mut total = 0usize;
        // One batch: each shard's lock taken once for all of its keys.
        let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_ref()).collect();
        match (GetMany { keys: &refs }).apply(target) {
            Ok(found) => {
                for (key, rec) in keys.iter().zip(found) {
                    let Some(rec) = rec else {
                        if is_ok(&st) {
                            st = of(code::NOT_FOUND_ERROR, "");
                        }
                        continue;
                    };
                    total = total.saturating_add(key.len() + rec.value.len());
                    records.push(BytesPair {
                        first: key.clone(),
                        second: rec.value,
                    });
                }
            }
            Err(o) => st = of_outcome(o),
        }
        let limit = target.max_message();
        if total > limit {
            records.clear();
            st = of(
                code::INFEASIBLE_ERROR,
                format!("the reply would hold {total} bytes, over the limit of {limit}"),
            );
        }
        answer(GetMultiResponse {
            status: st,
            records,
        })
    }

    async fn set(&self, request: Request<SetRequest>) -> Answer<SetResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        let st = self
            .written(target, || store(target, r.key, r.value, r.overwrite))
            .await;
        answer(SetResponse { status: st })
    }

    async fn set_multi(&self, request: Request<SetMultiRequest>) -> Answer<SetMultiResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        let st = self
            .written(target, || {
                if r.overwrite {
                    return set_many(target, &r.records);
                }
                multi(r.records, code::DUPLICATION_ERROR, |p| {
                    store(target, p.first, p.second, false)
                })
            })
            .await;
        answer(SetMultiResponse { status: st })
    }

    async fn remove(&self, request: Request<RemoveRequest>) -> Answer<RemoveResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        let cmd = Delete {
            key: r.key,
            cas: None,
        };
        let st = self.written(target, || of_outcome(cmd.apply(target))).await;
        answer(RemoveResponse { status: st })
    }

    async fn remove_multi(
        &self,
        request: Request<RemoveMultiRequest>,
    ) -> Answer<RemoveMultiResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        let st = self
            .written(target, || {
                multi(r.keys, code::NOT_FOUND_ERROR, |key| {
                    of_outcome(Delete { key, cas: None }.apply(target))
                })
            })
            .await;
        answer(RemoveMultiResponse { status: st })
    }

    async fn append(&self, request: Request<AppendRequest>) -> Answer<AppendResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        let st = self
            .written(target, || append(target, r.key, r.value, &r.delim))
            .await;
        answer(AppendResponse { status: st })
    }

    async fn append_multi(
        &self,
        request: Request<AppendMultiRequest>,
    ) -> Answer<AppendMultiResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        let st = self
            .written(target, || {
                multi(r.records, code::SUCCESS, |p| {
                    append(target, p.first, p.second, &r.delim)
                })
            })
            .await;
        answer(AppendMultiResponse { status: st })
    }

    async fn compare_exchange(
        &self,
        request: Request<CompareExchangeRequest>,
    ) -> Answer<CompareExchangeResponse> {
        self.compare_exchange_call(request.into_inner()).await
    }

    async fn increment(&self, request: Request<IncrementRequest>) -> Answer<IncrementResponse> {
        self.increment_call(request.into_inner()).await
    }

    async fn compare_exchange_multi(
        &self,
        request: Request<CompareExchangeMultiRequest>,
    ) -> Answer<CompareExchangeMultiResponse> {
        self.compare_exchange_multi_call(request.into_inner()).await
    }

    async fn rekey(&self, request: Request<RekeyRequest>) -> Answer<RekeyResponse> {
        self.rekey_call(request.into_inner()).await
    }

    async fn pop_first(&self, request: Request<PopFirstRequest>) -> Answer<PopFirstResponse> {
        self.pop_first_call(request.into_inner()).await
    }

    async fn push_last(&self, request: Request<PushLastRequest>) -> Answer<PushLastResponse> {
        self.push_last_call(request.into_inner()).await
    }

    async fn count(&self, request: Request<CountRequest>) -> Answer<CountResponse> {
        let target = self.target(request.into_inner().dbm_index)?;
        answer(CountResponse {
            status: status::ok(),
            count: i64::try_from(target.db.count()).unwrap_or(i64::MAX),
        })
    }

    async fn get_file_size(
        &self,
        request: Request<GetFileSizeRequest>,
    ) -> Answer<GetFileSizeResponse> {
        let target = self.target(request.into_inner().dbm_index)?;
        answer(GetFileSizeResponse {
            status: status::ok(),
            file_size: i64::try_from(file_size(&target.db)).unwrap_or(i64::MAX),
        })
    }

    /// memcached's `flush_all` on that database (same counter, same `-F`
    /// and read-only refusals), off the workers.
    async fn clear(&self, request: Request<ClearRequest>) -> Answer<ClearResponse> {
        let target = self.target(request.into_inner().dbm_index)?;
        let cmd = Flush {
            delay: 0,
            count_refused: true,
        };
        let st = self
            .slow_status(target, move |t| of_outcome(cmd.apply(t)))
            .await;
        answer(ClearResponse { status: st })
    }

    async fn rebuild(&self, request: Request<RebuildRequest>) -> Answer<RebuildResponse> {
        let target = self.target(request.into_inner().dbm_index)?;
        let st = self
            .slow_status(target, |t| match t.db.rebuild() {
                Ok(()) => status::ok(),
                Err(e) => of_error(e),
            })
            .await;
        answer(RebuildResponse { status: st })
    }

    async fn should_be_rebuilt(
        &self,
        request: Request<ShouldBeRebuiltRequest>,
    ) -> Answer<ShouldBeRebuiltResponse> {
        let target = self.target(request.into_inner().dbm_index)?;
        answer(ShouldBeRebuiltResponse {
            status: status::ok(),
            tobe: target.db.should_be_rebuilt(),
        })
    }

    /// `hard`: fsync. The `make_backup` parameter also writes a consistent
    /// copy `PATH.backup.SUFFIX` (empty: the UTC time); `reducer` is refused
    /// on a file database, as there; other parameters are ignored. A hard one or one with a backup runs off the workers.
    async fn synchronize(
        &self,
        request: Request<SynchronizeRequest>,
    ) -> Answer<SynchronizeResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        if let Some(st) = refused_param(&target.db, &r.params) {
            return answer(SynchronizeResponse { status: Some(st) });
        }
        let backup = backup_suffix(&r.params);
        if backup.is_some() && !target.db.is_writable() {
            // A read-only server writes no file, backups included.
            return answer(SynchronizeResponse {
                status: of_outcome(Outcome::ReadOnly),
            });
        }
        let (hard, slow) = (r.hard, r.hard || backup.is_some());
        let work = move |t: &Arc<Server>| {
            if let Err(e) = t.db.synchronize(hard) {
                return of_error(e);
            }
            match backup.map(|suffix| t.db.backup(&suffix)) {
                Some(Err(e)) => of_error(e),
                _ => status::ok(),
            }
        };
        let st = if slow {
            self.slow_status(target, work).await
        } else {
            work(target)
        };
        answer(SynchronizeResponse { status: st })
    }

    /// Tkrzw's modes (begin contain containcase end regex edit editbin upper
    /// upperinc lower lowerinc), up to `capacity` keys (0: all), off the
    /// workers within `exec::slow`'s bounds (pattern length, regex size,
    /// `--search-timeout`). Keys over the message limit are INFEASIBLE_ERROR.
    async fn search(&self, request: Request<SearchRequest>) -> Answer<SearchResponse> {
        let r = request.into_inner();
        let target = self.target(r.dbm_index)?;
        let reply = |status, matched| answer(SearchResponse { status, matched });
        let mode = match SearchMode::parse(&r.mode) {
            Ok(m) => m,
            Err(e) => return reply(of(code::INVALID_ARGUMENT_ERROR, e.to_string()), Vec::new()),
        };
        let max = usize::try_from(r.capacity).unwrap_or(0);
        let found = self
            .slow(target, move |t| {
                let pattern = check_pattern(&r.pattern)?;
                let cmd = Search::Matching { mode, pattern, max };
                exec::slow::search(t, |limits| cmd.apply(t, limits))
            })
            .await;
        let keys = match found {
            Ok(Ok(keys)) => keys,
            // As Tkrzw's hash database answers upper/lower: no message.
            Ok(Err(SlowError::Engine(memstored_engine::Error::NotImplemented(_)))) => {
                return reply(of(code::NOT_IMPLEMENTED_ERROR, ""), Vec::new())
            }
            Ok(Err(e)) => return reply(of_slow(e), Vec::new()),
            Err(st) => return reply(st, Vec::new()),
        };
        let total = keys
            .iter()
            .map(Vec::len)
            .fold(0usize, usize::saturating_add);
        let limit = target.max_message();
        if total > limit {
            let why = format!("the keys found hold {total} bytes, over the limit of {limit}");
            return reply(of(code::INFEASIBLE_ERROR, why), Vec::new());
        }
        reply(status::ok(), keys.into_iter().map(Bytes::from).collect())
    }

    type StreamStream = Streamed<StreamResponse>;

    /// Single-record calls one after another on one stream, each answered
    /// in order unless it says `omit_response`. A call the unary method
    /// would refuse with a gRPC error (`dbm_index` out of range) ends the
    /// stream with that error; so does a request naming no call. The stream
    /// ends when the client ends it or the server stops.
    async fn stream(
        &self,
        request: Request<tonic::Streaming<StreamRequest>>,
    ) -> Answer<Self::StreamStream> {
        let calls = StreamCalls {
            dbm: self.sibling(),
        };
        let stop = self.srv.shutdown.clone();
        Ok(Response::new(serve(calls, request.into_inner(), stop)))
    }

    type IterateStream = Streamed<IterateResponse>;

    async fn iterate(
        &self,
        request: Request<tonic::Streaming<IterateRequest>>,
    ) -> Answer<Self::IterateStream> {
        Ok(Response::new(self.iterate_stream(request.into_inner())))
    }

    type ReplicateStream = Streamed<ReplicateResponse>;

    async fn replicate(&self, request: Request<ReplicateRequest>) -> Answer<Self::ReplicateStream> {
        let peer = request
            .remote_addr()
            .map_or_else(|| "?".to_string(), |a| a.to_string());
        let rx = super::replicate::start(&self.srv, request.get_ref(), peer)?;
        answer(
            Box::pin(tonic::codegen::tokio_stream::wrappers::ReceiverStream::new(
                rx,
            )) as Self::ReplicateStream,
        )
    }

    /// Follow `master` over gRPC from now on (empty: follow nobody, and
    /// take client writes), the position moved by `timestamp_skew`
    /// milliseconds (Tkrzw's sign: negative steps back).
    async fn change_master(
        &self,
        request: Request<ChangeMasterRequest>,
    ) -> Answer<ChangeMasterResponse> {
        let r = request.into_inner();
        let back_ms = u64::try_from(r.timestamp_skew.saturating_neg()).unwrap_or(0);
        let cmd = crate::command::ChangeMaster {
            master: r.master.trim().to_string(),
            skew_us: back_ms.saturating_mul(1000),
        };
        let status = match cmd.apply(&self.srv) {
            Ok(()) => status::ok(),
            Err(why) => of(code::PRECONDITION_ERROR, why),
        };
        answer(ChangeMasterResponse { status })
    }
}

/// The calls of one Stream.
struct StreamCalls {
    dbm: Dbm,
}

impl Answering for StreamCalls {
    type Req = StreamRequest;
    type Resp = StreamResponse;

    async fn answer(&mut self, req: StreamRequest) -> Result<Option<StreamResponse>, Status> {
        let Some(call) = req.request_oneof else {
            return Err(Status::invalid_argument("a stream request names no call"));
        };
        let one = self.dbm.stream_call(call).await?;
        Ok((!req.omit_response).then_some(StreamResponse {
            response_oneof: Some(one),
        }))
    }
}

impl Dbm {
    /// One call of a Stream, as its unary method answers it.
    async fn stream_call(&self, call: RequestOneof) -> Result<ResponseOneof, Status> {
        use Request as R;
        use RequestOneof as Q;
        use ResponseOneof as A;
        Ok(match call {
            Q::EchoRequest(q) => A::EchoResponse(self.echo(R::new(q)).await?.into_inner()),
            Q::GetRequest(q) => A::GetResponse(self.get(R::new(q)).await?.into_inner()),
            Q::SetRequest(q) => A::SetResponse(self.set(R::new(q)).await?.into_inner()),
            Q::RemoveRequest(q) => A::RemoveResponse(self.remove(R::new(q)).await?.into_inner()),
            Q::AppendRequest(q) => A::AppendResponse(self.append(R::new(q)).await?.into_inner()),
            // As tkrzw_server's Stream: no retry_wait, no notify.
            Q::CompareExchangeRequest(q) => {
                A::CompareExchangeResponse(self.compare_exchange_once(&q).await?)
            }
            Q::IncrementRequest(q) => {
                A::IncrementResponse(self.increment(R::new(q)).await?.into_inner())
            }
        })
    }
}
