//! tkrzw_server's wake-ups for calls that wait (`retry_wait`): per database,
//! one signal that PushLast with `notify` sends (PopFirst waits on it) and a
//! few slots keyed by hash that CompareExchange with `notify` sends
//! (CompareExchange waits on its key's slot). A wait is a tokio future, not
//! a thread: it re-tries the call when signalled, at least every
//! [`MAX_WAIT`] (tkrzw_server's `MAX_WAIT_TIME`), until `retry_wait` runs
//! out or the server stops. A signal wakes only the calls waiting then.

use std::future::Future;
use std::hash::{Hash, Hasher};
use std::time::{Duration, Instant};
use tokio::sync::{watch, Notify};

/// Key slots per database (tkrzw_server's `SlottedKeySignalBroker` has 8):
/// a signal wakes every waiter of its slot, which then check their own key.
const KEY_SLOTS: usize = 8;

/// The longest one wait lasts before the call is tried again.
const MAX_WAIT: Duration = Duration::from_secs(5);

/// The signals of every served database.
pub struct Signals {
    first: Vec<Notify>,
    keys: Vec<[Notify; KEY_SLOTS]>,
}

impl Signals {
    /// Signals for `databases` databases.
    pub fn new(databases: usize) -> Signals {
        Signals {
            first: (0..databases).map(|_| Notify::new()).collect(),
            keys: (0..databases)
                .map(|_| std::array::from_fn(|_| Notify::new()))
                .collect(),
        }
    }

    /// The "first record" signal of database `index` (PushLast to PopFirst).
    pub fn first(&self, index: i32) -> Option<&Notify> {
        self.first.get(usize::try_from(index).ok()?)
    }

    /// The signal of `key` in database `index` (CompareExchange).
    pub fn key(&self, index: i32, key: &[u8]) -> Option<&Notify> {
        let slots = self.keys.get(usize::try_from(index).ok()?)?;
        let mut h = std::collections::hash_map::DefaultHasher::new();
        key.hash(&mut h);
        slots.get(h.finish() as usize % KEY_SLOTS)
    }
}

/// Wakes the calls waiting on `signal` now.
pub fn send(signal: Option<&Notify>) {
    if let Some(s) = signal {
        s.notify_waiters();
    }
}

/// Runs `attempt` until `again` says its answer is final, waiting on
/// `signal` between attempts, for `retry_wait` seconds at most (an endless
/// or huge one: until the server stops). Registers for the signal before
/// each attempt, so a signal sent while it runs is not missed. The last
/// answer is returned, final or not.
pub async fn retrying<T, F, Fut>(
    signal: &Notify,
    retry_wait: f64,
    mut stop: watch::Receiver<bool>,
    mut attempt: F,
    again: impl Fn(&T) -> bool,
) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = T>,
{
    let deadline = Duration::try_from_secs_f64(retry_wait)
        .ok()
        .and_then(|d| Instant::now().checked_add(d));
    loop {
        let notified = signal.notified();
        tokio::pin!(notified);
        notified.as_mut().enable();
        let answer = attempt().await;
        if !again(&answer) {
            return answer;
        }
        let left = match deadline {
            Some(d) => d.saturating_duration_since(Instant::now()),
            None => MAX_WAIT,
        };
        if left.is_zero() {
            return answer;
        }
        tokio::select! {
            _ = &mut notified => {}
            _ = tokio::time::sleep(left.min(MAX_WAIT)) => {}
            Ok(_) = stop.wait_for(|stopping| *stopping) => return answer,
        }
    }
}
