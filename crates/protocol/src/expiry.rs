//! memcached's `exptime` rule, shared by every protocol.
//!
//! memcached accepts one number for both "seconds from now" and "absolute
//! Unix time" and tells them apart by size: anything up to 30 days is
//! relative. Negative values mean "already expired" (memcached maps them to a
//! time before the process started). Binary requests carry the value as an
//! unsigned 32-bit field, so they can never be negative; text and meta parse a
//! signed number.

/// Largest exptime treated as relative seconds: 30 days (`REALTIME_MAXDELTA`).
pub const RELATIVE_EXPTIME_MAX: i64 = 60 * 60 * 24 * 30;

/// Binary INCR/DECR expiration value meaning "do not create a missing key;
/// answer NOT_FOUND instead" (memcached compares against `0xffffffff`).
pub const NO_AUTO_CREATE: u32 = 0xffff_ffff;

/// When an item stops being visible, as an absolute Unix time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Expiry {
    /// exptime 0: lives until evicted or deleted.
    Never,
    /// Expires at this Unix time (seconds); always later than the `now` it was
    /// computed from.
    At(u64),
    /// Negative exptime or an absolute time not after `now`: the item is dead
    /// on arrival. memcached still answers a store with STORED, but nothing
    /// can read the item back.
    Expired,
}

impl Expiry {
    /// Converts a memcached exptime to an absolute expiry, given the current
    /// Unix time in seconds.
    pub fn from_exptime(exptime: i64, now: u64) -> Expiry {
        if exptime == 0 {
            Expiry::Never
        } else if exptime < 0 {
            Expiry::Expired
        } else if exptime <= RELATIVE_EXPTIME_MAX {
            Expiry::At(now.saturating_add(exptime.unsigned_abs()))
        } else {
            let at = exptime.unsigned_abs();
            if at <= now {
                Expiry::Expired
            } else {
                Expiry::At(at)
            }
        }
    }

    /// Same as [`Expiry::from_exptime`] for the unsigned 32-bit field of the
    /// binary protocol.
    pub fn from_binary(exptime: u32, now: u64) -> Expiry {
        Expiry::from_exptime(i64::from(exptime), now)
    }

    /// The absolute expiry time for [`Expiry::At`]; `None` otherwise (check
    /// [`Expiry::is_expired`] to tell "never" from "already dead").
    pub fn at(self) -> Option<u64> {
        match self {
            Expiry::At(t) => Some(t),
            Expiry::Never | Expiry::Expired => None,
        }
    }

    /// True for [`Expiry::Expired`].
    pub fn is_expired(self) -> bool {
        matches!(self, Expiry::Expired)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_700_000_000;

    #[test]
    fn zero_is_never() {
        assert_eq!(Expiry::from_exptime(0, NOW), Expiry::Never);
    }

    #[test]
    fn small_values_are_relative() {
        assert_eq!(Expiry::from_exptime(1, NOW), Expiry::At(NOW + 1));
        assert_eq!(
            Expiry::from_exptime(RELATIVE_EXPTIME_MAX, NOW),
            Expiry::At(NOW + 2_592_000)
        );
    }

    #[test]
    fn large_values_are_absolute() {
        let abs = RELATIVE_EXPTIME_MAX + 1;
        // An absolute time in 1970 is long past.
        assert_eq!(Expiry::from_exptime(abs, NOW), Expiry::Expired);
        let future = (NOW + 100) as i64;
        assert_eq!(Expiry::from_exptime(future, NOW), Expiry::At(NOW + 100));
        assert_eq!(Expiry::from_exptime(NOW as i64, NOW), Expiry::Expired);
    }

    #[test]
    fn negative_is_expired() {
        assert_eq!(Expiry::from_exptime(-1, NOW), Expiry::Expired);
        assert_eq!(Expiry::from_exptime(i64::MIN, NOW), Expiry::Expired);
    }

    #[test]
    fn binary_field_is_unsigned() {
        assert_eq!(Expiry::from_binary(10, NOW), Expiry::At(NOW + 10));
        assert_eq!(
            Expiry::from_binary(u32::MAX, NOW),
            Expiry::At(u64::from(u32::MAX))
        );
    }

    #[test]
    fn relative_saturates() {
        assert_eq!(Expiry::from_exptime(5, u64::MAX), Expiry::At(u64::MAX));
    }
}
