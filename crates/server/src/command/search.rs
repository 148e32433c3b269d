//! Key searches: RPC `match_prefix`, `match_regex`, `search`, `match_similar`
//! and the Kyoto Tycoon port's cursors (which search every key). They run as
//! slow calls: the caller passes the limits (`crate::exec::slow::search`) and
//! gets the engine's result, so that it can tell a search that ran out of
//! time from one that failed.

use crate::state::server::Server;
use memstored_engine::search::SearchLimits;
use memstored_engine::SearchMode;

/// A search over the live keys.
#[derive(Debug, Clone, Copy)]
pub enum Search<'p> {
    /// Up to `max` keys (0 = all) matching `pattern` in `mode`.
    Matching {
        mode: SearchMode,
        pattern: &'p [u8],
        max: usize,
    },
    /// Keys within Levenshtein distance `range` of `origin`, nearest first;
    /// `utf`: measured in UTF-8 characters rather than bytes.
    Similar {
        origin: &'p [u8],
        range: usize,
        utf: bool,
    },
}

impl Search<'_> {
    pub fn apply(
        &self,
        srv: &Server,
        limits: &SearchLimits<'_>,
    ) -> memstored_engine::Result<Vec<Vec<u8>>> {
        match *self {
            Search::Matching { mode, pattern, max } => {
                srv.db.search_within(mode, pattern, max, limits)
            }
            Search::Similar { origin, range, utf } => {
                srv.db.search_similar(origin, range, utf, limits)
            }
        }
    }
}
