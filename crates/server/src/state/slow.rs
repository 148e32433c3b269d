//! The slow calls' server-wide state: how many are admitted, and the `-W`
//! permits to run (the admission itself is `crate::exec::slow`).

use std::sync::atomic::AtomicUsize;
use tokio::sync::Semaphore;

/// The server's slow calls: how many are admitted, and the `-W` permits to run.
#[derive(Debug)]
pub struct SlowCalls {
    /// Queued or running, at most `exec::slow::SERVER_WIDE`.
    pub(crate) admitted: AtomicUsize,
    /// One permit per slow call allowed to run at once.
    pub(crate) threads: Semaphore,
}

impl SlowCalls {
    pub fn new(threads: usize) -> SlowCalls {
        SlowCalls {
            admitted: AtomicUsize::new(0),
            threads: Semaphore::new(threads.max(1)),
        }
    }
}
