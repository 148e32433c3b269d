//! `stats detail` counting: which requests count against their key's prefix
//! (`crate::state::detail`). memcached counts the text protocol's gets,
//! storage commands and deletes and their binary counterparts, never meta
//! commands; memstored adds none of its other wires. So the text and binary
//! protocols wrap those commands in [`Detailed`] and everything else runs
//! them bare: a wire cannot count by forgetting to say it does not.

use super::{Delete, Get, GetMany, Outcome, Store, StoreEach};
use crate::state::server::Server;
use memstored_engine::Record;

/// A command whose request counts in `stats detail`.
#[derive(Debug, Clone)]
pub struct Detailed<C>(pub C);

impl Detailed<Get> {
    /// [`Get::apply`], counted as a get of the key (a hit if found).
    pub fn apply(&self, srv: &Server) -> Outcome {
        self.counted(srv, self.0.apply(srv))
    }

    /// [`Get::repeat`], counted as [`Detailed::<Get>::apply`] is.
    pub fn repeat(&self, srv: &Server, earlier: Option<&Record>) -> Outcome {
        self.counted(srv, self.0.repeat(srv, earlier))
    }

    fn counted(&self, srv: &Server, o: Outcome) -> Outcome {
        srv.detail.get(&self.0.key, matches!(o, Outcome::Found(_)));
        o
    }
}

impl Detailed<Store> {
    /// [`Store::apply`], counted as a set of the key whatever it does.
    pub fn apply(&self, srv: &Server) -> Outcome {
        srv.detail.set(&self.0.key);
        self.0.apply(srv)
    }
}

impl Detailed<Delete> {
    /// [`Delete::apply`], counted as a delete of the key whatever it does.
    pub fn apply(&self, srv: &Server) -> Outcome {
        srv.detail.delete(&self.0.key);
        self.0.apply(srv)
    }
}

impl Detailed<GetMany<'_>> {
    /// [`GetMany::apply`], each key counted as a get of it (a hit if
    /// found), as the text multi-get and binary GETQ runs are in memcached.
    pub fn apply(&self, srv: &Server) -> Result<Vec<Option<Record>>, Outcome> {
        self.apply_below(srv, usize::MAX).map(|(found, _)| found)
    }

    /// [`GetMany::apply_below`], each key it answers counted as `apply`
    /// counts it.
    pub fn apply_below(
        &self,
        srv: &Server,
        max_value: usize,
    ) -> Result<(Vec<Option<Record>>, Option<usize>), Outcome> {
        let (found, large) = self.0.apply_below(srv, max_value)?;
        for (key, r) in self.0.keys.iter().zip(&found) {
            srv.detail.get(key, r.is_some());
        }
        Ok((found, large))
    }
}

impl Detailed<StoreEach<'_>> {
    /// [`StoreEach::apply`], each record counted as a set of its key
    /// whatever it does, as [`Detailed::<Store>::apply`] counts one.
    pub fn apply(&self, srv: &Server) -> Result<Vec<(usize, Outcome)>, Outcome> {
        for r in self.0.records {
            srv.detail.set(r.key);
        }
        self.0.apply(srv)
    }
}
