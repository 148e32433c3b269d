//! Key search (Tkrzw's SearchDBMModal): begin, contain, end, regex, edit
//! distance, and on ordered databases the upper/lower bound scans.

use crate::db::Db;
use crate::record::now_secs;
use crate::status::{Error, Result};

/// How `Db::search` matches keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchMode {
    /// Keys starting with the pattern.
    Begin,
    /// Keys containing the pattern.
    Contain,
    /// Keys containing the pattern, ignoring ASCII case.
    ContainCase,
    /// Keys ending with the pattern.
    End,
    /// Keys matching a regular expression.
    Regex,
    /// Keys nearest to the pattern by Levenshtein distance over UTF-8 characters, nearest first.
    Edit,
    /// The same over bytes.
    EditBin,
    /// Ordered: keys after the pattern (`inclusive`: or equal), ascending.
    Upper { inclusive: bool },
    /// Ordered: keys before the pattern (`inclusive`: or equal), descending.
    Lower { inclusive: bool },
}

impl SearchMode {
    /// Parses Tkrzw's mode names: begin contain containcase end regex edit editbin upper upperinc lower lowerinc.
    pub fn parse(s: &str) -> Result<SearchMode> {
        Ok(match s {
            "begin" => SearchMode::Begin,
            "contain" => SearchMode::Contain,
            "containcase" => SearchMode::ContainCase,
            "end" => SearchMode::End,
            "regex" => SearchMode::Regex,
            "edit" => SearchMode::Edit,
            "editbin" => SearchMode::EditBin,
            "upper" => SearchMode::Upper { inclusive: false },
            "upperinc" => SearchMode::Upper { inclusive: true },
            "lower" => SearchMode::Lower { inclusive: false },
            "lowerinc" => SearchMode::Lower { inclusive: true },
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "search mode {s:?}: expected begin, contain, containcase, end, regex, edit, editbin, upper, upperinc, lower or lowerinc"
                )))
            }
        })
    }
}

/// Levenshtein distance between two sequences.
pub fn edit_distance<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, x) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, y) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(x != y);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || hay.windows(needle.len()).any(|w| w == needle)
}

impl Db {
    /// Every live key, shard by shard (in key order within an ordered shard).
    fn all_live_keys(&self) -> Result<Vec<Vec<u8>>> {
        let now = now_secs();
        let mut out = Vec::new();
        for s in &self.shards {
            let st = s.state.read();
            for k in st.store.keys() {
                if st.live_meta(&k, now)?.is_some() {
                    out.push(k.to_vec());
                }
            }
        }
        Ok(out)
    }

    /// Keys matching `pattern` under `mode`, at most `capacity` (0 = no limit).
    /// Results are sorted by key, except edit modes (nearest first) and
    /// `Lower` (descending).
    pub fn search(
        &self,
        mode: SearchMode,
        pattern: &[u8],
        capacity: usize,
    ) -> Result<Vec<Vec<u8>>> {
        let cap = if capacity == 0 { usize::MAX } else { capacity };
        match mode {
            SearchMode::Upper { inclusive } | SearchMode::Lower { inclusive } => {
                if !self.is_ordered() {
                    return Err(Error::NotImplemented(
                        "upper/lower search needs an ordered database".into(),
                    ));
                }
                let upper = matches!(mode, SearchMode::Upper { .. });
                let mut c = self.cursor();
                if upper {
                    c.jump_upper(pattern, inclusive)?;
                } else {
                    c.jump_lower(pattern, inclusive)?;
                }
                let mut out = Vec::new();
                while out.len() < cap {
                    let Ok(k) = c.key() else { break };
                    out.push(k);
                    if upper {
                        c.next()?
                    } else {
                        c.previous()?
                    }
                }
                return Ok(out);
            }
            SearchMode::Begin if self.is_ordered() => {
                let mut c = self.cursor();
                c.jump(pattern)?;
                let mut out = Vec::new();
                while out.len() < cap {
                    match c.key() {
                        Ok(k) if k.starts_with(pattern) => out.push(k),
                        _ => break,
                    }
                    c.next()?;
                }
                return Ok(out);
            }
            _ => {}
        }
        let mut keys = self.all_live_keys()?;
        keys.sort();
        if matches!(mode, SearchMode::Edit | SearchMode::EditBin) {
            let mut scored: Vec<(usize, Vec<u8>)> = keys
                .into_iter()
                .map(|k| {
                    let d = if mode == SearchMode::Edit {
                        let a: Vec<char> = String::from_utf8_lossy(&k).chars().collect();
                        let b: Vec<char> = String::from_utf8_lossy(pattern).chars().collect();
                        edit_distance(&a, &b)
                    } else {
                        edit_distance(&k, pattern)
                    };
                    (d, k)
                })
                .collect();
            scored.sort();
            return Ok(scored.into_iter().take(cap).map(|(_, k)| k).collect());
        }
        let regex = match mode {
            SearchMode::Regex => Some(
                regex::bytes::Regex::new(&String::from_utf8_lossy(pattern))
                    .map_err(|e| Error::InvalidArgument(format!("bad regular expression: {e}")))?,
            ),
            _ => None,
        };
        let lower_pat = pattern.to_ascii_lowercase();
        let hit = |k: &[u8]| match mode {
            SearchMode::Begin => k.starts_with(pattern),
            SearchMode::End => k.ends_with(pattern),
            SearchMode::Contain => contains(k, pattern),
            SearchMode::ContainCase => contains(&k.to_ascii_lowercase(), &lower_pat),
            SearchMode::Regex => regex.as_ref().is_some_and(|r| r.is_match(k)),
            _ => false,
        };
        Ok(keys.into_iter().filter(|k| hit(k)).take(cap).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::edit_distance;

    #[test]
    fn levenshtein() {
        assert_eq!(edit_distance(b"kitten", b"sitting"), 3);
        assert_eq!(edit_distance(b"", b"abc"), 3);
        assert_eq!(edit_distance(b"same", b"same"), 0);
    }
}
