//! Key search (Tkrzw's SearchDBMModal): begin, contain (by case, by word,
//! several patterns at once), end, regex, edit distance, and on ordered
//! databases the upper/lower bound scans.

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
    /// Keys containing the pattern as a word: not inside a run of ASCII
    /// letters and digits (Tkrzw's StrWordSearch).
    ContainWord,
    /// The same, ignoring ASCII case.
    ContainCaseWord,
    /// Tkrzw's `contain*` modes: the pattern holds several, one a line; a
    /// key containing any of them matches (`case`: ignoring ASCII case;
    /// `word`: as a word).
    ContainBatch { case: bool, word: bool },
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
    /// Parses Tkrzw's mode names: begin, contain, containcase,
    /// containword, containcaseword (those four also with `*`), end, regex,
    /// edit, editbin, upper, upperinc, lower, lowerinc.
    pub fn parse(s: &str) -> Result<SearchMode> {
        Ok(match s {
            "begin" => SearchMode::Begin,
            "contain" => SearchMode::Contain,
            "containcase" => SearchMode::ContainCase,
            "containword" => SearchMode::ContainWord,
            "containcaseword" => SearchMode::ContainCaseWord,
            "contain*" => SearchMode::ContainBatch { case: false, word: false },
            "containcase*" => SearchMode::ContainBatch { case: true, word: false },
            "containword*" => SearchMode::ContainBatch { case: false, word: true },
            "containcaseword*" => SearchMode::ContainBatch { case: true, word: true },
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
                    "search mode {s:?}: expected begin, contain, containcase, containword, containcaseword (or one of those four with *), end, regex, edit, editbin, upper, upperinc, lower or lowerinc"
                )))
            }
        })
    }
}

/// How much work a search does between two polls of
/// [`SearchLimits::interrupt`]: one unit per key visited, byte scanned or
/// edit-distance cell computed (about a millisecond of work).
pub(crate) const POLL_EVERY: u64 = 1 << 18;

/// The start of the message of the [`Error::Infeasible`] a search returns
/// when [`SearchLimits::interrupt`] stopped it.
pub const INTERRUPTED: &str = "search interrupted";

/// Bounds on one search's work, for callers that search with patterns they
/// do not trust (a server): edit distance is quadratic in the key and
/// pattern lengths and a regex can compile to a large program, so such a
/// caller caps the regex and polls a clock.
#[derive(Clone, Copy)]
pub struct SearchLimits<'a> {
    /// Largest compiled regex, in bytes (the regex crate's `size_limit`);
    /// a larger one is refused with `InvalidArgument`.
    pub regex_size_limit: usize,
    /// Largest lazy-DFA cache of a regex (the regex crate's `dfa_size_limit`).
    pub regex_dfa_size_limit: usize,
    /// Asked every [`POLL_EVERY`] units of work; `true` stops the search with
    /// `Error::Infeasible` (message starting with [`INTERRUPTED`]). The work
    /// on one key between polls is linear in its length, except a regex
    /// match, which the regex crate bounds by the program size times the key length.
    pub interrupt: Option<&'a dyn Fn() -> bool>,
}

impl SearchLimits<'static> {
    /// No interruption and the regex crate's default limits: what
    /// [`Db::search`] uses.
    pub const NONE: SearchLimits<'static> = SearchLimits {
        regex_size_limit: 10 << 20,
        regex_dfa_size_limit: 2 << 20,
        interrupt: None,
    };
}

/// Counts work and polls the interrupt every [`POLL_EVERY`] units.
struct Meter<'a> {
    limits: &'a SearchLimits<'a>,
    work: u64,
}

impl Meter<'_> {
    fn tick(&mut self, units: u64) -> Result<()> {
        self.work += units;
        if self.work < POLL_EVERY {
            return Ok(());
        }
        self.work = 0;
        match self.limits.interrupt {
            Some(stop) if stop() => Err(Error::Infeasible(INTERRUPTED.to_string())),
            _ => Ok(()),
        }
    }
}

/// Levenshtein distance between two sequences.
pub fn edit_distance<T: PartialEq>(a: &[T], b: &[T]) -> usize {
    let unbounded = usize::MAX;
    edit_distance_within(a, b, unbounded, &mut |_| Ok(()))
        .ok()
        .flatten()
        .unwrap_or(unbounded)
}

/// Levenshtein distance between `a` and `b` if it is at most `bound`, else
/// `None`. Only the diagonal band of width `2 * bound + 1` is computed and
/// the computation stops at the first row whose every cell exceeds `bound`,
/// so a small bound costs `O(bound * len)` instead of `O(len²)`. `poll` is
/// told the cells of each row and may stop the computation with an error.
///
/// Hand-written rather than `strsim` (which the name parser uses for its
/// "did you mean"): `strsim::generic_levenshtein` always fills the whole
/// `len(a) * len(b)` table and cannot be stopped inside it. Here both
/// lengths can come from clients (a key and a search pattern, each up to
/// the item size), so one pair can be ~10^12 cells: polling only between
/// keys would not bound the time between polls, and without the band a
/// `match_similar` with a small range would pay the full table per key.
pub(crate) fn edit_distance_within<T: PartialEq>(
    a: &[T],
    b: &[T],
    bound: usize,
    poll: &mut dyn FnMut(u64) -> Result<()>,
) -> Result<Option<usize>> {
    let n = b.len();
    if a.len().abs_diff(n) > bound {
        return Ok(None);
    }
    // No distance exceeds the longer length: a smaller bound keeps `cap`
    // (the value of every cell beyond the bound) from overflowing.
    let bound = bound.min(a.len().max(n));
    let cap = bound + 1;
    let mut prev: Vec<usize> = (0..=n).map(|j| j.min(cap)).collect();
    let mut cur = vec![cap; n + 1];
    for (i, x) in a.iter().enumerate() {
        let row = i + 1;
        // Cells outside [lo, hi] are beyond the bound; the cells next to the
        // band are set to `cap` so that the next row reads no stale value.
        let lo = row.saturating_sub(bound);
        let hi = (row + bound).min(n);
        let mut row_min = cap;
        if lo == 0 {
            cur[0] = row.min(cap);
            row_min = cur[0];
        } else {
            cur[lo - 1] = cap;
        }
        for j in lo.max(1)..=hi {
            let substitute = prev[j - 1] + usize::from(*x != b[j - 1]);
            let v = substitute.min(prev[j] + 1).min(cur[j - 1] + 1).min(cap);
            cur[j] = v;
            row_min = row_min.min(v);
        }
        if hi < n {
            cur[hi + 1] = cap;
        }
        if row_min > bound {
            return Ok(None);
        }
        poll((hi + 1 - lo) as u64)?;
        std::mem::swap(&mut prev, &mut cur);
    }
    let d = prev[n];
    Ok((d <= bound).then_some(d))
}

fn chars(b: &[u8]) -> Vec<char> {
    String::from_utf8_lossy(b).chars().collect()
}

impl Db {
    /// Every live key, shard by shard (in key order within an ordered shard).
    fn all_live_keys(&self, meter: &mut Meter<'_>) -> Result<Vec<Vec<u8>>> {
        let now = now_secs();
        let mut out = Vec::new();
        for s in &self.shards {
            let st = s.state.read();
            for k in st.store.keys() {
                meter.tick(1)?;
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
        self.search_within(mode, pattern, capacity, &SearchLimits::NONE)
    }

    /// [`Db::search`] within `limits`.
    pub fn search_within(
        &self,
        mode: SearchMode,
        pattern: &[u8],
        capacity: usize,
        limits: &SearchLimits<'_>,
    ) -> Result<Vec<Vec<u8>>> {
        let cap = if capacity == 0 { usize::MAX } else { capacity };
        let mut meter = Meter { limits, work: 0 };
        match mode {
            SearchMode::Upper { inclusive } | SearchMode::Lower { inclusive } => {
                let upper = matches!(mode, SearchMode::Upper { .. });
                self.search_beyond(upper, inclusive, pattern, cap, &mut meter)
            }
            SearchMode::Begin if self.is_ordered() => self.search_prefix(pattern, cap, &mut meter),
            _ => self.search_all(mode, pattern, cap, &mut meter),
        }
    }

    /// `Upper`/`Lower`: keys from `pattern` on, by cursor, in the direction.
    fn search_beyond(
        &self,
        upper: bool,
        inclusive: bool,
        pattern: &[u8],
        cap: usize,
        meter: &mut Meter<'_>,
    ) -> Result<Vec<Vec<u8>>> {
        if !self.is_ordered() {
            return Err(Error::NotImplemented(
                "upper/lower search needs an ordered database".into(),
            ));
        }
        let mut c = self.cursor();
        if upper {
            c.jump_upper(pattern, inclusive)?;
        } else {
            c.jump_lower(pattern, inclusive)?;
        }
        let mut out = Vec::new();
        while out.len() < cap {
            let Ok(k) = c.key() else { break };
            meter.tick(1)?;
            out.push(k);
            if upper {
                c.next()?
            } else {
                c.previous()?
            }
        }
        Ok(out)
    }

    /// `Begin` on an ordered database: the keys from `pattern` on while
    /// they start with it.
    fn search_prefix(
        &self,
        pattern: &[u8],
        cap: usize,
        meter: &mut Meter<'_>,
    ) -> Result<Vec<Vec<u8>>> {
        let mut c = self.cursor();
        c.jump(pattern)?;
        let mut out = Vec::new();
        while out.len() < cap {
            match c.key() {
                Ok(k) if k.starts_with(pattern) => out.push(k),
                _ => break,
            }
            meter.tick(1)?;
            c.next()?;
        }
        Ok(out)
    }

    /// Every other mode: all live keys, sorted, each tested.
    fn search_all(
        &self,
        mode: SearchMode,
        pattern: &[u8],
        cap: usize,
        meter: &mut Meter<'_>,
    ) -> Result<Vec<Vec<u8>>> {
        let mut keys = self.all_live_keys(meter)?;
        keys.sort();
        match_keys(mode, pattern, keys, cap, meter)
    }

    /// Live keys within `range` edits of `origin` (over UTF-8 characters
    /// when `utf`, else bytes), nearest first, ties in key order: Kyoto
    /// Tycoon's `match_similar`.
    pub fn search_similar(
        &self,
        origin: &[u8],
        range: usize,
        utf: bool,
        limits: &SearchLimits<'_>,
    ) -> Result<Vec<Vec<u8>>> {
        let mut meter = Meter { limits, work: 0 };
        let mut keys = self.all_live_keys(&mut meter)?;
        keys.sort();
        nearest(keys, origin, range, utf, &mut meter)
    }
}

/// The `keys` matching `pattern` under `mode` (not `Upper`/`Lower`), at
/// most `cap`, in their order (edit modes: nearest first, ties in their
/// order). Shared with `File::search`, which matches lines.
fn match_keys(
    mode: SearchMode,
    pattern: &[u8],
    keys: Vec<Vec<u8>>,
    cap: usize,
    meter: &mut Meter<'_>,
) -> Result<Vec<Vec<u8>>> {
    let limits = meter.limits;
    if matches!(mode, SearchMode::Edit | SearchMode::EditBin) {
        let utf = mode == SearchMode::Edit;
        let scored = nearest(keys, pattern, usize::MAX, utf, meter)?;
        return Ok(scored.into_iter().take(cap).collect());
    }
    let regex = match mode {
        SearchMode::Regex => Some(
            regex::bytes::RegexBuilder::new(&String::from_utf8_lossy(pattern))
                .size_limit(limits.regex_size_limit)
                .dfa_size_limit(limits.regex_dfa_size_limit)
                .build()
                .map_err(|e| Error::InvalidArgument(format!("bad regular expression: {e}")))?,
        ),
        _ => None,
    };
    let contains = Contains::new(mode, pattern);
    let hit = |k: &[u8]| match mode {
        SearchMode::Begin => k.starts_with(pattern),
        SearchMode::End => k.ends_with(pattern),
        SearchMode::Regex => regex.as_ref().is_some_and(|r| r.is_match(k)),
        _ => contains.as_ref().is_some_and(|c| c.hit(k)),
    };
    let mut out = Vec::new();
    for k in keys {
        if out.len() == cap {
            break;
        }
        meter.tick(k.len() as u64 + 1)?;
        if hit(&k) {
            out.push(k);
        }
    }
    Ok(out)
}

/// The contain modes' test: one pattern or several (lowercased when the
/// case is ignored), each as a substring or as a word.
struct Contains {
    finders: Vec<memchr::memmem::Finder<'static>>,
    case: bool,
    word: bool,
}

impl Contains {
    /// None for a mode that is not a contain mode.
    fn new(mode: SearchMode, pattern: &[u8]) -> Option<Contains> {
        let (case, word, batch) = match mode {
            SearchMode::Contain => (false, false, false),
            SearchMode::ContainCase => (true, false, false),
            SearchMode::ContainWord => (false, true, false),
            SearchMode::ContainCaseWord => (true, true, false),
            SearchMode::ContainBatch { case, word } => (case, word, true),
            _ => return None,
        };
        let patterns: Vec<&[u8]> = if batch {
            // Tkrzw's StrSplit(pattern, '\n', true): empty lines skipped.
            pattern
                .split(|b| *b == b'\n')
                .filter(|p| !p.is_empty())
                .collect()
        } else {
            vec![pattern]
        };
        let finders = patterns
            .into_iter()
            .map(|p| {
                let p = if case {
                    p.to_ascii_lowercase()
                } else {
                    p.to_vec()
                };
                memchr::memmem::Finder::new(&p).into_owned()
            })
            .collect();
        Some(Contains {
            finders,
            case,
            word,
        })
    }

    fn hit(&self, key: &[u8]) -> bool {
        let lowered;
        let text = if self.case {
            lowered = key.to_ascii_lowercase();
            &lowered[..]
        } else {
            key
        };
        self.finders.iter().any(|f| {
            if self.word {
                f.find_iter(text)
                    .any(|at| is_word_at(text, at, f.needle().len()))
            } else {
                f.find(text).is_some()
            }
        })
    }
}

/// Whether `text[at..at + len]` stands as a word: Tkrzw's StrWordSearch
/// refuses a match only where an ASCII letter or digit continues a letter
/// or digit of the match across its start or its end.
fn is_word_at(text: &[u8], at: usize, len: usize) -> bool {
    let alnum = |i: usize| text.get(i).is_some_and(u8::is_ascii_alphanumeric);
    let joined_before = at > 0 && alnum(at - 1) && alnum(at);
    let joined_after = len > 0 && alnum(at + len) && alnum(at + len - 1);
    !joined_before && !joined_after
}

/// [`match_keys`] without limits, `capacity` 0 meaning all: for lines of a
/// file. `Upper`/`Lower` are `InvalidArgument`: lines have no order.
pub(crate) fn match_lines(
    mode: SearchMode,
    pattern: &[u8],
    lines: Vec<Vec<u8>>,
    capacity: usize,
) -> Result<Vec<Vec<u8>>> {
    if matches!(mode, SearchMode::Upper { .. } | SearchMode::Lower { .. }) {
        return Err(Error::InvalidArgument(
            "upper/lower search needs ordered keys, not lines".into(),
        ));
    }
    let cap = if capacity == 0 { usize::MAX } else { capacity };
    let limits = SearchLimits::NONE;
    let mut meter = Meter {
        limits: &limits,
        work: 0,
    };
    match_keys(mode, pattern, lines, cap, &mut meter)
}

/// `keys` (sorted) within `bound` edits of `pattern`, nearest first.
fn nearest(
    keys: Vec<Vec<u8>>,
    pattern: &[u8],
    bound: usize,
    utf: bool,
    meter: &mut Meter<'_>,
) -> Result<Vec<Vec<u8>>> {
    let pattern_chars = chars(pattern);
    let mut poll = |cells| meter.tick(cells);
    let mut scored = Vec::new();
    for k in keys {
        let d = if utf {
            edit_distance_within(&chars(&k), &pattern_chars, bound, &mut poll)?
        } else {
            edit_distance_within(&k, pattern, bound, &mut poll)?
        };
        poll(1)?;
        if let Some(d) = d {
            scored.push((d, k));
        }
    }
    // Stable: equal distances keep the keys' order.
    scored.sort_by_key(|(d, _)| *d);
    Ok(scored.into_iter().map(|(_, k)| k).collect())
}

#[cfg(test)]
mod tests {
    use super::{edit_distance, edit_distance_within};

    #[test]
    fn levenshtein() {
        assert_eq!(edit_distance(b"kitten", b"sitting"), 3);
        assert_eq!(edit_distance(b"", b"abc"), 3);
        assert_eq!(edit_distance(b"same", b"same"), 0);
    }

    /// The textbook full-matrix distance, to check the banded one against.
    fn reference(a: &[u8], b: &[u8]) -> usize {
        let mut d = vec![vec![0; b.len() + 1]; a.len() + 1];
        for (i, row) in d.iter_mut().enumerate() {
            row[0] = i;
        }
        d[0] = (0..=b.len()).collect();
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                let sub = d[i - 1][j - 1] + usize::from(a[i - 1] != b[j - 1]);
                d[i][j] = sub.min(d[i - 1][j] + 1).min(d[i][j - 1] + 1);
            }
        }
        d[a.len()][b.len()]
    }

    #[test]
    fn the_banded_distance_agrees_with_the_full_matrix_for_every_bound() {
        // A small deterministic generator: strings over a 3-letter alphabet
        // (so that near and far pairs both occur), lengths 0 to 11.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..3000 {
            let mut word = || {
                let len = (next() % 12) as usize;
                (0..len)
                    .map(|_| b'a' + (next() % 3) as u8)
                    .collect::<Vec<u8>>()
            };
            let (a, b) = (word(), word());
            let want = reference(&a, &b);
            for bound in 0..14 {
                let got = edit_distance_within(&a, &b, bound, &mut |_| Ok(())).unwrap();
                let expected = (want <= bound).then_some(want);
                assert_eq!(got, expected, "{a:?} {b:?} bound {bound}");
            }
            assert_eq!(edit_distance(&a, &b), want);
        }
    }

    #[test]
    fn a_poll_can_stop_the_distance() {
        let a = vec![b'x'; 300];
        let b = vec![b'y'; 300];
        let mut rows = 0;
        let r = edit_distance_within(&a, &b, usize::MAX, &mut |_| {
            rows += 1;
            if rows == 10 {
                Err(crate::status::Error::Infeasible("stop".into()))
            } else {
                Ok(())
            }
        });
        assert!(r.is_err());
        assert_eq!(rows, 10);
    }
}
