//! Tkrzw's two record hashes, so `Utility.PrimaryHash` and
//! `Utility.SecondaryHash` give the numbers tkrzw-python gives: MurmurHash64A
//! (seed 19780211) for buckets and an FNV-1a variant for shards, both folded
//! when the modulus fits in 32 bits.

/// MurmurHash64A over `data` (little-endian words), as Austin Appleby published it.
fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        let mut k = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, b) in tail.iter().enumerate() {
            h ^= u64::from(*b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^ (h >> R)
}

/// FNV-1a with Tkrzw's multiplier (109951162811, not FNV's 1099511628211).
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(14_695_981_039_346_656_037u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(109_951_162_811)
    })
}

/// Mixes the halves of a 64-bit hash before a 32-bit modulus.
fn fold(h: u64) -> u64 {
    ((h & 0xffff_0000_0000_0000) >> 48 | (h & 0x0000_ffff_0000_0000) >> 16)
        ^ ((h & 0xffff) << 16 | (h & 0xffff_0000) >> 16)
}

/// `hash % modulus`, folded first when the modulus fits in 32 bits; a
/// modulus of 0 means 2^64-1, as in tkrzw-python.
fn reduce(h: u64, modulus: u64) -> u64 {
    let modulus = if modulus == 0 { u64::MAX } else { modulus };
    let h = if modulus <= u64::from(u32::MAX) {
        fold(h)
    } else {
        h
    };
    h % modulus
}

pub fn primary(data: &[u8], num_buckets: u64) -> u64 {
    reduce(murmur64a(data, 19_780_211), num_buckets)
}

pub fn secondary(data: &[u8], num_shards: u64) -> u64 {
    reduce(fnv(data), num_shards)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The figures tkrzw-python's own tests print for "abc".
    #[test]
    fn hashes_match_tkrzws() {
        assert_eq!(primary(b"abc", 0), 16_973_900_370_012_003_622);
        assert_eq!(primary(b"abc", (1 << 32) - 1), 3_042_090_208);
        assert_eq!(secondary(b"abc", 0), 1_765_794_342_254_572_867);
        assert_eq!(secondary(b"abc", (1 << 32) - 1), 702_176_507);
    }
}
