//! `incr`/`decr`, binary INCREMENT/DECREMENT, meta `ma`, and Kyoto Tycoon's
//! `increment`/`increment_double`.

use super::{Number, Outcome};
use crate::state::counters::bump;
use crate::state::server::Server;
use bytes::Bytes;
pub use memstored_engine::Origin;

/// memcached's incr/decr on an unsigned decimal value.
#[derive(Debug, Clone)]
pub struct Arith {
    pub key: Bytes,
    pub delta: u64,
    pub decrement: bool,
    /// Create an absent record as (initial value, flags, absolute expiry).
    pub create: Option<(u64, u32, u64)>,
    /// Act only if the record has this CAS.
    pub cas: Option<u64>,
    /// Also set this absolute expiry (meta `T`), in the same atomic step.
    pub touch: Option<u64>,
    /// The CAS the result gets (meta `E`), instead of the next.
    pub new_cas: Option<u64>,
}

impl Arith {
    /// Plain incr/decr: no auto-create, no CAS, no TTL change.
    pub fn new(key: Bytes, delta: u64, decrement: bool) -> Arith {
        Arith {
            key,
            delta,
            decrement,
            create: None,
            cas: None,
            touch: None,
            new_cas: None,
        }
    }

    /// `Counted`, `NotFound`, `Exists` (CAS mismatch), `NonNumeric`,
    /// `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let r = srv.db.incr_decr_as(
            &self.key,
            self.delta,
            self.decrement,
            self.create,
            (self.cas, self.new_cas),
            self.touch,
        );
        counted(
            srv,
            self.decrement,
            r.map(|(n, m)| (Number::Unsigned(n), m)),
        )
    }
}

/// Kyoto Tycoon's `increment`: a signed sum, `orig` and `xt` as KT has them.
#[derive(Debug, Clone)]
pub struct Increment {
    pub key: Bytes,
    pub delta: i64,
    pub origin: Origin<i64>,
    /// A new absolute expiry; `None` keeps the present one.
    pub expires_at: Option<u64>,
}

impl Increment {
    /// `Counted`, `NotFound` (`orig=try`), `NonNumeric`, `Overflow`, `ReadOnly` or `Failed`.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let r = srv
            .db
            .increment_from(&self.key, self.delta, self.origin, self.expires_at);
        counted(srv, self.delta < 0, r.map(|(n, m)| (Number::Signed(n), m)))
    }
}

/// Kyoto Tycoon's `increment_double`.
#[derive(Debug, Clone)]
pub struct IncrementDouble {
    pub key: Bytes,
    pub delta: f64,
    pub origin: Origin<f64>,
    pub expires_at: Option<u64>,
}

impl IncrementDouble {
    /// As [`Increment::apply`], for floating-point values.
    pub fn apply(&self, srv: &Server) -> Outcome {
        let r = srv
            .db
            .increment_double_from(&self.key, self.delta, self.origin, self.expires_at);
        counted(srv, self.delta < 0.0, r.map(|(n, m)| (Number::Float(n), m)))
    }
}

/// Counts a KT increment in memcached's incr/decr counters, so `stats` and
/// `report` see every protocol's arithmetic.
pub(super) fn counted(
    srv: &Server,
    down: bool,
    r: memstored_engine::Result<(Number, memstored_engine::Meta)>,
) -> Outcome {
    let c = srv.counters.here();
    let (hits, misses) = if down {
        (&c.decr_hits, &c.decr_misses)
    } else {
        (&c.incr_hits, &c.incr_misses)
    };
    match r {
        Ok((value, meta)) => {
            bump(hits);
            Outcome::Counted { value, meta }
        }
        Err(e) => {
            if e.is_not_found() {
                bump(misses);
            }
            Outcome::from_error(e)
        }
    }
}
