//! Thread-per-core scheduling (`--scheduler per-core`, issue 15): each
//! worker thread runs its own single-threaded tokio runtime with its own
//! epoll, and a connection, once accepted, lives on one worker for life.
//!
//! Why: on tokio's shared (work-stealing) runtime a connection's task may be
//! woken on one thread and run on another, and an idle worker is woken to
//! steal; the profile of the seed-000 run (docs/bench/server-notes.md) put
//! the runtime's scheduling and readiness code at 7-9% of the server's CPU.
//! Pinning connections to a worker is memcached's model (a libevent loop
//! per thread, connections handed over by the listener): the only
//! cross-thread step left is the hand-over at accept.
//!
//! The accept loops stay on the main runtime (`listener.rs`); they hand each
//! accepted socket to the next worker in turn, which registers it with its
//! own reactor. The connection limit is checked before the hand-over, so
//! the hand-over queues hold at most `-c` sockets.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// What a worker runs: a closure that spawns a connection's task on the
/// worker's runtime (it is called inside it).
pub type Job = Box<dyn FnOnce() + Send>;

/// The worker threads of the per-core scheduler.
pub struct Workers {
    queues: Vec<mpsc::UnboundedSender<Job>>,
    next: AtomicUsize,
}

impl Workers {
    /// Starts `n` worker threads (at least one), each with a runtime that
    /// may run up to `blocking` blocking tasks (`spawn_blocking`) at once.
    pub fn start(n: usize, blocking: usize) -> std::io::Result<Arc<Workers>> {
        let mut queues = Vec::new();
        for i in 0..n.max(1) {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .max_blocking_threads(blocking.max(1))
                .enable_all()
                .build()?;
            let (tx, mut rx) = mpsc::unbounded_channel::<Job>();
            std::thread::Builder::new()
                .name(format!("memstored-worker-{i}"))
                .spawn(move || {
                    runtime.block_on(async move {
                        while let Some(job) = rx.recv().await {
                            job();
                        }
                    });
                    // The queue closed: the server is stopping. Connections
                    // had their grace period on the main thread.
                    runtime.shutdown_timeout(Duration::from_millis(100));
                })?;
            queues.push(tx);
        }
        Ok(Arc::new(Workers {
            queues,
            next: AtomicUsize::new(0),
        }))
    }

    /// How many workers run.
    pub fn len(&self) -> usize {
        self.queues.len()
    }

    /// Always false: there is at least one worker.
    pub fn is_empty(&self) -> bool {
        self.queues.is_empty()
    }

    /// Runs `job` on worker `i` (modulo their number).
    pub fn place_on(&self, i: usize, job: Job) {
        if let Some(q) = self.queues.get(i % self.queues.len().max(1)) {
            let _ = q.send(job);
        }
    }

    /// Runs `job` on the next worker in turn. A job whose worker is gone
    /// (the server is stopping) is dropped, which drops what it holds.
    pub fn place(&self, job: Job) {
        let i = self.next.fetch_add(1, Relaxed) % self.queues.len();
        if let Some(q) = self.queues.get(i) {
            let _ = q.send(job);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Jobs go round the workers in turn, and each runs on its worker's
    /// thread, inside a runtime (so it can spawn and register sockets).
    #[test]
    fn jobs_go_round_the_workers() {
        let workers = Workers::start(3, 1).unwrap();
        assert_eq!(workers.len(), 3);
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..6 {
            let tx = tx.clone();
            workers.place(Box::new(move || {
                let name = std::thread::current().name().map(str::to_string);
                let in_runtime = tokio::runtime::Handle::try_current().is_ok();
                tx.send((name, in_runtime)).unwrap();
            }));
        }
        let mut seen: Vec<(Option<String>, bool)> = (0..6).map(|_| rx.recv().unwrap()).collect();
        seen.sort();
        let want: Vec<(Option<String>, bool)> = (0..3)
            .flat_map(|i| {
                let seen = (Some(format!("memstored-worker-{i}")), true);
                [seen.clone(), seen]
            })
            .collect();
        assert_eq!(seen, want);
    }
}
