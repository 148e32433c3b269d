//! A measurement, not a test: the longest single `set` while a cache fills
//! to N items (default 12M, 16-byte keys, 100-byte values), which is where
//! a growth of the cache's slot table shows as a stall of every client of
//! the shard. Run on a quiet machine:
//!
//! ```sh
//! cargo run --release -p memstored-engine --example longest_put [N] [NAME] [VALUE_LEN]
//! ```
//!
//! NAME defaults to `*#capsiz=4g` (room for every item, so no eviction),
//! VALUE_LEN to 100 (from 1 KiB, values are kept aside of the segments).
//! Prints each set slower than 10 ms and the longest.

use memstored_engine::Db;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(12_000_000), |a| a.parse())?;
    let name = args.next().unwrap_or_else(|| "*#capsiz=4g".to_string());
    let value_len: usize = args.next().map_or(Ok(100), |a| a.parse())?;
    let db = Db::open(&name, true)?;
    let value = vec![b'v'; value_len];
    let (mut worst, mut at) = (Duration::ZERO, 0);
    let started = Instant::now();
    for i in 0..n {
        let key = format!("key:{i:012}");
        let t = Instant::now();
        db.set(key.as_bytes(), &value, true)?;
        let d = t.elapsed();
        if d > Duration::from_millis(10) {
            println!("set #{i}: {d:?}");
        }
        if d > worst {
            (worst, at) = (d, i);
        }
    }
    println!(
        "{n} sets in {:?}; longest {worst:?} (set #{at})",
        started.elapsed()
    );
    Ok(())
}
