//! Sizes as flags and config keys write them (`64m`, `2Gi`, `1k`): used by
//! the command line and by the flags other layers define (the update log's).

/// A size with an optional k/m/g (or ki/mi/gi) suffix, powers of 1024.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_lowercase();
    let t = t.strip_suffix('b').unwrap_or(&t);
    let t = t.strip_suffix('i').unwrap_or(t);
    let (digits, mult) = match t.char_indices().last() {
        Some((i, 'k')) => (&t[..i], 1u64 << 10),
        Some((i, 'm')) => (&t[..i], 1 << 20),
        Some((i, 'g')) => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("bad size {s:?}"))?;
    n.checked_mul(mult)
        .ok_or_else(|| format!("size {s:?} too large"))
}
