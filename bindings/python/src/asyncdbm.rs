//! `AsyncDBM` and `Future`: tkrzw-python's asynchronous calls. Each call
//! copies its arguments, queues the work for a pool of threads and returns
//! a `Future` at once; `Future.Get` (or `await future`) waits for it with
//! the GIL released and gives the result as tkrzw-python does: a Status, or
//! a tuple of a Status and the value(s).

use crate::status::Status;
use bytes::Bytes;
use memstored_engine::Db;
use parking_lot::{Condvar, Mutex};
use pyo3::exceptions::PyStopIteration;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What an asynchronous call produced, before it becomes Python objects.
pub enum Outcome {
    Status(Status),
    /// A value (empty on failure, as tkrzw-python gives it).
    Value(Status, Vec<u8>),
    Int(Status, i64),
    /// A key and a value (PopFirst).
    Pair(Status, Vec<u8>, Vec<u8>),
    Map(Status, Vec<(Vec<u8>, Bytes)>),
    List(Status, Vec<Vec<u8>>),
}

impl Outcome {
    fn to_py<'py>(&self, py: Python<'py>, as_str: bool) -> PyResult<Bound<'py, PyAny>> {
        let conv = |b: &[u8]| crate::convert::to_py(py, b, as_str);
        let st = |s: &Status| Bound::new(py, s.clone()).map(Bound::into_any);
        Ok(match self {
            Outcome::Status(s) => st(s)?,
            Outcome::Value(s, v) => PyTuple::new(py, [st(s)?, conv(v)])?.into_any(),
            Outcome::Int(s, n) => {
                PyTuple::new(py, [st(s)?, n.into_pyobject(py)?.into_any()])?.into_any()
            }
            Outcome::Pair(s, k, v) => PyTuple::new(py, [st(s)?, conv(k), conv(v)])?.into_any(),
            Outcome::Map(s, recs) => {
                let d = PyDict::new(py);
                for (k, v) in recs {
                    d.set_item(conv(k), conv(v))?;
                }
                PyTuple::new(py, [st(s)?, d.into_any()])?.into_any()
            }
            Outcome::List(s, items) => {
                let t = PyTuple::new(py, items.iter().map(|i| conv(i)))?;
                PyTuple::new(py, [st(s)?, t.into_any()])?.into_any()
            }
        })
    }
}

/// Where a worker leaves an outcome and a `Future` waits for it.
#[derive(Default)]
struct Slot {
    outcome: Mutex<Option<Outcome>>,
    done: Condvar,
}

impl Slot {
    fn fill(&self, o: Outcome) {
        *self.outcome.lock() = Some(o);
        self.done.notify_all();
    }

    /// Waits until filled or `timeout` passes (None: no limit).
    fn wait(&self, timeout: Option<Duration>) -> bool {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut o = self.outcome.lock();
        while o.is_none() {
            match deadline {
                None => self.done.wait(&mut o),
                Some(d) => {
                    if self.done.wait_until(&mut o, d).timed_out() {
                        return o.is_some();
                    }
                }
            }
        }
        true
    }
}

/// The result of an asynchronous call; awaitable.
#[pyclass(module = "memstored", name = "Future", frozen)]
pub struct Future {
    slot: Arc<Slot>,
    as_str: bool,
}

#[pymethods]
impl Future {
    /// Waits up to `timeout` seconds (negative: without limit); whether done.
    #[pyo3(name = "Wait", signature = (timeout = -1.0))]
    fn wait(&self, py: Python<'_>, timeout: f64) -> bool {
        let t = (timeout >= 0.0).then(|| Duration::from_secs_f64(timeout));
        py.detach(|| self.slot.wait(t))
    }

    /// Waits, then the result: a Status, or (Status, value...).
    #[pyo3(name = "Get")]
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        py.detach(|| self.slot.wait(None));
        let o = self.slot.outcome.lock();
        match o.as_ref() {
            Some(o) => o.to_py(py, self.as_str),
            None => Err(
                Status::new(memstored_engine::status::code::UNKNOWN_ERROR, "no result").into_err(),
            ),
        }
    }

    fn __await__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    /// The awaited result: waits (GIL released), then ends the iteration
    /// with the result as its value, so `await f` gives `f.Get()`.
    fn __next__(&self, py: Python<'_>) -> PyResult<()> {
        let r = self.get(py)?;
        Err(PyStopIteration::new_err((r.unbind(),)))
    }

    fn __repr__(&self) -> String {
        format!("<memstored.Future: {:p}>", Arc::as_ptr(&self.slot))
    }

    fn __str__(&self) -> String {
        format!("Future:{:p}", Arc::as_ptr(&self.slot))
    }
}

type Job = Box<dyn FnOnce() + Send>;

struct Pool {
    queue: mpsc::Sender<Job>,
    workers: Vec<JoinHandle<()>>,
}

impl Pool {
    fn new(n: usize) -> Pool {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let workers = (0..n.max(1))
            .map(|_| {
                let rx = rx.clone();
                std::thread::spawn(move || loop {
                    let job = rx.lock().recv();
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                })
            })
            .collect();
        Pool { queue: tx, workers }
    }

    /// Lets the queued work finish, then ends the threads.
    fn shut(self) {
        drop(self.queue);
        for w in self.workers {
            let _ = w.join();
        }
    }
}

/// A database's calls run by a pool of threads.
#[pyclass(module = "memstored", name = "AsyncDBM", frozen)]
pub struct AsyncDbm {
    pub db: Arc<Db>,
    pool: Mutex<Option<Pool>>,
    threads: usize,
}

fn destructed() -> Status {
    Status::new(
        memstored_engine::status::code::PRECONDITION_ERROR,
        "the AsyncDBM is destructed",
    )
}

impl AsyncDbm {
    pub fn new(db: Arc<Db>, threads: usize) -> AsyncDbm {
        AsyncDbm {
            db,
            pool: Mutex::new(Some(Pool::new(threads))),
            threads: threads.max(1),
        }
    }

    /// Queues `f` over the database; its outcome goes to the Future.
    pub fn submit(&self, as_str: bool, f: impl FnOnce(&Db) -> Outcome + Send + 'static) -> Future {
        let slot = Arc::new(Slot::default());
        let (db, s) = (self.db.clone(), slot.clone());
        let job: Job = Box::new(move || s.fill(f(&db)));
        let sent = match self.pool.lock().as_ref() {
            Some(p) => p.queue.send(job).is_ok(),
            None => false,
        };
        if !sent {
            slot.fill(Outcome::Status(destructed()));
        }
        Future { slot, as_str }
    }

    /// Ends the threads after the queued work (AsyncDBM.Destruct).
    pub fn destruct(&self, py: Python<'_>) {
        let pool = self.pool.lock().take();
        if let Some(p) = pool {
            py.detach(|| p.shut());
        }
    }

    pub fn describe(&self) -> String {
        format!("<memstored.AsyncDBM: num_threads={}>", self.threads)
    }
}

impl Drop for AsyncDbm {
    fn drop(&mut self) {
        if let Some(p) = self.pool.get_mut().take() {
            p.shut();
        }
    }
}
