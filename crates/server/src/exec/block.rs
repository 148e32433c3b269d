//! Blocking work from a connection's synchronous code, whichever runtime or
//! driver the connection is on.

/// Runs `f`, which blocks, from synchronous code called by a connection:
/// on the shared runtime through `block_in_place` (other tasks move to
/// other workers meanwhile); on a per-core worker, where `block_in_place`
/// is not allowed, in place: the worker's other connections wait, as
/// memcached's do while their thread runs a long command.
/// An io_uring worker (which has the main runtime's handle entered, for
/// `tokio::spawn`, but is none of its threads) runs it in place too.
pub fn block_here<R>(f: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    if OFF_RUNTIME.get() {
        return f();
    }
    match Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

thread_local! {
    /// Set on threads that enter a runtime's handle without being one of
    /// its workers (`block_in_place` would panic there).
    static OFF_RUNTIME: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Marks this thread as one that blocks in place (see [`block_here`]).
pub fn blocks_in_place() {
    OFF_RUNTIME.set(true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_here_works_on_both_runtimes() {
        let shared = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        assert_eq!(shared.block_on(async { block_here(|| 1) }), 1);
        let single = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(single.block_on(async { block_here(|| 2) }), 2);
        assert_eq!(block_here(|| 3), 3);
    }
}
