//! The last change of recently changed keys, for a dual master's conflict
//! rule (last writer by timestamp, per key): a replayed update older than
//! the key's last change is not applied. Bounded: the oldest entries go
//! when there are more than `cap`, so the rule holds for conflicts that
//! arrive while both changes are still remembered (at 100k writes/s and
//! the default million entries, about 10 s of replication lag).

use std::collections::{HashMap, VecDeque};

pub(super) struct Recent {
    last: HashMap<Vec<u8>, (u64, u16)>,
    /// Keys in the order they were recorded, with the timestamp recorded.
    order: VecDeque<(u64, Vec<u8>)>,
    cap: usize,
}

impl Recent {
    pub(super) fn new(cap: usize) -> Recent {
        Recent {
            last: HashMap::new(),
            order: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    pub(super) fn record(&mut self, key: &[u8], ts: u64, server_id: u16) {
        self.last.insert(key.to_vec(), (ts, server_id));
        self.order.push_back((ts, key.to_vec()));
        while self.order.len() > self.cap {
            let Some((t, k)) = self.order.pop_front() else {
                break;
            };
            // Forget the key only if this was its last change.
            if self.last.get(&k).is_some_and(|&(lt, _)| lt == t) {
                self.last.remove(&k);
            }
        }
    }

    pub(super) fn get(&self, key: &[u8]) -> Option<(u64, u16)> {
        self.last.get(key).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_change_of_the_newest_keys() {
        let mut r = Recent::new(3);
        r.record(b"a", 1, 1);
        r.record(b"b", 2, 1);
        r.record(b"a", 3, 2);
        assert_eq!(r.get(b"a"), Some((3, 2)));
        r.record(b"c", 4, 1);
        // (1, a) went: a's last change (3) stays.
        assert_eq!(r.get(b"a"), Some((3, 2)));
        r.record(b"d", 5, 1);
        assert_eq!(r.get(b"b"), None);
        assert_eq!(r.get(b"d"), Some((5, 1)));
    }
}
