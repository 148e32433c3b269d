//! TTL classes and a segment's expiry as items join it: the arithmetic of
//! `expiry.rs`, in a leaf that the cache (`mod.rs`) and its no-eviction
//! mode import without importing the expiry code that sits above them.

use crate::record::now_secs;

/// TTL classes: 0 for items that never expire, then `1 + ilog4(ttl)`
/// capped at the last.
pub(super) const TTL_CLASSES: usize = 10;

/// A segment's expiry when one of its items never expires.
pub(super) const NEVER: u64 = u64::MAX;

/// The class of an item that expires at `expires_at` (0: never).
pub(super) fn ttl_class(expires_at: u64) -> usize {
    if expires_at == 0 {
        return 0;
    }
    let ttl = expires_at.saturating_sub(now_secs());
    1 + (ttl.saturating_add(1).ilog2() as usize / 2).min(TTL_CLASSES - 2)
}

/// A segment's expiry after an item expiring at `expires_at` joins it.
pub(super) fn joined(segment: u64, expires_at: u64) -> u64 {
    if expires_at == 0 || segment == NEVER {
        NEVER
    } else {
        segment.max(expires_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_widen_fourfold() {
        let now = now_secs();
        assert_eq!(ttl_class(0), 0);
        assert_eq!(ttl_class(1), 1, "already expired");
        assert_eq!(ttl_class(now + 2), 1);
        assert_eq!(ttl_class(now + 3), 2);
        assert_eq!(ttl_class(now + 60), 3);
        assert_eq!(ttl_class(now + 3600), 6);
        assert_eq!(ttl_class(now + 86_400 * 30), TTL_CLASSES - 1);
        assert_eq!(ttl_class(u64::MAX), TTL_CLASSES - 1);
    }

    #[test]
    fn a_segment_never_expires_once_an_item_never_does() {
        assert_eq!(joined(0, 100), 100);
        assert_eq!(joined(100, 50), 100);
        assert_eq!(joined(100, 0), NEVER);
        assert_eq!(joined(NEVER, 100), NEVER);
    }
}
